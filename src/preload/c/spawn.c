/*
 * posix_spawn(3) and posix_spawnp(3): the child's environment is decided
 * as for any exec (exec.c, src/preload/exec.rs).
 *
 * A child that goes without the library and must have the plain seccomp
 * filter cannot be given it by a hook: libc makes and executes it where
 * none runs, and a filter on the caller's thread would stay there for
 * good. A filter is a thread's own, and a child inherits its maker's: so
 * the real call is made on a thread of this process made for it
 * (spawned()), which takes the filter first (src/preload/spawn.rs) and
 * ends with the call. libc still makes the child, applies the caller's
 * file actions and attributes, searches PATH and returns the exec's
 * errors; the child is this process's, and no other program runs before
 * its own.
 *
 * The thread shares everything with the caller, its thread pointer too
 * (libc's per-thread data, errno among it): the caller waits, every
 * signal blocked, until the thread has left the process, so that one of
 * the two runs at a time, as libc's own child does on its parent's. The
 * child is given the caller's signal mask in the attributes (a copy,
 * where they name none), as it would have had it from the caller. A
 * thread that cannot be made (no memory, no task left) leaves the child
 * unfiltered, as before the filter: its syncs reach the disk.
 */
#include "shim.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

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
};

static long kernel(long number, long a, long b, long c, long d, long e,
		   long f)
{
	const long args[6] = { a, b, c, d, e, f };
	return eatmydata_kernel(number, args);
}

/* The thread made for the call: the filter, then the call, which sees
 * the caller's errno and leaves its own. The thread ends when this
 * returns. */
static int on_thread(void *argument)
{
	struct call *call = argument;
	eatmydata_spawn_filter(call->route);
	errno = call->errnum;
	call->error = call->next(call->pid, call->path, call->actions,
				 call->attr, call->argv, call->envp);
	call->errnum = errno;
	return 0;
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

/* Waits until the thread `tid` has left the process. The kernel clears
 * `*word` once the thread no longer uses its stack, and takes it out of
 * the thread group a moment later: until then the process would not be
 * single-threaded (unshare(CLONE_NEWUSER) fails, /proc says 2 threads). */
static void joined(pid_t tid, pid_t *word)
{
	for (pid_t now; (now = __atomic_load_n(word, __ATOMIC_ACQUIRE));)
		kernel(SYS_futex, (long)word, FUTEX_WAIT, now, 0, 0, 0);
	long self = kernel(SYS_getpid, 0, 0, 0, 0, 0, 0);
	for (int tries = 0; tries < 100000; tries++) {
		if (kernel(SYS_tgkill, self, tid, 0, 0, 0, 0) != 0)
			return;
		kernel(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	}
}

/* The thread's stack: room for libc's posix_spawn (whose child runs on a
 * stack libc maps) and the filter's set-id check, above a guard of at
 * least a page of any size Linux has. */
#define STACK (256 * 1024)
#define GUARD (64 * 1024)

/* One stack kept for the next call, where a new one would cost a mapping,
 * its guard, its first page faults and an unmapping each time: taken by
 * an exchange and given back by a compare-exchange, so that calls on
 * several threads at once each have one, without a lock. */
static void *spare;

/* A stack for the thread (its lowest address), or NULL. */
static char *stack_taken(void)
{
	char *kept = __atomic_exchange_n(&spare, NULL, __ATOMIC_ACQUIRE);
	if (kept)
		return kept;
	long at = kernel(SYS_mmap, 0, STACK + GUARD, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
			 -1, 0);
	if (at == -1)
		return NULL;
	if (kernel(SYS_mprotect, at, GUARD, PROT_NONE, 0, 0, 0) != 0) {
		kernel(SYS_munmap, at, STACK + GUARD, 0, 0, 0, 0);
		return NULL;
	}
	return (char *)at;
}

/* Keeps `stack` for the next call, or unmaps it when one is kept. */
static void stack_given_back(char *stack)
{
	void *none = NULL;
	if (!__atomic_compare_exchange_n(&spare, &none, stack, 0,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		kernel(SYS_munmap, (long)stack, STACK + GUARD, 0, 0, 0, 0);
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
	char *stack = stack_taken();
	int made = -1;
	if (stack) {
		pid_t word = 0;
		int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			    CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
			    CLONE_CHILD_CLEARTID;
		made = clone(on_thread, stack + STACK + GUARD, flags, call,
			     &word, NULL, &word);
		if (made > 0)
			joined(made, &word);
		stack_given_back(stack);
	}
	kernel(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, 0, sizeof mask, 0,
	       0);
	/* The caller's own again: `copy` ends with this frame. */
	call->attr = attr;
	return made > 0 ? 0 : -1;
}

/* The real call `next`, on a thread made for it where `route` names a
 * program whose child must have the filter. */
static int spawn(spawn_fn next, struct call call)
{
	if (!next)
		return eatmydata_missing();
	if (call.route->program) {
		call.next = next;
		call.errnum = errno;
		int made = spawned(&call);
		errno = call.errnum;
		if (made == 0)
			return call.error;
		eatmydata_spawn_unfiltered(call.route);
	}
	return next(call.pid, call.path, call.actions, call.attr, call.argv,
		    call.envp);
}

/* The environment the child gets, decided in `room` for the program
 * `path` (searched in PATH when `search`); `route` filled when it must
 * have the filter. */
#define DECIDED(path, search)                                                 \
	eatmydata_exec_env(AT_FDCWD, path, 0, search, &route, argv, envp,     \
			   &room, sizeof room)

int HOOK(posix_spawn)(pid_t *pid, const char *path,
		      const posix_spawn_file_actions_t *actions,
		      const posix_spawnattr_t *attr, char *const argv[],
		      char *const envp[])
{
	struct emd_exec_room room;
	struct emd_spawn_route route;
	route.program = NULL;
	char *const *env = DECIDED(path, 0);
	struct call call = { NULL, pid, path, actions, attr, argv, env, &route, 0, 0 };
	return spawn(NEXT(posix_spawn), call);
}
MATCHES(posix_spawn);

int HOOK(posix_spawnp)(pid_t *pid, const char *file,
		       const posix_spawn_file_actions_t *actions,
		       const posix_spawnattr_t *attr, char *const argv[],
		       char *const envp[])
{
	struct emd_exec_room room;
	struct emd_spawn_route route;
	route.program = NULL;
	char *const *env = DECIDED(file, 1);
	struct call call = { NULL, pid, file, actions, attr, argv, env, &route, 0, 0 };
	return spawn(NEXT(posix_spawnp), call);
}
MATCHES(posix_spawnp);
