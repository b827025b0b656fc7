/* Tries system calls by number, each in a child of its own, and prints
 * one line per call, NR ANSWER: ok (it returned, not an error), an errno
 * name, exit N (the call ended the child), signal N, or blocks (no answer
 * within a second: the child is killed). Built static, it runs in any container: the same
 * probe under two seccomp profiles shows where they differ.
 *
 *   every_call bad NR...    every argument -1 (no descriptor, no address,
 *                           flags the kernel refuses)
 *   every_call pipe NR...   argument 0 a pipe's write end, the others 0
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void try(long nr, int piped)
{
	int ends[2];
	if (piped && pipe(ends) != 0) {
		perror("pipe");
		exit(1);
	}
	int out[2];
	if (pipe(out) != 0) {
		perror("pipe");
		exit(1);
	}
	fflush(stdout);
	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		exit(1);
	}
	if (child == 0) {
		pid_t self = getpid();
		long a = piped ? ends[1] : -1, b = piped ? 0 : -1;
		long result = syscall(nr, a, b, b, b, b, b);
		int error = errno;
		/* A call that made a process: only the first one says. */
		if (syscall(SYS_getpid) != self)
			_exit(0);
		char line[64];
		int n = result == -1 ? snprintf(line, sizeof line, "%s", strerrorname_np(error))
				     : snprintf(line, sizeof line, "ok");
		if (write(out[1], line, n) != n)
			_exit(99);
		_exit(0);
	}
	close(out[1]);
	char said[64] = "";
	struct pollfd answer = {.fd = out[0], .events = POLLIN};
	int blocks = poll(&answer, 1, 1000) == 0;
	if (blocks)
		kill(child, SIGKILL);
	ssize_t got = blocks ? 0 : read(out[0], said, sizeof said - 1);
	said[got > 0 ? got : 0] = 0;
	close(out[0]);
	if (piped) {
		close(ends[0]);
		close(ends[1]);
	}
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			exit(1);
		}
	if (blocks)
		printf("%ld blocks\n", nr);
	else if (said[0])
		printf("%ld %s\n", nr, said);
	else if (WIFSIGNALED(status))
		printf("%ld signal %d\n", nr, WTERMSIG(status));
	else
		printf("%ld exit %d\n", nr, WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "bad") && strcmp(argv[1], "pipe"))) {
		fprintf(stderr, "usage: %s bad|pipe NR...\n", argv[0]);
		return 2;
	}
	/* Children that stop or end are waited for one by one. */
	signal(SIGPIPE, SIG_IGN);
	for (int i = 2; i < argc; i++)
		try(strtol(argv[i], NULL, 10), !strcmp(argv[1], "pipe"));
	return 0;
}
