/*
 * Syncs done by other processes than the one started: a forked child, a
 * forked child that execs this program again, a command run by system(3)
 * (this program again, and dd with conv=fsync oflag=sync).
 * Usage: field_spawn DIR runs all four, writing DIR/{fork,exec,system,dd};
 *        field_spawn --child FILE is the one that syncs.
 * Each sync opens FILE with O_SYNC, writes, calls fsync and fdatasync.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int sync_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_SYNC, 0644);
	if (fd < 0)
		return 1;
	int ok = write(fd, "data\n", 5) == 5 && fsync(fd) == 0 && fdatasync(fd) == 0;
	return close(fd) == 0 && ok ? 0 : 1;
}

static int exited_zero(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int in_child(const char *self, const char *path, int exec)
{
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		if (exec)
			execl(self, self, "--child", path, (char *)NULL);
		_exit(exec ? 127 : sync_file(path));
	}
	int status;
	return waitpid(pid, &status, 0) == pid && exited_zero(status);
}

static int shell(const char *format, const char *a, const char *b)
{
	char command[8192];
	snprintf(command, sizeof command, format, a, b);
	return exited_zero(system(command));
}

int main(int argc, char **argv)
{
	char path[4096];
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return sync_file(argv[2]);
	if (argc != 2)
		return 2;
	const char *dir = argv[1];
	snprintf(path, sizeof path, "%s/fork", dir);
	if (!in_child(argv[0], path, 0))
		return 3;
	snprintf(path, sizeof path, "%s/exec", dir);
	if (!in_child(argv[0], path, 1))
		return 4;
	snprintf(path, sizeof path, "%s/system", dir);
	if (!shell("'%s' --child '%s'", argv[0], path))
		return 5;
	snprintf(path, sizeof path, "%s/dd", dir);
	if (!shell("dd if=/dev/zero of='%s' bs=4096 count=4 conv=fsync oflag=sync status=none%s",
		   path, ""))
		return 6;
	puts("spawned: fork exec system dd");
	return 0;
}
