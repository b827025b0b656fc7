//! libc's own `syncfs` and `sync`, found in libc itself rather than by
//! name: this process may run under an outer `eatmydata`, whose library,
//! preloaded, would come first and eat them.

use std::ffi::{CStr, c_int, c_void};
use std::io;

/// libc's definition of `name`, or null.
fn find(name: &CStr) -> *mut c_void {
    // SAFETY: RTLD_NOLOAD only looks up the libc already loaded.
    let libc = unsafe { libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if libc.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a handle from dlopen and a C string.
    unsafe { libc::dlsym(libc, name.as_ptr()) }
}

pub fn syncfs(fd: c_int) -> io::Result<()> {
    let found = find(c"syncfs");
    let result = if found.is_null() {
        // SAFETY: syncfs on a descriptor we own.
        unsafe { libc::syncfs(fd) }
    } else {
        // SAFETY: libc's syncfs, whose prototype this is.
        let syncfs: unsafe extern "C" fn(c_int) -> c_int = unsafe { std::mem::transmute(found) };
        // SAFETY: as above.
        unsafe { syncfs(fd) }
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

pub fn sync() {
    let found = find(c"sync");
    if found.is_null() {
        // SAFETY: sync(2) has no preconditions.
        unsafe { libc::sync() };
    } else {
        // SAFETY: libc's sync, whose prototype this is.
        let sync: unsafe extern "C" fn() = unsafe { std::mem::transmute(found) };
        // SAFETY: as above.
        unsafe { sync() };
    }
}
