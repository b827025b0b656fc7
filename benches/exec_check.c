/* The library's exec check alone (scripts/bench-calls --exec): the
 * decision each exec hook makes before the exec, called COUNT times for
 * PROGRAM with this process's environment, run with the library in
 * LD_PRELOAD. Prints the wall and CPU time per check; the CPU time is the
 * figure a loaded machine leaves alone. No fork, no exec: what a shell's
 * exec adds, without the exec itself.
 *
 *   LD_PRELOAD=libeatmydata.so exec_check COUNT PROGRAM
 */
#include "shim.h" /* first: it asks for _GNU_SOURCE */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern char **environ;

static double seconds(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: exec_check COUNT PROGRAM\n");
		return 2;
	}
	long count = atol(argv[1]);
	char *args[] = {argv[2], NULL};
	static struct emd_exec_room room;
	double wall = seconds(CLOCK_MONOTONIC);
	double cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < count; i++)
		eatmydata_exec_env(AT_FDCWD, argv[2], 0, 0, NULL, args, environ,
				   &room, sizeof room);
	wall = seconds(CLOCK_MONOTONIC) - wall;
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	printf("%.2f %.2f\n", wall / count * 1e6, cpu / count * 1e6);
	return 0;
}
