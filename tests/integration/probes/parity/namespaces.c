/* Namespaces and roots: an open with O_SYNC must land where the kernel,
 * resolving as the program, would put it.
 *
 *   tmpfs          a private mount namespace with a tmpfs on AREA/t: the
 *                  file is made in the tmpfs (gone at exit), not on disk
 *   userns_root    root of a new user namespace (as `unshare -U -r`) is
 *                  not host root: AREA/secret (uid 1000, 0600) stays shut
 *   userns_create  nor may it create in AREA/theirs (uid 1000, 0755)
 *   chroot_bind    a chroot into a bind mount of AREA/src: "/f" is AREA/src/f
 *   chroot_slash   a chroot into a bind mount of "/" itself (the same
 *                  root inode as the host's) with a tmpfs on AREA/t inside:
 *                  the file lands in that tmpfs
 */
#include "parity.h"
#include <dirent.h>
#include <sched.h>
#include <sys/mount.h>

static int private_mounts(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		perror("private mount namespace");
		return -1;
	}
	return 0;
}

/* Makes `path` with O_SYNC and writes `text` to it. */
static void make(const char *name, const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_SYNC, 0644);
	say(name, fd);
	if (fd >= 0) {
		say("write", write(fd, text, strlen(text)));
		close(fd);
	}
}

/* The names in `dir`, for the output. */
static void list(const char *name, const char *dir)
{
	DIR *d = opendir(dir);
	printf("%s=", name);
	if (!d) {
		printf("%s\n", error_name(errno));
		return;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			printf("%s ", e->d_name);
	printf("\n");
	closedir(d);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	int rc = write(fd, text, strlen(text)) < 0 ? -1 : 0;
	close(fd);
	return rc;
}

static int run(const char *which)
{
	CASE("tmpfs") {
		if (private_mounts())
			return 3;
		say("mount", mount("tmpfs", at("t"), "tmpfs", 0, "size=1m"));
		make("open", at("t/f"), "in the tmpfs\n");
		list("tmpfs", at("t"));
		return 0;
	}
	CASE("userns_root") {
		say("unshare", unshare(CLONE_NEWUSER));
		say("setgroups", write_file("/proc/self/setgroups", "deny"));
		say("uid_map", write_file("/proc/self/uid_map", "0 0 1"));
		say("gid_map", write_file("/proc/self/gid_map", "0 0 1"));
		int fd = open(at("secret"), O_WRONLY | O_TRUNC | O_SYNC);
		say("open_secret", fd);
		return 0;
	}
	CASE("userns_create") {
		say("unshare", unshare(CLONE_NEWUSER));
		say("setgroups", write_file("/proc/self/setgroups", "deny"));
		say("uid_map", write_file("/proc/self/uid_map", "0 0 1"));
		say("gid_map", write_file("/proc/self/gid_map", "0 0 1"));
		make("create", at("theirs/f"), "made by namespace root\n");
		return 0;
	}
	CASE("chroot_bind") {
		if (private_mounts())
			return 3;
		say("bind", mount(at("src"), at("root"), NULL, MS_BIND, NULL));
		say("chroot", chroot(at("root")));
		say("chdir", chdir("/"));
		make("open", "/f", "in the chroot\n");
		list("root", "/");
		return 0;
	}
	CASE("chroot_slash") {
		if (private_mounts())
			return 3;
		say("bind", mount("/", at("root"), NULL, MS_BIND, NULL));
		/* AREA/root + AREA + /t: AREA/t as the bind shows it. */
		char t[8192];
		snprintf(t, sizeof t, "%s%s", at("root"), at("t"));
		say("mount", mount("tmpfs", t, "tmpfs", 0, "size=1m"));
		say("chroot", chroot(at("root")));
		say("chdir", chdir("/"));
		make("open", at("t/f"), "in the chroot's tmpfs\n");
		list("tmpfs", at("t"));
		return 0;
	}
	UNKNOWN();
}
