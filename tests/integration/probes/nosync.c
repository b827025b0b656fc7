/* Runs a program with its sync calls answered 0 before they reach the
 * kernel, by a seccomp filter of its own (no eatmydata involved): the
 * floor control of a flush count, the same files written without syncing,
 * so that what the file system flushes on its own (journal commits) is
 * measured, not assumed to be nothing.
 *
 * usage: nosync PROGRAM [ARG...]
 * Answers fsync, fdatasync, sync, syncfs, sync_file_range and msync of the
 * native architecture (and of i386 on x86_64, for 32-bit programs); the
 * filters pass to every child. Exits 126 when
 * the filter cannot be installed, 127 when PROGRAM cannot be run. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "nosync: an architecture this probe does not know"
#endif

#define ANSWER_ZERO(nr)                                       \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0)

/* i386's numbers of the same calls (asm/unistd_32.h), for 32-bit programs
 * on an x86_64 machine: a second filter answers them. */
#define I386_FSYNC 118
#define I386_FDATASYNC 148
#define I386_SYNC 36
#define I386_SYNCFS 344
#define I386_SYNC_FILE_RANGE 314
#define I386_MSYNC 144

/* One filter: the six calls of `arch`, numbered `nr`, answered 0. */
static int answer(unsigned arch, const unsigned nr[6])
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ANSWER_ZERO(nr[0]),
		ANSWER_ZERO(nr[1]),
		ANSWER_ZERO(nr[2]),
		ANSWER_ZERO(nr[3]),
		ANSWER_ZERO(nr[4]),
		ANSWER_ZERO(nr[5]),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog program = {
		.len = sizeof filter / sizeof filter[0],
		.filter = filter,
	};
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nosync PROGRAM [ARG...]\n");
		return 2;
	}
	const unsigned native[6] = {__NR_fsync, __NR_fdatasync, __NR_sync,
				    __NR_syncfs, __NR_sync_file_range, __NR_msync};
	int failed = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || answer(ARCH, native) != 0;
#if defined(__x86_64__)
	const unsigned i386[6] = {I386_FSYNC, I386_FDATASYNC, I386_SYNC,
				  I386_SYNCFS, I386_SYNC_FILE_RANGE, I386_MSYNC};
	failed = failed || answer(AUDIT_ARCH_I386, i386) != 0;
#endif
	if (failed) {
		fprintf(stderr, "nosync: cannot install the filter: %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nosync: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
