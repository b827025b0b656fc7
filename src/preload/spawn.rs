//! A `posix_spawn` child that goes without the library gets the plain
//! seccomp filter before its exec.
//!
//! `posix_spawn(3)` makes its child and executes the program inside libc
//! (a `CLONE_VM|CLONE_VFORK` clone of the calling thread, then libc's
//! internal `execve`), where no hook runs, and a filter the caller's
//! thread took before the call would stay on it for good. So where the
//! command asked for the filter, the hook ([`route`]) makes the child
//! itself in a glibc program, as glibc does (`c/spawn_here.c`), and the
//! child takes the filter first ([`eatmydata_spawn_filter`]: the rules of
//! an exec, `seccomp.rs`); elsewhere it has the real `posix_spawn` called
//! on a thread of this process made for the call, which takes the filter
//! first and which the child inherits it from (`c/spawn_thread.c`).
//! Either way the child is the program's, as the pid `posix_spawn`
//! returns says, and its argv, environment and `/proc/PID/comm` are the
//! program's; no process image runs between the spawn and the program.

use core::ffi::{CStr, c_char};

use crate::durability::exec::Why;
use crate::seccomp;

/// Room for a program found in `PATH`.
pub const PATH_ROOM: usize = 4096;

/// `struct emd_spawn_route` of `c/shim.h`: what the hook fills when the
/// child must get the filter; `program` stays null otherwise.
#[repr(C)]
pub struct Route {
    /// The program, as the filter's set-id check reads it.
    program: *const c_char,
    /// [`Why::code`], then `v` when `-v` asks each such program said, `-`
    /// when not; NUL-terminated.
    code: [u8; 4],
    /// The program `posix_spawnp` found in `PATH`.
    pub path: [u8; PATH_ROOM],
}

// `c/shim.h` checks the same.
const _: () = assert!(core::mem::offset_of!(Route, path) == 12 && size_of::<Route>() == 4112);

/// Routes the spawn of `program` (as the caller named it; `found`, the
/// file `PATH` gave for it, when searched), which goes without the
/// library for `why` and gets the filter, said when `tell`: `Err` with
/// what the child gets when the hook need not give it the filter.
pub fn route(
    route: &mut Route,
    program: &CStr,
    found: bool,
    (why, tell): (Why, bool),
) -> Result<(), &'static str> {
    if let Some(inherited) = seccomp::inherited() {
        // The child inherits this thread's filter, or there is none to have.
        return Err(inherited.words());
    }
    let program = match found {
        true => CStr::from_bytes_until_nul(&route.path).map_err(|_| TOO_LONG)?,
        false => program,
    };
    route.code = [why.code(), if tell { b'v' } else { b'-' }, 0, 0];
    route.program = program.as_ptr();
    Ok(())
}

/// What a child gets when the path `PATH` gave does not fit the route.
const TOO_LONG: &str = "posix_spawn starts it in a child the library cannot reach before its exec, and its path is too long to check: unfiltered, its syncs reach the disk (eatmydata --seccomp covers it)";

/// What a child gets when no stack can be mapped for it (or for the
/// thread made for the call), or the thread cannot be made (no task left
/// under `RLIMIT_NPROC` or the cgroup's `pids.max`).
const UNFILTERED: &str = "posix_spawn starts it in a child the library cannot reach before its exec, and no stack could be mapped, or no thread made, to give the child the filter: unfiltered, its syncs reach the disk (eatmydata --seccomp covers it)";

/// What a filled route says: the program, why it goes without the
/// library, whether that is said.
fn read(route: &Route) -> Option<(&CStr, Why, bool)> {
    if route.program.is_null() {
        return None;
    }
    // SAFETY: set by `route` from a C string that outlives the call (the
    // caller's, or the route's own `path`).
    let program = unsafe { CStr::from_ptr(route.program) };
    let why = Why::of_code(route.code[0])?;
    Some((program, why, route.code[1] == b'v'))
}

/// `eatmydata_spawn_filter`: in the child made by the hook, or on the
/// thread made for the spawn, installs the plain filter the program will
/// run under, and says so under `-v`. In the child, which shares the
/// caller's memory, it leaves errno to the caller (`c/spawn_here.c`).
///
/// # Safety
/// `route` is one [`route`] filled, still alive.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawn_filter(route: *const Route) {
    // SAFETY: the caller's, as documented.
    let Some((program, why, tell)) = read(unsafe { &*route }) else {
        return;
    };
    let filter = seccomp::plain(|| crate::image::raises(libc::AT_FDCWD, program, 0));
    if tell {
        seccomp::tell(program, why, filter.words());
    }
}

/// `eatmydata_spawn_unfiltered`: neither the child nor the thread could be
/// made, and the spawn goes on without the filter; said under `-v`.
///
/// # Safety
/// As for [`eatmydata_spawn_filter`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawn_unfiltered(route: *const Route) {
    // SAFETY: the caller's, as documented.
    if let Some((program, why, true)) = read(unsafe { &*route }) {
        seccomp::tell(program, why, UNFILTERED);
    }
}

#[cfg(test)]
#[path = "spawn/tests.rs"]
mod tests;
