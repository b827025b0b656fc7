/* The kernel's own answers to sync calls that cannot flush a disk: each
 * case makes one call on one kind of descriptor and prints its result.
 *
 *   fsync_badfd fsync_devnull fsync_pipe fsync_socket fsync_eventfd
 *   fsync_nsfs fsync_pidfd fsync_mqueue fsync_memfd fsync_dir fsync_opath
 *   fsync_proc fsync_fifo fsync_devnode (a FIFO and /dev/null's node, made
 *   in AREA: on a disk's file system, but no disk's file) fsync_epoll
 *   fsync_inotify fsync_sysfs fsync_rdonly
 *   fdatasync_badfd fdatasync_pipe fdatasync_nsfs
 *   syncfs_badfd syncfs_pipe
 *   sfr_badfd_badflags  sync_file_range(99, 0, 0, 0xff): EBADF first
 *   sfr_badfd_badrange  sync_file_range(99, -1, 0, 0): EBADF first
 *   sfr_pipe sfr_fifo sfr_file_badflags sfr_opath
 *   nodump_fsync_badfd nodump_fsync_pipe   after PR_SET_DUMPABLE 0
 *   msync_unaligned msync_unmapped msync_badflags msync_both msync_good
 *   msync_locked        MS_INVALIDATE on mlock'ed pages: EBUSY
 *   msync_wrap          a length that page-aligns to 0: the kernel's 0
 *   msync_highflags     MS_SYNC with bit 32 of the register set, which the
 *                       kernel (an int) does not read: 0
 *   i386_fsync_badfd i386_fsync_pipe        through int $0x80
 *   x32_fsync_badfd x32_fsync_pipe          through the x32 numbers
 */
#include "parity.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>

static int pipe_end(void)
{
	int ends[2];
	return pipe(ends) ? -1 : ends[1];
}

static int descriptor(const char *kind)
{
	if (!strcmp(kind, "badfd"))
		return 99;
	if (!strcmp(kind, "devnull"))
		return open("/dev/null", O_WRONLY);
	if (!strcmp(kind, "pipe"))
		return pipe_end();
	if (!strcmp(kind, "socket"))
		return socket(AF_UNIX, SOCK_STREAM, 0);
	if (!strcmp(kind, "eventfd"))
		return eventfd(0, 0);
	if (!strcmp(kind, "nsfs"))
		return open("/proc/self/ns/mnt", O_RDONLY);
	if (!strcmp(kind, "pidfd"))
		return syscall(SYS_pidfd_open, getpid(), 0);
	if (!strcmp(kind, "mqueue")) {
		struct {
			long flags, maxmsg, msgsize, curmsgs, pad[4];
		} attr = {0, 1, 16, 0, {0}};
		char name[64];
		snprintf(name, sizeof name, "parity-%d", getpid());
		int fd = syscall(SYS_mq_open, name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
		syscall(SYS_mq_unlink, name);
		return fd;
	}
	if (!strcmp(kind, "memfd"))
		return memfd_create("parity", 0);
	if (!strcmp(kind, "dir"))
		return open(area, O_RDONLY | O_DIRECTORY);
	if (!strcmp(kind, "opath"))
		return open(at("f"), O_PATH);
	if (!strcmp(kind, "proc"))
		return open("/proc/self/status", O_RDONLY);
	if (!strcmp(kind, "fifo"))
		return mkfifo(at("fifo"), 0644) ? -1 : open(at("fifo"), O_RDWR);
	if (!strcmp(kind, "devnode"))
		return mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) ? -1
								     : open(at("null"), O_WRONLY);
	if (!strcmp(kind, "epoll"))
		return epoll_create1(0);
	if (!strcmp(kind, "inotify"))
		return inotify_init1(0);
	if (!strcmp(kind, "sysfs"))
		return open("/sys/kernel/uevent_seqnum", O_RDONLY);
	if (!strcmp(kind, "rdonly"))
		return open(at("f"), O_RDONLY);
	if (!strcmp(kind, "file"))
		return open(at("f"), O_RDWR);
	fprintf(stderr, "no such descriptor: %s\n", kind);
	exit(2);
}

static long i386_call(long nr, long arg)
{
	long result;
	__asm__ volatile("int $0x80" : "=a"(result) : "a"(nr), "b"(arg) : "memory");
	return result;
}

static long x32_call(long nr, long arg)
{
	long result;
	__asm__ volatile("syscall"
			 : "=a"(result)
			 : "a"(0x40000000L | nr), "D"(arg)
			 : "rcx", "r11", "memory");
	return result;
}

static void msync_case(const char *kind)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open(at("f"), O_RDWR);
	char *map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		exit(3);
	}
	map[0] = 'm';
	if (!strcmp(kind, "unaligned"))
		say("msync", msync(map + 1, page, MS_SYNC));
	else if (!strcmp(kind, "unmapped")) {
		munmap(map + page, page);
		say("msync", msync(map, 3 * page, MS_SYNC));
	} else if (!strcmp(kind, "badflags"))
		say("msync", msync(map, page, 0x100));
	else if (!strcmp(kind, "locked")) {
		if (mlock(map, page))
			exit(3);
		say("msync", msync(map, page, MS_SYNC | MS_INVALIDATE));
	} else if (!strcmp(kind, "wrap"))
		say("msync", msync(map, (size_t)-10, MS_SYNC));
	else if (!strcmp(kind, "highflags"))
		say("msync", syscall(SYS_msync, map, page, (1L << 32) | MS_SYNC));
	else if (!strcmp(kind, "both"))
		say("msync", msync(map, page, MS_SYNC | MS_ASYNC));
	else
		say("msync", msync(map, page, MS_SYNC));
}

static int run(const char *which)
{
	char call[32], kind[32];
	if (sscanf(which, "%31[^_]_%31s", call, kind) != 2)
		UNKNOWN();
	if (!strcmp(call, "nodump")) {
		say("dumpable", prctl(PR_SET_DUMPABLE, 0, 0, 0, 0));
		say("fsync", fsync(descriptor(kind + strlen("fsync_"))));
		return 0;
	}
	if (!strcmp(call, "msync")) {
		msync_case(kind);
		return 0;
	}
	if (!strcmp(call, "i386")) {
		say_raw("fsync", i386_call(118, descriptor(kind + strlen("fsync_"))));
		return 0;
	}
	if (!strcmp(call, "x32")) {
		say_raw("fsync", x32_call(74, descriptor(kind + strlen("fsync_"))));
		return 0;
	}
	if (!strcmp(call, "sfr")) {
		char *flags = strrchr(kind, '_');
		long offset = flags && !strcmp(flags, "_badrange") ? -1 : 0;
		unsigned int bits = flags && !strcmp(flags, "_badflags") ? 0xff : 0;
		if (flags)
			*flags = 0;
		say("sync_file_range", sync_file_range(descriptor(kind), offset, 0, bits));
		return 0;
	}
	int fd = descriptor(kind);
	if (fd < 0) {
		printf("descriptor=%s\n", error_name(errno));
		return 3;
	}
	if (!strcmp(call, "fsync"))
		say("fsync", fsync(fd));
	else if (!strcmp(call, "fdatasync"))
		say("fdatasync", fdatasync(fd));
	else if (!strcmp(call, "syncfs"))
		say("syncfs", syncfs(fd));
	else
		UNKNOWN();
	return 0;
}
