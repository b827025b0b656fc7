/*
 * What every C file of the shim shares: the Rust side's entry points, and
 * the macros that name a hook, check its prototype and call on the next
 * definition. Each file keeps its own caches of next definitions.
 */
#ifndef EATMYDATA_SHIM_H
#define EATMYDATA_SHIM_H

#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

/* The Rust side: src/preload/. */
void *eatmydata_next(void **cache, const char *name);
void eatmydata_warm_up(void);
long eatmydata_kernel(long number, const long args[6]);
int eatmydata_missing(void);
int eatmydata_eating(void);
int eatmydata_kept_open_flags(int dirfd, const char *path, int flags);
int eatmydata_setfl_flags(int fd, int flags);
int eatmydata_rwf_flags(int fd, int flags);
void eatmydata_opened(int fd);
int eatmydata_msync_flags(void *addr, size_t length, int flags);
int eatmydata_fsync_status(int fd);
int eatmydata_fdatasync_status(int fd);
int eatmydata_syncfs_status(int fd);
int eatmydata_sync_file_range_status(int fd, off64_t offset, off64_t nbytes,
				     unsigned int flags);
long eatmydata_syscall(long number, const long args[6]);
int eatmydata_aio_fsync_answerable(int op, int fd);
void eatmydata_aio_fsync_answered(int fd);
int eatmydata_io_events_waiting(void);
long eatmydata_io_getevents(long context, long min_nr, long nr, long events, long timeout);
void eatmydata_sync(void);
void eatmydata_report_at_exit(void);
void eatmydata_forget_counts(void);
void eatmydata_uring_submitting(const void *ring);
void eatmydata_uring_files(const void *ring, unsigned first, const int *fds,
			   unsigned count, _Bool whole);
void eatmydata_uring_forget_files(const void *ring);
void eatmydata_uring_register_raw(int fd, unsigned opcode);
/* Hidden: read in place, not through a GOT entry the loader must fill by
 * looking the name up in every process. */
extern _Bool eatmydata_uring_watching __attribute__((visibility("hidden")));
void eatmydata_uring_mapped(void *at, size_t length, int fd, long offset);
void eatmydata_uring_unmapping(void *at, size_t length);

/* Where an exec's new environment is made, on the hook's frame: the
 * entries' pointers, and one rewritten LD_PRELOAD entry (exec.rs's Room,
 * checked by size). */
#define EMD_EXEC_SLOTS 1024
#define EMD_EXEC_BYTES 4096
struct emd_exec_room {
	char *slots[EMD_EXEC_SLOTS];
	char preload[EMD_EXEC_BYTES];
};
/* What a posix_spawn hook is told when the child must have the plain
 * filter (spawn.rs's Route): `program` is null when not. */
#define EMD_SPAWN_PATH 4096
struct emd_spawn_route {
	const char *program;
	char code[4];
	char path[EMD_SPAWN_PATH];
};
_Static_assert(__builtin_offsetof(struct emd_spawn_route, path) == 12 &&
		       sizeof(struct emd_spawn_route) == 4112,
	       "spawn.rs's Route has this layout");
char *const *eatmydata_exec_env(int dirfd, const char *path, int flags,
				int search, struct emd_spawn_route *route,
				char *const argv[], char *const envp[],
				struct emd_exec_room *room, size_t room_size);
void eatmydata_spawn_filter(const struct emd_spawn_route *route);
void eatmydata_spawn_unfiltered(const struct emd_spawn_route *route);
int eatmydata_exec_searched(const char *name, char *const argv[],
			    char *const envp[]);

/* A hook's name, and the check that it has libc's prototype. */
#define HOOK(name) eatmydata_hook_##name
#define MATCHES(name)                                                         \
	_Static_assert(__builtin_types_compatible_p(__typeof__(HOOK(name)),   \
						    __typeof__(name)),        \
		       #name " keeps libc's prototype")

/* The next definition of `name`, typed by its prototype in the headers. */
#define NEXT(name) ((__typeof__(&name))eatmydata_next(&next_##name, #name))

/* Call the next definition of `name`, or fail with ENOSYS if it has none. */
#define PASS(name, ...)                                                       \
	do {                                                                  \
		__typeof__(&name) next_fn = NEXT(name);                      \
		return next_fn ? next_fn(__VA_ARGS__) : eatmydata_missing();  \
	} while (0)

#endif
