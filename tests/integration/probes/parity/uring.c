/* io_uring entries under the supervisor: a rewritten entry must complete
 * as the kernel would complete the original, errors included; a chain
 * keeps its order and user_data. AREA/f is a 4 KiB file.
 *
 *   good            write, then fsync: res 4096, then 0
 *   fsync_badflags  FSYNC with unknown fsync_flags: -EINVAL
 *   fsync_addr      FSYNC with addr != 0: -EINVAL
 *   sfr_badrange    SYNC_FILE_RANGE at offset -1: -EINVAL
 *   sfr_badflags    SYNC_FILE_RANGE with unknown flags: -EINVAL
 *   fixed_none      FSYNC on fixed file 3, none registered: -EBADF
 *   fixed_beyond    FSYNC on fixed file 3, one registered: -EBADF
 *   fsync_pipe fsync_devnull fsync_badfd fsync_opath   the kernel's answer
 *   fixed_pipe      FSYNC on fixed file 0, a pipe: -EINVAL
 *   fixed_sparse    FSYNC on fixed file 0 of a sparse table: -EBADF
 *   fixed_updated   FILES_UPDATE makes slot 0 (a disk file) a pipe, linked
 *                   to an FSYNC on slot 0: -EINVAL
 *   fixed_direct    OPENAT of /dev/null direct into slot 0 (a disk file),
 *                   linked to an FSYNC on slot 0: -EINVAL
 *   sfr_overflow    SYNC_FILE_RANGE whose end overflows: -EINVAL
 *   sfr_addr        SYNC_FILE_RANGE with addr != 0: -EINVAL
 *   fsync_bufindex fsync_splicefd fsync_bufselect fsync_personality
 *                   FSYNC with a field or flag it refuses
 *   chain           write -> fsync -> read, linked: all three, in order
 *   chain_broken    write -> fsync with bad flags -> write, linked: the
 *                   third is cancelled
 *   openat_sync     OPENAT of AREA/new with O_CREAT|O_SYNC, then a write
 *   i386_setup      io_uring_setup through int $0x80 (the i386 ABI)
 *   forked          the ring set up by the parent, used by its child: a
 *                   write, an FSYNC, an FSYNC with bad flags
 *   openat_direct   OPENAT of AREA/f with O_DIRECT, then a 1-byte write at
 *                   offset 1, which O_DIRECT refuses (EINVAL)
 *   openat2_in_file OPENAT2 whose open_how (O_SYNC) lies in a shared
 *                   mapping of AREA/how: the file keeps what was written
 *   sqpoll          a SQPOLL ring: the flags the program reads back, and a
 *                   write and an fsync through it
 *   no_mmap         IORING_SETUP_NO_MMAP without memory: the kernel's error
 *   resize          IORING_REGISTER_RESIZE_RINGS on a DEFER_TASKRUN ring
 *   register_ring   IORING_REGISTER_RING_FDS: the ring's own fd registered
 *   sqe128          a ring of 128-byte entries: a write, an FSYNC, an FSYNC
 *                   with bad flags: 4096, 0, -EINVAL
 *   cqe32           the same on a ring of 32-byte completions
 */
#include "parity.h"
#include <liburing.h>
#include <linux/openat2.h>
#include <sys/mman.h>

static char block[4096];

static struct io_uring_sqe *entry(struct io_uring *ring, unsigned long long user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		fprintf(stderr, "no entry free\n");
		exit(3);
	}
	io_uring_prep_nop(sqe);
	sqe->user_data = user_data;
	return sqe;
}

/* Submits, then prints `count` completions: in the order they came for a
 * chain (`ordered`), whose order the kernel keeps; else by user_data, as
 * the kernel promises no order between independent entries. */
static void reap_in(struct io_uring *ring, int count, int ordered)
{
	long results[8][2];
	int submitted = io_uring_submit(ring);
	say_value("submitted", submitted);
	/* A batch stops at an entry that fails early: wait for no more. */
	if (submitted >= 0 && submitted < count)
		count = submitted;
	for (int i = 0; i < count && i < 8; i++) {
		struct io_uring_cqe *cqe;
		int error = io_uring_wait_cqe(ring, &cqe);
		if (error) {
			say_raw("wait", error);
			return;
		}
		results[i][0] = cqe->user_data;
		results[i][1] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	for (int i = 0; !ordered && i < count; i++)
		for (int j = i + 1; j < count; j++)
			if (results[j][0] < results[i][0]) {
				long swap[2] = {results[i][0], results[i][1]};
				results[i][0] = results[j][0], results[i][1] = results[j][1];
				results[j][0] = swap[0], results[j][1] = swap[1];
			}
	for (int i = 0; i < count && i < 8; i++) {
		char name[32];
		snprintf(name, sizeof name, "cqe%ld", results[i][0]);
		say_raw(name, results[i][1]);
	}
}

static void reap(struct io_uring *ring, int count)
{
	reap_in(ring, count, 0);
}

static long i386_call2(long nr, long a, long b)
{
	long result;
	__asm__ volatile("int $0x80" : "=a"(result) : "a"(nr), "b"(a), "c"(b) : "memory");
	return result;
}

static int descriptor(const char *kind)
{
	int ends[2];
	if (!strcmp(kind, "pipe"))
		return pipe(ends) ? -1 : ends[1];
	if (!strcmp(kind, "devnull"))
		return open("/dev/null", O_WRONLY);
	if (!strcmp(kind, "badfd"))
		return 99;
	if (!strcmp(kind, "opath"))
		return open(at("f"), O_PATH);
	return open(at("f"), O_RDWR);
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
	CASE("good") {
		io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(entry(&ring, 2), fd, 0);
		reap(&ring, 2);
	}
	else CASE("fsync_badflags") {
		io_uring_prep_fsync(entry(&ring, 1), fd, 0x80);
		reap(&ring, 1);
	}
	else CASE("fsync_addr") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->addr = 1;
		reap(&ring, 1);
	}
	else CASE("sfr_badrange") {
		io_uring_prep_sync_file_range(entry(&ring, 1), fd, 10, -1, 0);
		reap(&ring, 1);
	}
	else CASE("sfr_badflags") {
		io_uring_prep_sync_file_range(entry(&ring, 1), fd, 10, 0, 0xff);
		reap(&ring, 1);
	}
	else CASE("fixed_none") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), 3, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap(&ring, 1);
	}
	else CASE("fixed_beyond") {
		say_raw("register", io_uring_register_files(&ring, &fd, 1));
		io_uring_prep_fsync(sqe = entry(&ring, 1), 3, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_prep_fsync(sqe = entry(&ring, 2), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap(&ring, 2);
	}
	else CASE("register_ring") say_raw("register_ring", io_uring_register_ring_fd(&ring));
	else if (!strcmp(which, "sqe128") || !strcmp(which, "cqe32")) {
		io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(entry(&ring, 2), fd, 0);
		io_uring_prep_fsync(entry(&ring, 3), fd, 0x80);
		reap(&ring, 3);
	}
	else CASE("fixed_pipe") {
		int ends[2];
		if (pipe(ends))
			return 3;
		say_raw("register", io_uring_register_files(&ring, &ends[1], 1));
		io_uring_prep_fsync(sqe = entry(&ring, 1), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap(&ring, 1);
	}
	else CASE("fixed_sparse") {
		say_raw("register", io_uring_register_files_sparse(&ring, 2));
		io_uring_prep_fsync(sqe = entry(&ring, 1), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap(&ring, 1);
	}
	else CASE("fixed_updated") {
		int ends[2];
		if (pipe(ends))
			return 3;
		say_raw("register", io_uring_register_files(&ring, &fd, 1));
		io_uring_prep_files_update(sqe = entry(&ring, 1), &ends[1], 1, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(sqe = entry(&ring, 2), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap_in(&ring, 2, 1);
	}
	else CASE("fixed_direct") {
		say_raw("register", io_uring_register_files(&ring, &fd, 1));
		io_uring_prep_openat_direct(sqe = entry(&ring, 1), AT_FDCWD, "/dev/null", O_WRONLY,
					    0, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(sqe = entry(&ring, 2), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap_in(&ring, 2, 1);
	}
	else CASE("sfr_overflow") {
		io_uring_prep_sync_file_range(entry(&ring, 1), fd, 10, 0x7ffffffffffffffeLL, 0);
		reap(&ring, 1);
	}
	else CASE("sfr_addr") {
		io_uring_prep_sync_file_range(sqe = entry(&ring, 1), fd, 10, 0, 0);
		sqe->addr = 1;
		reap(&ring, 1);
	}
	else CASE("fsync_bufindex") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->buf_index = 1;
		reap(&ring, 1);
	}
	else CASE("fsync_splicefd") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->splice_fd_in = 1;
		reap(&ring, 1);
	}
	else CASE("fsync_bufselect") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		reap(&ring, 1);
	}
	else CASE("fsync_personality") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->personality = 77;
		reap(&ring, 1);
	}
	else CASE("chain") {
		io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(sqe = entry(&ring, 2), fd, IORING_FSYNC_DATASYNC);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_read(entry(&ring, 3), fd, block, 100, 0);
		reap_in(&ring, 3, 1);
	}
	else CASE("chain_broken") {
		io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(sqe = entry(&ring, 2), fd, 0x80);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_write(entry(&ring, 3), fd, "late", 4, 0);
		reap_in(&ring, 3, 1);
	}
	else CASE("openat_sync") {
		io_uring_prep_openat(entry(&ring, 1), AT_FDCWD, at("new"),
				     O_WRONLY | O_CREAT | O_SYNC, 0644);
		reap(&ring, 1);
		say("write", write(fd + 1, "opened by the ring\n", 19));
	}
	else CASE("forked") {
		pid_t child = fork();
		if (child == 0) {
			io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
			sqe->flags |= IOSQE_IO_LINK;
			io_uring_prep_fsync(entry(&ring, 2), fd, 0);
			io_uring_prep_fsync(entry(&ring, 3), fd, 0x80);
			reap(&ring, 3);
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
	else CASE("openat_direct") {
		io_uring_prep_openat(entry(&ring, 1), AT_FDCWD, at("f"), O_WRONLY | O_DIRECT, 0);
		reap(&ring, 1);
		say_value("pwrite", pwrite(fd + 1, "x", 1, 1));
	}
	else CASE("openat2_in_file") {
		int file = open(at("how"), O_RDWR | O_CREAT, 0644);
		if (file < 0 || ftruncate(file, sizeof(struct open_how)))
			return 3;
		struct open_how *how = mmap(NULL, sizeof *how, PROT_READ | PROT_WRITE, MAP_SHARED,
					    file, 0);
		if (how == MAP_FAILED)
			return 3;
		how->flags = O_WRONLY | O_SYNC;
		io_uring_prep_openat2(entry(&ring, 1), AT_FDCWD, at("f"), how);
		reap(&ring, 1);
		say("munmap", munmap(how, sizeof *how));
	}
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
	else {
		char kind[32];
		if (sscanf(which, "fsync_%31s", kind) != 1)
			UNKNOWN();
		io_uring_prep_fsync(entry(&ring, 1), descriptor(kind), 0);
		reap(&ring, 1);
	}
	return 0;
}
