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
 *   i386_fsync_badfd i386_fsync_pipe i386_fsync_file i386_fdatasync_pipe
 *   i386_syncfs_badfd i386_sfr_pipe i386_sfr_file i386_sfr_badrange
 *   i386_msync_good i386_msync_unaligned i386_msync_unmapped
 *                                           through int $0x80
 *   x32_fsync_badfd x32_fsync_pipe x32_fsync_file   through the x32 numbers
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

/* sync_file_range through int $0x80: each 64-bit value in two words. */
static long i386_sfr(int fd, long long offset, long long nbytes, unsigned flags)
{
	long result;
	long a[6] = {fd, (unsigned)offset, (unsigned)(offset >> 32), (unsigned)nbytes,
		     (unsigned)(nbytes >> 32), flags};
	/* ebp holds the sixth: saved around the call, below the red zone. */
	__asm__ volatile("sub $128, %%rsp\n\tpush %%rbp\n\tmov %6, %%rbp\n\t"
			 "int $0x80\n\tpop %%rbp\n\tadd $128, %%rsp"
			 : "=a"(result)
			 : "a"(314L), "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]), "r"(a[5]),
			   "D"(a[4])
			 : "memory");
	return result;
}

/* msync through int $0x80 (144) of a file mapping below 4 GiB. */
static long i386_msync(const char *kind)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open(at("f"), O_RDWR);
	char *map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_32BIT, fd, 0);
	if (map == MAP_FAILED)
		exit(3);
	map[0] = 'm';
	long start = (long)map, len = page;
	if (!strcmp(kind, "unaligned"))
		start++;
	else if (!strcmp(kind, "unmapped")) {
		munmap(map + page, page);
		len = 3 * page;
	}
	long result;
	__asm__ volatile("int $0x80"
			 : "=a"(result)
			 : "a"(144L), "b"(start), "c"(len), "d"((long)MS_SYNC)
			 : "memory");
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
		/* i386's numbers: fsync 118, fdatasync 148, syncfs 344. */
		char name[32], on[32];
		if (sscanf(kind, "%31[^_]_%31s", name, on) != 2)
			UNKNOWN();
		if (!strcmp(name, "msync")) {
			say_raw("msync", i386_msync(on));
			return 0;
		}
		if (!strcmp(name, "sfr")) {
			int bad = !strcmp(on, "badrange");
			long long offset = bad ? -1 : 0;
			say_raw("sync_file_range",
				i386_sfr(descriptor(bad ? "file" : on), offset, 4096, 0x7));
			return 0;
		}
		long nr = !strcmp(name, "fsync")       ? 118
			: !strcmp(name, "fdatasync") ? 148
			: !strcmp(name, "syncfs")    ? 344
						     : -1;
		if (nr < 0)
			UNKNOWN();
		say_raw(name, i386_call(nr, descriptor(on)));
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
