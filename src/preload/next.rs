//! The next definition of each function the library calls on, the one libc
//! (or a library preloaded after us) provides, found with `dlsym(RTLD_NEXT)`
//! on first use.
//!
//! A hook can run before any constructor -- another preloaded library's
//! constructor may call `open` -- and from many threads at once, so the lazy
//! path is the real one: each cache is an atomic pointer, written with
//! whatever dlsym answered. Two threads racing store the same value, so there
//! is no lock and nothing to allocate, as in rustix's `weak.rs`.

use core::ffi::{CStr, c_char, c_void};
use core::marker::PhantomData;
use core::mem;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

unsafe extern "C" {
    /// `dlsym(RTLD_NEXT, name)`, called from the shim so that "next" means
    /// after libeatmydata.so, and bound to the oldest dlsym version there.
    fn eatmydata_dlsym_next(name: *const c_char) -> *mut c_void;
}

/// What a cache holds once dlsym has said there is no such function, so that
/// a missing one is not looked up (and an error string allocated) each call.
const ABSENT: *mut c_void = ptr::without_provenance_mut(1);

/// Returns the next definition of `name`, caching it in `*cache`; null when
/// there is none, so the caller fails the call instead of crashing.
///
/// # Safety
/// `cache` must point to a pointer-sized static that only this function
/// accesses, and `name` to a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_next(
    cache: *mut *mut c_void,
    name: *const c_char,
) -> *mut c_void {
    // SAFETY: the caller gives an aligned static used only atomically here.
    let cache = unsafe { AtomicPtr::from_ptr(cache) };
    match cache.load(Ordering::Acquire) {
        ABSENT => ptr::null_mut(),
        found if !found.is_null() => found,
        _ => {
            // SAFETY: `name` is NUL-terminated, as the caller promised.
            let found = unsafe { eatmydata_dlsym_next(name) };
            cache.store(
                if found.is_null() { ABSENT } else { found },
                Ordering::Release,
            );
            found
        }
    }
}

/// The cached next definition of one function, of pointer type `F`.
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

    /// The next definition, or `None` when libc has none.
    pub fn get(&self) -> Option<F> {
        // SAFETY: the cache is ours alone, and the name is a C string.
        let found = unsafe { eatmydata_next(self.cache.as_ptr(), self.name.as_ptr()) };
        if found.is_null() {
            return None;
        }
        // SAFETY: `new`'s contract: F is the function pointer type of the
        // symbol dlsym found, and the same size as the pointer.
        Some(unsafe { mem::transmute_copy::<*mut c_void, F>(&found) })
    }
}
