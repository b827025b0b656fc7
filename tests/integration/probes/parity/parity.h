/* What every kernel-parity probe shares (see tests/integration/seccomp/
 * parity.rs): `PROBE CASE AREA`, where AREA is the run's folder, laid out
 * the same for both runs; results go to stdout as `name=result` lines,
 * with the errno's name for a failure; exit status 3 says the case could
 * not be set up (the harness fails then: nothing was compared). Built static with glibc, so
 * strerrorname_np names every error. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *area;

/* AREA/name, in one of a few rotating buffers. */
static const char *at(const char *name)
{
	static char buffers[4][4096];
	static int next;
	char *buffer = buffers[next++ % 4];
	snprintf(buffer, sizeof buffers[0], "%s/%s", area, name);
	return buffer;
}

static const char *error_name(int error)
{
	const char *name = strerrorname_np(error);
	return name ? name : "unknown";
}

/* name=ok, or name=ERRNO when rc < 0 (errno set). */
__attribute__((unused)) static void say(const char *name, long rc)
{
	if (rc < 0)
		printf("%s=%s\n", name, error_name(errno));
	else
		printf("%s=ok\n", name);
}

/* name=VALUE, or name=ERRNO when rc < 0 (errno set). */
__attribute__((unused)) static void say_value(const char *name, long rc)
{
	if (rc < 0)
		printf("%s=%s\n", name, error_name(errno));
	else
		printf("%s=%ld\n", name, rc);
}

/* name=ERRNO for a raw result of -errno, else name=VALUE. */
__attribute__((unused)) static void say_raw(const char *name, long rc)
{
	if (rc < 0)
		printf("%s=%s\n", name, error_name((int)-rc));
	else
		printf("%s=%ld\n", name, rc);
}

/* Whether two descriptors are the same file. */
__attribute__((unused)) static const char *same_file(int a, int b)
{
	struct stat sa, sb;
	if (fstat(a, &sa) || fstat(b, &sb))
		return error_name(errno);
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino ? "same" : "other";
}

/* Becomes nobody, with no groups and no capabilities. */
__attribute__((unused)) static void become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
		perror("become nobody");
		exit(3);
	}
}

static int run(const char *which);

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s CASE AREA\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	area = argv[2];
	return run(argv[1]);
}

#define CASE(name) if (!strcmp(which, name))
#define UNKNOWN()                                              \
	do {                                                   \
		fprintf(stderr, "no such case: %s\n", which);  \
		return 2;                                      \
	} while (0)
