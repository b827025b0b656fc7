//! liburing's door (`liburing.so.2`, linked by MariaDB, QEMU, PostgreSQL
//! 18): the kernel's tail is published only inside liburing's exported
//! submit functions (its inline helpers fill entries and never touch the
//! kernel's tail; it makes its kernel calls itself and imports neither
//! `syscall` nor `mmap`). The shim's hooks of those functions
//! (`c/uring.c`) hand the program's `struct io_uring` here, where the
//! entries between `sqe_head` and `sqe_tail` are rewritten before liburing
//! publishes them. So even an SQPOLL ring, whose kernel thread reads
//! entries as soon as they are published, only ever sees rewritten ones,
//! and keeps the flags it asked for.
//!
//! Fixed files are followed through liburing's registration functions
//! (`io_uring_register_files` and its kin), by the ring's descriptor, in
//! the table of [`super::rings`]; a ring's slots are forgotten when it is
//! made or torn down, and whenever liburing's raw `io_uring_register`
//! touches its files.

use core::ptr;

use super::fixed::{self, Slots, slots_after};
use super::rings;
use super::{Batch, SETUP_SQE_MIXED, SETUP_SQE128, eat};
use crate::durability::sqe;

/// Where liburing's `struct io_uring` keeps what is read here. The layout
/// is part of the `liburing.so.2` ABI, the same from 2.0 on (fields have
/// only been added in its padding): the submission side's pointers
/// (`khead`, `ktail`, `kring_mask`, `kring_entries`, `kflags`, `kdropped`,
/// `array`, `sqes`), then `sqe_head` and `sqe_tail`; the ring's setup
/// flags and descriptor after the completion side.
mod layout {
    pub const KRING_MASK: usize = 16;
    pub const KRING_ENTRIES: usize = 24;
    pub const SQES: usize = 56;
    pub const SQE_HEAD: usize = 64;
    pub const SQE_TAIL: usize = 68;
    pub const FLAGS: usize = 192;
    pub const RING_FD: usize = 196;
}

/// What is read of a `struct io_uring`'s submission side.
struct Queue {
    fd: i32,
    head: u32,
    count: u32,
    mask: u32,
    sqes: *mut u8,
    shift: u32,
}

impl Queue {
    /// The entries `ring` is about to publish, if its fields make sense.
    ///
    /// # Safety
    /// `ring` is a live `struct io_uring`, as liburing's callers pass.
    unsafe fn of(ring: *const u8) -> Option<Queue> {
        // SAFETY: a live struct io_uring, which liburing reads right after
        // us; its pointers lead into the ring's mappings.
        unsafe {
            let field = |at: usize| ptr::read_unaligned(ring.add(at).cast::<u32>());
            let pointer = |at: usize| ptr::read_unaligned(ring.add(at).cast::<*mut u8>());
            let flags = field(layout::FLAGS);
            let (mask, entries) = (pointer(layout::KRING_MASK), pointer(layout::KRING_ENTRIES));
            let sqes = pointer(layout::SQES);
            if flags & SETUP_SQE_MIXED != 0 || mask.is_null() || entries.is_null() || sqes.is_null()
            {
                return None;
            }
            let head = field(layout::SQE_HEAD);
            let count = field(layout::SQE_TAIL).wrapping_sub(head);
            (count <= ptr::read_volatile(entries.cast::<u32>())).then(|| Queue {
                fd: field(layout::RING_FD) as i32,
                head,
                count,
                mask: ptr::read_volatile(mask.cast::<u32>()),
                sqes,
                shift: if flags & SETUP_SQE128 != 0 { 7 } else { 6 },
            })
        }
    }

    /// The address of the `n`-th entry to publish.
    fn entry(&self, n: u32) -> *mut u8 {
        let index = (self.head.wrapping_add(n) & self.mask) as usize;
        self.sqes.wrapping_add(index << self.shift)
    }
}

/// `eatmydata_uring_submitting`: liburing is about to publish the entries
/// between `sqe_head` and `sqe_tail` of `ring`; they are rewritten first.
///
/// # Safety
/// `ring` is the `struct io_uring *` the program passed to a liburing
/// submit function, or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_uring_submitting(ring: *const u8) {
    if ring.is_null() {
        return;
    }
    // SAFETY: the caller's promise.
    let Some(queue) = (unsafe { Queue::of(ring) }) else {
        return;
    };
    let Some(mut batch) = Batch::new(rings::fixed_for(queue.fd)) else {
        return;
    };
    if batch.fixed != 0 {
        for n in 0..queue.count {
            // SAFETY: an entry of the ring's array, copied.
            let entry = unsafe { ptr::read(queue.entry(n).cast::<[u8; sqe::SIZE]>()) };
            match slots_after(&entry) {
                Slots::Same => continue,
                Slots::Changed => rings::store_fixed(queue.fd, 0),
                Slots::Sent => rings::forget_all_fixed(),
            }
            batch.fixed = 0;
            break;
        }
    }
    for n in 0..queue.count {
        let at = queue.entry(n);
        // SAFETY: an entry of the ring's array that liburing handed out and
        // is about to publish: the kernel has not read it. Most are passed
        // over on their opcode.
        unsafe {
            if sqe::may_rewrite(at.read()) {
                eat(at, &batch);
            }
        }
    }
}

/// The descriptor of `ring`, or -1.
///
/// # Safety
/// `ring` is a live `struct io_uring`, or null.
unsafe fn ring_fd(ring: *const u8) -> i32 {
    if ring.is_null() {
        return -1;
    }
    // SAFETY: a live struct io_uring.
    unsafe { ptr::read_unaligned(ring.add(layout::RING_FD).cast::<i32>()) }
}

/// `eatmydata_uring_files`: liburing put `count` descriptors (at `fds`)
/// into `ring`'s fixed slots from `first` on; `whole` when they are its
/// whole table (a registration), else an update of some slots.
///
/// # Safety
/// `ring` is a live `struct io_uring`, or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_uring_files(
    ring: *const u8,
    first: u32,
    fds: *const i32,
    count: u32,
    whole: bool,
) {
    // SAFETY: the caller's promise.
    let fd = unsafe { ring_fd(ring) };
    let before = if whole { 0 } else { rings::fixed_for(fd) };
    let after = fixed::disk_slots(first as usize, fds as usize, count as usize, before);
    rings::store_fixed(fd, after);
}

/// `eatmydata_uring_forget_files`: `ring`'s fixed slots are no longer
/// known (unregistered, made sparse, changed by the raw
/// `io_uring_register`, or the ring made anew or torn down).
///
/// # Safety
/// `ring` is a live `struct io_uring`, or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_uring_forget_files(ring: *const u8) {
    // SAFETY: the caller's promise.
    rings::store_fixed(unsafe { ring_fd(ring) }, 0);
}

#[cfg(test)]
mod tests {
    use super::layout;

    /// The offsets of `struct io_uring` read here, as liburing's own header
    /// has them (liburing-dev; the CI installs it).
    #[test]
    fn liburing_layout_is_its_headers() {
        use std::process::Command;
        let dir = std::env::temp_dir().join(format!("eatmydata-liburing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("layout.c");
        std::fs::write(
            &source,
            "#include <stddef.h>\n#include <stdio.h>\n#include <liburing.h>\n\
             int main(void) {\n\
             printf(\"%zu %zu %zu %zu %zu %zu %zu %d %d\", \
             offsetof(struct io_uring, sq.kring_mask), \
             offsetof(struct io_uring, sq.kring_entries), \
             offsetof(struct io_uring, sq.sqes), \
             offsetof(struct io_uring, sq.sqe_head), \
             offsetof(struct io_uring, sq.sqe_tail), \
             offsetof(struct io_uring, flags), \
             offsetof(struct io_uring, ring_fd), \
             IORING_SETUP_SQE128, IORING_SETUP_SQPOLL);\n\
             return 0; }\n",
        )
        .unwrap();
        let binary = dir.join("layout");
        let built = Command::new("cc")
            .arg("-o")
            .arg(&binary)
            .arg(&source)
            .status();
        assert!(built.unwrap().success(), "cc (is liburing-dev installed?)");
        let output = Command::new(&binary).output().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let ours = [
            layout::KRING_MASK,
            layout::KRING_ENTRIES,
            layout::SQES,
            layout::SQE_HEAD,
            layout::SQE_TAIL,
            layout::FLAGS,
            layout::RING_FD,
            super::super::SETUP_SQE128 as usize,
            2,
        ]
        .map(|n| n.to_string())
        .join(" ");
        assert_eq!(String::from_utf8_lossy(&output.stdout), ours);
    }
}
