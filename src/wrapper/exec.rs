//! Executing the command in place of this process: no shell, no child, so
//! that its exit status, its death by a signal and its process id are those
//! the caller sees. Signal dispositions and the signal mask pass on as they
//! came to us, as `env(1)` passes them.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;

use crate::error::Error;

fn c_string(bytes: &OsStr) -> io::Result<CString> {
    CString::new(bytes.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Sets `settings` in the environment and executes `program` with `argv0`
/// and `args`. Returns only on failure.
pub fn replace_process(
    program: &Path,
    argv0: &OsStr,
    args: &[OsString],
    settings: &[(&str, OsString)],
) -> Error {
    let failed = |error| Error::CannotRun(argv0.to_owned(), error);
    for (name, value) in settings {
        // SAFETY: this program has one thread; nothing reads the environment
        // concurrently.
        unsafe { std::env::set_var(name, value) };
    }
    let path = match c_string(program.as_os_str()) {
        Ok(path) => path,
        Err(error) => return failed(error),
    };
    let argv: io::Result<Vec<CString>> = std::iter::once(argv0)
        .chain(args.iter().map(OsString::as_os_str))
        .map(c_string)
        .collect();
    let argv = match argv {
        Ok(argv) => argv,
        Err(error) => return failed(error),
    };
    let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    pointers.push(ptr::null());
    // SAFETY: `path` and every argument are C strings that outlive the call,
    // and the argument array ends with a null pointer.
    unsafe { libc::execv(path.as_ptr(), pointers.as_ptr()) };
    failed(io::Error::last_os_error())
}
