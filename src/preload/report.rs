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
use crate::protocol;

/// The kinds of skip, in the order of the report line's fields
/// (`protocol::REPORT_FIELDS`).
#[derive(Clone, Copy)]
pub enum Skip {
    /// fsync and fdatasync.
    Fsync,
    /// sync and syncfs.
    Sync,
    SyncFileRange,
    /// msync with MS_SYNC.
    Msync,
    /// An open that asked for O_SYNC or O_DSYNC.
    SyncOpen,
    /// A write that asked for RWF_SYNC or RWF_DSYNC.
    SyncWrite,
    /// An open or F_SETFL that asked for O_DIRECT.
    Direct,
}

static COUNTS: [AtomicU64; 7] = [const { AtomicU64::new(0) }; 7];

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

/// A line being built on the stack; what does not fit is left out.
pub struct Line {
    bytes: [u8; 384],
    len: usize,
}

impl Line {
    pub const fn new() -> Line {
        Line {
            bytes: [0; 384],
            len: 0,
        }
    }

    pub fn push(&mut self, text: &[u8]) {
        for &byte in text {
            if let Some(slot) = self.bytes.get_mut(self.len) {
                *slot = byte;
                self.len += 1;
            }
        }
    }

    pub fn push_number(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        loop {
            start -= 1;
            if let Some(digit) = digits.get_mut(start) {
                *digit = b'0' + (n % 10) as u8;
            }
            n /= 10;
            if n == 0 || start == 0 {
                break;
            }
        }
        self.push(digits.get(start..).unwrap_or_default());
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

/// The report line for a process: `pid=… name=… fsync=… …`.
pub fn line(pid: u64, name: &[u8], counts: &[u64; 7]) -> Line {
    let mut line = Line::new();
    line.push(b"pid=");
    line.push_number(pid);
    line.push(b" name=");
    for &byte in name.iter().take(64) {
        let shown = if byte.is_ascii_graphic() { byte } else { b'?' };
        line.push(&[shown]);
    }
    for (field, count) in protocol::REPORT_FIELDS.iter().zip(counts) {
        line.push(b" ");
        line.push(field.as_bytes());
        line.push(b"=");
        line.push_number(*count);
    }
    line.push(b"\n");
    line
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
    let counts = COUNTS.each_ref().map(|c| c.load(Ordering::Relaxed));
    // SAFETY: glibc sets the name before any constructor and never frees it.
    let name = unsafe { program_invocation_short_name };
    let name = if name.is_null() {
        &b"?"[..]
    } else {
        // SAFETY: a NUL-terminated string, as above.
        unsafe { core::ffi::CStr::from_ptr(name) }.to_bytes()
    };
    let pid = raw(libc::SYS_getpid, [0; 6]);
    append_own(path, line(pid as u64, name, &counts).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_process_and_each_count() {
        let line = line(4242, b"sqlite3", &[12004, 0, 1, 2, 3, 4, 5]);
        assert_eq!(
            line.as_bytes(),
            b"pid=4242 name=sqlite3 fsync=12004 sync=0 range=1 msync=2 open=3 write=4 direct=5\n"
        );
    }

    #[test]
    fn odd_names_are_made_safe_and_long_lines_cut() {
        let line = line(u64::MAX, b"a b\nc", &[0; 7]);
        assert!(
            line.as_bytes()
                .starts_with(b"pid=18446744073709551615 name=a?b?c fsync=0")
        );
        let long = [b'x'; 300];
        let line = super::line(u64::MAX, &long, &[u64::MAX; 7]);
        assert!(line.as_bytes().ends_with(b" direct=18446744073709551615\n"));
    }
}
