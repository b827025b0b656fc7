/* Prints its process id, LD_PRELOAD, and each argument with every byte
 * outside printable ASCII escaped, for the test to compare byte for byte.
 *
 * usage: show_args [ARGS]... */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *preload = getenv("LD_PRELOAD");
	printf("pid %d\npreload %s\n", (int)getpid(), preload ? preload : "(unset)");
	for (int i = 0; i < argc; i++) {
		printf("arg%d [", i);
		for (const unsigned char *c = (const unsigned char *)argv[i]; *c; c++)
			printf(*c > 32 && *c < 127 && *c != '\\' ? "%c" : "\\x%02x", *c);
		printf("]\n");
	}
	return 0;
}
