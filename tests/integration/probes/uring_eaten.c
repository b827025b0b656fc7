/* io_uring flushes the library rewrites in the process, through both doors:
 * liburing's submit functions, and syscall() with a ring mapped by hand.
 *
 *   uring_eaten batch FILE N     N writes each linked to an fsync, four
 *                                pairs (8 entries) per io_uring_submit_and_wait
 *   uring_eaten each FILE N      a write, then an fsync, each submitted alone
 *   uring_eaten fixed FILE N     batches on FILE registered, by its slot
 *   uring_eaten sqpoll FILE N    batches on an SQPOLL ring; says whether
 *                                liburing still sees SQPOLL (sqpoll=kept)
 *   uring_eaten bad FILE         entries the kernel answers with an error,
 *                                or with 0 and no disk: NAME=RES per entry
 *   uring_eaten open2 FILE       OPENAT2 with O_DSYNC, from writable,
 *                                read-only and file-shared memory: whether
 *                                the file and the how kept the flag, and
 *                                what the file holds
 *   uring_eaten raw FILE N       N write+fsync pairs on a ring set up, mapped
 *                                and entered through syscall() and mmap()
 *   uring_eaten rawmany FILE N   N rings in turn, by syscall(), each set up,
 *                                used for one write+fsync and unmapped
 *   uring_eaten rawpoll FILE N   the same on an SQPOLL ring, by SQPOLL's rule
 *                                (enter only when NEED_WAKEUP), the file
 *                                registered and used by its fixed slot
 * Prints synced=N after the loops; every completion's result is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static char block[4096];

static void die(const char *what, int error)
{
	fprintf(stderr, "%s: %s\n", what, strerror(error < 0 ? -error : error));
	exit(1);
}

static struct io_uring_sqe *next(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	/* Under SQPOLL the kernel's thread frees entries when it moves the
	 * queue's head, which may come after their completions (a busy
	 * machine): wait for it, as liburing's own callers do. */
	while (!sqe && (ring->flags & IORING_SETUP_SQPOLL)) {
		int error = io_uring_sqring_wait(ring);
		if (error < 0)
			die("sqring_wait", error);
		sqe = io_uring_get_sqe(ring);
	}
	if (!sqe)
		die("no entry free", ENOSPC);
	return sqe;
}

/* Reaps `count` completions, failing on any error. */
static void reap(struct io_uring *ring, int count)
{
	for (int i = 0; i < count; i++) {
		struct io_uring_cqe *cqe;
		int error = io_uring_wait_cqe(ring, &cqe);
		if (error)
			die("wait", error);
		if (cqe->res < 0)
			die("completion", cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
}

static int open_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open", errno);
	return fd;
}

/* Whether entries name the file by its registered slot (0). */
static int by_slot;

static void write_and_fsync(struct io_uring *ring, int fd, long i)
{
	struct io_uring_sqe *sqe = next(ring);
	io_uring_prep_write(sqe, by_slot ? 0 : fd, block, sizeof block, (i % 16) * 4096);
	sqe->flags |= IOSQE_IO_LINK | (by_slot ? IOSQE_FIXED_FILE : 0);
	io_uring_prep_fsync(sqe = next(ring), by_slot ? 0 : fd, i % 2 ? IORING_FSYNC_DATASYNC : 0);
	sqe->flags |= by_slot ? IOSQE_FIXED_FILE : 0;
}

static int batch(const char *path, long count, int alone, unsigned flags)
{
	struct io_uring ring;
	int error = io_uring_queue_init(8, &ring, flags);
	if (error)
		die("init", error);
	if (flags & IORING_SETUP_SQPOLL)
		printf("sqpoll=%s\n", ring.flags & IORING_SETUP_SQPOLL ? "kept" : "dropped");
	int fd = open_file(path);
	if (by_slot && io_uring_register_files(&ring, &fd, 1))
		die("register", EIO);
	for (long i = 0; i < count; i += alone ? 1 : 4) {
		int pairs = alone ? 1 : (count - i < 4 ? count - i : 4);
		for (int p = 0; p < pairs; p++)
			write_and_fsync(&ring, fd, i + p);
		if (alone) {
			if (io_uring_submit(&ring) != 2)
				die("submit", EIO);
			reap(&ring, 2);
		} else {
			if (io_uring_submit_and_wait(&ring, 2 * pairs) != 2 * pairs)
				die("submit_and_wait", EIO);
			reap(&ring, 2 * pairs);
		}
	}
	printf("synced=%ld\n", count);
	io_uring_queue_exit(&ring);
	return 0;
}

/* One entry alone; its result by name. */
static void one(struct io_uring *ring, const char *name)
{
	struct io_uring_cqe *cqe;
	if (io_uring_submit_and_wait(ring, 1) != 1 || io_uring_wait_cqe(ring, &cqe))
		die(name, EIO);
	if (cqe->res >= 0)
		printf("%s=%d\n", name, cqe->res);
	else
		printf("%s=%s\n", name, strerrorname_np(-cqe->res));
	io_uring_cqe_seen(ring, cqe);
}

static int bad(const char *path)
{
	struct io_uring ring;
	if (io_uring_queue_init(4, &ring, 0))
		die("init", EIO);
	int fd = open_file(path);
	int pipes[2];
	if (pipe(pipes))
		die("pipe", errno);
	int null = open("/dev/null", O_WRONLY);
	struct io_uring_sqe *sqe;

	io_uring_prep_fsync(sqe = next(&ring), fd, 0);
	one(&ring, "fsync_file");
	io_uring_prep_fsync(sqe = next(&ring), fd, 2);
	one(&ring, "fsync_unknown_flags");
	io_uring_prep_fsync(sqe = next(&ring), fd, 0);
	sqe->addr = 1;
	one(&ring, "fsync_addr");
	io_uring_prep_fsync(sqe = next(&ring), fd, 0);
	sqe->buf_index = 1;
	one(&ring, "fsync_buf_index");
	io_uring_prep_sync_file_range(sqe = next(&ring), fd, 0, 0, 8);
	one(&ring, "range_bad_flags");
	io_uring_prep_sync_file_range(sqe = next(&ring), fd, 4096, -1LL, 0);
	one(&ring, "range_negative_offset");
	io_uring_prep_fsync(sqe = next(&ring), 0, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	one(&ring, "fsync_unregistered_slot");
	io_uring_prep_fsync(sqe = next(&ring), pipes[1], 0);
	one(&ring, "fsync_pipe");
	io_uring_prep_sync_file_range(sqe = next(&ring), pipes[1], 0, 0, 0);
	one(&ring, "range_pipe");
	io_uring_prep_fsync(sqe = next(&ring), null, 0);
	one(&ring, "fsync_devnull");
	io_uring_prep_fsync(sqe = next(&ring), 999, 0);
	one(&ring, "fsync_badfd");
	if (io_uring_register_files(&ring, &fd, 1))
		die("register", EIO);
	io_uring_prep_fsync(sqe = next(&ring), 0, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	one(&ring, "fsync_registered_slot");
	io_uring_prep_fsync(sqe = next(&ring), 1, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	one(&ring, "fsync_slot_past_the_table");
	if (io_uring_register_files_update(&ring, 0, &pipes[1], 1) != 1)
		die("update", EIO);
	io_uring_prep_fsync(sqe = next(&ring), 0, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	one(&ring, "fsync_slot_now_a_pipe");
	/* A direct open puts /dev/null in slot 0 as the fsync's link waits. */
	int back = fd;
	if (io_uring_register_files_update(&ring, 0, &back, 1) != 1)
		die("update", EIO);
	io_uring_prep_openat_direct(sqe = next(&ring), AT_FDCWD, "/dev/null", O_WRONLY, 0, 0);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_prep_fsync(sqe = next(&ring), 0, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	if (io_uring_submit_and_wait(&ring, 2) != 2)
		die("direct", EIO);
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe(&ring, &cqe))
			die("direct", EIO);
		if (cqe->res < 0)
			printf("direct_%d=%s\n", i, strerrorname_np(-cqe->res));
		else
			printf("direct_%d=%d\n", i, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return 0;
}

/* An OPENAT2 of `path` with O_DSYNC in `how`; whether the file it opened
 * has O_DSYNC, and whether the program's how still asks for it. */
static void open2(struct io_uring *ring, const char *name, const char *path,
		  struct open_how *how)
{
	io_uring_prep_openat2(next(ring), AT_FDCWD, path, how);
	struct io_uring_cqe *cqe;
	if (io_uring_submit_and_wait(ring, 1) != 1 || io_uring_wait_cqe(ring, &cqe))
		die(name, EIO);
	if (cqe->res < 0)
		die(name, cqe->res);
	int flags = fcntl(cqe->res, F_GETFL);
	printf("%s_file=%s\n", name, flags & O_DSYNC ? "dsync" : "plain");
	printf("%s_how=%s\n", name, how->flags & O_DSYNC ? "dsync" : "plain");
	close(cqe->res);
	io_uring_cqe_seen(ring, cqe);
}

static int openat2_cases(const char *path)
{
	struct io_uring ring;
	if (io_uring_queue_init(4, &ring, 0))
		die("init", EIO);
	struct open_how how = { .flags = O_WRONLY | O_CREAT | O_DSYNC, .mode = 0644 };
	open2(&ring, "writable", path, &how);
	struct open_how *fixed = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fixed == MAP_FAILED)
		die("mmap", errno);
	*fixed = how;
	fixed->flags = O_WRONLY | O_CREAT | O_DSYNC;
	if (mprotect(fixed, 4096, PROT_READ))
		die("mprotect", errno);
	open2(&ring, "readonly", path, fixed);
	/* In a shared mapping of a file: a write there would change the file. */
	char name[4096];
	snprintf(name, sizeof name, "%s.how", path);
	int file = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (file < 0 || ftruncate(file, 4096))
		die("how file", errno);
	struct open_how *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
	if (shared == MAP_FAILED)
		die("mmap", errno);
	*shared = how;
	shared->flags = O_WRONLY | O_CREAT | O_DSYNC;
	open2(&ring, "shared", path, shared);
	munmap(shared, 4096);
	struct open_how stored;
	if (pread(file, &stored, sizeof stored, 0) != sizeof stored)
		die("pread", errno);
	printf("shared_stored=%s\n", stored.flags & O_DSYNC ? "dsync" : "plain");
	io_uring_queue_exit(&ring);
	return 0;
}

/* A ring by hand: setup, mmap and enter through libc. */
struct raw_ring {
	int fd;
	unsigned *head, *tail, *mask, *flags, *array;
	struct io_uring_sqe *sqes;
	unsigned *cq_head, *cq_tail, cq_mask;
	struct io_uring_cqe *cqes;
	int sqpoll;
	void *maps[3];
	size_t lens[3];
};

static void raw_setup(struct raw_ring *r, unsigned flags)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	p.flags = flags;
	p.sq_thread_idle = 10;
	r->fd = syscall(__NR_io_uring_setup, 8, &p);
	if (r->fd < 0)
		die("io_uring_setup", errno);
	if (p.flags != flags)
		die("the params' flags changed", EPROTO);
	r->sqpoll = !!(flags & IORING_SETUP_SQPOLL);
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			r->fd, IORING_OFF_SQ_RING);
	char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		die("mmap", errno);
	r->maps[0] = sq, r->lens[0] = sq_len;
	r->maps[1] = cq, r->lens[1] = cq_len;
	r->maps[2] = r->sqes, r->lens[2] = p.sq_entries * sizeof(struct io_uring_sqe);
	r->head = (unsigned *)(sq + p.sq_off.head);
	r->tail = (unsigned *)(sq + p.sq_off.tail);
	r->mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->flags = (unsigned *)(sq + p.sq_off.flags);
	r->array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = *(unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
}

static struct io_uring_sqe *raw_entry(struct raw_ring *r, unsigned n)
{
	unsigned tail = *r->tail + n;
	unsigned index = tail & *r->mask;
	r->array[index] = index;
	struct io_uring_sqe *sqe = &r->sqes[index];
	memset(sqe, 0, sizeof *sqe);
	return sqe;
}

/* Publishes `n` entries and enters as the ring's rule says; reaps them. */
static void raw_submit(struct raw_ring *r, unsigned n)
{
	__atomic_store_n(r->tail, *r->tail + n, __ATOMIC_RELEASE);
	if (!r->sqpoll) {
		if (syscall(__NR_io_uring_enter, r->fd, n, n, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
			die("io_uring_enter", errno);
	} else if (__atomic_load_n(r->flags, __ATOMIC_ACQUIRE) & IORING_SQ_NEED_WAKEUP) {
		if (syscall(__NR_io_uring_enter, r->fd, n, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0) < 0)
			die("io_uring_enter", errno);
	}
	for (unsigned done = 0; done < n;) {
		unsigned head = *r->cq_head;
		if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
			if (!r->sqpoll)
				die("no completion", EIO);
			syscall(__NR_io_uring_enter, r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
			continue;
		}
		struct io_uring_cqe *cqe = &r->cqes[head & r->cq_mask];
		if (cqe->res < 0)
			die("completion", cqe->res);
		__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
		done++;
	}
}

static void raw_unmap(struct raw_ring *r)
{
	for (int i = 0; i < 3; i++)
		if (munmap(r->maps[i], r->lens[i]))
			die("munmap", errno);
}

static void raw_pair(struct raw_ring *r, int target, unsigned char fixed, long i);

/* `count` rings in turn, each for one pair, then unmapped but kept open
 * to the end, so that each has a descriptor of its own: more than the
 * library's table holds at once, so a ring unmapped must leave its slot. */
static int raw_many(const char *path, long count)
{
	int fd = open_file(path);
	int rings[256];
	if (count > 256)
		die("at most 256 rings", EINVAL);
	for (long i = 0; i < count; i++) {
		struct raw_ring r;
		raw_setup(&r, 0);
		raw_pair(&r, fd, 0, i);
		raw_unmap(&r);
		rings[i] = r.fd;
	}
	for (long i = 0; i < count; i++)
		close(rings[i]);
	printf("synced=%ld\n", count);
	return 0;
}

static int raw(const char *path, long count, int sqpoll)
{
	struct raw_ring r;
	raw_setup(&r, sqpoll ? IORING_SETUP_SQPOLL : 0);
	int fd = open_file(path);
	int target = fd;
	unsigned char fixed = 0;
	if (sqpoll) {
		if (syscall(__NR_io_uring_register, r.fd, IORING_REGISTER_FILES, &fd, 1))
			die("register", errno);
		target = 0;
		fixed = IOSQE_FIXED_FILE;
	}
	for (long i = 0; i < count; i++)
		raw_pair(&r, target, fixed, i);
	printf("synced=%ld\n", count);
	close(r.fd);
	return 0;
}

/* A write of block i linked to an fsync, submitted and reaped. */
static void raw_pair(struct raw_ring *r, int target, unsigned char fixed, long i)
{
	struct io_uring_sqe *sqe = raw_entry(r, 0);
	sqe->opcode = IORING_OP_WRITE;
	sqe->fd = target;
	sqe->flags = fixed | IOSQE_IO_LINK;
	sqe->addr = (unsigned long)block;
	sqe->len = sizeof block;
	sqe->off = (i % 16) * 4096;
	sqe = raw_entry(r, 1);
	sqe->opcode = IORING_OP_FSYNC;
	sqe->fd = target;
	sqe->flags = fixed;
	raw_submit(r, 2);
}

int main(int argc, char **argv)
{
	memset(block, 'e', sizeof block);
	if (argc == 4 && !strcmp(argv[1], "batch"))
		return batch(argv[2], atol(argv[3]), 0, 0);
	if (argc == 4 && !strcmp(argv[1], "each"))
		return batch(argv[2], atol(argv[3]), 1, 0);
	if (argc == 4 && !strcmp(argv[1], "fixed")) {
		by_slot = 1;
		return batch(argv[2], atol(argv[3]), 0, 0);
	}
	if (argc == 4 && !strcmp(argv[1], "sqpoll"))
		return batch(argv[2], atol(argv[3]), 0, IORING_SETUP_SQPOLL);
	if (argc == 3 && !strcmp(argv[1], "bad"))
		return bad(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "open2"))
		return openat2_cases(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "raw"))
		return raw(argv[2], atol(argv[3]), 0);
	if (argc == 4 && !strcmp(argv[1], "rawmany"))
		return raw_many(argv[2], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "rawpoll"))
		return raw(argv[2], atol(argv[3]), 1);
	fprintf(stderr, "usage: %s batch|each|fixed|sqpoll|raw|rawmany|rawpoll FILE N | bad FILE | open2 FILE\n", argv[0]);
	return 2;
}
