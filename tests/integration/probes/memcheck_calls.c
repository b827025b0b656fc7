/*
 * Every hook once or more, for valgrind's memcheck: the variadic opens with
 * and without a mode, fcntl with int and pointer arguments, syscall(2) with
 * sync and other numbers, pwritev2, msync, and the calls from threads.
 *
 *   memcheck_calls DIR   prints "osync=N direct=N" from fcntl(F_GETFL)
 *                        of a file opened O_SYNC|O_DIRECT: 0 0 under the
 *                        library, 1 1 without it (when DIR allows O_DIRECT).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static char path[4096];

#define CHECK(cond)                                                           \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "memcheck_calls:%d: %s: %s\n",        \
				__LINE__, #cond, strerror(errno));            \
			exit(1);                                              \
		}                                                             \
	} while (0)

static void *calls(void *arg)
{
	(void)arg;
	int fd = open(path, O_RDWR | O_CREAT | O_DSYNC, 0600);
	CHECK(fd >= 0);
	char buf[4096];
	memset(buf, 'm', sizeof buf);
	struct iovec iov = { buf, sizeof buf };
	CHECK(pwritev2(fd, &iov, 1, 0, RWF_SYNC | RWF_DSYNC) == sizeof buf);
	CHECK(fsync(fd) == 0 && fdatasync(fd) == 0 && syncfs(fd) == 0);
	CHECK(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0);
	CHECK(syscall(SYS_fsync, fd) == 0 && syscall(SYS_fdatasync, fd) == 0);
	CHECK(syscall(SYS_getpid) == getpid());
	void *map = mmap(NULL, sizeof buf, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(map != MAP_FAILED);
	CHECK(msync(map, sizeof buf, MS_SYNC) == 0 && munmap(map, sizeof buf) == 0);
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	CHECK(fcntl(fd, F_GETLK, &lock) == 0);
	CHECK(fcntl(fd, F_SETFL, O_APPEND | O_DIRECT) == 0 || errno == EINVAL);
	CHECK(fsync(-1) == -1 && errno == EBADF);
	CHECK(close(fd) == 0);
	int dirfd = open(".", O_RDONLY | O_DIRECTORY);
	CHECK(dirfd >= 0);
	fd = openat(dirfd, path, O_RDONLY | O_SYNC);
	CHECK(fd >= 0 && close(fd) == 0 && close(dirfd) == 0);
	sync();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	snprintf(path, sizeof path, "%s/memcheck.dat", argv[1]);
	pthread_t threads[4];
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&threads[i], NULL, calls, NULL) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(pthread_join(threads[i], NULL) == 0);

	char direct_path[4200];
	snprintf(direct_path, sizeof direct_path, "%s.direct", path);
	int fd = open(direct_path, O_WRONLY | O_CREAT | O_SYNC | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL) /* a file system without O_DIRECT */
		fd = open(direct_path, O_WRONLY | O_CREAT | O_SYNC, 0600);
	CHECK(fd >= 0);
	int flags = fcntl(fd, F_GETFL);
	CHECK(flags >= 0 && close(fd) == 0);
	printf("osync=%d direct=%d\n", (flags & O_SYNC) == O_SYNC, (flags & O_DIRECT) != 0);
	return 0;
}
