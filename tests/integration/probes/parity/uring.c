/* io_uring entries under the supervisor: a rewritten entry must complete
 * as the kernel would complete the original, errors included; a chain
 * keeps its order and user_data. AREA/f is a 4 KiB file.
 *
 *   good            write, then fsync: res 4096, then 0
 *   fsync_badflags  FSYNC with unknown fsync_flags: -EINVAL
 *   fsync_addr      FSYNC with addr != 0: -EINVAL
 *   sfr_badrange    SYNC_FILE_RANGE at offset -1: -EINVAL
 *   sfr_badflags    SYNC_FILE_RANGE with unknown flags: -EINVAL
 *   fixed_none      FSYNC on fixed file 3, none registered: -EBADF
 *   fixed_beyond    FSYNC on fixed file 3, one registered: -EBADF
 *   fsync_pipe fsync_devnull fsync_badfd fsync_opath   the kernel's answer
 *   fixed_pipe      FSYNC on fixed file 0, a pipe: -EINVAL
 *   fixed_sparse    FSYNC on fixed file 0 of a sparse table: -EBADF
 *   fixed_updated   FILES_UPDATE makes slot 0 (a disk file) a pipe, linked
 *                   to an FSYNC on slot 0: -EINVAL
 *   fixed_direct    OPENAT of /dev/null direct into slot 0 (a disk file),
 *                   linked to an FSYNC on slot 0: -EINVAL
 *   sfr_overflow    SYNC_FILE_RANGE whose end overflows: -EINVAL
 *   sfr_addr        SYNC_FILE_RANGE with addr != 0: -EINVAL
 *   fsync_bufindex fsync_splicefd fsync_bufselect fsync_personality
 *                   FSYNC with a field or flag it refuses
 *   chain           write -> fsync -> read, linked: all three, in order
 *   chain_broken    write -> fsync with bad flags -> write, linked: the
 *                   third is cancelled
 *   openat_sync     OPENAT of AREA/new with O_CREAT|O_SYNC, then a write
 *   openat_direct   OPENAT of AREA/f with O_DIRECT, then a 1-byte write at
 *                   offset 1, which O_DIRECT refuses (EINVAL)
 *   openat2_in_file OPENAT2 whose open_how (O_SYNC) lies in a shared
 *                   mapping of AREA/how: the file keeps what was written
 *   openat2_readback  OPENAT2 of AREA/f with O_WRONLY|O_SYNC, no resolve
 *                   flags, then a write: the open_how read back after the
 *                   submit (and after the completion) is the program's own
 *   openat2_resolve the same with RESOLVE_BENEATH: opened, how unchanged
 *   openat2_refused OPENAT2 with O_PATH|O_SYNC: -EINVAL, how unchanged
 *   openat_refused  OPENAT with O_TMPFILE|O_RDONLY|O_SYNC: -EINVAL
 */
#include "parity.h"
#include "uring.h"
#include <linux/openat2.h>
#include <sys/mman.h>

static int descriptor(const char *kind)
{
	int ends[2];
	if (!strcmp(kind, "pipe"))
		return pipe(ends) ? -1 : ends[1];
	if (!strcmp(kind, "devnull"))
		return open("/dev/null", O_WRONLY);
	if (!strcmp(kind, "badfd"))
		return 99;
	if (!strcmp(kind, "opath"))
		return open(at("f"), O_PATH);
	return open(at("f"), O_RDWR);
}

static int run(const char *which)
{
	struct io_uring ring;
	struct io_uring_params params = {0};
	int error = io_uring_queue_init_params(8, &ring, &params);
	if (error) {
		say_raw("setup", error);
		return 3;
	}
	int fd = open(at("f"), O_RDWR);
	memset(block, 'u', sizeof block);
	struct io_uring_sqe *sqe;
	CASE("good") {
		io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(entry(&ring, 2), fd, 0);
		reap(&ring, 2);
	}
	else CASE("fsync_badflags") {
		io_uring_prep_fsync(entry(&ring, 1), fd, 0x80);
		reap(&ring, 1);
	}
	else CASE("fsync_addr") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->addr = 1;
		reap(&ring, 1);
	}
	else CASE("sfr_badrange") {
		io_uring_prep_sync_file_range(entry(&ring, 1), fd, 10, -1, 0);
		reap(&ring, 1);
	}
	else CASE("sfr_badflags") {
		io_uring_prep_sync_file_range(entry(&ring, 1), fd, 10, 0, 0xff);
		reap(&ring, 1);
	}
	else CASE("fixed_none") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), 3, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap(&ring, 1);
	}
	else CASE("fixed_beyond") {
		say_raw("register", io_uring_register_files(&ring, &fd, 1));
		io_uring_prep_fsync(sqe = entry(&ring, 1), 3, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_prep_fsync(sqe = entry(&ring, 2), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap(&ring, 2);
	}
	else CASE("fixed_pipe") {
		int ends[2];
		if (pipe(ends))
			return 3;
		say_raw("register", io_uring_register_files(&ring, &ends[1], 1));
		io_uring_prep_fsync(sqe = entry(&ring, 1), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap(&ring, 1);
	}
	else CASE("fixed_sparse") {
		say_raw("register", io_uring_register_files_sparse(&ring, 2));
		io_uring_prep_fsync(sqe = entry(&ring, 1), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap(&ring, 1);
	}
	else CASE("fixed_updated") {
		int ends[2];
		if (pipe(ends))
			return 3;
		say_raw("register", io_uring_register_files(&ring, &fd, 1));
		io_uring_prep_files_update(sqe = entry(&ring, 1), &ends[1], 1, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(sqe = entry(&ring, 2), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap_in(&ring, 2, 1);
	}
	else CASE("fixed_direct") {
		say_raw("register", io_uring_register_files(&ring, &fd, 1));
		io_uring_prep_openat_direct(sqe = entry(&ring, 1), AT_FDCWD, "/dev/null", O_WRONLY,
					    0, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(sqe = entry(&ring, 2), 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		reap_in(&ring, 2, 1);
	}
	else CASE("sfr_overflow") {
		io_uring_prep_sync_file_range(entry(&ring, 1), fd, 10, 0x7ffffffffffffffeLL, 0);
		reap(&ring, 1);
	}
	else CASE("sfr_addr") {
		io_uring_prep_sync_file_range(sqe = entry(&ring, 1), fd, 10, 0, 0);
		sqe->addr = 1;
		reap(&ring, 1);
	}
	else CASE("fsync_bufindex") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->buf_index = 1;
		reap(&ring, 1);
	}
	else CASE("fsync_splicefd") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->splice_fd_in = 1;
		reap(&ring, 1);
	}
	else CASE("fsync_bufselect") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		reap(&ring, 1);
	}
	else CASE("fsync_personality") {
		io_uring_prep_fsync(sqe = entry(&ring, 1), fd, 0);
		sqe->personality = 77;
		reap(&ring, 1);
	}
	else CASE("chain") {
		io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(sqe = entry(&ring, 2), fd, IORING_FSYNC_DATASYNC);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_read(entry(&ring, 3), fd, block, 100, 0);
		reap_in(&ring, 3, 1);
	}
	else CASE("chain_broken") {
		io_uring_prep_write(sqe = entry(&ring, 1), fd, block, sizeof block, 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_fsync(sqe = entry(&ring, 2), fd, 0x80);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_prep_write(entry(&ring, 3), fd, "late", 4, 0);
		reap_in(&ring, 3, 1);
	}
	else CASE("openat_sync") {
		io_uring_prep_openat(entry(&ring, 1), AT_FDCWD, at("new"),
				     O_WRONLY | O_CREAT | O_SYNC, 0644);
		reap(&ring, 1);
		say("write", write(fd + 1, "opened by the ring\n", 19));
	}
	else CASE("openat_direct") {
		io_uring_prep_openat(entry(&ring, 1), AT_FDCWD, at("f"), O_WRONLY | O_DIRECT, 0);
		reap(&ring, 1);
		say_value("pwrite", pwrite(fd + 1, "x", 1, 1));
	}
	else CASE("openat2_in_file") {
		int file = open(at("how"), O_RDWR | O_CREAT, 0644);
		if (file < 0 || ftruncate(file, sizeof(struct open_how)))
			return 3;
		struct open_how *how = mmap(NULL, sizeof *how, PROT_READ | PROT_WRITE, MAP_SHARED,
					    file, 0);
		if (how == MAP_FAILED)
			return 3;
		how->flags = O_WRONLY | O_SYNC;
		io_uring_prep_openat2(entry(&ring, 1), AT_FDCWD, at("f"), how);
		reap(&ring, 1);
		say("munmap", munmap(how, sizeof *how));
	}
	else if (!strcmp(which, "openat2_readback") || !strcmp(which, "openat2_resolve") ||
		 !strcmp(which, "openat2_refused")) {
		int refused = !strcmp(which, "openat2_refused");
		struct open_how how = {
			.flags = refused ? O_PATH | O_SYNC : O_WRONLY | O_SYNC,
			.resolve = !strcmp(which, "openat2_resolve") ? RESOLVE_BENEATH : 0,
		};
		int dir = open(area, O_PATH | O_DIRECTORY);
		io_uring_prep_openat2(entry(&ring, 1), dir, "f", &how);
		printf("submitted=%d\n", io_uring_submit(&ring));
		printf("how_after_submit=%#llx %#llx %#llx\n", how.flags, how.mode, how.resolve);
		struct io_uring_cqe *cqe;
		int error = io_uring_wait_cqe(&ring, &cqe);
		if (error) {
			say_raw("wait", error);
			return 0;
		}
		int opened = cqe->res;
		say_raw("cqe1", opened < 0 ? opened : 0);
		io_uring_cqe_seen(&ring, cqe);
		printf("how_after_completion=%#llx %#llx %#llx\n", how.flags, how.mode,
		       how.resolve);
		if (opened >= 0)
			say("write", write(opened, "opened by the ring\n", 19));
	}
	else CASE("openat_refused") {
		io_uring_prep_openat(entry(&ring, 1), AT_FDCWD, area, O_TMPFILE | O_RDONLY | O_SYNC,
				     0600);
		reap(&ring, 1);
	}
	else {
		char kind[32];
		if (sscanf(which, "fsync_%31s", kind) != 1)
			UNKNOWN();
		io_uring_prep_fsync(entry(&ring, 1), descriptor(kind), 0);
		reap(&ring, 1);
	}
	return 0;
}
