//! The next definition of each function the library calls on: the one
//! libc, or a library preloaded after ours, provides, as
//! `dlsym(RTLD_NEXT)` would find it, found by [`objects`](crate::objects).
//!
//! A hook can run before any constructor -- another preloaded library's
//! constructor may call `open` -- and from many threads at once, so the lazy
//! path is the real one: each cache is an atomic pointer, written with
//! what the walk found. Two threads racing store the same value, so there
//! is no lock and nothing to allocate, as in rustix's `weak.rs`.
//!
//! Nothing is looked up at start-up: a process pays only for the names it
//! calls, once each. That is safe where `dlsym` was not: dlopen holds the
//! loader's lock while a plugin's constructor runs, and a hook in another
//! thread that asked `dlsym` then waited for it forever. The walk takes
//! only the lock that guards the list of objects (glibc's
//! `dl_load_write_lock`, musl's list lock), which dlopen holds just while
//! adding an object, never while running its code; and the walk itself
//! calls nothing that could wait, so it cannot hold anyone up either.
//!
//! A name no object defines is remembered with the loader's count of loaded
//! objects: it is looked for again only once a library has been loaded
//! since (liburing, or librt before glibc 2.34, may come with `dlopen`).

use core::ffi::{CStr, c_char, c_void};
use core::marker::PhantomData;
use core::mem;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

use crate::objects;

/// Cache values up to this one are no address: they mean "absent", with
/// the count of loaded objects when it was found so, plus one; the last
/// one means a count too high to keep, which is looked for each time.
const ABSENT_MAX: usize = 4095;

/// What a cache holds for a name absent when `adds` objects were loaded.
fn absent(adds: Option<u64>) -> *mut c_void {
    let kept = adds.map_or(ABSENT_MAX, |adds| {
        usize::try_from(adds).map_or(ABSENT_MAX, |adds| adds.saturating_add(1).min(ABSENT_MAX))
    });
    ptr::without_provenance_mut(kept)
}

/// The loaded-object count an "absent" cache value was recorded at, when
/// it is one that can be trusted while the count stays the same.
fn absent_since(value: *mut c_void) -> Option<u64> {
    let value = value.addr();
    (1..ABSENT_MAX).contains(&value).then(|| value as u64 - 1)
}

/// Keeps what a walk found for one name in `cache`; returns it, or null.
fn keep(cache: &AtomicPtr<c_void>, found: *mut c_void, adds: Option<u64>) -> *mut c_void {
    if found.addr() > ABSENT_MAX {
        cache.store(found, Ordering::Release);
        found
    } else {
        cache.store(absent(adds), Ordering::Release);
        ptr::null_mut()
    }
}

/// Returns the next definition of `name`, caching it in `*cache`; null when
/// there is none, so the caller fails the call instead of crashing.
///
/// # Safety
/// `cache` must point to a pointer-sized static that only this module
/// accesses, and `name` to a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_next(
    cache: *mut *mut c_void,
    name: *const c_char,
) -> *mut c_void {
    // SAFETY: the caller gives an aligned static used only atomically here.
    let cache = unsafe { AtomicPtr::from_ptr(cache) };
    let seen = cache.load(Ordering::Acquire);
    match absent_since(seen) {
        None if seen.addr() > ABSENT_MAX => return seen,
        Some(adds) if objects::loaded_count() == Some(adds) => return ptr::null_mut(),
        _ => {}
    }
    // SAFETY: `name` is NUL-terminated, as the caller promised.
    let name = unsafe { CStr::from_ptr(name) };
    let (found, adds) = objects::find(name);
    keep(cache, found, adds)
}

/// The cached next definition of one function, of pointer type `F`: the
/// typed face of [`eatmydata_next`] for Rust callers. Any library's name
/// can be looked up (libc's, liburing's); one absent gives `None`.
pub struct Next<F> {
    name: &'static CStr,
    cache: AtomicPtr<c_void>,
    kind: PhantomData<F>,
}

impl<F: Copy> Next<F> {
    /// A cache for `name`.
    ///
    /// # Safety
    /// `F` must be an `unsafe extern "C" fn` type matching the C prototype
    /// of the function called `name`.
    pub const unsafe fn new(name: &'static CStr) -> Self {
        const { assert!(mem::size_of::<F>() == mem::size_of::<*mut c_void>()) };
        Self {
            name,
            cache: AtomicPtr::new(ptr::null_mut()),
            kind: PhantomData,
        }
    }

    /// The next definition, or `None` when no library has one.
    pub fn get(&self) -> Option<F> {
        // SAFETY: the cache is ours alone, and the name is a C string.
        let found = unsafe { eatmydata_next(self.cache.as_ptr(), self.name.as_ptr()) };
        if found.is_null() {
            return None;
        }
        // SAFETY: `new`'s contract: F is the function pointer type of the
        // symbol found, and the same size as the pointer.
        Some(unsafe { mem::transmute_copy::<*mut c_void, F>(&found) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_values_keep_the_count_and_are_never_addresses() {
        assert_eq!(absent_since(absent(Some(0))), Some(0));
        assert_eq!(absent_since(absent(Some(41))), Some(41));
        assert_eq!(absent_since(absent(Some(1 << 40))), None);
        assert_eq!(absent_since(absent(None)), None);
        assert_eq!(absent_since(ptr::null_mut()), None);
        assert!(absent(Some(u64::MAX)).addr() <= ABSENT_MAX);
        let cache = AtomicPtr::new(ptr::null_mut());
        assert!(keep(&cache, ptr::without_provenance_mut(8), Some(3)).is_null());
        assert_eq!(absent_since(cache.load(Ordering::Relaxed)), Some(3));
        let found = ptr::without_provenance_mut(0x7f00_0000_1000);
        assert_eq!(keep(&cache, found, Some(3)), found);
    }
}
