/*
 * What the start-up benchmarks share (benches/startup.c,
 * benches/startup_command.c): the two clocks, one start of a program, and
 * the table of medians they print, so that both tables measure and read
 * alike.
 */
#ifndef EATMYDATA_BENCH_STARTUP_H
#define EATMYDATA_BENCH_STARTUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 101

/* Microseconds on the monotonic clock. */
static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU time, user and system, of the children waited for so far. */
static double children_cpu_us(void)
{
	struct rusage usage;
	getrusage(RUSAGE_CHILDREN, &usage);
	return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
	       usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

/* One start of `argv` with `env` (fork + exec, as a shell does), waited
 * for; the runner `who` exits when it cannot start or does not exit 0. */
static void start_once(const char *who, char **argv, char **env)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		execve(argv[0], argv, env);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s:", who);
		for (char **arg = argv; *arg; arg++)
			fprintf(stderr, " %s", *arg);
		fprintf(stderr, " failed\n");
		exit(1);
	}
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A header line (`column`, then the figures' names) and one line per
 * variant: its name, the median over the rounds of wall and of CPU
 * microseconds per process, each with its extra over the first variant.
 * Sorts each variant's rounds. */
static void print_medians(const char *column, const char *const names[], int variants,
			  int rounds, double wall[][MAX_ROUNDS], double cpu[][MAX_ROUNDS])
{
	double wall_base = 0, cpu_base = 0;
	printf("%s\twall us\textra\tcpu us\textra\n", column);
	for (int v = 0; v < variants; v++) {
		qsort(wall[v], rounds, sizeof wall[v][0], compare);
		qsort(cpu[v], rounds, sizeof cpu[v][0], compare);
		double w = wall[v][rounds / 2], c = cpu[v][rounds / 2];
		if (v == 0)
			wall_base = w, cpu_base = c;
		printf("%s\t%.1f\t%+.1f\t%.1f\t%+.1f\n", names[v], w, w - wall_base, c,
		       c - cpu_base);
	}
}

#endif
