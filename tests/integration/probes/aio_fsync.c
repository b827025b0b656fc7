/* POSIX AIO's aio_fsync with each kind of notification, and its errors.
 *
 * usage: aio_fsync FILE
 * Prints one line per case, for the test to compare with and without the
 * library. */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errno_name.h"

static sem_t notified;
static int seen_value;
static int seen_error = -1;
static struct aiocb *watched;

static void on_thread(union sigval value)
{
	seen_value = value.sival_int;
	seen_error = aio_error(watched);
	sem_post(&notified);
}

/* Waits for one notification, for at most 30 s from now: each request
 * gets its own time, whatever the others took on a busy machine (one
 * deadline for all 41 once ran out after 21 real fsyncs). */
static int notified_within(sem_t *notified)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 30;
	return sem_timedwait(notified, &until);
}

static const char *name(int error)
{
	return error == 0 ? "0" : errno_name(error);
}

/* Submits, waits with aio_suspend, prints aio_error and aio_return. */
static void settle(const char *what, struct aiocb *cb, int submitted)
{
	if (submitted != 0) {
		printf("%s: aio_fsync -1 %s\n", what, name(errno));
		return;
	}
	const struct aiocb *list[1] = { cb };
	while (aio_error(cb) == EINPROGRESS)
		aio_suspend(list, 1, NULL);
	printf("%s: aio_fsync 0, aio_error %s, aio_return %zd\n", what, name(aio_error(cb)),
	       aio_return(cb));
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "data", 4) != 4)
		return 1;
	struct aiocb cb;

	memset(&cb, 0, sizeof cb);
	cb.aio_fildes = fd;
	cb.aio_sigevent.sigev_notify = SIGEV_NONE;
	settle("O_SYNC, no notification", &cb, aio_fsync(O_SYNC, &cb));
	settle("O_DSYNC, no notification", &cb, aio_fsync(O_DSYNC, &cb));

	/* A signal, taken with sigwaitinfo: its code and value. */
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &rt, NULL);
	memset(&cb, 0, sizeof cb);
	cb.aio_fildes = fd;
	cb.aio_sigevent.sigev_notify = SIGEV_SIGNAL;
	cb.aio_sigevent.sigev_signo = SIGRTMIN;
	cb.aio_sigevent.sigev_value.sival_int = 42;
	settle("signal", &cb, aio_fsync(O_SYNC, &cb));
	siginfo_t info;
	struct timespec patience = { 5, 0 };
	int got = sigtimedwait(&rt, &info, &patience);
	printf("signal: %s, code %s, value %d\n", got == SIGRTMIN ? "delivered" : "missing",
	       info.si_code == SI_ASYNCIO ? "SI_ASYNCIO" : "other", info.si_value.sival_int);

	/* A thread, which sees the request complete. */
	sem_init(&notified, 0, 0);
	memset(&cb, 0, sizeof cb);
	cb.aio_fildes = fd;
	cb.aio_sigevent.sigev_notify = SIGEV_THREAD;
	cb.aio_sigevent.sigev_notify_function = on_thread;
	cb.aio_sigevent.sigev_value.sival_int = 7;
	watched = &cb;
	int submitted = aio_fsync(O_DSYNC, &cb);
	int woke = submitted == 0 ? notified_within(&notified) : -1;
	printf("thread: %s, value %d, aio_error in the thread %s\n", woke == 0 ? "called" : "missing",
	       seen_value, name(seen_error));
	/* Many at once: every one notified. */
	struct aiocb many[40];
	int called = 0;
	for (int i = 0; i < 40; i++) {
		memset(&many[i], 0, sizeof many[i]);
		many[i].aio_fildes = fd;
		many[i].aio_sigevent.sigev_notify = SIGEV_THREAD;
		many[i].aio_sigevent.sigev_notify_function = on_thread;
		watched = &many[i];
		if (aio_fsync(O_SYNC, &many[i]) == 0 && notified_within(&notified) == 0)
			called++;
	}
	printf("thread, 40 in turn: %d called\n", called);

	/* What the real aio_fsync refuses or fails. */
	memset(&cb, 0, sizeof cb);
	cb.aio_fildes = fd;
	settle("bad op", &cb, aio_fsync(12345, &cb));
	int closed = dup(fd);
	close(closed);
	cb.aio_fildes = closed;
	settle("closed descriptor", &cb, aio_fsync(O_SYNC, &cb));
	cb.aio_fildes = open(argv[1], O_RDONLY);
	settle("read-only descriptor", &cb, aio_fsync(O_SYNC, &cb));
	cb.aio_fildes = open("/dev/null", O_WRONLY);
	settle("/dev/null", &cb, aio_fsync(O_SYNC, &cb));
	return 0;
}
