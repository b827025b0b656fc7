/* Writes COUNT single bytes to each FILE in turn, each write followed by
 * fsync (MODE fsync), through an O_DSYNC descriptor (MODE dsync), through
 * pwritev2 with RWF_DSYNC (MODE rwf), or with no sync at all (MODE none,
 * the control that writes the same); MODE sync calls sync() after each
 * write, MODE msync stores the byte in a shared mapping of the file's
 * first page and msyncs it with MS_SYNC. One concern: the same syncs on several file systems, whose
 * flushes each file system's disk counts.
 *
 * usage: keep_mounts MODE COUNT FILE... */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
	int flags = O_CREAT | O_TRUNC |
		    (strcmp(mode, "msync") == 0 ? O_RDWR : O_WRONLY | O_APPEND);
	if (strcmp(mode, "dsync") == 0)
		flags |= O_DSYNC;
	for (int f = 3; f < argc; f++) {
		int fd = open(argv[f], flags, 0644);
		if (fd < 0) {
			perror(argv[f]);
			return 1;
		}
		if (strcmp(mode, "msync") == 0) {
			char *page = ftruncate(fd, 4096) == 0 ?
				mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) :
				MAP_FAILED;
			if (page == MAP_FAILED) {
				perror("mmap");
				return 1;
			}
			for (int i = 0; i < count; i++) {
				page[i % 4096] = 'x';
				failed += msync(page, 4096, MS_SYNC) != 0;
			}
			munmap(page, 4096);
		}
		for (int i = 0; i < count && strcmp(mode, "msync") != 0; i++)
			failed += one(mode, fd) != 0;
		close(fd);
	}
	printf("%s: %d failed\n", mode, failed);
	return failed != 0;
}
