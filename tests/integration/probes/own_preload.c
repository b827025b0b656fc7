/* A library an image preloads of its own (its LD_PRELOAD), for the engine
 * tests: it says so on stderr when loaded, and does nothing else. */
#include <unistd.h>

__attribute__((constructor)) static void loaded(void)
{
	static const char line[] = "own_preload: loaded\n";
	if (write(2, line, sizeof line - 1) < 0)
		return;
}
