//! The supervisor at the library's parity for static and Go programs:
//! `O_SYNC`, `O_DSYNC` and `O_DIRECT` dropped at `open`, `openat` and
//! `openat2` (as `fcntl(F_GETFL)` shows them in the program), `RWF_DSYNC`
//! dropped from `pwritev2`, no flush on the loop device, the data intact,
//! and bad input answered as the kernel answers it.

use std::fs;

use super::{eatmydata, go_probe, results, static_probe};
use crate::loopfs::LoopFs;

const BLOCKS: u64 = 100;

#[test]
fn sync_flags_are_dropped_and_no_flush_reaches_the_disk() {
    let disk = LoopFs::new("seccomp-flags", 64);
    let file = disk.join("data");
    for (program, fill) in [(static_probe(), b'e'), (go_probe("static"), b'g')] {
        let run = |mode: &str| {
            let before = disk.flushes();
            let count = BLOCKS.to_string();
            let args = [
                mode.as_ref(),
                program.as_os_str(),
                "flags".as_ref(),
                file.as_os_str(),
                count.as_ref(),
            ];
            let found = results(&eatmydata(&args));
            assert_eq!(found["written"], (2 * BLOCKS).to_string());
            let data = fs::read(&file).unwrap();
            assert_eq!(data.len() as u64, 2 * BLOCKS * 4096);
            assert!(data.iter().all(|&b| b == fill), "the data is not intact");
            (found, disk.flushes() - before)
        };
        let (control, flushed) = run("--no-seccomp");
        let (eaten, eaten_flushes) = run("--seccomp");
        assert!(
            flushed >= BLOCKS,
            "{}: {flushed} flushes without",
            program.display()
        );
        assert!(
            eaten_flushes * 20 <= flushed,
            "{}: {eaten_flushes} flushes",
            program.display()
        );
        for (name, answer) in &control {
            if answer == "kept" {
                assert_eq!(eaten[name], "dropped", "{name} in {}", program.display());
            } else {
                // Close-on-exec, what was written, and every error the same.
                assert_eq!(&eaten[name], answer, "{name} in {}", program.display());
            }
        }
        assert!(control.values().filter(|v| *v == "kept").count() >= 2);
    }
}

#[test]
fn bad_input_gets_what_the_kernel_gives() {
    let disk = LoopFs::new("seccomp-bad", 32);
    let file = disk.join("data");
    let program = static_probe();
    let run = |mode: &str| {
        let args = [
            mode.as_ref(),
            program.as_os_str(),
            "flags".as_ref(),
            file.as_os_str(),
            "1".as_ref(),
        ];
        results(&eatmydata(&args))
    };
    let control = run("--no-seccomp");
    let eaten = run("--seccomp");
    for (name, errno) in [
        ("open_badpath", "EFAULT"),
        ("open_missing", "ENOENT"),
        ("openat_baddirfd", "EBADF"),
        ("openat2_badhow", "EFAULT"),
        ("pwritev2_badiov", "EFAULT"),
        ("pwritev2_badfd", "EBADF"),
        ("fsync_closed", "EBADF"),
    ] {
        assert_eq!(control[name], errno, "{name} without eatmydata");
        assert_eq!(eaten[name], errno, "{name} under the supervisor");
    }
}

#[test]
fn opens_are_made_as_the_caller_with_its_umask() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let scratch = crate::common::TempDir::new("seccomp-identity");
    let (open, closed) = (scratch.join("open"), scratch.join("closed"));
    for (dir, mode) in [(&open, 0o777), (&closed, 0o755)] {
        fs::create_dir(dir).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(mode)).unwrap();
    }
    let program = static_probe();
    let as_nobody = |mode: &str, file: &std::path::Path| {
        crate::common::library();
        let outcome = crate::common::Run::new(crate::common::command())
            .args([
                mode,
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
            ])
            .args(["sh", "-c", "umask 077; exec \"$0\" flags \"$1\" 1"])
            .arg(&program)
            .arg(file)
            .run();
        results(&outcome)
    };
    for (mode, flag) in [("--no-seccomp", "kept"), ("--seccomp", "dropped")] {
        let file = open.join(mode);
        assert_eq!(as_nobody(mode, &file)["open_sync"], flag, "{mode}");
        let made = fs::metadata(&file).unwrap();
        assert_eq!((made.uid(), made.gid()), (65534, 65534), "{mode}: owner");
        assert_eq!(made.mode() & 0o777, 0o600, "{mode}: the umask");
        let refused = as_nobody(mode, &closed.join(mode));
        assert_eq!(refused["open_sync"], "EACCES", "{mode}");
        assert!(!closed.join(mode).exists());
    }
}

#[test]
fn threads_opening_and_syncing_at_once_are_all_served() {
    let disk = LoopFs::new("seccomp-threads", 64);
    let file = disk.join("shared");
    let program = static_probe();
    let run = |mode: &str| {
        let before = disk.flushes();
        let args = [
            mode.as_ref(),
            program.as_os_str(),
            "threads".as_ref(),
            file.as_os_str(),
        ];
        let found = results(&eatmydata(&args));
        assert_eq!(found["threads_failed"], "0", "{mode}");
        (found["threads_kept"].clone(), disk.flushes() - before)
    };
    let (kept, flushed) = run("--no-seccomp");
    assert_eq!(kept, "400");
    // Syncs made at once share journal commits: fewer than one each.
    assert!(flushed >= 100, "{flushed} flushes without eatmydata");
    let (kept, eaten) = run("--seccomp");
    assert_eq!(kept, "0", "every open of every thread lost O_SYNC");
    assert!(eaten * 20 <= flushed, "{eaten} flushes under eatmydata");
}
