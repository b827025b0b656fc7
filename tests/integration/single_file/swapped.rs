//! The attack of issue 28's security review, tried: the owner of a folder
//! on the library's path swaps `eatmydata-<uid>` for a link to a folder
//! of theirs that holds a decoy under the library's name, with
//! `renameat2(RENAME_EXCHANGE)`, in a loop, while the command runs. There
//! 4 runs of 40 as root loaded the decoy. Now root never looks in a
//! `TMPDIR` (it places the library beside itself), and a user refuses a
//! place another user owns: no run loads the decoy, however the swap
//! falls.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, chown, symlink};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{MadeInTmp, NOBODY, USER, as_user, carried_hash, lonely};
use crate::common::{Run, TempDir, probe};

/// Runs of the command per caller, as in the review.
const RUNS: usize = 40;

/// Exchanges `a` and `b` until `stop`, as fast as it can.
fn swap_until(a: &Path, b: &Path, stop: &AtomicBool) -> usize {
    let (a, b) = (
        CString::new(a.as_os_str().as_bytes()).unwrap(),
        CString::new(b.as_os_str().as_bytes()).unwrap(),
    );
    let mut swaps = 0;
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: two NUL-terminated paths that live across the call.
        let done = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if done == 0 {
            swaps += 1;
        }
    }
    swaps
}

#[test]
fn a_swap_in_a_folder_someone_else_owns_never_loads_their_library() {
    let dir = TempDir::new("swapped");
    let eatmydata = lonely(&dir);
    let decoy = probe("decoy_lib", &["-shared", "-fPIC"]);
    let name = format!("libeatmydata-{}.so", &carried_hash()[..16]);
    // The attacker's TMPDIR-to-be: nobody's, mode 0755 (others may not
    // write, so the old check let it pass). In it, for root and for USER,
    // the usual folder, and a link to a folder of nobody's with the decoy.
    let theirs = dir.join("theirs");
    let decoys = dir.join("decoys");
    fs::create_dir_all(&theirs).unwrap();
    fs::create_dir_all(&decoys).unwrap();
    fs::copy(&decoy, decoys.join(&name)).unwrap();
    fs::set_permissions(decoys.join(&name), fs::Permissions::from_mode(0o644)).unwrap();
    let mut pairs = Vec::new();
    for uid in [0, USER] {
        let usual = theirs.join(format!("eatmydata-{uid}"));
        fs::create_dir(&usual).unwrap();
        chown(&usual, Some(uid), Some(uid)).unwrap();
        let link = theirs.join(format!("swap-{uid}"));
        symlink(&decoys, &link).unwrap();
        pairs.push((usual, link));
    }
    for path in [&theirs, &decoys] {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    // The decoy loads when a program is given it: the oracle works.
    let loaded = Run::new("true")
        .env("LD_PRELOAD", decoys.join(&name))
        .run()
        .success();
    assert_eq!(loaded.stderr(), "decoy library loaded\n");

    let stop = Arc::new(AtomicBool::new(false));
    let swappers: Vec<_> = pairs
        .into_iter()
        .map(|(usual, link)| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || swap_until(&usual, &link, &stop))
        })
        .collect();
    let data = dir.join("data");
    fs::create_dir_all(&data).unwrap();
    fs::set_permissions(&data, fs::Permissions::from_mode(0o777)).unwrap();
    // The user passes over nobody's TMPDIR to the machine's /tmp.
    let _made = MadeInTmp::watch(USER);
    let mut outcomes = Vec::new();
    for n in 0..RUNS {
        for (who, run) in [
            ("root", Run::new(&eatmydata)),
            ("user", as_user(USER).arg(&eatmydata)),
        ] {
            let outcome = run
                .arg("-v")
                .arg(probe("sync_calls", &[]))
                .arg(data.join(format!("{who}-{n}")))
                .env("TMPDIR", &theirs)
                .run();
            outcomes.push((who, outcome));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps: usize = swappers.into_iter().map(|s| s.join().unwrap()).sum();
    assert!(swaps > 0, "no swap was made");
    for (who, outcome) in &outcomes {
        let stderr = outcome.stderr();
        assert!(!stderr.contains("decoy"), "{who}: {stderr}");
        assert!(
            !stderr.contains(theirs.to_str().unwrap()),
            "{who} used a place of nobody's: {stderr}"
        );
        assert_eq!(outcome.output.status.code(), Some(0), "{who}: {stderr}");
    }
}
