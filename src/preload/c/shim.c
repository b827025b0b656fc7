/*
 * The hooks of libeatmydata.so, one per libc name it interposes.
 *
 * They are C for two reasons Rust cannot serve on stable: the C-variadic
 * prototypes (open, fcntl, syscall), and cancellation. A pthread_cancel()
 * acts by unwinding the cancelled thread's stack, and that unwind must never
 * cross a Rust frame, so every call that can be a cancellation point -- the
 * real libc function, or pthread_testcancel() standing in for a call we
 * skip -- is made from C.
 *
 * Each hook is the hidden eatmydata_hook_NAME; the exported NAME is a Rust
 * trampoline that jumps here with every register as the caller left it
 * (src/preload/hooks.rs), so that rustc's own export list is the only one
 * and any linker builds the library. MATCHES checks each hook against the
 * prototype of the libc function it replaces.
 *
 * Rust decides (is the library eating? which flags remain?) and C calls.
 */
#include "shim.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/uio.h>

/*
 * The library needs nothing but libc, so that loading it costs a process
 * one object to map. pthread_testcancel moved into libc only in glibc 2.34
 * (before, libpthread had it), so it is a weak reference: a program on an
 * older glibc that did not load libpthread has no thread to cancel. It is
 * bound to its oldest version, which every glibc from 2.17 has; a plain
 * build would bind pthread_testcancel@GLIBC_2.34.
 */
#if defined(__x86_64__)
__asm__(".symver pthread_testcancel, pthread_testcancel@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver pthread_testcancel, pthread_testcancel@GLIBC_2.17");
#endif
#pragma weak pthread_testcancel
/*
 * The fork handler is registered with glibc's __register_atfork, in
 * libc.so.6 since 2.3.2 (glibc's pthread_atfork is, in its headers, a
 * static stub that calls it, and the exported one lived in libpthread
 * before 2.34). musl has no such name, so the reference is weak, and
 * there musl's pthread_atfork is found by the library's own lookup: no
 * reference to it for glibc's loader to bind in every process.
 */
extern int __register_atfork(void (*prepare)(void), void (*parent)(void),
			     void (*child)(void), void *dso) __attribute__((weak));
static void *next_pthread_atfork;

/* A cancellation point standing in for a call that is skipped. */
#define TESTCANCEL()                                                          \
	do {                                                                  \
		if (pthread_testcancel)                                       \
			pthread_testcancel();                                 \
	} while (0)

/* Fortified entry points: declared by <fcntl.h> only under _FORTIFY_SOURCE. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/*
 * An unoptimised build of Rust's core refers to the unwinder's personality
 * routine even under panic = "abort", where nothing ever unwinds. Defining it
 * here, hidden, keeps that reference from reaching the host's symbol table;
 * weak, so that std's own wins where it is linked (the unit tests).
 */
__attribute__((weak)) void rust_eh_personality(void);
__attribute__((weak)) void rust_eh_personality(void)
{
}

/* Every libc function a hook may pass its call on to, one cache each. */
#define EMD_NEXT_NAMES(X)                                                     \
	X(fsync) X(fdatasync) X(sync) X(syncfs) X(sync_file_range) X(msync)   \
	X(open) X(open64) X(openat) X(openat64) X(__open_2) X(__open64_2)     \
	X(__openat_2) X(__openat64_2) X(pwritev2) X(pwritev64v2) X(fcntl)     \
	X(fcntl64)

#define EMD_CACHE(name) static void *next_##name;
EMD_NEXT_NAMES(EMD_CACHE)

/* An open of `path` under `dirfd` with its flags decided (`given`, for the
 * arguments to name); when they were changed, the descriptor is told to
 * Rust, for --sync-at-exit: its writes, too, reach the disk only at the
 * flush. An open that asks for no sync flag stays a tail call. */
#define PASS_OPEN(name, dirfd, path, flags, ...)                              \
	do {                                                                  \
		__typeof__(&name) next_fn = NEXT(name);                      \
		if (!next_fn)                                                 \
			return eatmydata_missing();                           \
		int given = eatmydata_kept_open_flags(dirfd, path, flags);    \
		if (__builtin_expect(given == (flags), 1))                    \
			return next_fn(__VA_ARGS__);                          \
		return opened(next_fn(__VA_ARGS__));                          \
	} while (0)

/* The descriptor an open returned with its flags changed, told to Rust. */
static int opened(int fd)
{
	if (fd >= 0)
		eatmydata_opened(fd);
	return fd;
}

/* Whether open(2) reads a mode: the rule of glibc's __OPEN_NEEDS_MODE. */
#define NEEDS_MODE(flags)                                                     \
	(((flags) & O_CREAT) != 0 || ((flags) & O_TMPFILE) == O_TMPFILE)

#define READ_MODE(flags, last, mode)                                          \
	do {                                                                  \
		if (NEEDS_MODE(flags)) {                                      \
			va_list ap;                                           \
			va_start(ap, last);                                   \
			mode = (mode_t)va_arg(ap, int);                       \
			va_end(ap);                                           \
		}                                                             \
	} while (0)

__attribute__((constructor)) static void warm_up(void)
{
	eatmydata_warm_up();
	/* A forked child reports what it skipped, not its parent's counts. */
	if (__register_atfork) {
		/* No DSO handle: the library is never unloaded (build.rs). */
		__register_atfork(NULL, NULL, eatmydata_forget_counts, NULL);
	} else {
		__typeof__(&pthread_atfork) atfork = NEXT(pthread_atfork);
		if (atfork)
			atfork(NULL, NULL, eatmydata_forget_counts);
	}
}

/* For eatmydata --report: this process's line, as it exits. */
__attribute__((destructor)) static void report(void)
{
	eatmydata_report_at_exit();
}

/* fsync(2), fdatasync(2): no flush; a bad descriptor still fails. */
int HOOK(fsync)(int fd)
{
	TESTCANCEL();
	if (eatmydata_eating())
		return eatmydata_fsync_status(fd);
	PASS(fsync, fd);
}
MATCHES(fsync);

int HOOK(fdatasync)(int fd)
{
	TESTCANCEL();
	if (eatmydata_eating())
		return eatmydata_fdatasync_status(fd);
	PASS(fdatasync, fd);
}
MATCHES(fdatasync);

/* sync(2): nothing to do. */
void HOOK(sync)(void)
{
	if (eatmydata_eating()) {
		eatmydata_sync();
		return;
	}
	__typeof__(&sync) next_fn = NEXT(sync);
	if (next_fn)
		next_fn();
}
MATCHES(sync);

/* syncfs(2): no flush; a bad descriptor still fails. Not a cancellation point. */
int HOOK(syncfs)(int fd)
{
	if (eatmydata_eating())
		return eatmydata_syncfs_status(fd);
	PASS(syncfs, fd);
}
MATCHES(syncfs);

/* sync_file_range(2): no writeback; the kernel's argument checks are kept. */
int HOOK(sync_file_range)(int fd, off64_t offset, off64_t nbytes, unsigned int flags)
{
	TESTCANCEL();
	if (eatmydata_eating())
		return eatmydata_sync_file_range_status(fd, offset, nbytes, flags);
	PASS(sync_file_range, fd, offset, nbytes, flags);
}
MATCHES(sync_file_range);

/* msync(2): MS_SYNC becomes MS_ASYNC, which keeps the kernel's checks. */
int HOOK(msync)(void *addr, size_t length, int flags)
{
	PASS(msync, addr, length, eatmydata_msync_flags(addr, length, flags));
}
MATCHES(msync);

/* open(2) and friends: O_SYNC and O_DSYNC (and by default O_DIRECT) are
 * dropped; the path, the other flags and the mode pass through. */
int HOOK(open)(const char *path, int flags, ...)
{
	mode_t mode = 0;
	READ_MODE(flags, flags, mode);
	PASS_OPEN(open, AT_FDCWD, path, flags, path, given, mode);
}
MATCHES(open);

int HOOK(open64)(const char *path, int flags, ...)
{
	mode_t mode = 0;
	READ_MODE(flags, flags, mode);
	PASS_OPEN(open64, AT_FDCWD, path, flags, path, given, mode);
}
MATCHES(open64);

int HOOK(openat)(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	READ_MODE(flags, flags, mode);
	PASS_OPEN(openat, dirfd, path, flags, dirfd, path, given, mode);
}
MATCHES(openat);

int HOOK(openat64)(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	READ_MODE(flags, flags, mode);
	PASS_OPEN(openat64, dirfd, path, flags, dirfd, path, given, mode);
}
MATCHES(openat64);

/* The _FORTIFY_SOURCE entry points take no mode: glibc's own __open_2
 * aborts when the flags need one, and it still does, since it is called. */
int HOOK(__open_2)(const char *path, int flags)
{
	PASS_OPEN(__open_2, AT_FDCWD, path, flags, path, given);
}
MATCHES(__open_2);

int HOOK(__open64_2)(const char *path, int flags)
{
	PASS_OPEN(__open64_2, AT_FDCWD, path, flags, path, given);
}
MATCHES(__open64_2);

int HOOK(__openat_2)(int dirfd, const char *path, int flags)
{
	PASS_OPEN(__openat_2, dirfd, path, flags, dirfd, path, given);
}
MATCHES(__openat_2);

int HOOK(__openat64_2)(int dirfd, const char *path, int flags)
{
	PASS_OPEN(__openat64_2, dirfd, path, flags, dirfd, path, given);
}
MATCHES(__openat64_2);

/* pwritev2(2): RWF_SYNC and RWF_DSYNC are dropped; the write is done. */
ssize_t HOOK(pwritev2)(int fd, const struct iovec *iov, int iovcnt, off_t offset,
		 int flags)
{
	PASS(pwritev2, fd, iov, iovcnt, offset, eatmydata_rwf_flags(fd, flags));
}
MATCHES(pwritev2);

ssize_t HOOK(pwritev64v2)(int fd, const struct iovec *iov, int iovcnt,
		    off64_t offset, int flags)
{
	PASS(pwritev64v2, fd, iov, iovcnt, offset, eatmydata_rwf_flags(fd, flags));
}
MATCHES(pwritev64v2);

/* fcntl(2): F_SETFL drops O_DIRECT unless it is kept; every other command
 * passes its argument, int or pointer, through as glibc reads it. */
#define FCNTL_ARG(fd, cmd, arg)                                                   \
	do {                                                                  \
		va_list ap;                                                   \
		va_start(ap, cmd);                                            \
		arg = va_arg(ap, void *);                                     \
		va_end(ap);                                                   \
		if (cmd == F_SETFL)                                           \
			arg = (void *)(long)eatmydata_setfl_flags(fd, (int)(long)arg); \
	} while (0)

int HOOK(fcntl)(int fd, int cmd, ...)
{
	void *arg;
	FCNTL_ARG(fd, cmd, arg);
	PASS(fcntl, fd, cmd, arg);
}
MATCHES(fcntl);

int HOOK(fcntl64)(int fd, int cmd, ...)
{
	void *arg;
	FCNTL_ARG(fd, cmd, arg);
	PASS(fcntl64, fd, cmd, arg);
}
MATCHES(fcntl64);

/* syscall(2): the sync numbers are answered as their hooks answer; every
 * other number passes through with all six arguments, as glibc reads them. */
long HOOK(syscall)(long number, ...)
{
	long args[6];
	va_list ap;
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		args[i] = va_arg(ap, long);
	va_end(ap);
	return eatmydata_syscall(number, args);
}
MATCHES(syscall);
