/*
 * Another preloaded library that defines some of the names libeatmydata.so
 * hooks, as a second interposer would; placed before or after it in
 * LD_PRELOAD. Its functions are only looked up, never called. With
 * -DWITH_IFUNC (glibc only), fdatasync is an IFUNC, whose resolver's
 * answer is the definition.
 */
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

int fsync(int fd)
{
	return fd < 0 ? -1 : 0;
}

ssize_t pwritev2(int fd, const struct iovec *iov, int count, off_t offset, int flags)
{
	(void)iov;
	(void)offset;
	(void)flags;
	return fd < 0 ? -1 : count;
}

/* A name no libc has, for the lookup after a dlopen. */
int lookup_other_marker(void);
int lookup_other_marker(void)
{
	return 42;
}

#ifdef WITH_IFUNC
static int fdatasync_picked(int fd)
{
	return fd < 0 ? -1 : 0;
}

static int (*pick_fdatasync(void))(int)
{
	return fdatasync_picked;
}

int fdatasync(int fd) __attribute__((ifunc("pick_fdatasync")));
#else
int fdatasync(int fd)
{
	return fd < 0 ? -1 : 0;
}
#endif
