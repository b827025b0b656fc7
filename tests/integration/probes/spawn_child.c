/*
 * posix_spawn(3) and posix_spawnp(3) of a program, as GNU make and
 * Python's subprocess start one, with a file action or none.
 * Usage: spawn_child spawn|spawnp OUT PROGRAM ARG...
 *          starts PROGRAM with ARG... (argv[0] included) and this
 *          environment; OUT "-" leaves stdout as it is, else the child's
 *          stdout is the file OUT (an open and a dup2 as file actions).
 *          Prints "status N" or "signal N" once it ends, or
 *          "posix_spawn: NAME" when the call fails.
 *        spawn_child --show ARG...
 *          prints its arguments and /proc/self/comm, and exits with 3.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *name(int error)
{
	switch (error) {
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case ENOEXEC: return "ENOEXEC";
	default: return "another error";
	}
}

static int show(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	char comm[64] = "";
	FILE *file = fopen("/proc/self/comm", "r");
	if (file && fgets(comm, sizeof comm, file))
		printf("comm=%s", comm);
	if (file)
		fclose(file);
	fprintf(stderr, "to stderr\n");
	return 3;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--show") == 0)
		return show(argc, argv);
	if (argc < 4)
		return 2;
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	if (strcmp(argv[2], "-") != 0) {
		posix_spawn_file_actions_addopen(&actions, 3, argv[2],
						 O_WRONLY | O_CREAT | O_TRUNC, 0644);
		posix_spawn_file_actions_adddup2(&actions, 3, 1);
		posix_spawn_file_actions_addclose(&actions, 3);
	}
	pid_t pid;
	int error = strcmp(argv[1], "spawnp") == 0
		? posix_spawnp(&pid, argv[3], &actions, NULL, argv + 4, environ)
		: posix_spawn(&pid, argv[3], &actions, NULL, argv + 4, environ);
	posix_spawn_file_actions_destroy(&actions);
	if (error) {
		printf("posix_spawn: %s\n", name(error));
		return 1;
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFEXITED(status))
		printf("status %d\n", WEXITSTATUS(status));
	else
		printf("signal %d\n", WTERMSIG(status));
	return 0;
}
