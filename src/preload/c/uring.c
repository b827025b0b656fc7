/*
 * The hooks that let the library see io_uring submissions before the
 * kernel reads them (src/preload/uring.rs):
 *
 * - liburing's exported functions that publish the submission queue's
 *   tail. liburing.so.2 makes its kernel calls itself and its inline
 *   helpers only fill entries, so these are where entries leave the
 *   program: each hook has Rust rewrite the entries between the ring's
 *   sqe_head and sqe_tail, then calls liburing's own function.
 * - mmap, mmap64 and munmap, where a ring set up through syscall() shows
 *   where its submission queue lies, and stops lying there. A program
 *   that never set up a ring through syscall() pays one load per call.
 *
 * liburing's prototypes are declared here, so that the library builds
 * where liburing is not installed; where its header is, it is included
 * too, and the compiler checks that both agree.
 */
#include "shim.h"

#include <linux/types.h>
#include <signal.h>
#include <sys/mman.h>

struct io_uring;
struct io_uring_cqe;
struct __kernel_timespec;

int io_uring_submit(struct io_uring *ring);
int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);
int io_uring_submit_and_wait_timeout(struct io_uring *ring,
				     struct io_uring_cqe **cqe_ptr,
				     unsigned wait_nr,
				     struct __kernel_timespec *ts,
				     sigset_t *sigmask);
int io_uring_submit_and_get_events(struct io_uring *ring);
int io_uring_wait_cqes(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
		       unsigned wait_nr, struct __kernel_timespec *ts,
		       sigset_t *sigmask);
int io_uring_wait_cqe_timeout(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr,
			      struct __kernel_timespec *ts);

struct io_uring_params;
int io_uring_register_files(struct io_uring *ring, const int *files,
			    unsigned nr_files);
int io_uring_register_files_tags(struct io_uring *ring, const int *files,
				 const __u64 *tags, unsigned nr);
int io_uring_register_files_sparse(struct io_uring *ring, unsigned nr);
int io_uring_register_files_update(struct io_uring *ring, unsigned off,
				   const int *files, unsigned nr_files);
int io_uring_register_files_update_tag(struct io_uring *ring, unsigned off,
				       const int *files, const __u64 *tags,
				       unsigned nr_files);
int io_uring_unregister_files(struct io_uring *ring);
int io_uring_register(unsigned int fd, unsigned int opcode, const void *arg,
		      unsigned int nr_args);
int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags);
int io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
			       struct io_uring_params *p);
int io_uring_queue_mmap(int fd, struct io_uring_params *p, struct io_uring *ring);
void io_uring_queue_exit(struct io_uring *ring);

#if defined(__has_include)
#if __has_include(<liburing.h>)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <liburing.h>
#pragma GCC diagnostic pop
#endif
#endif

#define EMD_URING_NAMES(X)                                                    \
	X(io_uring_submit) X(io_uring_submit_and_wait)                        \
	X(io_uring_submit_and_wait_timeout) X(io_uring_submit_and_get_events) \
	X(io_uring_wait_cqes) X(io_uring_wait_cqe_timeout)                    \
	X(io_uring_register_files) X(io_uring_register_files_tags)            \
	X(io_uring_register_files_sparse) X(io_uring_register_files_update)   \
	X(io_uring_register_files_update_tag) X(io_uring_unregister_files)    \
	X(io_uring_register) X(io_uring_queue_init)                           \
	X(io_uring_queue_init_params) X(io_uring_queue_mmap)                  \
	X(io_uring_queue_exit)

/* One cache per name. The lookup (src/preload/objects.rs) searches every
 * object loaded after the library, so it finds liburing's definition also
 * when liburing was loaded out of the global scope (dlopen with RTLD_LOCAL
 * by a plugin whose calls still reach these hooks), and once liburing is
 * loaded after a first call found it absent. */
#define EMD_URING_CACHE(name) static void *next_##name;
EMD_URING_NAMES(EMD_URING_CACHE)

/* Rewrite what `ring` is about to publish, then call liburing's `name`;
 * liburing's own answer to a missing function would be -ENOSYS. */
#define PASS_URING(name, ring, ...)                                           \
	do {                                                                  \
		eatmydata_uring_submitting(ring);                             \
		__typeof__(&name) next_fn = NEXT(name);                      \
		return next_fn ? next_fn(__VA_ARGS__) : -ENOSYS;              \
	} while (0)

int HOOK(io_uring_submit)(struct io_uring *ring)
{
	PASS_URING(io_uring_submit, ring, ring);
}
MATCHES(io_uring_submit);

int HOOK(io_uring_submit_and_wait)(struct io_uring *ring, unsigned wait_nr)
{
	PASS_URING(io_uring_submit_and_wait, ring, ring, wait_nr);
}
MATCHES(io_uring_submit_and_wait);

int HOOK(io_uring_submit_and_wait_timeout)(struct io_uring *ring,
					   struct io_uring_cqe **cqe_ptr,
					   unsigned wait_nr,
					   struct __kernel_timespec *ts,
					   sigset_t *sigmask)
{
	PASS_URING(io_uring_submit_and_wait_timeout, ring, ring, cqe_ptr,
		   wait_nr, ts, sigmask);
}
MATCHES(io_uring_submit_and_wait_timeout);

int HOOK(io_uring_submit_and_get_events)(struct io_uring *ring)
{
	PASS_URING(io_uring_submit_and_get_events, ring, ring);
}
MATCHES(io_uring_submit_and_get_events);

/* Without IORING_FEAT_EXT_ARG (before 5.11), a wait with a timeout queues
 * a timeout entry and submits what is pending with it. */
int HOOK(io_uring_wait_cqes)(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
			     unsigned wait_nr, struct __kernel_timespec *ts,
			     sigset_t *sigmask)
{
	PASS_URING(io_uring_wait_cqes, ring, ring, cqe_ptr, wait_nr, ts, sigmask);
}
MATCHES(io_uring_wait_cqes);

int HOOK(io_uring_wait_cqe_timeout)(struct io_uring *ring,
				    struct io_uring_cqe **cqe_ptr,
				    struct __kernel_timespec *ts)
{
	PASS_URING(io_uring_wait_cqe_timeout, ring, ring, cqe_ptr, ts);
}
MATCHES(io_uring_wait_cqe_timeout);

/*
 * Fixed files: the slots liburing registers are told to Rust, which eats a
 * sync entry on a slot only when its file reaches a disk. What liburing
 * answers is returned as it is; the slots are told only on success, and
 * forgotten whenever they may have changed otherwise.
 */
#define NEXT_URING(name)                                                      \
	__typeof__(&name) next_fn = NEXT(name);                               \
	if (!next_fn)                                                         \
		return -ENOSYS

int HOOK(io_uring_register_files)(struct io_uring *ring, const int *files,
				  unsigned nr_files)
{
	NEXT_URING(io_uring_register_files);
	int done = next_fn(ring, files, nr_files);
	if (done == 0)
		eatmydata_uring_files(ring, 0, files, nr_files, 1);
	return done;
}
MATCHES(io_uring_register_files);

int HOOK(io_uring_register_files_tags)(struct io_uring *ring, const int *files,
				       const __u64 *tags, unsigned nr)
{
	NEXT_URING(io_uring_register_files_tags);
	int done = next_fn(ring, files, tags, nr);
	if (done == 0)
		eatmydata_uring_files(ring, 0, files, nr, 1);
	return done;
}
MATCHES(io_uring_register_files_tags);

int HOOK(io_uring_register_files_update)(struct io_uring *ring, unsigned off,
					 const int *files, unsigned nr_files)
{
	NEXT_URING(io_uring_register_files_update);
	int done = next_fn(ring, off, files, nr_files);
	if (done > 0)
		eatmydata_uring_files(ring, off, files, done, 0);
	return done;
}
MATCHES(io_uring_register_files_update);

int HOOK(io_uring_register_files_update_tag)(struct io_uring *ring, unsigned off,
					     const int *files, const __u64 *tags,
					     unsigned nr_files)
{
	NEXT_URING(io_uring_register_files_update_tag);
	int done = next_fn(ring, off, files, tags, nr_files);
	if (done > 0)
		eatmydata_uring_files(ring, off, files, done, 0);
	return done;
}
MATCHES(io_uring_register_files_update_tag);

/* Slots that hold nothing, or none: nothing to know. */
int HOOK(io_uring_register_files_sparse)(struct io_uring *ring, unsigned nr)
{
	eatmydata_uring_forget_files(ring);
	NEXT_URING(io_uring_register_files_sparse);
	return next_fn(ring, nr);
}
MATCHES(io_uring_register_files_sparse);

int HOOK(io_uring_unregister_files)(struct io_uring *ring)
{
	eatmydata_uring_forget_files(ring);
	NEXT_URING(io_uring_unregister_files);
	return next_fn(ring);
}
MATCHES(io_uring_unregister_files);

/* liburing's raw register: any change of files forgets the ring's slots. */
int HOOK(io_uring_register)(unsigned int fd, unsigned int opcode, const void *arg,
			    unsigned int nr_args)
{
	eatmydata_uring_register_raw((int)fd, opcode);
	NEXT_URING(io_uring_register);
	return next_fn(fd, opcode, arg, nr_args);
}
MATCHES(io_uring_register);

/* A ring made or torn down: no slot of an earlier ring of the same
 * descriptor is taken for its own. */
int HOOK(io_uring_queue_init)(unsigned entries, struct io_uring *ring, unsigned flags)
{
	NEXT_URING(io_uring_queue_init);
	int done = next_fn(entries, ring, flags);
	if (done == 0)
		eatmydata_uring_forget_files(ring);
	return done;
}
MATCHES(io_uring_queue_init);

int HOOK(io_uring_queue_init_params)(unsigned entries, struct io_uring *ring,
				     struct io_uring_params *p)
{
	NEXT_URING(io_uring_queue_init_params);
	int done = next_fn(entries, ring, p);
	if (done == 0)
		eatmydata_uring_forget_files(ring);
	return done;
}
MATCHES(io_uring_queue_init_params);

int HOOK(io_uring_queue_mmap)(int fd, struct io_uring_params *p, struct io_uring *ring)
{
	NEXT_URING(io_uring_queue_mmap);
	int done = next_fn(fd, p, ring);
	if (done == 0)
		eatmydata_uring_forget_files(ring);
	return done;
}
MATCHES(io_uring_queue_mmap);

void HOOK(io_uring_queue_exit)(struct io_uring *ring)
{
	eatmydata_uring_forget_files(ring);
	__typeof__(&io_uring_queue_exit) next_fn = NEXT(io_uring_queue_exit);
	if (next_fn)
		next_fn(ring);
}
MATCHES(io_uring_queue_exit);

static void *next_mmap, *next_mmap64, *next_munmap;

/* mmap(2): a ring's mapping told to Rust once made; one mapped over with
 * MAP_FIXED forgotten before. */
#define PASS_MMAP(name)                                                       \
	do {                                                                  \
		__typeof__(&name) next_fn = NEXT(name);                      \
		if (!next_fn) {                                               \
			eatmydata_missing();                                  \
			return MAP_FAILED;                                    \
		}                                                             \
		if (!__atomic_load_n(&eatmydata_uring_watching, __ATOMIC_RELAXED))                              \
			return next_fn(addr, length, prot, flags, fd, offset); \
		if (flags & MAP_FIXED)                                        \
			eatmydata_uring_unmapping(addr, length);              \
		void *at = next_fn(addr, length, prot, flags, fd, offset);    \
		if (at != MAP_FAILED && fd >= 0)                              \
			eatmydata_uring_mapped(at, length, fd, offset);       \
		return at;                                                    \
	} while (0)

void *HOOK(mmap)(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	PASS_MMAP(mmap);
}
MATCHES(mmap);

void *HOOK(mmap64)(void *addr, size_t length, int prot, int flags, int fd,
		   off64_t offset)
{
	PASS_MMAP(mmap64);
}
MATCHES(mmap64);

/* munmap(2): a ring mapped there is forgotten before its memory goes. */
int HOOK(munmap)(void *addr, size_t length)
{
	if (__atomic_load_n(&eatmydata_uring_watching, __ATOMIC_RELAXED))
		eatmydata_uring_unmapping(addr, length);
	PASS(munmap, addr, length);
}
MATCHES(munmap);
