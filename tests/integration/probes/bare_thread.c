/*
 * src/preload/c/bare.h run on a thread made as spawn.c makes its own:
 * bare() answers getpid and leaves errno alone, and unmapped_exit() ends
 * the thread on the stack it unmaps. Prints "bare: ok" and exits 0, or
 * says what failed and exits 1. scripts/check-aarch64 runs it under qemu.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../../src/preload/c/bare.h"

#define SIZE (256 * 1024)

static long seen_pid;
static int seen_errno;

static int body(void *stack)
{
	errno = 0;
	seen_pid = bare(SYS_getpid, 0, 0, 0, 0, 0);
	/* A call that fails: its -errno, and errno untouched. */
	long failed = bare(SYS_close, -1, 0, 0, 0, 0);
	seen_errno = failed == -EBADF && errno == 0;
	unmapped_exit(stack, SIZE);
}

int main(void)
{
	char *stack = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	volatile pid_t tid = 0;
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
		    CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
		    CLONE_CHILD_CLEARTID;
	if (clone(body, stack + SIZE, flags, stack, &tid, NULL, &tid) < 0)
		return 1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (pid_t now; (now = tid);)
		syscall(SYS_futex, &tid, FUTEX_WAIT, now, NULL);
	unsigned char in;
	int unmapped = mincore(stack, 4096, &in) == -1 && errno == ENOMEM;
	if (seen_pid != getpid() || !seen_errno || !unmapped) {
		printf("bare: pid %ld (%d), errno kept %d, stack unmapped %d\n",
		       seen_pid, (int)getpid(), seen_errno, unmapped);
		return 1;
	}
	printf("bare: ok\n");
	return 0;
}
