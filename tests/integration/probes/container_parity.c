/* What a container shows of itself, for the container parity harness
 * (tests/integration/containers/parity.rs): the same program runs in a
 * container under runc and under eatmydata-runtime and must print the
 * same, but for the differences docs/runtime.md lists. Built for glibc
 * (dynamic, static, -m32, aarch64, -fsanitize=address) and musl.
 *
 *   container_parity true          exits 0, prints nothing
 *   container_parity report        ids, capabilities, no_new_privs, seccomp,
 *                                  /opt's entries, a synced write in /tmp
 *                                  and in /, and what stderr would show
 *   container_parity ls DIR        DIR's entries, sorted
 *   container_parity env           the environment, sorted
 *   container_parity mounts        the mount points of /proc/self/mounts, sorted
 *   container_parity loop FILE N   N times: write a block to FILE, fsync it
 *   container_parity dsync FILE N  N blocks written to FILE opened O_DSYNC
 *   container_parity mapped        the files mapped named libeatmydata*
 *   container_parity badfd         the answers to a sync call on descriptor -1:
 *                                  fsync through libc, and raw with the
 *                                  register's upper half sign-extended and
 *                                  zero (the kernel reads the low 32 bits);
 *                                  fdatasync, syncfs, sync_file_range raw
 *   container_parity nullfd        fsync of /dev/null: the kernel's EINVAL,
 *                                  0 where a rule answers it
 *   container_parity pause         waits for a signal (a container to exec into)
 *   container_parity exec PROG ARG...  executes PROG, as a shell would (built
 *                                  -static: a static shell starting PROG)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

static const char *error_name(int error)
{
	switch (error) {
	case EACCES: return "EACCES";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case ENOTDIR: return "ENOTDIR";
	case EPERM: return "EPERM";
	case EROFS: return "EROFS";
	default: return "another error";
	}
}

static void show(const char *name, int result)
{
	if (result == 0)
		printf("%s=0\n", name);
	else
		printf("%s=%s\n", name, error_name(errno));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Prints `label=` and the sorted lines of `lines[0..count)`, comma-joined. */
static void show_sorted(const char *label, char **lines, size_t count)
{
	qsort(lines, count, sizeof *lines, by_name);
	printf("%s=", label);
	for (size_t i = 0; i < count; i++)
		printf("%s%s", i ? "," : "", lines[i]);
	printf("\n");
}

static int list(const char *label, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		printf("%s=%s\n", label, error_name(errno));
		return 0;
	}
	char *names[256];
	size_t count = 0;
	struct dirent *entry;
	while ((entry = readdir(d)) && count < 256) {
		if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
			names[count++] = strdup(entry->d_name);
	}
	closedir(d);
	show_sorted(label, names, count);
	/* Freed: an ASan build's leak check would speak at exit otherwise. */
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	return 0;
}

/* The lines of /proc/self/status that say what the process may do. */
static void status_lines(void)
{
	static const char *const keys[] = {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
					   "CapAmb:", "NoNewPrivs:", "Seccomp:"};
	FILE *f = fopen("/proc/self/status", "r");
	if (!f) {
		printf("status=%s\n", error_name(errno));
		return;
	}
	char line[512];
	while (fgets(line, sizeof line, f)) {
		for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				fputs(line, stdout);
		}
	}
	fclose(f);
}

/* Creates `path`, writes to it and fsyncs it; one line for each step. */
static void synced_write(const char *label, const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0) {
		printf("%s_open=%s\n", label, error_name(errno));
		return;
	}
	char name[64];
	snprintf(name, sizeof name, "%s_write", label);
	show(name, write(fd, "parity\n", 7) == 7 ? 0 : -1);
	snprintf(name, sizeof name, "%s_fsync", label);
	show(name, fsync(fd));
	close(fd);
	unlink(path);
}

static int report(void)
{
	printf("uid=%d euid=%d gid=%d egid=%d\n", (int)getuid(), (int)geteuid(), (int)getgid(),
	       (int)getegid());
	status_lines();
	list("opt", "/opt");
	synced_write("tmp", "/tmp/parity-probe");
	synced_write("root", "/parity-probe");
	return 0;
}

static int env(void)
{
	size_t count = 0;
	while (environ[count])
		count++;
	char **lines = calloc(count + 1, sizeof *lines);
	if (!lines)
		return 1;
	memcpy(lines, environ, count * sizeof *lines);
	qsort(lines, count, sizeof *lines, by_name);
	for (size_t i = 0; i < count; i++)
		printf("%s\n", lines[i]);
	free(lines);
	return 0;
}

/* The field `pick` finds in each line of `file` (NULL: none), copied into
 * `out` (at most `max`): their count, or -1 when `file` cannot be read,
 * said as `label=ERROR`. */
static long picked(const char *file, const char *label, char *(*pick)(char *line), char **out,
		   long max)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		printf("%s=%s\n", label, error_name(errno));
		return -1;
	}
	long count = 0;
	char line[4096];
	while (count < max && fgets(line, sizeof line, f)) {
		char *field = pick(line);
		if (field)
			out[count++] = strdup(field);
	}
	fclose(f);
	return count;
}

/* "SOURCE POINT TYPE OPTIONS 0 0": the point. */
static char *mount_point(char *line)
{
	char *point = strchr(line, ' ');
	if (!point)
		return NULL;
	point++;
	char *end = strchr(point, ' ');
	if (end)
		*end = '\0';
	return point;
}

static int mounts(void)
{
	char *points[256];
	long count = picked("/proc/self/mounts", "mounts", mount_point, points, 256);
	if (count < 0)
		return 0;
	qsort(points, count, sizeof *points, by_name);
	for (long i = 0; i < count; i++) {
		printf("%s\n", points[i]);
		free(points[i]);
	}
	return 0;
}

/* N blocks written to `path`, each fsynced, or each written through an
 * O_DSYNC descriptor when `dsync`. */
static int loop(const char *path, int n, int dsync)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | (dsync ? O_DSYNC : 0), 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	char block[4096];
	memset(block, 'p', sizeof block);
	for (int i = 0; i < n; i++) {
		if (write(fd, block, sizeof block) != (ssize_t)sizeof block || (!dsync && fsync(fd) != 0)) {
			perror(path);
			return 1;
		}
	}
	close(fd);
	printf("%s %d\n", dsync ? "written" : "synced", n);
	return 0;
}

/* "ADDRESSES PERMS OFFSET DEVICE INODE PATH": a path naming eatmydata. */
static char *eatmydata_path(char *line)
{
	char *path = strchr(line, '/');
	if (!path)
		return NULL;
	path[strcspn(path, "\n")] = '\0';
	/* By its file name alone: a checkout or scratch folder may name
	 * eatmydata too. */
	char *name = strrchr(path, '/') + 1;
	if (strncmp(name, "libeatmydata", strlen("libeatmydata")) != 0)
		return NULL;
	return path;
}

/* The files mapped whose file name starts libeatmydata, each once (a file is
 * mapped in several pieces): whether the library is in this process. */
static int mapped(void)
{
	char *paths[256];
	long count = picked("/proc/self/maps", "mapped", eatmydata_path, paths, 256);
	if (count < 0)
		return 0;
	qsort(paths, count, sizeof *paths, by_name);
	long kept = 0;
	for (long i = 0; i < count; i++) {
		if (kept > 0 && strcmp(paths[kept - 1], paths[i]) == 0)
			free(paths[i]);
		else
			paths[kept++] = paths[i];
	}
	show_sorted("mapped", paths, kept);
	for (long i = 0; i < kept; i++)
		free(paths[i]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "report";
	if (strcmp(what, "true") == 0)
		return 0;
	if (strcmp(what, "report") == 0)
		return report();
	if (strcmp(what, "ls") == 0 && argc == 3)
		return list("entries", argv[2]);
	if (strcmp(what, "env") == 0)
		return env();
	if (strcmp(what, "mounts") == 0)
		return mounts();
	if (strcmp(what, "loop") == 0 && argc == 4)
		return loop(argv[2], atoi(argv[3]), 0);
	if (strcmp(what, "dsync") == 0 && argc == 4)
		return loop(argv[2], atoi(argv[3]), 1);
	if (strcmp(what, "mapped") == 0)
		return mapped();
	if (strcmp(what, "pause") == 0) {
		pause();
		return 0;
	}
	if (strcmp(what, "exec") == 0 && argc >= 3) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	if (strcmp(what, "badfd") == 0) {
		show("fsync_badfd", fsync(-1));
		show("fsync_badfd_raw", syscall(SYS_fsync, -1L));
		show("fsync_badfd_upper_zero", syscall(SYS_fsync, 0xffffffffUL));
		show("fdatasync_badfd_raw", syscall(SYS_fdatasync, -1L));
		show("syncfs_badfd_raw", syscall(SYS_syncfs, -1L));
		show("sync_file_range_badfd_raw", syscall(SYS_sync_file_range, -1L, 0L, 0L, 0L));
		return 0;
	}
	if (strcmp(what, "nullfd") == 0) {
		show("fsync_devnull", syscall(SYS_fsync, (long)open("/dev/null", O_WRONLY)));
		return 0;
	}
	fprintf(stderr, "usage: %s true|report|ls DIR|env|mounts|loop FILE N|dsync FILE N|mapped|badfd|nullfd|pause|exec PROG ARG...\n", argv[0]);
	return 2;
}
