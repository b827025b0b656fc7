//! `eatmydata --sync-at-exit`: once the command and everything it started
//! have ended, flush the file systems on which the library skipped a sync.
//!
//! The command runs with `EATMYDATA_FLUSH_LIST` naming a file of ours. Each
//! process under the library appends a fixed-size record the first time it
//! skips a sync on a file system (at the skip, so that a process killed by
//! SIGKILL has told already): `dev` and the device number, or `all` when it
//! cannot say which (`sync()`, an `msync` of an unknown range); see
//! `src/protocol.rs`. Here the records are read, each device is found in
//! `/proc/self/mountinfo` and flushed with `syncfs(2)` on its mount point;
//! `sync(2)` flushes what cannot be named. Both are called through libc's
//! own definitions (`real.rs`).

use std::collections::BTreeSet;
use std::ffi::c_int;
use std::fmt::Write as _;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::error::plain;
use crate::mounts::{self, Device, Mount};
use crate::protocol::{self, Flush};
use crate::real;
use crate::scratch::PrivateFile;

/// The variable that names the list to the library.
pub const VARIABLE: &str = protocol::FLUSH_LIST;

/// The list, made empty before the command starts. Any user may append to
/// it: a process the command runs as another user (`runuser -u postgres`)
/// must be able to record its file systems, or its data would not be
/// flushed. It holds device numbers only; a stray record costs one syncfs.
pub fn create_list() -> io::Result<PrivateFile> {
    let list = PrivateFile::create("flush")?;
    std::fs::set_permissions(list.path(), std::fs::Permissions::from_mode(0o622))?;
    Ok(list)
}

/// Whether to flush at exit: the option, or the switch.
pub fn asked(option: bool) -> bool {
    option
        || std::env::var_os(protocol::SYNC_AT_EXIT)
            .is_some_and(|value| protocol::switch_on(value.as_encoded_bytes()))
}

/// After the command ended with wait status `status`: flush what `list`
/// names and say so; 125 when the flush failed and the command succeeded,
/// `None` to end as the command did.
pub fn after(status: c_int, list: &PrivateFile, seccomp: bool, verbose: bool) -> Option<c_int> {
    let wanted = match std::fs::read_to_string(list.path()) {
        Ok(text) => Wanted::parse(&text),
        // Removed meanwhile (a cleaner of the temporary folder, the command
        // itself): what it held, and what could not be recorded, is unknown.
        Err(_) => Wanted {
            lost: true,
            ..Wanted::default()
        },
    };
    let outcome = flush(&wanted, seccomp);
    crate::supervise::say(&outcome.message(&wanted, verbose));
    failed_status(status, &outcome)
}

/// What the records ask to flush.
#[derive(Debug, Default, PartialEq)]
pub struct Wanted {
    pub devices: BTreeSet<Device>,
    /// A sync was skipped where no file system could be named.
    pub everything: bool,
    /// The list was gone at the end: nothing can be named.
    pub lost: bool,
}

impl Wanted {
    /// Reads the records (`protocol::parse_flush`), one a line; other
    /// lines are ignored.
    pub fn parse(text: &str) -> Wanted {
        let mut wanted = Wanted::default();
        for record in text.lines().filter_map(protocol::parse_flush) {
            match record {
                Flush::Device(major, minor) => {
                    wanted.devices.insert((major, minor));
                }
                Flush::All => wanted.everything = true,
            }
        }
        wanted
    }

    fn is_empty(&self) -> bool {
        self.devices.is_empty() && !self.everything && !self.lost
    }
}

/// Why `sync(2)` ran, flushing every file system.
#[derive(Debug, PartialEq)]
enum SyncAll {
    /// A process skipped `sync()`, or an `msync()` whose mapping it could not tell.
    Skipped,
    /// A device without a mount point that could be opened.
    Unnamed,
    /// The seccomp filter answers calls the library never sees.
    Seccomp,
    /// The list was removed before the end.
    Lost,
}

/// What the flush did.
#[derive(Debug)]
pub struct Outcome {
    flushed: Vec<PathBuf>,
    failed: Vec<(String, io::Error)>,
    /// Set when `sync(2)` ran, with why.
    sync_all: Option<SyncAll>,
    took: Duration,
}

/// Flushes what `wanted` names; with `seccomp`, runs `sync(2)` as well.
fn flush(wanted: &Wanted, seccomp: bool) -> Outcome {
    let start = Instant::now();
    let mounts =
        mounts::parse(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    let mut outcome = Outcome {
        flushed: Vec::new(),
        failed: Vec::new(),
        sync_all: None,
        took: Duration::ZERO,
    };
    for &device in &wanted.devices {
        match flush_device(&mounts, device) {
            Some(Ok(point)) => outcome.flushed.push(point),
            Some(Err(failure)) => outcome.failed.push(failure),
            None => outcome.sync_all = Some(SyncAll::Unnamed),
        }
    }
    if wanted.everything {
        outcome.sync_all = Some(SyncAll::Skipped);
    }
    if seccomp {
        outcome.sync_all = Some(SyncAll::Seccomp);
    }
    if wanted.lost {
        outcome.sync_all = Some(SyncAll::Lost);
    }
    if outcome.sync_all.is_some() {
        real::sync();
    }
    outcome.took = start.elapsed();
    outcome
}

/// `syncfs` on the first mount point of `device` that opens: the point, or
/// the point and the error; `None` when none opens.
fn flush_device(mounts: &[Mount], device: Device) -> Option<Result<PathBuf, (String, io::Error)>> {
    let folder = mounts::points_of(mounts, device)
        .into_iter()
        .find_map(|point| {
            let file = File::open(point).ok()?;
            Some((point, file))
        });
    let (point, file) = folder?;
    Some(match real::syncfs(file.as_raw_fd()) {
        Ok(()) => Ok(point.clone()),
        Err(error) => Err((
            format!("{} ({})", point.display(), mounts::device_name(device)),
            error,
        )),
    })
}

impl Outcome {
    pub fn failed(&self) -> bool {
        !self.failed.is_empty()
    }

    /// The lines for stderr: each failure always; with `verbose`, what was
    /// flushed and how long it took.
    pub fn message(&self, wanted: &Wanted, verbose: bool) -> String {
        let mut out = String::new();
        for (place, error) in &self.failed {
            let errno = error.raw_os_error().unwrap_or(0);
            let _ = writeln!(
                out,
                "eatmydata: sync-at-exit: cannot flush {place}: {} (errno {errno})",
                plain(error)
            );
        }
        if !verbose {
            return out;
        }
        if wanted.is_empty() && self.sync_all.is_none() {
            out.push_str("eatmydata: sync-at-exit: no sync was skipped, nothing to flush\n");
            return out;
        }
        let count = self.flushed.len();
        let points: Vec<String> = self
            .flushed
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let _ = write!(
            out,
            "eatmydata: sync-at-exit: flushed {count} file system{}",
            if count == 1 { "" } else { "s" }
        );
        if count > 0 {
            let _ = write!(out, " ({})", points.join(", "));
        }
        if self.failed() {
            let _ = write!(out, ", {} failed,", self.failed.len());
        }
        let why = match self.sync_all {
            None => "",
            Some(SyncAll::Skipped) => {
                " and ran sync(2), since a sync() was skipped where no file system could be named"
            }
            Some(SyncAll::Unnamed) => {
                " and ran sync(2) for a file system without a mount point here"
            }
            Some(SyncAll::Seccomp) => {
                " and ran sync(2), since the seccomp filter's answers are not recorded"
            }
            Some(SyncAll::Lost) => {
                " and ran sync(2), since the list of file systems was removed before the end"
            }
        };
        let _ = writeln!(out, "{why} in {:.3} s", self.took.as_secs_f64());
        out
    }
}

/// The status `eatmydata` ends with: the command's, unless it succeeded and
/// the flush did not, then 125 (our own failure) so that a script notices.
fn failed_status(command: c_int, outcome: &Outcome) -> Option<c_int> {
    let succeeded = libc::WIFEXITED(command) && libc::WEXITSTATUS(command) == 0;
    (succeeded && outcome.failed()).then_some(125)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_name_devices_or_everything() {
        let wanted = Wanted::parse(
            "dev 00000007:00000003\ndev 00000007:00000003\ngarbage\ndev zz\ndev 00000103:000fffff\n",
        );
        assert_eq!(
            wanted.devices.iter().copied().collect::<Vec<_>>(),
            [(7, 3), (259, 0xfffff)]
        );
        assert!(!wanted.everything);
        assert!(Wanted::parse("all 00000000:00000000\n").everything);
        assert!(Wanted::parse("").is_empty());
    }

    #[test]
    fn a_failed_flush_fails_only_a_successful_command() {
        let failing = Outcome {
            flushed: Vec::new(),
            failed: vec![("/x (7:3)".into(), io::Error::from_raw_os_error(libc::EIO))],
            sync_all: None,
            took: Duration::ZERO,
        };
        assert_eq!(failed_status(0, &failing), Some(125));
        assert_eq!(failed_status(3 << 8, &failing), None);
        assert_eq!(failed_status(libc::SIGKILL, &failing), None);
        let message = failing.message(&Wanted::default(), false);
        assert_eq!(
            message,
            "eatmydata: sync-at-exit: cannot flush /x (7:3): Input/output error (errno 5)\n"
        );
    }

    #[test]
    fn the_verbose_line_says_what_and_how_long() {
        let outcome = Outcome {
            flushed: vec!["/".into(), "/srv".into()],
            failed: Vec::new(),
            sync_all: Some(SyncAll::Skipped),
            took: Duration::from_millis(1500),
        };
        let wanted = Wanted::parse("dev 1:0\ndev 2:0\nall 0:0\n");
        assert_eq!(
            outcome.message(&wanted, true),
            "eatmydata: sync-at-exit: flushed 2 file systems (/, /srv) and ran sync(2), since a sync() was skipped where no file system could be named in 1.500 s\n"
        );
        assert_eq!(outcome.message(&wanted, false), "");
    }
}
