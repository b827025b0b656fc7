/* Writes a byte to FILE and fsyncs it, COUNT times; says how many
 * succeeded. One concern: a run of fsyncs whose flushes the disk counts.
 *
 * usage: fsync_loop FILE COUNT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fsync_loop FILE COUNT\n");
		return 2;
	}
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	int count = atoi(argv[2]), synced = 0;
	for (int i = 0; i < count; i++) {
		if (write(fd, "x", 1) == 1 && fsync(fd) == 0)
			synced++;
	}
	printf("fsynced %d of %d\n", synced, count);
	return synced == count ? 0 : 1;
}
