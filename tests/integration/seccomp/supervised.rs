//! What the supervisor does and does not do for static and Go programs.
//! It never opens or writes for a program: `open`/`openat` with `O_SYNC`,
//! `O_DSYNC` or `O_DIRECT` and `pwritev2` with `RWF_DSYNC` carry their
//! flags in a register and run as asked, so their flushes reach the disk
//! as in the control run; `openat2`, whose flags are in the program's
//! memory, loses them there (as `fcntl(F_GETFL)` shows in the program);
//! fsync is answered; bad input is answered as the kernel answers it.

use std::fs;

use super::{eatmydata, go_probe, results, static_probe};
use crate::loopfs::LoopFs;

const BLOCKS: u64 = 100;

#[test]
fn register_flags_reach_the_disk_and_openat2_loses_its_own() {
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
        let name = program.display();
        assert!(flushed >= BLOCKS, "{name}: {flushed} flushes without");
        // The kernel was asked for a flush per write, and made them.
        assert!(
            eaten_flushes * 10 >= flushed * 9,
            "{name}: {eaten_flushes} flushes under the supervisor, {flushed} without"
        );
        for (name, answer) in &control {
            if name == "openat2_sync" {
                assert_eq!(answer, "kept");
                assert_eq!(eaten[name], "dropped", "{name} in {}", program.display());
            } else {
                // Register flags kept, close-on-exec, what was written,
                // and every error the same.
                assert_eq!(&eaten[name], answer, "{name} in {}", program.display());
            }
        }
        assert_eq!(eaten["open_sync"], "kept", "{}", program.display());
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
fn opens_are_the_kernels_made_as_the_caller() {
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
    for (mode, openat2) in [("--no-seccomp", "kept"), ("--seccomp", "dropped")] {
        let file = open.join(mode);
        let found = as_nobody(mode, &file);
        assert_eq!(found["open_sync"], "kept", "{mode}");
        assert_eq!(found["openat2_sync"], openat2, "{mode}");
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
    for mode in ["--no-seccomp", "--seccomp"] {
        let args = [
            mode.as_ref(),
            program.as_os_str(),
            "threads".as_ref(),
            file.as_os_str(),
        ];
        let found = results(&eatmydata(&args));
        assert_eq!(found["threads_failed"], "0", "{mode}");
        // Every open is the kernel's, with the flag asked for.
        assert_eq!(found["threads_kept"], "400", "{mode}");
    }
}
