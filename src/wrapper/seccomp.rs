//! Seccomp mode, for the programs `LD_PRELOAD` cannot reach: `decide.rs`
//! says when it is on, `filter.rs` holds the BPF tables and installs them.

pub mod decide;
pub mod filter;
