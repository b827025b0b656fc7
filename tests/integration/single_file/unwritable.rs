//! Nowhere for a user to write the library out (a full `/tmp`, a
//! read-only `/var/tmp`, a `noexec` `/dev/shm`) and no placed copy: exit
//! 125, each place named with why it was passed over, and what to do.

use std::path::Path;

use super::{USER, lonely};
use crate::common::{Outcome, Run, TempDir};

/// `eatmydata --print-library` as `USER`, in a mount namespace of its own whose
/// `/tmp` is a tmpfs of `tmp_size`, `/var/tmp` read-only, `/dev/shm`
/// `noexec`.
fn in_namespace(eatmydata: &Path, tmp_size: &str) -> Outcome {
    let script = format!(
        "set -e
mount -t tmpfs -o size={tmp_size},mode=1777 tmpfs /tmp
mount -t tmpfs -o ro tmpfs /var/tmp
mount -t tmpfs -o noexec,mode=1777 tmpfs /dev/shm
exec setpriv --reuid={USER} --regid={USER} --clear-groups \"$0\" --print-library"
    );
    Run::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .arg(eatmydata)
        .env("TMPDIR", "")
        .run()
}

#[test]
fn nowhere_to_write_exits_125_and_says_why_for_each_place() {
    let dir = TempDir::trusted("unwritable");
    let eatmydata = lonely(&dir);
    // The control: the same namespace with room in /tmp.
    let control = in_namespace(&eatmydata, "16m").success();
    assert!(
        control
            .stdout()
            .starts_with(&format!("/tmp/eatmydata-{USER}/libeatmydata-")),
        "{}",
        control.stdout()
    );

    let full = in_namespace(&eatmydata, "16k");
    assert_eq!(full.output.status.code(), Some(125), "{}", full.stderr());
    assert_eq!(full.stdout(), "");
    assert_eq!(
        full.stderr(),
        "eatmydata: cannot write out the library this command carries; tried:\n  \
         /tmp: No space left on device\n  \
         /var/tmp: Read-only file system\n  \
         /dev/shm: mounted noexec, which the dynamic loader cannot map from\n\
         Set TMPDIR to a folder it can write to and load from, or EATMYDATA_LIBRARY \
         to a copy of libeatmydata.so.\n"
    );
}
