//! Where a ring keeps what the supervisor reads: the setup flags that
//! change it, `struct io_uring_params` (`linux/io_uring.h`), and the
//! offsets of the submission queue, learnt from the kernel itself with a
//! throwaway ring of the same sizes and flags.

use std::collections::HashMap;
use std::io;
use std::os::fd::OwnedFd;

use super::caller::Plain;
use super::mapping::Map;

pub const SETUP_SQPOLL: u32 = 1 << 1;
pub const SETUP_SQ_AFF: u32 = 1 << 2;
pub const SETUP_CQSIZE: u32 = 1 << 3;
pub const SETUP_SQE128: u32 = 1 << 10;
pub const SETUP_CQE32: u32 = 1 << 11;
pub const SETUP_DEFER_TASKRUN: u32 = 1 << 13;
pub const SETUP_NO_MMAP: u32 = 1 << 14;
pub const SETUP_NO_SQARRAY: u32 = 1 << 16;
/// The setup flags that change where things are in the rings.
pub const LAYOUT_FLAGS: u32 = SETUP_SQE128 | SETUP_CQE32 | SETUP_NO_SQARRAY;

/// `struct io_uring_params`: ten u32 of settings, then the two offset sets.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub struct Params {
    pub head: [u32; 10],
    pub sq_off: [u32; 10],
    pub cq_off: [u32; 10],
}
// SAFETY: three arrays of u32, `repr(C)`: no padding, any bytes a value.
unsafe impl Plain for Params {}
/// Indexes into `Params::head` and `Params::sq_off`.
pub const P_CQ_ENTRIES: usize = 1;
pub const P_FLAGS: usize = 2;
pub const SQ_HEAD: usize = 0;
pub const SQ_TAIL: usize = 1;
pub const SQ_MASK: usize = 2;
pub const SQ_ENTRIES: usize = 3;
pub const SQ_FLAGS: usize = 4;
pub const SQ_ARRAY: usize = 6;
pub const CQ_ENTRIES: usize = 3;

/// Where one ring keeps what the supervisor reads.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub sq: [u32; 10],
    pub entries: u32,
    pub sqe_size: usize,
    pub no_array: bool,
}

impl Layout {
    pub fn ring_len(&self) -> usize {
        let end = if self.no_array {
            self.sq[SQ_FLAGS] as usize + 4
        } else {
            self.sq[SQ_ARRAY] as usize + 4 * self.entries as usize
        };
        end.max(4096)
    }
}

/// The layout of `ring`, made with setup `flags`: the fixed offsets and
/// sizes read from the ring, the index array's place from a throwaway
/// ring of the same sizes and flags.
pub fn learn(
    ring: &OwnedFd,
    flags: u32,
    known: &mut HashMap<(u32, u32, u32), Layout>,
) -> io::Result<Layout> {
    let probe = throwaway(1, 0, 0)?;
    let first = Map::new(ring, 4096, 0)?;
    let entries = first.u32(probe.sq_off[SQ_ENTRIES] as usize);
    let cq_entries = first.u32(probe.cq_off[CQ_ENTRIES] as usize);
    if let Some(layout) = known.get(&(entries, cq_entries, flags)) {
        return Ok(*layout);
    }
    let params = throwaway(entries, cq_entries, flags)?;
    let layout = Layout {
        sq: params.sq_off,
        entries,
        sqe_size: if flags & SETUP_SQE128 != 0 { 128 } else { 64 },
        no_array: flags & SETUP_NO_SQARRAY != 0,
    };
    known.insert((entries, cq_entries, flags), layout);
    Ok(layout)
}

/// Makes and closes a ring, for the offsets the kernel gives it.
fn throwaway(entries: u32, cq_entries: u32, flags: u32) -> io::Result<Params> {
    let mut params = Params::default();
    params.head[P_FLAGS] = flags | if cq_entries > 0 { SETUP_CQSIZE } else { 0 };
    params.head[P_CQ_ENTRIES] = cq_entries;
    // SAFETY: io_uring_setup fills the params it is given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_io_uring_setup,
            entries,
            &mut params as *mut Params,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: our new descriptor, closed once.
    unsafe { libc::close(fd as i32) };
    Ok(params)
}
