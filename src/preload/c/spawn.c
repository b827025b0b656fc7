/*
 * posix_spawn(3) and posix_spawnp(3): the child's environment is decided
 * as for any exec (exec.c, src/preload/exec.rs).
 *
 * A child that goes without the library and must have the plain seccomp
 * filter cannot be given it by a hook: libc makes and executes it where
 * none runs, and a filter on the caller's thread would stay there for
 * good. So where such a child is spawned:
 *
 * - in a glibc program, the hook makes the child itself, as glibc makes
 *   it, and the child takes the filter before glibc's child's work
 *   (spawn_here.c): the child is the calling thread's, as without
 *   eatmydata, and costs one filter more;
 * - elsewhere (musl, a glibc newer than the hook knows, an action it does
 *   not), libc makes the child, on a thread of this process made for the
 *   call, which takes the filter first (spawn_thread.c); a child inherits
 *   its maker's filter.
 *
 * Either runs on a stack mapped once and kept for the next spawns. Where
 * neither can be (no stack, no task left) the child runs unfiltered, as
 * before the filter: its syncs reach the disk.
 */
#include "spawn.h"
#include "bare.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define EMD_NEXT_SPAWN(X) X(posix_spawn) X(posix_spawnp)

#define EMD_CACHE(name) static void *next_##name;
EMD_NEXT_SPAWN(EMD_CACHE)

/* Stacks kept for the next spawns, so that a spawn maps, guards and
 * unmaps none (and its pages are not faulted in again). `claim` is 0
 * while the stack is free, -1 once a caller has it; a thread running on
 * it holds the thread's id there, which the kernel writes as the thread
 * starts and clears (CLONE_CHILD_SETTID, CLONE_CHILD_CLEARTID) once the
 * thread has left the stack for good. A stack, once mapped, stays for the
 * process's life. After fork, the child finds free what was free: a
 * stack claimed then stays claimed, and that child's spawns use the
 * others or a stack of their own. */
#define KEPT 4
static struct {
	char *stack;
	int claim;
} kept[KEPT];

/* A stack mapped, its lowest `GUARD` bytes inaccessible: its lowest
 * address, or NULL; errno as it was. */
static char *mapped(void)
{
	const long args[6] = { 0, STACK + GUARD, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
			       -1, 0 };
	int caller = errno;
	long at = eatmydata_kernel(SYS_mmap, args);
	errno = caller;
	if (at == -1)
		return NULL;
	if (bare(SYS_mprotect, at, GUARD, PROT_NONE, 0, 0) != 0) {
		bare(SYS_munmap, at, STACK + GUARD, 0, 0, 0);
		return NULL;
	}
	return (char *)at;
}

int spawn_stack(struct call *call)
{
	for (int i = 0; i < KEPT; i++) {
		int free = 0;
		if (!__atomic_compare_exchange_n(&kept[i].claim, &free, -1, 0,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		if (!kept[i].stack)
			kept[i].stack = mapped();
		if (!kept[i].stack) {
			__atomic_store_n(&kept[i].claim, 0, __ATOMIC_RELEASE);
			break;
		}
		call->stack = kept[i].stack;
		call->kept = i;
		return 0;
	}
	call->stack = mapped();
	call->kept = -1;
	return call->stack ? 0 : -1;
}

int *spawn_stack_claim(const struct call *call)
{
	return call->kept >= 0 ? &kept[call->kept].claim : NULL;
}

void spawn_stack_free(const struct call *call)
{
	if (call->kept >= 0)
		__atomic_store_n(&kept[call->kept].claim, 0, __ATOMIC_RELEASE);
	else
		bare(SYS_munmap, (long)call->stack, STACK + GUARD, 0, 0, 0);
}

/* The real call `next` for the program `path` (searched in PATH when
 * `search`) with the environment decided for it; where the child must
 * have the filter, made here, or on a thread made for it. */
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
		struct call call = { .next = next, .search = search, .pid = pid,
				     .path = path, .actions = actions,
				     .attr = attr, .argv = argv, .envp = env,
				     .route = &route, .errnum = errno };
		if (spawn_here(&call) == 0)
			return call.error;
		if (spawn_on_thread(&call) == 0) {
			errno = call.errnum;
			return call.error;
		}
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
