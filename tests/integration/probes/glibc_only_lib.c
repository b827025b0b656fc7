/* A preload library built for glibc alone, as Debian's libeatmydata is:
 * built with -O2 -D_FORTIFY_SOURCE=2, its fprintf becomes __fprintf_chk,
 * which musl lacks, so musl's loader kills any program it is preloaded
 * into. The command must keep it away from musl programs. */
#include <stdio.h>
#include <unistd.h>

int fsync(int fd)
{
	if (fd < -1000)
		fprintf(stderr, "fsync(%d)\n", fd);
	return 0;
}
