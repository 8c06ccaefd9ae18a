/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mpi module, for real, under `mpiexec -n 2` and `mpiexec -n 4`
 * (`test_mpi_module mpirma`: the mpirma module, whose two-sided operations
 * are the mpi module's).
 *
 * Opens the module through its descriptor with the MPI bootstrap, then for
 * every pair of ranks and sizes 0, 1, 7, 65537 and 1 MiB + 3 exchanges
 * messages both ways, blocking (send/recv) and non-blocking (irecv/isend with
 * test and wait, at an odd offset inside the block), and a window of 300
 * requests through waitall, and checks every byte against a payload tag;
 * waitall ends a pending receive when the cancel flag is up, and a window
 * with one message too long for its receive ends in NG_ERR_TRUNCATED with
 * every other message delivered.  Also checks that a receive expecting
 * more bytes than arrive gives NG_ERR_TRUNCATED, and that close() frees
 * buffers left over.
 *
 * Exit 0 when every rank passed, 1 otherwise, 77 (skipped) when not started
 * by an MPI launcher (PMI_RANK/PMI_SIZE unset).
 */
#include "config.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bootstrap.h"
#include "core/launch.h"
#include "core/module.h"
#include "core/plugin.h"
#include "payload.h"
#include "status.h"

extern const struct ng_module ng_module_mpi;
extern const struct ng_module ng_module_mpirma;

#define T_SKIP 77

static const size_t t_sizes[] = {0, 1, 7, 65537, (1u << 20) + 3};
#define T_NSIZES  (sizeof(t_sizes) / sizeof(t_sizes[0]))
#define T_MAXSIZE ((size_t)(1u << 20) + 3)

struct t_ctx {
	struct ng_comm *c;
	const struct ng_module *m;
	const struct ng_module_ops *ops; /* m's, from ngauge-mpi.so */
	unsigned char *sbuf, *rbuf;      /* T_MAXSIZE + 1 bytes each */
	int fails;
};

#define T_CHECK(t, cond, ...)                                                                                \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "FAIL rank %d %s:%d: ", (t)->c->rank, __FILE__, __LINE__);           \
			fprintf(stderr, __VA_ARGS__);                                                        \
			fputc('\n', stderr);                                                                 \
			(t)->fails++;                                                                        \
		}                                                                                            \
	} while (0)

static uint64_t t_tag(size_t size, int from, int to, int mode)
{
	return ng_payload_tag(size, ((uint64_t)from << 32) | (uint32_t)to, (uint64_t)mode);
}

static void t_check_payload(struct t_ctx *t, const unsigned char *buf, size_t size, uint64_t tag, int from,
                            const char *how)
{
	size_t bad = 0;

	T_CHECK(t, ng_payload_check(buf, size, tag, &bad), "%s: %zu bytes from rank %d: bad byte at %zu", how,
	        size, from, bad);
}

/* Blocking: @lo sends first, @hi answers. */
static void t_blocking(struct t_ctx *t, int lo, int hi, size_t size)
{
	int me = t->c->rank, peer = me == lo ? hi : lo;
	ng_status st;

	ng_payload_fill(t->sbuf, size, t_tag(size, me, peer, 0));
	memset(t->rbuf, 0xa5, size);
	if (me == lo) {
		st = t->ops->msg->send(t->c, peer, t->sbuf, size);
		T_CHECK(t, st == NG_OK, "send %zu to %d: %s", size, peer, ng_status_name(st));
		st = t->ops->msg->recv(t->c, peer, t->rbuf, size);
		T_CHECK(t, st == NG_OK, "recv %zu from %d: %s", size, peer, ng_status_name(st));
	} else {
		st = t->ops->msg->recv(t->c, peer, t->rbuf, size);
		T_CHECK(t, st == NG_OK, "recv %zu from %d: %s", size, peer, ng_status_name(st));
		st = t->ops->msg->send(t->c, peer, t->sbuf, size);
		T_CHECK(t, st == NG_OK, "send %zu to %d: %s", size, peer, ng_status_name(st));
	}
	t_check_payload(t, t->rbuf, size, t_tag(size, peer, me, 0), peer, "blocking");
}

/* Non-blocking: both post the receive, then the send; the receive completes
 * through test() polling, the send through wait().  Odd offset (+1). */
static void t_nonblocking(struct t_ctx *t, int lo, int hi, size_t size)
{
	int me = t->c->rank, peer = me == lo ? hi : lo;
	unsigned char *s = t->sbuf + 1, *r = t->rbuf + 1;
	struct ng_req rq, sq;
	bool done = false;
	ng_status st;

	ng_payload_fill(s, size, t_tag(size, me, peer, 1));
	memset(r, 0x5a, size);
	st = t->ops->msg->irecv(t->c, peer, r, size, &rq);
	T_CHECK(t, st == NG_OK, "irecv %zu from %d: %s", size, peer, ng_status_name(st));
	if (st != NG_OK)
		return;
	st = t->ops->msg->isend(t->c, peer, s, size, &sq);
	T_CHECK(t, st == NG_OK, "isend %zu to %d: %s", size, peer, ng_status_name(st));
	if (st == NG_OK) {
		st = t->ops->msg->wait(t->c, &sq);
		T_CHECK(t, st == NG_OK, "wait(isend %zu to %d): %s", size, peer, ng_status_name(st));
	}
	while (!done) {
		st = t->ops->msg->test(t->c, &rq, &done);
		if (st != NG_OK)
			break;
	}
	T_CHECK(t, st == NG_OK && done, "test(irecv %zu from %d): %s", size, peer, ng_status_name(st));
	t_check_payload(t, r, size, t_tag(size, peer, me, 1), peer, "non-blocking");
}

/* A window for waitall with @peer: T_WIN receives and T_WIN sends in one
 * array @rq, interleaved, more than one chunk of the mpi module's waitall
 * (NG_MPI_WAITALL, 256), sizes 1 to 64 B in slots of their own, message i
 * tagged 2 + i.  Send number @longer (-1: none) goes out as a whole slot,
 * longer than the peer's receive for it.  Returns the posting's status
 * (checked). */
#define T_WIN  150
#define T_SLOT 64
static ng_status t_window_post(struct t_ctx *t, int peer, long longer, struct ng_req *rq)
{
	int me = t->c->rank;
	ng_status st = NG_OK;

	memset(t->rbuf, 0x5a, (size_t)T_WIN * T_SLOT);
	for (size_t i = 0; i < T_WIN && st == NG_OK; i++) {
		size_t size = i % T_SLOT + 1;
		size_t out = (long)i == longer ? T_SLOT : size;

		ng_payload_fill(t->sbuf + i * T_SLOT, out, t_tag(out, me, peer, 2 + (int)i));
		st = ng_irecv(t->c, peer, t->rbuf + i * T_SLOT, size, &rq[2 * i]);
		if (st == NG_OK)
			st = ng_isend(t->c, peer, t->sbuf + i * T_SLOT, out, &rq[2 * i + 1]);
	}
	T_CHECK(t, st == NG_OK, "posting the window: %s", ng_status_name(st));
	return st;
}

/* Every receive of the window from @peer but number @skip (-1: none) holds
 * its message's bytes. */
static void t_window_check(struct t_ctx *t, int peer, long skip, const char *what)
{
	int me = t->c->rank;

	for (size_t i = 0; i < T_WIN; i++) {
		size_t size = i % T_SLOT + 1;

		if ((long)i != skip)
			t_check_payload(t, t->rbuf + i * T_SLOT, size, t_tag(size, peer, me, 2 + (int)i),
			                peer, what);
	}
}

/* ng_waitall() through the module's waitall (MPI_Testall in chunks) over a
 * window (t_window_post), every byte checked.  Then with the cancel flag
 * raised: a receive that nothing matches ends with NG_ERR_CANCELLED instead
 * of waiting. */
static void t_waitall(struct t_ctx *t, int lo, int hi, volatile sig_atomic_t *cancel)
{
	int me = t->c->rank, peer = me == lo ? hi : lo;
	struct ng_req rq[2 * T_WIN], never;
	ng_status st;

	T_CHECK(t, t->c->msg.waitall != NULL, "%s has no waitall", t->m->name);
	if (t_window_post(t, peer, -1, rq) != NG_OK)
		return;
	st = ng_waitall(t->c, rq, 2 * T_WIN);
	T_CHECK(t, st == NG_OK, "waitall of %d requests with %d: %s", 2 * T_WIN, peer, ng_status_name(st));
	t_window_check(t, peer, -1, "waitall");
	/* a receive from the peer that it never sends, and the cancel flag */
	st = ng_irecv(t->c, peer, t->rbuf, 8, &never);
	T_CHECK(t, st == NG_OK, "irecv (never matched): %s", ng_status_name(st));
	if (st != NG_OK)
		return;
	*cancel = 1;
	st = t->c->msg.waitall(t->c, &never, 1);
	*cancel = 0;
	T_CHECK(t, st == NG_ERR_CANCELLED, "waitall with the cancel flag: %s, want ERR_CANCELLED",
	        ng_status_name(st));
}

/* A window between ranks 0 and 1 in which rank 0's message T_BAD is a
 * whole slot (64 B) and rank 1's receive for it takes 13: MPI_Testall
 * fails in the second chunk, and waitall's failure path gives
 * NG_ERR_TRUNCATED on rank 1 (reported once) while every other receive of
 * the window, in both chunks, holds its bytes; rank 0's window completes.
 * Then t_waitall's window once more over the same pair: no request of the
 * failed window is left behind. */
#define T_BAD 140
static void t_waitall_truncated(struct t_ctx *t, volatile sig_atomic_t *cancel)
{
	int me = t->c->rank, peer = 1 - me;
	struct ng_req rq[2 * T_WIN];
	ng_status st;

	if (me > 1 || t_window_post(t, peer, me == 0 ? T_BAD : -1, rq) != NG_OK)
		return;
	if (me == 1)
		fprintf(stderr, "(an expected report of a truncated message follows)\n");
	st = ng_waitall(t->c, rq, 2 * T_WIN);
	T_CHECK(t, st == (me == 1 ? NG_ERR_TRUNCATED : NG_OK),
	        "waitall with message %d too long: %s on rank %d", T_BAD, ng_status_name(st), me);
	t_window_check(t, peer, me == 1 ? T_BAD : -1, "waitall after a truncation");
	t_waitall(t, 0, 1, cancel);
}

/* Rank 0 sends 8 bytes, rank 1 expects 9: NG_ERR_TRUNCATED (reported once). */
static void t_truncated(struct t_ctx *t)
{
	ng_status st;

	if (t->c->rank == 0) {
		st = t->ops->msg->send(t->c, 1, t->sbuf, 8);
		T_CHECK(t, st == NG_OK, "send 8 to 1: %s", ng_status_name(st));
	} else if (t->c->rank == 1) {
		fprintf(stderr, "(an expected 'message size mismatch' report follows)\n");
		st = t->ops->msg->recv(t->c, 0, t->rbuf, 9);
		T_CHECK(t, st == NG_ERR_TRUNCATED, "short message gave %s, want ERR_TRUNCATED",
		        ng_status_name(st));
	}
}

int main(int argc, char **argv)
{
	volatile sig_atomic_t cancel = 0;
	struct t_ctx t = {.m = &ng_module_mpi};
	struct ng_module_env env = {.cancel = &cancel, .timeout_s = 60};
	struct ng_boot *b;
	void *sbuf, *rbuf, *extra;
	int *all_fails;
	int total = 0;
	ng_status st;

	if (argc > 1 && strcmp(argv[1], "mpirma") == 0)
		t.m = &ng_module_mpirma;
	if (!ng_launched_by_mpi()) {
		fprintf(stderr, "test_mpi_module: not launched by mpiexec (PMI_RANK, PMIX_RANK, "
		                "OMPI_COMM_WORLD_SIZE unset), skipped\n");
		return T_SKIP;
	}
	/* ngauge-mpi.so, as ngauge loads it (core/plugin.h). */
	const void *entry;
	if (ng_plugin_entry("mpi", "launch:mpi", "test_mpi_module", false, &entry) != NG_OK ||
	    ng_module_impl(t.m, &t.ops) != NG_OK)
		return 1;
	if (((const struct ng_mpi_launch *)entry)->boot(&argc, &argv, t.m->threads, &b) != NG_OK)
		return 1;
	ng_log_set_rank(b->rank);
	env.boot = b;

	if (b->size < 2) {
		fprintf(stderr, "test_mpi_module: needs at least 2 ranks, skipped\n");
		b->ops->fini(b);
		return T_SKIP;
	}
	if (t.ops->open(t.m, &env, &t.c) != NG_OK) {
		b->ops->fini(b);
		return 1;
	}
	T_CHECK(&t, t.c->rank == b->rank && t.c->size == b->size, "rank/size %d/%d, boot says %d/%d",
	        t.c->rank, t.c->size, b->rank, b->size);
	T_CHECK(&t, t.c->device[0] != '\0', "empty device string");
	T_CHECK(&t, b->host[0] != '\0' && b->addr[0] != '\0', "empty host or addr");
	if (b->rank == 0)
		printf("%s: device \"%s\", rank 0 on %s (%s), %d ranks\n", t.m->name, t.c->device, b->host,
		       b->addr, b->size);

	if (t.ops->alloc(t.c, T_MAXSIZE + 1, &sbuf) != NG_OK ||
	    t.ops->alloc(t.c, T_MAXSIZE + 1, &rbuf) != NG_OK || t.ops->alloc(t.c, 100, &extra) != NG_OK) {
		t.ops->close(t.c);
		b->ops->fini(b);
		return 1;
	}
	T_CHECK(&t, ((uintptr_t)sbuf & 4095) == 0 && ((uintptr_t)extra & 63) == 0, "alignment %p %p", sbuf,
	        extra);
	t.sbuf = sbuf;
	t.rbuf = rbuf;

	/* Every pair in turn; the other ranks wait at the barrier. */
	for (int lo = 0; lo < b->size; lo++) {
		for (int hi = lo + 1; hi < b->size; hi++) {
			if (b->rank == lo || b->rank == hi) {
				for (size_t i = 0; i < T_NSIZES; i++) {
					t_blocking(&t, lo, hi, t_sizes[i]);
					t_nonblocking(&t, lo, hi, t_sizes[i]);
				}
				t_waitall(&t, lo, hi, &cancel);
			}
			st = ng_boot_barrier(b);
			T_CHECK(&t, st == NG_OK, "barrier: %s", ng_status_name(st));
		}
	}
	t_waitall_truncated(&t, &cancel);
	st = ng_boot_barrier(b);
	T_CHECK(&t, st == NG_OK, "barrier: %s", ng_status_name(st));
	t_truncated(&t);

	/* extra is left for close() to free. */
	t.ops->free(t.c, rbuf);
	t.ops->free(t.c, sbuf);

	all_fails = calloc((size_t)b->size, sizeof(*all_fails));
	if (!all_fails || ng_boot_allgather(b, &t.fails, sizeof(t.fails), all_fails) != NG_OK) {
		total = 1;
	} else {
		for (int r = 0; r < b->size; r++)
			total += all_fails[r];
	}
	free(all_fails);
	if (b->rank == 0)
		printf("%s: %d ranks, %d failures\n", total ? "FAIL" : "PASS", b->size, total);

	t.ops->close(t.c);
	b->ops->fini(b);
	return total ? 1 : 0;
}
