/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance test of one RDMA layer backend (modules/rdmalayer/rdma.h), the same
 * checks for every backend:
 *
 *   test_rdma_layer BACKEND [NP [PROVIDER [MAX_WRITE]]]
 *
 * MAX_WRITE lowers the largest write or read the backend may post (struct
 * ng_rdma_conf .max_write): every longer one must be split, and the
 * scenarios check the same content.
 * forks NP ranks (default 3) with the local bootstrap; the parent is their
 * hub and exits 0 when every rank passed, 77 when the backend cannot be
 * opened here (all ranks skip), 1 otherwise.  Scenarios, each rank towards
 * rank + 1 (mod NP):
 *   content   writes of 1 B .. 4 MiB at odd offsets into the peer's
 *             mem_alloc() memory: the target finds exactly the bytes sent
 *             and its guard bytes untouched; the writer reads the range back
 *             (one guard byte each side) and compares
 *   notify    ranks 0 and 1 ping-pong 1000 NOTIFY writes of 13 bytes plus a
 *             sequence word; each side polls only its word, then checks the
 *             payload of that round
 *   blocks    rank 0 writes 20 rounds of 300 KiB + 24 B as ONE write of
 *             blocks (NG_RDMA_BLOCKS(12): a notice every 4 KiB); rank 1
 *             consumes the pieces in order while they arrive, checking each
 *             piece's payload once its notice has the round's number
 *   atomics   every rank fetch-adds 1 to one word of rank 0 10,000 times
 *             (exactly 10,000 * NP), then increments it 1,000 times more with
 *             compare-and-swap loops (exactly 11,000 * NP); no old value is
 *             seen twice by one rank
 *   bounds    a write and a read reaching past the end of the peer's region
 *             are refused (NG_ERR_USAGE) and the peer's guard is untouched
 *   anymem    (NG_RDMA_CAP_ANYMEM) writes and reads into ordinary heap
 *             memory the peer registered with reg()
 *   stale     (NG_RDMA_CAP_KEYS, checked by the layer) a write through the
 *             descriptor of a registration the peer has dropped is refused
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "launch.h"
#include "modules/rdmalayer/rdma.h"

#include "../check.h"

#define REGION   (((size_t)4 << 20) + 8192)
#define GUARD    0xa5
#define ATOM_OFF 0
#define NOTE_OFF 64

static unsigned char pat(size_t i, size_t size, int from)
{
	return (unsigned char)(i * 131u + size * 7u + (unsigned)from * 29u + 1u);
}

struct ctx {
	struct ng_rdma *r;
	struct ng_boot *b;
	struct ng_rdma_mr *win;  /* REGION bytes, everyone writes here */
	struct ng_rdma_mr *loc;  /* local source/destination */
	struct ng_rdma_rmr *rms; /* [size]: every rank's win */
	struct ng_rdma_mr *bar;  /* [size] words: the layer barrier */
	struct ng_rdma_rmr *rbar;
	uint64_t round;
	int me, n, next, prev;
};

/*
 * A barrier through the layer: a notice at every peer, then progress until
 * every peer's has arrived.  Unlike the bootstrap's, it keeps this rank
 * serving its peers' operations (backends without target-free progress,
 * such as libfabric's shm provider for atomics, need that).
 */
static void layer_barrier(struct ctx *c)
{
	volatile uint64_t *w = c->bar->base;
	uint64_t v = ++c->round, t;
	ng_status st = NG_OK;

	for (int p = 0; p < c->n && st == NG_OK; p++)
		if (p != c->me)
			st = ng_rdma_write(c->r, p, &v, NULL, 8, &c->rbar[p], (uint64_t)c->me * 8,
			                   NG_RDMA_NOTIFY, &t);
	for (int p = 0; p < c->n && st == NG_OK; p++)
		if (p != c->me)
			st = ng_rdma_wait_word(c->r, &w[p], v, p);
	CHECK(st == NG_OK, "layer barrier: %s", ng_status_name(st));
	CHECK(ng_boot_barrier(c->b) == NG_OK, "barrier");
}

/* Between scenario steps: the bootstrap's barrier where operations complete
 * without the target (NG_RDMA_CAP_PROGRESS); else the layer's, which keeps
 * every rank serving its peers' operations until all have arrived (the
 * shm provider's ordered path, for one, is placed by the target's
 * progress). */
static void sync_ranks(struct ctx *c)
{
	if (c->r->caps & NG_RDMA_CAP_PROGRESS)
		CHECK(ng_boot_barrier(c->b) == NG_OK, "barrier");
	else
		layer_barrier(c);
}

static void scen_content(struct ctx *c)
{
	static const size_t sizes[] = {
	    1, 3, 7, 8, 63, 4093, 65537, ((size_t)1 << 20) + 3, ((size_t)4 << 20) - 5};
	unsigned char *win = c->win->base, *src = c->loc->base;
	uint64_t t;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t s = sizes[k], off = 4096 + 1 + k * 2;
		ng_status st;

		memset(win, GUARD, REGION);
		sync_ranks(c);
		for (size_t i = 0; i < s; i++)
			src[i] = pat(i, s, c->me);
		st = ng_rdma_write(c->r, c->next, src, c->loc, s, &c->rms[c->next], off, 0, &t);
		CHECK(st == NG_OK, "write of %zu bytes: %s", s, ng_status_name(st));
		if (st == NG_OK)
			st = ng_rdma_wait(c->r, c->next, t);
		if (st == NG_OK)
			st = ng_rdma_flush(c->r, c->next);
		CHECK(st == NG_OK, "completing a write of %zu bytes: %s", s, ng_status_name(st));
		sync_ranks(c);
		/* What arrived here from prev. */
		size_t bad = SIZE_MAX;
		for (size_t i = 0; i < REGION && bad == SIZE_MAX; i++) {
			unsigned char want = (i >= off && i < off + s) ? pat(i - off, s, c->prev) : GUARD;
			if (win[i] != want)
				bad = i;
		}
		CHECK(bad == SIZE_MAX, "size %zu from rank %d: byte %zu is 0x%02x", s, c->prev, bad,
		      bad == SIZE_MAX ? 0 : win[bad]);
		/* Read it back from next, a guard byte each side. */
		if (c->r->caps & NG_RDMA_CAP_READ) {
			unsigned char *dst = src + REGION / 2 + 1;
			size_t rl = s + 2 < REGION / 2 - 8 ? s + 2 : 0;

			if (rl) {
				memset(dst, 0, rl);
				st = ng_rdma_read(c->r, c->next, dst, c->loc, rl, &c->rms[c->next], off - 1,
				                  &t);
				if (st == NG_OK)
					st = ng_rdma_wait(c->r, c->next, t);
				CHECK(st == NG_OK, "read of %zu bytes: %s", rl, ng_status_name(st));
				bad = SIZE_MAX;
				for (size_t i = 0; i < rl && bad == SIZE_MAX; i++) {
					unsigned char want =
					    (i == 0 || i == rl - 1) ? GUARD : pat(i - 1, s, c->me);
					if (dst[i] != want)
						bad = i;
				}
				CHECK(bad == SIZE_MAX, "read back %zu bytes from rank %d: byte %zu wrong", s,
				      c->next, bad);
			}
		}
		sync_ranks(c);
	}
}

static void scen_notify(struct ctx *c)
{
	unsigned char *win = c->win->base;
	volatile uint64_t *word = (volatile uint64_t *)(void *)(win + NOTE_OFF + 16);
	unsigned char msg[24];
	int peer = c->me == 0 ? 1 : 0;
	uint64_t t;
	ng_status st = NG_OK;

	memset(win, 0, 4096);
	sync_ranks(c);
	if (c->me > 1)
		goto out;
	for (uint64_t i = 1; i <= 1000 && st == NG_OK; i++) {
		if ((c->me == 0) == (i % 2 == 1)) {
			for (size_t k = 0; k < 13; k++)
				msg[k] = (unsigned char)(i + k);
			memset(msg + 13, 0, 3);
			memcpy(msg + 16, &i, 8);
			st = ng_rdma_write(c->r, peer, msg, NULL, sizeof(msg), &c->rms[peer], NOTE_OFF,
			                   NG_RDMA_NOTIFY, &t);
			CHECK(st == NG_OK, "notify write %" PRIu64 ": %s", i, ng_status_name(st));
		} else {
			st = ng_rdma_wait_word(c->r, word, i, peer);
			CHECK(st == NG_OK, "waiting for notice %" PRIu64 ": %s", i, ng_status_name(st));
			for (size_t k = 0; k < 13 && st == NG_OK; k++)
				if (win[NOTE_OFF + k] != (unsigned char)(i + k)) {
					CHECK(0, "round %" PRIu64 ": payload byte %zu is %u after the notice",
					      i, k, win[NOTE_OFF + k]);
					break;
				}
		}
	}
	if (st == NG_OK)
		st = ng_rdma_wait_all(c->r, peer);
out:
	sync_ranks(c);
}

static void scen_blocks(struct ctx *c)
{
	const size_t piece = 4096, total = 75 * piece + 24, rounds = 20;
	unsigned char *win = c->win->base, *src = c->loc->base;
	volatile uint64_t *ack = (volatile uint64_t *)(void *)(win + REGION - 8);
	uint64_t t;
	ng_status st = NG_OK;

	memset(win, 0, REGION);
	sync_ranks(c);
	for (uint64_t r = 1; r <= rounds && st == NG_OK && c->me < 2; r++) {
		if (c->me == 0) {
			for (size_t at = 0; at < total; at += piece) {
				size_t k = total - at < piece ? total - at : piece;

				for (size_t i = 0; i < k - 8; i++)
					src[at + i] = pat(at + i, total, (int)r);
				memcpy(src + at + k - 8, &r, 8);
			}
			st = ng_rdma_write(c->r, 1, src, c->loc, total, &c->rms[1], 4096, NG_RDMA_BLOCKS(12),
			                   &t);
			CHECK(st == NG_OK, "write of blocks, round %" PRIu64 ": %s", r, ng_status_name(st));
			if (st == NG_OK)
				st = ng_rdma_wait_word(c->r, ack, r, 1);
			continue;
		}
		for (size_t at = 0; at < total && st == NG_OK; at += piece) {
			size_t k = total - at < piece ? total - at : piece;

			st = ng_rdma_wait_word(c->r, (volatile uint64_t *)(void *)(win + 4096 + at + k - 8),
			                       r, 0);
			for (size_t i = 0; i < k - 8 && st == NG_OK; i++)
				if (win[4096 + at + i] != pat(at + i, total, (int)r)) {
					CHECK(0,
					      "round %" PRIu64
					      ": byte %zu of the piece at %zu wrong after its notice",
					      r, i, at);
					break;
				}
		}
		if (st == NG_OK)
			st = ng_rdma_write(c->r, 0, &r, NULL, 8, &c->rms[0], REGION - 8, NG_RDMA_NOTIFY, &t);
	}
	CHECK(st == NG_OK, "blocks: %s", ng_status_name(st));
	if (st == NG_OK && c->me < 2)
		st = ng_rdma_wait_all(c->r, c->me == 0 ? 1 : 0);
	sync_ranks(c);
}

static void scen_atomics(struct ctx *c)
{
	uint64_t *w = (uint64_t *)c->win->base;
	uint64_t old, prev = UINT64_MAX, t;
	const int N = 10000, M = 1000;
	ng_status st = NG_OK;

	if (!(c->r->caps & NG_RDMA_CAP_ATOMIC))
		return;
	*w = 0;
	sync_ranks(c);
	for (int i = 0; i < N && st == NG_OK; i++) {
		st = ng_rdma_fadd(c->r, 0, &c->rms[0], ATOM_OFF, 1, &old, &t);
		if (st == NG_OK)
			st = ng_rdma_wait(c->r, 0, t);
		CHECK(st == NG_OK, "fetch-add %d: %s", i, ng_status_name(st));
		CHECK(st != NG_OK || prev == UINT64_MAX || old > prev,
		      "fetch-add returned %" PRIu64 " after %" PRIu64, old, prev);
		prev = old;
	}
	layer_barrier(c);
	if (c->me == 0)
		CHECK(__atomic_load_n(w, __ATOMIC_ACQUIRE) == (uint64_t)N * (uint64_t)c->n,
		      "after fetch-adds the word is %" PRIu64 ", expected %d", *w, N * c->n);
	sync_ranks(c);
	for (int i = 0; i < M && st == NG_OK; i++) {
		uint64_t guess = 0;

		for (;;) {
			st = ng_rdma_cas(c->r, 0, &c->rms[0], ATOM_OFF, guess, guess + 1, &old, &t);
			if (st == NG_OK)
				st = ng_rdma_wait(c->r, 0, t);
			if (st != NG_OK || old == guess)
				break;
			guess = old;
		}
		CHECK(st == NG_OK, "compare-and-swap: %s", ng_status_name(st));
	}
	layer_barrier(c);
	if (c->me == 0)
		CHECK(__atomic_load_n(w, __ATOMIC_ACQUIRE) == (uint64_t)(N + M) * (uint64_t)c->n,
		      "after compare-and-swaps the word is %" PRIu64 ", expected %d", *w, (N + M) * c->n);
	sync_ranks(c);
}

static void scen_bounds(struct ctx *c)
{
	unsigned char *win = c->win->base;
	size_t len = c->rms[c->next].len;
	uint64_t t;
	ng_status st;

	memset(win, GUARD, REGION);
	sync_ranks(c);
	st = ng_rdma_write(c->r, c->next, c->loc->base, c->loc, 16, &c->rms[c->next], len - 8, 0, &t);
	CHECK(st == NG_ERR_USAGE, "a write past the end gave %s", ng_status_name(st));
	st = ng_rdma_write(c->r, c->next, c->loc->base, c->loc, 16, &c->rms[c->next], UINT64_MAX - 4, 0, &t);
	CHECK(st == NG_ERR_USAGE, "a write at a wrapping offset gave %s", ng_status_name(st));
	if (c->r->caps & NG_RDMA_CAP_READ) {
		st = ng_rdma_read(c->r, c->next, c->loc->base, c->loc, 16, &c->rms[c->next], len - 1, &t);
		CHECK(st == NG_ERR_USAGE, "a read past the end gave %s", ng_status_name(st));
	}
	ng_rdma_flush(c->r, c->next);
	sync_ranks(c);
	for (size_t i = 0; i < REGION; i++)
		if (win[i] != GUARD) {
			CHECK(0, "byte %zu changed by a refused access", i);
			break;
		}
	sync_ranks(c);
}

static void scen_anymem(struct ctx *c)
{
	size_t len = 100003;
	unsigned char *heap = malloc(len);
	struct ng_rdma_mr *mr = NULL;
	struct ng_rdma_rmr *all = calloc((size_t)c->n, sizeof(*all));
	unsigned char *src = c->loc->base;
	uint64_t t;
	ng_status st;

	if (!(c->r->caps & NG_RDMA_CAP_ANYMEM) || !heap || !all)
		goto out;
	memset(heap, GUARD, len);
	st = ng_rdma_reg(c->r, heap, len, &mr);
	CHECK(st == NG_OK, "reg of heap memory: %s", ng_status_name(st));
	struct ng_rdma_rmr mine = mr ? mr->remote : (struct ng_rdma_rmr){0};
	CHECK(ng_boot_allgather(c->b, &mine, sizeof(mine), all) == NG_OK, "allgather");
	for (size_t i = 0; i < 77777; i++)
		src[i] = pat(i, 77777, c->me);
	st = ng_rdma_write(c->r, c->next, src, c->loc, 77777, &all[c->next], 1001, 0, &t);
	if (st == NG_OK)
		st = ng_rdma_wait(c->r, c->next, t);
	if (st == NG_OK)
		st = ng_rdma_flush(c->r, c->next);
	CHECK(st == NG_OK, "write into registered heap memory: %s", ng_status_name(st));
	sync_ranks(c);
	for (size_t i = 0; i < len; i++) {
		unsigned char want = (i >= 1001 && i < 1001 + 77777) ? pat(i - 1001, 77777, c->prev) : GUARD;
		if (heap[i] != want) {
			CHECK(0, "heap byte %zu is 0x%02x", i, heap[i]);
			break;
		}
	}
	if (c->r->caps & NG_RDMA_CAP_READ) {
		unsigned char *dst = src + REGION / 2;
		st = ng_rdma_read(c->r, c->next, dst, c->loc, 5000, &all[c->next], 1001, &t);
		if (st == NG_OK)
			st = ng_rdma_wait(c->r, c->next, t);
		CHECK(st == NG_OK && memcmp(dst, src, 5000) == 0, "read back from heap memory: %s",
		      ng_status_name(st));
	}
	sync_ranks(c);
	/* Stale: drop the registration, the peer's write must be refused. */
	ng_rdma_dereg(c->r, mr);
	mr = NULL;
	sync_ranks(c);
	if ((c->r->caps & NG_RDMA_CAP_KEYS) && !(c->r->caps & NG_RDMA_CAP_HWKEY)) {
		/* Checked by the layer: refused at the origin. */
		st = ng_rdma_write(c->r, c->next, src, c->loc, 16, &all[c->next], 0, 0, &t);
		CHECK(st == NG_ERR_USAGE, "a write through a dropped registration gave %s",
		      ng_status_name(st));
	}
	sync_ranks(c);
	CHECK(heap[0] == GUARD, "a dropped registration was written");
out:
	ng_rdma_dereg(c->r, mr);
	free(all);
	free(heap);
}

int main(int argc, char **argv)
{
	const char *backend = argc > 1 ? argv[1] : "shm";
	int np = argc > 2 ? atoi(argv[2]) : 3;
	struct ng_rdma_conf cf = {.who = "rdma-test",
	                          .provider = argc > 3 && *argv[3] ? argv[3] : NULL,
	                          .gid_index = -1,
	                          /* an emulated guest on a loaded host went 20 s without a word */
	                          .timeout_s = 60,
	                          .max_write = argc > 4 ? (size_t)strtoull(argv[4], NULL, 0) : 0};
	struct ctx c = {0};
	ng_status st;

	if (np < 2) {
		fprintf(stderr, "usage: %s BACKEND [NP>=2 [PROVIDER]]\n", argv[0]);
		return 2;
	}
	if (ng_boot_local(np, 5.0, &c.b) != NG_OK)
		return 1;
	c.me = c.b->rank;
	c.n = c.b->size;
	c.next = (c.me + 1) % c.n;
	c.prev = (c.me + c.n - 1) % c.n;
	ng_log_set_rank(c.me);
	st = ng_rdma_open(backend, &cf, c.b, &c.r);
	if (st == NG_ERR_USAGE)
		return 2;
	if (st != NG_OK) {
		if (c.me == 0)
			printf("SKIP: backend %s cannot be opened here\n", backend);
		return 77;
	}
	if (c.me == 0)
		printf("backend: %s, largest write %zu\n", c.r->desc, c.r->max_write);
	CHECK(!cf.max_write || c.r->max_write == cf.max_write, "largest write %zu, asked for %zu",
	      c.r->max_write, cf.max_write);
	c.rms = calloc((size_t)c.n, sizeof(*c.rms));
	st = ng_rdma_mem_alloc(c.r, REGION, &c.win);
	CHECK(st == NG_OK, "mem_alloc: %s", ng_status_name(st));
	st = ng_rdma_mem_alloc(c.r, REGION, &c.loc);
	CHECK(st == NG_OK, "mem_alloc: %s", ng_status_name(st));
	if (!c.rms || !c.win || !c.loc)
		return 1;
	CHECK(ng_boot_allgather(c.b, &c.win->remote, sizeof(c.win->remote), c.rms) == NG_OK, "allgather");
	c.rbar = calloc((size_t)c.n, sizeof(*c.rbar));
	st = ng_rdma_mem_alloc(c.r, (size_t)c.n * 8, &c.bar);
	CHECK(st == NG_OK, "mem_alloc: %s", ng_status_name(st));
	if (!c.rbar || !c.bar)
		return 1;
	CHECK(ng_boot_allgather(c.b, &c.bar->remote, sizeof(c.bar->remote), c.rbar) == NG_OK, "allgather");

	scen_content(&c);
	scen_notify(&c);
	scen_blocks(&c);
	scen_atomics(&c);
	scen_bounds(&c);
	scen_anymem(&c);
	if (c.me == 0)
		printf("%s: content, notify, atomics, bounds, anymem: %d check(s) failed on rank 0\n",
		       backend, failures);

	ng_rdma_mem_free(c.r, c.win);
	ng_rdma_mem_free(c.r, c.loc);
	ng_rdma_mem_free(c.r, c.bar);
	free(c.rbar);
	ng_rdma_close(c.r);
	free(c.rms);
	c.b->ops->fini(c.b);
	return check_exit();
}
