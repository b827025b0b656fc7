/* Sync calls whose real answer differs from the filter's, so that a test can
 * tell that the kernel never ran them; built -static for seccomp mode and
 * without it for the control.
 *
 *   seccomp_sync calls          one line per call: NAME=0 or NAME=ERRNONAME
 *   seccomp_sync loop FILE N    N times: write a block to FILE, fsync it
 *   seccomp_sync timed FILE N   the same, and how long the fsyncs took:
 *                               synced N in SECONDS s
 *   seccomp_sync whoami         euid, NoNewPrivs and Seccomp of this process
 *   seccomp_sync flags FILE N   opens FILE with O_SYNC, O_DSYNC (open, openat,
 *                               openat2) and O_DIRECT and says whether each
 *                               flag is kept; writes N blocks through the
 *                               O_SYNC descriptor and N with pwritev2
 *                               RWF_DSYNC; then bad input, NAME=ERRNONAME
 *   seccomp_sync threads FILE   8 threads, each opening FILE with O_SYNC 50
 *                               times and fsyncing it: threads_kept=N
 *                               (opens that kept O_SYNC), threads_failed=N
 */
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void show(const char *name, long result) {
    if (result == 0)
        printf("%s=0\n", name);
    else
        printf("%s=%s\n", name, strerrorname_np(errno));
}

/* A raw system call's -errno answer, shown as libc's would be. */
static void show_raw(const char *name, long result) {
    if (result < 0 && result > -4096) {
        errno = (int)-result;
        result = -1;
    }
    show(name, result);
}

#ifdef __x86_64__
/* The i386 ABI, entered from 64-bit code: the kernel reports AUDIT_ARCH_I386. */
static long i386_call(long nr, long arg) {
    long result;
    __asm__ volatile("int $0x80" : "=a"(result) : "a"(nr), "b"(arg) : "memory");
    return result;
}

/* The x32 ABI: AUDIT_ARCH_X86_64 with bit 30 in the number. */
static long x32_call(long nr, long arg) {
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"(0x40000000L | nr), "D"(arg)
                     : "rcx", "r11", "memory");
    return result;
}
#endif

static int calls(void) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return 1;
    int w = pipe_fds[1];
    /* Each fails for real: a pipe cannot be synced or ranged, -1 is no
     * descriptor, msync wants an aligned address. */
    show("fsync_pipe", fsync(w));
    show("fdatasync_pipe", fdatasync(w));
    show("fsync_badfd", fsync(-1));
    show("syncfs_badfd", syncfs(-1));
    show("sync_file_range_pipe", sync_file_range(w, 0, 0, SYNC_FILE_RANGE_WRITE));
    char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 1;
    show("msync_unaligned", msync(page + 1, 1, MS_SYNC));
    show("raw_fsync_pipe", syscall(SYS_fsync, w));
#ifdef __x86_64__
    show_raw("i386_fsync_pipe", i386_call(118, w));
    show_raw("x32_fsync_pipe", x32_call(74, w));
    /* Calls the filter must leave alone, in each ABI. */
    printf("i386_getpid=%s\n", i386_call(20, 0) == getpid() ? "same" : "differs");
    show_raw("x32_close_badfd", x32_call(3, -1));
#endif
    show("write_pipe", write(w, "x", 1) == 1 ? 0 : -1);
    return 0;
}

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

/* With `timed`, also says how long its fsyncs took, together. */
static int loop(const char *path, long count, int timed) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror(path); return 1; }
    char block[4096];
    memset(block, 'x', sizeof block);
    double in_fsync = 0;
    for (long i = 0; i < count; i++) {
        if (pwrite(fd, block, sizeof block, (off_t)(i % 16) * 4096) != sizeof block) { perror("pwrite"); return 1; }
        double start = seconds();
        if (fsync(fd) != 0) { perror("fsync"); return 1; }
        in_fsync += seconds() - start;
    }
    if (timed)
        printf("synced %ld in %.6f s\n", count, in_fsync);
    else
        printf("synced %ld\n", count);
    return close(fd);
}

static int whoami(void) {
    printf("euid=%d\n", (int)geteuid());
    FILE *status = fopen("/proc/self/status", "r");
    if (!status) return 1;
    char line[256];
    while (fgets(line, sizeof line, status))
        if (strncmp(line, "NoNewPrivs:", 11) == 0 || strncmp(line, "Seccomp:", 8) == 0)
            fputs(line, stdout);
    return fclose(status);
}

/* Whether descriptor `fd` (or the error that came instead) kept `flag`. */
static void kept(const char *name, int fd, int flag) {
    if (fd < 0)
        printf("%s=%s\n", name, strerrorname_np(errno));
    else
        printf("%s=%s\n", name, (fcntl(fd, F_GETFL) & flag) == flag ? "kept" : "dropped");
}

static int flags(const char *path, long count) {
    int synced = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_SYNC | O_CLOEXEC, 0640);
    kept("open_sync", synced, O_SYNC);
    printf("open_cloexec=%s\n", fcntl(synced, F_GETFD) & FD_CLOEXEC ? "yes" : "no");
    int dsynced = openat(AT_FDCWD, path, O_WRONLY | O_DSYNC);
    kept("openat_dsync", dsynced, O_DSYNC);
    printf("openat_cloexec=%s\n", fcntl(dsynced, F_GETFD) & FD_CLOEXEC ? "yes" : "no");
    struct open_how how = {.flags = O_WRONLY | O_SYNC};
    kept("openat2_sync", (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how), O_SYNC);
    kept("open_direct", open(path, O_RDONLY | O_DIRECT), O_DIRECT);
    if (synced < 0 || dsynced < 0) return 1;
    char block[4096];
    memset(block, 'e', sizeof block);
    struct iovec iov = {block, sizeof block};
    for (long i = 0; i < count; i++) {
        if (write(synced, block, sizeof block) != sizeof block) { perror("write"); return 1; }
        if (pwritev2(dsynced, &iov, 1, (off_t)(count + i) * 4096, RWF_DSYNC) != sizeof block) {
            perror("pwritev2");
            return 1;
        }
    }
    printf("written=%ld\n", 2 * count);
    /* Bad input gets what the kernel gives it. */
    show("open_badpath", open((const char *)8, O_WRONLY | O_SYNC) < 0 ? -1 : 0);
    show("open_missing", open("/nonexistent/file", O_WRONLY | O_SYNC) < 0 ? -1 : 0);
    show("openat_baddirfd", openat(99, "x", O_WRONLY | O_DSYNC) < 0 ? -1 : 0);
    show("openat2_badhow", syscall(SYS_openat2, AT_FDCWD, path, (void *)8, sizeof how) < 0 ? -1 : 0);
    show("pwritev2_badiov", pwritev2(dsynced, (void *)8, 1, 0, RWF_DSYNC) < 0 ? -1 : 0);
    show("pwritev2_badfd", pwritev2(99, &iov, 1, 0, RWF_DSYNC) < 0 ? -1 : 0);
    show("fsync_closed", fsync(99));
    show("fsync_file", fsync(synced));
    return 0;
}

static const char *shared_path;
static int kept_count, failed_count;
static pthread_mutex_t counts = PTHREAD_MUTEX_INITIALIZER;

static void *opener(void *unused) {
    (void)unused;
    for (int i = 0; i < 50; i++) {
        int fd = open(shared_path, O_WRONLY | O_CREAT | O_SYNC, 0644);
        int kept = fd >= 0 && (fcntl(fd, F_GETFL) & O_SYNC) == O_SYNC;
        int failed = fd < 0 || write(fd, "t", 1) != 1 || fsync(fd) != 0 || close(fd) != 0;
        pthread_mutex_lock(&counts);
        kept_count += kept;
        failed_count += failed;
        pthread_mutex_unlock(&counts);
    }
    return NULL;
}

static int threads(const char *path) {
    shared_path = path;
    pthread_t ids[8];
    for (int i = 0; i < 8; i++)
        if (pthread_create(&ids[i], NULL, opener, NULL) != 0) return 1;
    for (int i = 0; i < 8; i++) pthread_join(ids[i], NULL);
    printf("threads_kept=%d\nthreads_failed=%d\n", kept_count, failed_count);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "calls") == 0) return calls();
    if (argc == 4 && strcmp(argv[1], "loop") == 0) return loop(argv[2], atol(argv[3]), 0);
    if (argc == 4 && strcmp(argv[1], "timed") == 0) return loop(argv[2], atol(argv[3]), 1);
    if (argc == 2 && strcmp(argv[1], "whoami") == 0) return whoami();
    if (argc == 4 && strcmp(argv[1], "flags") == 0) return flags(argv[2], atol(argv[3]));
    if (argc == 3 && strcmp(argv[1], "threads") == 0) return threads(argv[2]);
    fprintf(stderr, "usage: %s calls | loop FILE N | timed FILE N | whoami | flags FILE N | threads FILE\n", argv[0]);
    return 2;
}
