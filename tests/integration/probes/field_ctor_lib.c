/*
 * A library whose constructor syncs before ours may have run: 16 threads
 * open with O_SYNC, write, fsync and fdatasync at the same moment (a
 * barrier), so that they race the first lookups of the next definitions;
 * then the constructor's own thread does the same once.
 * Files go under $FIELD_DIR. Prints "constructor: 17 files" on success.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 16

static pthread_barrier_t start;
static const char *dir;

static int sync_one(int n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/ctor-%d", dir, n);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_SYNC, 0644);
	if (fd < 0)
		return -1;
	int ok = write(fd, path, strlen(path)) == (ssize_t)strlen(path) &&
		 fsync(fd) == 0 && fdatasync(fd) == 0;
	return close(fd) == 0 && ok ? 0 : -1;
}

static void *racer(void *arg)
{
	pthread_barrier_wait(&start);
	return sync_one((int)(long)arg) == 0 ? arg : NULL;
}

__attribute__((constructor)) static void early(void)
{
	pthread_t threads[THREADS];
	dir = getenv("FIELD_DIR");
	if (!dir)
		_exit(90);
	pthread_barrier_init(&start, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&threads[i], NULL, racer, (void *)(i + 1)) != 0)
			_exit(91);
	for (long i = 0; i < THREADS; i++) {
		void *result;
		if (pthread_join(threads[i], &result) != 0 || result != (void *)(i + 1)) {
			perror("constructor: racing thread");
			_exit(92);
		}
	}
	if (sync_one(0) != 0) {
		perror("constructor: own sync");
		_exit(93);
	}
	printf("constructor: %d files\n", THREADS + 1);
	fflush(stdout);
}
