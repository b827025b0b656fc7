//! openat2(2), whose flags are in the caller's memory (`struct open_how`):
//! the supervisor takes the dropped open flags out of `open_how.flags`
//! there, then lets the call go on, so that the kernel opens the file as
//! the program, with the program's credentials, namespaces, limits and
//! LSM context. Nothing is opened by the supervisor.
//!
//! Only an open the kernel would accept as asked loses its flags
//! (`durability::open`): one it refuses (`O_PATH|O_SYNC`, a mode without
//! `O_CREAT`, unknown bits, a size it does not take, a tail that is not
//! zero) is left as it is, and refused as without eatmydata.
//!
//! The time between the rewrite and the kernel's copy of the structure is
//! a window only for the program's own threads, which can write there too:
//! what the kernel then opens is what the program could have asked for
//! itself. Only a structure in a private mapping of the caller's is
//! rewritten: one in a shared mapping (of a file, or memory shared with
//! another process) is left as it is, since the write would reach the
//! file or the other process. So is one the supervisor cannot write
//! (read-only memory, a bad address): the kernel answers as it would
//! without eatmydata, and opens with the flags. The program sees its
//! structure without those flags after the call.
//!
//! `open` and `openat` keep their flags in a register, which only the
//! kernel can change: they are not sent here, and run as asked. An
//! io_uring `OPENAT2` entry is not rewritten here either: it becomes an
//! `OPENAT` entry where it can (`sqe.rs`), and the program's struct stays
//! as it was.

use super::call::{Answer, Call};
use super::maps;
use crate::durability::open::{Open, OpenHow, kept_flags};
use crate::durability::sqe::how_of;

/// The caller's `open_how` of `size` bytes at `address`, as the kernel
/// would read it (`None`: it would refuse it, or it cannot be read).
pub fn read_how(call: &Call, address: u64, size: u64) -> Option<OpenHow> {
    let mut bytes = vec![0u8; usize::try_from(size).ok().filter(|&n| n <= 4096)?];
    call.caller.read(address, &mut bytes).ok()?;
    how_of(&bytes, size)
}

/// openat2(2): the flags rewritten where they can be, then the call runs.
/// `ready` says whether the call is still waiting, checked before writing.
pub fn answer(call: &Call, dropped: u32, ready: &dyn Fn() -> bool) -> Answer {
    let [_dirfd, _path, address, size, ..] = call.args;
    let Some(how) = read_how(call, address, size) else {
        return Answer::Continue;
    };
    let flags = kept_flags(Open::How(how), dropped as i32);
    if flags != how.flags && in_private_memory(call, address) && ready() {
        let _ = call.caller.write(address, &flags.to_ne_bytes());
    }
    Answer::Continue
}

/// Whether `open_how.flags` at `address` lies in a private mapping.
fn in_private_memory(call: &Call, address: u64) -> bool {
    let maps = std::fs::read_to_string(call.caller.proc_path("maps"));
    maps.is_ok_and(|maps| maps::private(&maps, address, 8))
}
