/* Keeps a container running: reads its stdin until it ends, then exits 0.
 *
 * usage: hold */
#include <unistd.h>

int main(void)
{
	char buffer[256];
	while (read(0, buffer, sizeof buffer) > 0)
		;
	return 0;
}
