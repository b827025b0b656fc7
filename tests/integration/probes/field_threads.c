/*
 * Many threads at once, each in a loop: open its own file with O_SYNC (odd
 * iterations O_DSYNC), write a record, fsync, fdatasync, close, read the
 * record back. Usage: field_threads DIR THREADS ITERATIONS.
 * Prints "ok N" with N the records written and read back intact.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dir;
static long iterations;

static int round_trip(long thread, long i)
{
	char path[4096], record[64], back[64];
	snprintf(path, sizeof path, "%s/t%ld", dir, thread);
	int len = snprintf(record, sizeof record, "thread %ld iteration %ld\n", thread, i);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (i % 2 ? O_DSYNC : O_SYNC), 0600);
	if (fd < 0)
		return -1;
	int ok = write(fd, record, len) == len && fsync(fd) == 0 && fdatasync(fd) == 0;
	if (close(fd) != 0 || !ok)
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ok = read(fd, back, sizeof back) == len && memcmp(record, back, len) == 0;
	return close(fd) == 0 && ok ? 0 : -1;
}

static void *worker(void *arg)
{
	long done = 0;
	for (long i = 0; i < iterations; i++)
		if (round_trip((long)arg, i) == 0)
			done++;
	return (void *)done;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	dir = argv[1];
	long count = atol(argv[2]);
	iterations = atol(argv[3]);
	pthread_t threads[256];
	if (count < 1 || count > 256)
		return 2;
	for (long t = 0; t < count; t++)
		if (pthread_create(&threads[t], NULL, worker, (void *)t) != 0)
			return 3;
	long total = 0;
	for (long t = 0; t < count; t++) {
		void *done;
		pthread_join(threads[t], &done);
		total += (long)done;
	}
	printf("ok %ld\n", total);
	return total == count * iterations ? 0 : 1;
}
