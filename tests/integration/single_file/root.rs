//! As root, the command places the library beside itself
//! (`PREFIX/lib/eatmydata/`) and never reads or writes it in a shared
//! temporary folder: not even in a `TMPDIR` that another user owns, as a
//! `sudo -E` or a `su` without `-` leaves it (issue 28's security review).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::path::Path;

use super::{NOBODY, fsyncs_alone, lonely, placed_for};
use crate::common::{Run, TempDir, probe};

/// A folder of `owner`'s, mode 0755, for root's `TMPDIR`.
fn tmpdir_of(dir: &TempDir, owner: u32) -> std::path::PathBuf {
    let tmpdir = dir.join(format!("tmp-of-{owner}"));
    fs::create_dir_all(&tmpdir).unwrap();
    fs::set_permissions(&tmpdir, fs::Permissions::from_mode(0o755)).unwrap();
    chown(&tmpdir, Some(owner), Some(owner)).unwrap();
    tmpdir
}

fn is_empty(folder: &Path) -> bool {
    fs::read_dir(folder).unwrap().next().is_none()
}

#[test]
fn root_with_a_users_tmpdir_places_the_library_beside_the_command() {
    let dir = TempDir::new("root-placed");
    let eatmydata = lonely(&dir);
    let tmpdir = tmpdir_of(&dir, NOBODY);
    let placed = placed_for(&eatmydata);

    let printed = Run::new("sh")
        .args(["-c", "umask 077; exec \"$0\" --print-library"])
        .arg(&eatmydata)
        .env("TMPDIR", &tmpdir)
        .run()
        .success();
    assert_eq!(printed.stdout(), format!("{}\n", placed.display()));
    assert!(is_empty(&tmpdir), "root wrote in nobody's TMPDIR");
    let meta = fs::metadata(&placed).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o7777), (0, 0o644));
    let folder = fs::metadata(placed.parent().unwrap()).unwrap();
    assert_eq!((folder.uid(), folder.mode() & 0o7777), (0, 0o755));

    // Used, then found again: the syncs eaten, beside the control.
    fsyncs_alone(&dir.join("plain"));
    let eaten = Run::new(&eatmydata)
        .arg("-v")
        .arg(probe("sync_calls", &[]))
        .arg(dir.join("eaten"))
        .env("TMPDIR", &tmpdir)
        .trace(&["fsync"])
        .run()
        .success();
    assert!(eaten.calls_of("fsync").is_empty(), "{:?}", eaten.calls);
    assert!(
        eaten.stderr().contains(&format!(
            "with {} preloaded (the copy placed beside eatmydata)\n",
            placed.display()
        )),
        "{}",
        eaten.stderr()
    );
    assert_eq!(fs::metadata(&placed).unwrap().ino(), meta.ino());
    assert!(is_empty(&tmpdir), "root wrote in nobody's TMPDIR");
}

#[test]
fn root_refuses_a_prefix_another_user_may_change_and_says_why() {
    let dir = TempDir::new("root-refused");
    let eatmydata = lonely(&dir);
    // The prefix is nobody's: nobody could swap lib/eatmydata at any time.
    let prefix = eatmydata.parent().unwrap().parent().unwrap().to_owned();
    let tmpdir = tmpdir_of(&dir, 0);
    chown(&prefix, Some(NOBODY), Some(NOBODY)).unwrap();

    let refused = Run::new(&eatmydata)
        .arg("--print-library")
        .env("TMPDIR", &tmpdir)
        .run();
    assert_eq!(
        refused.output.status.code(),
        Some(125),
        "{}",
        refused.stderr()
    );
    assert_eq!(refused.stdout(), "");
    assert!(
        refused.stderr().starts_with(&format!(
            "eatmydata: cannot place the library this command carries at {}: {} belongs to \
             user {NOBODY}\n",
            placed_for(&eatmydata).display(),
            prefix.display()
        )),
        "{}",
        refused.stderr()
    );
    assert!(is_empty(&tmpdir), "root fell back to its TMPDIR");
    assert!(!prefix.join("lib").exists());
}
