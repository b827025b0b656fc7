/* Paths the kernel resolves through the caller itself, opened with O_SYNC:
 * they must reach the program's own files, not the supervisor's.
 *
 *   proc_self_fd     /proc/self/fd/50 (AREA/a, dup'ed to 50)
 *   thread_self_fd   /proc/thread-self/fd/50
 *   dev_fd           /dev/fd/50
 *   dev_stdout       /dev/stdout, with AREA/out as fd 1
 *   proc_self_cwd    /proc/self/cwd/f, in AREA/sub
 *   proc_self_root   /proc/self/root + AREA/g
 *   relative         f, in AREA/sub (the supervisor's cwd is AREA/cwd)
 */
#include "parity.h"

/* Opens `path` with O_SYNC, writes through it, and says whether it is the
 * same file as `fd`. */
static void through(const char *path, int fd)
{
	int again = open(path, O_WRONLY | O_SYNC);
	say("open", again);
	if (again < 0)
		return;
	say("write", write(again, "through the link\n", 17));
	printf("file=%s\n", same_file(fd, again));
	close(again);
}

static int numbered(int fd)
{
	if (fd < 0 || dup2(fd, 50) != 50) {
		perror("a descriptor as 50");
		exit(3);
	}
	close(fd);
	return 50;
}

static int run(const char *which)
{
	CASE("proc_self_fd") {
		through("/proc/self/fd/50", numbered(open(at("a"), O_RDWR | O_CREAT, 0644)));
		return 0;
	}
	CASE("thread_self_fd") {
		through("/proc/thread-self/fd/50",
			numbered(open(at("a"), O_RDWR | O_CREAT, 0644)));
		return 0;
	}
	CASE("dev_fd") {
		through("/dev/fd/50", numbered(open(at("a"), O_RDWR | O_CREAT, 0644)));
		return 0;
	}
	CASE("dev_stdout") {
		int saved = dup(1);
		int out = open(at("out"), O_RDWR | O_CREAT, 0644);
		if (saved < 0 || out < 0 || dup2(out, 1) != 1)
			return 3;
		int again = open("/dev/stdout", O_WRONLY | O_SYNC);
		int error = errno;
		if (again >= 0 && write(again, "through /dev/stdout\n", 20) != 20)
			error = errno;
		const char *file = again >= 0 ? same_file(out, again) : "none";
		dup2(saved, 1);
		errno = error;
		say("open", again);
		printf("file=%s\n", file);
		return 0;
	}
	CASE("proc_self_cwd") {
		say("chdir", chdir(at("sub")));
		int fd = open("/proc/self/cwd/f", O_WRONLY | O_CREAT | O_SYNC, 0644);
		say("open", fd);
		say("write", write(fd, "in sub\n", 7));
		return 0;
	}
	CASE("proc_self_root") {
		char path[8192];
		snprintf(path, sizeof path, "/proc/self/root%s", at("g"));
		int fd = open(path, O_WRONLY | O_CREAT | O_SYNC, 0644);
		say("open", fd);
		say("write", write(fd, "through root\n", 13));
		return 0;
	}
	CASE("relative") {
		say("chdir", chdir(at("sub")));
		int fd = open("f", O_WRONLY | O_CREAT | O_SYNC, 0644);
		say("open", fd);
		say("write", write(fd, "in sub\n", 7));
		return 0;
	}
	UNKNOWN();
}
