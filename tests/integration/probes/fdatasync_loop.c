/* Rewrites one 4 KiB page of FILE in place and fdatasyncs it, COUNT
 * times, after one untimed fsync that allocates it: a database's log
 * rewritten in place, one device flush per call. Says how many succeeded,
 * and how long it waited for a CPU while runnable (nanoseconds, from
 * /proc/thread-self/schedstat; -1 where the kernel does not say): on a
 * busy machine that wait is the machine's load, not the disk.
 *
 * usage: fdatasync_loop FILE COUNT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fdatasync_loop FILE COUNT\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	char page[4096];
	memset(page, 'p', sizeof page);
	if (pwrite(fd, page, sizeof page, 0) != sizeof page || fsync(fd) != 0) {
		perror("allocate");
		return 1;
	}
	int count = atoi(argv[2]), synced = 0;
	for (int i = 0; i < count; i++) {
		page[i % sizeof page] ^= 1;
		if (pwrite(fd, page, sizeof page, 0) == sizeof page && fdatasync(fd) == 0)
			synced++;
	}
	long long ran = 0, waited = -1;
	FILE *stat = fopen("/proc/thread-self/schedstat", "r");
	if (stat) {
		if (fscanf(stat, "%lld %lld", &ran, &waited) != 2)
			waited = -1;
		fclose(stat);
	}
	printf("fdatasynced %d of %d, waited %lld\n", synced, count, waited);
	return synced == count ? 0 : 1;
}
