/* The sync calls and opens made through syscall(2), and other numbers that
 * must pass through with all their arguments.
 *
 * usage: raw_syscall DIR
 * Prints one line per call, for the test to compare. */
#include <errno.h>
#include <fcntl.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
/* musl-gcc sees no kernel headers: openat2(2)'s argument, as the kernel has it. */
struct open_how {
	unsigned long long flags, mode, resolve;
};
#endif
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errno_name.h"

static void show(const char *what, long result)
{
	printf("%s: %ld %s\n", what, result, result < 0 ? errno_name(errno) : "");
}

static void show_flags(const char *what, long fd)
{
	int flags = fd < 0 ? -1 : fcntl((int)fd, F_GETFL);
	printf("%s: sync=%d dsync=%d\n", what, fd >= 0 && (flags & O_SYNC) == O_SYNC,
	       fd >= 0 && (flags & O_DSYNC) != 0);
}

int main(int argc, char **argv)
{
	if (argc != 2 || chdir(argv[1]) != 0)
		return 2;
	long page = sysconf(_SC_PAGESIZE);
	long fd = syscall(SYS_openat, AT_FDCWD, "by-openat", O_RDWR | O_CREAT | O_SYNC, 0600);
	show_flags("openat", fd);
#ifdef SYS_open
	show_flags("open", syscall(SYS_open, "by-open", O_RDWR | O_CREAT | O_DSYNC, 0600));
#else
	printf("open: sync=0 dsync=0\n");
#endif
	struct open_how how = { .flags = O_RDWR | O_CREAT | O_SYNC, .mode = 0600 };
	show_flags("openat2", syscall(SYS_openat2, AT_FDCWD, "by-openat2", &how, sizeof how));

	/* Two pages, the second marked, mapped through a six-argument call whose
	 * last argument, the offset, picks the second page. */
	char buf[8192];
	memset(buf, 'a', sizeof buf);
	memcpy(buf + page, "second", 6);
	show("write", syscall(SYS_write, fd, buf, 2 * page));
	char *map = (char *)syscall(SYS_mmap, NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
	printf("mmap sixth argument: %s\n", map != MAP_FAILED && memcmp(map, "second", 6) == 0 ? "ok" : "lost");
	printf("getpid: %s\n", syscall(SYS_getpid) == getpid() ? "ok" : "wrong");

	errno = 0;
	show("fsync", syscall(SYS_fsync, fd));
	show("fdatasync", syscall(SYS_fdatasync, fd));
	show("syncfs", syscall(SYS_syncfs, fd));
	show("sync", syscall(SYS_sync));
	show("sync_file_range", syscall(SYS_sync_file_range, fd, 0L, 0L, SYNC_FILE_RANGE_WRITE));
	show("msync", syscall(SYS_msync, map, page, MS_SYNC));
	show("fsync(-1)", syscall(SYS_fsync, -1));
	show("sync_file_range(bad flags)", syscall(SYS_sync_file_range, fd, 0L, 0L, 0x80));
	show("unknown number", syscall(100000));
	/* A struct open_how the caller cannot have: the kernel's EFAULT, read
	 * where the kernel reads it, never a fault in the library. */
	void *nowhere = (void *)(unsigned long)sysconf(_SC_PAGESIZE);
	show("openat2(bad how)", syscall(SYS_openat2, AT_FDCWD, "nowhere", nowhere, (long)sizeof how));
	printf("errno after: %d\n", errno);
	return 0;
}
