/* Writes COUNT single bytes to each FILE in turn, each write followed by
 * fsync (MODE fsync), through an O_DSYNC descriptor (MODE dsync), through
 * pwritev2 with RWF_DSYNC (MODE rwf), or with no sync at all (MODE none,
 * the control that writes the same); MODE sync calls sync() after each
 * write. One concern: the same syncs on several file systems, whose
 * flushes each file system's disk counts.
 *
 * usage: keep_mounts MODE COUNT FILE... */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static int one(const char *mode, int fd)
{
	if (strcmp(mode, "rwf") == 0) {
		struct iovec byte = { .iov_base = "x", .iov_len = 1 };
		return pwritev2(fd, &byte, 1, -1, RWF_DSYNC) == 1 ? 0 : -1;
	}
	if (write(fd, "x", 1) != 1)
		return -1;
	if (strcmp(mode, "fsync") == 0)
		return fsync(fd);
	if (strcmp(mode, "sync") == 0)
		sync();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: keep_mounts MODE COUNT FILE...\n");
		return 2;
	}
	const char *mode = argv[1];
	int count = atoi(argv[2]), failed = 0;
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_APPEND;
	if (strcmp(mode, "dsync") == 0)
		flags |= O_DSYNC;
	for (int f = 3; f < argc; f++) {
		int fd = open(argv[f], flags, 0644);
		if (fd < 0) {
			perror(argv[f]);
			return 1;
		}
		for (int i = 0; i < count; i++)
			failed += one(mode, fd) != 0;
		close(fd);
	}
	printf("%s: %d failed\n", mode, failed);
	return failed != 0;
}
