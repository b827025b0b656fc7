//! fsync, fdatasync, syncfs, sync_file_range, sync and msync: with the
//! library none reaches the kernel (msync only as MS_ASYNC), and every answer
//! a program sees -- success with errno untouched, or the kernel's error for
//! bad arguments -- is the one it gets without the library.

use crate::common::{Libc, Run, TempDir, probe_for};

const FLUSHES: &[&str] = &["fsync", "fdatasync", "syncfs", "sync_file_range", "sync"];

#[test]
fn sync_calls_reach_the_kernel_only_without_the_library() {
    check_sync_calls(Libc::Glibc);
}

/// The sync calls of a probe built against `libc`, with and without us.
pub fn check_sync_calls(libc: Libc) {
    let dir = TempDir::new("sync-calls");
    let program = probe_for(libc, "sync_calls", &[]);
    let trace = &[
        "fsync",
        "fdatasync",
        "syncfs",
        "sync_file_range",
        "sync",
        "msync",
    ];

    let plain = Run::new(&program)
        .arg(dir.join("data"))
        .trace(trace)
        .run()
        .success();
    for call in FLUSHES {
        assert_eq!(
            plain.calls_of(call).len(),
            1,
            "control: one {call} reaches the kernel: {:?}",
            plain.calls
        );
    }
    assert!(
        plain.calls_of("msync")[0].contains("MS_SYNC"),
        "{:?}",
        plain.calls
    );

    let eaten = Run::new(&program)
        .arg(dir.join("data"))
        .preload(true)
        .trace(trace)
        .run()
        .success();
    for call in FLUSHES {
        assert!(
            eaten.calls_of(call).is_empty(),
            "{call} reached the kernel: {:?}",
            eaten.calls
        );
    }
    let msync = eaten.calls_of("msync");
    assert_eq!(msync.len(), 1, "{:?}", eaten.calls);
    assert!(
        msync[0].contains("MS_ASYNC") && !msync[0].contains("MS_SYNC"),
        "{msync:?}"
    );
}

#[test]
fn bad_arguments_get_the_kernels_errors() {
    check_sync_errors(Libc::Glibc);
}

/// The error answers a probe built against `libc` gets, with and without us.
pub fn check_sync_errors(libc: Libc) {
    let dir = TempDir::new("sync-errors");
    let program = probe_for(libc, "sync_errors", &[]);
    let plain = Run::new(&program).arg(dir.join("data")).run().success();
    let eaten = Run::new(&program)
        .arg(dir.join("data"))
        .preload(true)
        .trace(&["fsync", "fdatasync"])
        .run()
        .success();

    // The control shows the probe asks real questions.
    for expected in [
        "fsync(-1): EBADF",
        "fsync(O_PATH): EBADF",
        "fsync(pipe): EINVAL",
        "fsync(socket): EINVAL",
        "fsync(file): ok",
        "syncfs(O_PATH): EBADF",
        "syncfs(pipe): ok",
        "sync_file_range(bad flags): EINVAL",
        "sync_file_range(pipe): ESPIPE",
        "msync(unaligned): EINVAL",
        "msync(unmapped): ENOMEM",
        "fsync(/dev/null): EINVAL",
        "fdatasync(/dev/zero): EINVAL",
        "sync_file_range(/dev/null): ESPIPE",
        "fsync(/proc/self/status): EINVAL",
        "sync_file_range(/proc/self/status): ok",
        "fsync(eventfd): EINVAL",
        "sync_file_range(eventfd): ESPIPE",
        "fsync(folder): ok",
        "fsync(tmpfs): ok",
    ] {
        assert!(
            plain.stdout().lines().any(|line| line == expected),
            "control lacks {expected:?}:\n{}",
            plain.stdout()
        );
    }
    assert_eq!(
        eaten.stdout(),
        plain.stdout(),
        "the library changed an answer"
    );
    // The library answered for every file on a disk; what reached the
    // kernel is a descriptor that reaches none (a pipe, a socket, /proc),
    // which the kernel answers without a flush.
    let asked = [eaten.calls_of("fsync"), eaten.calls_of("fdatasync")].concat();
    assert!(
        !asked.is_empty() && asked.iter().all(|call| call.contains("= -1 EINVAL")),
        "{:?}",
        eaten.calls
    );
}
