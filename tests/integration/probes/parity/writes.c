/* pwritev2(2) with RWF_DSYNC on AREA/f (10 bytes "0123456789"): what it
 * returns and what it leaves in the file.
 *
 *   good        5 bytes at 2
 *   current     offset -1: at the file position, which moves
 *   append      RWF_APPEND with offset 0: at the end
 *   o_append    a descriptor with O_APPEND, offset 0: at the end
 *   fault_2nd   the second iovec unmapped: the first is written, a short
 *               count
 *   fault_1st   the first iovec unmapped: EFAULT
 *   rdonly      an O_RDONLY descriptor: EBADF
 *   unknown     an unknown RWF bit beside RWF_DSYNC: EOPNOTSUPP
 *   too_many    1025 iovecs: EINVAL
 *   negative    offset -5: EINVAL
 *   big         20 MiB in one call: all of it
 */
#include "parity.h"
#include <sys/mman.h>
#include <sys/uio.h>

static char *unmapped(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(map, page);
	return map;
}

static int run(const char *which)
{
	int flags = O_RDWR;
	CASE("o_append") flags |= O_APPEND;
	CASE("rdonly") flags = O_RDONLY;
	int fd = open(at("f"), flags);
	struct iovec iov[2] = {{"abcde", 5}, {"fghij", 5}};
	long offset = 2;
	int count = 1, rwf = RWF_DSYNC;
	CASE("good") {}
	else CASE("current") {
		lseek(fd, 4, SEEK_SET);
		offset = -1;
	}
	else CASE("append") {
		offset = 0;
		rwf |= RWF_APPEND;
	}
	else CASE("o_append") offset = 0;
	else CASE("fault_2nd") {
		iov[1].iov_base = unmapped();
		count = 2;
	}
	else CASE("fault_1st") iov[0].iov_base = unmapped();
	else CASE("rdonly") {}
	else CASE("unknown") rwf |= 0x40000000;
	else CASE("too_many") count = 1025;
	else CASE("negative") offset = -5;
	else CASE("big") {
		iov[0].iov_len = 20 << 20;
		iov[0].iov_base = malloc(iov[0].iov_len);
		memset(iov[0].iov_base, 'b', iov[0].iov_len);
	}
	else UNKNOWN();
	struct iovec many[1025];
	if (count == 1025) {
		for (int i = 0; i < count; i++)
			many[i] = iov[0];
		say_value("pwritev2", pwritev2(fd, many, count, offset, rwf));
	} else {
		say_value("pwritev2", pwritev2(fd, iov, count, offset, rwf));
	}
	say_value("position", lseek(fd, 0, SEEK_CUR));
	return 0;
}
