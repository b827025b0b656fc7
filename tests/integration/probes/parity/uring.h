/* What the io_uring parity probes share: an entry with its user_data,
 * and the completions of a submission, printed. */
#include <liburing.h>

__attribute__((unused)) static char block[4096];

static struct io_uring_sqe *entry(struct io_uring *ring, unsigned long long user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		fprintf(stderr, "no entry free\n");
		exit(3);
	}
	io_uring_prep_nop(sqe);
	sqe->user_data = user_data;
	return sqe;
}

/* Submits, then prints `count` completions: in the order they came for a
 * chain (`ordered`), whose order the kernel keeps; else by user_data, as
 * the kernel promises no order between independent entries. */
static void reap_in(struct io_uring *ring, int count, int ordered)
{
	long results[8][2];
	int submitted = io_uring_submit(ring);
	say_value("submitted", submitted);
	/* A batch stops at an entry that fails early: wait for no more. */
	if (submitted >= 0 && submitted < count)
		count = submitted;
	for (int i = 0; i < count && i < 8; i++) {
		struct io_uring_cqe *cqe;
		int error = io_uring_wait_cqe(ring, &cqe);
		if (error) {
			say_raw("wait", error);
			return;
		}
		results[i][0] = cqe->user_data;
		results[i][1] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	for (int i = 0; !ordered && i < count; i++)
		for (int j = i + 1; j < count; j++)
			if (results[j][0] < results[i][0]) {
				long swap[2] = {results[i][0], results[i][1]};
				results[i][0] = results[j][0], results[i][1] = results[j][1];
				results[j][0] = swap[0], results[j][1] = swap[1];
			}
	for (int i = 0; i < count && i < 8; i++) {
		char name[32];
		snprintf(name, sizeof name, "cqe%ld", results[i][0]);
		say_raw(name, results[i][1]);
	}
}

__attribute__((unused)) static void reap(struct io_uring *ring, int count)
{
	reap_in(ring, count, 0);
}

