//! Copies between the library's buffers and its caller's memory, with
//! `process_vm_readv(2)` and `process_vm_writev(2)` on this very process: an
//! address the caller passed is read or written as the kernel would, and a
//! bad one fails as EFAULT instead of crashing the program.

use core::ffi::c_long;
use core::ptr;

use crate::errno;
use crate::kernel::raw;

/// One `process_vm_readv` (or `_writev`) between this process's `local`
/// buffers and `remote` ranges of its own memory, as the kernel would read
/// or write a caller's argument: false where not every byte could be moved
/// (an address the kernel would answer with EFAULT, or a filter that
/// forbids the call). errno is left as it was.
fn transfer(number: c_long, local: &[libc::iovec], remote: &[libc::iovec]) -> bool {
    let total: usize = local.iter().map(|part| part.iov_len).sum();
    let saved = errno::get();
    let pid = raw(libc::SYS_getpid, [0; 6]);
    let moved = raw(
        number,
        [
            pid,
            local.as_ptr() as c_long,
            local.len() as c_long,
            remote.as_ptr() as c_long,
            remote.len() as c_long,
            0,
        ],
    );
    errno::set(saved);
    moved == total as c_long
}

/// An iovec for `len` bytes at address `at`.
pub fn range(at: usize, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: ptr::without_provenance_mut(at),
        iov_len: len,
    }
}

/// Copies `buffer.len()` bytes from address `from` of this process into
/// `buffer`; false, with errno untouched, where they cannot be read.
pub fn copy_from_caller(buffer: &mut [u8], from: usize) -> bool {
    let local = [libc::iovec {
        iov_base: buffer.as_mut_ptr().cast(),
        iov_len: buffer.len(),
    }];
    transfer(
        libc::SYS_process_vm_readv,
        &local,
        &[range(from, buffer.len())],
    )
}

/// Fills each of `parts` from the address beside it in `from` (as many as
/// there are parts); false where one cannot be read.
pub fn gather_from_caller<const N: usize>(parts: &mut [[u8; N]], from: &[usize]) -> bool {
    let mut local = [range(0, 0); 64];
    let mut remote = [range(0, 0); 64];
    let mut count = 0;
    for ((part, &at), (mine, theirs)) in parts
        .iter_mut()
        .zip(from)
        .zip(local.iter_mut().zip(remote.iter_mut()))
    {
        *mine = libc::iovec {
            iov_base: part.as_mut_ptr().cast(),
            iov_len: N,
        };
        *theirs = range(at, N);
        count += 1;
    }
    let (Some(local), Some(remote)) = (local.get(..count), remote.get(..count)) else {
        return false;
    };
    count == parts.len() && transfer(libc::SYS_process_vm_readv, local, remote)
}

/// Copies `bytes` to address `to` of this process; false, with errno
/// untouched, where they cannot be written.
pub fn copy_to_caller(to: usize, bytes: &[u8]) -> bool {
    let local = [range(bytes.as_ptr() as usize, bytes.len())];
    transfer(
        libc::SYS_process_vm_writev,
        &local,
        &[range(to, bytes.len())],
    )
}
