//! The one thread that answers `fsync`: each answer goes out `latency`
//! after its request came in, and is counted just before it does.
//!
//! A request waits in a queue, not in the thread that read it from
//! /dev/fuse, so the device's reads and writes never queue behind a flush.
//! Every request waits the same time, so the queue's order is the order of
//! the deadlines: flushes that overlap take one latency each, not one
//! after the other, as on a disk with a command queue.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

use fuser::ReplyEmpty;

/// The sending side: `flush` queues an answer.
pub struct Flusher {
    queue: Sender<(Instant, ReplyEmpty)>,
    served: Arc<AtomicU64>,
}

impl Flusher {
    /// Starts the thread. It ends when the `Flusher` is dropped.
    pub fn start(latency: Duration) -> Flusher {
        let (queue, waiting) = channel::<(Instant, ReplyEmpty)>();
        let served = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&served);
        std::thread::spawn(move || {
            precise_sleeps();
            for (arrived, reply) in waiting {
                let deadline = arrived + latency;
                let now = Instant::now();
                if deadline > now {
                    std::thread::sleep(deadline - now);
                }
                count.fetch_add(1, Ordering::SeqCst);
                reply.ok();
            }
        });
        Flusher { queue, served }
    }

    /// Answers `reply` once the latency has passed since now.
    pub fn flush(&self, reply: ReplyEmpty) {
        if let Err(unsent) = self.queue.send((Instant::now(), reply)) {
            // The thread is gone (it cannot be while we live): answer at once.
            let (_, reply) = unsent.0;
            reply.ok();
        }
    }

    /// How many flushes were answered.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::SeqCst)
    }
}

/// Lets this thread's sleeps end when asked: the kernel's default timer
/// slack (50 µs) would otherwise double a 50 µs latency.
fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and changes
    // only the calling thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}
