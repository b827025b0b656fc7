/*
 * A library planted where eatmydata writes out the one it carries: if a
 * program ever loads it, its constructor says so on stderr.
 */
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void say_loaded(void)
{
	static const char line[] = "decoy library loaded\n";
	(void)!write(2, line, strlen(line));
}
