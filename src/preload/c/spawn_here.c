/*
 * The posix_spawn child made by the hook, in a glibc program: as glibc's
 * posix_spawn makes it (a CLONE_VM|CLONE_VFORK child on a stack of its
 * own, the caller waiting with every signal blocked), but the child
 * takes the filter first (src/preload/spawn.rs), then does what glibc's
 * child does, in glibc's order: signal dispositions, scheduling,
 * session, process group, ids, the file actions, the signal mask, the
 * exec (with posix_spawnp's PATH search, the exec check's own), the
 * error passed back in the memory it shares with the caller. So the
 * child is the calling thread's own, as without eatmydata, and costs one
 * filter more.
 *
 * The attributes and the file actions are read from glibc's records
 * (the fields <spawn.h> names, and posix/spawn_int.h's actions), without
 * a call to libc that the loader would have to bind in every process:
 * so only for a glibc of a version whose records are known, and only
 * for the actions known here; anything else goes to the thread
 * (spawn_thread.c).
 * tests/integration/children/attributes.rs holds each attribute and
 * action to the real posix_spawn.
 *
 * The child's kernel calls are made without libc (bare.h), errno set
 * where libc's wrapper would set it: the child shares the caller's
 * memory, errno with it, as glibc's child does.
 */
#include "spawn.h"
#include "bare.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

/* glibc's record of one file action, the same from 2.2 to 2.42 save for
 * the kinds added at the end of `tag`'s list. */
enum {
	DO_CLOSE,
	DO_DUP2,
	DO_OPEN,
	DO_CHDIR,
	DO_FCHDIR,
	DO_CLOSEFROM,
	DO_TCSETPGRP,
	DO_KNOWN
};
struct action {
	int tag;
	union {
		struct { int fd; } close;
		struct { int fd, newfd; } dup2;
		struct { int fd; char *path; int oflag; mode_t mode; } open;
		struct { char *path; } chdir;
		struct { int fd; } fchdir;
		struct { int from; } closefrom;
		struct { int fd; } tcsetpgrp;
	} what;
};
_Static_assert(sizeof(struct action) == 32, "glibc's struct __spawn_action");

/* The newest glibc (2.x) whose records this reads. */
#define GLIBC_KNOWN_MINOR 42
/* The attributes' flags glibc 2.42 knows but POSIX_SPAWN_SETCGROUP. */
#define FLAGS_KNOWN                                                        \
	(POSIX_SPAWN_RESETIDS | POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | \
	 POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSCHEDPARAM |                  \
	 POSIX_SPAWN_SETSCHEDULER | POSIX_SPAWN_USEVFORK | POSIX_SPAWN_SETSID)

static void *next_gnu_get_libc_version;

/* Whether glibc, 2.GLIBC_KNOWN_MINOR at most, is the process's libc:
 * 1 or 0, learned once (two threads learn the same). */
static int glibc_known(void)
{
	static int known = -1;
	int was = __atomic_load_n(&known, __ATOMIC_RELAXED);
	if (was >= 0)
		return was;
	const char *(*version)(void) =
		eatmydata_next(&next_gnu_get_libc_version, "gnu_get_libc_version");
	int major = 0, minor = 0;
	const char *at = version ? version() : "";
	for (; *at >= '0' && *at <= '9'; at++)
		major = major * 10 + (*at - '0');
	if (*at == '.')
		for (at++; *at >= '0' && *at <= '9' && minor < 1000; at++)
			minor = minor * 10 + (*at - '0');
	int is = major == 2 && minor <= GLIBC_KNOWN_MINOR;
	__atomic_store_n(&known, is, __ATOMIC_RELAXED);
	return is;
}

/* Whether the child made here can do all `actions` and `attr` ask. */
static int readable(const posix_spawn_file_actions_t *actions,
		    const posix_spawnattr_t *attr)
{
	if (!glibc_known())
		return 0;
	if (attr && (attr->__flags & ~FLAGS_KNOWN) != 0)
		return 0;
	if (!actions)
		return 1;
	if (actions->__used < 0 || actions->__used > actions->__allocated)
		return 0;
	const struct action *action = (const struct action *)actions->__actions;
	for (int i = 0; i < actions->__used; i++) {
		if (action[i].tag < 0 || action[i].tag >= DO_KNOWN)
			return 0;
		/* A closefrom where the kernel has no close_range (before
		 * 5.9; it refuses an empty range where it has one): glibc's
		 * child then closes each descriptor /proc lists, which the
		 * thread's call leaves to it. */
		if (action[i].tag == DO_CLOSEFROM &&
		    bare(SYS_close_range, ~0U, 0, 0, 0, 0) == -ENOSYS)
			return 0;
	}
	return 1;
}

/* One spawn by the child made here, and its outcome. */
struct own {
	const char *path;
	int search;
	char *const *argv;
	char *const *envp;
	const posix_spawn_file_actions_t *actions;
	const posix_spawnattr_t *attr;
	const struct emd_spawn_route *route;
	/* The caller's signal mask, as the kernel keeps it. */
	unsigned long mask;
	/* The child's error, where it did not get to run the program. */
	int error;
};

/* A system call of the child's, errno set as libc's wrapper sets it: the
 * child shares the caller's memory, errno with it, as glibc's does. */
static long in_child(long number, long a, long b, long c, long d)
{
	long result = bare(number, a, b, c, d, 0);
	if (result < 0 && result > -4096) {
		errno = (int)-result;
		return -1;
	}
	return result;
}

/* The kernel's struct sigaction, the handler first on both x86_64 and
 * aarch64. */
struct disposition {
	void *handler;
	unsigned long flags, restorer, mask;
};

/* glibc's child: every signal with a handler (or in the attributes'
 * defaults) back to its default, for the handler would run in memory the
 * caller shares; glibc's own two (cancellation, set-id) ignored. */
static void dispositions(const posix_spawnattr_t *attr, short flags)
{
	unsigned long defaults = 0, blocked = 0;
	if (flags & POSIX_SPAWN_SETSIGDEF)
		memcpy(&defaults, &attr->__sd, sizeof defaults);
	bare(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&blocked, sizeof blocked, 0);
	for (int sig = 1; sig <= 64; sig++) {
		struct disposition set = { 0 }, now;
		unsigned long bit = 1UL << (sig - 1);
		if (defaults & bit) {
			set.handler = SIG_DFL;
		} else if (blocked & bit) {
			if (sig == 32 || sig == 33) {
				set.handler = SIG_IGN;
			} else {
				if (bare(SYS_rt_sigaction, sig, 0, (long)&now, 8, 0) != 0 ||
				    now.handler == SIG_IGN || now.handler == SIG_DFL)
					continue;
				set.handler = SIG_DFL;
			}
		} else {
			continue;
		}
		bare(SYS_rt_sigaction, sig, (long)&set, 0, 8, 0);
	}
}

/* glibc's child's file actions, in order: 0, or -1 and errno. `group`
 * is the process group the attributes set, 0 for none. */
static int file_actions(const posix_spawn_file_actions_t *actions, pid_t group)
{
	const struct action *action = (const struct action *)actions->__actions;
	for (int i = 0; i < actions->__used; i++, action++) {
		switch (action->tag) {
		case DO_CLOSE: {
			int fd = action->what.close.fd;
			struct rlimit files;
			if (in_child(SYS_close, fd, 0, 0, 0) != 0 &&
			    (fd < 0 ||
			     bare(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&files, 0) != 0 ||
			     (rlim_t)fd >= files.rlim_cur))
				return -1;
			break;
		}
		case DO_OPEN: {
			int fd = action->what.open.fd;
			in_child(SYS_close, fd, 0, 0, 0);
			long opened = in_child(SYS_openat, AT_FDCWD,
					       (long)action->what.open.path,
					       action->what.open.oflag | O_LARGEFILE,
					       action->what.open.mode);
			if (opened < 0)
				return -1;
			if (opened != fd &&
			    (in_child(SYS_dup3, opened, fd, 0, 0) != fd ||
			     in_child(SYS_close, opened, 0, 0, 0) != 0))
				return -1;
			break;
		}
		case DO_DUP2: {
			int fd = action->what.dup2.fd, to = action->what.dup2.newfd;
			if (fd == to) {
				long now = in_child(SYS_fcntl, fd, F_GETFD, 0, 0);
				if (now < 0 ||
				    in_child(SYS_fcntl, fd, F_SETFD, now & ~FD_CLOEXEC, 0) < 0)
					return -1;
			} else if (in_child(SYS_dup3, fd, to, 0, 0) != to) {
				return -1;
			}
			break;
		}
		case DO_CHDIR:
			if (in_child(SYS_chdir, (long)action->what.chdir.path, 0, 0, 0) != 0)
				return -1;
			break;
		case DO_FCHDIR:
			if (in_child(SYS_fchdir, action->what.fchdir.fd, 0, 0, 0) != 0)
				return -1;
			break;
		case DO_CLOSEFROM:
			if (in_child(SYS_close_range, action->what.closefrom.from, ~0U, 0,
				     0) != 0)
				return -1;
			break;
		case DO_TCSETPGRP: {
			/* The terminal's foreground: the child's group. */
			pid_t foreground = group ? group : bare(SYS_getpgid, 0, 0, 0, 0, 0);
			if (in_child(SYS_ioctl, action->what.tcsetpgrp.fd, TIOCSPGRP,
				     (long)&foreground, 0) != 0)
				return -1;
			break;
		}
		}
	}
	return 0;
}

/* The child made here: the filter, then glibc's child's work; it ends
 * in the program, or with the error where it fails. */
static int own_child(void *argument)
{
	struct own *own = argument;
	int caller = errno;
	eatmydata_spawn_filter(own->route);
	errno = caller;
	const posix_spawnattr_t *attr = own->attr;
	short flags = attr ? attr->__flags : 0;
	dispositions(attr, flags);
	if ((flags & (POSIX_SPAWN_SETSCHEDPARAM | POSIX_SPAWN_SETSCHEDULER)) ==
	    POSIX_SPAWN_SETSCHEDPARAM) {
		if (in_child(SYS_sched_setparam, 0, (long)&attr->__sp, 0, 0) != 0)
			goto failed;
	} else if (flags & POSIX_SPAWN_SETSCHEDULER) {
		if (in_child(SYS_sched_setscheduler, 0, attr->__policy,
			     (long)&attr->__sp, 0) != 0)
			goto failed;
	}
	if ((flags & POSIX_SPAWN_SETSID) && in_child(SYS_setsid, 0, 0, 0, 0) < 0)
		goto failed;
	pid_t group = flags & POSIX_SPAWN_SETPGROUP ? attr->__pgrp : 0;
	if ((flags & POSIX_SPAWN_SETPGROUP) &&
	    in_child(SYS_setpgid, 0, group, 0, 0) != 0)
		goto failed;
	if ((flags & POSIX_SPAWN_RESETIDS) &&
	    (in_child(SYS_setresuid, -1, bare(SYS_getuid, 0, 0, 0, 0, 0), -1, 0) != 0 ||
	     in_child(SYS_setresgid, -1, bare(SYS_getgid, 0, 0, 0, 0, 0), -1, 0) != 0))
		goto failed;
	if (own->actions && file_actions(own->actions, group) != 0)
		goto failed;
	unsigned long mask = own->mask;
	if (flags & POSIX_SPAWN_SETSIGMASK)
		memcpy(&mask, &attr->__ss, sizeof mask);
	bare(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, 0, sizeof mask, 0);
	const char *slash = own->path;
	while (*slash && *slash != '/')
		slash++;
	if (own->search && !*slash)
		errno = eatmydata_exec_searched(own->path, own->argv, own->envp);
	else
		in_child(SYS_execve, (long)own->path, (long)own->argv,
			 (long)own->envp, 0);
failed:
	own->error = errno ? errno : ECHILD;
	bare(SYS_exit_group, 127, 0, 0, 0, 0);
	__builtin_unreachable();
}

int spawn_here(struct call *call)
{
	if (!readable(call->actions, call->attr) || spawn_stack(call) != 0)
		return -1;
	struct own own = { .path = call->path, .search = call->search,
			   .argv = call->argv, .envp = call->envp,
			   .actions = call->actions, .attr = call->attr,
			   .route = call->route };
	unsigned long all = ~0UL;
	bare(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&own.mask,
	     sizeof own.mask, 0);
	pid_t child = clone(own_child, call->stack + STACK + GUARD,
			    CLONE_VM | CLONE_VFORK | SIGCHLD, &own);
	if (child > 0) {
		call->error = own.error;
		if (own.error)
			bare(SYS_wait4, child, 0, 0, 0, 0);
		else if (call->pid)
			*call->pid = child;
	} else {
		call->error = errno;
	}
	/* The child has run its program or ended: its stack is free. */
	spawn_stack_free(call);
	bare(SYS_rt_sigprocmask, SIG_SETMASK, (long)&own.mask, 0,
	     sizeof own.mask, 0);
	return 0;
}

