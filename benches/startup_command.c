/*
 * startup_command ROUNDS N INSTALLED ALONE PLACE FILE: what starting
 * `eatmydata true` costs by where its library comes from, side by side in
 * one run.
 *
 * INSTALLED is a command with the library installed beside it (as today);
 * ALONE a copy of it with nothing beside it, run with TMPDIR=PLACE, which
 * finds the copy it carries already written out to FILE (a later run), or
 * writes it out first because FILE and its folder were removed before the
 * start (the first run). Each round starts each variant N times (fork +
 * exec + wait, each start timed alone, the removal outside the timing),
 * the order of the variants turning each round. Prints one line per
 * variant: the median over the rounds of the microseconds per process, of
 * wall time and of the children's CPU time (user + system), each with its
 * extra over INSTALLED.
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "startup.h"

#define VARIANTS 3

static const char *names[VARIANTS] = { "installed", "written", "first" };

/* One start of `program true` with `env`; its wall time, its CPU in `cpu`. */
static double start(const char *program, char **env, double *cpu)
{
	char *argv[] = { (char *)program, "true", NULL };
	double began = now_us(), cpu_began = children_cpu_us();
	start_once("startup_command", argv, env);
	*cpu = children_cpu_us() - cpu_began;
	return now_us() - began;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: startup_command ROUNDS N INSTALLED ALONE PLACE FILE\n");
		return 2;
	}
	int rounds = atoi(argv[1]), n = atoi(argv[2]);
	const char *installed = argv[3], *alone = argv[4], *file = argv[6];
	if (rounds < 1 || rounds > MAX_ROUNDS || n < 1) {
		fprintf(stderr, "startup_command: 1..%d rounds, N >= 1\n", MAX_ROUNDS);
		return 2;
	}
	static char tmpdir[4096], folder[4096];
	snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", argv[5]);
	snprintf(folder, sizeof folder, "%s", file);
	dirname(folder);
	char *env[] = { "PATH=/usr/bin:/bin", tmpdir, NULL };
	static double wall[VARIANTS][MAX_ROUNDS], cpu[VARIANTS][MAX_ROUNDS];
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < VARIANTS; k++) {
			int v = (k + r) % VARIANTS;
			double w = 0, c = 0;
			for (int i = 0; i < n; i++) {
				if (v == 2 && (unlink(file) != 0 || rmdir(folder) != 0)) {
					perror("startup_command: remove the written copy");
					return 1;
				}
				double one_cpu;
				w += start(v == 0 ? installed : alone, env, &one_cpu);
				c += one_cpu;
			}
			wall[v][r] = w / n, cpu[v][r] = c / n;
		}
	print_medians("variant", names, VARIANTS, rounds, wall, cpu);
	return 0;
}
