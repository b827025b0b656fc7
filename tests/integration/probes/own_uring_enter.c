/* A dynamically linked program whose own code makes an io_uring_enter
 * system call (as fio's io_uring engine does), and which opens a file
 * with O_SYNC through libc. Prints whether O_SYNC was kept (only the
 * library can drop it: the flag sits in a register), the seccomp mode of
 * /proc/self/status (2: a filter), and what its own io_uring_enter on a
 * descriptor that is no ring answered.
 *
 *   own_uring_enter FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* io_uring_enter(fd, 0, 0, 0, NULL, 0) made by this program's own code:
 * the number loaded as a constant, then the instruction. */
static long own_enter(long fd)
{
	long ret;
#if defined(__x86_64__)
	__asm__ volatile("mov $426, %%eax\n\tsyscall"
			 : "=a"(ret)
			 : "D"(fd), "S"(0L), "d"(0L)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x0 __asm__("x0") = fd;
	register long x1 __asm__("x1") = 0;
	register long x2 __asm__("x2") = 0;
	__asm__ volatile("mov x8, #426\n\tsvc #0"
			 : "+r"(x0)
			 : "r"(x1), "r"(x2)
			 : "x8", "memory");
	ret = x0;
#else
#error "an architecture whose inline io_uring_enter the command looks for"
#endif
	return ret;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_SYNC, 0644);
	if (fd < 0)
		return 3;
	printf("sync=%s\n", (fcntl(fd, F_GETFL) & O_SYNC) == O_SYNC ? "kept" : "dropped");
	char line[256];
	FILE *status = fopen("/proc/self/status", "r");
	while (status && fgets(line, sizeof line, status))
		if (!strncmp(line, "Seccomp:", 8))
			printf("seccomp=%d\n", atoi(line + 8));
	long ret = own_enter(fd);
	printf("enter=%s\n", ret < 0 ? strerrorname_np((int)-ret) : "ok");
	return 0;
}
