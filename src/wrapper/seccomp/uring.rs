//! io_uring submissions rewritten before the kernel reads them.
//!
//! Without `IORING_SETUP_SQPOLL`, the kernel reads a ring's submission
//! queue only inside `io_uring_enter` with a count to submit, which the
//! filter sends here. The supervisor maps the same ring (a copy of the
//! caller's descriptor, `pidfd_getfd`), walks the entries between the
//! kernel's head and the caller's tail and rewrites them in place, then
//! lets the call go on:
//!
//! - `IORING_OP_FSYNC` and `IORING_OP_SYNC_FILE_RANGE` on a descriptor
//!   that certainly reaches a disk (`fdinfo.rs`), and that the kernel
//!   would accept as they are, become `IORING_OP_NOP`, which completes at
//!   once with result 0, keeping the entry's `user_data`, flags (links,
//!   drain, skip-success) and personality: a chain stays a chain. Any
//!   other sync entry (a bad one, a pipe, tmpfs, a registered file) is
//!   left for the kernel to run or refuse;
//! - `RWF_SYNC`/`RWF_DSYNC` leave the `rw_flags` of `WRITE`, `WRITEV` and
//!   `WRITE_FIXED`, and the open flags to drop leave `OPENAT` (in the entry)
//!   and `OPENAT2` (in the caller's `open_how`).
//!
//! A ring's layout (where the index array is, the entry size) is learnt at
//! `io_uring_setup` (its flags) and at the `mmap` of its entries, where the
//! supervisor first holds the ring; rings are told apart by device and
//! inode (each ring has its own inode). The supervisor keeps its mappings
//! of a ring while the ring is in use, and lets them go once no submission
//! came for `KEPT` (a mapping keeps the ring, and its registered files,
//! alive after the program closed it; the kernel tears a closed ring down
//! in the background anyway).
//!
//! Rings set up through another ABI (i386) are left to the kernel: the
//! filter sends none of their calls, and a non-native call that reaches
//! the supervisor only goes on (`notify.rs`).
//!
//! SQPOLL would let a kernel thread read entries with no call at all, so it
//! is taken out of the setup flags: a program that reads the flags back
//! (liburing) submits with `io_uring_enter` as on any ring; for one that
//! keeps its own idea (fio's engine), the ring's `IORING_SQ_NEED_WAKEUP`
//! flag is set for good, so that it always calls `io_uring_enter` to wake
//! the thread, and that call submits.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use super::call::{Answer, Call};
use super::layout::{
    LAYOUT_FLAGS, Layout, P_FLAGS, Params, SETUP_DEFER_TASKRUN, SETUP_NO_MMAP, SETUP_SQ_AFF,
    SETUP_SQPOLL, SQ_ARRAY, SQ_FLAGS, SQ_HEAD, SQ_MASK, SQ_TAIL, learn,
};
use super::mapping::Map;
use super::mountinfo::Mounts;
use super::registered::{self, Registered};
use super::rules::IORING_OFF_SQES;
use super::sqe;

const SQ_NEED_WAKEUP: u32 = 1;
const ENTER_REGISTERED_RING: u64 = 1 << 4;

/// A setup seen, waiting for the mmap that shows its ring.
#[derive(Clone, Copy)]
struct Pending {
    tgid: u32,
    flags: u32,
    no_sqpoll: bool,
}

/// How long the supervisor keeps a ring mapped after its last submission.
pub const KEPT: Duration = Duration::from_millis(100);

/// A ring: its device and inode.
type Key = (u64, u64);

/// A ring's submission queue and entries, mapped in the supervisor.
struct Mapped {
    sq: Map,
    sqes: Map,
    used: Instant,
}

#[derive(Default)]
pub struct Rings {
    pending: Vec<Pending>,
    known: HashMap<Key, Layout>,
    layouts: HashMap<(u32, u32, u32), Layout>,
    mapped: HashMap<Key, Mapped>,
    registered: Registered,
}

fn tgid(call: &Call) -> u32 {
    let field = call.caller.status_field("Tgid:");
    field
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(call.caller.tid)
}

impl Rings {
    /// io_uring_setup(2): SQPOLL taken out, the layout noted.
    pub fn setup(&mut self, call: &Call, still_waiting: &dyn Fn() -> bool) -> Answer {
        let address = call.args[1];
        let Ok(params) = call.caller.read_value::<Params>(address) else {
            return Answer::Continue;
        };
        let flags = params.head[P_FLAGS];
        if flags & SETUP_NO_MMAP != 0 {
            // Rings in the caller's own memory: not read here; as before 6.5.
            return Answer::Error(libc::EINVAL);
        }
        let no_sqpoll = flags & SETUP_SQPOLL != 0;
        if no_sqpoll {
            if flags & SETUP_DEFER_TASKRUN != 0 {
                return Answer::Error(libc::EINVAL); // as the kernel refuses it
            }
            let without = flags & !(SETUP_SQPOLL | SETUP_SQ_AFF);
            let at = address + 4 * P_FLAGS as u64;
            if !still_waiting() || call.caller.write(at, &without.to_ne_bytes()).is_err() {
                return Answer::Error(libc::EFAULT);
            }
        }
        let tgid = tgid(call);
        self.pending.push(Pending {
            tgid,
            flags: flags & LAYOUT_FLAGS,
            no_sqpoll,
        });
        Answer::Continue
    }

    /// mmap(2) of a ring's entries: the ring becomes known.
    pub fn mapped(&mut self, call: &Call, still_waiting: &dyn Fn() -> bool) -> Answer {
        if call.args[5] != u64::from(IORING_OFF_SQES) {
            return Answer::Continue;
        }
        let Some((ring, key)) = ring_of(call, call.args[4] as i32, true) else {
            return Answer::Continue;
        };
        if !still_waiting() {
            return Answer::Continue;
        }
        let tgid = tgid(call);
        let pending = self
            .pending
            .iter()
            .position(|p| p.tgid == tgid)
            .map(|i| self.pending.remove(i));
        let (flags, no_sqpoll) = pending.map_or((0, false), |p| (p.flags, p.no_sqpoll));
        if let Ok(layout) = learn(&ring, flags, &mut self.layouts) {
            if no_sqpoll && let Ok(map) = Map::new(&ring, layout.ring_len(), 0) {
                map.or_u32(layout.sq[SQ_FLAGS] as usize, SQ_NEED_WAKEUP);
            }
            if pending.is_some() || !self.known.contains_key(&key) {
                self.known.insert(key, layout);
                self.mapped.remove(&key);
                self.registered.forget(key);
            }
        }
        Answer::Continue
    }

    /// io_uring_enter(2) that submits: the entries rewritten, then the call
    /// goes on.
    pub fn enter(
        &mut self,
        call: &Call,
        dropped: u32,
        mounts: &mut Mounts,
        still_waiting: &dyn Fn() -> bool,
    ) -> Answer {
        if call.args[3] & ENTER_REGISTERED_RING != 0 {
            return Answer::Continue;
        }
        let Some((ring, key)) = ring_of(call, call.args[0] as i32, false) else {
            return Answer::Continue;
        };
        let Some(layout) = self.known.get(&key).copied() else {
            return Answer::Continue;
        };
        if !still_waiting() {
            return Answer::Continue;
        }
        let now = Instant::now();
        self.forget_unused(now);
        let Some(Mapped { sq, sqes, used }) = (match self.mapped.entry(key) {
            Entry::Occupied(entry) => Some(entry.into_mut()),
            Entry::Vacant(entry) => map(&ring, &layout, now).map(|ring| entry.insert(ring)),
        }) else {
            return Answer::Continue;
        };
        *used = now;
        let head = sq.u32(layout.sq[SQ_HEAD] as usize);
        let tail = sq.u32(layout.sq[SQ_TAIL] as usize);
        let mask = sq.u32(layout.sq[SQ_MASK] as usize);
        let waiting = tail.wrapping_sub(head).min(layout.entries);
        let entries: Vec<(usize, [u8; 64])> = (0..waiting)
            .filter_map(|i| {
                let slot = head.wrapping_add(i) & mask;
                let index = if layout.no_array {
                    slot
                } else {
                    sq.u32(layout.sq[SQ_ARRAY] as usize + 4 * slot as usize)
                };
                let at = index as usize * layout.sqe_size;
                (index < layout.entries).then(|| (at, sqe::read(sqes, at)))
            })
            .collect();
        // Slots an entry of this submission may change are not known.
        for (_, entry) in &entries {
            self.registered.changed(key, registered::change(entry));
        }
        let mut slots: Option<Option<Vec<bool>>> = None;
        let registered = &self.registered;
        let mut fixed = |slot: u32| {
            let known = slots.get_or_insert_with(|| {
                let user_files = || registered::user_files(&ring_fdinfo(call)?);
                registered.slots(key, user_files).map(<[bool]>::to_vec)
            });
            known
                .as_ref()
                .and_then(|known| known.get(slot as usize).copied())
                .unwrap_or(false)
        };
        for (at, entry) in entries {
            let files = sqe::Files {
                call,
                mounts,
                fixed: &mut fixed,
            };
            sqe::rewrite(sqes, at, entry, dropped, files);
        }
        Answer::Continue
    }

    /// io_uring_register(2) of files: noted (`registered.rs`), then run.
    pub fn register(
        &mut self,
        call: &Call,
        mounts: &mut Mounts,
        still_waiting: &dyn Fn() -> bool,
    ) -> Answer {
        if let Some((_, key)) = ring_of(call, call.args[0] as i32, true)
            && still_waiting()
        {
            self.registered.register(call, key, mounts);
        }
        Answer::Continue
    }

    /// Lets go of the rings not submitted to for `KEPT`.
    pub fn forget_unused(&mut self, now: Instant) {
        self.mapped
            .retain(|_, ring| now.duration_since(ring.used) < KEPT);
    }

    /// Whether any ring is still mapped (and so to be forgotten later).
    pub fn holds_any(&self) -> bool {
        !self.mapped.is_empty()
    }
}

/// The queue and entries of `ring`, mapped.
fn map(ring: &OwnedFd, layout: &Layout, now: Instant) -> Option<Mapped> {
    let sqes_len = layout.entries as usize * layout.sqe_size;
    Some(Mapped {
        sq: Map::new(ring, layout.ring_len(), 0).ok()?,
        sqes: Map::new(ring, sqes_len, u64::from(IORING_OFF_SQES)).ok()?,
        used: now,
    })
}

/// The text of `/proc/TID/fdinfo/N` of the ring `io_uring_enter` names.
fn ring_fdinfo(call: &Call) -> Option<String> {
    let fd = call.args[0] as i32;
    std::fs::read_to_string(call.caller.proc_path(&format!("fdinfo/{fd}"))).ok()
}

/// The caller's descriptor `fd` if it is a ring (looked at by name when
/// `check`; else any known key is a ring's), with its key.
fn ring_of(call: &Call, fd: i32, check: bool) -> Option<(OwnedFd, Key)> {
    let fd = call.caller.descriptor(fd).ok()?;
    if check {
        let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
        if link.as_os_str() != "anon_inode:[io_uring]" {
            return None;
        }
    }
    let mut stat = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: fstat of our own descriptor into a buffer of its size.
    if unsafe { libc::fstat(fd.as_raw_fd(), stat.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: filled by fstat.
    let stat = unsafe { stat.assume_init() };
    Some((fd, (stat.st_dev, stat.st_ino)))
}
