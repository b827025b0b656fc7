/* Makes every sync call on a file it writes, and checks each answer.
 *
 * usage: sync_calls FILE
 * Exits 0 when every call succeeded, left errno alone, and the file reads
 * back as written; prints what failed otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE (1 << 20)
#define SENTINEL 4242

static int failures;

static void expect_ok(const char *what, int result)
{
	if (result != 0 || errno != SENTINEL) {
		printf("%s: returned %d, errno %d\n", what, result, errno);
		failures++;
	}
	errno = SENTINEL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	static char data[SIZE];
	for (int i = 0; i < SIZE; i++)
		data[i] = (char)(i * 7 + i / 4096);

	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, SIZE) != SIZE) {
		perror("write");
		return 1;
	}
	errno = SENTINEL;
	expect_ok("fsync", fsync(fd));
	expect_ok("fdatasync", fdatasync(fd));
	expect_ok("syncfs", syncfs(fd));
	expect_ok("sync_file_range", sync_file_range(fd, 0, SIZE, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER));
	sync();
	expect_ok("sync", 0);

	char *map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	map[0] = data[0] = 'M';
	expect_ok("msync", msync(map, SIZE, MS_SYNC));
	munmap(map, SIZE);
	close(fd);

	static char back[SIZE];
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || read(fd, back, SIZE) != SIZE || memcmp(back, data, SIZE) != 0) {
		printf("the file does not read back as written\n");
		failures++;
	}
	close(fd);
	return failures ? 1 : 0;
}
