/* A liburing program: flushes through io_uring, which no preload sees
 * (liburing enters the kernel with inline system calls and writes the
 * submission entries straight into the shared ring).
 *
 *   uring_probe chain FILE      one submission of linked and plain entries;
 *                               one line per completion: cqe_UD=RES, and
 *                               openat_sync=kept|dropped for an OPENAT O_SYNC
 *   uring_probe loop FILE N     N times: a write linked to an fsync
 *   uring_probe sqpoll FILE N   the same on an IORING_SETUP_SQPOLL ring;
 *                               says whether liburing still sees SQPOLL
 *   uring_probe range FILE      writes 1 MiB to FILE, then asks for it to be
 *                               written out and waited for with an
 *                               IORING_OP_SYNC_FILE_RANGE: range=RES
 *   uring_probe bad FILE        bad input: NAME=0 or NAME=ERRNONAME
 *   uring_probe parent          how many io_uring mappings the parent holds
 *                               while a ring is in use, and after it is
 *                               closed: held=N released=N
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char block[4096];

static int fail(const char *what, int error) {
    fprintf(stderr, "%s: %s\n", what, strerror(error < 0 ? -error : error));
    return 1;
}

static struct io_uring_sqe *next(struct io_uring *ring) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    if (!sqe) {
        fail("no entry free", ENOSPC);
        exit(1);
    }
    return sqe;
}

/* After io_uring_prep_*, which clears the flags. */
static void mark(struct io_uring_sqe *sqe, unsigned long long user_data, unsigned char flags) {
    sqe->user_data = user_data;
    sqe->flags = flags;
}

/* Waits for `count` completions and prints them in user_data order; the
 * result of user_data `keep` is returned through `kept`. */
static int reap(struct io_uring *ring, int count, int keep, int *kept) {
    int results[32];
    for (int i = 0; i < 32; i++) results[i] = 1;
    for (int i = 0; i < count; i++) {
        struct io_uring_cqe *cqe;
        int error = io_uring_wait_cqe(ring, &cqe);
        if (error) return fail("wait", error);
        if (cqe->user_data < 32) results[cqe->user_data] = cqe->res;
        io_uring_cqe_seen(ring, cqe);
    }
    for (int i = 0; i < 32; i++) {
        if (results[i] == 1) continue;
        if (i == keep) *kept = results[i];
        if (results[i] >= 0 && i != keep)
            printf("cqe_%d=%d\n", i, results[i]);
        else if (results[i] < 0)
            printf("cqe_%d=%s\n", i, strerrorname_np(-results[i]));
    }
    return 0;
}

static int chain(const char *path) {
    struct io_uring ring;
    int error = io_uring_queue_init(16, &ring, 0);
    if (error) return fail("init", error);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return fail("open", errno);
    /* 1 -> 2 -> 3: a write, an fsync, a write with RWF_DSYNC, linked. */
    struct io_uring_sqe *sqe = next(&ring);
    io_uring_prep_write(sqe, fd, block, sizeof block, 0);
    mark(sqe, 1, IOSQE_IO_LINK);
    io_uring_prep_fsync(sqe = next(&ring), fd, 0);
    mark(sqe, 2, IOSQE_IO_LINK);
    io_uring_prep_write(sqe = next(&ring), fd, block, sizeof block, 4096);
    sqe->rw_flags = RWF_DSYNC;
    mark(sqe, 3, 0);
    io_uring_prep_fsync(sqe = next(&ring), fd, IORING_FSYNC_DATASYNC);
    mark(sqe, 4, IOSQE_IO_DRAIN);
    io_uring_prep_sync_file_range(sqe = next(&ring), fd, 8192, 0, SYNC_FILE_RANGE_WRITE);
    mark(sqe, 5, 0);
    io_uring_prep_openat(sqe = next(&ring), AT_FDCWD, path, O_WRONLY | O_SYNC, 0);
    mark(sqe, 6, 0);
    /* Errors stay errors: an fsync of no descriptor; a failed link cancels
     * the fsync after it. */
    io_uring_prep_fsync(sqe = next(&ring), 999, 0);
    mark(sqe, 7, 0);
    io_uring_prep_write(sqe = next(&ring), 999, block, sizeof block, 0);
    mark(sqe, 8, IOSQE_IO_LINK);
    io_uring_prep_fsync(sqe = next(&ring), fd, 0);
    mark(sqe, 9, 0);
    int submitted = io_uring_submit(&ring);
    if (submitted != 9) return fail("submit", submitted < 0 ? submitted : EIO);
    int opened = -1;
    if (reap(&ring, 9, 6, &opened)) return 1;
    if (opened < 0) return 1;
    printf("openat_sync=%s\n", (fcntl(opened, F_GETFL) & O_SYNC) == O_SYNC ? "kept" : "dropped");
    io_uring_queue_exit(&ring);
    return 0;
}

/* `count` writes, each linked to an fsync, on a ring made with `flags`. */
static int loop(const char *path, long count, unsigned flags) {
    struct io_uring ring;
    int error = io_uring_queue_init(8, &ring, flags);
    if (error) return fail("init", error);
    if (flags & IORING_SETUP_SQPOLL)
        printf("sqpoll_seen=%s\n", ring.flags & IORING_SETUP_SQPOLL ? "yes" : "no");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return fail("open", errno);
    for (long i = 0; i < count; i++) {
        struct io_uring_sqe *sqe = next(&ring);
        io_uring_prep_write(sqe, fd, block, sizeof block, (i % 16) * 4096);
        mark(sqe, 10, IOSQE_IO_LINK);
        io_uring_prep_fsync(sqe = next(&ring), fd, 0);
        mark(sqe, 11, 0);
        if (io_uring_submit(&ring) != 2) return fail("submit", EIO);
        for (int j = 0; j < 2; j++) {
            struct io_uring_cqe *cqe;
            if ((error = io_uring_wait_cqe(&ring, &cqe))) return fail("wait", error);
            if (cqe->res < 0) return fail("completion", cqe->res);
            io_uring_cqe_seen(&ring, cqe);
        }
    }
    printf("synced=%ld\n", count);
    io_uring_queue_exit(&ring);
    return 0;
}

static int range(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return fail("open", errno);
    for (int i = 0; i < 256; i++)
        if (pwrite(fd, block, sizeof block, i * 4096L) != sizeof block) return fail("pwrite", errno);
    struct io_uring ring;
    int error = io_uring_queue_init(4, &ring, 0);
    if (error) return fail("init", error);
    struct io_uring_sqe *sqe = next(&ring);
    unsigned flags = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
    io_uring_prep_sync_file_range(sqe, fd, 0, 0, flags);
    mark(sqe, 12, 0);
    if (io_uring_submit(&ring) != 1) return fail("submit", EIO);
    int result = 0;
    if (reap(&ring, 1, 12, &result)) return 1;
    printf("range=%d\n", result);
    return 0;
}

static void show(const char *name, long result) {
    if (result >= 0)
        printf("%s=0\n", name);
    else
        printf("%s=%s\n", name, strerrorname_np(errno));
}

static int bad(const char *path) {
    show("setup_badparams", syscall(__NR_io_uring_setup, 4, (void *)8));
    show("enter_badfd", syscall(__NR_io_uring_enter, 999, 1, 0, 0, NULL, 0));
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    show("enter_notaring", syscall(__NR_io_uring_enter, fd, 1, 0, 0, NULL, 0));
    /* A ring torn down with work in flight, then a new one. */
    struct io_uring ring;
    if (io_uring_queue_init(8, &ring, 0)) return 1;
    io_uring_prep_write(next(&ring), fd, block, sizeof block, 0);
    io_uring_prep_fsync(next(&ring), fd, 0);
    show("submit_then_exit", io_uring_submit(&ring) == 2 ? 0 : -1);
    int ring_fd = ring.ring_fd;
    io_uring_queue_exit(&ring);
    show("enter_closed_ring", syscall(__NR_io_uring_enter, ring_fd, 1, 0, 0, NULL, 0));
    return loop(path, 1, 0);
}

/* The parent's mappings of io_uring regions. */
static int parent_rings(void) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)getppid());
    FILE *maps = fopen(path, "r");
    int count = 0;
    while (maps && fgets(line, sizeof line, maps))
        count += strstr(line, "io_uring") != NULL;
    if (maps) fclose(maps);
    return count;
}

static int parent(void) {
    struct io_uring ring;
    if (io_uring_queue_init(4, &ring, 0)) return 1;
    io_uring_prep_nop(next(&ring));
    if (io_uring_submit_and_wait(&ring, 1) != 1) return 1;
    printf("held=%d\n", parent_rings());
    io_uring_queue_exit(&ring);
    /* The supervisor lets a ring go on a 100 ms timer: poll, up to 10 s. */
    int held = parent_rings();
    for (int i = 0; held != 0 && i < 1000; i++) {
        usleep(10 * 1000);
        held = parent_rings();
    }
    printf("released=%d\n", held);
    return 0;
}

int main(int argc, char **argv) {
    memset(block, 'u', sizeof block);
    if (argc == 3 && strcmp(argv[1], "chain") == 0) return chain(argv[2]);
    if (argc == 4 && strcmp(argv[1], "loop") == 0) return loop(argv[2], atol(argv[3]), 0);
    if (argc == 4 && strcmp(argv[1], "sqpoll") == 0)
        return loop(argv[2], atol(argv[3]), IORING_SETUP_SQPOLL);
    if (argc == 3 && strcmp(argv[1], "bad") == 0) return bad(argv[2]);
    if (argc == 3 && strcmp(argv[1], "range") == 0) return range(argv[2]);
    if (argc == 2 && strcmp(argv[1], "parent") == 0) return parent();
    fprintf(stderr, "usage: %s chain FILE | loop FILE N | sqpoll FILE N | range FILE | bad FILE | parent\n",
            argv[0]);
    return 2;
}
