/* Prints its process id, LD_PRELOAD, and each argument with every byte
 * outside printable ASCII escaped, for the test to compare byte for byte;
 * with SHOW_FILE set, also whether that path is there (`file PATH
 * present` or `absent`): a static program, which gets no LD_PRELOAD from
 * the runtime, still sees the library the runtime binds.
 *
 * usage: show_args [ARGS]... */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *preload = getenv("LD_PRELOAD");
	printf("pid %d\npreload %s\n", (int)getpid(), preload ? preload : "(unset)");
	const char *file = getenv("SHOW_FILE");
	if (file)
		printf("file %s %s\n", file, access(file, F_OK) == 0 ? "present" : "absent");
	for (int i = 0; i < argc; i++) {
		printf("arg%d [", i);
		for (const unsigned char *c = (const unsigned char *)argv[i]; *c; c++)
			printf(*c > 32 && *c < 127 && *c != '\\' ? "%c" : "\\x%02x", *c);
		printf("]\n");
	}
	return 0;
}
