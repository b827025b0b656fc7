/* The program's limits hold for its opens and writes with sync flags.
 *
 *   fsize_efbig    RLIMIT_FSIZE of 10 bytes, SIGXFSZ ignored: a 100-byte
 *                  pwritev2(RWF_DSYNC) at 0 writes 10, the next one EFBIG
 *   fsize_signal   the same with SIGXFSZ as it comes: the program dies
 *   fsize_osync    write(2) through an O_SYNC descriptor, limit as above
 *   nofile_trunc   a full descriptor table: open(AREA/f, O_WRONLY|O_TRUNC|
 *                  O_SYNC) is EMFILE and AREA/f keeps its data
 *   nofile_create  the same with O_CREAT of AREA/new: EMFILE, no file
 */
#include "parity.h"
#include <signal.h>
#include <sys/resource.h>
#include <sys/uio.h>

static char hundred[100];

static void fsize(int ignore, int sync_open)
{
	if (ignore)
		signal(SIGXFSZ, SIG_IGN);
	struct rlimit limit = {10, 10};
	say("setrlimit", setrlimit(RLIMIT_FSIZE, &limit));
	int fd = open(at("f"), O_WRONLY | (sync_open ? O_SYNC : 0));
	struct iovec iov = {.iov_base = hundred, .iov_len = sizeof hundred};
	memset(hundred, 'x', sizeof hundred);
	for (int i = 0; i < 2; i++) {
		if (sync_open)
			say_value("write", write(fd, hundred, sizeof hundred));
		else
			say_value("pwritev2", pwritev2(fd, &iov, 1, 10 * i, RWF_DSYNC));
	}
}

static void nofile(const char *name, int flags)
{
	struct rlimit limit = {16, 16};
	say("setrlimit", setrlimit(RLIMIT_NOFILE, &limit));
	int last = 0;
	while ((last = open("/dev/null", O_RDONLY)) >= 0)
		;
	printf("filled=%s\n", error_name(errno));
	say("open", open(at(name), flags, 0644));
}

static int run(const char *which)
{
	CASE("fsize_efbig") {
		fsize(1, 0);
		return 0;
	}
	CASE("fsize_signal") {
		fsize(0, 0);
		return 0;
	}
	CASE("fsize_osync") {
		fsize(1, 1);
		return 0;
	}
	CASE("nofile_trunc") {
		nofile("f", O_WRONLY | O_TRUNC | O_SYNC);
		return 0;
	}
	CASE("nofile_create") {
		nofile("new", O_WRONLY | O_CREAT | O_SYNC);
		return 0;
	}
	UNKNOWN();
}
