//! A shared mapping of part of an io_uring ring in the supervisor, with
//! volatile reads and writes: the same memory is the program's and the
//! kernel's too.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr;

/// A shared mapping of part of a ring, unmapped when dropped.
pub struct Map {
    base: *mut u8,
    len: usize,
}

impl Map {
    pub fn new(ring: &OwnedFd, len: usize, offset: u64) -> io::Result<Map> {
        // SAFETY: a new shared mapping of the ring's region; the kernel
        // checks the offset and length.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                ring.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Map {
            base: base.cast(),
            len,
        })
    }

    /// A pointer to `size` bytes at `at`, or None past the end.
    fn at(&self, at: usize, size: usize) -> Option<*mut u8> {
        // SAFETY: in bounds of the mapping, checked first.
        (at.checked_add(size)? <= self.len).then(|| unsafe { self.base.add(at) })
    }

    pub fn u8(&self, at: usize) -> u8 {
        // SAFETY: in bounds; the memory is shared with the kernel and
        // another process, so read once, volatile.
        self.at(at, 1)
            .map_or(0, |p| unsafe { ptr::read_volatile(p) })
    }

    pub fn u32(&self, at: usize) -> u32 {
        // SAFETY: in bounds and 4-aligned (ring offsets are), volatile.
        self.at(at, 4)
            .map_or(0, |p| unsafe { ptr::read_volatile(p.cast::<u32>()) })
    }

    pub fn set_u8(&self, at: usize, value: u8) {
        if let Some(p) = self.at(at, 1) {
            // SAFETY: in bounds, writable shared memory.
            unsafe { ptr::write_volatile(p, value) };
        }
    }

    pub fn or_u32(&self, at: usize, bits: u32) {
        if let Some(p) = self.at(at, 4) {
            // SAFETY: in bounds and aligned; the kernel changes other bits
            // of this word atomically, so this is atomic too.
            let word = unsafe { &*p.cast::<std::sync::atomic::AtomicU32>() };
            word.fetch_or(bits, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: our own mapping, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}
