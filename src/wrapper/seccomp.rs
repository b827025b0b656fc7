//! Seccomp mode, for the programs `LD_PRELOAD` cannot reach: `decide.rs`
//! says when it is on; `filter.rs` holds the plain BPF tables and installs
//! them; `rules.rs` is the filter of the supervised mode, whose calls the
//! supervisor (`notify.rs`, handed its listener by `handoff.rs`) answers
//! in `sync.rs`, `open.rs` and `uring.rs` (with `sqe.rs` for one ring
//! entry and `mapping.rs` for a ring's memory), reaching the caller
//! through `caller.rs`.

mod caller;
pub mod decide;
pub mod filter;
pub mod handoff;
mod mapping;
mod notify;
mod open;
pub mod rules;
mod sqe;
mod sync;
mod uring;
