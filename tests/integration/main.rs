//! Integration tests: real processes run with and without the library, and
//! the `eatmydata` command run as a user would run it.

mod aio; // aio_fsync and Linux AIO flushes completed without reaching the disk
mod anywhere; // the static command: a root with no glibc and no /proc
mod both_ways; // each durability request answered alike by name and through syscall(2)
mod children; // what a program run by the command starts sees what it would without eatmydata
mod common; // artefacts, C probes, scratch folders, runs under strace
mod compat; // older glibc and other architectures
mod configure; // eatmydata-runtime configure: engine files edited in place, and read by the engines
mod containers; // the container recipes with podman; docker, containerd and podman with the runtime
mod corpus; // everyday programs give the same results with the library
mod debian; // our .deb packages on a Debian 12 tree, and the tools that use eatmydata
mod documentation; // the README and docs/: short, summarised, and no link to nowhere
mod durability; // nothing lost on a clean shutdown: SQLite, PostgreSQL, MariaDB
mod field; // what breaks preload libraries: constructors, threads, fork, cancellation
mod foreign; // 32-bit programs, and musl ones with a library musl cannot load
mod keep; // --keep and --only: syncs kept on the named mounts, eaten on the others
mod kubernetes; // contrib/kubernetes/ valid against the API schemas, offline; the DaemonSet runs what the tests ran
mod lookup; // next definitions found, and missing ones failing the call
mod loopfs; // file systems of a test's own on loop devices, and their flush counters
mod manpage; // eatmydata(1) and the README's options table list every option of --help
mod memcheck; // the probes under valgrind
mod musl; // one library for musl programs too: the probes built with musl-gcc
mod open; // O_SYNC, O_DSYNC, O_DIRECT and RWF_* dropped, all else intact
mod profile; // eatmydata profile: an engine's default with the sync rules, on stdout alone
mod raw_syscall; // the same through syscall(2); other numbers untouched
mod report; // eatmydata --report: what each process skipped
mod runtime; // eatmydata-runtime on OCI bundles run by runc and crun, a control beside each
mod seccomp; // programs that bypass libc: static and Go binaries
mod single_file; // the command alone writes out the library it carries, safely
mod slow_disk; // scripts/slow-disk: every flush waits the latency given, and none under eatmydata
mod startup; // a process that never execs starts with no more system calls than under the original
mod stress; // many threads and processes at once
mod symbols; // what the library exports and which glibc versions it needs
mod sync; // fsync and friends eaten, their error answers kept
mod sync_at_exit; // eatmydata --sync-at-exit: the data on the device when it returns
mod tooling; // the tests' own scripts take no folder or lock another user made in /var/tmp
mod uring; // io_uring flushes eaten in the process: liburing's submits and syscall() rings
mod wrapper; // the eatmydata command: finding, exec, exit codes, symlink mode
