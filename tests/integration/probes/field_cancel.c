/*
 * Deferred cancellation at a call the library hooks. A thread disables
 * cancellation, is sent a cancel request, enables cancellation again and
 * makes CALL: it must be cancelled there, its cleanup handler run and the
 * line after the call never reached. With "disabled", the thread keeps
 * cancellation off: CALL must return normally and the thread finish.
 * With "blocked", the thread is cancelled while blocked in an open of a FIFO
 * nobody reads.
 * Usage: field_cancel DIR CALL enabled|disabled   (CALL: fsync fdatasync
 *        msync sync_file_range open)
 *        field_cancel DIR open blocked
 * Prints "cancelled CALL", "returned CALL" or "blocked: cancelled open".
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_barrier_t step;
static const char *call;
static char path[4096];
static int fd;
static void *map;
static volatile int after_call, cleaned_up;
static volatile pid_t tid;

static void cleanup(void *arg)
{
	(void)arg;
	cleaned_up = 1;
}

static int make_call(void)
{
	if (strcmp(call, "fsync") == 0)
		return fsync(fd);
	if (strcmp(call, "fdatasync") == 0)
		return fdatasync(fd);
	if (strcmp(call, "msync") == 0)
		return msync(map, 4096, MS_SYNC);
	if (strcmp(call, "sync_file_range") == 0)
		return sync_file_range(fd, 0, 4096, SYNC_FILE_RANGE_WRITE);
	if (strcmp(call, "open") == 0)
		return close(open(path, O_RDWR | O_SYNC));
	return -1;
}

static void *target(void *keep_disabled)
{
	int result = -1;
	pthread_cleanup_push(cleanup, NULL);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_barrier_wait(&step); /* main sends the cancel request now */
	pthread_barrier_wait(&step); /* the request is pending */
	if (!keep_disabled)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	result = make_call();
	after_call = 1;
	pthread_cleanup_pop(0);
	return result == 0 ? (void *)call : NULL;
}

static void *blocked(void *arg)
{
	(void)arg;
	tid = (pid_t)syscall(SYS_gettid);
	open(path, O_WRONLY | O_SYNC);
	after_call = 1;
	return NULL;
}

/* Waits until thread `tid` is inside system call `number`. */
static void wait_in_syscall(long number)
{
	char where[64], line[256];
	while (tid == 0)
		sched_yield();
	snprintf(where, sizeof where, "/proc/self/task/%d/syscall", (int)tid);
	for (;;) {
		FILE *f = fopen(where, "r");
		long seen = -1;
		if (!f) {
			perror(where);
			exit(5);
		}
		if (fgets(line, sizeof line, f))
			seen = strtol(line, NULL, 10);
		fclose(f);
		if (seen == number)
			return;
		sched_yield();
	}
}

int main(int argc, char **argv)
{
	pthread_t thread;
	void *result;
	if (argc != 4)
		return 2;
	call = argv[2];
	snprintf(path, sizeof path, "%s/cancel-%s", argv[1], call);
	if (strcmp(argv[3], "blocked") == 0) {
		if (mkfifo(path, 0600) != 0 || pthread_create(&thread, NULL, blocked, NULL) != 0)
			return 3;
		wait_in_syscall(SYS_openat);
		pthread_cancel(thread);
		pthread_join(thread, &result);
		if (result != PTHREAD_CANCELED || after_call)
			return 4;
		puts("blocked: cancelled open");
		return 0;
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096) != 0)
		return 3;
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 3;
	void *keep_disabled = strcmp(argv[3], "disabled") == 0 ? path : NULL;
	pthread_barrier_init(&step, NULL, 2);
	if (pthread_create(&thread, NULL, target, keep_disabled) != 0)
		return 3;
	pthread_barrier_wait(&step);
	pthread_cancel(thread);
	pthread_barrier_wait(&step);
	pthread_join(thread, &result);
	if (result == PTHREAD_CANCELED && cleaned_up && !after_call)
		printf("cancelled %s\n", call);
	else if (result == (void *)call && !cleaned_up && after_call)
		printf("returned %s\n", call);
	else
		printf("neither: result %p, cleanup %d, after %d\n", result, cleaned_up, after_call);
	return 0;
}
