//! Asynchronous flushes: POSIX AIO's `aio_fsync` completes without a flush,
//! with everything a program can observe kept -- `aio_error`, `aio_return`,
//! `aio_suspend`, a signal's code and value, a thread's call -- and the
//! errors of bad requests.

use crate::common::{Run, TempDir, probe};

#[test]
fn aio_fsync_completes_without_a_flush_and_notifies_as_libc_does() {
    let dir = TempDir::new("aio-fsync");
    let program = probe("aio_fsync", &["-lrt", "-lpthread"]);
    let flushes = &["fsync", "fdatasync"];
    let plain = Run::new(&program)
        .arg(dir.join("data"))
        .trace(flushes)
        .run()
        .success();
    let eaten = Run::new(&program)
        .arg(dir.join("data"))
        .preload(true)
        .trace(flushes)
        .run()
        .success();

    for expected in [
        "O_SYNC, no notification: aio_fsync 0, aio_error 0, aio_return 0",
        "O_DSYNC, no notification: aio_fsync 0, aio_error 0, aio_return 0",
        "signal: delivered, code SI_ASYNCIO, value 42",
        "thread: called, value 7, aio_error in the thread 0",
        "thread, 40 in turn: 40 called",
        "bad op: aio_fsync -1 EINVAL",
        "closed descriptor: aio_fsync -1 EBADF",
        "/dev/null: aio_fsync 0, aio_error EINVAL, aio_return -1",
    ] {
        assert!(
            plain.stdout().lines().any(|line| line == expected),
            "control lacks {expected:?}:\n{}",
            plain.stdout()
        );
    }
    assert_eq!(eaten.stdout(), plain.stdout());

    // 45 requests flush for real without the library; with it, only the
    // one on /dev/null reaches the kernel, which refuses it.
    let real = |outcome: &crate::common::Outcome| {
        outcome
            .calls
            .iter()
            .filter(|call| call.contains("sync(") && call.ends_with("= 0"))
            .count()
    };
    assert!(real(&plain) >= 45, "control: {:?}", plain.calls);
    assert_eq!(real(&eaten), 0, "{:?}", eaten.calls);
}
