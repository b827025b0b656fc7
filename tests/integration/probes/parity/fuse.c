/* A FUSE file system served inside the supervised tree, by a daemon that
 * fsyncs a file on disk (AREA/daemon.log) before it answers each request,
 * and answers FSYNC with EIO. Nothing may hang, and the program sees the
 * daemon's answers as without eatmydata.
 *
 *   fuse_shared   the daemon serves AREA/fuse, mounted where the
 *                 supervisor sees it too; the program opens fuse/file with
 *                 O_WRONLY|O_SYNC, writes, fsyncs and closes it, while
 *                 another process fsyncs AREA/local 20 times
 *   fuse_private  the same in a private mount namespace, where the
 *                 supervisor cannot name the file system
 *   fuse_reuse    in a private mount namespace: an fsync on a bind mount of
 *                 AREA/src (a disk), which is then unmounted, so that the
 *                 FUSE mount made next likely gets its mount id; then an
 *                 fsync of a FUSE file: the daemon's EIO, not a disk's 0
 *   fuse_uring    an io_uring FSYNC of a FUSE file: the daemon's -EIO
 *   fuse_msync    msync(MS_SYNC) of a shared mapping of a FUSE file: EIO
 *   fuse_frozen   a hung file system: the daemon stopped (SIGSTOP) while
 *                 one process waits in an fsync of a FUSE file; another
 *                 process's five syncs must still be answered (it gives up
 *                 after 5 s); then the daemon goes on and answers EIO
 *
 * Speaks the kernel's protocol on /dev/fuse directly (linux/fuse.h), so
 * that the probe links no libfuse and stays static.
 */
#include "parity.h"
#include <linux/fuse.h>
#include <liburing.h>
#include <sys/mman.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/uio.h>

/* Waits (5 s at most) until `pid` sleeps inside a system call, as
 * /proc/PID/syscall shows it: 1 once it does, 0 if it never did. Which
 * call is not asked: the library asks a FUSE file's attribute flags
 * (ioctl) before its fsync, and the daemon stalls both alike. */
static int inside(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		long seen = -1;
		if (f) {
			/* "running", or "-1 ..." outside a call, or its number */
			if (fgets(line, sizeof line, f) && line[0] >= '0' && line[0] <= '9')
				seen = strtol(line, NULL, 10);
			fclose(f);
		}
		if (seen >= 0)
			return 1;
		usleep(1000);
	}
	return 0;
}

static char request[1 << 17];
static unsigned long long file_size = 4096;
static char zeros[4096];

static void reply(int fuse, unsigned long long unique, int error, const void *body, size_t len)
{
	struct fuse_out_header out = {.len = sizeof out + (error ? 0 : len), .error = error,
				      .unique = unique};
	struct iovec iov[2] = {{&out, sizeof out}, {(void *)body, error ? 0 : len}};
	if (writev(fuse, iov, 2) < 0 && errno != ENOENT)
		perror("fuse reply");
}

static void attributes(unsigned long long node, struct fuse_attr *attr)
{
	memset(attr, 0, sizeof *attr);
	attr->ino = node;
	attr->mode = node == 1 ? S_IFDIR | 0755 : S_IFREG | 0666;
	attr->nlink = node == 1 ? 2 : 1;
	attr->size = node == 1 ? 0 : file_size;
	attr->blksize = 4096;
}

/* Answers requests until the file system goes away. */
static void serve(int fuse)
{
	int log = open(at("daemon.log"), O_WRONLY | O_CREAT, 0644);
	for (;;) {
		ssize_t n = read(fuse, request, sizeof request);
		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			return;
		struct fuse_in_header *in = (void *)request;
		void *body = request + sizeof *in;
		unsigned int op = in->opcode;
		if (op == FUSE_FORGET || op == FUSE_BATCH_FORGET || op == FUSE_INTERRUPT)
			continue;
		if (op != FUSE_INIT && (pwrite(log, "r", 1, 0) != 1 || fsync(log)))
			perror("daemon fsync");
		if (op == FUSE_INIT) {
			struct fuse_init_in *init = body;
			struct fuse_init_out out = {.major = FUSE_KERNEL_VERSION,
						    .minor = FUSE_KERNEL_MINOR_VERSION,
						    .max_readahead = init->max_readahead,
						    .max_background = 16,
						    .congestion_threshold = 12,
						    .max_write = 65536,
						    .time_gran = 1};
			reply(fuse, in->unique, 0, &out, sizeof out);
		} else if (op == FUSE_LOOKUP) {
			struct fuse_entry_out out = {.nodeid = 2, .generation = 1};
			attributes(2, &out.attr);
			int found = in->nodeid == 1 && !strcmp(body, "file");
			reply(fuse, in->unique, found ? 0 : -ENOENT, &out, sizeof out);
		} else if (op == FUSE_GETATTR || op == FUSE_SETATTR) {
			struct fuse_setattr_in *set = body;
			if (op == FUSE_SETATTR && set->valid & FATTR_SIZE)
				file_size = set->size;
			struct fuse_attr_out out = {0};
			attributes(in->nodeid, &out.attr);
			reply(fuse, in->unique, 0, &out, sizeof out);
		} else if (op == FUSE_OPEN || op == FUSE_OPENDIR) {
			struct fuse_open_out out = {.fh = 1};
			reply(fuse, in->unique, 0, &out, sizeof out);
		} else if (op == FUSE_WRITE) {
			struct fuse_write_in *write_in = body;
			if (write_in->offset + write_in->size > file_size)
				file_size = write_in->offset + write_in->size;
			struct fuse_write_out out = {.size = write_in->size};
			reply(fuse, in->unique, 0, &out, sizeof out);
		} else if (op == FUSE_STATFS) {
			struct fuse_statfs_out out = {.st = {.bsize = 4096, .namelen = 255}};
			reply(fuse, in->unique, 0, &out, sizeof out);
		} else if (op == FUSE_FSYNC) {
			reply(fuse, in->unique, -EIO, NULL, 0);
		} else if (op == FUSE_READ) {
			struct fuse_read_in *read_in = body;
			size_t n = read_in->offset < file_size ? file_size - read_in->offset : 0;
			if (n > read_in->size)
				n = read_in->size;
			reply(fuse, in->unique, 0, zeros, n > sizeof zeros ? sizeof zeros : n);
		} else if (op == FUSE_READDIR || op == FUSE_FLUSH ||
			   op == FUSE_RELEASE || op == FUSE_RELEASEDIR || op == FUSE_ACCESS ||
			   op == FUSE_DESTROY) {
			reply(fuse, in->unique, 0, NULL, 0);
		} else {
			reply(fuse, in->unique, -ENOSYS, NULL, 0);
		}
	}
}

/* Mounts the file system on AREA/fuse and starts its daemon. */
static pid_t start(void)
{
	int fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	char options[128];
	snprintf(options, sizeof options, "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse);
	if (fuse < 0 || mount("parity", at("fuse"), "fuse", MS_NOSUID | MS_NODEV, options)) {
		perror("mount fuse");
		exit(3);
	}
	pid_t daemon = fork();
	if (daemon == 0) {
		serve(fuse);
		_exit(0);
	}
	close(fuse);
	return daemon;
}

static void stop(pid_t daemon)
{
	int status;
	say("umount", umount2(at("fuse"), MNT_DETACH));
	waitpid(daemon, &status, 0);
	printf("daemon=%s\n", WIFEXITED(status) ? "ended" : "killed");
}

static int run(const char *which)
{
	int private = strcmp(which, "fuse_shared") != 0;
	if (private && strcmp(which, "fuse_private") && strcmp(which, "fuse_reuse") &&
	    strcmp(which, "fuse_uring") && strcmp(which, "fuse_msync") && strcmp(which, "fuse_frozen"))
		UNKNOWN();
	if (private && (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))) {
		perror("private mount namespace");
		return 3;
	}
	if (!strcmp(which, "fuse_reuse")) {
		say("bind", mount(at("src"), at("b"), NULL, MS_BIND, NULL));
		int disk = open(at("b/x"), O_WRONLY | O_CREAT, 0644);
		say("fsync_disk", fsync(disk));
		close(disk);
		say("unbind", umount2(at("b"), 0));
		pid_t daemon = start();
		int fd = open(at("fuse/file"), O_WRONLY);
		say("open", fd);
		say("fsync_fuse", fsync(fd));
		close(fd);
		stop(daemon);
		return 0;
	}
	if (!strcmp(which, "fuse_frozen")) {
		pid_t daemon = start();
		/* Started before the FUSE file is opened: a process that holds
		 * it would wait for the stopped daemon at exit (FLUSH). */
		int go[2];
		if (pipe(go))
			return 3;
		pid_t other = fork();
		if (other == 0) {
			char byte;
			if (read(go[0], &byte, 1) != 1)
				_exit(100);
			alarm(5);
			int null = open("/dev/null", O_WRONLY), done = 0;
			for (int i = 0; i < 5; i++)
				done += fsync(null) < 0 && errno == EINVAL;
			_exit(done);
		}
		int fd = open(at("fuse/file"), O_WRONLY);
		say("open", fd);
		say("stop", kill(daemon, SIGSTOP));
		pid_t waiter = fork();
		if (waiter == 0)
			_exit(fsync(fd) ? errno : 0);
		/* The other process starts once the waiter is inside its fsync
		 * (in the kernel, or with the supervisor), stalled by the daemon. */
		printf("waiting=%s\n", inside(waiter) ? "yes" : "no");
		say("go", write(go[1], "g", 1));
		int status;
		waitpid(other, &status, 0);
		printf("other=%s %d\n", WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		say("cont", kill(daemon, SIGCONT));
		waitpid(waiter, &status, 0);
		printf("waiter=%s\n", WIFEXITED(status) ? error_name(WEXITSTATUS(status)) : "killed");
		close(fd);
		stop(daemon);
		return 0;
	}
	if (!strcmp(which, "fuse_uring") || !strcmp(which, "fuse_msync")) {
		pid_t daemon = start();
		int fd = open(at("fuse/file"), O_RDWR);
		say("open", fd);
		if (!strcmp(which, "fuse_msync")) {
			char *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			say("mmap", map == MAP_FAILED ? -1 : 0);
			if (map != MAP_FAILED) {
				say("msync", msync(map, 4096, MS_SYNC));
				munmap(map, 4096);
			}
		} else {
			struct io_uring ring;
			struct io_uring_cqe *cqe;
			if (io_uring_queue_init(2, &ring, 0))
				return 3;
			io_uring_prep_fsync(io_uring_get_sqe(&ring), fd, 0);
			say_value("submitted", io_uring_submit(&ring));
			if (io_uring_wait_cqe(&ring, &cqe) == 0)
				say_raw("cqe", cqe->res);
			io_uring_queue_exit(&ring);
		}
		close(fd);
		stop(daemon);
		return 0;
	}
	pid_t daemon = start();
	pid_t other = fork();
	if (other == 0) {
		int local = open(at("local"), O_WRONLY | O_CREAT, 0644);
		int done = 0;
		for (int i = 0; i < 20; i++)
			done += write(local, "o", 1) == 1 && fsync(local) == 0;
		_exit(done);
	}
	int fd = open(at("fuse/file"), O_WRONLY | O_SYNC);
	say("open", fd);
	say_value("write", write(fd, "hello", 5));
	say("fsync", fsync(fd));
	say("fdatasync", fdatasync(fd));
	say("close", close(fd));
	int status;
	waitpid(other, &status, 0);
	printf("other_fsyncs=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	stop(daemon);
	return 0;
}
