//! The one place that writes errno. Hooks leave it untouched on success.

use core::ffi::c_int;

/// This thread's errno.
pub fn get() -> c_int {
    // SAFETY: __errno_location returns this thread's errno, always valid.
    unsafe { *libc::__errno_location() }
}

/// Sets this thread's errno.
pub fn set(code: c_int) {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = code };
}

/// Fails the current call with `code`: sets errno and returns -1.
pub fn fail(code: c_int) -> c_int {
    set(code);
    -1
}

/// `eatmydata_missing`: what a hook returns when libc has no next definition
/// of the function it stands in for (an older glibc, say): ENOSYS.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_missing() -> c_int {
    fail(libc::ENOSYS)
}

/// ENOSYS, for a next definition that libc lacks.
pub fn missing() -> c_int {
    fail(libc::ENOSYS)
}
