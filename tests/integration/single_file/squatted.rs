//! Denial by a planted name (issue 28's security review): another user
//! makes `eatmydata-<uid>` in `/tmp`, `/var/tmp` and `/dev/shm` before
//! the user's first run. The command still finds a place: a private
//! folder with a name no one can guess, and says so with `-v`.
//!
//! In a mount namespace of the test's own, whose three places are fresh
//! tmpfs mounts as the machine's are (root's, mode 1777), so that the
//! machine's own are left alone.

use std::fs;
use std::path::Path;

use super::{NOBODY, USER, fsyncs_alone, lonely};
use crate::common::{Outcome, Run, TempDir, probe};

/// In a fresh namespace: `nobody` squats the three names (a folder, a
/// file, a link), then `USER` runs `eatmydata -v sync_calls DATA`, under
/// strace. All three files outside `/tmp` and `/var/tmp`, which the
/// namespace covers (a checkout may be there).
fn squatted_run(eatmydata: &Path, sync_calls: &Path, data: &Path) -> Outcome {
    let squat = format!(
        "mkdir /tmp/eatmydata-{USER} && touch /var/tmp/eatmydata-{USER} && \
         ln -s /tmp /dev/shm/eatmydata-{USER}"
    );
    let script = format!(
        "set -e
for place in /tmp /var/tmp /dev/shm; do mount -t tmpfs -o mode=1777 tmpfs $place; done
setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups sh -c '{squat}'
exec setpriv --reuid={USER} --regid={USER} --clear-groups \"$0\" -v '{}' '{}'",
        sync_calls.display(),
        data.display()
    );
    Run::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .arg(eatmydata)
        .env("TMPDIR", "")
        .trace(&["fsync"])
        .run()
}

#[test]
fn squatted_names_in_every_place_cost_a_private_folder_not_the_command() {
    let dir = TempDir::trusted("squatted");
    let eatmydata = lonely(&dir);
    let sync_calls = dir.join("sync_calls");
    fs::copy(probe("sync_calls", &[]), &sync_calls).unwrap();
    let data = dir.join("eaten");
    fs::write(&data, "").unwrap();
    std::os::unix::fs::chown(&data, Some(USER), Some(USER)).unwrap();

    fsyncs_alone(&dir.join("plain"));
    let eaten = squatted_run(&eatmydata, &sync_calls, &data).success();
    assert!(eaten.calls_of("fsync").is_empty(), "{:?}", eaten.calls);
    let stderr = eaten.stderr();
    assert!(
        stderr.contains(
            " preloaded (the copy embedded in eatmydata, written out now, in a private \
             folder: another user took the usual one's name)\n"
        ),
        "{stderr}"
    );
    // The private folder is in /tmp, the first place, with a name of 12
    // random letters after the usual one's.
    let private = stderr
        .split_whitespace()
        .find(|word| word.starts_with(&format!("/tmp/eatmydata-{USER}.")))
        .unwrap_or_else(|| panic!("no private folder in /tmp: {stderr}"));
    let suffix = Path::new(private)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .rsplit('.')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(suffix.len(), 12, "{private}");
}
