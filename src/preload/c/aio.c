/*
 * POSIX AIO: aio_fsync(3) completes at once, without the flush.
 *
 * glibc's and musl's AIO threads call libc's own fsync from inside libc,
 * where no preload can reach it, so the request is answered here instead,
 * the way libc answers it once its flush is done: the aiocb's result and
 * error are set (aio_error, aio_return and aio_suspend read them), then the
 * program is notified as its sigevent asks.
 *
 * - SIGEV_NONE: nothing more.
 * - SIGEV_SIGNAL: the signal is queued here with SI_ASYNCIO and the
 *   program's value, as libc queues it.
 * - SIGEV_THREAD: a new thread must call the program's function, and a hook
 *   cannot make a thread without allocating. libc's own AIO machinery makes
 *   it, for a private request that does no I/O (a read of no bytes), taken
 *   from a fixed pool, whose notification calls the program's function once
 *   the program's request is complete.
 *
 * Anything the real aio_fsync refuses or fails (an unknown op, a closed or
 * read-only descriptor, a file the kernel cannot sync), any other kind of
 * notification, or a full pool goes to the real aio_fsync, which answers as
 * it always does and flushes nothing.
 */
#include "shim.h"

#include <aio.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

/* A system call without arguments, by the library's own path to the kernel:
 * one name fewer for the loader to bind in every process than calling
 * libc's sched_yield, getpid and getuid by name. */
static long kernel0(long number)
{
	const long none[6] = { 0 };
	return eatmydata_kernel(number, none);
}

/*
 * libc writes a request's outcome into the aiocb: glibc calls the fields
 * __return_value and __error_code, musl __ret and __err. On 64-bit Linux both
 * put them at the same offsets (checked against musl by the tests), so one
 * library serves both.
 */
#define AIOCB_ERROR 112
#define AIOCB_RESULT 120
_Static_assert(offsetof(struct aiocb, __error_code) == AIOCB_ERROR, "aiocb error");
_Static_assert(offsetof(struct aiocb, __return_value) == AIOCB_RESULT, "aiocb result");

/* libaio's, declared as <libaio.h> does, which the build does not need. */
struct io_context;
struct io_event;
int io_getevents(struct io_context *ctx, long min_nr, long nr, struct io_event *events,
		 struct timespec *timeout);

/* Looked up on first use only: before glibc 2.34 these live in librt,
 * which a program may load after the constructor has run. */
static void *next_aio_fsync, *next_aio_fsync64, *next_aio_read, *next_io_getevents;

/* A thread notification in flight: the private request that carries it. */
struct notice {
	atomic_int busy;
	atomic_int ready;
	void (*function)(union sigval);
	union sigval value;
	struct aiocb request;
};

/* In .data, not .bss: 6 KiB of .bss would cost every process one more
 * mmap(2) at load, where file-backed pages cost nothing until touched. */
static struct notice pool[32] __attribute__((section(".data")));
static char nothing;

/* Runs in the thread libc made for a private request: waits until the
 * program's own request is complete, frees the slot, calls the program. */
static void notify_thread(union sigval own)
{
	struct notice *notice = own.sival_ptr;
	while (!atomic_load_explicit(&notice->ready, memory_order_acquire))
		kernel0(SYS_sched_yield);
	void (*function)(union sigval) = notice->function;
	union sigval value = notice->value;
	/* libc reads nothing of the private request once it has notified. */
	atomic_store_explicit(&notice->busy, 0, memory_order_release);
	function(value);
}

/* A free slot of the pool, taken; NULL when all are in flight. */
static struct notice *claim(void)
{
	for (size_t i = 0; i < sizeof pool / sizeof pool[0]; i++) {
		int free_slot = 0;
		if (atomic_compare_exchange_strong(&pool[i].busy, &free_slot, 1))
			return &pool[i];
	}
	return NULL;
}

/* Starts the private request that will notify the program's thread. */
static int start_notice(struct notice *notice, const struct aiocb *cb)
{
	__typeof__(&aio_read) read_fn = NEXT(aio_read);
	if (!read_fn)
		return -1;
	const struct sigevent *event = &cb->aio_sigevent;
	notice->function = event->sigev_notify_function;
	notice->value = event->sigev_value;
	atomic_store_explicit(&notice->ready, 0, memory_order_relaxed);
	memset(&notice->request, 0, sizeof notice->request);
	notice->request.aio_fildes = cb->aio_fildes;
	notice->request.aio_buf = &nothing;
	notice->request.aio_sigevent.sigev_notify = SIGEV_THREAD;
	notice->request.aio_sigevent.sigev_value.sival_ptr = notice;
	notice->request.aio_sigevent.sigev_notify_function = notify_thread;
	notice->request.aio_sigevent.sigev_notify_attributes =
		event->sigev_notify_attributes;
	int saved = errno;
	int started = read_fn(&notice->request);
	errno = saved;
	return started;
}

/* Queues the program's signal as libc does for a finished request. */
static void queue_signal(const struct sigevent *event)
{
	siginfo_t info;
	memset(&info, 0, sizeof info);
	info.si_signo = event->sigev_signo;
	info.si_code = SI_ASYNCIO;
	info.si_pid = (pid_t)kernel0(SYS_getpid);
	info.si_uid = (uid_t)kernel0(SYS_getuid);
	info.si_value = event->sigev_value;
	long args[6] = { info.si_pid, info.si_signo, (long)&info };
	eatmydata_kernel(SYS_rt_sigqueueinfo, args);
}

/* Completes `cb` as libc would after a successful flush; 0 when done, -1
 * when the real aio_fsync must have it. */
static int complete(int op, struct aiocb *cb)
{
	int how = cb->aio_sigevent.sigev_notify;
	if (how != SIGEV_NONE && how != SIGEV_SIGNAL && how != SIGEV_THREAD)
		return -1;
	if (!eatmydata_aio_fsync_answerable(op, cb->aio_fildes))
		return -1;
	struct notice *notice = NULL;
	if (how == SIGEV_THREAD) {
		notice = claim();
		if (!notice)
			return -1;
		if (start_notice(notice, cb) != 0) {
			atomic_store(&notice->busy, 0);
			return -1;
		}
	}
	char *outcome = (char *)cb;
	*(ssize_t *)(outcome + AIOCB_RESULT) = 0;
	atomic_store_explicit((atomic_int *)(outcome + AIOCB_ERROR), 0, memory_order_release);
	eatmydata_aio_fsync_answered(cb->aio_fildes);
	if (how == SIGEV_SIGNAL)
		queue_signal(&cb->aio_sigevent);
	if (notice)
		atomic_store_explicit(&notice->ready, 1, memory_order_release);
	return 0;
}

/* aio_fsync(3): complete at once, without the flush. */
int HOOK(aio_fsync)(int op, struct aiocb *cb)
{
	if (eatmydata_eating() && complete(op, cb) == 0)
		return 0;
	PASS(aio_fsync, op, cb);
}
MATCHES(aio_fsync);

int HOOK(aio_fsync64)(int op, struct aiocb64 *cb)
{
	if (eatmydata_eating() && complete(op, (struct aiocb *)cb) == 0)
		return 0;
	PASS(aio_fsync64, op, cb);
}
MATCHES(aio_fsync64);

/*
 * Linux AIO: libaio's io_getevents. Flush requests that io_submit answered
 * (src/preload/linux_aio.rs) wait in the library, not in the kernel's ring,
 * and libaio answers a poll with an empty ring without asking the kernel:
 * while any wait, events are collected by the library. libaio returns
 * -errno rather than setting errno.
 */
int HOOK(io_getevents)(struct io_context *ctx, long min_nr, long nr, struct io_event *events,
		       struct timespec *timeout)
{
	if (eatmydata_io_events_waiting()) {
		long got = eatmydata_io_getevents((long)ctx, min_nr, nr, (long)events,
						  (long)timeout);
		return got < 0 ? -errno : (int)got;
	}
	PASS(io_getevents, ctx, min_nr, nr, events, timeout);
}
MATCHES(io_getevents);
