/*
 * startup ROUNDS N PROGRAM [LIBRARY]...: what starting a process costs
 * with each LIBRARY preloaded ("" for none), side by side in one run.
 *
 * Each round starts PROGRAM N times (fork + exec, as a shell does, then
 * waits) under each library in turn, so that a machine busy for a moment
 * slows every variant alike; the order of the variants turns each round.
 * Prints one line per library: the median over the rounds of the
 * microseconds per process, of wall time and of the children's CPU time
 * (user + system, which other work on a busy machine disturbs less), each
 * with its extra over the first library (by convention, nothing preloaded).
 *
 * The runner's own environment is passed on with LD_PRELOAD replaced, and
 * the runner itself is started without LD_PRELOAD by whoever runs it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "startup.h"

extern char **environ;

#define MAX_LIBRARIES 8
#define MAX_ENV 4096

/* The environment with LD_PRELOAD set to `library` (left out when empty). */
static char **environment(const char *library, char *setting, size_t size)
{
	static char *env[MAX_LIBRARIES][MAX_ENV];
	static int next;
	char **out = env[next++ % MAX_LIBRARIES];
	size_t count = 0;
	for (char **e = environ; *e && count < MAX_ENV - 2; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
			out[count++] = *e;
	if (*library) {
		snprintf(setting, size, "LD_PRELOAD=%s", library);
		out[count++] = setting;
	}
	out[count] = NULL;
	return out;
}

/* Microseconds per process for `n` starts of `argv` with `env`, of wall
 * time, and of CPU time in `cpu`. */
static double starts(int n, char **argv, char **env, double *cpu)
{
	double began = now_us(), cpu_began = children_cpu_us();
	for (int i = 0; i < n; i++)
		start_once("startup", argv, env);
	*cpu = (children_cpu_us() - cpu_began) / n;
	return (now_us() - began) / n;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: startup ROUNDS N PROGRAM LIBRARY...\n");
		return 2;
	}
	int rounds = atoi(argv[1]), n = atoi(argv[2]);
	int libraries = argc - 4;
	if (rounds < 1 || rounds > MAX_ROUNDS || n < 1 || libraries > MAX_LIBRARIES) {
		fprintf(stderr, "startup: 1..%d rounds, N >= 1, at most %d libraries\n",
			MAX_ROUNDS, MAX_LIBRARIES);
		return 2;
	}
	char *program[] = { argv[3], NULL };
	static char settings[MAX_LIBRARIES][4096];
	char **envs[MAX_LIBRARIES];
	for (int l = 0; l < libraries; l++)
		envs[l] = environment(argv[4 + l], settings[l], sizeof settings[l]);
	static double wall[MAX_LIBRARIES][MAX_ROUNDS], cpu[MAX_LIBRARIES][MAX_ROUNDS];
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < libraries; k++) {
			int l = (k + r) % libraries;
			wall[l][r] = starts(n, program, envs[l], &cpu[l][r]);
		}
	const char *names[MAX_LIBRARIES];
	for (int l = 0; l < libraries; l++)
		names[l] = *argv[4 + l] ? argv[4 + l] : "none";
	print_medians("library", names, libraries, rounds, wall, cpu);
	return 0;
}
