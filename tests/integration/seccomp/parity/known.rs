//! The one list of cases where eatmydata and the kernel disagree today.
//! Each entry says how; the commit that makes a case agree takes its entry
//! out (the harness fails on an entry that no longer differs).

/// Cases where eatmydata and the kernel disagree today, each with the
/// reason (issue 16 is the work that removes them).
#[rustfmt::skip] // a table: one case a line
pub const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    // The supervisor opens O_SYNC files itself, in its own mount namespace,
    // with its own /proc/self, cwd, capabilities, limits and LSM domain.
    ("namespaces::tmpfs", "opened in the supervisor's mount namespace: on disk"),
    ("namespaces::chroot_slash", "a chroot with the host's root inode is opened on the host"),
    ("procpaths::proc_self_fd", "/proc/self is the supervisor's: ENOENT, file left empty"),
    ("procpaths::thread_self_fd", "/proc/thread-self is the supervisor's"),
    ("procpaths::dev_fd", "/dev/fd is the supervisor's"),
    ("procpaths::dev_stdout", "/dev/stdout is the supervisor's stdout"),
    ("procpaths::proc_self_cwd", "/proc/self/cwd is the supervisor's cwd"),
    ("openat2::in_root", "RESOLVE_IN_ROOT, absolute path: resolved from the supervisor's cwd"),
    ("openat2::how_big_nonzero", "the supervisor reads 24 bytes of open_how: not E2BIG"),
    ("openat2::getfl", "the descriptor the supervisor opened lacks O_SYNC"),
    ("openat2::getfl2", "the descriptor the supervisor opened lacks O_SYNC"),
    ("creds::kallsyms_nobody", "opened with the supervisor's CAP_SYSLOG: addresses shown"),
    ("creds::setuid_pwritev2", "written with the supervisor's CAP_FSETID: set-id bits kept"),
    ("creds::landlock_trunc", "the supervisor has no Landlock domain: truncated"),
    ("creds::landlock_create", "the supervisor has no Landlock domain: created"),
    ("limits::fsize_efbig", "the supervisor writes under its own RLIMIT_FSIZE"),
    ("limits::nofile_trunc", "truncated by the supervisor's open before ADDFD's EMFILE"),
    ("limits::nofile_create", "created by the supervisor's open before ADDFD's EMFILE"),
    ("writes::fault_2nd", "emulated pwritev2 reads all iovecs first: EFAULT, not short"),
    ("writes::big", "emulated pwritev2 copies at most 16 MiB: a short write"),
    ("fuse::fuse_shared", "the supervisor blocks in its own open of the FUSE file: a hang"),
    ("fuse::fuse_private", "the FUSE mount is not in the supervisor's namespace: ENOENT"),
    ("fuse::fuse_reuse", "the supervisor's fstat of a FUSE file waits on the daemon: a hang"),
    // Sync answers decided from fstat/fstatfs and maps, or not at all.
    ("syncerr::fsync_nsfs", "nsfs is not in NO_DISK: 0, not EINVAL"),
    ("syncerr::fdatasync_nsfs", "nsfs is not in NO_DISK: 0, not EINVAL"),
    ("syncerr::fsync_mqueue", "mqueue is not in NO_DISK: 0, not EINVAL"),
    ("syncerr::sfr_badfd_badflags", "flags checked before the descriptor: EINVAL, not EBADF"),
    ("syncerr::sfr_badfd_badrange", "range checked before the descriptor: EINVAL, not EBADF"),
    ("syncerr::msync_locked", "answered from maps: 0, not EBUSY (MS_INVALIDATE, mlock)"),
    ("syncerr::i386_fsync_badfd", "the filter answers other ABIs' syncs with 0"),
    ("syncerr::i386_fsync_pipe", "the filter answers other ABIs' syncs with 0"),
    // io_uring entries rewritten to NOP whatever the kernel would say.
    ("uring::fsync_badflags", "rewritten to NOP: 0, not -EINVAL"),
    ("uring::fsync_addr", "rewritten to NOP: 0, not -EINVAL"),
    ("uring::fsync_bufindex", "rewritten to NOP: 0, not -EINVAL"),
    ("uring::fsync_splicefd", "rewritten to NOP: 0, not -EINVAL"),
    ("uring::sfr_badrange", "rewritten to NOP: 0, not -EINVAL"),
    ("uring::sfr_badflags", "rewritten to NOP: 0, not -EINVAL"),
    ("uring::sfr_overflow", "rewritten to NOP: 0, not -EINVAL"),
    ("uring::sfr_addr", "rewritten to NOP: 0, not -EINVAL"),
    ("uring::fixed_none", "fixed files taken as flushing: 0, not -EBADF"),
    ("uring::fixed_beyond", "fixed files taken as flushing: 0, not -EBADF"),
    ("uring::fixed_sparse", "fixed files taken as flushing: 0, not -EBADF"),
    ("uring::fixed_pipe", "fixed files taken as flushing: 0, not -EINVAL"),
    ("uring::fixed_updated", "a slot changed in the same batch taken as flushing"),
    ("uring::fixed_direct", "a slot opened direct in the same batch taken as flushing"),
    ("uring::fsync_devnull", "a descriptor that seeks taken as flushing: 0, not -EINVAL"),
    ("uring::chain_broken", "the bad link rewritten: the chain runs, not cancelled"),
    // io_uring set-ups the supervisor changes or refuses.
    ("uring::sqpoll", "SQPOLL taken out of the setup flags, which the program reads back"),
    ("uring::no_mmap", "IORING_SETUP_NO_MMAP refused with EINVAL before the kernel's check"),
    ("uring::resize", "IORING_REGISTER_RESIZE_RINGS refused with EINVAL"),
];
