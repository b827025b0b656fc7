//! A `posix_spawn` child that goes without the library gets the plain
//! seccomp filter through a trampoline: this library's own file, run by
//! the loader.
//!
//! `posix_spawn(3)` makes its child and executes the program inside libc
//! (a `CLONE_VM|CLONE_VFORK` clone, then libc's internal `execve`), where
//! no hook runs, so the filter `exec.rs` installs before an exec would go
//! on the parent. Where the command asked for the filter and the filter
//! can be given, the hook ([`route`]) has the real `posix_spawn` execute
//! `LOADER LIBRARY MARK CODE PROGRAM COUNT ARGV... SLOT ENV...` instead,
//! with the caller's file actions and attributes (libc applies them in the
//! child before that exec, as before the program's) and an empty
//! environment, so that nothing of the program's (`LD_PRELOAD`,
//! `LD_DEBUG`, `GLIBC_TUNABLES`) acts on the trampoline. The loader,
//! named as the running program names it (`PT_INTERP`), maps the library
//! as its program without needing an execute bit, and jumps to its entry
//! point, [`eatmydata_spawned`]: it installs the plain filter
//! (`seccomp.rs`), says so under `-v`, and executes PROGRAM with ARGV and
//! ENV, the environment the decision made. The pid `posix_spawn` returns,
//! argv\[0\], `/proc/PID/comm` (set from PROGRAM's file name by that exec)
//! and the exit status are the program's.
//!
//! The hook checks first that PROGRAM can be executed (`faccessat2`,
//! `X_OK`, effective ids), so that a missing or non-executable program
//! still fails `posix_spawn` with libc's errno: it is then not routed.
//! What changes between that check and the trampoline's exec (the file
//! removed or replaced, a relative name under a `chdir` file action)
//! fails in the child instead: it exits with 127, as a shell's child does
//! for a program it cannot execute.

use core::ffi::{CStr, c_char, c_long};

use crate::durability::exec::Why;
use crate::errno;
use crate::kernel::raw;
use crate::seccomp;

/// The trampoline's second argument: what sets its arguments apart from
/// anyone's run of `ld.so libeatmydata.so`.
const MARK: &CStr = c"--eatmydata-spawned";
/// The entry the trampoline overwrites with the null that ends ARGV.
const SLOT: &CStr = c"";
/// Arguments before ARGV: LIBRARY MARK CODE PROGRAM COUNT.
const BEFORE: usize = 5;
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
    /// ARGV's count, in decimal, NUL-terminated.
    count: [u8; 24],
    /// The program `posix_spawnp` found in `PATH`.
    pub path: [u8; PATH_ROOM],
}

// `c/shim.h` checks the same.
const _: () = assert!(core::mem::offset_of!(Route, path) == 52 && size_of::<Route>() == 4152);

/// Routes the spawn of `program` (as the caller named it; `found`, the
/// file `PATH` gave for it, when searched), which goes without the
/// library for `why` and gets the filter, said when `tell`, through the
/// trampoline: `Err` with what the child gets when it cannot be, and is
/// not. `library` is this library's own name, the file it is in this
/// root; `entries`, how many arguments and environment entries the
/// program gets.
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
    if !executable(program) {
        return Err(FAILS);
    }
    route.code = [why.code(), if tell { b'v' } else { b'-' }, 0, 0];
    route.loader = loader.as_ptr();
    route.library = library.as_ptr();
    route.program = program.as_ptr();
    Ok(())
}

/// The most arguments and environment entries routed: the hook lays
/// their pointers out on its stack frame (64 KiB of them).
const MAX_ENTRIES: usize = 8192;

/// What the child gets with more.
const TOO_MANY: &str = "posix_spawn starts it in a child the library cannot reach before its exec, and its arguments and environment are too many to hand to the trampoline: unfiltered, its syncs reach the disk (eatmydata --seccomp covers it)";
/// What the child gets when the running program names no loader.
const NO_LOADER: &str = "posix_spawn starts it in a child the library cannot reach before its exec, and this program names no loader to run the trampoline with: unfiltered, its syncs reach the disk (eatmydata --seccomp covers it)";
/// What it gets when the library cannot be named to the loader.
const NO_LIBRARY: &str = "posix_spawn starts it in a child the library cannot reach before its exec, and the library's path cannot be given to the trampoline: unfiltered, its syncs reach the disk (eatmydata --seccomp covers it)";
/// What it gets when it cannot be executed: `posix_spawn` fails.
const FAILS: &str = "it cannot be executed: posix_spawn fails as without eatmydata";

/// Whether `path` can be executed by this process's effective ids: a
/// regular file with an execute bit, on a mount that allows it.
fn executable(path: &CStr) -> bool {
    let ask = |number: c_long, flags: c_long| {
        let args = [
            libc::AT_FDCWD.into(),
            path.as_ptr() as c_long,
            libc::X_OK.into(),
            flags,
            0,
            0,
        ];
        raw(number, args)
    };
    let saved = errno::get();
    let answer = match ask(libc::SYS_faccessat2, libc::AT_EACCESS.into()) {
        -1 if errno::get() == libc::ENOSYS => ask(libc::SYS_faccessat, 0),
        answer => answer,
    };
    errno::set(saved);
    answer == 0
}

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
/// take for `argv` and `envp`, the final null included.
///
/// # Safety
/// `argv` and `envp` are NULL-terminated arrays of C strings, or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawn_slots(
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> usize {
    // SAFETY: the caller's, as documented.
    let (argc, envc) = unsafe { (counted(argv), counted(envp)) };
    // The loader's, those before ARGV, ARGV, SLOT, ENV, the null.
    1 + BEFORE + argc + 1 + envc + 1
}

/// `eatmydata_spawn_args`: the trampoline's arguments, the loader's
/// first, into `slots` (`size` of them, as [`eatmydata_spawn_slots`]
/// counted), from `route` ([`route`] filled it), `argv` and `envp`.
///
/// # Safety
/// `route` is one [`route`] filled; `argv` and `envp` as for
/// [`eatmydata_spawn_slots`]; `slots` writable for `size` pointers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawn_args(
    route: *mut Route,
    argv: *const *const c_char,
    envp: *const *const c_char,
    slots: *mut *const c_char,
    size: usize,
) {
    // SAFETY: the caller's, as documented.
    let (route, argv, envp, slots) = unsafe {
        (
            &mut *route,
            entries(argv),
            entries(envp),
            core::slice::from_raw_parts_mut(slots, size),
        )
    };
    let count = decimal(argv.len(), &mut route.count);
    let fixed = [
        route.loader,
        route.library,
        MARK.as_ptr(),
        route.code.as_ptr().cast(),
        route.program,
        count,
    ];
    let (slot, end) = (SLOT.as_ptr(), core::ptr::null());
    let laid = fixed
        .iter()
        .chain(argv)
        .chain([&slot])
        .chain(envp)
        .chain([&end]);
    for (slot, &entry) in slots.iter_mut().zip(laid) {
        *slot = entry;
    }
    if let Some(last) = slots.last_mut() {
        *last = core::ptr::null();
    }
}

/// `n` in decimal into `room`, NUL-terminated: a pointer to it.
fn decimal(n: usize, room: &mut [u8; 24]) -> *const c_char {
    *room = [0; 24];
    let mut left = n;
    let mut start = room.len() - 1;
    for (at, digit) in room.iter_mut().enumerate().rev().skip(1) {
        *digit = b'0' + (left % 10) as u8;
        left /= 10;
        start = at;
        if left == 0 {
            break;
        }
    }
    room.as_ptr().wrapping_add(start).cast()
}

/// How many entries a NULL-terminated array has, 0 for none.
///
/// # Safety
/// `array` is a NULL-terminated array, or null.
unsafe fn counted(array: *const *const c_char) -> usize {
    // SAFETY: the caller's.
    unsafe { entries(array) }.len()
}

/// A NULL-terminated array as a slice, empty for none.
///
/// # Safety
/// As for [`counted`]; the array outlives the slice.
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
/// removes) say: the program, why it goes without the library, whether
/// that is said, and where ARGV's count of entries starts and ends.
#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    why: Why,
    tell: bool,
    count: usize,
}

/// Reads the trampoline's `argc` arguments, `arg(n)` the `n`th's bytes:
/// `None` unless they are what [`eatmydata_spawn_args`] lays out.
fn parse<'a>(argc: usize, arg: impl Fn(usize) -> Option<&'a [u8]>) -> Option<Parsed> {
    if arg(1)? != MARK.to_bytes() {
        return None;
    }
    let (why, tell) = match arg(2)? {
        &[why, tell] => (Why::of_code(why)?, tell == b'v'),
        _ => return None,
    };
    let count = arg(4)?;
    if count.is_empty() || count.len() > 20 || !count.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let count = count.iter().try_fold(0usize, |n, &d| {
        n.checked_mul(10)?.checked_add(usize::from(d - b'0'))
    })?;
    let slot = BEFORE.checked_add(count)?;
    (slot < argc && arg(slot)? == SLOT.to_bytes()).then_some(Parsed { why, tell, count })
}

/// The library's entry point, where the loader jumps when it runs the
/// library as a program (`ld.so libeatmydata.so ...`): the stack holds
/// `argc`, the arguments and the environment, as the kernel laid them.
///
/// # Safety
/// Only the loader jumps here, once, at the start of a process.
#[cfg(all(not(test), target_arch = "x86_64"))]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawned() -> ! {
    core::arch::naked_asm!(
        "endbr64",
        "xor ebp, ebp",
        "mov rdi, rsp",
        "and rsp, -16",
        "call {run}",
        "ud2",
        run = sym run,
    )
}

/// As above, for aarch64.
///
/// # Safety
/// Only the loader jumps here, once, at the start of a process.
#[cfg(all(not(test), target_arch = "aarch64"))]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawned() -> ! {
    core::arch::naked_asm!(
        "bti jc",
        "mov x29, xzr",
        "mov x30, xzr",
        "mov x0, sp",
        "bl {run}",
        "brk #0",
        run = sym run,
    )
}

/// The trampoline: installs the plain filter on this process and executes
/// the program, or exits with 127.
///
/// # Safety
/// `stack` is the process's initial stack: `argc`, then `argc` argument
/// pointers, a null, the environment.
#[cfg(not(test))]
unsafe extern "C" fn run(stack: *mut usize) -> ! {
    // SAFETY: the initial stack's layout, as documented.
    let args = unsafe {
        let argc = *stack;
        core::slice::from_raw_parts_mut(stack.add(1).cast::<*const c_char>(), argc)
    };
    // SAFETY: the kernel's strings, NUL-terminated.
    let arg = |n: usize| Some(unsafe { CStr::from_ptr(*args.get(n)?) }.to_bytes());
    let Some(parsed) = parse(args.len(), arg) else {
        say(&[b"eatmydata: libeatmydata.so is a library for LD_PRELOAD, not a program\n"]);
        exit(127)
    };
    let slot = BEFORE + parsed.count;
    let Some(&program) = args.get(3) else {
        exit(127)
    };
    let Some(end) = args.get_mut(slot) else {
        exit(127)
    };
    // ARGV ends where SLOT was; ENV, the environment the decision made,
    // at the null the kernel put after the arguments.
    *end = core::ptr::null();
    // SAFETY: `parse` saw the program's entry, a C string as above.
    let program = unsafe { CStr::from_ptr(program) };
    let filter = seccomp::plain(|| crate::image::raises(libc::AT_FDCWD, program, 0));
    if parsed.tell {
        seccomp::tell(program, parsed.why, filter.words());
    }
    let call = [
        program.as_ptr() as c_long,
        args.as_ptr().wrapping_add(BEFORE) as c_long,
        args.as_ptr().wrapping_add(slot + 1) as c_long,
        0,
        0,
        0,
    ];
    raw(libc::SYS_execve, call);
    say(&[
        b"eatmydata: ",
        program.to_bytes(),
        b": cannot be executed in posix_spawn's child after all\n",
    ]);
    exit(127)
}

/// Writes `pieces` to stderr in one `writev(2)`.
#[cfg(not(test))]
fn say(pieces: &[&[u8]]) {
    let mut vector = [libc::iovec {
        iov_base: core::ptr::null_mut(),
        iov_len: 0,
    }; 4];
    for (slot, piece) in vector.iter_mut().zip(pieces) {
        slot.iov_base = piece.as_ptr().cast_mut().cast();
        slot.iov_len = piece.len();
    }
    let count = pieces.len().min(vector.len()) as c_long;
    raw(
        libc::SYS_writev,
        [2, vector.as_ptr() as c_long, count, 0, 0, 0],
    );
}

/// Ends the process with `status`.
#[cfg(not(test))]
fn exit(status: core::ffi::c_int) -> ! {
    loop {
        raw(libc::SYS_exit_group, [status.into(), 0, 0, 0, 0, 0]);
    }
}

#[cfg(test)]
#[path = "spawn/tests.rs"]
mod tests;
