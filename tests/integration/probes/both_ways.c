/* Every durability request made one way: by its libc name, or by number
 * through syscall(2). The library must answer both the same.
 *
 * usage: both_ways name|number DIR
 * Prints one line per call, "call: result errno", for the test to compare. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int by_number;

static void show(const char *what, long result)
{
	printf("%s: %ld %s\n", what, result, result < 0 ? strerrorname_np(errno) : "");
	errno = 0;
}

/* CALL(name, args...): the libc function, or syscall(SYS_name, args...). */
#define CALL(name, ...) (by_number ? syscall(SYS_##name, __VA_ARGS__) : (long)name(__VA_ARGS__))

static long open_flags_of(long fd)
{
	return fd < 0 ? -1 : fcntl((int)fd, F_GETFL) & (O_SYNC | O_DSYNC | O_DIRECT);
}

int main(int argc, char **argv)
{
	if (argc != 3 || chdir(argv[2]) != 0)
		return 2;
	by_number = strcmp(argv[1], "number") == 0;
	long page = sysconf(_SC_PAGESIZE);

	long fd = CALL(openat, AT_FDCWD, "data", O_RDWR | O_CREAT | O_SYNC, 0600);
	show("openat O_SYNC: flags left", open_flags_of(fd));
	long other = CALL(openat, AT_FDCWD, "other", O_RDWR | O_CREAT | O_DSYNC | O_DIRECT, 0600);
	show("openat O_DSYNC|O_DIRECT: flags left", open_flags_of(other));
	long third = CALL(openat, AT_FDCWD, "third", O_RDWR | O_CREAT, 0600);
	show("fcntl F_SETFL O_DIRECT", CALL(fcntl, third, F_SETFL, O_DIRECT));
	show("fcntl F_GETFL: flags left", open_flags_of(third));

	char buf[4096];
	memset(buf, 'x', sizeof buf);
	struct iovec iov = { buf, sizeof buf };
	if (by_number)
		show("pwritev2 RWF_DSYNC", syscall(SYS_pwritev2, fd, &iov, 1, 0L, 0L, RWF_DSYNC));
	else
		show("pwritev2 RWF_DSYNC", pwritev2((int)fd, &iov, 1, 0, RWF_DSYNC));
	if (by_number)
		show("pwritev2 closed fd", syscall(SYS_pwritev2, 999, &iov, 1, 0L, 0L, RWF_SYNC));
	else
		show("pwritev2 closed fd", pwritev2(999, &iov, 1, 0, RWF_SYNC));

	show("fsync", CALL(fsync, fd));
	show("fdatasync", CALL(fdatasync, fd));
	show("syncfs", CALL(syncfs, fd));
	if (by_number)
		show("sync", syscall(SYS_sync));
	else
		sync(), show("sync", 0);
	show("sync_file_range", CALL(sync_file_range, fd, 0L, 4096L, SYNC_FILE_RANGE_WRITE));
	char *map = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	show("msync MS_SYNC", CALL(msync, map, page, MS_SYNC));

	show("fsync closed", CALL(fsync, 999));
	int null = open("/dev/null", O_WRONLY);
	show("fsync /dev/null", CALL(fsync, null));
	show("fdatasync /dev/null", CALL(fdatasync, null));
	show("sync_file_range bad flags", CALL(sync_file_range, fd, 0L, 0L, 0x80));
	show("msync unaligned", CALL(msync, map + 1, page, MS_SYNC));
	return 0;
}
