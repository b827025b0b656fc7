/* pwritev2 with per-write sync flags, and fcntl with O_DIRECT and with
 * commands whose argument is an int or a pointer.
 *
 * usage: write_flags FILE
 * Prints what each call gave (pwritev2 only where libc has it). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
#ifdef RWF_DSYNC
	struct iovec iov[2] = { { "hello ", 6 }, { "world\n", 6 } };
	printf("pwritev2 dsync: %zd\n", pwritev2(fd, iov, 2, 0, RWF_DSYNC));
	printf("pwritev2 sync+append: %zd\n", pwritev2(fd, iov, 1, -1, RWF_SYNC | RWF_APPEND));
	printf("pwritev64v2 dsync: %zd\n", pwritev64v2(fd, iov + 1, 1, 18, RWF_DSYNC));

	char back[64] = { 0 };
	printf("content: %zd %s", pread(fd, back, sizeof back - 1, 0), back);
	putchar('\n');
#else
	/* musl (1.2.3) has no pwritev2: the fcntl half still runs. */
	printf("pwritev2: not in this libc\n");
#endif

	int set = fcntl(fd, F_SETFL, O_DIRECT | O_APPEND);
	int flags = fcntl(fd, F_GETFL);
	printf("setfl: %d append=%d direct=%d\n", set, (flags & O_APPEND) != 0, (flags & O_DIRECT) != 0);
	printf("dupfd_cloexec >= 100: %d\n", fcntl(fd, F_DUPFD_CLOEXEC, 100) >= 100);
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	printf("setlk: %d\n", fcntl(fd, F_SETLK, &lock));
	lock.l_type = F_RDLCK;
	int got = fcntl(fd, F_GETLK, &lock);
	printf("getlk: %d type=%s\n", got, lock.l_type == F_UNLCK ? "unlocked" : "locked");
	int set_fd = fcntl(fd, F_SETFD, FD_CLOEXEC);
	printf("setfd/getfd: %d %d\n", set_fd, fcntl(fd, F_GETFD));
	printf("fcntl(-1): %d\n", fcntl(-1, F_GETFL));
	return 0;
}
