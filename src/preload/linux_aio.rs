//! Linux AIO, `io_submit(2)` and `io_getevents(2)`: flush requests
//! (`IOCB_CMD_FSYNC`, `IOCB_CMD_FDSYNC`) complete without a flush.
//!
//! libaio makes its system calls through libc's `syscall()`, where the
//! library sees them. A flush request is taken out of the batch the kernel
//! gets, and its completion event -- the program's `aio_data`, the address
//! of its iocb, a result of 0 -- waits in a fixed table until the program
//! asks for events on that context; the rest of the batch goes to the
//! kernel in order, as it was. The program's iocbs are only read, never
//! written, and read as the kernel reads them (`process_vm_readv`), so a
//! bad address still gets the kernel's EFAULT.
//!
//! A request the kernel would refuse (bad descriptor, a file it cannot sync,
//! stray fields), one that asks for an eventfd notification, or one that
//! finds the table full goes to the kernel as it is.

use core::ffi::{c_int, c_long};
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::caller::{copy_from_caller, copy_to_caller, gather_from_caller};
use crate::kernel::raw;
use crate::report::{self, Skip};
use crate::{policy, sync};

const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;
const IOCB_FLAG_RESFD: u32 = 1;

/// The iocbs of one `io_submit` looked at; the rest wait for the next call,
/// as a kernel that accepts fewer than asked lets them.
const BATCH: usize = 32;

/// `struct iocb` and `struct io_event`, as the kernel lays them out on a
/// little-endian 64-bit machine.
const IOCB_SIZE: usize = 64;
const EVENT_SIZE: usize = 32;

/// A completion waiting to be collected: its state, then what it carries.
struct Completion {
    state: AtomicU32,
    context: AtomicU64,
    data: AtomicU64,
    iocb: AtomicU64,
}

const FREE: u32 = 0;
const WRITING: u32 = 1;
const READY: u32 = 2;
const TAKEN: u32 = 3;

// In .data, not .bss: 8 KiB of .bss would cost every process one more
// mmap(2) at load, where file-backed pages cost nothing until touched.
#[unsafe(link_section = ".data")]
static WAITING: [Completion; 256] = [const {
    Completion {
        state: AtomicU32::new(FREE),
        context: AtomicU64::new(0),
        data: AtomicU64::new(0),
        iocb: AtomicU64::new(0),
    }
}; 256];

/// How many completions are ready: when none, `io_getevents` costs one load.
static READY_COUNT: AtomicUsize = AtomicUsize::new(0);

fn field<const N: usize>(iocb: &[u8; IOCB_SIZE], at: usize) -> [u8; N] {
    let mut bytes = [0; N];
    if let Some(part) = iocb.get(at..at + N) {
        bytes.copy_from_slice(part);
    }
    bytes
}

/// Whether `iocb` is a flush the kernel would accept, with nothing but the
/// completion to give back: the fields it requires zero are zero, no
/// eventfd is to be signalled, and the descriptor can be synced.
fn answerable(iocb: &[u8; IOCB_SIZE]) -> bool {
    let opcode = u16::from_ne_bytes(field(iocb, 16));
    let fd = u32::from_ne_bytes(field(iocb, 20)) as c_int;
    let flags = u32::from_ne_bytes(field(iocb, 56));
    let rw_flags = u32::from_ne_bytes(field(iocb, 12));
    let unused = [24, 32, 40, 48].map(|at| u64::from_ne_bytes(field(iocb, at)));
    (opcode == IOCB_CMD_FSYNC || opcode == IOCB_CMD_FDSYNC)
        && rw_flags == 0
        && unused == [0; 4]
        && flags & IOCB_FLAG_RESFD == 0
        && sync::fsync_eatable(fd)
}

/// Puts a completion in the table; false when it is full.
fn post(context: u64, data: u64, iocb: u64) -> bool {
    for slot in &WAITING {
        if slot
            .state
            .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            slot.context.store(context, Ordering::Relaxed);
            slot.data.store(data, Ordering::Relaxed);
            slot.iocb.store(iocb, Ordering::Relaxed);
            slot.state.store(READY, Ordering::Release);
            READY_COUNT.fetch_add(1, Ordering::Release);
            return true;
        }
    }
    false
}

/// `io_submit(context, nr, iocbs)` with its flush requests completed here.
pub fn submit(a: [c_long; 6]) -> c_long {
    let [context, nr, iocbs, ..] = a;
    if !policy::eating() || nr <= 0 {
        return raw(libc::SYS_io_submit, a);
    }
    let seen = (nr as usize).min(BATCH);
    let mut addresses = [0usize; BATCH];
    let mut headers = [[0u8; IOCB_SIZE]; BATCH];
    let (Some(addresses), Some(headers)) = (addresses.get_mut(..seen), headers.get_mut(..seen))
    else {
        return raw(libc::SYS_io_submit, a);
    };
    let mut pointers = [0u8; BATCH * 8];
    let read = pointers
        .get_mut(..seen * 8)
        .is_some_and(|bytes| copy_from_caller(bytes, iocbs as usize));
    for (address, bytes) in addresses.iter_mut().zip(pointers.chunks_exact(8)) {
        *address = usize::from_ne_bytes(bytes.try_into().unwrap_or_default());
    }
    if !read || !gather_from_caller(headers, addresses) {
        return raw(libc::SYS_io_submit, a);
    }
    let mut flushes = [false; BATCH];
    for (is_flush, header) in flushes.iter_mut().zip(headers.iter()) {
        *is_flush = answerable(header);
    }
    if !flushes.contains(&true) {
        return raw(libc::SYS_io_submit, a);
    }
    // In order: runs of other requests go to the kernel, and each flush is
    // posted only once everything before it has been submitted.
    let mut kernel = [0usize; BATCH];
    let (mut queued, mut done) = (0, 0);
    for ((address, header), is_flush) in addresses.iter().zip(headers.iter()).zip(flushes) {
        if is_flush {
            let sent = send(context, kernel.get(..queued).unwrap_or_default());
            if sent < queued as c_long {
                return if done == 0 { sent } else { done + sent.max(0) };
            }
            done += queued as c_long;
            queued = 0;
            let data = u64::from_ne_bytes(field(header, 0));
            if post(context as u64, data, *address as u64) {
                done += 1;
                let fd = u32::from_ne_bytes(field(header, 20)) as c_int;
                report::skipped_on_fd(Skip::Fsync, fd);
                continue;
            }
        }
        if let Some(slot) = kernel.get_mut(queued) {
            *slot = *address;
            queued += 1;
        }
    }
    let sent = send(context, kernel.get(..queued).unwrap_or_default());
    if sent < 0 {
        return if done == 0 { sent } else { done };
    }
    done + sent
}

/// Submits `iocbs` to the kernel: how many it took, or -1 with errno set.
fn send(context: c_long, iocbs: &[usize]) -> c_long {
    if iocbs.is_empty() {
        return 0;
    }
    let args = [
        context,
        iocbs.len() as c_long,
        iocbs.as_ptr() as c_long,
        0,
        0,
        0,
    ];
    raw(libc::SYS_io_submit, args)
}

/// `io_getevents` or `io_pgetevents` (`number`): the completions waiting
/// here for this context first, then what the kernel has, waiting only for
/// as many as are still wanted.
pub fn get_events(number: c_long, mut a: [c_long; 6]) -> c_long {
    if READY_COUNT.load(Ordering::Acquire) == 0 {
        return raw(number, a);
    }
    let [context, min_nr, nr, events, ..] = a;
    if min_nr < 0 || nr < min_nr {
        return raw(number, a);
    }
    let mut given: c_long = 0;
    for slot in &WAITING {
        if given >= nr {
            break;
        }
        if slot.state.load(Ordering::Acquire) != READY
            || slot.context.load(Ordering::Relaxed) != context as u64
            || slot
                .state
                .compare_exchange(READY, TAKEN, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            continue;
        }
        // data, obj (the iocb's address), res = 0, res2 = 0.
        let words = [
            slot.data.load(Ordering::Relaxed),
            slot.iocb.load(Ordering::Relaxed),
        ];
        let mut event = [0u8; EVENT_SIZE];
        for (bytes, word) in event.chunks_exact_mut(8).zip(words) {
            bytes.copy_from_slice(&word.to_ne_bytes());
        }
        let to = events as usize + given as usize * EVENT_SIZE;
        if !copy_to_caller(to, &event) {
            slot.state.store(READY, Ordering::Release);
            break;
        }
        slot.state.store(FREE, Ordering::Release);
        READY_COUNT.fetch_sub(1, Ordering::Release);
        given += 1;
    }
    if given == 0 {
        return raw(number, a);
    }
    if given == nr {
        return given;
    }
    a[1] = (min_nr - given).max(0);
    a[2] = nr - given;
    a[3] = events + given * EVENT_SIZE as c_long;
    let more = raw(number, a);
    given + more.max(0)
}

/// `io_destroy(context)`: completions no one can collect any more go.
pub fn destroy(a: [c_long; 6]) -> c_long {
    let destroyed = raw(libc::SYS_io_destroy, a);
    if destroyed == 0 {
        for slot in &WAITING {
            if slot.state.load(Ordering::Acquire) == READY
                && slot.context.load(Ordering::Relaxed) == a[0] as u64
                && slot
                    .state
                    .compare_exchange(READY, FREE, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                READY_COUNT.fetch_sub(1, Ordering::Release);
            }
        }
    }
    destroyed
}

/// `io_pgetevents(2)`, which the libc crate does not name.
#[cfg(target_arch = "x86_64")]
pub const SYS_IO_PGETEVENTS: c_long = 333;
#[cfg(target_arch = "aarch64")]
pub const SYS_IO_PGETEVENTS: c_long = 292;

/// The kernel call that waits for events: aarch64 has only the `p` one.
#[cfg(target_arch = "x86_64")]
const GET_EVENTS: c_long = libc::SYS_io_getevents;
#[cfg(not(target_arch = "x86_64"))]
const GET_EVENTS: c_long = SYS_IO_PGETEVENTS;

/// `eatmydata_io_events_waiting`: whether completions wait here, for the
/// shim's `io_getevents`. libaio's own answers a poll from the ring without
/// asking the kernel, and would never see them.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_io_events_waiting() -> c_int {
    c_int::from(READY_COUNT.load(Ordering::Acquire) != 0)
}

/// `eatmydata_io_getevents`: [`get_events`] for the shim's `io_getevents`;
/// -1 with errno set on failure.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_io_getevents(
    context: c_long,
    min_nr: c_long,
    nr: c_long,
    events: c_long,
    timeout: c_long,
) -> c_long {
    get_events(GET_EVENTS, [context, min_nr, nr, events, timeout, 0])
}
