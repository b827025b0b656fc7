//! The one list of cases where eatmydata and the kernel disagree today.
//! Each entry says how; the commit that makes a case agree takes its entry
//! out (the harness fails on an entry that no longer differs).

/// Cases where eatmydata and the kernel disagree, each with how and why it
/// is a limit rather than a bug: what eating costs in answers (a flag the
/// program can read back, a Go program's fsync answered by the filter for
/// speed, a FUSE daemon's error on a flush the library dropped before it
/// could see the file), or a feature refused as a kernel without it would
/// refuse it, so that every submission still passes where the supervisor
/// can rewrite it.
#[rustfmt::skip] // a table: one case a line
pub const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    // The eating itself: the kernel opens without the flag, as asked in the
    // program's own memory (openat2), and the program can read that back;
    // nothing can restore it once the call went on.
    ("openat2::getfl2", "openat2's O_SYNC dropped in open_how: F_GETFL lacks it"),
    ("openat2::how_readback", "open_how rewritten in the program's memory: read back without O_SYNC"),
    // O_DIRECT, dropped by default with the sync flags (README: InnoDB's
    // direct writes wait for the device); --keep-direct keeps it, and
    // openat2::direct_keep_direct agrees.
    ("openat2::direct", "O_DIRECT dropped from open_how: an unaligned write the kernel refuses is made"),
    ("uring::openat_direct", "O_DIRECT dropped from an OPENAT entry: the unaligned write is made"),
    // A Go program's fsync and fdatasync, answered 0 by the filter itself
    // (since 0b75dec, for the command eatmydata runs when it is a Go
    // program: the supervisor's round trip costs a Go program a P handoff;
    // docs/seccomp.md, "Go programs: fsync answered by the filter").
    ("go::fsync_badfd", "fsync answered by the filter for Go: 0, the kernel EBADF"),
    ("go::fdatasync_badfd", "fdatasync answered by the filter for Go: 0, the kernel EBADF"),
    ("go::fsync_pipe", "fsync answered by the filter for Go: 0, the kernel EINVAL"),
    ("go::fdatasync_pipe", "fdatasync answered by the filter for Go: 0, the kernel EINVAL"),
    ("go::file_sync_pipe", "os.File.Sync (fsync) answered by the filter for Go: nil, the kernel EINVAL"),
    ("go::fsync_devnull", "fsync answered by the filter for Go: 0, the kernel EINVAL"),
    ("go::fsync_opath", "fsync answered by the filter for Go: 0, the kernel EBADF"),
    // io_uring set-ups that would let entries reach the kernel without an
    // io_uring_enter the supervisor sees, or rings it cannot map: changed
    // or refused as a kernel without the feature would (docs/seccomp.md).
    ("rings::sqpoll", "SQPOLL taken out of the setup flags, which the program reads back"),
    ("rings::no_mmap", "IORING_SETUP_NO_MMAP refused with EINVAL, as before 6.5"),
    ("rings::resize", "IORING_REGISTER_RESIZE_RINGS refused with EINVAL, as before 6.13"),
    ("rings::register_ring", "IORING_REGISTER_RING_FDS refused with EINVAL, as before 5.18"),
    // The dynamic builds, served by the library. The eating itself, as
    // above: the library opens without O_SYNC, and drops O_DIRECT unless
    // --keep-direct.
    ("openat2::dynamic::getfl", "the library opens without O_SYNC: F_GETFL lacks it"),
    ("openat2::dynamic::getfl2", "the library opens without O_SYNC: F_GETFL lacks it"),
    ("openat2::dynamic::direct", "O_DIRECT dropped by the library: the unaligned write is made"),
    ("openat2::dynamic::direct_openat", "O_DIRECT dropped by the library: the unaligned write is made"),
    ("uring::dynamic::openat_direct", "O_DIRECT dropped from the OPENAT entry: the write is made"),
    // Where the library cannot know the file system in time: an open's
    // O_SYNC is dropped before there is a file to ask (a FUSE daemon then
    // gets no fsync after each write), and msync(MS_SYNC) becomes MS_ASYNC
    // without looking up the mapping's file. Its fsync, fdatasync, syncfs
    // and sync_file_range ask the descriptor, and answer as the kernel.
    ("fuse::dynamic::fuse_shared", "library: O_SYNC dropped before the open: the daemon's EIO on its fsync is not seen"),
    ("fuse::dynamic::fuse_private", "library: O_SYNC dropped before the open: the daemon's EIO on its fsync is not seen"),
    ("fuse::dynamic::fuse_msync", "library: msync(MS_SYNC) made MS_ASYNC: 0 where the daemon says EIO"),
];

/// The listed difference of the case named `name`, if any, and whether it
/// is a `both` case (a dynamic build under `eatmydata --seccomp`): those
/// are not listed; what differs in the library's (`dynamic`) or the
/// supervisor's (static) run of the same case may differ there too.
pub fn known(name: &str) -> (Option<&'static str>, bool) {
    let find = |name: &str| {
        let found = KNOWN_DIFFERENCES.iter().find(|(listed, _)| *listed == name);
        found.map(|(_, reason)| *reason)
    };
    match name.split_once("::both::") {
        Some((probe, case)) => {
            let library = find(&format!("{probe}::dynamic::{case}"));
            (library.or_else(|| find(&format!("{probe}::{case}"))), true)
        }
        None => (find(name), false),
    }
}
