//! The objects loaded after this library, searched as `dlsym(RTLD_NEXT)`
//! searches them: one walk with `dl_iterate_phdr(3)`, in load order, from
//! the object after ours, each object's dynamic symbol table read in place
//! (`crates/dynsym`, where the reading is tested and fuzzed).
//!
//! Why not `dlsym`: before glibc 2.34 it lives in libdl, which the library
//! would have to load into every process, and each call takes the loader's
//! lock and searches every object once per name. One walk answers all the
//! names a hook may pass its call on to, and needs only libc.
//!
//! What is searched is what RTLD_NEXT searches for a preloaded library: the
//! objects after it in the loader's list -- the preloads after ours, then
//! the program's libraries -- but not the vDSO, which no scope holds.
//! Objects a program loads later with `dlopen` are searched too, where
//! glibc searches only those loaded `RTLD_GLOBAL`: a name found there
//! would otherwise fail its call.

use core::ffi::{CStr, c_int, c_void};
use core::ptr;

use eatmydata_dynsym::{Memory, Symbol, Tables};

use crate::errno;

/// Loadable segments of one object kept at most (real ones have four).
const MAX_SEGMENTS: usize = 16;

/// The readable loaded segments of one object: the only memory read.
struct Segments {
    /// (start, end) addresses.
    ranges: [(u64, u64); MAX_SEGMENTS],
    count: usize,
}

impl Segments {
    fn holds(&self, address: u64, len: u64) -> bool {
        let Some(end) = address.checked_add(len) else {
            return false;
        };
        let ranges = self.ranges.get(..self.count).unwrap_or_default();
        ranges
            .iter()
            .any(|&(start, stop)| start <= address && end <= stop)
    }
}

impl Memory for Segments {
    fn bytes(&self, address: u64, len: u64) -> Option<&[u8]> {
        if !self.holds(address, len) {
            return None;
        }
        // SAFETY: the range lies in a readable PT_LOAD segment of an object
        // the loader reports as loaded, mapped whole, and kept mapped while
        // dl_iterate_phdr runs (it holds off dlclose).
        Some(unsafe { core::slice::from_raw_parts(address as usize as *const u8, len as usize) })
    }
}

/// One walk's state, passed through dl_iterate_phdr.
struct Walk<'a> {
    /// An address in this library, and the vDSO's, to tell them apart.
    ours: u64,
    vdso: u64,
    past_ours: bool,
    /// The name looked for (none when only the count is wanted).
    name: Option<&'a CStr>,
    found: Option<Symbol>,
    /// The loader's count of objects ever loaded (`dlpi_adds`).
    adds: Option<u64>,
}

/// An object's readable segments and its dynamic section's address.
fn layout(info: &libc::dl_phdr_info) -> (Segments, Option<u64>) {
    let mut segments = Segments {
        ranges: [(0, 0); MAX_SEGMENTS],
        count: 0,
    };
    let mut dynamic = None;
    if info.dlpi_phdr.is_null() {
        return (segments, dynamic);
    }
    // SAFETY: the loader's program headers of this object, phnum of them.
    let headers = unsafe { core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
    let base = info.dlpi_addr;
    for header in headers {
        let start = base.wrapping_add(header.p_vaddr);
        match header.p_type {
            libc::PT_LOAD if header.p_flags & libc::PF_R != 0 => {
                if let Some(range) = segments.ranges.get_mut(segments.count) {
                    *range = (start, start.saturating_add(header.p_memsz));
                    segments.count += 1;
                }
            }
            libc::PT_DYNAMIC => dynamic = Some(start),
            _ => {}
        }
    }
    (segments, dynamic)
}

/// dl_iterate_phdr's callback: one object, in load order.
///
/// # Safety
/// `info` is the loader's, `size` its size, `data` a `Walk`.
unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, size: usize, data: *mut c_void) -> c_int {
    // SAFETY: `find` and `loaded_count` pass their own Walk.
    let walk = unsafe { &mut *data.cast::<Walk>() };
    // SAFETY: the loader passes its description of a loaded object.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return 0;
    };
    if walk.adds.is_none() && size >= core::mem::offset_of!(libc::dl_phdr_info, dlpi_subs) {
        walk.adds = Some(info.dlpi_adds);
    }
    let Some(name) = walk.name else {
        return 1;
    };
    let (segments, dynamic) = layout(info);
    if !walk.past_ours {
        walk.past_ours = segments.holds(walk.ours, 1);
        return 0;
    }
    if walk.vdso != 0 && segments.holds(walk.vdso, 1) {
        return 0;
    }
    let Some(tables) = dynamic.and_then(|at| Tables::read(&segments, info.dlpi_addr, at)) else {
        return 0;
    };
    walk.found = tables.find(&segments, name.to_bytes());
    c_int::from(walk.found.is_some())
}

/// One walk over the loaded objects. errno is left as it was: getauxval
/// sets it where there is no vDSO (qemu-user), and a hook that looks a name
/// up on its way to succeeding must not change it.
fn walk(name: Option<&CStr>) -> Walk<'_> {
    let saved = errno::get();
    let mut walk = Walk {
        ours: visit as *const () as usize as u64,
        // SAFETY: getauxval has no preconditions; 0 when there is no vDSO.
        vdso: unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) },
        past_ours: false,
        name,
        found: None,
        adds: None,
    };
    // SAFETY: the callback reads only what the loader gives it and `walk`,
    // which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut walk).cast()) };
    errno::set(saved);
    walk
}

/// The first definition of `name` in the objects after this library: its
/// address (for an IFUNC, its resolver's answer), or null; and the loader's
/// count of objects loaded, as this walk saw it.
pub fn find(name: &CStr) -> (*mut c_void, Option<u64>) {
    let walk = walk(Some(name));
    let saved = errno::get();
    let found = walk.found.map_or(ptr::null_mut(), address_of);
    // An IFUNC resolver is someone else's code: errno stays ours.
    errno::set(saved);
    (found, walk.adds)
}

/// dl_iterate_phdr's callback for [`own`]: the name and the note
/// segments of the object that holds this function.
///
/// # Safety
/// `info` is the loader's; `data` an `OwnWalk`.
unsafe extern "C" fn visit_own(
    info: *mut libc::dl_phdr_info,
    _: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `own` passes its own.
    let own = unsafe { &mut *data.cast::<OwnWalk>() };
    // SAFETY: the loader passes its description of a loaded object.
    let Some(info) = (unsafe { info.as_ref() }) else {
        return 0;
    };
    let segments = layout(info).0;
    if !segments.holds(own.address, 1) || info.dlpi_phdr.is_null() {
        return 0;
    }
    own.name = info.dlpi_name;
    // SAFETY: the loader's program headers of this object, phnum of them.
    let headers = unsafe { core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
    let notes = headers
        .iter()
        .filter(|header| header.p_type == libc::PT_NOTE);
    for (slot, header) in own.notes.iter_mut().zip(notes) {
        let start = info.dlpi_addr.wrapping_add(header.p_vaddr);
        if segments.holds(start, header.p_memsz) {
            *slot = (start, header.p_memsz);
        }
    }
    1
}

/// Note segments of this library kept at most (linkers write one or two).
const MAX_NOTES: usize = 4;

/// An address of ours, and what the loader tells of the object found to
/// hold it: its name, its note segments (address, size; empty: none).
struct OwnWalk {
    address: u64,
    name: *const core::ffi::c_char,
    notes: [(u64, u64); MAX_NOTES],
}

/// This library as the loader loaded it: the name it was given (its
/// `LD_PRELOAD` entry, as written there), and its note segments (where
/// its build ID is), both kept for the life of the process.
pub struct Own {
    pub name: &'static CStr,
    pub notes: [&'static [u8]; MAX_NOTES],
}

/// This library as loaded; `None` where the loader does not list it.
pub fn own() -> Option<Own> {
    let saved = errno::get();
    let mut own = OwnWalk {
        address: visit_own as *const () as usize as u64,
        name: ptr::null(),
        notes: [(0, 0); MAX_NOTES],
    };
    // SAFETY: the callback reads only what the loader gives it and `own`,
    // which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit_own), (&raw mut own).cast()) };
    errno::set(saved);
    if own.name.is_null() {
        return None;
    }
    // SAFETY: a loaded object's name is a C string, and its segments are
    // mapped (each note lies in a readable loaded segment, `visit_own`),
    // while it is loaded, and this one is never unloaded (nodelete).
    let name = unsafe { CStr::from_ptr(own.name) };
    let notes = own.notes.map(|(start, len)| match start {
        0 => &[] as &[u8],
        // SAFETY: as above.
        _ => unsafe { core::slice::from_raw_parts(start as usize as *const u8, len as usize) },
    });
    Some(Own { name, notes })
}

/// The loader's count of objects loaded so far, when it tells.
pub fn loaded_count() -> Option<u64> {
    walk(None).adds
}

/// The function a definition stands for: its address, or for an IFUNC,
/// what its resolver answers, called as the loader calls it.
fn address_of(symbol: Symbol) -> *mut c_void {
    let address = ptr::with_exposed_provenance_mut::<c_void>(symbol.address as usize);
    if !symbol.ifunc {
        return address;
    }
    // SAFETY: an IFUNC symbol's address is its resolver, a function of
    // this prototype in every object the loader has relocated.
    unsafe { resolve_ifunc(address) }
}

/// Calls an IFUNC resolver with what glibc's loader passes on x86_64:
/// nothing (the resolver reads the CPU's features itself).
///
/// # Safety
/// `resolver` is an IFUNC resolver of a relocated object.
#[cfg(target_arch = "x86_64")]
unsafe fn resolve_ifunc(resolver: *mut c_void) -> *mut c_void {
    // SAFETY: the caller's promise: a function of no arguments.
    let resolver: unsafe extern "C" fn() -> *mut c_void = unsafe { core::mem::transmute(resolver) };
    // SAFETY: resolvers have no preconditions once their object is relocated.
    unsafe { resolver() }
}

/// Calls an IFUNC resolver with what glibc's loader passes on aarch64: the
/// hardware capabilities, flagged as followed by the argument block.
///
/// # Safety
/// `resolver` is an IFUNC resolver of a relocated object.
#[cfg(target_arch = "aarch64")]
unsafe fn resolve_ifunc(resolver: *mut c_void) -> *mut c_void {
    #[repr(C)]
    struct IfuncArg {
        size: u64,
        hwcap: u64,
        hwcap2: u64,
    }
    const IFUNC_ARG_HWCAP: u64 = 1 << 62;
    // SAFETY: getauxval has no preconditions.
    let (hwcap, hwcap2) = unsafe {
        (
            libc::getauxval(libc::AT_HWCAP),
            libc::getauxval(libc::AT_HWCAP2),
        )
    };
    let arg = IfuncArg {
        size: 24,
        hwcap,
        hwcap2,
    };
    type Resolver = unsafe extern "C" fn(u64, *const IfuncArg) -> *mut c_void;
    // SAFETY: the caller's promise: an aarch64 IFUNC resolver.
    let resolver: Resolver = unsafe { core::mem::transmute(resolver) };
    // SAFETY: resolvers have no preconditions once their object is relocated.
    unsafe { resolver(hwcap | IFUNC_ARG_HWCAP, &arg) }
}
