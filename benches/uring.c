/*
 * uring MODE N PATH: make N submissions (or calls) of one kind and print
 * the nanoseconds they took, in total, on stdout; run by benches/uring.rs
 * with and without LD_PRELOAD, as benches/calls.c is by benches/hooks.rs.
 *
 * MODE is one of
 *   nop8          io_uring_submit_and_wait of 8 NOP entries, reaped: what
 *                 the library adds to a submission it reads and leaves
 *   write-fsync8  4 writes of 4 KiB to PATH, each linked to an fsync: a
 *                 submission whose 4 flushes the library eats
 *   mmap          mmap and munmap of an anonymous page: what a program that
 *                 never sets up a ring pays for the ring hooks
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"

static void fail(const char *what)
{
	fprintf(stderr, "uring: %s failed\n", what);
	exit(1);
}

static void submit_and_reap(struct io_uring *ring, unsigned count)
{
	if (io_uring_submit_and_wait(ring, count) != (int)count)
		fail("submit");
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	io_uring_for_each_cqe(ring, head, cqe) {
		if (cqe->res < 0)
			fail("an entry");
		seen++;
	}
	io_uring_cq_advance(ring, seen);
	while (seen < count) {
		if (io_uring_wait_cqe(ring, &cqe) || cqe->res < 0)
			fail("wait");
		io_uring_cqe_seen(ring, cqe);
		seen++;
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: uring nop8|write-fsync8|mmap N PATH\n");
		return 2;
	}
	const char *mode = argv[1];
	long long n = atoll(argv[2]);
	static char block[4096];
	struct io_uring ring;
	if (io_uring_queue_init(8, &ring, 0))
		fail("io_uring_queue_init");
	int fd = open(argv[3], O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		fail("open");
	long long start = now();
	for (long long i = 0; i < n; i++) {
		if (!strcmp(mode, "nop8")) {
			for (int e = 0; e < 8; e++)
				io_uring_prep_nop(io_uring_get_sqe(&ring));
			submit_and_reap(&ring, 8);
		} else if (!strcmp(mode, "write-fsync8")) {
			for (int e = 0; e < 4; e++) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
				io_uring_prep_write(sqe, fd, block, sizeof block, e * 4096);
				sqe->flags |= IOSQE_IO_LINK;
				io_uring_prep_fsync(io_uring_get_sqe(&ring), fd, 0);
			}
			submit_and_reap(&ring, 8);
		} else if (!strcmp(mode, "mmap")) {
			if (map_and_unmap())
				fail("mmap");
		} else {
			fail("mode");
		}
	}
	printf("%lld\n", now() - start);
	return 0;
}
