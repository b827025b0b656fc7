//! As root, the command places the library beside itself
//! (`PREFIX/lib/eatmydata/`), or in root's home where the prefix fails the
//! rule, and never reads or writes it in a shared temporary folder: not even in a `TMPDIR` that another user owns, as a
//! `sudo -E` or a `su` without `-` leaves it (issue 28's security review).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::path::Path;

use super::{NOBODY, fsyncs_alone, lonely, placed_for};
use crate::common::{RootHome, Run, TempDir, probe};

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
    let dir = TempDir::trusted("root-placed");
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
fn root_passes_over_a_prefix_another_user_may_change_for_its_home() {
    let dir = TempDir::trusted("root-refused");
    let eatmydata = lonely(&dir);
    // The prefix is nobody's: nobody could swap lib/eatmydata at any time.
    let prefix = eatmydata.parent().unwrap().parent().unwrap().to_owned();
    let tmpdir = tmpdir_of(&dir, 0);
    chown(&prefix, Some(NOBODY), Some(NOBODY)).unwrap();
    let home = RootHome::new("root-refused");
    let ours = home
        .join("home")
        .join(placed_for(&eatmydata).file_name().unwrap());
    let why = format!("{} belongs to user {NOBODY}", prefix.display());

    let found = Run::new(&eatmydata)
        .arg("-v")
        .arg("true")
        .env("TMPDIR", &tmpdir)
        .env("EATMYDATA_HOME", home.join("home"))
        .run()
        .success();
    assert_eq!(
        found.stderr(),
        format!(
            "eatmydata: passed over {}: {why}
\
             eatmydata: running /usr/bin/true with {} preloaded (the copy in root's home, \
             written now)\n",
            placed_for(&eatmydata).display(),
            ours.display()
        )
    );
    assert!(is_empty(&tmpdir), "root fell back to its TMPDIR");
    assert!(!prefix.join("lib").exists());

    // Its home others may write to as well: nowhere, each place said.
    let open = home.join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
    let refused = Run::new(&eatmydata)
        .arg("--print-library")
        .env("TMPDIR", &tmpdir)
        .env("EATMYDATA_HOME", &open)
        .run();
    assert_eq!(
        refused.output.status.code(),
        Some(125),
        "{}",
        refused.stderr()
    );
    assert_eq!(refused.stdout(), "");
    assert_eq!(
        refused.stderr(),
        format!(
            "eatmydata: no place root may load the library from, and none it can write it \
             to; tried:\n  {}: {why}\n  {}: {} is writable by every user\n\
             Root uses a copy only where every folder from / down belongs to root and no one \
             else may write. Set EATMYDATA_HOME to such a folder (not mounted noexec), or \
             EATMYDATA_LIBRARY to a copy of libeatmydata.so.\n",
            placed_for(&eatmydata).display(),
            open.display(),
            open.display()
        )
    );
    assert!(is_empty(&tmpdir), "root fell back to its TMPDIR");
    assert!(
        is_empty(&open),
        "root wrote in a folder every user may write"
    );
}
