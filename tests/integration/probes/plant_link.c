/*
 * What a container may do in a folder a bind gives it: put a symbolic
 * link in place of a folder there (one that is another bind's source on
 * the host).
 * Usage: plant_link FOLDER TARGET
 *          renames FOLDER to FOLDER.old and makes FOLDER a link to
 *          TARGET. Exits 1, said, on a failure.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	char old[4096];
	snprintf(old, sizeof old, "%s.old", argv[1]);
	if (rename(argv[1], old) != 0) {
		perror("rename");
		return 1;
	}
	if (symlink(argv[2], argv[1]) != 0) {
		perror("symlink");
		return 1;
	}
	return 0;
}
