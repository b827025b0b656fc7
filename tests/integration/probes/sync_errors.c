/* Checks the errors a sync call gives on bad arguments; the same with and
 * without the library.
 *
 * usage: sync_errors FILE
 * Prints one line per case, "name: errno-name", for the test to compare. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errno_name.h"

/* errno is set to this before each call: a success must leave it. */
#define UNTOUCHED 4242

static void show(const char *what, int result)
{
	if (result == 0)
		printf("%s: %s\n", what, errno == UNTOUCHED ? "ok" : "ok, but errno changed");
	else
		printf("%s: %s\n", what, errno_name(errno));
	errno = UNTOUCHED;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	int closed = dup(fd);
	close(closed);
	int path_only = open(argv[1], O_PATH);
	int pipe_ends[2], sockets[2];
	if (fd < 0 || path_only < 0 || pipe(pipe_ends) || socketpair(AF_UNIX, SOCK_STREAM, 0, sockets))
		return 1;

	errno = UNTOUCHED;
	show("fsync(-1)", fsync(-1));
	show("fsync(closed)", fsync(closed));
	show("fsync(O_PATH)", fsync(path_only));
	show("fsync(pipe)", fsync(pipe_ends[1]));
	show("fsync(socket)", fsync(sockets[0]));
	show("fsync(file)", fsync(fd));
	show("fdatasync(closed)", fdatasync(closed));
	show("fdatasync(pipe)", fdatasync(pipe_ends[0]));
	show("syncfs(-1)", syncfs(-1));
	show("syncfs(O_PATH)", syncfs(path_only));
	show("syncfs(pipe)", syncfs(pipe_ends[0]));
	show("sync_file_range(-1)", sync_file_range(-1, 0, 0, 0));
	show("sync_file_range(bad flags)", sync_file_range(fd, 0, 0, 0x80));
	show("sync_file_range(negative)", sync_file_range(fd, -1, 0, 0));
	show("sync_file_range(pipe)", sync_file_range(pipe_ends[0], 0, 0, 0));
	show("sync_file_range(file)", sync_file_range(fd, 0, 4096, SYNC_FILE_RANGE_WRITE));

	/* Files whose file system or driver has no fsync: the kernel refuses. */
	const char *devices[] = { "/dev/null", "/dev/zero", "/proc/self/status" };
	for (int i = 0; i < 3; i++) {
		char what[64];
		int dev = open(devices[i], O_RDONLY);
		if (dev < 0)
			return 1;
		snprintf(what, sizeof what, "fsync(%s)", devices[i]);
		show(what, fsync(dev));
		snprintf(what, sizeof what, "fdatasync(%s)", devices[i]);
		show(what, fdatasync(dev));
		snprintf(what, sizeof what, "sync_file_range(%s)", devices[i]);
		show(what, sync_file_range(dev, 0, 0, 0));
		snprintf(what, sizeof what, "syncfs(%s)", devices[i]);
		show(what, syncfs(dev));
		close(dev);
	}
	int event = eventfd(0, 0);
	if (event < 0)
		return 1;
	show("fsync(eventfd)", fsync(event));
	show("sync_file_range(eventfd)", sync_file_range(event, 0, 0, 0));
	/* A folder and a tmpfs file can be synced. */
	int folder = open(".", O_RDONLY | O_DIRECTORY);
	show("fsync(folder)", fsync(folder));
	int shm = open("/dev/shm", O_RDWR | O_TMPFILE, 0600);
	show("fsync(tmpfs)", shm < 0 ? 0 : fsync(shm));

	long page = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, (size_t)page * 2, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(map + page, (size_t)page);
	show("msync(unaligned)", msync(map + 1, 1, MS_SYNC));
	show("msync(both flags)", msync(map, (size_t)page, MS_SYNC | MS_ASYNC));
	show("msync(unmapped)", msync(map + page, (size_t)page, MS_SYNC));
	show("msync(mapped)", msync(map, (size_t)page, MS_SYNC));
	return 0;
}
