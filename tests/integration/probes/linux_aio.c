/* Linux AIO flush requests through libaio (linked by file name: the build
 * needs no libaio headers), and the kernel's answers to bad ones.
 *
 * usage: linux_aio FILE [FLUSHES [unflushed]]
 * Prints one line per case, for the test to compare with and without the
 * library; with FLUSHES, only writes and flushes that many times; with
 * "unflushed" too, only writes as many blocks (a flush count's floor). */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* libaio's functions, as <libaio.h> declares them (with its own iocb). */
typedef struct io_context *io_context_t;
int io_setup(int maxevents, io_context_t *ctxp);
int io_destroy(io_context_t ctx);
int io_submit(io_context_t ctx, long nr, struct iocb *ios[]);
int io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event *events,
		 struct timespec *timeout);

static struct iocb request(int fd, int opcode, uint64_t data)
{
	struct iocb cb;
	memset(&cb, 0, sizeof cb);
	cb.aio_fildes = (uint32_t)fd;
	cb.aio_lio_opcode = (uint16_t)opcode;
	cb.aio_data = data;
	return cb;
}

static const char *name(int result)
{
	return result >= 0 ? "ok" : strerrorname_np(-result);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	io_context_t ctx = 0;
	if (fd < 0 || io_setup(16, &ctx) != 0)
		return 1;
	static char block[4096] __attribute__((aligned(4096)));
	struct io_event events[16];
	struct timespec patience = { 5, 0 }, zero = { 0, 0 };

	if (argc == 3 || (argc == 4 && !strcmp(argv[3], "unflushed"))) {
		int loops = atoi(argv[2]), flushing = argc == 3;
		for (int i = 0; i < loops; i++) {
			struct iocb write = request(fd, IOCB_CMD_PWRITE, 1);
			write.aio_buf = (uint64_t)(uintptr_t)block;
			write.aio_nbytes = sizeof block;
			write.aio_offset = (int64_t)i * 4096;
			struct iocb flush = request(fd, IOCB_CMD_FSYNC, 2);
			struct iocb *one[1] = { &write }, *other[1] = { &flush };
			if (io_submit(ctx, 1, one) != 1 || io_getevents(ctx, 1, 1, events, &patience) != 1)
				return 1;
			if (flushing && (io_submit(ctx, 1, other) != 1 ||
					 io_getevents(ctx, 1, 1, events, &patience) != 1))
				return 1;
		}
		printf("flushed %d\n", flushing ? loops : 0);
		return 0;
	}

	/* A write and two flushes in one batch: three events, each naming its
	 * own iocb and data. */
	struct iocb write = request(fd, IOCB_CMD_PWRITE, 0xa1);
	write.aio_buf = (uint64_t)(uintptr_t)block;
	write.aio_nbytes = sizeof block;
	struct iocb fsync_cb = request(fd, IOCB_CMD_FSYNC, 0xf5);
	struct iocb fdsync_cb = request(fd, IOCB_CMD_FDSYNC, 0xfd);
	struct iocb *batch[3] = { &fsync_cb, &write, &fdsync_cb };
	printf("batch: io_submit %d\n", io_submit(ctx, 3, batch));
	int got = 0;
	for (int tries = 0; got < 3 && tries < 3; tries++) {
		int more = io_getevents(ctx, 3 - got, 16 - got, events + got, &patience);
		if (more < 0)
			break;
		got += more;
	}
	int matched = 0;
	for (int i = 0; i < got; i++)
		for (int j = 0; j < 3; j++)
			if (events[i].obj == (uint64_t)(uintptr_t)batch[j] &&
			    events[i].data == batch[j]->aio_data)
				matched += events[i].data == 0xa1 ? events[i].res == 4096 : events[i].res == 0;
	printf("batch: %d events, %d with their own iocb, data and result\n", got, matched);

	/* A flush, then polls that never wait. */
	struct iocb polled = request(fd, IOCB_CMD_FSYNC, 0x90);
	struct iocb *one[1] = { &polled };
	printf("poll: io_submit %d\n", io_submit(ctx, 1, one));
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	int found = 0;
	do {
		found = io_getevents(ctx, 0, 16, events, &zero);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (found == 0 && now.tv_sec - start.tv_sec < 5);
	printf("poll: %d event, data %#llx\n", found, found > 0 ? (unsigned long long)events[0].data : 0ULL);

	/* What the kernel refuses at submission. */
	struct iocb closed = request(999, IOCB_CMD_FSYNC, 1);
	one[0] = &closed;
	printf("closed descriptor: %s\n", name(io_submit(ctx, 1, one)));
	struct iocb null_cb = request(open("/dev/null", O_WRONLY), IOCB_CMD_FSYNC, 1);
	one[0] = &null_cb;
	printf("/dev/null: %s\n", name(io_submit(ctx, 1, one)));
	struct iocb stray = request(fd, IOCB_CMD_FSYNC, 1);
	stray.aio_nbytes = 1;
	one[0] = &stray;
	printf("stray length: %s\n", name(io_submit(ctx, 1, one)));
	one[0] = (struct iocb *)16;
	printf("bad iocb address: %s\n", name(io_submit(ctx, 1, one)));
	struct iocb **nowhere = (struct iocb **)(uintptr_t)atoi("16");
	printf("bad array address: %s\n", name(io_submit(ctx, 1, nowhere)));

	/* A flush that signals an eventfd: done by the kernel, which signals. */
	int event = eventfd(0, 0);
	struct iocb signalled = request(fd, IOCB_CMD_FDSYNC, 0x5f);
	signalled.aio_flags = IOCB_FLAG_RESFD;
	signalled.aio_resfd = (uint32_t)event;
	one[0] = &signalled;
	printf("eventfd: io_submit %d\n", io_submit(ctx, 1, one));
	uint64_t count = 0;
	int done = io_getevents(ctx, 1, 16, events, &patience);
	int counted = read(event, &count, sizeof count) == sizeof count;
	printf("eventfd: events %d, counter read %s %llu\n", done, counted ? "ok" : "failed",
	       (unsigned long long)count);

	/* A flush left uncollected when the context goes. */
	struct iocb left = request(fd, IOCB_CMD_FSYNC, 1);
	one[0] = &left;
	io_submit(ctx, 1, one);
	printf("destroy: %s\n", name(io_destroy(ctx)));
	io_context_t again = 0;
	int set = io_setup(16, &again);
	printf("new context: %s, events %d\n", name(set), io_getevents(again, 0, 16, events, &zero));
	return 0;
}
