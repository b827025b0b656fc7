//! openat2(2), whose flags are in the caller's memory (`struct open_how`):
//! the supervisor takes the dropped open flags out of `open_how.flags`
//! there, then lets the call go on, so that the kernel opens the file as
//! the program, with the program's credentials, namespaces, limits and
//! LSM context. Nothing is opened by the supervisor.
//!
//! The time between the rewrite and the kernel's copy of the structure is
//! a window only for the program's own threads, which can write there too:
//! what the kernel then opens is what the program could have asked for
//! itself. Only a structure in a private mapping of the caller's is
//! rewritten: one in a shared mapping (of a file, or memory shared with
//! another process) is left as it is, since the write would reach the
//! file or the other process. So is one the supervisor cannot write
//! (read-only memory, a bad address, a size the kernel refuses): the
//! kernel answers as it would without eatmydata, and opens with the
//! flags. The program sees its structure without those flags after the
//! call.
//!
//! `open` and `openat` keep their flags in a register, which only the
//! kernel can change: they are not sent here, and run as asked.

use super::call::{Answer, Call};
use super::maps;
use crate::durability::sqe::open_how_flags;

/// `OPEN_HOW_SIZE_VER0`: the kernel refuses a smaller `size`.
const HOW_SIZE_VER0: u64 = 24;

/// Rewrites the `open_how.flags` at `address` without `dropped`; `ready`
/// says whether the call is still waiting, checked before writing.
pub fn rewrite_how(call: &Call, address: u64, dropped: u32, ready: &dyn Fn() -> bool) {
    let Ok(flags) = call.caller.read_value::<u64>(address) else {
        return;
    };
    if let Some(flags) = open_how_flags(flags, dropped)
        && in_private_memory(call, address)
        && ready()
    {
        let _ = call.caller.write(address, &flags.to_ne_bytes());
    }
}

/// Whether `open_how.flags` at `address` lies in a private mapping.
fn in_private_memory(call: &Call, address: u64) -> bool {
    let maps = std::fs::read_to_string(call.caller.proc_path("maps"));
    maps.is_ok_and(|maps| maps::private(&maps, address, 8))
}

/// openat2(2): the flags rewritten where they can be, then the call runs.
pub fn answer(call: &Call, dropped: u32, ready: &dyn Fn() -> bool) -> Answer {
    let [_dirfd, _path, how, size, ..] = call.args;
    if size >= HOW_SIZE_VER0 {
        rewrite_how(call, how, dropped, ready);
    }
    Answer::Continue
}
