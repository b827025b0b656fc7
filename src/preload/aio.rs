//! POSIX AIO's `aio_fsync(3)`: what decides whether a request can complete
//! at once. The completion itself, which writes the program's `aiocb` and
//! notifies it, is C (`c/aio.c`), where libc's types are.
//!
//! glibc's and musl's AIO threads flush with libc's internal fsync, which
//! no preload can see: without this hook, `fio --ioengine=posixaio
//! --fsync=1` sends every flush to the disk.

use core::ffi::c_int;

use crate::report::{self, Skip};
use crate::{policy, sync};

/// Whether `aio_fsync(op, …)` on `fd` would be accepted and would succeed
/// but for the flush: `op` is `O_SYNC` or `O_DSYNC`, and the kernel can
/// sync `fd`. Anything else goes to libc, which answers as it always has
/// (glibc refuses a closed descriptor at once, musl through `aio_error`).
/// errno is left as it was.
pub fn fsync_answerable(op: c_int, fd: c_int) -> bool {
    policy::eating() && (op == libc::O_SYNC || op == libc::O_DSYNC) && sync::fsync_eatable(fd)
}

/// `eatmydata_aio_fsync_answerable`: [`fsync_answerable`] for the shim.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_aio_fsync_answerable(op: c_int, fd: c_int) -> c_int {
    c_int::from(fsync_answerable(op, fd))
}

/// `eatmydata_aio_fsync_answered`: the shim completed a request on `fd`;
/// count it, and record its file system for `--sync-at-exit`.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_aio_fsync_answered(fd: c_int) {
    report::skipped_on_fd(Skip::Fsync, fd);
}
