//! Programs that call the kernel by number through libc's `syscall()` get
//! the same treatment; other numbers pass through with all six arguments.

use crate::common::{Libc, Run, TempDir, probe_for};

const TRACED: &[&str] = &[
    "fsync",
    "fdatasync",
    "syncfs",
    "sync",
    "sync_file_range",
    "msync",
    "open",
    "openat",
    "openat2",
];

#[test]
fn sync_numbers_are_eaten_and_others_pass_through() {
    check_raw_syscalls(Libc::Glibc);
}

/// syscall() of a probe built against `libc`, with and without us.
pub fn check_raw_syscalls(libc: Libc) {
    let program = probe_for(libc, "raw_syscall", &[]);
    let dir = TempDir::new("raw-plain");
    let plain = Run::new(&program)
        .arg(dir.path())
        .trace(TRACED)
        .run()
        .success();
    let dir = TempDir::new("raw-eaten");
    let eaten = Run::new(&program)
        .arg(dir.path())
        .preload(true)
        .trace(TRACED)
        .run()
        .success();

    let same = [
        "write: 8192 ",
        "mmap sixth argument: ok",
        "getpid: ok",
        "fsync: 0 ",
        "fdatasync: 0 ",
        "syncfs: 0 ",
        "sync: 0 ",
        "sync_file_range: 0 ",
        "msync: 0 ",
        "fsync(-1): -1 EBADF",
        "sync_file_range(bad flags): -1 EINVAL",
        "unknown number: -1 ENOSYS",
        "openat2(bad how): -1 EFAULT",
    ];
    for outcome in [&plain, &eaten] {
        for line in same {
            assert!(
                outcome.stdout().lines().any(|l| l == line),
                "{line:?} missing:\n{}",
                outcome.stdout()
            );
        }
    }
    let opened = [
        "openat: sync=1 dsync=1",
        "open: sync=0 dsync=1",
        "openat2: sync=1 dsync=1",
    ];
    for line in opened {
        assert!(
            plain.stdout().contains(line),
            "control lacks {line:?}:\n{}",
            plain.stdout()
        );
        let line = line.replace("=1", "=0");
        assert!(
            eaten.stdout().contains(&line),
            "{line:?} missing:\n{}",
            eaten.stdout()
        );
    }

    for call in ["fsync", "fdatasync", "syncfs", "sync", "sync_file_range"] {
        assert!(
            !plain.calls_of(call).is_empty(),
            "control: {call} reached the kernel: {:?}",
            plain.calls
        );
        assert!(
            eaten.calls_of(call).is_empty(),
            "{call} reached the kernel: {:?}",
            eaten.calls
        );
    }
    assert!(
        plain.calls_of("msync")[0].contains("MS_SYNC"),
        "{:?}",
        plain.calls
    );
    assert!(
        eaten.calls_of("msync")[0].contains("MS_ASYNC"),
        "{:?}",
        eaten.calls
    );
    for path in ["by-openat\"", "by-open\"", "by-openat2\""] {
        let calls = eaten.calls_with(path);
        assert_eq!(calls.len(), 1, "{path}: {:?}", eaten.calls);
        assert!(
            !calls[0].contains("O_SYNC") && !calls[0].contains("O_DSYNC"),
            "{calls:?}"
        );
        assert!(
            plain.calls_with(path)[0].contains("SYNC"),
            "control: {:?}",
            plain.calls
        );
    }
}
