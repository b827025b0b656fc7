/* The names of the errors the probes expect, for their output lines:
 * strerrorname_np is glibc's alone, and the probes are built for musl too. */
#include <errno.h>

static const char *errno_name(int error)
{
	switch (error) {
	case EBADF: return "EBADF";
	case EFAULT: return "EFAULT";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case ENOSYS: return "ENOSYS";
	case ESPIPE: return "ESPIPE";
	default: return "another error";
	}
}
