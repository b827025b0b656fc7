/*
 * Kernel calls made without libc: they leave errno alone, and the last
 * one ends a thread on a stack it has just unmapped. spawn.c's thread
 * makes them once the thread that called posix_spawn runs again, with
 * whom it shares errno. x86_64 and aarch64, as the library.
 * scripts/check-aarch64 runs them under qemu (probes/bare_thread.c).
 */
#ifndef EATMYDATA_BARE_H
#define EATMYDATA_BARE_H

#include <sys/syscall.h>

/* The system call `number` with five arguments: its result, or -errno. */
static inline long bare(long number, long a, long b, long c, long d, long e)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long result;
	__asm__ volatile("syscall"
			 : "=a"(result)
			 : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return result;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = number;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
#else
#error "bare.h knows x86_64 and aarch64"
#endif
}

/* Unmaps `size` bytes at `stack`, the calling thread's own stack, and
 * ends the thread, touching no memory in between: every signal must be
 * blocked on it. */
static inline _Noreturn void unmapped_exit(void *stack, unsigned long size)
{
#if defined(__x86_64__)
	__asm__ volatile("syscall\n\t"
			 "mov %[exit], %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "syscall\n\t"
			 "ud2"
			 :
			 : "a"(SYS_munmap), "D"(stack), "S"(size),
			   [exit] "i"(SYS_exit)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_munmap;
	register long x0 __asm__("x0") = (long)stack;
	register long x1 __asm__("x1") = (long)size;
	__asm__ volatile("svc #0\n\t"
			 "mov x8, %[exit]\n\t"
			 "mov x0, #0\n\t"
			 "svc #0\n\t"
			 "brk #0"
			 :
			 : "r"(x8), "r"(x0), "r"(x1), [exit] "i"(SYS_exit)
			 : "memory");
#endif
	__builtin_unreachable();
}

#endif
