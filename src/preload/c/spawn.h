/*
 * What the posix_spawn hooks (spawn.c) share with the two ways they give
 * a child the filter: the child made by the hook, in glibc's programs
 * (spawn_here.c), and the real call made on a thread made for it,
 * elsewhere (spawn_thread.c).
 */
#ifndef EATMYDATA_SPAWN_H
#define EATMYDATA_SPAWN_H

#include "shim.h"

#include <spawn.h>

/* posix_spawn's prototype, posix_spawnp's too. */
typedef __typeof__(&posix_spawn) spawn_fn;

/* One call of posix_spawn or posix_spawnp whose child gets the filter,
 * and its result. */
struct call {
	/* libc's posix_spawn or posix_spawnp, and which. */
	spawn_fn next;
	int search;
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *actions;
	const posix_spawnattr_t *attr;
	char *const *argv;
	/* The environment decided for the program. */
	char *const *envp;
	const struct emd_spawn_route *route;
	/* What the call returns. */
	int error;
	/* errno: the caller's before the call, then as the call left it
	 * (the thread's way). */
	int errnum;
	/* Set, and woken, once the thread's call has returned: from then on
	 * the thread leaves all of this to the caller. */
	int done;
	/* The stack the child or the thread runs on (its lowest address),
	 * and the index of the kept one it is, or -1 for one of its own. */
	char *stack;
	int kept;
};

/* A stack: room for libc's posix_spawn (whose child runs on a stack libc
 * maps), the filter's set-id check and a PATH search, above a guard of
 * at least a page of any size Linux has. */
#define STACK (256 * 1024)
#define GUARD (64 * 1024)

/* Gives `call` a stack (`call->stack`, `call->kept`): 0, or -1 when none
 * could be mapped. */
int spawn_stack(struct call *call);
/* Where the kernel clears the kept stack's claim once the thread using
 * it has ended; null for a stack of the call's own. */
int *spawn_stack_claim(const struct call *call);
/* Gives the stack back, once nothing runs on it any more. */
void spawn_stack_free(const struct call *call);

/* The child made here (spawn_here.c): 0 and the result in
 * `call->error`, or -1 where it cannot be (nothing done). */
int spawn_here(struct call *call);
/* The call made on a thread made for it (spawn_thread.c): 0 and the
 * result in `call->error` and `call->errnum`, or -1 when no thread could
 * be made (nothing done). */
int spawn_on_thread(struct call *call);

#endif
