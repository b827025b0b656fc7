//! Calls of another ABI, read as the native calls they stand for, so that
//! the supervisor answers them by the same rules (`sync.rs`).
//!
//! On x86_64 that is i386 (`AUDIT_ARCH_I386`: a 32-bit program, or
//! `int $0x80` from 64-bit code). The kernel reads each argument of such a
//! call as a 32-bit word, and a 64-bit one (`sync_file_range`'s offset and
//! length) as two words, low first (`ia32_sync_file_range`); the native
//! call is made of them the same way. x32 numbers come in under the native
//! architecture, but the kernel checks only after the filter that x32
//! exists (`ENOSYS` where it is not built), so the filter sends none of
//! them and none is read here. aarch64 has no other ABI in `filter::ABIS`.

use super::filter::ABIS;
use super::rules::{FOREIGN_MSYNC, FOREIGN_NOTIFIED};

/// The native number and arguments of a call that came through the ABI of
/// `arch` with number `nr`: a native call's own; another ABI's call the
/// filter sends (`rules::FOREIGN_NOTIFIED`, `FOREIGN_MSYNC`) as its native
/// twin; `None` for anything else (an x32
/// number, which the filter never sends), which the supervisor then lets
/// go on untouched.
pub fn native_call(arch: u32, nr: i32, args: [u64; 6]) -> Option<(i64, [u64; 6])> {
    let nr = i64::from(nr);
    let native = &ABIS[0];
    if arch == native.arch {
        return (!is_x32(nr)).then_some((nr, args));
    }
    let abi = ABIS.iter().find(|abi| abi.arch == arch)?;
    let sent = |name: &str| FOREIGN_NOTIFIED.contains(&name) || name == FOREIGN_MSYNC;
    let &(name, _) = abi.calls.iter().find(|&&(n, m)| m == nr && sent(n))?;
    let &(_, twin) = native.calls.iter().find(|&&(n, _)| n == name)?;
    Some((twin, native_args(name, args)))
}

/// The arguments of another ABI's call `name` as the native call takes
/// them.
fn native_args(name: &str, args: [u64; 6]) -> [u64; 6] {
    let w = args.map(|arg| arg & 0xffff_ffff);
    if name == "sync_file_range" {
        // fd, offset low, offset high, length low, length high, flags.
        return [w[0], w[1] | w[2] << 32, w[3] | w[4] << 32, w[5], 0, 0];
    }
    w
}

/// Whether `nr`, under the native architecture, is an x32 call's.
fn is_x32(nr: i64) -> bool {
    #[cfg(target_arch = "x86_64")]
    return nr & super::filter::X32_SYSCALL_BIT != 0;
    #[cfg(not(target_arch = "x86_64"))]
    return {
        let _ = nr;
        false
    };
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    const I386: u32 = 0x4000_0003;
    const X86_64: u32 = 0xc000_003e;

    #[test]
    fn i386_syncs_are_read_as_their_native_twins() {
        let args = [0xdead_0000_0005, 0, 0, 0, 0, 0];
        let fd = [5, 0, 0, 0, 0, 0];
        assert_eq!(native_call(I386, 118, args), Some((libc::SYS_fsync, fd)));
        assert_eq!(
            native_call(I386, 148, args),
            Some((libc::SYS_fdatasync, fd))
        );
        assert_eq!(native_call(I386, 344, args), Some((libc::SYS_syncfs, fd)));
        let msync = [0x1000, 0x2000, 4, 0, 0, 0];
        assert_eq!(
            native_call(I386, 144, msync),
            Some((libc::SYS_msync, msync))
        );
    }

    #[test]
    fn i386_sync_file_range_joins_its_halves() {
        let args = [3, 0xffff_ffff, 1, 0x10, 0, 7];
        let native = [3, 0x1_ffff_ffff, 0x10, 7, 0, 0];
        let read = native_call(I386, 314, args);
        assert_eq!(read, Some((libc::SYS_sync_file_range, native)));
    }

    #[test]
    fn anything_else_is_not_read_as_a_native_call() {
        // i386 sync, open, io_uring_setup (the native number, 425).
        for nr in [36, 5, 425] {
            assert_eq!(native_call(I386, nr, [0; 6]), None, "i386 {nr}");
        }
        let x32_fsync = 0x4000_0000 | 74;
        assert_eq!(native_call(X86_64, x32_fsync, [0; 6]), None);
        assert_eq!(native_call(0x4000_0028, 118, [0; 6]), None, "arm");
        let args = [u64::MAX; 6];
        assert_eq!(native_call(X86_64, 74, args), Some((74, args)));
    }
}
