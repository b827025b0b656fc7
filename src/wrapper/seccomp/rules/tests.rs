//! The supervised filter run through the test interpreter: what goes to
//! the supervisor, what the filter answers, what runs unchanged.

use super::*;
use crate::seccomp::filter::tests::run_with;

const ALLOW: u32 = 0x7fff_0000;

fn native() -> u32 {
    ABIS[0].arch
}

fn call(nr: i64, args: [u64; 6]) -> u32 {
    run_with(&program(false, true).unwrap(), native(), nr as u32, args)
}

#[test]
fn sync_calls_with_a_descriptor_and_ring_setup_go_to_the_supervisor() {
    for &nr in NOTIFIED.iter().chain(FSYNCS) {
        assert_eq!(call(nr, [0; 6]), RET_NOTIFY, "nr {nr}");
    }
    assert_eq!(call(libc::SYS_sync, [0; 6]), RET_ZERO);
}

#[test]
fn with_syncs_kept_by_mount_sync_runs_as_made() {
    let kept = program(false, false).unwrap();
    let run = |nr: i64| run_with(&kept, native(), nr as u32, [0; 6]);
    assert_eq!(run(libc::SYS_sync), ALLOW);
    for &nr in NOTIFIED.iter().chain(FSYNCS) {
        assert_eq!(run(nr), RET_NOTIFY, "nr {nr}");
    }
}

#[test]
fn the_fast_filter_answers_fsync_and_fdatasync_itself() {
    let fast = program(true, true).unwrap();
    let run = |nr: i64| run_with(&fast, native(), nr as u32, [99, 0, 0, 0, 0, 0]);
    for &nr in FSYNCS {
        assert_eq!(run(nr), RET_ZERO, "nr {nr}");
        // A negative descriptor runs, to fail EBADF in the kernel.
        for fd in [u64::MAX, 0xffff_ffff] {
            let answer = run_with(&fast, native(), nr as u32, [fd, 0, 0, 0, 0, 0]);
            assert_eq!(answer, ALLOW, "nr {nr} fd {fd:#x}");
        }
    }
    for &nr in NOTIFIED {
        assert_eq!(run(nr), RET_NOTIFY, "nr {nr}");
    }
    assert_eq!(run(libc::SYS_read), ALLOW);
}

#[test]
fn opens_and_writes_run_as_asked_and_only_msync_with_ms_sync_is_sent() {
    let open_at = |flags: i32| call(libc::SYS_openat, [0, 0, flags as u64, 0, 0, 0]);
    for flags in [
        libc::O_RDONLY | libc::O_CLOEXEC,
        libc::O_WRONLY | libc::O_SYNC,
        libc::O_WRONLY | libc::O_DSYNC,
        libc::O_RDONLY | libc::O_DIRECT,
    ] {
        assert_eq!(open_at(flags), ALLOW, "{flags:#x}");
    }
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        call(libc::SYS_open, [0, libc::O_SYNC as u64, 0, 0, 0, 0]),
        ALLOW
    );
    let pwritev2 = |flags: i32| call(libc::SYS_pwritev2, [1, 0, 1, 0, 0, flags as u64]);
    assert_eq!(pwritev2(libc::RWF_DSYNC), ALLOW);
    assert_eq!(pwritev2(libc::RWF_SYNC), ALLOW);
    let msync = |flags: i32| call(libc::SYS_msync, [0, 4096, flags as u64, 0, 0, 0]);
    assert_eq!(msync(libc::MS_SYNC), RET_NOTIFY);
    assert_eq!(msync(libc::MS_SYNC | libc::MS_INVALIDATE), RET_NOTIFY);
    assert_eq!(msync(libc::MS_ASYNC), ALLOW);
    assert_eq!(msync(0), ALLOW);
}

#[test]
fn ring_submissions_and_the_entries_mmap_go_to_the_supervisor() {
    let enter = libc::SYS_io_uring_enter;
    assert_eq!(call(enter, [3, 0, 1, 1, 0, 0]), ALLOW, "waiting only");
    assert_eq!(call(enter, [3, 4, 0, 0, 0, 0]), RET_NOTIFY, "submitting");
    let mmap = |offset: u64| call(libc::SYS_mmap, [0, 4096, 3, 1, 3, offset]);
    assert_eq!(mmap(0), ALLOW);
    assert_eq!(mmap(0x800_0000), ALLOW);
    assert_eq!(mmap(IORING_OFF_SQES as u64), RET_NOTIFY);
    let register = |opcode: u64| call(libc::SYS_io_uring_register, [3, opcode, 0, 1, 0, 0]);
    assert_eq!(register(0), ALLOW, "buffers");
    for files in [2, 3, 6, 13, 14, 31] {
        assert_eq!(register(files), RET_NOTIFY, "register {files}");
    }
    for refused in [20, 33] {
        let einval = libc::SECCOMP_RET_ERRNO | libc::EINVAL as u32;
        assert_eq!(register(refused), einval, "register {refused}");
    }
}

#[test]
fn everything_else_runs_unchanged() {
    for nr in [
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_close,
        libc::SYS_getpid,
    ] {
        assert_eq!(call(nr, [u64::MAX; 6]), ALLOW, "nr {nr}");
    }
    assert_eq!(
        run_with(&program(false, true).unwrap(), 0x4000_0028, 82, [0; 6]),
        ALLOW,
        "an unknown architecture"
    );
}

/// i386's numbers, from the kernel's `syscall_32.tbl`.
#[cfg(target_arch = "x86_64")]
mod i386 {
    pub const SYNC: u32 = 36;
    pub const FSYNC: u32 = 118;
    pub const MSYNC: u32 = 144;
    pub const FDATASYNC: u32 = 148;
    pub const SYNC_FILE_RANGE: u32 = 314;
    pub const SYNCFS: u32 = 344;
    pub const IO_URING_SETUP: u32 = 425;
    pub const IO_URING_ENTER: u32 = 426;
    pub const OPEN: u32 = 5;
}

#[cfg(target_arch = "x86_64")]
#[test]
fn i386_syncs_go_to_the_supervisor_and_the_rest_to_the_kernel() {
    let i386_arch = ABIS.iter().find(|abi| abi.name == "i386").unwrap().arch;
    for fast in [false, true] {
        let program = program(fast, true).unwrap();
        let run = |nr: u32| run_with(&program, i386_arch, nr, [99, 0, 0, 0, 0, 0]);
        for nr in [
            i386::FSYNC,
            i386::FDATASYNC,
            i386::SYNCFS,
            i386::SYNC_FILE_RANGE,
        ] {
            assert_eq!(run(nr), RET_NOTIFY, "i386 nr {nr}, fast {fast}");
        }
        assert_eq!(run(i386::SYNC), RET_ZERO);
        let msync = |flags: i32| {
            run_with(
                &program,
                i386_arch,
                i386::MSYNC,
                [0, 1, flags as u64, 0, 0, 0],
            )
        };
        assert_eq!(msync(libc::MS_SYNC), RET_NOTIFY);
        assert_eq!(msync(libc::MS_SYNC | libc::MS_INVALIDATE), RET_NOTIFY);
        assert_eq!(msync(libc::MS_ASYNC), ALLOW);
        for nr in [i386::IO_URING_SETUP, i386::IO_URING_ENTER, i386::OPEN] {
            assert_eq!(run(nr), ALLOW, "i386 nr {nr}, fast {fast}");
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn x32_calls_all_run_in_the_kernel_which_knows_if_x32_exists() {
    let x32 = super::super::filter::X32_SYSCALL_BIT as u32;
    for fast in [false, true] {
        let program = program(fast, true).unwrap();
        let x32_abi = ABIS.iter().find(|abi| abi.name == "x32").unwrap();
        for &(name, nr) in x32_abi.calls {
            let got = run_with(&program, native(), nr as u32, [99, 0, 4, 0, 0, 0]);
            assert_eq!(got, ALLOW, "x32 {name}, fast {fast}");
        }
        for nr in [libc::SYS_io_uring_setup, libc::SYS_io_uring_enter] {
            let got = run_with(&program, native(), x32 | nr as u32, [3, 1, 0, 0, 0, 0]);
            assert_eq!(got, ALLOW, "x32 nr {nr}");
        }
    }
}
