/*
 * Run with LD_PRELOAD="[OTHER...] libeatmydata.so lookup_twin.so [OTHER...]":
 * for each NAME, what the library's lookup finds (eatmydata_next) beside
 * what the loader's dlsym(RTLD_NEXT) finds from the twin, and the object
 * that defines it. Then, with LATE_LIBRARY and LATE_NAME set, a name
 * absent at first is looked up again once that library is loaded with
 * dlopen(RTLD_GLOBAL), through the same cache; with LATE_LOCAL set too,
 * loaded RTLD_LOCAL, as a plugin loads its own libraries, where the loader's
 * RTLD_NEXT does not look and the library's lookup does.
 *
 * usage: lookup_same NAME...   prints "NAME same OBJECT" or "NAME DIFFERENT ..."
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>

typedef void *(*next_fn)(void **, const char *);
typedef void *(*twin_fn)(const char *);

static const char *object_of(void *address)
{
	Dl_info info;
	if (!address)
		return "none";
	if (!dladdr(address, &info) || !info.dli_fname)
		return "unknown";
	return basename((char *)info.dli_fname);
}

int main(int argc, char **argv)
{
	next_fn next = (next_fn)dlsym(RTLD_DEFAULT, "eatmydata_next");
	twin_fn twin = (twin_fn)dlsym(RTLD_DEFAULT, "twin_next");
	if (!next || !twin) {
		puts("the library and the twin must be preloaded");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		void *cache = NULL;
		void *ours = next(&cache, argv[i]);
		void *loader = twin(argv[i]);
		if (ours == loader)
			printf("%s same %s\n", argv[i], object_of(ours));
		else
			printf("%s DIFFERENT ours %p (%s) loader %p (%s)\n", argv[i], ours,
			       object_of(ours), loader, object_of(loader));
	}
	const char *late = getenv("LATE_LIBRARY"), *name = getenv("LATE_NAME");
	if (late && name) {
		void *cache = NULL;
		void *before = next(&cache, name);
		int scope = getenv("LATE_LOCAL") ? RTLD_LOCAL : RTLD_GLOBAL;
		if (!dlopen(late, RTLD_NOW | scope)) {
			printf("dlopen: %s\n", dlerror());
			return 1;
		}
		void *after = next(&cache, name);
		void *loader = twin(name);
		printf("late %s: %s before, %s after, %s\n", name, before ? "found" : "absent",
		       after ? "found" : "absent",
		       after == loader ? "same" : loader ? "DIFFERENT" : "loader absent");
	}
	return 0;
}
