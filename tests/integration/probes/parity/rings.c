/* io_uring set-ups under the supervisor: ring layouts it must learn, a
 * ring used by another process, and the set-ups it changes or refuses.
 * AREA/f is a 4 KiB file.
 *
 *   sqe128          a ring of 128-byte entries: a write, an FSYNC, an FSYNC
 *                   with bad flags: 4096, 0, -EINVAL
 *   cqe32           the same on a ring of 32-byte completions
 *   forked          the same on a ring set up by the parent, used by its child
 *   sqpoll          a SQPOLL ring: the flags the program reads back, and a
 *                   write and an fsync through it
 *   no_mmap         IORING_SETUP_NO_MMAP without memory: the kernel's error
 *   resize          IORING_REGISTER_RESIZE_RINGS on a DEFER_TASKRUN ring
 *   register_ring   IORING_REGISTER_RING_FDS: the ring's own fd registered
 *   i386_setup      io_uring_setup through int $0x80 (the i386 ABI)
 */
#include "parity.h"
#include "uring.h"
#include <sys/mman.h>

static long i386_call2(long nr, long a, long b)
{
	long result;
	__asm__ volatile("int $0x80" : "=a"(result) : "a"(nr), "b"(a), "c"(b) : "memory");
	return result;
}

/* A write, an FSYNC and an FSYNC with bad flags on `ring`. */
static void three(struct io_uring *ring, int fd)
{
	struct io_uring_sqe *sqe;
	io_uring_prep_write(sqe = entry(ring, 1), fd, block, sizeof block, 0);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_prep_fsync(entry(ring, 2), fd, 0);
	io_uring_prep_fsync(entry(ring, 3), fd, 0x80);
	reap(ring, 3);
}

static int run(const char *which)
{
	struct io_uring ring;
	struct io_uring_params params = {0};
	CASE("sqpoll") params.flags = IORING_SETUP_SQPOLL;
	CASE("no_mmap") {
		params.flags = 1U << 14; /* IORING_SETUP_NO_MMAP */
		say_value("setup", syscall(SYS_io_uring_setup, 4, &params));
		return 0;
	}
	CASE("i386_setup") {
		/* Below 4 GiB, where an i386 call's pointer can reach. */
		void *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (low == MAP_FAILED)
			return 3;
		long fd = i386_call2(425, 4, (long)low);
		say_raw("setup", fd < 0 ? fd : 0);
		return 0;
	}
	CASE("resize") params.flags = IORING_SETUP_SINGLE_ISSUER | (1U << 13);
	CASE("sqe128") params.flags = IORING_SETUP_SQE128;
	CASE("cqe32") params.flags = IORING_SETUP_CQE32;
	int error = io_uring_queue_init_params(8, &ring, &params);
	if (error) {
		say_raw("setup", error);
		return 3;
	}
	int fd = open(at("f"), O_RDWR);
	memset(block, 'u', sizeof block);
	struct io_uring_sqe *sqe;
	if (!strcmp(which, "sqe128") || !strcmp(which, "cqe32"))
		three(&ring, fd);
	else CASE("forked") {
		pid_t child = fork();
		if (child == 0) {
			three(&ring, fd);
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
	else CASE("register_ring") say_raw("register_ring", io_uring_register_ring_fd(&ring));
	else CASE("sqpoll") {
		printf("sqpoll=%s\n", ring.flags & IORING_SETUP_SQPOLL ? "on" : "off");
		io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(entry(&ring, 2), fd, 0);
		reap(&ring, 2);
	}
	else CASE("resize") {
		struct io_uring_params bigger = {.sq_entries = 16, .cq_entries = 32,
						 .flags = IORING_SETUP_CQSIZE};
		say_value("resize", syscall(SYS_io_uring_register, ring.ring_fd, 33, &bigger, 1));
	}
	else
		UNKNOWN();
	return 0;
}
