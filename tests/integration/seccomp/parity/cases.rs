//! The cases, one test each: a module per probe file (the module's name is
//! the probe's), each with one setup laid out before both runs of each of
//! its cases.

use std::fs;
use std::os::unix::fs::{PermissionsExt, chown, symlink};
use std::path::Path;
use std::time::Duration;

use super::Case;

/// The case `name` of the probe whose module is `module` (its path): the
/// static build, or in the probe's `dynamic` module the dynamic one, which
/// eatmydata serves with the library alone.
fn case(module: &str, name: &'static str, setup: fn(&Path)) -> Case {
    let mut path = module.rsplit("::");
    let mut probe = path.next().expect("a module path");
    let variant = match probe {
        "dynamic" | "both" => Some(probe),
        _ => None,
    };
    if variant.is_some() {
        probe = path.next().expect("a probe's module");
    }
    let dynamic = variant.is_some();
    // A `&'static str` for the probe's name: the module paths are.
    let probe: &'static str = PROBES
        .iter()
        .find(|p| **p == probe)
        .expect("a probe listed in PROBES");
    Case {
        name: match variant {
            Some(variant) => format!("{probe}::{variant}::{name}"),
            None => format!("{probe}::{name}"),
        },
        probe,
        arg: name,
        dynamic,
        libs: if matches!(probe, "uring" | "rings" | "fuse") {
            &["-luring"]
        } else {
            &[]
        },
        // `--keep-direct` for the cases that say so; `--seccomp` for the
        // dynamic builds served by the library and the filter both.
        options: match (name.ends_with("_keep_direct"), variant == Some("both")) {
            (true, true) => &["--keep-direct", "--seccomp"],
            (true, false) => &["--keep-direct"],
            (false, true) => &["--seccomp"],
            (false, false) => &[],
        },
        setup,
        // A hang is the failure the FUSE cases look for: bounded sooner.
        deadline: Duration::from_secs(if probe == "fuse" { 10 } else { 30 }),
    }
}

const PROBES: &[&str] = &[
    "namespaces",
    "procpaths",
    "creds",
    "limits",
    "openat2",
    "syncerr",
    "fdtable",
    "writes",
    "uring",
    "rings",
    "fuse",
    "go",
];

/// One test per case of the enclosing module's probe, built static (served
/// by the supervisor); with `dynamic`, once more built dynamic (served by
/// the library) in a module `dynamic`; with `both` too, built dynamic and
/// run with `eatmydata --seccomp` in a module `both`.
macro_rules! cases {
    ($setup:expr; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            super::super::check(super::case(module_path!(), stringify!($name), $setup));
        }
    )*};
    (dynamic, $setup:expr; $($name:ident),* $(,)?) => {
        cases!($setup; $($name),*);
        /// The same cases built dynamic: the library serves them.
        mod dynamic {
            use super::*;
            $(
                #[test]
                fn $name() {
                    let case = super::super::case(module_path!(), stringify!($name), $setup);
                    super::super::super::check(case);
                }
            )*
        }
    };
    (dynamic, both, $setup:expr; $($name:ident),* $(,)?) => {
        cases!(dynamic, $setup; $($name),*);
        /// Built dynamic and run with `eatmydata --seccomp`: the library
        /// and the supervised filter both (for the probes whose calls both
        /// can answer: syncs, openat2, pwritev2, io_uring).
        mod both {
            use super::*;
            $(
                #[test]
                fn $name() {
                    let case = super::super::case(module_path!(), stringify!($name), $setup);
                    super::super::super::check(case);
                }
            )*
        }
    };
}

/// Writes `text` to `area/name`, with `mode` and owner `uid:uid`.
fn file(area: &Path, name: &str, text: &str, mode: u32, uid: u32) {
    let path = area.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("make a folder of the setup");
    }
    fs::write(&path, text).expect("write a file of the setup");
    own(&path, mode, uid);
}

/// Makes the folder `area/name`, with `mode` and owner `uid:uid`.
fn dir(area: &Path, name: &str, mode: u32, uid: u32) {
    let path = area.join(name);
    fs::create_dir_all(&path).expect("make a folder of the setup");
    own(&path, mode, uid);
}

fn own(path: &Path, mode: u32, uid: u32) {
    chown(path, Some(uid), Some(uid)).expect("chown in the setup");
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod in the setup");
}

/// Namespaces and roots: the file lands where the program's view puts it.
mod namespaces {
    use super::*;
    cases! {
        dynamic,
        |a| {
            dir(a, "t", 0o755, 0);
            dir(a, "src", 0o755, 0);
            dir(a, "root", 0o755, 0);
            dir(a, "theirs", 0o755, 1000);
            file(a, "secret", "not namespace root's\n", 0o600, 1000);
        };
        tmpfs, userns_root, userns_create, chroot_bind, chroot_slash,
    }
}

/// Paths resolved through the caller: /proc/self, /dev/fd, /dev/stdout.
mod procpaths {
    use super::*;
    cases! {
        dynamic,
        |a| dir(a, "sub", 0o755, 0);
        proc_self_fd, thread_self_fd, dev_fd, dev_stdout, proc_self_cwd, proc_self_root,
        relative,
    }
}

/// Who the program is: nobody, root without capabilities, Landlock.
mod creds {
    use super::*;
    cases! {
        dynamic,
        |a| {
            dir(a, "private", 0o700, 0);
            file(a, "private/secret", "root's secret\n", 0o644, 0);
            file(a, "suid", "original\n", 0o6777, 0);
            dir(a, "rootdir", 0o755, 0);
            file(a, "secret", "uid 1000's\n", 0o600, 1000);
            dir(a, "inside", 0o755, 0);
            file(a, "outside/f", "keep me\n", 0o644, 0);
        };
        kallsyms_nobody, proc_cwd_of_root, setuid_pwritev2, setuid_osync, nobody_create,
        root_without_caps, landlock_trunc, landlock_create,
    }
}

/// RLIMIT_FSIZE and a full descriptor table.
mod limits {
    use super::*;
    cases! {
        dynamic,
        |a| file(a, "f", "data that must stay\n", 0o644, 0);
        fsize_efbig, fsize_signal, fsize_osync, nofile_trunc, nofile_create,
    }
}

/// openat2's resolve flags, with O_SYNC in open_how.
mod openat2 {
    use super::*;
    cases! {
        dynamic, both,
        |a| {
            dir(a, "root", 0o755, 0);
            file(a, "root/target", "target\n", 0o644, 0);
            symlink("target", a.join("root/link")).expect("make a link");
        };
        in_root, in_root_dotdot, beneath_abs, beneath_dotdot, no_symlinks, no_magiclinks,
        no_xdev, bad_how, getfl, getfl2, how_readback, how_readonly, how_big_zero,
        how_big_nonzero, how_in_file, direct, direct_openat, direct_keep_direct,
        opath_sync, unknown_flag, high_flags, tmpfile_rdonly, tmpfile_creat, tmpfile_sync,
        directory_creat, mode_bad, scoped_both, cached_trunc,
    }
}

/// The kernel's answers to sync calls that flush no disk.
mod syncerr {
    use super::*;
    cases! {
        dynamic, both,
        |a| file(a, "f", &"s".repeat(16384), 0o644, 0);
        fsync_badfd, fsync_devnull, fsync_pipe, fsync_socket, fsync_eventfd, fsync_nsfs,
        fsync_pidfd, fsync_mqueue, fsync_memfd, fsync_dir, fsync_opath, fsync_proc, fsync_fifo,
        fsync_devnode, fsync_epoll, fsync_inotify, fsync_sysfs, fsync_rdonly,
        fdatasync_badfd, fdatasync_pipe, fdatasync_nsfs, syncfs_badfd, syncfs_pipe,
        sfr_badfd_badflags, sfr_badfd_badrange, sfr_pipe, sfr_fifo, sfr_file_badflags, sfr_opath,
        nodump_fsync_badfd, nodump_fsync_pipe,
        msync_unaligned, msync_unmapped, msync_badflags, msync_both, msync_good, msync_locked,
        msync_wrap, msync_highflags,
        i386_fsync_badfd, i386_fsync_pipe, i386_fsync_file, i386_fdatasync_pipe,
        i386_syncfs_badfd, i386_sfr_pipe, i386_sfr_file, i386_sfr_badrange, i386_msync_good,
        i386_msync_unaligned, i386_msync_unmapped, x32_fsync_badfd, x32_fsync_pipe, x32_fsync_file,
    }
}

/// Whose descriptor: a thread's own table, a pid namespace, the register's
/// low 32 bits.
mod fdtable {
    use super::*;
    cases! {
        dynamic,
        |a| file(a, "f", "on disk\n", 0o644, 0);
        thread_pipe, thread_unshared, pidns_pipe, pidns_badfd, highbits_pipe, highbits_file,
        sfr_highflags, negative, huge,
    }
}

/// pwritev2 with RWF_DSYNC: results and what reaches the file.
mod writes {
    use super::*;
    cases! {
        dynamic, both,
        |a| file(a, "f", "0123456789", 0o644, 0);
        good, current, append, o_append, fault_2nd, fault_1st, rdonly, unknown, too_many,
        negative, big,
    }
}

/// io_uring entries: errors and chains as the kernel's.
mod uring {
    use super::*;
    cases! {
        dynamic, both,
        |a| file(a, "f", &"\0".repeat(4096), 0o644, 0);
        good, fsync_badflags, fsync_addr, sfr_badrange, sfr_badflags, fixed_none,
        fixed_beyond, fsync_pipe, fsync_devnull, fsync_badfd, fsync_opath, chain,
        chain_broken, openat_sync, fixed_pipe, fixed_sparse, fixed_updated, fixed_direct,
        sfr_overflow, sfr_addr, fsync_bufindex, fsync_splicefd, fsync_bufselect,
        fsync_personality, openat2_in_file, openat_direct, openat2_readback, openat2_resolve,
        openat2_refused, openat_refused,
    }
}

/// io_uring set-ups: layouts, a ring shared with a child, refusals.
mod rings {
    use super::*;
    cases! {
        dynamic, both,
        |a| file(a, "f", &"\0".repeat(4096), 0o644, 0);
        sqe128, cqe32, forked, sqpoll, no_mmap, resize, register_ring, i386_setup,
    }
}

/// A FUSE daemon in the supervised tree that fsyncs while it answers.
mod fuse {
    use super::*;
    cases! {
        dynamic, both,
        |a| {
            dir(a, "fuse", 0o755, 0);
            dir(a, "src", 0o755, 0);
            dir(a, "b", 0o755, 0);
        };
        fuse_shared, fuse_private, fuse_reuse, fuse_uring, fuse_msync, fuse_frozen,
    }
}

/// A Go program's syncs (its own system calls), which the command serves
/// in seccomp mode too.
mod go {
    use super::*;
    cases! {
        |a| file(a, "f", "on disk\n", 0o644, 0);
        fsync_badfd, fsync_pipe, fsync_devnull, fsync_opath, fsync_file, fdatasync_badfd,
        fdatasync_pipe, file_sync_pipe,
    }
}
