/*
 * What a posix_spawn(3) child starts with, by its attributes and file
 * actions, and what the caller is left with after the call.
 * Usage: spawn_attrs CASE PROGRAM DIR
 *          the caller blocks SIGUSR1, ignores SIGUSR2, catches SIGTERM,
 *          keeps descriptor 12 open (not close-on-exec) and sets errno
 *          to EDOM, then starts `PROGRAM --state` (this program, built
 *          static) by CASE:
 *            plain    no attributes, no file actions
 *            attrs    SETSIGDEF SIGUSR2, SETPGROUP 0, SETSCHEDULER
 *                     SCHED_BATCH, RESETIDS (no signal mask of its own)
 *            mask     SETSIGMASK SIGHUP and SIGUSR2
 *            setsid   SETSID
 *            actions  open DIR/out as 5, dup2 5 to 1, close 5, close 0,
 *                     chdir DIR, fchdir to DIR's descriptor, closefrom 10
 *            no-room  none, with the address space capped 192 KiB
 *                     above its size
 *            ENOENT-chdir, ENOENT-open
 *                     a chdir to, an open of, a path that is not there
 *            ENOTTY-tcsetpgrp
 *                     the terminal's foreground group set on a pipe
 *            schedparam  SETSCHEDPARAM alone (priority 0)
 *            dup2-same   dup2 of descriptor 12, made close-on-exec, onto
 *                     itself (which clears the flag)
 *            open-lowest open /dev/null as 0, the lowest descriptor free
 *                     once 0 is closed
 *            EBADF-close close 900, then the descriptor limit lowered to
 *                     100
 *        spawn_attrs running PROGRAM
 *          starts `PROGRAM --hold` reading a pipe, and while it runs
 *          prints the caller's threads and whether a wait of the calling
 *          thread's own children (__WNOTHREAD) finds it; then ends it and
 *          prints its status.
 *          Prints the child's state (for `actions`, what it wrote to
 *          DIR/out), then the caller's: its threads once none ends any
 *          more, its blocked signals,
 *          its seccomp mode and no_new_privs, errno's name, the child's
 *          status; or "posix_spawn: NAME".
 *        spawn_attrs concurrent PROGRAM
 *          4 threads each start `PROGRAM --seccomp` 25 times at once;
 *          prints how many children ran under a filter, then the
 *          caller's threads once they are joined and none ends any more.
 *        spawn_attrs pdeathsig PROGRAM
 *          starts `PROGRAM --pdeathsig` 25 times, one after the other,
 *          and prints how many were killed.
 *        spawn_attrs --seccomp
 *          exits with its seccomp mode.
 *        spawn_attrs --pdeathsig
 *          asks for SIGKILL at its parent's end, waits 5 ms, exits 0.
 *        spawn_attrs --hold
 *          reads its standard input to its end, exits 0.
 *        spawn_attrs --state PARENT [ANY...]
 *          prints its blocked, ignored and caught signals, whether its
 *          parent is PARENT, its process group and session are its own,
 *          its scheduling policy, its folder, its open descriptors below
 *          16, then its no_new_privs and seccomp mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* An error's name, where libc names it (glibc), else its number. */
static const char *named(int error)
{
#ifdef __GLIBC__
	return strerrorname_np(error);
#else
	static char number[16];
	snprintf(number, sizeof number, "%d", error);
	return number;
#endif
}

/* Prints the lines of /proc/self/status that start with each of `names`. */
static void status_lines(const char *const *names)
{
	FILE *status = fopen("/proc/self/status", "r");
	char line[256];
	while (status && fgets(line, sizeof line, status))
		for (const char *const *name = names; *name; name++)
			if (strncmp(line, *name, strlen(*name)) == 0)
				fputs(line, stdout);
	if (status)
		fclose(status);
}

/* This process's threads, once no more end (2 s at most): the line of
 * /proc/self/status. */
static void settled(void)
{
	char line[256] = "", last[256] = "";
	for (int tries = 0; tries < 200; tries++) {
		FILE *status = fopen("/proc/self/status", "r");
		while (status && fgets(line, sizeof line, status))
			if (strncmp(line, "Threads:", 8) == 0)
				break;
		if (status)
			fclose(status);
		snprintf(last, sizeof last, "%s", line);
		if (strcmp(line, "Threads:\t1\n") == 0)
			break;
		usleep(10000);
	}
	fputs(last, stdout);
}

static int state(const char *parent)
{
	static const char *const signals[] = { "SigBlk:", "SigIgn:", "SigCgt:", NULL };
	status_lines(signals);
	printf("parent_is_caller=%d\n", getppid() == atoi(parent));
	printf("own_group=%d own_session=%d\n", getpgrp() == getpid(),
	       getsid(0) == getpid());
	printf("policy=%d\n", sched_getscheduler(0));
	char cwd[4096] = "";
	printf("cwd=%s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
	printf("fds=");
	for (int fd = 0; fd < 16; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			printf("%d,", fd);
	printf("\n");
	static const char *const filter[] = { "NoNewPrivs:", "Seccomp:", NULL };
	status_lines(filter);
	return 0;
}

#define THREADS 4
#define EACH 25

/* `program ARGUMENT` spawned and waited for: 0 and its status, or -1. */
static int ran(char *program, char *argument, int *status)
{
	char *child[] = { program, argument, NULL };
	pid_t pid;
	if (posix_spawn(&pid, program, NULL, NULL, child, environ) ||
	    waitpid(pid, status, 0) != pid)
		return -1;
	return 0;
}

/* One of concurrent()'s threads: EACH spawns of `program --seccomp`,
 * counting the children that ran under a filter. */
static void *spawner(void *program)
{
	long filtered = 0;
	for (int i = 0; i < EACH; i++) {
		int status;
		if (ran(program, "--seccomp", &status) != 0 || !WIFEXITED(status))
			return (void *)-1L;
		filtered += WEXITSTATUS(status) == 2;
	}
	return (void *)filtered;
}

/* THREADS threads spawning at once: how many of their children ran under
 * a filter, and the caller's threads once they are joined. */
static int concurrent(char *program)
{
	pthread_t threads[THREADS];
	for (int t = 0; t < THREADS; t++)
		if (pthread_create(&threads[t], NULL, spawner, program))
			return 1;
	long filtered = 0;
	for (int t = 0; t < THREADS; t++) {
		void *counted;
		pthread_join(threads[t], &counted);
		if ((long)counted < 0)
			return 1;
		filtered += (long)counted;
	}
	printf("filtered %ld of %d\n", filtered, THREADS * EACH);
	settled();
	return 0;
}

/* `program --pdeathsig` EACH times, one after the other: how many were
 * killed by the signal they asked for their parent's end. */
static int pdeathsig(char *program)
{
	int killed = 0;
	for (int i = 0; i < EACH; i++) {
		int status;
		if (ran(program, "--pdeathsig", &status) != 0)
			return 1;
		killed += WIFSIGNALED(status);
	}
	printf("killed %d of %d\n", killed, EACH);
	return 0;
}

/* `program --hold` reading a pipe: the caller's threads and what a wait
 * of the calling thread's own children finds while it runs, then its
 * status once the pipe is closed. */
static int running(char *program)
{
	int ends[2];
	if (pipe(ends) != 0)
		return 1;
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, ends[0], 0);
	posix_spawn_file_actions_addclose(&actions, ends[1]);
	char *child[] = { program, "--hold", NULL };
	pid_t pid;
	if (posix_spawn(&pid, program, &actions, NULL, child, environ))
		return 1;
	close(ends[0]);
	static const char *const threads[] = { "Threads:", NULL };
	status_lines(threads);
	int status;
	pid_t found = waitpid(pid, &status, WNOHANG | __WNOTHREAD);
	printf("own wait: %s\n", found == 0 ? "running" : found < 0 ? named(errno) : "ended");
	close(ends[1]);
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	printf("status=%d\n", status);
	return 0;
}

static void on_term(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "--state") == 0)
		return state(argv[2]);
	if (argc == 2 && strcmp(argv[1], "--seccomp") == 0)
		return prctl(PR_GET_SECCOMP);
	if (argc == 3 && strcmp(argv[1], "concurrent") == 0)
		return concurrent(argv[2]);
	if (argc == 3 && strcmp(argv[1], "pdeathsig") == 0)
		return pdeathsig(argv[2]);
	if (argc == 3 && strcmp(argv[1], "running") == 0)
		return running(argv[2]);
	if (argc == 2 && strcmp(argv[1], "--hold") == 0) {
		char byte;
		while (read(0, &byte, 1) > 0)
			;
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--pdeathsig") == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		usleep(5000);
		return 0;
	}
	if (argc != 4)
		return 2;
	const char *how = argv[1], *program = argv[2], *dir = argv[3];
	sigset_t blocked;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGUSR1);
	sigprocmask(SIG_BLOCK, &blocked, NULL);
	signal(SIGUSR2, SIG_IGN);
	signal(SIGTERM, on_term);
	dup2(2, 12);

	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	const posix_spawnattr_t *given = &attr;
	const posix_spawn_file_actions_t *acts = &actions;
	sigset_t set;
	sigemptyset(&set);
	char out[4096];
	snprintf(out, sizeof out, "%s/out", dir);
	if (strcmp(how, "plain") == 0) {
		given = NULL;
		acts = NULL;
	} else if (strcmp(how, "attrs") == 0) {
		sigaddset(&set, SIGUSR2);
		posix_spawnattr_setsigdefault(&attr, &set);
		posix_spawnattr_setpgroup(&attr, 0);
		posix_spawnattr_setschedpolicy(&attr, SCHED_BATCH);
		struct sched_param param = { 0 };
		posix_spawnattr_setschedparam(&attr, &param);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP |
							POSIX_SPAWN_SETSCHEDULER | POSIX_SPAWN_RESETIDS);
	} else if (strcmp(how, "mask") == 0) {
		sigaddset(&set, SIGHUP);
		sigaddset(&set, SIGUSR2);
		posix_spawnattr_setsigmask(&attr, &set);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	} else if (strcmp(how, "setsid") == 0) {
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
	} else if (strcmp(how, "actions") == 0) {
		int folder = open(dir, O_RDONLY | O_DIRECTORY);
		posix_spawn_file_actions_addopen(&actions, 5, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		posix_spawn_file_actions_adddup2(&actions, 5, 1);
		posix_spawn_file_actions_addclose(&actions, 5);
		posix_spawn_file_actions_addclose(&actions, 0);
		posix_spawn_file_actions_addchdir_np(&actions, "/");
		posix_spawn_file_actions_addfchdir_np(&actions, folder);
#ifdef __GLIBC__
		posix_spawn_file_actions_addclosefrom_np(&actions, 10);
#endif
	} else if (strcmp(how, "no-room") == 0) {
		/* The address space capped 192 KiB above what it is: room for
		 * libc's stack for its child, not for a thread's of 320. */
		given = NULL;
		acts = NULL;
		struct rlimit cap = { 0, 0 };
		FILE *status = fopen("/proc/self/status", "r");
		char line[256];
		while (status && fgets(line, sizeof line, status))
			if (strncmp(line, "VmSize:", 7) == 0)
				cap.rlim_cur = cap.rlim_max = (strtoul(line + 7, NULL, 10) + 192) * 1024;
		if (status)
			fclose(status);
		if (!cap.rlim_cur || setrlimit(RLIMIT_AS, &cap) != 0)
			return 3;
	} else if (strcmp(how, "ENOENT-chdir") == 0) {
		posix_spawn_file_actions_addchdir_np(&actions, "/nonexistent/eatmydata");
	} else if (strcmp(how, "ENOENT-open") == 0) {
		posix_spawn_file_actions_addopen(&actions, 5, "/nonexistent/eatmydata", O_RDONLY, 0);
	} else if (strcmp(how, "schedparam") == 0) {
		struct sched_param param = { 0 };
		posix_spawnattr_setschedparam(&attr, &param);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSCHEDPARAM);
	} else if (strcmp(how, "dup2-same") == 0) {
		fcntl(12, F_SETFD, FD_CLOEXEC);
		posix_spawn_file_actions_adddup2(&actions, 12, 12);
	} else if (strcmp(how, "open-lowest") == 0) {
		posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	} else if (strcmp(how, "EBADF-close") == 0) {
		posix_spawn_file_actions_addclose(&actions, 900);
		struct rlimit files = { 100, 100 };
		if (setrlimit(RLIMIT_NOFILE, &files) != 0)
			return 3;
#ifdef __GLIBC__
	} else if (strcmp(how, "ENOTTY-tcsetpgrp") == 0) {
		int ends[2];
		if (pipe(ends) != 0)
			return 3;
		posix_spawn_file_actions_addtcsetpgrp_np(&actions, ends[0]);
#endif
	} else {
		return 2;
	}
	char parent[32];
	snprintf(parent, sizeof parent, "%d", (int)getpid());
	char *child[] = { (char *)program, "--state", parent, NULL };
	pid_t pid;
	fflush(stdout);
	errno = EDOM;
	int error = posix_spawn(&pid, program, acts, given, child, environ);
	int after = errno;
	if (error) {
		printf("posix_spawn: %s\n", named(error));
		return 1;
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	if (strcmp(how, "actions") == 0) {
		FILE *file = fopen(out, "r");
		char line[4096];
		while (file && fgets(line, sizeof line, file))
			fputs(line, stdout);
		if (file)
			fclose(file);
	}
	printf("caller:\n");
	settled();
	static const char *const mine[] = { "SigBlk:", NULL };
	status_lines(mine);
	printf("caller_seccomp=%d caller_nnp=%d\n", prctl(PR_GET_SECCOMP),
	       prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	printf("errno=%s\nstatus=%d\n", named(after), status);
	return 0;
}
