//! Seccomp mode, for the programs `LD_PRELOAD` cannot reach, in floors:
//! each module imports only those on the floors below it.
//!
//! - floor 5: `handoff.rs` (the listener passed from child to parent),
//!   `decide.rs` (when seccomp mode is on, and what the user is told);
//! - floor 4: `notify.rs`, the listener and the supervisor's dispatch;
//! - floor 3: the answers: `sync.rs` (sync calls, msync), `openat2.rs`
//!   (the caller's `open_how` rewritten), `uring.rs` (rings, with `sqe.rs`
//!   for one entry and `registered.rs` for the files a ring registered);
//! - floor 2: what the supervisor knows of a caller: `fdinfo.rs` (does a
//!   descriptor reach a disk?) over `mountinfo.rs` (file systems by
//!   mount); `rules.rs` (the supervised filter) over `filter.rs` (the
//!   plain filter, its ABI tables, installing either);
//! - floor 1: `call.rs` (a call and its answer), `caller.rs` (the caller's
//!   memory and `/proc` files), `maps.rs` (the caller's mappings, from
//!   `/proc/TID/maps`), `mapping.rs` (a ring mapped) with
//!   `layout.rs` (where a ring keeps things), `bpf.rs`
//!   (the BPF assembler); and `crate::durability`, the decisions shared
//!   with the library.
//!
//! The supervisor's one rule: it inspects, rewrites what the kernel will
//! read from the program's own memory, answers, or lets the call go on;
//! it never makes a program's file operation itself. See docs/seccomp.md.

mod bpf;
mod call;
mod caller;
pub mod decide;
mod fdinfo;
pub mod filter;
pub mod handoff;
mod layout;
mod mapping;
mod maps;
mod mountinfo;
mod notify;
mod openat2;
mod registered;
pub mod rules;
mod sqe;
mod sync;
mod uring;
