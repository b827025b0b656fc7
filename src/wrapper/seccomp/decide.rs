//! Whether the command runs with the seccomp filter as well as the library,
//! and what the user is told about it: never nothing when the library alone
//! cannot work.
//!
//! A statically linked or Go program turns seccomp mode on by itself (said
//! once on stderr; `--no-seccomp` keeps it off): the user asked for the
//! command's syncs to be free, and refusing would only break the scripts
//! that ask. So does a dynamic program whose own code enters an io_uring
//! (fio's engine), with the library preloaded as well. A setuid or setgid command makes the loader ignore
//! `LD_PRELOAD`, and is reported with the order that works.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::elf::{Foreign, Kind};

/// What the command line said about seccomp mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Choice {
    /// Nothing: on when the command needs it.
    Auto,
    /// `--seccomp`.
    On,
    /// `--no-seccomp`.
    Off,
}

/// What will be done, and what to say first.
#[derive(Debug, PartialEq)]
pub struct Decision {
    pub seccomp: bool,
    pub notices: Vec<String>,
}

/// The identities the kernel compares on exec: ours, and the file's owner
/// and mode bits.
#[derive(Clone, Copy, Debug)]
pub struct Ids {
    pub ruid: u32,
    pub rgid: u32,
    pub euid: u32,
    pub egid: u32,
}

impl Ids {
    pub fn current() -> Ids {
        // SAFETY: these four calls cannot fail and touch no memory.
        unsafe {
            Ids {
                ruid: libc::getuid(),
                rgid: libc::getgid(),
                euid: libc::geteuid(),
                egid: libc::getegid(),
            }
        }
    }
}

/// "setuid" or "setgid" when executing a file with this `mode`, `uid` and
/// `gid` changes who we are, so that the loader runs in secure mode and
/// ignores `LD_PRELOAD`. Root running a setuid-root program changes nothing.
pub fn set_id_bit(mode: u32, uid: u32, gid: u32, ids: Ids) -> Option<&'static str> {
    let new_euid = if mode & libc::S_ISUID != 0 {
        uid
    } else {
        ids.euid
    };
    // Set-group-ID without group execute means mandatory locking, not setgid.
    let setgid = mode & libc::S_ISGID != 0 && mode & libc::S_IXGRP != 0;
    let new_egid = if setgid { gid } else { ids.egid };
    if new_euid != ids.ruid {
        Some("setuid")
    } else if new_egid != ids.rgid {
        Some("setgid")
    } else {
        None
    }
}

/// The set-id bit of the file at `program` that would matter, if any.
pub fn set_id_of(program: &Path) -> Option<&'static str> {
    let metadata = fs::metadata(program).ok()?;
    set_id_bit(
        metadata.mode(),
        metadata.uid(),
        metadata.gid(),
        Ids::current(),
    )
}

/// Decides for `command` (as typed), of `kind`, set-id or not.
pub fn decide(choice: Choice, command: &OsStr, kind: Kind, set_id: Option<&str>) -> Decision {
    let name = command.to_string_lossy();
    let mut notices = Vec::new();
    if let Some(bit) = set_id {
        notices.push(format!(
            "{name} is {bit}, so the loader ignores LD_PRELOAD in it and eatmydata \
             has no effect on it or on what it runs; put eatmydata after it, as in \
             '{name} eatmydata COMMAND...' (for example 'sudo eatmydata apt-get ...')"
        ));
        // Under no_new_privs a set-id program would lose its privileges:
        // seccomp mode only when asked for.
        return Decision {
            seccomp: choice == Choice::On,
            notices,
        };
    }
    let what = match kind {
        Kind::Static => "statically linked, which LD_PRELOAD cannot reach",
        Kind::Go => "a Go program, which LD_PRELOAD cannot reach",
        // The library is preloaded too, and serves its other calls.
        Kind::EntersUring => {
            "dynamically linked but makes its own io_uring_enter system calls, whose \
             entries LD_PRELOAD cannot reach"
        }
        // The command does not preload the library into these.
        Kind::Foreign(Foreign::Bits32) => {
            "a 32-bit program, which the (64-bit) library cannot be loaded into"
        }
        Kind::Foreign(Foreign::UnknownLoader) => {
            "run by a loader that is neither glibc's nor musl's, so the library is not \
             preloaded into it"
        }
        Kind::Foreign(Foreign::Machine) => {
            "built for another architecture, whose loader cannot load this machine's \
             library"
        }
        Kind::Foreign(Foreign::Sanitizer) => {
            "linked with a sanitizer runtime that exits unless it comes first in the \
             library list, so the library is not preloaded into it"
        }
        Kind::Foreign(Foreign::LibraryNotForMusl) => {
            "a musl program, and the library found needs a name musl does not have (an \
             older libeatmydata?), so it is not preloaded into it"
        }
        Kind::Dynamic | Kind::Unknown => {
            return Decision {
                seccomp: choice == Choice::On,
                notices,
            };
        }
    };
    if choice == Choice::Auto {
        notices.push(format!(
            "{name} is {what}; \
             using seccomp mode (--seccomp) for it, --no-seccomp turns this off"
        ));
    }
    Decision {
        seccomp: choice != Choice::Off,
        notices,
    }
}

/// Said when seccomp mode runs where `/proc` is not mounted (a bare
/// chroot or image): the supervisor decides from the program's `/proc`
/// files, so the plain filter is used instead.
pub const NO_PROC_NOTICE: &str = "/proc is not mounted here, so the seccomp supervisor \
cannot tell which descriptors reach a disk: using the plain filter (--seccomp=plain), under \
which every sync returns 0, a bad descriptor's too, and io_uring flushes reach the disk";

/// What `no_new_privs` means for the programs below, said when we set it;
/// what avoids it depends on whether we are root already (root without
/// CAP_SYS_ADMIN is what most containers run as).
pub fn no_new_privs_notice(root: bool) -> String {
    let avoid = if root {
        "root here lacks CAP_SYS_ADMIN (as in most containers); only a process \
         with it avoids this"
    } else {
        "run eatmydata as root to avoid this"
    };
    format!(
        "seccomp mode set no_new_privs, as the kernel requires without CAP_SYS_ADMIN: \
         setuid and setgid programs started under it (sudo, su, passwd) run without their \
         privileges, and may fail; {avoid}"
    )
}

#[cfg(test)]
mod tests;

/// What a kernel without seccomp user notification (before 5.0, or a
/// container that refuses it) gets instead of the supervisor.
pub const PLAIN_FILTER_NOTICE: &str = "this kernel has no seccomp user notification \
(SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0): using the plain filter, under which every \
sync returns 0, a bad descriptor's too, and io_uring flushes reach the disk";

/// Said when seccomp mode runs with syncs kept by mount (`--keep`,
/// `--only`): the supervisor decides them, as the library does, except
/// the sync flags of opens, which it cannot take off by mount
/// (docs/sync-at-exit.md says why).
pub const BY_MOUNT_NOTICE: &str = "syncs kept by mount: the seccomp supervisor decides them \
for what the library cannot reach, by the mount of each descriptor; sync() runs as made, and \
an O_SYNC or O_DSYNC open keeps its flag on every mount";

/// [`NO_PROC_NOTICE`] with syncs kept by mount: the plain filter would eat
/// the kept syncs too, so there is no filter.
pub const NO_PROC_BY_MOUNT_NOTICE: &str = "/proc is not mounted here, so the seccomp \
supervisor cannot run, and the plain filter cannot keep syncs by mount: no filter, so what \
the library cannot reach (static and Go programs) makes all its syncs";

/// [`PLAIN_FILTER_NOTICE`] with syncs kept by mount.
pub const NO_LISTENER_BY_MOUNT_NOTICE: &str = "this kernel has no seccomp user notification \
(SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0), and the plain filter cannot keep syncs by \
mount: no filter, so what the library cannot reach (static and Go programs) makes all its syncs";
