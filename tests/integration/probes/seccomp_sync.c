/* Sync calls whose real answer differs from the filter's, so that a test can
 * tell that the kernel never ran them; built -static for seccomp mode and
 * without it for the control.
 *
 *   seccomp_sync calls          one line per call: NAME=0 or NAME=ERRNONAME
 *   seccomp_sync loop FILE N    N times: write a block to FILE, fsync it
 *   seccomp_sync whoami         euid, NoNewPrivs and Seccomp of this process
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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

static int loop(const char *path, long count) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror(path); return 1; }
    char block[4096];
    memset(block, 'x', sizeof block);
    for (long i = 0; i < count; i++) {
        if (pwrite(fd, block, sizeof block, (off_t)(i % 16) * 4096) != sizeof block) { perror("pwrite"); return 1; }
        if (fsync(fd) != 0) { perror("fsync"); return 1; }
    }
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

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "calls") == 0) return calls();
    if (argc == 4 && strcmp(argv[1], "loop") == 0) return loop(argv[2], atol(argv[3]));
    if (argc == 2 && strcmp(argv[1], "whoami") == 0) return whoami();
    fprintf(stderr, "usage: %s calls | loop FILE N | whoami\n", argv[0]);
    return 2;
}
