//! A `posix_spawn` child that goes without the library gets the plain
//! seccomp filter through a trampoline: this library's own file, run by
//! the loader.
//!
//! `posix_spawn(3)` makes its child and executes the program inside libc
//! (a `CLONE_VM|CLONE_VFORK` clone, then libc's internal `execve`), where
//! no hook runs, so the filter `exec.rs` installs before an exec would go
//! on the parent. Where the command asked for the filter and the filter
//! can be given, the hook ([`route`]) has the real `posix_spawn` execute
//! `LOADER LIBRARY MARK CODE PROGRAM ARGV...` instead, with the caller's
//! file actions and attributes (libc applies them in the child before
//! that exec, as before the program's), and as its environment ENV, the
//! environment the decision made, each entry behind [`HIDDEN`]: no loader
//! reads a variable whose name starts so, so that nothing of the
//! program's (`LD_PRELOAD`, `LD_DEBUG`, `GLIBC_TUNABLES`) acts on the
//! trampoline, and the environment stays where the kernel shows it to the
//! process's own user alone (`/proc/PID/environ`), never in its arguments
//! (`/proc/PID/cmdline`, which every local user reads). The hidden
//! entries are written in a mapping of their own for the call
//! ([`eatmydata_spawn_env`]), unmapped once `posix_spawn` returns (the
//! child has executed by then, or failed). The loader, named as the
//! running program names it (`PT_INTERP`), maps the library as its
//! program without needing an execute bit, and jumps to its entry point,
//! [`eatmydata_spawned`]: it installs the plain filter (`seccomp.rs`),
//! says so under `-v`, takes each entry from behind [`HIDDEN`] and
//! executes PROGRAM with ARGV and ENV. The pid `posix_spawn` returns,
//! argv\[0\], `/proc/PID/comm` (set from PROGRAM's file name by that
//! exec) and the exit status are the program's.
//!
//! The hook checks first that PROGRAM can be executed (a regular file,
//! `faccessat2` `X_OK` by the effective ids: `image::executable`), so
//! that a missing or non-executable program still fails `posix_spawn`
//! with libc's errno: it is then not routed. What changes between that check and the trampoline's exec (the file
//! removed or replaced, a relative name under a `chdir` file action)
//! fails in the child instead: it exits with 127, as a shell's child does
//! for a program it cannot execute.

use core::ffi::{CStr, c_char, c_int, c_long};

use crate::durability::exec::Why;
use crate::kernel::raw;
use crate::{errno, image, seccomp};

#[cfg(not(test))]
mod trampoline;

/// The trampoline's second argument: what sets its arguments apart from
/// anyone's run of `ld.so libeatmydata.so`.
const MARK: &CStr = c"--eatmydata-spawned";
/// Arguments before ARGV: LIBRARY MARK CODE PROGRAM.
const BEFORE: usize = 4;
/// The byte before each environment entry the trampoline is given: no
/// loader's variable (glibc's `LD_*`, `GLIBC_TUNABLES` and its `MALLOC_*`
/// aliases, musl's `LD_PRELOAD` and `LD_LIBRARY_PATH`) starts with it.
const HIDDEN: u8 = b'~';
/// Room for a program found in `PATH`.
pub const PATH_ROOM: usize = 4096;

/// `struct emd_spawn_route` of `c/shim.h`: what the hook fills when the
/// call is routed through the trampoline; `loader` stays null otherwise.
#[repr(C)]
pub struct Route {
    loader: *const c_char,
    library: *const c_char,
    program: *const c_char,
    /// [`Why::code`], then `v` when `-v` asks each such program said, `-`
    /// when not; NUL-terminated.
    code: [u8; 4],
    /// The program `posix_spawnp` found in `PATH`.
    pub path: [u8; PATH_ROOM],
}

// `c/shim.h` checks the same.
const _: () = assert!(core::mem::offset_of!(Route, path) == 28 && size_of::<Route>() == 4128);

/// Routes the spawn of `program` (as the caller named it; `found`, the
/// file `PATH` gave for it, when searched), which goes without the
/// library for `why` and gets the filter, said when `tell`, through the
/// trampoline: `Err` with what the child gets when it cannot be, and is
/// not. `library` is this library's own name, the file it is in this
/// root; `entries`, how many arguments the program gets.
pub fn route(
    route: &mut Route,
    (library, entries): (&CStr, usize),
    program: &CStr,
    found: bool,
    (why, tell): (Why, bool),
) -> Result<(), &'static str> {
    if let Some(inherited) = seccomp::inherited() {
        // The child inherits this thread's filter, or there is none to have.
        return Err(inherited.words());
    }
    if entries > MAX_ENTRIES {
        return Err(TOO_MANY);
    }
    let loader = loader().ok_or(NO_LOADER)?;
    if !library.to_bytes().starts_with(b"/") || why == Why::Elsewhere {
        return Err(NO_LIBRARY);
    }
    let program = match found {
        true => CStr::from_bytes_until_nul(&route.path).map_err(|_| NO_LIBRARY)?,
        false => program,
    };
    if image::executable(program).is_err() {
        return Err(FAILS);
    }
    route.code = [why.code(), if tell { b'v' } else { b'-' }, 0, 0];
    route.loader = loader.as_ptr();
    route.library = library.as_ptr();
    route.program = program.as_ptr();
    Ok(())
}

/// The most arguments routed: the hook lays their pointers out on its
/// stack frame (64 KiB of them).
const MAX_ENTRIES: usize = 8192;

/// What the child gets with more.
const TOO_MANY: &str = "posix_spawn starts it in a child the library cannot reach before its exec, and its arguments are too many to hand to the trampoline: unfiltered, its syncs reach the disk (eatmydata --seccomp covers it)";
/// What the child gets when the running program names no loader.
const NO_LOADER: &str = "posix_spawn starts it in a child the library cannot reach before its exec, and this program names no loader to run the trampoline with: unfiltered, its syncs reach the disk (eatmydata --seccomp covers it)";
/// What it gets when the library cannot be named to the loader.
const NO_LIBRARY: &str = "posix_spawn starts it in a child the library cannot reach before its exec, and the library's path cannot be given to the trampoline: unfiltered, its syncs reach the disk (eatmydata --seccomp covers it)";
/// What it gets when it cannot be executed: `posix_spawn` fails.
const FAILS: &str = "it cannot be executed: posix_spawn fails as without eatmydata";

/// The library is built for 64-bit machines (x86_64, aarch64) alone.
type ProgramHeader = libc::Elf64_Phdr;

/// The loader the running program names (`PT_INTERP`, found through
/// the auxiliary vector), when it is an absolute path.
fn loader() -> Option<&'static CStr> {
    // SAFETY: getauxval has no preconditions; 0 when the entry is absent.
    let (at, count) = unsafe {
        (
            libc::getauxval(libc::AT_PHDR),
            libc::getauxval(libc::AT_PHNUM),
        )
    };
    if at == 0 || at % align_of::<ProgramHeader>() as u64 != 0 {
        return None;
    }
    // SAFETY: the kernel's (or the loader's) description of the program's
    // headers, mapped for the life of the process.
    let headers =
        unsafe { core::slice::from_raw_parts(at as usize as *const ProgramHeader, count as usize) };
    let of_type = |kind| headers.iter().find(|header| header.p_type == kind);
    let base = at.checked_sub(of_type(libc::PT_PHDR)?.p_vaddr)?;
    let interp = of_type(libc::PT_INTERP)?;
    let start = base.checked_add(interp.p_vaddr)?;
    // SAFETY: PT_INTERP lies in the program's first loaded segment, mapped
    // for the life of the process; p_filesz counts its NUL.
    let bytes = unsafe {
        core::slice::from_raw_parts(start as usize as *const u8, interp.p_filesz as usize)
    };
    let name = CStr::from_bytes_until_nul(bytes).ok()?;
    name.to_bytes().starts_with(b"/").then_some(name)
}

/// `eatmydata_spawn_slots`: how many pointers the trampoline's arguments
/// take for `argv`, the final null included.
///
/// # Safety
/// `argv` is a NULL-terminated array of C strings, or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawn_slots(argv: *const *const c_char) -> usize {
    // SAFETY: the caller's, as documented.
    let argc = unsafe { entries(argv) }.len();
    // The loader's, those before ARGV, ARGV, the null.
    1 + BEFORE + argc + 1
}

/// `eatmydata_spawn_args`: the trampoline's arguments, the loader's
/// first, into `slots` (`size` of them, as [`eatmydata_spawn_slots`]
/// counted), from `route` ([`route`] filled it) and `argv`.
///
/// # Safety
/// `route` is one [`route`] filled; `argv` as for
/// [`eatmydata_spawn_slots`]; `slots` writable for `size` pointers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawn_args(
    route: *const Route,
    argv: *const *const c_char,
    slots: *mut *const c_char,
    size: usize,
) {
    // SAFETY: the caller's, as documented.
    let (route, argv, slots) = unsafe {
        (
            &*route,
            entries(argv),
            core::slice::from_raw_parts_mut(slots, size),
        )
    };
    let fixed = [
        route.loader,
        route.library,
        MARK.as_ptr(),
        route.code.as_ptr().cast(),
        route.program,
    ];
    let laid = fixed.iter().chain(argv).chain([&core::ptr::null()]);
    for (slot, &entry) in slots.iter_mut().zip(laid) {
        *slot = entry;
    }
    if let Some(last) = slots.last_mut() {
        *last = core::ptr::null();
    }
}

/// `struct emd_spawn_env` of `c/shim.h`: the trampoline's environment,
/// in a mapping of its own.
#[repr(C)]
pub struct Env {
    entries: *mut *const c_char,
    size: usize,
}

/// `eatmydata_spawn_env`: the trampoline's environment, `envp`'s entries
/// each behind [`HIDDEN`], mapped into `env`: 0, or the errno
/// `posix_spawn` fails with (`ENOMEM`). [`eatmydata_spawn_unmap`] takes
/// it away.
///
/// # Safety
/// `envp` as `argv` for [`eatmydata_spawn_slots`]; `env` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawn_env(envp: *const *const c_char, env: *mut Env) -> c_int {
    // SAFETY: the caller's, as documented.
    let (envp, env) = unsafe { (entries(envp), &mut *env) };
    // SAFETY: each entry a C string (the caller's).
    let bytes = |&entry: &*const c_char| unsafe { CStr::from_ptr(entry) }.to_bytes();
    let pointers = (envp.len() + 1) * size_of::<*const c_char>();
    let size = envp.iter().try_fold(pointers, |size, entry| {
        size.checked_add(bytes(entry).len() + 2)
    });
    let Some(size) = size else {
        return libc::ENOMEM;
    };
    let saved = errno::get();
    let prot = (libc::PROT_READ | libc::PROT_WRITE).into();
    let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS).into();
    let at = raw(libc::SYS_mmap, [0, size as c_long, prot, flags, -1, 0]);
    errno::set(saved);
    if at == -1 {
        return libc::ENOMEM;
    }
    // SAFETY: a fresh mapping of `size` bytes, page-aligned: the pointers
    // first, then the strings, apart.
    let (slots, strings) = unsafe {
        let base = at as usize as *mut u8;
        (
            core::slice::from_raw_parts_mut(base.cast::<*const c_char>(), envp.len() + 1),
            core::slice::from_raw_parts_mut(base.add(pointers), size - pointers),
        )
    };
    hide(envp.iter().map(bytes), slots, strings);
    *env = Env {
        entries: slots.as_mut_ptr(),
        size,
    };
    0
}

/// Writes each of `entries` behind [`HIDDEN`], NUL-terminated, into
/// `strings`, and a pointer to each into `slots`, then the null; as many
/// as fit.
fn hide<'a>(
    entries: impl Iterator<Item = &'a [u8]>,
    slots: &mut [*const c_char],
    strings: &mut [u8],
) {
    let mut rest = strings;
    let mut slots = slots.iter_mut();
    for entry in entries {
        let Some((string, after)) =
            core::mem::take(&mut rest).split_at_mut_checked(entry.len() + 2)
        else {
            break;
        };
        let Some(slot) = slots.next() else {
            break;
        };
        let (first, tail) = string.split_at_mut(1);
        first[0] = HIDDEN;
        let (body, end) = tail.split_at_mut(entry.len());
        body.copy_from_slice(entry);
        end.fill(0);
        *slot = string.as_ptr().cast();
        rest = after;
    }
    if let Some(last) = slots.next() {
        *last = core::ptr::null();
    }
}

/// `eatmydata_spawn_unmap`: takes away what [`eatmydata_spawn_env`] mapped.
///
/// # Safety
/// `env` is one [`eatmydata_spawn_env`] filled, not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawn_unmap(env: *const Env) {
    // SAFETY: the caller's, as documented.
    let env = unsafe { &*env };
    let saved = errno::get();
    raw(
        libc::SYS_munmap,
        [env.entries as c_long, env.size as c_long, 0, 0, 0, 0],
    );
    errno::set(saved);
}

/// A NULL-terminated array as a slice, empty for none.
///
/// # Safety
/// `array` is a NULL-terminated array, or null; it outlives the slice.
unsafe fn entries<'a>(array: *const *const c_char) -> &'a [*const c_char] {
    if array.is_null() {
        return &[];
    }
    let mut count = 0;
    // SAFETY: up to and not past the terminator.
    while !unsafe { *array.add(count) }.is_null() {
        count += 1;
    }
    // SAFETY: `count` entries before the terminator.
    unsafe { core::slice::from_raw_parts(array, count) }
}

/// What the trampoline's arguments (without the loader's, which it
/// removes) say: why the program goes without the library, and whether
/// that is said.
#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    why: Why,
    tell: bool,
}

/// Reads the trampoline's `argc` arguments, `arg(n)` the `n`th's bytes:
/// `None` unless they are what [`eatmydata_spawn_args`] lays out.
fn parse<'a>(argc: usize, arg: impl Fn(usize) -> Option<&'a [u8]>) -> Option<Parsed> {
    if argc < BEFORE || arg(1)? != MARK.to_bytes() {
        return None;
    }
    let (why, tell) = match arg(2)? {
        &[why, tell] => (Why::of_code(why)?, tell == b'v'),
        _ => return None,
    };
    Some(Parsed { why, tell })
}

/// An environment entry as [`hide`] wrote it, out from behind
/// [`HIDDEN`]; `None` for one that is not.
fn unhidden(entry: &[u8]) -> Option<&[u8]> {
    entry.strip_prefix(&[HIDDEN])
}

#[cfg(test)]
#[path = "spawn/tests.rs"]
mod tests;
