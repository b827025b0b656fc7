//! The one list of cases where eatmydata and the kernel disagree today.
//! Each entry says how; the commit that makes a case agree takes its entry
//! out (the harness fails on an entry that no longer differs).

/// Cases where eatmydata and the kernel disagree today, each with the
/// reason (issue 16 is the work that removes them).
#[rustfmt::skip] // a table: one case a line
pub const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    // The eating itself: the kernel opens without the flag, as asked in the
    // program's own memory (openat2), and the program can read that back.
    ("openat2::getfl2", "openat2's O_SYNC dropped in open_how: F_GETFL lacks it"),
    ("openat2::how_readback", "open_how rewritten in the program's memory: read back without O_SYNC"),
    // A Go program's fsync and fdatasync, answered 0 by the filter itself
    // (the default for Go since 0b75dec: the supervisor's round trip costs
    // a Go program a P handoff; see docs/seccomp.md).
    ("go::fsync_badfd", "fsync answered by the filter for Go: 0, the kernel EBADF"),
    ("go::fdatasync_badfd", "fdatasync answered by the filter for Go: 0, the kernel EBADF"),
    ("go::fsync_pipe", "fsync answered by the filter for Go: 0, the kernel EINVAL"),
    ("go::fdatasync_pipe", "fdatasync answered by the filter for Go: 0, the kernel EINVAL"),
    ("go::file_sync_pipe", "os.File.Sync (fsync) answered by the filter for Go: nil, the kernel EINVAL"),
    ("go::fsync_devnull", "fsync answered by the filter for Go: 0, the kernel EINVAL"),
    ("go::fsync_opath", "fsync answered by the filter for Go: 0, the kernel EBADF"),
    // Answered by the filter for other ABIs.
    ("syncerr::i386_fsync_badfd", "the filter answers other ABIs' syncs with 0"),
    ("syncerr::i386_fsync_pipe", "the filter answers other ABIs' syncs with 0"),
    // io_uring set-ups the supervisor changes or refuses.
    ("uring::sqpoll", "SQPOLL taken out of the setup flags, which the program reads back"),
    ("uring::no_mmap", "IORING_SETUP_NO_MMAP refused with EINVAL before the kernel's check"),
    ("uring::resize", "IORING_REGISTER_RESIZE_RINGS refused with EINVAL"),
    ("uring::register_ring", "IORING_REGISTER_RING_FDS refused with EINVAL, the kernel gives 1"),
];
