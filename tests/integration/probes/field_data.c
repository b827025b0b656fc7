/*
 * Everything written with sync requests is in the file afterwards.
 * Usage: field_data write FILE BYTES  writes a generated pattern: most of it
 *        with write(2) on an O_SYNC descriptor, fsync and fdatasync after each
 *        chunk, one chunk with pwritev2(RWF_SYNC|RWF_DSYNC), the last part
 *        through a shared mapping and msync(MS_SYNC);
 *        field_data check FILE BYTES   reads FILE and compares it with the
 *        pattern. Both print "fnv1a BYTES HASH" of what they wrote or read.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define CHUNK 65537 /* odd, so that chunks straddle pages */

static unsigned char byte_at(long i)
{
	uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
	return (unsigned char)((x ^ (x >> 29)) >> 24);
}

static uint64_t fnv1a(const unsigned char *data, long len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (long i = 0; i < len; i++)
		h = (h ^ data[i]) * 0x100000001b3ull;
	return h;
}

static int write_all(const char *path, unsigned char *data, long size)
{
	long tail = size / 8, direct = size - tail - CHUNK, at = 0;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_SYNC | O_DSYNC, 0644);
	if (fd < 0 || direct < 0)
		return 1;
	while (at < direct) {
		long n = at + CHUNK > direct ? direct - at : CHUNK;
		if (write(fd, data + at, n) != n || fsync(fd) || fdatasync(fd))
			return 1;
		at += n;
	}
	struct iovec iov = { data + at, CHUNK };
	if (pwritev2(fd, &iov, 1, at, RWF_SYNC | RWF_DSYNC) != CHUNK)
		return 1;
	at += CHUNK;
	if (ftruncate(fd, size) != 0)
		return 1;
	unsigned char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 1;
	memcpy(map + at, data + at, size - at);
	if (msync(map, size, MS_SYNC) || munmap(map, size) || fsync(fd))
		return 1;
	return close(fd) != 0;
}

static int read_all(const char *path, unsigned char *data, long size)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	long at = 0;
	ssize_t n;
	while (at <= size && (n = read(fd, data + at, size + 1 - at)) > 0)
		at += n;
	close(fd);
	return at != size;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long size = atol(argv[3]);
	unsigned char *expected = malloc(size + 1), *data = malloc(size + 1);
	if (!expected || !data || size < 4 * CHUNK)
		return 2;
	for (long i = 0; i < size; i++)
		expected[i] = byte_at(i);
	int failed;
	if (strcmp(argv[1], "write") == 0)
		failed = write_all(argv[2], expected, size), memcpy(data, expected, size);
	else
		failed = read_all(argv[2], data, size) || memcmp(data, expected, size) != 0;
	printf("fnv1a %ld %016llx\n", size, (unsigned long long)fnv1a(data, size));
	return failed;
}
