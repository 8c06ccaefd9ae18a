/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective signaling of ibrc/ibuc's send queues (modules/verbs/verbs.h):
 * a stream of requests nobody waits for is signaled once per sig_every, a
 * request a send waits for always is, the queue never fills with
 * unsignaled requests only (a device that completes in order frees room at
 * every signaled completion), a completion completes every request before
 * it, the request number is rebuilt from the wr_id's low bits across their
 * wrap, and a failed completion marks that request and the later ones.
 */
#include <stdint.h>
#include <string.h>

#include "modules/verbs/verbs.h"

#include "../check.h"

#define DEPTH 80u
#define EVERY 20u
#define BITS  31u

/* A device that completes in posting order: the requests in flight. */
struct dev {
	uint64_t num[DEPTH];
	bool sig[DEPTH];
	size_t head, n;
	uint64_t cqes;
};

/* Completes the oldest request; a signaled one gives a completion carrying
 * the low bits of its number, which the QP accounts. */
static void dev_complete(struct dev *d, struct ng_ibv_qp *q)
{
	uint64_t num = d->num[d->head];
	bool sig = d->sig[d->head];

	d->head = (d->head + 1) % DEPTH;
	d->n--;
	if (sig) {
		uint64_t low = num & ((UINT64_C(1) << BITS) - 1);

		(void)ng_ibv_qp_complete_to(q, ng_ibv_qp_number(q, low, BITS), IBV_WC_SUCCESS);
		d->cqes++;
	}
}

static void test_stream(void)
{
	struct ng_ibv_qp q = {.depth = DEPTH, .sig_every = EVERY, .err_from = UINT64_MAX};
	struct dev d = {.head = 0};
	const uint64_t total = 10000;
	uint64_t sig = 0, need = 0, stuck = 0;

	for (uint64_t i = 0; i < total; i++) {
		bool w = i % 37 == 36; /* a send that waits for this one */
		bool s;
		int spins = 0;

		/* Room: the device works until the QP has seen enough complete. */
		while (!ng_ibv_qp_room(&q, 1)) {
			if (!d.n || ++spins > (int)DEPTH) {
				stuck++;
				break;
			}
			dev_complete(&d, &q);
		}
		s = ng_ibv_qp_signal_due(&q, w);
		q.posted++;
		if (s)
			ng_ibv_qp_signaled(&q);
		d.num[(d.head + d.n) % DEPTH] = q.posted;
		d.sig[(d.head + d.n) % DEPTH] = s;
		d.n++;
		sig += s;
		need += w;
		CHECK(!w || s, "request %llu waited for but not signaled", (unsigned long long)q.posted);
		/* No EVERY requests in a row without a signaled one. */
		CHECK(q.posted - q.sig_last < EVERY, "request %llu: %llu unsignaled in a row",
		      (unsigned long long)q.posted, (unsigned long long)(q.posted - q.sig_last));
	}
	CHECK(!stuck, "the queue filled with unsignaled requests %llu times", (unsigned long long)stuck);
	/* One completion per EVERY requests, plus those waited for: not one per request. */
	printf("%llu requests, %llu signaled (%llu waited for)\n", (unsigned long long)total,
	       (unsigned long long)sig, (unsigned long long)need);
	CHECK(sig >= total / EVERY && sig <= total / EVERY + need + 1, "signaled %llu",
	      (unsigned long long)sig);
	CHECK(sig < total / 10, "signaled %llu of %llu", (unsigned long long)sig, (unsigned long long)total);
	/* Drained: the last signaled completion completes everything before it. */
	while (d.n)
		dev_complete(&d, &q);
	CHECK(q.done == q.sig_last && q.sig_last > q.posted - EVERY, "done %llu, last signaled %llu",
	      (unsigned long long)q.done, (unsigned long long)q.sig_last);
	CHECK(d.cqes == sig, "completions %llu", (unsigned long long)d.cqes);
}

static void test_number(void)
{
	struct ng_ibv_qp q = {.depth = DEPTH, .err_from = UINT64_MAX};
	uint64_t mask = (UINT64_C(1) << BITS) - 1, n;

	/* Across the wrap of the wr_id's 31 bits. */
	q.done = (UINT64_C(1) << BITS) - 5;
	n = (UINT64_C(1) << BITS) + 3;
	CHECK(ng_ibv_qp_number(&q, n & mask, BITS) == n, "at the wrap: %llx",
	      (unsigned long long)ng_ibv_qp_number(&q, n & mask, BITS));
	q.done = (UINT64_C(5) << 40) + 17;
	n = q.done + DEPTH;
	CHECK(ng_ibv_qp_number(&q, n & mask, BITS) == n, "high: %llx", (unsigned long long)n);
	/* A completion completes what went before; an older number changes nothing. */
	q.done = 100;
	(void)ng_ibv_qp_complete_to(&q, 120, IBV_WC_SUCCESS);
	CHECK(q.done == 120 && ng_ibv_qp_is_done(&q, 110) && !ng_ibv_qp_is_done(&q, 121), "done %llu",
	      (unsigned long long)q.done);
	(void)ng_ibv_qp_complete_to(&q, 119, IBV_WC_SUCCESS);
	CHECK(q.done == 120, "went back to %llu", (unsigned long long)q.done);
	/* The first failure marks its request and the later ones, once. */
	CHECK(ng_ibv_qp_complete_to(&q, 125, IBV_WC_REM_ACCESS_ERR), "first failure not reported");
	CHECK(!ng_ibv_qp_complete_to(&q, 130, IBV_WC_WR_FLUSH_ERR), "flushed request reported again");
	CHECK(q.err_from == 125 && ng_ibv_qp_failed(&q, 125) && ng_ibv_qp_failed(&q, 130) &&
	          !ng_ibv_qp_failed(&q, 124),
	      "err_from %llu", (unsigned long long)q.err_from);
	/* sig_every 0: every request signaled (the other modules' queues). */
	q = (struct ng_ibv_qp){.depth = DEPTH, .err_from = UINT64_MAX};
	for (int i = 0; i < 5; i++) {
		CHECK(ng_ibv_qp_signal_due(&q, false), "request %d not signaled with sig_every 0", i);
		q.posted++;
		ng_ibv_qp_signaled(&q);
	}
}

int main(void)
{
	test_stream();
	test_number();
	return check_exit();
}
