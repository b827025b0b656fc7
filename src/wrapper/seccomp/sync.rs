//! The sync calls and `pwritev2`, answered by the supervisor as the library
//! answers them: `fsync`, `fdatasync`, `syncfs` and `sync_file_range`
//! return 0 without running, but fail with `EBADF` on a descriptor the
//! caller does not have; `pwritev2` with `RWF_SYNC`/`RWF_DSYNC` is made by
//! the supervisor on a copy of the caller's descriptor (the same open file,
//! so the same offset), with those flags dropped and the others kept.

use std::io;
use std::os::fd::AsRawFd;

use super::notify::{Answer, Call};
use super::rules::RWF_SYNCS;

/// fsync(2), fdatasync(2), syncfs(2), sync_file_range(2): 0, or the
/// error the kernel gives before it would flush, in its order of checks
/// (the library's `sync.rs` answers the same): `EINVAL` for bad range
/// arguments, `EBADF` for a descriptor the caller does not have (or an
/// `O_PATH` one), and for a pipe, socket or terminal `EINVAL` from fsync
/// and `ESPIPE` from sync_file_range; syncfs accepts those.
pub fn answer(call: &Call) -> Answer {
    let [fd, offset, nbytes, flags, ..] = call.args;
    let range = call.nr == libc::SYS_sync_file_range;
    if range && !range_valid(offset as i64, nbytes as i64, flags as u32) {
        return Answer::Error(libc::EINVAL);
    }
    let file = match call.caller.descriptor(fd as i32) {
        Ok(file) => file,
        Err(e) => return Answer::Error(e.raw_os_error().unwrap_or(libc::EBADF)),
    };
    // One seek that moves nothing tells storage from a stream, as in the library.
    // SAFETY: lseek on our own descriptor.
    if unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_CUR) } >= 0 {
        return Answer::Value(0);
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::ESPIPE) if call.nr == libc::SYS_syncfs => Answer::Value(0),
        Some(libc::ESPIPE) if range => Answer::Error(libc::ESPIPE),
        Some(libc::ESPIPE) => Answer::Error(libc::EINVAL),
        other => Answer::Error(other.unwrap_or(libc::EBADF)),
    }
}

/// Whether sync_file_range(2) accepts these arguments, before it looks at
/// the descriptor.
fn range_valid(offset: i64, nbytes: i64, flags: u32) -> bool {
    let known = libc::SYNC_FILE_RANGE_WAIT_BEFORE
        | libc::SYNC_FILE_RANGE_WRITE
        | libc::SYNC_FILE_RANGE_WAIT_AFTER;
    let end = offset.wrapping_add(nbytes);
    flags & !known == 0 && offset >= 0 && end >= 0 && end >= offset
}

/// The most a single emulated `pwritev2` copies; a longer one returns a
/// short count, as a write may.
const MOST: usize = 16 << 20;

/// pwritev2(2) with the sync flags dropped.
pub fn pwritev2(call: &Call, still_waiting: &dyn Fn() -> bool) -> Answer {
    Answer::from_io(write(call, still_waiting))
}

fn write(call: &Call, still_waiting: &dyn Fn() -> bool) -> io::Result<i64> {
    let [fd, iov, iovcnt, pos, _pos_high, flags] = call.args;
    let caller = call.caller;
    let count =
        usize::try_from(iovcnt as i32).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    if count > libc::UIO_MAXIOV as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let file = caller.descriptor(fd as i32)?;
    let mut data = Vec::new();
    for i in 0..count as u64 {
        let entry: [u64; 2] = caller.read_value(iov + 16 * i)?;
        let [base, len] = entry;
        let len = usize::try_from(len)
            .unwrap_or(usize::MAX)
            .min(MOST - data.len());
        let start = data.len();
        data.resize(start + len, 0);
        caller.read(base, &mut data[start..])?;
        if data.len() == MOST {
            break;
        }
    }
    if !still_waiting() {
        return Err(io::Error::from_raw_os_error(libc::EINTR));
    }
    let local = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    let flags = (flags as u32 & !RWF_SYNCS) as libc::c_int;
    // SAFETY: one iovec over `data`, which outlives the call.
    let n = unsafe { libc::pwritev2(file.as_raw_fd(), &local, 1, pos as i64, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as i64)
}
