//! The exec wrapper's decision (`c/exec.c` calls it before every exec
//! and `posix_spawn`): whether the library stays in the `LD_PRELOAD` of
//! the program about to run, by the rule of `durability/exec.rs`, and the
//! environment the call goes on with.
//!
//! Only an environment whose `LD_PRELOAD` names this library is looked
//! at; any other passes as it is, at the cost of a scan of its entries'
//! first bytes. Then the program's file is read (`image.rs`), the
//! library's path is checked to still be the library in this root (a
//! chroot's is another file or none), and where the rule takes it out or
//! moves it behind the user's sanitizer, a new environment is made in
//! the caller's room on its stack: the same entries, one `LD_PRELOAD`
//! rewritten or gone. What does not fit the room goes on unchanged.
//! errno is as the caller left it.

use core::ffi::{CStr, c_char, c_int, c_long};
use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicU64, Ordering};

use crate::durability::exec::{self, Context, Image, Place, Why};
use crate::durability::init::Init;
use crate::protocol::{self, ChildFilter};
use crate::spawn::{self, PATH_ROOM, Route};
use crate::{build_id, errno, image, objects, policy, seccomp};

/// The room `c/exec.c` gives on its frame (`struct emd_exec_room`).
const SLOTS: usize = 1024;
const BYTES: usize = 4096;

#[repr(C)]
pub struct Room {
    slots: [*const c_char; SLOTS],
    preload: [u8; BYTES],
}

const PRELOAD: &[u8] = b"LD_PRELOAD=";
const TRACING: &[u8] = b"LD_TRACE_LOADED_OBJECTS=";
/// What valgrind's launcher sets for its tool, which runs the program.
const VALGRIND: &[u8] = b"VALGRIND_LAUNCHER=";
/// glibc's `PATH` when there is none (`execvp(3)`).
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// What only an exec needs, learned at the first that asks, never at
/// start-up: the library's name as the loader was given it (its
/// `LD_PRELOAD` entry), and the first file seen there that carries this
/// library's build ID, `(st_dev, st_ino)`, published by `LEARNED`.
static OWN: AtomicPtr<c_char> = AtomicPtr::new(core::ptr::null_mut());
static OWN_DEV: AtomicU64 = AtomicU64::new(0);
static OWN_INO: AtomicU64 = AtomicU64::new(0);
static LEARNED: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const CLAIMED: u8 = 1;
const KNOWN: u8 = 2;

/// The library's name, learned once (threads racing store the same).
fn own_name() -> Option<&'static CStr> {
    let name = OWN.load(Ordering::Acquire);
    if !name.is_null() {
        // SAFETY: stored below from the loader's name, kept for the life
        // of the process.
        return Some(unsafe { CStr::from_ptr(name) });
    }
    let own = objects::own()?;
    OWN.store(own.name.as_ptr().cast_mut(), Ordering::Release);
    Some(own.name)
}

/// The environment for the program `path` (as `execveat(dirfd, path,
/// flags)` finds it, or searched in `PATH` when `search` and it has no
/// slash) started with `envp`: `envp` itself, or the room's slots.
/// `route`, null for an exec of this process, is given by `posix_spawn`,
/// whose child libc makes and runs without us: filled when the child must
/// have the filter, which the hook then gives it (`spawn.rs`). `argv`, the
/// program's arguments, tell what a static init runs (`durability/init.rs`).
///
/// # Safety
/// `path` is a C string or null, `argv` and `envp` NULL-terminated arrays
/// of C strings or null, `room` writable for `room_size` bytes, `route`
/// null or writable, its `program` null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_exec_env(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    search: c_int,
    route: *mut Route,
    argv: *const *const c_char,
    envp: *const *const c_char,
    room: *mut Room,
    room_size: usize,
) -> *const *const c_char {
    if path.is_null() || envp.is_null() || room_size != size_of::<Room>() {
        return envp;
    }
    let saved = errno::get();
    let Some(ours) = own_name() else {
        errno::set(saved);
        return envp;
    };
    // SAFETY: the caller's, as documented; the name is the loader's, kept
    // for the life of the process; the room is the caller's frame.
    let made = unsafe {
        let entries = Entries::of(envp);
        let args = match argv.is_null() {
            true => Entries(&[]),
            false => Entries::of(argv),
        };
        decide(
            entries,
            ours,
            (dirfd, CStr::from_ptr(path), flags),
            (search != 0, route.as_mut()),
            &args,
            &mut *room,
        )
    };
    errno::set(saved);
    made.unwrap_or(envp)
}

/// A NULL-terminated array of C strings, as a slice.
struct Entries<'a>(&'a [*const c_char]);

impl Entries<'_> {
    /// # Safety
    /// `envp` is a NULL-terminated array of C strings.
    unsafe fn of<'a>(envp: *const *const c_char) -> Entries<'a> {
        let mut count = 0;
        // SAFETY: up to and not past the terminator.
        while !unsafe { *envp.add(count) }.is_null() {
            count += 1;
        }
        // SAFETY: `count` entries before the terminator.
        Entries(unsafe { core::slice::from_raw_parts(envp, count) })
    }

    /// Each entry as bytes.
    fn bytes(&self) -> impl Iterator<Item = &[u8]> {
        // SAFETY: each is a C string (`of`).
        self.0
            .iter()
            .map(|&entry| unsafe { CStr::from_ptr(entry) }.to_bytes())
    }
}

/// The new environment, or `None` for the one given.
fn decide(
    entries: Entries,
    ours: &CStr,
    program: (c_int, &CStr, c_int),
    (search, route): (bool, Option<&mut Route>),
    args: &Entries,
    room: &mut Room,
) -> Option<*const *const c_char> {
    let mut lists = entries.bytes().enumerate().filter_map(|(at, entry)| {
        let list = entry.strip_prefix(PRELOAD)?;
        exec::entries(list)
            .any(|entry| entry == ours.to_bytes())
            .then_some((at, list))
    });
    let (at, list) = lists.next()?;
    if lists.next().is_some() {
        return None;
    }
    let valgrind = entries.bytes().any(|entry| entry.starts_with(VALGRIND));
    let mut context = Context {
        user_sanitizer: exec::has_sanitizer(list),
        tracing: entries.bytes().any(|entry| entry.starts_with(TRACING)),
        here: here(ours),
        fits_musl: true,
        launcher: exec::launches(program.1.to_bytes(), valgrind),
        // A process cannot read its root's loaders without allocating.
        root_fits: false,
    };
    let mut image = match context.tracing || !context.here {
        true => None,
        false => found(program, search, image::of),
    };
    let init = match context.launcher {
        true => None,
        false => through_inits(image, program.1, args, &entries),
    };
    if let Some((run, seen)) = init {
        image = seen;
        context.launcher = exec::launches(run.to_bytes(), valgrind);
    }
    let place = exec::place(image, context);
    if let Place::Out(why) = place {
        filter_for(&entries, program, (search, route), why);
    }
    let (head, rest) = room.preload.split_at_mut(PRELOAD.len());
    head.copy_from_slice(PRELOAD);
    let len = exec::arranged(list, ours.to_bytes(), place, rest.split_last_mut()?.1)?;
    *rest.get_mut(len)? = 0;
    let kept = entries.0.len() - usize::from(len == 0);
    if kept >= SLOTS {
        return None;
    }
    let mut slots = room.slots.iter_mut();
    for (n, &entry) in entries.0.iter().enumerate() {
        match n == at {
            true if len == 0 => continue,
            true => *slots.next()? = room.preload.as_ptr().cast(),
            false => *slots.next()? = entry,
        }
    }
    *slots.next()? = core::ptr::null();
    Some(room.slots.as_ptr())
}

/// Inits seen through, one running the next, before the last is judged
/// itself (as a static program); the runtime's limit too.
const MAX_INITS: usize = 4;

/// When the program (`image`, at `path`, started with `args`) is a static
/// init (`durability/init.rs`), what it runs and what that is, found as
/// the init's `execvp` finds it (in the `PATH` of `env`, the environment
/// it gets), inits in inits too; `None` when it is no such init or runs
/// nothing (the init itself is then judged). A dynamic program costs one
/// test.
fn through_inits<'a>(
    mut image: Option<Image>,
    mut path: &'a CStr,
    args: &Entries<'a>,
    env: &Entries,
) -> Option<(&'a CStr, Option<Image>)> {
    if image?.loader.is_some() {
        return None;
    }
    let search = env.bytes().find_map(|entry| entry.strip_prefix(b"PATH="));
    let folders = search.unwrap_or(DEFAULT_PATH);
    let mut args = args.0;
    let mut seen = None;
    for _ in 0..MAX_INITS {
        if image.is_none_or(|image| image.loader.is_some()) {
            break;
        }
        let name = path.to_bytes().rsplit(|&b| b == b'/').next()?;
        let Some(at) = Init::named(name).and_then(|init| init.program(|n| arg(args, 1 + n))) else {
            break;
        };
        args = args.get(1 + at..)?;
        // SAFETY: each is a C string (`Entries::of`).
        path = unsafe { CStr::from_ptr(*args.first()?) };
        let program = (libc::AT_FDCWD, path, 0);
        image = found_in(program, Some(folders), image::of, &mut [0; PATH_ROOM]);
        seen = Some((path, image));
    }
    seen
}

/// The `at`th of `args`, as bytes.
fn arg<'a>(args: &[*const c_char], at: usize) -> Option<&'a [u8]> {
    // SAFETY: each is a C string (`Entries::of`).
    Some(unsafe { CStr::from_ptr(*args.get(at)?) }.to_bytes())
}

/// Whether the library's name, in this root, is still the library: a
/// file that carries this library's build ID, which a chroot's other file
/// or another build put there does not. The first such file is
/// remembered, so that each later exec costs one `statx`, as the check
/// learned at start-up did; a file seen to differ is read again. A fork
/// taken while a thread learns keeps `CLAIMED`: its execs read the file
/// each time, and answer the same. Without a build ID of its own (a
/// linker that wrote none), the library takes the first file its name
/// gives as its own.
fn here(ours: &CStr) -> bool {
    if LEARNED.load(Ordering::Acquire) == KNOWN {
        let own = (
            OWN_DEV.load(Ordering::Relaxed),
            OWN_INO.load(Ordering::Relaxed),
        );
        match build_id::identity(libc::AT_FDCWD.into(), ours, 0) {
            None => return false,
            Some(now) if now == own => return true,
            Some(_) => {}
        }
    }
    let seen = match objects::own().as_ref().and_then(build_id::own) {
        Some(id) => build_id::carried(ours, id),
        None => build_id::identity(libc::AT_FDCWD.into(), ours, 0),
    };
    let Some((dev, ino)) = seen else {
        return false;
    };
    let claim = LEARNED.compare_exchange(UNKNOWN, CLAIMED, Ordering::Acquire, Ordering::Relaxed);
    if claim.is_ok() {
        OWN_DEV.store(dev, Ordering::Relaxed);
        OWN_INO.store(ino, Ordering::Relaxed);
        LEARNED.store(KNOWN, Ordering::Release);
    }
    true
}

/// What `read` tells of the program (`image::of`, `image::raises`),
/// found as the exec call finds it: `PATH` searched for a name without a
/// slash, where libc's search stops ([`in_path`]).
fn found<T>(
    program: (c_int, &CStr, c_int),
    search: bool,
    read: fn(c_int, &CStr, c_int) -> Option<T>,
) -> Option<T> {
    found_in(program, search.then_some(path()), read, &mut [0; PATH_ROOM])
}

/// The process's `PATH`, which the exec calls that search take.
fn path() -> &'static [u8] {
    policy::variable("PATH").map_or(DEFAULT_PATH, CStr::to_bytes)
}

/// The same, searched in `folders` (a `PATH`) when given, which
/// leaves the file found in `candidate`.
fn found_in<T>(
    (dirfd, path, flags): (c_int, &CStr, c_int),
    folders: Option<&[u8]>,
    read: fn(c_int, &CStr, c_int) -> Option<T>,
    candidate: &mut [u8; PATH_ROOM],
) -> Option<T> {
    let Some(folders) = folders.filter(|_| searched(path)) else {
        return read(dirfd, path, flags);
    };
    let found = in_path(path.to_bytes(), folders, candidate)?;
    read(libc::AT_FDCWD, found, 0)
}

/// Errors of `execve` on which libc's `PATH` search (glibc's `execvpe`
/// and `posix_spawnp`, musl's `execvp`) goes on to the next folder: the
/// file is missing, or not one this process may execute.
const PASSED_OVER: [c_int; 6] = [
    libc::EACCES,
    libc::ENOENT,
    libc::ESTALE,
    libc::ENOTDIR,
    libc::ENODEV,
    libc::ETIMEDOUT,
];

/// The file an exec call that searches `folders` (a `PATH`) runs for
/// `name`, written into `candidate`: the first the kernel would execute
/// for this process, where libc's search stops, whether or not this
/// process may read it (an execute-only program is the one that runs).
/// `None` where the search fails: nothing found, or an error that ends
/// libc's search too (a loop of links, a name too long).
fn in_path<'a>(
    name: &[u8],
    folders: &[u8],
    candidate: &'a mut [u8; PATH_ROOM],
) -> Option<&'a CStr> {
    walk(name, folders, candidate, image::executable).ok()
}

/// libc's search of `folders` (a `PATH`) for `name`, each file tried
/// written into `candidate` and given to `take`: the first file `take`
/// accepts; else the error the search ends with: the first of `take`'s
/// that is not [`PASSED_OVER`], `EACCES` where a file was passed over
/// for it, the last error otherwise (`ENAMETOOLONG` for a file longer
/// than `candidate`). The exec check judges files with it ([`in_path`]),
/// and the `posix_spawnp` child the hook makes executes them
/// ([`eatmydata_exec_searched`]).
fn walk<'a>(
    name: &[u8],
    folders: &[u8],
    candidate: &'a mut [u8; PATH_ROOM],
    mut take: impl FnMut(&CStr) -> Result<(), c_int>,
) -> Result<&'a CStr, c_int> {
    let (mut denied, mut last) = (false, libc::ENOENT);
    let mut stop = None;
    for folder in folders.split(|&b| b == b':') {
        let folder = if folder.is_empty() {
            b"." as &[u8]
        } else {
            folder
        };
        let end = folder.len() + 1 + name.len();
        let room = candidate.get_mut(..=end).ok_or(libc::ENAMETOOLONG)?;
        room[..folder.len()].copy_from_slice(folder);
        room[folder.len()] = b'/';
        room[folder.len() + 1..end].copy_from_slice(name);
        room[end] = 0;
        let file = CStr::from_bytes_with_nul(room).map_err(|_| libc::ENOENT)?;
        match take(file) {
            Ok(()) => {
                stop = Some(end);
                break;
            }
            Err(error) if PASSED_OVER.contains(&error) => {
                denied |= error == libc::EACCES;
                last = error;
            }
            Err(error) => return Err(error),
        }
    }
    let Some(end) = stop else {
        return Err(if denied { libc::EACCES } else { last });
    };
    CStr::from_bytes_with_nul(&candidate[..=end]).map_err(|_| libc::ENOENT)
}

/// `eatmydata_exec_searched`: in the `posix_spawnp` child the hook makes
/// (`c/spawn_here.c`), executes `name` with `argv` and `envp` as libc's
/// search does, over the `PATH` the exec check searched ([`walk`]):
/// returns only where no file ran, with the error the search ends with.
///
/// # Safety
/// `name` is a C string, `argv` and `envp` arrays as `execve` takes them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_exec_searched(
    name: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    // SAFETY: a C string, as documented.
    let name = unsafe { CStr::from_ptr(name) }.to_bytes();
    if name.is_empty() {
        return libc::ENOENT;
    }
    let exec = |file: &CStr| {
        let args = [file.as_ptr() as c_long, argv as c_long, envp as c_long];
        crate::kernel::raw(libc::SYS_execve, [args[0], args[1], args[2], 0, 0, 0]);
        Err(errno::get())
    };
    walk(name, path(), &mut [0; PATH_ROOM], exec).map_or_else(|error| error, |_| libc::ENOENT)
}

/// Whether an exec call that searches `PATH` searches it for `name`:
/// one without a slash.
fn searched(name: &CStr) -> bool {
    let name = name.to_bytes();
    !name.contains(&b'/') && !name.is_empty()
}

/// Gives the program, which goes without the library for `why`, the plain
/// seccomp filter (`seccomp.rs`) where the command asked for it in the
/// program's environment (`protocol::CHILD_FILTER`), unless that also
/// turns the library off there (`EATMYDATA_DISABLE`, durability asked
/// back); said on stderr when asked so. `ldd` runs nothing: none. A
/// `posix_spawn` child (`route` given) gets it where the hook makes it
/// (`spawn.rs`), which says so itself.
fn filter_for(
    entries: &Entries,
    program: (c_int, &CStr, c_int),
    (search, route): (bool, Option<&mut Route>),
    why: Why,
) {
    let value = |name: &str| {
        entries.bytes().find_map(|entry| {
            let rest = entry.strip_prefix(name.as_bytes())?;
            rest.strip_prefix(b"=")
        })
    };
    let asked = value(protocol::CHILD_FILTER).map_or(ChildFilter::Off, protocol::child_filter);
    let disabled = value(protocol::DISABLE).is_some_and(protocol::switch_on);
    if asked == ChildFilter::Off || disabled || why == Why::Tracing {
        return;
    }
    let tell = asked == ChildFilter::Tell;
    let outcome = match route {
        None => seccomp::plain(|| found(program, search, image::raises)).words(),
        Some(route) => {
            let searches = search && searched(program.1);
            let found =
                searches && in_path(program.1.to_bytes(), path(), &mut route.path).is_some();
            match searches && !found {
                true => NOT_FOUND,
                false => match spawn::route(route, program.1, found, (why, tell)) {
                    Ok(()) => return,
                    Err(outcome) => outcome,
                },
            }
        }
    };
    if tell {
        seccomp::tell(program.1, why, outcome);
    }
}

/// What a program `posix_spawnp` was asked for and `PATH` does not give
/// gets: nothing, its spawn fails as without eatmydata.
const NOT_FOUND: &str = "not found in PATH: posix_spawnp fails as without eatmydata";
