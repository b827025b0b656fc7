/* A library an image preloads itself: says so when it is loaded.
 * Prints "hello_lib loaded" on stderr from its constructor. */
#include <unistd.h>

__attribute__((constructor)) static void hello(void)
{
	static const char line[] = "hello_lib loaded\n";
	if (write(2, line, sizeof line - 1) < 0)
		_exit(3);
}
