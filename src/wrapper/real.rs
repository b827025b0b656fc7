//! libc's own `fsync`, `fdatasync`, `syncfs` and `sync`, found in libc itself rather
//! than by name: this process may run under an outer `eatmydata`, whose
//! library, preloaded, would come first and eat them (the flush at exit
//! would not happen, and a flush timed for the report would cost nothing).

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

/// libc's `name(fd)`, a call of the prototype `int name(int)`, or
/// `fallback` (the definition by name) when libc cannot be asked.
fn on_fd(name: &CStr, fallback: unsafe extern "C" fn(c_int) -> c_int, fd: c_int) -> io::Result<()> {
    let found = find(name);
    let call: unsafe extern "C" fn(c_int) -> c_int = if found.is_null() {
        fallback
    } else {
        // SAFETY: libc's definition of a function of this prototype.
        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int) -> c_int>(found) }
    };
    // SAFETY: a call on a descriptor the caller owns.
    if unsafe { call(fd) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

pub fn fsync(fd: c_int) -> io::Result<()> {
    on_fd(c"fsync", libc::fsync, fd)
}

pub fn fdatasync(fd: c_int) -> io::Result<()> {
    on_fd(c"fdatasync", libc::fdatasync, fd)
}

pub fn syncfs(fd: c_int) -> io::Result<()> {
    on_fd(c"syncfs", libc::syncfs, fd)
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
