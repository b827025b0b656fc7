/*
 * Loads a library with dlopen(3), as a program loads a plugin; the dynamic
 * loader's lock is held while the library's constructor runs.
 * Usage: field_dlopen LIBRARY. Prints "loaded" once dlopen returns.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (!dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	puts("loaded");
	return 0;
}
