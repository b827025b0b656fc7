//! One notified call and the answer it gets: the types the dispatcher
//! (`notify.rs`) and every answering module share, in a module of their
//! own below all of them, so that none imports another back.

use super::caller::Caller;

/// One call waiting for its answer.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub id: u64,
    pub caller: Caller,
    /// The native number of the call (an i386 `fsync` is `SYS_fsync`:
    /// `compat.rs`), or the number as made when not `native`.
    pub nr: i64,
    /// Whether the call is read as a native one: else it only goes on.
    pub native: bool,
    /// The arguments as the native call takes them.
    pub args: [u64; 6],
}

/// What the call gets. There is no "done for you": the supervisor never
/// makes a program's file operation itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Returns this value, without running.
    Value(i64),
    /// Fails with this errno, without running.
    Error(i32),
    /// Runs in the kernel as made (as the program, with what it may have
    /// had rewritten in its own memory).
    Continue,
}
