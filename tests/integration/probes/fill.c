/* A container that writes garbage into a file until it has written MB
 * megabytes or the file's file system is full: lines of bytes that are
 * not report lines, some not UTF-8, some without an end.
 *
 * usage: fill FILE MB
 * Prints how many bytes it wrote; exits 0 also when the disk filled. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_APPEND);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	static char chunk[65536];
	for (size_t i = 0; i < sizeof chunk; i++)
		chunk[i] = (char)(i % 97 == 0 ? '\n' : i % 89 == 0 ? 0xff : 'a' + i % 26);
	memcpy(chunk, "pid=1 name=x fsync=", 19);
	long long total = 0, wanted = atoll(argv[2]) << 20;
	while (total < wanted) {
		ssize_t n = write(fd, chunk, sizeof chunk);
		if (n < 0 && errno == ENOSPC)
			break;
		if (n <= 0) {
			perror("write");
			return 1;
		}
		total += n;
	}
	printf("wrote %lld\n", total);
	return 0;
}
