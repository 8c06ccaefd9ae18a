/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA layer's watchdog verdict on a silent peer (ng_rdma_idle, rdma.h
 * Errors), against a backend whose only operation is alive():
 *
 *   none      no alive(): the plain rule, lost once silent for the timeout
 *   gone      alive() never answers: asked at half the timeout, with the
 *             timeout's end as its deadline; lost by then
 *   alive     alive() answers: asked again at every half timeout, never
 *             lost (here: for 20 timeouts of silence)
 *   error     alive() says the transport lost the peer: that status
 *
 * Times are lower bounds where a busy host could only lengthen them; the
 * deadline handed to alive() is checked against the watchdog's own clock.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "modules/rdmalayer/rdma.h"

#include "../check.h"

#define TIMEOUT_S 0.1

struct fake {
	ng_status answer;
	unsigned asked;
	uint64_t silent_at_ask; /* silence when first asked */
	uint64_t deadline_left; /* deadline - start of the silence, first time */
};

/* A backend instance: the base first, then what the fake records. */
struct fake_rdma {
	struct ng_rdma r;
	struct fake f;
};

static ng_status fake_alive(struct ng_rdma *r, int peer, uint64_t deadline_ns)
{
	struct fake *f = &((struct fake_rdma *)(void *)r)->f;

	(void)peer;
	if (!f->asked++) {
		f->silent_at_ask = r->watch.last_ns - r->watch.since_ns;
		f->deadline_left = deadline_ns - r->watch.since_ns;
	}
	if (f->answer == NG_ERR_TIMEOUT) {
		while (ng_watch_now_ns() <= deadline_ns)
			;
		return NG_ERR_TIMEOUT;
	}
	if (f->answer == NG_ERR_PEER_LOST)
		fprintf(stderr, "fake: transport error (reported)\n");
	return f->answer;
}

static const struct ng_rdma_backend with_alive = {.name = "fake", .alive = fake_alive};
static const struct ng_rdma_backend without = {.name = "fake-plain"};

/* Calls the idle step until it says something else than NG_OK or @limit_s
 * pass; *@s_p: seconds until then. */
static ng_status idle_until(struct fake_rdma *fr, double limit_s, double *s_p)
{
	uint64_t t0 = ng_watch_now_ns(), limit = (uint64_t)(limit_s * 1e9);
	ng_status st = NG_OK;

	while (st == NG_OK && ng_watch_now_ns() - t0 < limit)
		st = ng_rdma_idle(&fr->r, 1);
	*s_p = (double)(ng_watch_now_ns() - t0) / 1e9;
	return st;
}

static void setup(struct fake_rdma *fr, const struct ng_rdma_backend *be, ng_status answer)
{
	memset(fr, 0, sizeof(*fr));
	fr->r.be = be;
	fr->r.who = "test";
	fr->r.rank = 0;
	fr->r.size = 2;
	fr->f.answer = answer;
	ng_watch_init(&fr->r.watch, NULL, TIMEOUT_S, false);
}

int main(void)
{
	const uint64_t to = (uint64_t)(TIMEOUT_S * 1e9);
	struct fake_rdma fr;
	ng_status st;
	double s;

	/* none: the plain rule */
	setup(&fr, &without, NG_OK);
	st = idle_until(&fr, 20 * TIMEOUT_S, &s);
	CHECK(st == NG_ERR_PEER_LOST, "none: %s", ng_status_name(st));
	CHECK(s >= TIMEOUT_S, "none: lost after %.3f s (timeout %.1f s)", s, TIMEOUT_S);

	/* gone: asked at half the timeout, deadline at its end, lost then */
	setup(&fr, &with_alive, NG_ERR_TIMEOUT);
	st = idle_until(&fr, 20 * TIMEOUT_S, &s);
	CHECK(st == NG_ERR_PEER_LOST, "gone: %s", ng_status_name(st));
	CHECK(fr.f.asked == 1, "gone: asked %u times", fr.f.asked);
	CHECK(fr.f.silent_at_ask >= to / 2, "gone: asked after %.3f s of silence",
	      (double)fr.f.silent_at_ask / 1e9);
	/* the deadline is the timeout's end, unless the question came late
	 * (a clock read past it): then a quarter of the timeout from then */
	CHECK(fr.f.deadline_left == to || fr.f.deadline_left == fr.f.silent_at_ask + to / 4,
	      "gone: deadline %.3f s into the silence (timeout %.1f s)", (double)fr.f.deadline_left / 1e9,
	      TIMEOUT_S);
	CHECK(s >= TIMEOUT_S / 2, "gone: lost after %.3f s", s);

	/* alive: asked again and again, never lost */
	setup(&fr, &with_alive, NG_OK);
	st = idle_until(&fr, 20 * TIMEOUT_S, &s);
	CHECK(st == NG_OK, "alive: %s after %.3f s", ng_status_name(st), s);
	CHECK(fr.f.asked >= 2, "alive: asked %u times in %.3f s", fr.f.asked, s);

	/* error: the transport's verdict as it is */
	setup(&fr, &with_alive, NG_ERR_PEER_LOST);
	st = idle_until(&fr, 20 * TIMEOUT_S, &s);
	CHECK(st == NG_ERR_PEER_LOST && fr.f.asked == 1, "error: %s, asked %u times", ng_status_name(st),
	      fr.f.asked);

	printf("none, gone, alive, error: %d check(s) failed\n", failures);
	return check_exit();
}
