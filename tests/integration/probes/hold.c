/* Keeps a container running: reads its stdin until it ends, then exits 0.
 * With `service`, it also exits 0 on SIGTERM, as a service's server does
 * when `docker stop` asks it to: as a container's first process, a
 * program with no handler for SIGTERM ignores it, and each stop then
 * waits out its whole timeout (the Action's is 30 s) before SIGKILL.
 *
 * usage: hold [service] */
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void stop(int signal)
{
	(void)signal;
	_exit(0);
}

int main(int argc, char **argv)
{
	char buffer[256];
	if (argc > 1 && strcmp(argv[1], "service") == 0)
		signal(SIGTERM, stop);
	while (read(0, buffer, sizeof buffer) > 0)
		;
	return 0;
}
