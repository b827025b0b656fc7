/* The library's lookup of next definitions, asked for a function no library
 * defines: it answers NULL, remembers that, and the hooks' fallback fails
 * the call with ENOSYS instead of calling through NULL.
 *
 * usage: lookup_missing, with the library preloaded */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

int main(void)
{
	void *(*next)(void **, const char *) = (void *(*)(void **, const char *))dlsym(RTLD_DEFAULT, "eatmydata_next");
	int (*missing)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "eatmydata_missing");
	if (!next || !missing) {
		puts("the library is not preloaded");
		return 1;
	}

	void *cache = NULL;
	void *first = next(&cache, "eatmydata_no_such_function");
	void *remembered = cache;
	void *second = next(&cache, "eatmydata_no_such_function");
	printf("missing: %s %s, remembered: %s\n", first ? "found" : "null", second ? "found" : "null",
	       remembered ? "yes" : "no");

	void *found_cache = NULL;
	errno = 1234;
	void *found = next(&found_cache, "write");
	int kept = errno == 1234;
	printf("write: %s, cached: %s, errno kept: %s\n",
	       found && found == dlsym(RTLD_DEFAULT, "write") ? "libc's" : "other",
	       found_cache == found ? "yes" : "no", kept ? "yes" : "no");

	errno = 0;
	int result = missing();
	printf("fallback: %d %s\n", result, errno == ENOSYS ? "ENOSYS" : "other");
	return 0;
}
