/*
 * The exec family: before a program is executed, the library decides
 * whether it stays in that program's LD_PRELOAD (src/preload/exec.rs, by
 * the rule of src/durability/exec.rs), and the call goes on with an
 * environment without it, or with it behind the user's sanitizer, where
 * the rule says so. Everything else passes through untouched.
 *
 * Every entry point is hooked, not only execve: glibc's execvp, execl*,
 * fexecve and posix_spawn reach the kernel through libc's internal
 * __execve and __spawni, and musl's through hidden aliases, which no
 * preload can reach. system(3) and popen(3) start /bin/sh the same way
 * and are not hooked: the shell's own execs are.
 *
 * The new environment lives on this frame (struct emd_exec_room, about
 * 12 KiB): the pointers of the caller's entries, and one rewritten
 * LD_PRELOAD entry. An environment too large for it goes on as it was.
 * The execl* forms gather their arguments in a variable-length array on
 * the stack, as libc does.
 *
 * A program that goes without the library gets the command's plain
 * seccomp filter first (src/preload/seccomp.rs), where the command asked:
 * installed on this thread just before the exec, and kept if the exec
 * fails. posix_spawn and posix_spawnp, whose child libc makes and
 * executes without a hook, are in spawn.c.
 */
#include "shim.h"

#include <fcntl.h>
#include <stdarg.h>

#define EMD_NEXT_EXEC(X) X(execve) X(execvpe) X(fexecve) X(execveat)

#define EMD_CACHE(name) static void *next_##name;
EMD_NEXT_EXEC(EMD_CACHE)

/* The environment `envp` becomes for the program at `path` started with
 * `argv`, executed by this process. */
#define DECIDED(dirfd, path, flags, search, argv, envp)                       \
	eatmydata_exec_env(dirfd, path, flags, search, NULL, argv, envp,      \
			   &room, sizeof room)

int HOOK(execve)(const char *path, char *const argv[], char *const envp[])
{
	struct emd_exec_room room;
	char *const *env = DECIDED(AT_FDCWD, path, 0, 0, argv, envp);
	PASS(execve, path, argv, env);
}
MATCHES(execve);

int HOOK(execv)(const char *path, char *const argv[])
{
	return HOOK(execve)(path, argv, environ);
}
MATCHES(execv);

int HOOK(execvpe)(const char *file, char *const argv[], char *const envp[])
{
	struct emd_exec_room room;
	char *const *env = DECIDED(AT_FDCWD, file, 0, 1, argv, envp);
	PASS(execvpe, file, argv, env);
}
MATCHES(execvpe);

int HOOK(execvp)(const char *file, char *const argv[])
{
	return HOOK(execvpe)(file, argv, environ);
}
MATCHES(execvp);

int HOOK(fexecve)(int fd, char *const argv[], char *const envp[])
{
	struct emd_exec_room room;
	char *const *env = DECIDED(fd, "", AT_EMPTY_PATH, 0, argv, envp);
	PASS(fexecve, fd, argv, env);
}
MATCHES(fexecve);

int HOOK(execveat)(int dirfd, const char *path, char *const argv[],
		   char *const envp[], int flags)
{
	struct emd_exec_room room;
	char *const *env = DECIDED(dirfd, path, flags, 0, argv, envp);
	PASS(execveat, dirfd, path, argv, env, flags);
}
MATCHES(execveat);

/* How many arguments an execl* call has from `first` up to its NULL
 * (without it); `ap` is the list after `first`, read to its end. */
static size_t counted(const char *first, va_list *ap)
{
	size_t count = 0;
	if (first) {
		count = 1;
		while (va_arg(*ap, char *))
			count++;
	}
	return count;
}

/* The `count` arguments from `first`, then the NULL, read from `ap` into
 * `argv`, which has room for them and the NULL; `ap` is left after the
 * NULL, where execle's environment is. */
static void gather(const char *first, va_list *ap, char **argv, size_t count)
{
	argv[0] = (char *)first;
	for (size_t i = 1; i <= count && first; i++)
		argv[i] = va_arg(*ap, char *);
}

/* Calls `call` with `argv` gathered from the variadic arguments after
 * `first`; `then` runs before it, with `ap` after the NULL. */
#define EXECL(call, first, then)                                              \
	do {                                                                  \
		va_list ap, count_ap;                                         \
		va_start(ap, first);                                          \
		va_copy(count_ap, ap);                                        \
		size_t count = counted(first, &count_ap);                     \
		va_end(count_ap);                                             \
		char *argv[count + 1];                                        \
		gather(first, &ap, argv, count);                              \
		then;                                                         \
		va_end(ap);                                                   \
		return call;                                                  \
	} while (0)

int HOOK(execl)(const char *path, const char *arg, ...)
{
	EXECL(HOOK(execve)(path, argv, environ), arg, (void)0);
}
MATCHES(execl);

int HOOK(execlp)(const char *file, const char *arg, ...)
{
	EXECL(HOOK(execvpe)(file, argv, environ), arg, (void)0);
}
MATCHES(execlp);

int HOOK(execle)(const char *path, const char *arg, ...)
{
	char *const *envp;
	EXECL(HOOK(execve)(path, argv, envp), arg,
	      envp = va_arg(ap, char *const *));
}
MATCHES(execle);
