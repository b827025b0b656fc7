/*
 * A preload placed right after libeatmydata.so that defines none of the
 * names asked: dlsym(RTLD_NEXT) called from here searches exactly the
 * objects the library's own lookup must search, so its answer, the libc
 * loader's own, is what the library must find.
 */
#include <dlfcn.h>

void *twin_next(const char *name);

void *twin_next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}
