/* openat2(2) with O_SYNC in its open_how: the resolve flags hold, as the
 * kernel applies them to the program's own directory descriptor.
 *
 *   in_root         RESOLVE_IN_ROOT, "/f" from AREA/root: AREA/root/f
 *   in_root_dotdot  RESOLVE_IN_ROOT, "../../g": clamped, AREA/root/g
 *   beneath_abs     RESOLVE_BENEATH, "/f": EXDEV
 *   beneath_dotdot  RESOLVE_BENEATH, "../escape": EXDEV
 *   no_symlinks     RESOLVE_NO_SYMLINKS through AREA/root/link: ELOOP
 *   no_magiclinks   RESOLVE_NO_MAGICLINKS, /proc/self/fd/N: ELOOP
 *   no_xdev         RESOLVE_NO_XDEV from "/" into /proc: EXDEV
 *   bad_how         an unknown resolve bit; mode without O_CREAT: EINVAL
 *   getfl           F_GETFL after openat(O_SYNC): what the program sees
 *   getfl2          the same after openat2(O_SYNC)
 *   how_readback    the open_how's flags, read back after openat2(O_SYNC)
 *   how_readonly    an open_how in read-only memory: opened all the same
 *   direct          openat2 with O_DIRECT|O_DSYNC, then a 1-byte write at
 *                   offset 1, which O_DIRECT refuses (EINVAL)
 *   direct_openat   the same through openat
 *   direct_keep_direct  `direct` again (run with eatmydata --keep-direct)
 *   how_in_file     an open_how in a shared mapping of AREA/how: the file
 *                   holds what the program wrote there, and nothing else
 *   how_big_zero    a 32-byte open_how whose tail is zero: accepted
 *   how_big_nonzero a 32-byte open_how whose tail is not zero: E2BIG
 *   (bad_how, how_big_nonzero and opath_sync read their refused open_how
 *   back: it is left as the program wrote it)
 *
 * Opens the kernel refuses before it looks at the path, each with O_SYNC
 * (or O_DIRECT) beside what it refuses: the flag must not be dropped, or
 * what is left may be accepted. openat2 checks more than openat, which
 * ignores unknown bits and O_PATH's other flags:
 *   opath_sync      openat2 O_PATH with O_SYNC, O_DSYNC, O_DIRECT: EINVAL;
 *                   openat with the same: opened (the kernel drops them)
 *   unknown_flag    openat2 with an unknown bit (1 << 30) and O_SYNC:
 *                   EINVAL; openat: opened
 *   high_flags      openat2 with a bit above 32 and O_SYNC: EINVAL
 *   tmpfile_rdonly  O_TMPFILE|O_RDONLY|O_SYNC: EINVAL, both calls
 *   tmpfile_creat   O_TMPFILE|O_CREAT|O_RDWR|O_SYNC: EINVAL, both calls
 *   tmpfile_sync    O_TMPFILE|O_RDWR|O_SYNC: opened, both calls
 *   directory_creat O_DIRECTORY|O_CREAT|O_SYNC: EINVAL (Linux 6.4)
 *   mode_bad        openat2 O_CREAT|O_SYNC with mode 010644: EINVAL;
 *                   openat: created 0644
 *   scoped_both     RESOLVE_BENEATH|RESOLVE_IN_ROOT with O_SYNC: EINVAL
 *   cached_trunc    RESOLVE_CACHED with O_TRUNC|O_SYNC: EAGAIN
 */
#include "parity.h"
#include <linux/openat2.h>
#include <sys/mman.h>

static int open2(int dir, const char *path, unsigned long long flags, unsigned long long resolve)
{
	struct open_how how = {.flags = flags, .mode = flags & O_CREAT ? 0644 : 0, .resolve = resolve};
	return syscall(SYS_openat2, dir, path, &how, sizeof how);
}

static void make(const char *name, int dir, const char *path, unsigned long long resolve)
{
	int fd = open2(dir, path, O_WRONLY | O_CREAT | O_SYNC, resolve);
	say(name, fd);
	if (fd >= 0)
		say("write", write(fd, "written\n", 8));
}

static int run(const char *which)
{
	int root = open(at("root"), O_PATH | O_DIRECTORY);
	if (root < 0)
		return 3;
	CASE("in_root") {
		make("open", root, "/f", RESOLVE_IN_ROOT);
		return 0;
	}
	CASE("in_root_dotdot") {
		make("open", root, "../../g", RESOLVE_IN_ROOT);
		return 0;
	}
	CASE("beneath_abs") {
		make("open", root, "/f", RESOLVE_BENEATH);
		return 0;
	}
	CASE("beneath_dotdot") {
		make("open", root, "../escape", RESOLVE_BENEATH);
		return 0;
	}
	CASE("no_symlinks") {
		make("open", root, "link", RESOLVE_NO_SYMLINKS);
		return 0;
	}
	CASE("no_magiclinks") {
		char path[64];
		int fd = open(at("root/target"), O_RDWR);
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		say("open", open2(AT_FDCWD, path, O_WRONLY | O_SYNC, RESOLVE_NO_MAGICLINKS));
		return 0;
	}
	CASE("no_xdev") {
		int top = open("/", O_PATH | O_DIRECTORY);
		say("open", open2(top, "proc/self/status", O_RDONLY | O_SYNC, RESOLVE_NO_XDEV));
		return 0;
	}
	CASE("bad_how") {
		say("unknown_resolve", open2(root, "f", O_WRONLY | O_CREAT | O_SYNC, 1ULL << 40));
		struct open_how how = {.flags = O_WRONLY | O_SYNC, .mode = 0644};
		say("mode_without_creat", syscall(SYS_openat2, root, "target", &how, sizeof how));
		printf("how_flags=%#llx\n", how.flags);
		say("short_how", syscall(SYS_openat2, root, "target", &how, 8));
		return 0;
	}
	CASE("getfl") {
		int fd = openat(root, "target", O_WRONLY | O_SYNC);
		int flags = fcntl(fd, F_GETFL);
		say("open", fd);
		printf("sync=%s\n", (flags & O_SYNC) == O_SYNC ? "kept" : "dropped");
		return 0;
	}
	CASE("getfl2") {
		int fd = open2(root, "target", O_WRONLY | O_SYNC, 0);
		int flags = fcntl(fd, F_GETFL);
		say("open", fd);
		printf("sync=%s\n", (flags & O_SYNC) == O_SYNC ? "kept" : "dropped");
		return 0;
	}
	CASE("how_readonly") {
		static const struct open_how how = {.flags = O_WRONLY | O_SYNC};
		say("open", syscall(SYS_openat2, root, "target", &how, sizeof how));
		return 0;
	}
	if (!strcmp(which, "direct") || !strcmp(which, "direct_keep_direct")) {
		int fd = open2(root, "target", O_WRONLY | O_DIRECT | O_DSYNC, 0);
		say("open", fd);
		say_value("pwrite", pwrite(fd, "x", 1, 1));
		return 0;
	}
	CASE("direct_openat") {
		int fd = openat(root, "target", O_WRONLY | O_DIRECT | O_DSYNC);
		say("open", fd);
		say_value("pwrite", pwrite(fd, "x", 1, 1));
		return 0;
	}
	CASE("how_in_file") {
		int file = open(at("how"), O_RDWR | O_CREAT, 0644);
		if (file < 0 || ftruncate(file, sizeof(struct open_how)))
			return 3;
		struct open_how *how = mmap(NULL, sizeof *how, PROT_READ | PROT_WRITE, MAP_SHARED,
					    file, 0);
		if (how == MAP_FAILED)
			return 3;
		how->flags = O_WRONLY | O_SYNC;
		say("open", syscall(SYS_openat2, root, "target", how, sizeof *how));
		say("munmap", munmap(how, sizeof *how));
		return 0;
	}
	CASE("how_big_zero") {
		unsigned long long how[4] = {O_WRONLY | O_SYNC, 0, 0, 0};
		say("open", syscall(SYS_openat2, root, "target", how, sizeof how));
		return 0;
	}
	CASE("how_big_nonzero") {
		unsigned long long how[4] = {O_WRONLY | O_SYNC, 0, 0, 1};
		say("open", syscall(SYS_openat2, root, "target", how, sizeof how));
		printf("how_flags=%#llx\n", how[0]);
		return 0;
	}
	CASE("opath_sync") {
		struct open_how how = {.flags = O_PATH | O_SYNC};
		say("openat2_sync", syscall(SYS_openat2, root, "target", &how, sizeof how));
		printf("how_flags=%#llx\n", how.flags);
		say("openat2_dsync", open2(root, "target", O_PATH | O_DSYNC | O_CLOEXEC, 0));
		say("openat2_direct", open2(root, "target", O_PATH | O_DIRECT, 0));
		say("openat2_path", open2(root, "target", O_PATH | O_NOFOLLOW | O_CLOEXEC, 0));
		int fd = openat(root, "target", O_PATH | O_SYNC | O_DIRECT);
		say("openat", fd);
		int flags = fcntl(fd, F_GETFL);
		printf("getfl_sync=%s\n", (flags & O_DSYNC) ? "kept" : "dropped");
		return 0;
	}
	CASE("unknown_flag") {
		say("openat2", open2(root, "target", O_WRONLY | O_SYNC | (1 << 30), 0));
		int fd = openat(root, "target", O_WRONLY | O_SYNC | (1 << 30));
		say("openat", fd);
		say("write", write(fd, "x", 1));
		return 0;
	}
	CASE("high_flags") {
		say("openat2", open2(root, "target", O_WRONLY | O_SYNC | (1ULL << 40), 0));
		return 0;
	}
	CASE("tmpfile_rdonly") {
		struct open_how how = {.flags = O_TMPFILE | O_RDONLY | O_SYNC, .mode = 0600};
		say("openat2", syscall(SYS_openat2, root, ".", &how, sizeof how));
		say("openat", openat(root, ".", O_TMPFILE | O_RDONLY | O_SYNC, 0600));
		return 0;
	}
	CASE("tmpfile_creat") {
		struct open_how how = {.flags = O_TMPFILE | O_CREAT | O_RDWR | O_SYNC, .mode = 0600};
		say("openat2", syscall(SYS_openat2, root, ".", &how, sizeof how));
		say("openat", openat(root, ".", O_TMPFILE | O_CREAT | O_RDWR | O_SYNC, 0600));
		return 0;
	}
	CASE("tmpfile_sync") {
		struct open_how how = {.flags = O_TMPFILE | O_RDWR | O_SYNC, .mode = 0600};
		int fd = syscall(SYS_openat2, root, ".", &how, sizeof how);
		say("openat2", fd);
		say("write2", write(fd, "x", 1));
		fd = openat(root, ".", O_TMPFILE | O_RDWR | O_SYNC, 0600);
		say("openat", fd);
		say("write", write(fd, "x", 1));
		return 0;
	}
	CASE("directory_creat") {
		say("openat2", open2(root, "newdir", O_DIRECTORY | O_CREAT | O_SYNC, 0));
		say("openat", openat(root, "newdir2", O_DIRECTORY | O_CREAT | O_SYNC, 0755));
		return 0;
	}
	CASE("mode_bad") {
		struct open_how how = {.flags = O_WRONLY | O_CREAT | O_SYNC, .mode = 010644};
		say("openat2", syscall(SYS_openat2, root, "made2", &how, sizeof how));
		say("openat", openat(root, "made", O_WRONLY | O_CREAT | O_SYNC, 010644));
		return 0;
	}
	CASE("scoped_both") {
		make("open", root, "f", RESOLVE_BENEATH | RESOLVE_IN_ROOT);
		return 0;
	}
	CASE("cached_trunc") {
		say("open", open2(root, "target", O_WRONLY | O_TRUNC | O_SYNC, RESOLVE_CACHED));
		return 0;
	}
	CASE("how_readback") {
		struct open_how how = {.flags = O_WRONLY | O_SYNC};
		say("open", syscall(SYS_openat2, root, "target", &how, sizeof how));
		printf("how_flags=%s\n", (how.flags & O_SYNC) == O_SYNC ? "kept" : "changed");
		return 0;
	}
	UNKNOWN();
}
