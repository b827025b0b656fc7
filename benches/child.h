/*
 * What the benchmark children share (benches/calls.c, benches/uring.c):
 * the clock that times their loop, and the mmap + munmap both report, so
 * that the two figures of what the io_uring hooks cost a program that never
 * sets up a ring measure the same thing.
 */
#ifndef EATMYDATA_BENCH_CHILD_H
#define EATMYDATA_BENCH_CHILD_H

#include <sys/mman.h>
#include <time.h>

/* Nanoseconds on the monotonic clock. */
static inline long long now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* mmap and munmap of an anonymous page: 0, or -1 when either failed. */
static inline int map_and_unmap(void)
{
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return page == MAP_FAILED || munmap(page, 4096) ? -1 : 0;
}

#endif
