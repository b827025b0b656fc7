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
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VARIANTS 3
#define MAX_ROUNDS 101

static const char *names[VARIANTS] = { "installed", "written", "first" };

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double children_cpu_us(void)
{
	struct rusage usage;
	getrusage(RUSAGE_CHILDREN, &usage);
	return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
	       usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One start of `program true` with `env`; its wall time, its CPU in `cpu`. */
static double start(const char *program, char **env, double *cpu)
{
	char *argv[] = { (char *)program, "true", NULL };
	double began = now_us(), cpu_began = children_cpu_us();
	pid_t pid = fork();
	if (pid < 0) {
		perror("startup_command: fork");
		exit(1);
	}
	if (pid == 0) {
		execve(program, argv, env);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "startup_command: %s true failed\n", program);
		exit(1);
	}
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
	double wall_base = 0, cpu_base = 0;
	printf("variant\twall us\textra\tcpu us\textra\n");
	for (int v = 0; v < VARIANTS; v++) {
		qsort(wall[v], rounds, sizeof wall[v][0], compare);
		qsort(cpu[v], rounds, sizeof cpu[v][0], compare);
		double w = wall[v][rounds / 2], c = cpu[v][rounds / 2];
		if (v == 0)
			wall_base = w, cpu_base = c;
		printf("%s\t%.1f\t%+.1f\t%.1f\t%+.1f\n", names[v], w, w - wall_base, c, c - cpu_base);
	}
	return 0;
}
