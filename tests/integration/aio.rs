//! Asynchronous flushes: POSIX AIO's `aio_fsync` completes without a flush,
//! with everything a program can observe kept -- `aio_error`, `aio_return`,
//! `aio_suspend`, a signal's code and value, a thread's call -- and the
//! errors of bad requests.

use crate::common::{
    Flushes, Libc, Run, TempDir, fio_flushes, library, probe, probe_for, unsynced,
};
use crate::loopfs::LoopFs;

#[test]
fn aio_fsync_completes_without_a_flush_and_notifies_as_libc_does() {
    check_aio_fsync(Libc::Glibc);
}

/// The aio_fsync probe built against `libc`, with and without the library.
pub fn check_aio_fsync(libc: Libc) {
    let dir = TempDir::new("aio-fsync");
    let program = probe_for(libc, "aio_fsync", &["-lrt", "-lpthread"]);
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

#[test]
fn linux_aio_flushes_complete_without_reaching_the_disk() {
    let program = probe("linux_aio", &["-l:libaio.so.1"]);
    let dir = TempDir::new("linux-aio");
    let plain = Run::new(&program).arg(dir.join("data")).run().success();
    let eaten = Run::new(&program)
        .arg(dir.join("data"))
        .preload(true)
        .run()
        .success();
    for expected in [
        "batch: io_submit 3",
        "batch: 3 events, 3 with their own iocb, data and result",
        "poll: 1 event, data 0x90",
        "closed descriptor: EBADF",
        "/dev/null: EINVAL",
        "stray length: EINVAL",
        "bad iocb address: EFAULT",
        "bad array address: EFAULT",
        "eventfd: events 1, counter read ok 1",
        "new context: ok, events 0",
    ] {
        assert!(
            plain.stdout().lines().any(|line| line == expected),
            "control lacks {expected:?}:\n{}",
            plain.stdout()
        );
    }
    assert_eq!(eaten.stdout(), plain.stdout());

    // The disk's own count: 50 flush requests through io_submit; the
    // floor, the same 50 blocks written without them.
    let disk = LoopFs::new("linux-aio-flushes", 64);
    let flushes = |preload: bool, file: &str, extra: &[&str]| {
        let before = disk.flushes();
        let run = Run::new(&program)
            .args([disk.join(file).as_os_str(), "50".as_ref()])
            .args(extra)
            .preload(preload)
            .run()
            .success();
        let flushed = if extra.is_empty() { "50" } else { "0" };
        assert_eq!(run.stdout().trim(), format!("flushed {flushed}"));
        disk.flushes() - before
    };
    Flushes {
        control: flushes(false, "control", &[]),
        floor: flushes(false, "floor", &["unflushed"]),
        eaten: flushes(true, "eaten", &[]),
    }
    .assert_eaten(50, "Linux AIO flushes");
}

#[test]
fn fio_posixaio_flushes_stay_off_the_disk() {
    let job = [
        "--engine",
        "posixaio",
        "--sync",
        "fsync",
        "--size",
        "512k",
        "--iodepth",
        "4",
    ];
    let control = fio_flushes(&job, &[]);
    let floor = fio_flushes(&unsynced(&job), &[]);
    let preload = format!("LD_PRELOAD={}", library().display());
    let eaten = fio_flushes(&job, &["env", &preload]);
    Flushes {
        control: control.flushes,
        floor: floor.flushes,
        eaten: eaten.flushes,
    }
    .assert_eaten(100, &format!("{eaten:?} against {control:?}"));
}
