/*
 * Many threads at once open, write, sync, fork and exec, each checking what
 * it wrote. Under the library every hook is entered concurrently, in
 * children forked from a threaded parent (where only lock-free code is
 * safe), and in programs exec'd from those children.
 *
 *   stress_mix DIR TAG THREADS ROUNDS   prints "ok FILES" and exits 0
 *   stress_mix --child DIR NAME         writes and checks one file
 *
 * Every file DIR/NAME holds the line "NAME\n" repeated; the test checks
 * them all again from outside.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir, *self, *tag;
static int rounds;

static int fail(const char *what, const char *name)
{
	fprintf(stderr, "stress_mix: %s %s: %s\n", what, name, strerror(errno));
	return 1;
}

/* Writes NAME's lines with every kind of sync, then reads them back.
 * Uses only async-signal-safe calls: it runs in forked children too. */
static int write_and_check(const char *name, int lines)
{
	char path[512], line[256], back[256];
	size_t len = strlen(name);
	if (len + 1 >= sizeof line || strlen(dir) + len + 2 >= sizeof path)
		return 1;
	memcpy(line, name, len);
	line[len++] = '\n';
	memcpy(path, dir, strlen(dir));
	path[strlen(dir)] = '/';
	memcpy(path + strlen(dir) + 1, name, len);
	path[strlen(dir) + len] = '\0';

	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_SYNC | O_DSYNC, 0644);
	if (fd < 0)
		return fail("open", path);
	for (int i = 0; i < lines; i++) {
		struct iovec iov = { line, len };
		ssize_t n = (i % 3 == 0) ? pwritev2(fd, &iov, 1, -1, RWF_DSYNC)
					 : write(fd, line, len);
		if (n != (ssize_t)len)
			return fail("write", path);
		if (i % 7 == 0 && (fsync(fd) || fdatasync(fd)))
			return fail("fsync", path);
	}
	if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) || syncfs(fd) ||
	    syscall(SYS_fsync, fd) || close(fd))
		return fail("sync", path);

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail("reopen", path);
	void *map = mmap(NULL, len * lines, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || msync(map, len * lines, MS_SYNC))
		return fail("mmap", path);
	munmap(map, len * lines);
	for (int i = 0; i < lines; i++)
		if (read(fd, back, len) != (ssize_t)len || memcmp(back, line, len))
			return fail("read back", path);
	if (read(fd, back, 1) != 0)
		return fail("too long", path);
	close(fd);
	return 0;
}

static void *worker(void *arg)
{
	long t = (long)arg, failures = 0;
	char name[128];
	for (int r = 0; r < rounds; r++) {
		snprintf(name, sizeof name, "%s-t%ld-r%d", tag, t, r);
		failures += write_and_check(name, 50 + r);
		if (r % 4 != 0)
			continue;
		/* A fork from a threaded process: the child writes, then execs. */
		char forked[160], exec_name[160];
		snprintf(forked, sizeof forked, "%s-forked", name);
		snprintf(exec_name, sizeof exec_name, "%s-exec", name);
		pid_t pid = fork();
		if (pid == 0) {
			if (write_and_check(forked, 30))
				_exit(1);
			char *argv[] = { (char *)self, "--child", (char *)dir, exec_name, NULL };
			execv(self, argv);
			_exit(2);
		}
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "stress_mix: child of %s failed: %#x\n", name, status);
			failures++;
		}
	}
	return (void *)failures;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--child") == 0) {
		dir = argv[2];
		return write_and_check(argv[3], 40);
	}
	if (argc != 5)
		return 2;
	self = argv[0]; /* a path: valgrind runs us as its own /proc/self/exe */
	dir = argv[1];
	tag = argv[2];
	int threads = atoi(argv[3]);
	rounds = atoi(argv[4]);
	pthread_t ids[64];
	if (threads < 1 || threads > 64)
		return 2;
	for (long t = 0; t < threads; t++)
		if (pthread_create(&ids[t], NULL, worker, (void *)t))
			return 3;
	long failures = 0;
	for (int t = 0; t < threads; t++) {
		void *result;
		pthread_join(ids[t], &result);
		failures += (long)result;
	}
	int forks = (rounds + 3) / 4;
	printf("ok %d files\n", threads * (rounds + 2 * forks));
	return failures ? 1 : 0;
}
