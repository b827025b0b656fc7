/* Whose descriptor a sync names: the calling thread's table, in the
 * caller's pid namespace, with only the low 32 bits of the register read,
 * as the kernel reads them. AREA/f is a file on disk.
 *
 *   thread_pipe      a second thread fsyncs a pipe: EINVAL
 *   thread_unshared  a thread with its own table (unshare(CLONE_FILES)) in
 *                    which fd N is a pipe, while N is AREA/f in the main
 *                    thread's: EINVAL
 *   pidns_pipe       the child (pid 1) of a new pid namespace fsyncs a
 *                    pipe: EINVAL
 *   pidns_badfd      and fd 99: EBADF
 *   highbits_pipe    fsync((1 << 32) | pipe): the kernel reads an int: EINVAL
 *   highbits_file    fsync((1 << 32) | AREA/f's fd): 0
 *   sfr_highflags    sync_file_range with only bit 32 of the flags set: 0
 *   negative         fsync(-1): EBADF
 *   huge             fsync(INT_MAX): EBADF
 */
#include "parity.h"
#include <pthread.h>
#include <sched.h>

static int fd_file, fd_pipe;

static void *thread_pipe(void *unused)
{
	(void)unused;
	say("fsync", fsync(fd_pipe));
	return NULL;
}

static void *thread_unshared(void *unused)
{
	(void)unused;
	int ends[2];
	if (unshare(CLONE_FILES) || pipe(ends) || dup2(ends[1], fd_file) != fd_file) {
		perror("a table of the thread's own");
		exit(3);
	}
	say("fsync", fsync(fd_file));
	return NULL;
}

static void in_thread(void *(*body)(void *))
{
	pthread_t thread;
	if (pthread_create(&thread, NULL, body, NULL) || pthread_join(thread, NULL))
		exit(3);
}

static int run(const char *which)
{
	int ends[2];
	fd_file = open(at("f"), O_RDWR);
	if (fd_file < 0 || pipe(ends))
		return 3;
	fd_pipe = ends[1];
	CASE("thread_pipe") in_thread(thread_pipe);
	else CASE("thread_unshared") {
		in_thread(thread_unshared);
		say("fsync_main", fsync(fd_file));
	}
	else if (!strncmp(which, "pidns_", 6)) {
		if (unshare(CLONE_NEWPID))
			return 3;
		pid_t child = fork();
		if (child == 0) {
			printf("pid=%d\n", getpid());
			say("fsync", fsync(!strcmp(which, "pidns_pipe") ? fd_pipe : 99));
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
	else CASE("highbits_pipe") say("fsync", syscall(SYS_fsync, (1L << 32) | fd_pipe));
	else CASE("highbits_file") say("fsync", syscall(SYS_fsync, (1L << 32) | fd_file));
	else CASE("sfr_highflags") say("sync_file_range",
				   syscall(SYS_sync_file_range, fd_file, 0, 0, 1L << 32));
	else CASE("negative") say("fsync", fsync(-1));
	else CASE("huge") say("fsync", fsync(0x7fffffff));
	else UNKNOWN();
	return 0;
}
