/* A build step's writes, for the barrier at its end:
 *
 *   step_files DIR N sync|nosync
 *
 * makes DIR if missing, prints `step_start=NS`, writes N files DIR/file-0 .. DIR/file-(N-1) of one
 * block each, each fsynced before it is closed when asked (`sync`), then
 * prints `step_end=NS` once the last one is closed: NS is CLOCK_REALTIME in
 * nanoseconds, the clock strace -ttt shows. Exits 1 on any failure.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 4)
        return 2;
    int n = atoi(argv[2]);
    int sync = strcmp(argv[3], "sync") == 0;
    char block[4096];
    memset(block, 'x', sizeof block);
    mkdir(argv[1], 0755);
    printf("step_start=%lld\n", now_ns());
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/file-%d", argv[1], i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, block, sizeof block) != (ssize_t)sizeof block) {
            perror(path);
            return 1;
        }
        if (sync && fsync(fd) != 0) {
            perror("fsync");
            return 1;
        }
        close(fd);
    }
    printf("step_end=%lld\n", now_ns());
    fflush(stdout);
    return 0;
}
