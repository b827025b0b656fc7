/* Syncs three times, forks a child that syncs once and exits with exit(3)
 * (so its library writes a report line), and waits for it.
 *
 * usage: report_fork FILE */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	for (int i = 0; i < 3; i++)
		fsync(fd);
	pid_t child = fork();
	if (child == 0) {
		fsync(fd);
		exit(0);
	}
	int status;
	return child > 0 && waitpid(child, &status, 0) == child && status == 0 ? 0 : 1;
}
