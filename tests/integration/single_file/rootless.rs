//! Rootless engines run the runtime as uid 0 of a user namespace, where
//! `/tmp`, `/var/tmp` and `/dev/shm` belong to the overflow uid and no
//! environment reaches it (conmon passes none). There the command finds,
//! or makes, the user's own placed copy beside itself
//! (`~/.local/lib/eatmydata/`), and writes nothing in a shared folder.
//!
//! The user is a uid of the test's own with a home the test makes, as a
//! user's `~/.local/bin` holds a copied single file; the namespace is
//! `unshare --user --map-root-user` run as that user, with `env -i`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::path::PathBuf;

use super::{fsyncs_alone, lonely, placed_for};
use crate::common::{Outcome, Run, TempDir, probe};

/// The user of this test: no other test runs as it, so what it owns in
/// `/tmp` is this test's doing.
const ROOTLESS: u32 = 4243;

/// A home of `ROOTLESS`'s under `dir`, with the command in `~/.local/bin`.
fn home_with_the_command(dir: &TempDir) -> (PathBuf, PathBuf) {
    let home = dir.join("home");
    let bin = home.join(".local/bin");
    fs::create_dir_all(&bin).unwrap();
    let eatmydata = bin.join("eatmydata");
    fs::copy(lonely(dir), &eatmydata).unwrap();
    for path in [&home, &home.join(".local"), &bin, &eatmydata] {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        chown(path, Some(ROOTLESS), Some(ROOTLESS)).unwrap();
    }
    (home, eatmydata)
}

/// `ARGS` as `ROOTLESS`, as uid 0 of a user namespace of its own, with no
/// environment at all.
fn in_user_namespace(args: &[&std::ffi::OsStr]) -> Run {
    Run::new("setpriv")
        .args([
            format!("--reuid={ROOTLESS}"),
            format!("--regid={ROOTLESS}"),
            "--clear-groups".into(),
        ])
        .args(["unshare", "--user", "--map-root-user", "env", "-i"])
        .args(args)
}

/// What `ROOTLESS` owns in the shared temporary folders.
fn theirs_in_shared_folders() -> Vec<PathBuf> {
    ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .flat_map(|place| fs::read_dir(place).unwrap())
        .filter_map(Result::ok)
        .filter(|entry| fs::symlink_metadata(entry.path()).is_ok_and(|meta| meta.uid() == ROOTLESS))
        .map(|entry| entry.path())
        .collect()
}

fn succeeded(outcome: Outcome) -> Outcome {
    outcome.success()
}

#[test]
fn uid_0_of_a_user_namespace_uses_the_users_placed_copy_and_no_shared_folder() {
    let dir = TempDir::new("rootless-unshare");
    let (home, eatmydata) = home_with_the_command(&dir);
    let placed = placed_for(&eatmydata);
    assert!(placed.starts_with(home.join(".local/lib/eatmydata")));
    assert_eq!(theirs_in_shared_folders(), Vec::<PathBuf>::new());

    // The first run places the copy; it is the user's on the host.
    let printed =
        succeeded(in_user_namespace(&[eatmydata.as_os_str(), "--print-library".as_ref()]).run());
    assert_eq!(printed.stdout(), format!("{}\n", placed.display()));
    let meta = fs::metadata(&placed).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o7777), (ROOTLESS, 0o644));

    // The next finds it, and the syncs are eaten (beside the control).
    let data = dir.join("eaten");
    fs::write(&data, "").unwrap();
    chown(&data, Some(ROOTLESS), Some(ROOTLESS)).unwrap();
    fsyncs_alone(&dir.join("plain"));
    let sync_calls = probe("sync_calls", &[]);
    let eaten = in_user_namespace(&[
        eatmydata.as_os_str(),
        "-v".as_ref(),
        sync_calls.as_os_str(),
        data.as_os_str(),
    ])
    .trace(&["fsync"])
    .run();
    let eaten = succeeded(eaten);
    assert!(eaten.calls_of("fsync").is_empty(), "{:?}", eaten.calls);
    assert!(
        eaten.stderr().ends_with(&format!(
            "with {} preloaded (the copy placed beside eatmydata)\n",
            placed.display()
        )),
        "{}",
        eaten.stderr()
    );
    assert_eq!(fs::metadata(&placed).unwrap().ino(), meta.ino());
    assert_eq!(theirs_in_shared_folders(), Vec::<PathBuf>::new());
}
