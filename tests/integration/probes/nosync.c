/* Runs a program with its sync calls answered 0 before they reach the
 * kernel, by a seccomp filter of its own (no eatmydata involved): the
 * floor control of a flush count, the same files written without syncing,
 * so that what the file system flushes on its own (journal commits) is
 * measured, not assumed to be nothing.
 *
 * usage: nosync PROGRAM [ARG...]
 * Answers fsync, fdatasync, sync, syncfs, sync_file_range and msync of the
 * native architecture; the filter passes to every child. Exits 126 when
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

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nosync PROGRAM [ARG...]\n");
		return 2;
	}
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ANSWER_ZERO(__NR_fsync),
		ANSWER_ZERO(__NR_fdatasync),
		ANSWER_ZERO(__NR_sync),
		ANSWER_ZERO(__NR_syncfs),
		ANSWER_ZERO(__NR_sync_file_range),
		ANSWER_ZERO(__NR_msync),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog program = {
		.len = sizeof filter / sizeof filter[0],
		.filter = filter,
	};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
		fprintf(stderr, "nosync: cannot install the filter: %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nosync: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
