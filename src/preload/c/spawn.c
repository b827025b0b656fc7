/*
 * posix_spawn(3) and posix_spawnp(3): the child's environment is decided
 * as for any exec (exec.c, src/preload/exec.rs).
 *
 * A child that goes without the library and must have the plain seccomp
 * filter cannot be given it by a hook: libc makes and executes it where
 * none runs, and a filter on the caller's thread would stay there for
 * good. A filter is a thread's own, and a child inherits its maker's: so
 * the real call is made on a thread of this process made for it
 * (spawned()), which takes the filter first (src/preload/spawn.rs). libc
 * still makes the child, applies the caller's file actions and
 * attributes, searches PATH and returns the exec's errors; the child is
 * this process's, and no other program runs before its own.
 *
 * The thread shares everything with the caller, its thread pointer too
 * (libc's per-thread data, errno among it): the caller waits, every
 * signal blocked, until the call has returned, so that one of the two
 * runs libc at a time, as libc's own child does on its parent's. The
 * child is given the caller's signal mask in the attributes (a copy,
 * where they name none), as it would have had it from the caller. Then
 * the thread, which the kernel records as the child's parent, stays,
 * without touching libc's data or errno, until the child has ended:
 * a thread that ends sends its children the signal they asked for
 * their parent's end (PR_SET_PDEATHSIG, which tini -p sets at its
 * start). It unmaps its own stack as it ends. A thread that cannot be
 * made (no memory, no task left) leaves the child unfiltered, as before
 * the filter: its syncs reach the disk.
 */
#include "shim.h"
#include "bare.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define EMD_NEXT_SPAWN(X) X(posix_spawn) X(posix_spawnp)

#define EMD_CACHE(name) static void *next_##name;
EMD_NEXT_SPAWN(EMD_CACHE)

/* posix_spawn's prototype, posix_spawnp's too. */
typedef __typeof__(&posix_spawn) spawn_fn;

/* One call of the real posix_spawn or posix_spawnp, and its result. */
struct call {
	spawn_fn next;
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *actions;
	const posix_spawnattr_t *attr;
	char *const *argv;
	char *const *envp;
	const struct emd_spawn_route *route;
	/* What the real call returns, and errno: the caller's before it,
	 * then as the call left it. */
	int error;
	int errnum;
	/* Set, and woken, once the call has returned: from then on the
	 * thread leaves all of this to the caller. */
	int done;
	/* The thread's stack (its lowest address), which the thread unmaps
	 * as it ends. */
	char *stack;
};

static long kernel(long number, long a, long b, long c, long d, long e,
		   long f)
{
	const long args[6] = { a, b, c, d, e, f };
	return eatmydata_kernel(number, args);
}

/* The thread's stack: room for libc's posix_spawn (whose child runs on a
 * stack libc maps) and the filter's set-id check, above a guard of at
 * least a page of any size Linux has. */
#define STACK (256 * 1024)
#define GUARD (64 * 1024)

/* The thread made for the call: the filter, then the call, which sees
 * the caller's errno and leaves its own; then, the caller woken, the
 * thread stays the child's parent until the child has ended (or another
 * thread has reaped it), without reaping it: a thread that ends sends
 * its children their PR_SET_PDEATHSIG signal, which a child sets for
 * its parent's end, not for this thread's. */
static int on_thread(void *argument)
{
	struct call *call = argument;
	char *stack = call->stack;
	pid_t child = 0;
	eatmydata_spawn_filter(call->route);
	errno = call->errnum;
	call->error = call->next(&child, call->path, call->actions, call->attr,
				 call->argv, call->envp);
	call->errnum = errno;
	if (call->error == 0 && call->pid)
		*call->pid = child;
	if (call->error != 0)
		child = 0;
	__atomic_store_n(&call->done, 1, __ATOMIC_RELEASE);
	bare(SYS_futex, (long)&call->done, FUTEX_WAKE_PRIVATE, 1, 0, 0);
	if (child > 0) {
		siginfo_t info;
		while (bare(SYS_waitid, P_PID, child, (long)&info,
			    WEXITED | WNOWAIT, 0) == -EINTR)
			;
	}
	unmapped_exit(stack, STACK + GUARD);
}

/* The attributes the thread's call is given: `attr`, or where it names no
 * signal mask, a copy in `copy` naming `mask`, the caller's: the thread
 * runs with every signal blocked, which the child would otherwise start
 * with. */
static const posix_spawnattr_t *masked(const posix_spawnattr_t *attr,
				       posix_spawnattr_t *copy,
				       const sigset_t *mask)
{
	short flags = 0;
	if (attr) {
		posix_spawnattr_getflags(attr, &flags);
		if (flags & POSIX_SPAWN_SETSIGMASK)
			return attr;
		*copy = *attr;
	} else {
		posix_spawnattr_init(copy);
	}
	posix_spawnattr_setflags(copy, flags | POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setsigmask(copy, mask);
	return copy;
}

/* Makes `call` on a thread made for it: 0, or -1 when no thread could be
 * made and the call was not made. */
static int spawned(struct call *call)
{
	unsigned long all = ~0UL, mask = 0;
	kernel(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&mask,
	       sizeof mask, 0, 0);
	sigset_t caller;
	sigemptyset(&caller);
	memcpy(&caller, &mask, sizeof mask);
	posix_spawnattr_t copy;
	const posix_spawnattr_t *attr = call->attr;
	call->attr = masked(attr, &copy, &caller);
	long at = kernel(SYS_mmap, 0, STACK + GUARD, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
			 -1, 0);
	int made = -1;
	if (at != -1 && kernel(SYS_mprotect, at, GUARD, PROT_NONE, 0, 0, 0) == 0) {
		call->stack = (char *)at;
		call->done = 0;
		int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			    CLONE_THREAD | CLONE_SYSVSEM;
		made = clone(on_thread, call->stack + STACK + GUARD, flags, call);
		while (made > 0 && !__atomic_load_n(&call->done, __ATOMIC_ACQUIRE))
			kernel(SYS_futex, (long)&call->done, FUTEX_WAIT_PRIVATE, 0,
			       0, 0, 0);
	}
	if (at != -1 && made <= 0)
		kernel(SYS_munmap, at, STACK + GUARD, 0, 0, 0, 0);
	kernel(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, 0, sizeof mask, 0,
	       0);
	/* The caller's own again: `copy` ends with this frame. */
	call->attr = attr;
	return made > 0 ? 0 : -1;
}

/* The real call `next` for the program `path` (searched in PATH when
 * `search`) with the environment decided for it, on a thread made for
 * it where the child must have the filter. */
static int spawn(spawn_fn next, int search, pid_t *pid, const char *path,
		 const posix_spawn_file_actions_t *actions,
		 const posix_spawnattr_t *attr, char *const argv[],
		 char *const envp[])
{
	struct emd_exec_room room;
	struct emd_spawn_route route;
	route.program = NULL;
	char *const *env = eatmydata_exec_env(AT_FDCWD, path, 0, search,
					      &route, argv, envp, &room,
					      sizeof room);
	if (!next)
		return eatmydata_missing();
	if (route.program) {
		struct call call = { .next = next, .pid = pid, .path = path,
				     .actions = actions, .attr = attr,
				     .argv = argv, .envp = env,
				     .route = &route, .errnum = errno };
		int made = spawned(&call);
		errno = call.errnum;
		if (made == 0)
			return call.error;
		eatmydata_spawn_unfiltered(&route);
	}
	return next(pid, path, actions, attr, argv, env);
}

int HOOK(posix_spawn)(pid_t *pid, const char *path,
		      const posix_spawn_file_actions_t *actions,
		      const posix_spawnattr_t *attr, char *const argv[],
		      char *const envp[])
{
	return spawn(NEXT(posix_spawn), 0, pid, path, actions, attr, argv,
		     envp);
}
MATCHES(posix_spawn);

int HOOK(posix_spawnp)(pid_t *pid, const char *file,
		       const posix_spawn_file_actions_t *actions,
		       const posix_spawnattr_t *attr, char *const argv[],
		       char *const envp[])
{
	return spawn(NEXT(posix_spawnp), 1, pid, file, actions, attr, argv,
		     envp);
}
MATCHES(posix_spawnp);
