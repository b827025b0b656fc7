/*
 * The real posix_spawn or posix_spawnp made on a thread of this process
 * made for the call, which takes the filter first: the way of a program
 * whose child the hook does not make itself (spawn.c says which). A
 * filter is a thread's own, and a child inherits its maker's; libc still
 * makes the child, applies the caller's file actions and attributes,
 * searches PATH and returns the exec's errors, and the child is this
 * process's.
 *
 * The thread shares everything with the caller, its thread pointer too
 * (libc's per-thread data, errno among it): the caller waits, every
 * signal blocked, until the call has returned, so that one of the two
 * runs libc at a time, as libc's own child does on its parent's. The
 * child is given the caller's signal mask in the attributes (a copy,
 * where they name none), as it would have had it from the caller. Then
 * the thread, which the kernel records as the child's parent, stays,
 * without touching libc's data or errno, until the child has ended: a
 * thread that ends sends its children the signal they asked for their
 * parent's end (PR_SET_PDEATHSIG, which tini -p sets at its start). So
 * while the child runs the process has one thread more, and the calling
 * thread's own wait (__WNOTHREAD) does not find the child
 * (docs/seccomp.md).
 */
#include "spawn.h"
#include "bare.h"

#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>

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
	int own = call->kept < 0;
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
	if (own)
		unmapped_exit(stack, STACK + GUARD);
	bare(SYS_exit, 0, 0, 0, 0, 0);
	__builtin_unreachable();
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

int spawn_on_thread(struct call *call)
{
	unsigned long all = ~0UL, mask = 0;
	bare(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&mask,
	     sizeof mask, 0);
	sigset_t caller;
	sigemptyset(&caller);
	memcpy(&caller, &mask, sizeof mask);
	posix_spawnattr_t copy;
	const posix_spawnattr_t *attr = call->attr;
	call->attr = masked(attr, &copy, &caller);
	int made = -1;
	if (spawn_stack(call) == 0) {
		call->done = 0;
		int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
			    CLONE_THREAD | CLONE_SYSVSEM;
		/* A kept stack is free again once the kernel has cleared
		 * the thread's id there, as the thread ends. */
		int *claim = spawn_stack_claim(call);
		if (claim)
			flags |= CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
		made = clone(on_thread, call->stack + STACK + GUARD, flags, call,
			     NULL, NULL, claim);
		while (made > 0 && !__atomic_load_n(&call->done, __ATOMIC_ACQUIRE))
			bare(SYS_futex, (long)&call->done, FUTEX_WAIT_PRIVATE, 0,
			     0, 0);
		if (made <= 0)
			spawn_stack_free(call);
	}
	bare(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, 0, sizeof mask, 0);
	/* The caller's own again: `copy` ends with this frame. */
	call->attr = attr;
	return made > 0 ? 0 : -1;
}

