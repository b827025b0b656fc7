/* Who the program is: its user, capabilities and Landlock domain decide
 * what an open with O_SYNC (or a pwritev2 with RWF_DSYNC) may do.
 *
 *   kallsyms_nobody   nobody reads /proc/kallsyms: addresses zeroed
 *   proc_cwd_of_root  nobody opens /proc/PPID/cwd/secret of a root parent
 *                     sitting in AREA/private (0700): EACCES
 *   setuid_pwritev2   nobody's pwritev2(RWF_DSYNC) to AREA/suid (root,
 *                     06777) clears the set-id bits, as any write does
 *   setuid_osync      the same through an O_SYNC descriptor and write(2)
 *   nobody_create     nobody cannot create in AREA/rootdir (root, 0755)
 *   root_without_caps uid 0 without capabilities cannot open AREA/secret
 *                     (uid 1000, 0600) to truncate it
 *   landlock_trunc    a Landlock domain allowing AREA/inside only: opening
 *                     AREA/outside/f with O_WRONLY|O_TRUNC|O_SYNC is EACCES
 *                     and the file stays whole
 *   landlock_create   nor may it create AREA/outside/new; AREA/inside/g is
 *                     created
 */
#include "parity.h"
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/uio.h>

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE /* Linux 6.2; older headers lack it */
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

static void nobody_writes(int sync_open)
{
	become_nobody();
	int fd = open(at("suid"), O_WRONLY | (sync_open ? O_SYNC : 0));
	say("open", fd);
	struct iovec iov = {.iov_base = "by nobody", .iov_len = 9};
	if (sync_open)
		say_value("write", write(fd, iov.iov_base, iov.iov_len));
	else
		say_value("pwritev2", pwritev2(fd, &iov, 1, 0, RWF_DSYNC));
	struct stat st;
	if (fstat(fd, &st) == 0)
		printf("mode=%o\n", st.st_mode & 07777);
}

/* Restricts this process to AREA/inside, or exits 3. */
static void landlock(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	printf("landlock=%s\n", abi >= 1 ? "yes" : error_name(errno));
	if (abi < 1)
		exit(3);
	struct landlock_ruleset_attr attr = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
				     LANDLOCK_ACCESS_FS_MAKE_REG,
	};
	if (abi >= 3)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	int ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	struct landlock_path_beneath_attr inside = {
		.allowed_access = attr.handled_access_fs,
		.parent_fd = open(at("inside"), O_PATH | O_DIRECTORY),
	};
	if (ruleset < 0 || inside.parent_fd < 0 ||
	    syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &inside, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_landlock_restrict_self, ruleset, 0)) {
		perror("landlock");
		exit(3);
	}
}

static int run(const char *which)
{
	CASE("kallsyms_nobody") {
		become_nobody();
		int fd = open("/proc/kallsyms", O_RDONLY | O_SYNC);
		say("open", fd);
		char line[17] = {0};
		say("read", read(fd, line, 16));
		printf("address=%s\n", strspn(line, "0") == 16 ? "zero" : "shown");
		return 0;
	}
	CASE("proc_cwd_of_root") {
		if (chdir(at("private")))
			return 3;
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/cwd/secret", getpid());
		pid_t child = fork();
		if (child == 0) {
			become_nobody();
			int fd = open(path, O_RDONLY | O_SYNC);
			say("open", fd);
			char text[64] = {0};
			if (fd >= 0 && read(fd, text, sizeof text - 1) > 0)
				printf("read=%s", text);
			_exit(0);
		}
		waitpid(child, NULL, 0);
		return 0;
	}
	CASE("setuid_pwritev2") {
		nobody_writes(0);
		return 0;
	}
	CASE("setuid_osync") {
		nobody_writes(1);
		return 0;
	}
	CASE("nobody_create") {
		become_nobody();
		say("create", open(at("rootdir/f"), O_WRONLY | O_CREAT | O_SYNC, 0644));
		return 0;
	}
	CASE("root_without_caps") {
		struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct data[2] = {{0}};
		say("capset", syscall(SYS_capset, &header, data));
		say("open_secret", open(at("secret"), O_WRONLY | O_TRUNC | O_SYNC));
		return 0;
	}
	CASE("landlock_trunc") {
		landlock();
		say("open_outside", open(at("outside/f"), O_WRONLY | O_TRUNC | O_SYNC));
		return 0;
	}
	CASE("landlock_create") {
		landlock();
		say("create_outside", open(at("outside/new"), O_WRONLY | O_CREAT | O_SYNC, 0644));
		say("create_inside", open(at("inside/g"), O_WRONLY | O_CREAT | O_SYNC, 0644));
		return 0;
	}
	UNKNOWN();
}
