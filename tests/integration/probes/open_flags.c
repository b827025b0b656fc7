/* Opens files every way libc offers with the sync flags, and prints what
 * each descriptor got: the flags the kernel kept, and the mode created.
 *
 * usage: open_flags DIR
 * Built plain and with -O2 -D_FORTIFY_SOURCE=2, where the two-argument
 * calls below go to glibc's __open_2, __open64_2, __openat_2, __openat64_2. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Flags the compiler cannot see through, so fortified calls stay fortified. */
static volatile int sync_flags = O_SYNC | O_DSYNC | O_DIRECT;

static void show(const char *how, int fd)
{
	if (fd < 0) {
		printf("%s: failed\n", how);
		return;
	}
	struct stat st;
	int flags = fcntl(fd, F_GETFL);
	fstat(fd, &st);
	printf("%s: sync=%d dsync=%d direct=%d mode=%04o\n", how,
	       (flags & O_SYNC) == O_SYNC, (flags & O_DSYNC) != 0,
	       (flags & O_DIRECT) != 0, (unsigned)(st.st_mode & 07777));
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 2 || chdir(argv[1]) != 0)
		return 2;
	umask(0);
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	int create = O_RDWR | O_CREAT | sync_flags;
	int reopen = O_RDWR | sync_flags;

	show("open", open("f-open", create, 01755));
	show("open64", open64("f-open64", create, 01755));
	show("openat", openat(dir, "f-openat", create, 01755));
	show("openat64", openat64(dir, "f-openat64", create, 01755));
	show("open reopen", open("f-open", reopen));
	show("open64 reopen", open64("f-open64", reopen));
	show("openat reopen", openat(dir, "f-openat", reopen));
	show("openat64 reopen", openat64(dir, "f-openat64", reopen));
	show("tmpfile", open(".", O_TMPFILE | O_RDWR | (sync_flags & ~O_DIRECT), 0640));
	return 0;
}
