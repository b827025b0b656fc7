/*
 * calls MODE N PATH: make N calls of one kind and print the nanoseconds
 * they took, in total, on stdout. With CALLS_CPU=1 in the environment,
 * two figures: the CPU time of the thread (user and system), which time
 * spent waiting for a CPU on a busy machine does not inflate, then the
 * wall time.
 *
 * The preload library cannot be loaded into the bench's own process (it
 * would hook criterion too, and could not be unloaded), so the bench runs
 * this program as a child, with and without LD_PRELOAD, and reads back the
 * time of the loop alone: process start-up is not in the figure.
 *
 * MODE is one of
 *   open        open(PATH, O_RDONLY) + close: a call that passes through
 *   openat      openat(AT_FDCWD, PATH, O_RDONLY | O_CLOEXEC) + close
 *   fsync       fsync of PATH, opened once, with nothing written
 *   write-fsync pwrite of 4 KiB then fsync: what a commit costs
 *   mmap        mmap + munmap of an anonymous page: the io_uring hooks' cost
 *               to a program that never sets up a ring
 *
 * and bare kernel calls, made by syscall(2), which no hook sees: what the
 * calls a hook makes cost by themselves on this machine (PATH opened once)
 *   getppid     the cheapest call there is
 *   ioctl       ioctl(FS_IOC_GETFLAGS)
 *   fcntl       fcntl(F_GETFL)
 *   statx       statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID_UNIQUE)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"

static int cpu_too;

/* Nanoseconds of this thread's CPU time. */
static long long cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Prints what the calls since START (wall) and CPU_START took. */
static void took(long long start, long long cpu_start)
{
	long long wall = now() - start;
	if (cpu_too)
		printf("%lld %lld\n", cpu_now() - cpu_start, wall);
	else
		printf("%lld\n", wall);
}

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

/* N bare kernel calls of MODE on PATH, through syscall(2); their time. */
static int bare_calls(const char *mode, long long n, const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		fail("open");
	long flags = 0;
	struct statx st;
	unsigned mask = STATX_TYPE | 0x1000 /* STATX_MNT_ID */ | 0x4000 /* _UNIQUE */;
	long long cpu_start = cpu_now(), start = now();
	for (long long i = 0; i < n; i++) {
		long rc;
		if (mode[0] == 'g')
			rc = syscall(SYS_getppid) > 0 ? 0 : -1;
		else if (mode[0] == 'i')
			rc = syscall(SYS_ioctl, fd, FS_IOC_GETFLAGS, &flags);
		else if (mode[0] == 'f')
			rc = syscall(SYS_fcntl, fd, F_GETFL) < 0 ? -1 : 0;
		else
			rc = syscall(SYS_statx, fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, mask, &st);
		if (rc)
			fail(mode);
	}
	took(start, cpu_start);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: calls open|openat|fsync|write-fsync|mmap|"
			"getppid|ioctl|fcntl|statx N PATH\n");
		return 2;
	}
	const char *mode = argv[1], *path = argv[3];
	const char *cpu = getenv("CALLS_CPU");
	cpu_too = cpu && !strcmp(cpu, "1");
	long long n = atoll(argv[2]);
	static char block[4096];
	int fd = -1;

	int bare = !strcmp(mode, "getppid") || !strcmp(mode, "ioctl") ||
		   !strcmp(mode, "fcntl") || !strcmp(mode, "statx");
	if (bare)
		return bare_calls(mode, n, path);
	if (strstr(mode, "fsync")) {
		fd = open(path, O_RDWR | O_CREAT, 0644);
		if (fd < 0)
			fail("open");
	}
	long long cpu_start = cpu_now(), start = now();
	for (long long i = 0; i < n; i++) {
		if (!strcmp(mode, "open")) {
			int f = open(path, O_RDONLY);
			if (f < 0 || close(f))
				fail("open");
		} else if (!strcmp(mode, "openat")) {
			int f = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
			if (f < 0 || close(f))
				fail("openat");
		} else if (!strcmp(mode, "fsync")) {
			if (fsync(fd))
				fail("fsync");
		} else if (!strcmp(mode, "mmap")) {
			if (map_and_unmap())
				fail("mmap");
		} else if (!strcmp(mode, "write-fsync")) {
			if (pwrite(fd, block, sizeof block, 0) != sizeof block ||
			    fsync(fd))
				fail("write-fsync");
		} else {
			fprintf(stderr, "calls: unknown mode %s\n", mode);
			return 2;
		}
	}
	took(start, cpu_start);
	return 0;
}
