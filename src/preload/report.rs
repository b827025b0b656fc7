//! What the library skipped in this process, for `eatmydata --report`.
//!
//! Counting is on only when `EATMYDATA_REPORT` names a file: then each skip
//! adds one to an atomic counter, and at exit the process appends one line
//! to that file, which the command sums up once its child has finished. The
//! line is written with a single `write(2)` on an `O_APPEND` descriptor, so
//! lines from processes ending at the same time do not interleave. The file
//! must exist already: a stray variable never makes the library create one.
//!
//! A process that ends by `_exit`, `exec` or a signal writes nothing.

use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicU64, Ordering};

use crate::kernel::{append_own, raw};
use crate::policy;
use crate::protocol::{self, Counts, SKIPS};

/// The kinds of skip, one counter each (defined with the line's format).
pub use crate::protocol::Skip;

static COUNTS: [AtomicU64; SKIPS.len()] = [const { AtomicU64::new(0) }; SKIPS.len()];

/// Counts one skip, when reporting.
pub fn count(skip: Skip) {
    if policy::reporting()
        && let Some(counter) = COUNTS.get(skip as usize)
    {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// `after`, the flags a call goes on with, counting a skip of `kind` when
/// they differ from `before`, what the program asked for.
pub fn counted(kind: Skip, before: c_int, after: c_int) -> c_int {
    if after != before {
        count(kind);
    }
    after
}

unsafe extern "C" {
    /// glibc's short name of the program, as `errx` prints it.
    static program_invocation_short_name: *const c_char;
}

/// `eatmydata_forget_counts`: run in a forked child (`pthread_atfork`), so
/// that its line counts only its own skips, not those its parent made.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_forget_counts() {
    for counter in &COUNTS {
        counter.store(0, Ordering::Relaxed);
    }
}

/// `eatmydata_report_at_exit`: appends this process's line to the report.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_report_at_exit() {
    if !policy::reporting() {
        return;
    }
    let Some(path) = policy::variable(protocol::REPORT) else {
        return;
    };
    let counts: Counts = COUNTS.each_ref().map(|c| c.load(Ordering::Relaxed));
    // SAFETY: glibc sets the name before any constructor and never frees it.
    let name = unsafe { program_invocation_short_name };
    let name = if name.is_null() {
        &b"?"[..]
    } else {
        // SAFETY: a NUL-terminated string, as above.
        unsafe { core::ffi::CStr::from_ptr(name) }.to_bytes()
    };
    let pid = raw(libc::SYS_getpid, [0; 6]);
    let mut line = [0; protocol::REPORT_LINE_MAX];
    let len = protocol::write_report(&mut line, pid as u64, name, &counts);
    append_own(path, line.get(..len).unwrap_or_default());
}
