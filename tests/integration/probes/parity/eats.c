/* The parity probes' good cases, in a loop on AREA/f (on a loop device's
 * ext4): each round writes a byte and asks for it to be durable, 50 times.
 * Under eatmydata these must cost no flush; alone, about one or two each.
 *
 *   fsync fdatasync msync uring_fsync uring_fixed_fsync uring_sqe128_fsync
 *   uring_forked_fsync (the ring set up by the parent, used by its child)
 *   uring_write_dsync (WRITE entries with RWF_DSYNC) uring_openat_osync
 *   (an OPENAT entry with O_SYNC, then writes) uring_openat2_osync (the
 *   same with an OPENAT2 entry) openat2_osync
 *   i386_fsync (fsync through int $0x80, the i386 ABI: number 118)
 */
#include "parity.h"
#include <linux/openat2.h>
#include <liburing.h>
#include <sys/mman.h>

#define ROUNDS 50

static long i386_fsync(long fd)
{
	long result;
	__asm__ volatile("int $0x80" : "=a"(result) : "a"(118L), "b"(fd) : "memory");
	return result;
}

/* Submits the open prepared on `ring` and writes a byte ROUNDS times
 * through the descriptor it completes with: how many were written. */
static int writes_through_opened(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	io_uring_submit(ring);
	int sync_fd = -1;
	if (io_uring_wait_cqe(ring, &cqe) == 0)
		sync_fd = cqe->res;
	int done = 0;
	for (int i = 0; sync_fd >= 0 && i < ROUNDS; i++)
		done += pwrite(sync_fd, "o", 1, i) == 1;
	return done;
}

static int run(const char *which)
{
	int fd = open(at("f"), O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096))
		return 3;
	int done = 0;
	CASE("fsync") for (int i = 0; i < ROUNDS; i++)
		done += pwrite(fd, "f", 1, i) == 1 && fsync(fd) == 0;
	else CASE("i386_fsync") for (int i = 0; i < ROUNDS; i++)
		done += pwrite(fd, "i", 1, i) == 1 && i386_fsync(fd) == 0;
	else CASE("fdatasync") for (int i = 0; i < ROUNDS; i++)
		done += pwrite(fd, "d", 1, i) == 1 && fdatasync(fd) == 0;
	else CASE("msync") {
		char *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		for (int i = 0; map != MAP_FAILED && i < ROUNDS; i++) {
			map[i] = 'm';
			done += msync(map, 4096, MS_SYNC) == 0;
		}
	}
	else CASE("uring_write_dsync") {
		struct io_uring ring;
		struct io_uring_cqe *cqe;
		if (io_uring_queue_init(4, &ring, 0))
			return 3;
		for (int i = 0; i < ROUNDS; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			io_uring_prep_write(sqe, fd, "w", 1, i);
			sqe->rw_flags = RWF_DSYNC;
			io_uring_submit(&ring);
			if (io_uring_wait_cqe(&ring, &cqe) == 0) {
				done += cqe->res == 1;
				io_uring_cqe_seen(&ring, cqe);
			}
		}
	}
	else CASE("uring_openat_osync") {
		struct io_uring ring;
		if (io_uring_queue_init(4, &ring, 0))
			return 3;
		io_uring_prep_openat(io_uring_get_sqe(&ring), AT_FDCWD, at("f"), O_WRONLY | O_SYNC, 0);
		done = writes_through_opened(&ring);
	}
	else CASE("uring_openat2_osync") {
		struct io_uring ring;
		struct open_how how = {.flags = O_WRONLY | O_SYNC};
		if (io_uring_queue_init(4, &ring, 0))
			return 3;
		io_uring_prep_openat2(io_uring_get_sqe(&ring), AT_FDCWD, at("f"), &how);
		done = writes_through_opened(&ring);
	}
	else if (!strncmp(which, "uring_", 6)) {
		int fixed = !strcmp(which, "uring_fixed_fsync");
		int forked = !strcmp(which, "uring_forked_fsync");
		unsigned flags = !strcmp(which, "uring_sqe128_fsync") ? IORING_SETUP_SQE128 : 0;
		struct io_uring ring;
		if (io_uring_queue_init(4, &ring, flags) ||
		    (fixed && io_uring_register_files(&ring, &fd, 1)))
			return 3;
		pid_t child = forked ? fork() : 0;
		if (child > 0) {
			int status;
			waitpid(child, &status, 0);
			done = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		}
		for (int i = 0; child == 0 && i < ROUNDS; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			io_uring_prep_write(sqe, fd, "u", 1, i);
			sqe->flags |= IOSQE_IO_LINK;
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_fsync(sqe, fixed ? 0 : fd, 0);
			if (fixed)
				sqe->flags |= IOSQE_FIXED_FILE;
			io_uring_submit(&ring);
			for (int j = 0; j < 2; j++) {
				struct io_uring_cqe *cqe;
				if (io_uring_wait_cqe(&ring, &cqe) == 0) {
					done += j == 1 && cqe->res == 0;
					io_uring_cqe_seen(&ring, cqe);
				}
			}
		}
		if (forked && child == 0)
			_exit(done);
	}
	else CASE("openat2_osync") {
		struct open_how how = {.flags = O_WRONLY | O_SYNC};
		int sync_fd = syscall(SYS_openat2, AT_FDCWD, at("f"), &how, sizeof how);
		for (int i = 0; sync_fd >= 0 && i < ROUNDS; i++)
			done += pwrite(sync_fd, "o", 1, i) == 1;
	}
	else UNKNOWN();
	printf("%s=%d\n", which, done);
	return 0;
}
