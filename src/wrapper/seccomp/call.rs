//! One notified call and the answer it gets: the types the dispatcher
//! (`notify.rs`) and every answering module share, in a module of their
//! own below all of them, so that none imports another back.

use super::caller::Caller;

/// One call waiting for its answer.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub id: u64,
    pub caller: Caller,
    pub nr: i64,
    pub native: bool,
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
