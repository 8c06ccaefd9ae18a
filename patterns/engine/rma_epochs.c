/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The epoch machinery of the rma pattern: the tests' descriptors, windows,
 * the timed loops of each shape of test, and their --verify (the tests are
 * described in rma.c, the interface between the two halves in
 * rma_epochs.h).
 *
 * Memory.  Each test allocates one window (win_allocate, every rank the
 * same length) laid out as [puts, iterations of even number | puts, odd |
 * gets | origin data | origin destinations]: a put of iteration k lands in
 * the half of parity k, so a target can check iteration k while k + 1 is
 * already under way (fence epochs follow one another without a gap); gets
 * read the get area; slots are the test's largest size apart (64-byte
 * aligned).  Origin buffers lie in the origin's own window, in a part no
 * other rank touches: registered memory on every module, as applications
 * that work in window memory have, so no test measures a module's
 * registration cache.  All W puts of an epoch read one origin buffer.
 *
 * Timing.  The timed loops contain only ng_timer_now() and module calls;
 * every iteration runs back to back after a barrier per measurement.
 * Under fence, rank 0 times from one fence's return to the next.
 *
 * --verify: every epoch's content is checked, outside the timed region, by
 * the rank that holds it afterwards: a target checks the puts (and
 * accumulates) it received after the epoch closed at it (wait, fence), an
 * origin its gets after complete/fence/unlock; passive-target puts are read
 * back by the origin in an untimed lock/get/unlock epoch after each timed
 * one.  Puts carry the payload of (test, size, origin, iteration), get
 * areas that of (test, size, target, slot), and every destination holds the
 * complement of what is expected before its epoch (a target spoils a put
 * slot for the iteration after next once it has checked it; a passive
 * origin does so with one more untimed epoch), so stale or missing data
 * cannot pass; accumulate targets are reset to a known base after each
 * check and must hold base + contribution per int64 element.  The checks
 * are outside the timer of the rank doing them, but a peer may wait for
 * them (a module whose target serves requests only inside its calls waits
 * in any case): runs with --verify are for correctness, figures are taken
 * without.  The row's "verified" counts the epochs checked (all ranks).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rma_check.h"
#include "rma_epochs.h"

/* ---- the tests ------------------------------------------------------------ */

const char *const ng_rp_sync_names[RP_NSYNCS] = {"pscw", "fence", "lock-exclusive", "lock-shared",
                                                 "two-sided"};

#define PF  (RP_BIT(RP_PSCW) | RP_BIT(RP_FENCE))
#define PFL (PF | RP_BIT(RP_LOCK_EXCL))

/* clang-format off */
const struct rp_desc ng_rp_tests[RP_NTESTS] = {
    [RP_PUT_PP] = {"put-pingpong", RP_ALTERNATE, PF, RP_PSCW, false, true, false, false, 2},
    [RP_GET_PP] = {"get-pingpong", RP_ALTERNATE, PF, RP_PSCW, false, false, true, false, 2},
    [RP_ACC_PP] = {"acc-pingpong", RP_ALTERNATE, PF, RP_PSCW, false, true, false, true, 2},
    [RP_BIDIR] = {"bidir", RP_BOTH, PF, RP_FENCE, false, true, false, false, 2},
    [RP_PUT_BW] = {"put-bw", RP_FAN, PFL, RP_PSCW, true, true, false, false, 2},
    [RP_GET_BW] = {"get-bw", RP_FAN, PFL, RP_PSCW, true, false, true, false, 2},
    [RP_SYNC] = {"sync", RP_FAN, RP_BIT(RP_PSCW) | RP_BIT(RP_LOCK_EXCL), RP_PSCW, false, false, false, false, 2},
    [RP_MULTI] = {"multi-origin", RP_FAN, PF, RP_PSCW, true, true, false, false, 3},
    [RP_SCHED1] = {"sched-1", RP_FAN, PFL, RP_PSCW, true, true, true, false, 2},
    [RP_SCHED2] = {"sched-2", RP_ALTERNATE, PF, RP_PSCW, false, true, true, false, 2},
    [RP_LOCK] = {"lock", RP_FAN, RP_BIT(RP_LOCK_EXCL), RP_LOCK_EXCL, false, true, false, false, 2},
};
/* clang-format on */

/* ---- windows ------------------------------------------------------------ */

/* Allocates the window for the measurements plan[first..last) of one test. */
ng_status ng_rp_win_open(struct rp *rp, size_t first, size_t last)
{
	size_t smax = 0, nput = 0, nget = 0, ndst = 0, len;
	bool twoside = false;
	void *meet;
	ng_status st;

	for (size_t i = first; i < last; i++) {
		const struct rp_meas *m = &rp->plan[i];
		size_t puts = m->nput * (size_t)(m->fan_in ? m->n : 1);

		smax = m->size > smax ? m->size : smax;
		nput = puts > nput ? puts : nput;
		nget = m->nget > nget ? m->nget : nget;
		ndst = m->nget > ndst ? m->nget : ndst;
		ndst = m->nput > ndst ? m->nput : ndst; /* passive puts are read back */
		twoside = twoside || m->sync == RP_TWOSIDED;
	}
	rp->stride = ng_slot_stride(smax);
	rp->half = nput * rp->stride;
	rp->get_off = 2 * rp->half;
	rp->src_off = rp->get_off + nget * rp->stride;
	rp->dst_off = rp->src_off + rp->stride;
	len = rp->dst_off + ndst * rp->stride;
	st = rp->o->win_allocate(rp->c, len, (void **)&rp->base, &rp->w);
	if (st == NG_OK)
		st = rp->o->win_allocate(rp->c, 64, &meet, &rp->meet);
	if (st != NG_OK)
		return st;
	if (twoside)
		st = ng_bufs_alloc(rp->c, smax, smax, &rp->bufs);
	return st;
}

void ng_rp_win_close(struct rp *rp)
{
	ng_bufs_free(rp->c, &rp->bufs);
	if (rp->meet)
		rp->o->win_free(rp->c, rp->meet);
	if (rp->w)
		rp->o->win_free(rp->c, rp->w);
	rp->w = rp->meet = NULL;
	rp->base = NULL;
}

/* Offset of origin @k's first put slot in the put area of parity @par. */
static size_t rp_put_off(const struct rp *rp, const struct rp_meas *m, size_t par, int k)
{
	return par * rp->half + (size_t)k * m->nput * rp->stride;
}

/* ---- --verify ----------------------------------------------------------- */

/* Reports the first wrong byte of this rank (once per run) and marks the
 * measurement failed; the ranks agree on it afterwards. */
static void rp_fail(struct rp *rp, const struct rp_meas *m, const char *what, int from, uint64_t it,
                    const unsigned char *got, size_t off, unsigned char want)
{
	if (!rp->told)
		ng_error("verify: rma %s (%s) size %zu, %s from rank %d, iteration %" PRIu64
		         ": byte at offset %zu is 0x%02x, expected 0x%02x",
		         ng_rp_tests[m->test].name, ng_rp_sync_names[m->sync], m->size, what, from, it, off,
		         got[off], want);
	rp->told = true;
	rp->bad = true;
}

/* Checks @len bytes at @buf against @tag; counts the check. */
static void rp_check(struct rp *rp, const struct rp_meas *m, const char *what, int from, uint64_t it,
                     const unsigned char *buf, uint64_t tag, bool acc)
{
	size_t off;
	unsigned char want;

	if (!rp->bad && !ng_rma_check(buf, m->size, tag, acc, &off, &want))
		rp_fail(rp, m, what, from, it, buf, off, want);
}

static uint64_t rp_put_tag(const struct rp_meas *m, int origin, uint64_t it)
{
	return ng_rma_tag(m->test, m->size, origin, 0, it);
}

static uint64_t rp_get_tag(const struct rp_meas *m, int target, size_t slot)
{
	return ng_rma_tag(m->test, m->size, target, RP_GET_SLOT + slot, RP_FIXED);
}

/* The base an accumulate target is reset to. */
static uint64_t rp_acc_base(const struct rp_meas *m, int target)
{
	return ng_rma_tag(m->test, m->size, target, RP_GET_SLOT - 1, RP_FIXED);
}

/* Before a measurement, outside every epoch: the get area's content and
 * the accumulate base of this rank as a target. */
/* The put slots of origin @from (its @k-th) for iteration @it, at this
 * rank: the complement of what that iteration will bring. */
static void rp_spoil_puts(struct rp *rp, const struct rp_meas *m, uint64_t it, int from, int k)
{
	size_t at = rp_put_off(rp, m, it & 1, k);

	for (size_t j = 0; j < m->nput; j++)
		ng_rma_spoil(rp->base + at + j * rp->stride, m->size, rp_put_tag(m, from, it), false);
}

/* Before a measurement, outside every epoch, on this rank as a target: the
 * get area's content, the accumulate base, the put slots spoiled for the
 * first two iterations (each check spoils them for the iteration after
 * next). */
void ng_rp_verify_setup(struct rp *rp, const struct rp_meas *m)
{
	int me = rp->me;

	if (!rp->run->verify)
		return;
	for (size_t j = 0; j < m->nget; j++)
		ng_rma_fill(rp->base + rp->get_off + j * rp->stride, m->size, rp_get_tag(m, me, j), false);
	if (ng_rp_tests[m->test].acc)
		for (size_t par = 0; par < 2; par++)
			ng_rma_fill(rp->base + rp_put_off(rp, m, par, 0), m->size, rp_acc_base(m, me), true);
	if (ng_rp_tests[m->test].acc || !m->nput)
		return;
	for (uint64_t it = 0; it < 2; it++) {
		if (ng_rp_tests[m->test].shape != RP_FAN && me < 2)
			rp_spoil_puts(rp, m, it, me == 0 ? 1 : 0, 0);
		else if (ng_rp_tests[m->test].shape == RP_FAN && m->fan_in && me == 0)
			for (int o = 1; o <= m->n; o++)
				rp_spoil_puts(rp, m, it, o, o - 1);
		else if (ng_rp_tests[m->test].shape == RP_FAN && !m->fan_in && me >= 1 && me <= m->n)
			rp_spoil_puts(rp, m, it, 0, 0);
	}
}

/* Origin side before iteration @it: the data its puts carry, and its get
 * destinations spoiled for the targets' content. */
static void rp_verify_prep(struct rp *rp, const struct rp_meas *m, uint64_t it, int target)
{
	if (!rp->run->verify)
		return;
	if (m->nput)
		ng_rma_fill(rp->base + rp->src_off, m->size, rp_put_tag(m, rp->me, it),
		            ng_rp_tests[m->test].acc);
	for (size_t j = 0; j < m->nget; j++)
		ng_rma_spoil(rp->base + rp->dst_off + j * rp->stride, m->size, rp_get_tag(m, target, j),
		             false);
}

/* Target side after iteration @it closed here: the puts (accumulates) of
 * origin @from, its @k-th, in the half of parity @it. */
static void rp_verify_puts(struct rp *rp, const struct rp_meas *m, uint64_t it, int from, int k)
{
	size_t at = rp_put_off(rp, m, it & 1, k);
	uint64_t tag = rp_put_tag(m, from, it);

	if (!rp->run->verify || !m->nput)
		return;
	if (ng_rp_tests[m->test].acc) {
		size_t off;
		unsigned char want;

		/* one accumulate per epoch onto the base */
		if (!rp->bad &&
		    !ng_rma_check_sum(rp->base + at, m->size, rp_acc_base(m, rp->me), tag, &off, &want))
			rp_fail(rp, m, "accumulate", from, it, rp->base + at, off, want);
		ng_rma_fill(rp->base + at, m->size, rp_acc_base(m, rp->me), true);
	} else {
		for (size_t j = 0; j < m->nput; j++)
			rp_check(rp, m, "put", from, it, rp->base + at + j * rp->stride, tag, false);
		rp_spoil_puts(rp, m, it + 2, from, k);
	}
	rp->checked++;
}

/* Origin side after its epoch to @target closed: the gets. */
static void rp_verify_gets(struct rp *rp, const struct rp_meas *m, uint64_t it, int target)
{
	if (!rp->run->verify || !m->nget)
		return;
	for (size_t j = 0; j < m->nget; j++)
		rp_check(rp, m, "get", target, it, rp->base + rp->dst_off + j * rp->stride,
		         rp_get_tag(m, target, j), false);
	if (!m->nput)
		rp->checked++; /* an epoch with puts is counted by their check */
}

/* Passive target: the origin reads its puts of iteration @it back in an
 * untimed epoch of the same lock type. */
static ng_status rp_verify_readback(struct rp *rp, const struct rp_meas *m, uint64_t it, int target, int k)
{
	size_t at = rp_put_off(rp, m, it & 1, k);
	unsigned char *dst = rp->base + rp->dst_off;
	uint64_t tag = rp_put_tag(m, rp->me, it);
	ng_status st;

	if (!rp->run->verify || !m->nput)
		return NG_OK;
	for (size_t j = 0; j < m->nput; j++)
		ng_rma_spoil(dst + j * rp->stride, m->size, tag, false);
	st = rp->o->lock(rp->c, rp->w, target, m->sync == RP_LOCK_EXCL);
	for (size_t j = 0; j < m->nput && st == NG_OK; j++)
		st = rp->o->get(rp->c, rp->w, target, at + j * rp->stride, dst + j * rp->stride, m->size);
	if (st == NG_OK)
		st = rp->o->unlock(rp->c, rp->w, target);
	for (size_t j = 0; j < m->nput && st == NG_OK; j++)
		rp_check(rp, m, "put (read back)", rp->me, it, dst + j * rp->stride, tag, false);
	/* the slots spoiled for the iteration after next, in one more epoch */
	for (size_t j = 0; j < m->nput; j++)
		ng_rma_spoil(dst + j * rp->stride, m->size, rp_put_tag(m, rp->me, it + 2), false);
	if (st == NG_OK)
		st = rp->o->lock(rp->c, rp->w, target, m->sync == RP_LOCK_EXCL);
	for (size_t j = 0; j < m->nput && st == NG_OK; j++)
		st = rp->o->put(rp->c, rp->w, target, at + j * rp->stride, dst + j * rp->stride, m->size);
	if (st == NG_OK)
		st = rp->o->unlock(rp->c, rp->w, target);
	rp->checked++;
	return st;
}

/* ---- the timed loops ---------------------------------------------------- */

/* The operations of one access epoch to @t: puts (accumulates) at @put_off,
 * gets of the get area.  Module calls only. */
static ng_status rp_ops(struct rp *rp, const struct rp_meas *m, int t, size_t put_off)
{
	const struct ng_rma_ops *o = rp->o;
	const unsigned char *src = rp->base + rp->src_off;
	unsigned char *dst = rp->base + rp->dst_off;
	size_t S = rp->stride;
	ng_status st = NG_OK;

	for (size_t j = 0; j < m->nput && st == NG_OK; j++) {
		if (ng_rp_tests[m->test].acc)
			st = o->accumulate(rp->c, rp->w, t, put_off + j * S, src, m->size / 8, NG_RMA_INT64,
			                   NG_RMA_SUM);
		else
			st = o->put(rp->c, rp->w, t, put_off + j * S, src, m->size);
	}
	for (size_t j = 0; j < m->nget && st == NG_OK; j++)
		st = o->get(rp->c, rp->w, t, rp->get_off + j * S, dst + j * S, m->size);
	return st;
}

/* One PSCW access epoch: start(@tg), the operations to each target,
 * complete.  Module calls only. */
static ng_status rp_access(struct rp *rp, const struct rp_meas *m, const int *tg, int ntg, size_t put_off)
{
	ng_status st = rp->o->start(rp->c, rp->w, tg, ntg);

	for (int i = 0; i < ntg && st == NG_OK; i++)
		st = rp_ops(rp, m, tg[i], put_off);
	return st == NG_OK ? rp->o->complete(rp->c, rp->w) : st;
}

static void rp_sample(struct rp *rp, const struct rp_meas *m, uint64_t it, uint64_t t0, uint64_t t1)
{
	double us = ng_timer_us(rp->tm, t1 - t0);

	if (!ng_sampler_timed(&rp->smp, it))
		return;
	if (it == rp->run->warmup)
		rp->first = t0;
	rp->last = t1;
	ng_sampler_add(&rp->smp, RP_S_TIME, it, m->half ? us / 2.0 : us);
	ng_sampler_add(&rp->smp, RP_S_START, it, rp_time_us(rp, t0));
}

/*
 * put/get/acc-pingpong, sched-2: rank 0 accesses 1, then 1 accesses 0.
 *   pscw   0: start, ops, complete, post, wait    1: post, wait, start, ops, complete
 *   fence  0's ops, fence, 1's ops, fence (after one fence that opens the first epoch)
 */
ng_status ng_rp_alternate(struct rp *rp, const struct rp_meas *m)
{
	const struct ng_rma_ops *o = rp->o;
	const struct ng_timer *tm = rp->tm;
	struct ng_comm *c = rp->c;
	struct ng_win *w = rp->w;
	bool a = rp->me == 0, b = rp->me == 1, fence = m->sync == RP_FENCE;
	int peer = a ? 1 : 0;
	uint64_t t0 = 0, t1 = 0;
	ng_status st = NG_OK;

	if (!a && !b && !fence)
		return NG_OK;
	if (fence)
		st = o->fence(c, w);
	if (b && !fence)
		rp_verify_prep(rp, m, 0, peer);
	for (uint64_t it = 0; ng_sampler_more(&rp->smp, it) && st == NG_OK; it++) {
		size_t off = rp_put_off(rp, m, it & 1, 0);

		if (fence) {
			if (a || b)
				rp_verify_prep(rp, m, it, peer);
			t0 = ng_timer_now(tm);
			if (a)
				st = rp_ops(rp, m, peer, off);
			if (st == NG_OK)
				st = o->fence(c, w);
			if (st == NG_OK && b)
				st = rp_ops(rp, m, peer, off);
			if (st == NG_OK)
				st = o->fence(c, w);
			t1 = ng_timer_now(tm);
		} else if (a) {
			rp_verify_prep(rp, m, it, peer);
			t0 = ng_timer_now(tm);
			st = rp_access(rp, m, &peer, 1, off);
			if (st == NG_OK)
				st = o->post(c, w, &peer, 1);
			if (st == NG_OK)
				st = o->wait(c, w);
			t1 = ng_timer_now(tm);
		} else {
			st = o->post(c, w, &peer, 1);
			if (st == NG_OK)
				st = o->wait(c, w);
			if (st == NG_OK)
				st = rp_access(rp, m, &peer, 1, off);
		}
		if (st != NG_OK)
			break;
		if (a)
			rp_sample(rp, m, it, t0, t1);
		if (a || b) {
			rp_verify_puts(rp, m, it, peer, 0);
			rp_verify_gets(rp, m, it, peer);
		}
		if (b && !fence)
			rp_verify_prep(rp, m, it + 1, peer);
	}
	return st;
}

/* bidir: ranks 0 and 1 put into each other in one epoch (fence, pscw), or
 * exchange messages (isend/irecv/waitall). */
ng_status ng_rp_both(struct rp *rp, const struct rp_meas *m)
{
	const struct ng_rma_ops *o = rp->o;
	const struct ng_timer *tm = rp->tm;
	struct ng_comm *c = rp->c;
	struct ng_win *w = rp->w;
	bool active = rp->me < 2, verify = rp->run->verify;
	int peer = rp->me == 0 ? 1 : 0;
	unsigned char *sbuf = rp->bufs.send, *rbuf = rp->bufs.recv;
	uint64_t t0 = 0, t1 = 0;
	ng_status st = NG_OK;

	if (!active && m->sync != RP_FENCE)
		return NG_OK;
	if (m->sync == RP_FENCE)
		st = o->fence(c, w);
	for (uint64_t it = 0; ng_sampler_more(&rp->smp, it) && st == NG_OK; it++) {
		size_t off = rp_put_off(rp, m, it & 1, 0);

		if (active)
			rp_verify_prep(rp, m, it, peer);
		if (verify && active && m->sync == RP_TWOSIDED) {
			ng_rma_fill(sbuf, m->size, rp_put_tag(m, rp->me, it), false);
			ng_rma_spoil(rbuf, m->size, rp_put_tag(m, peer, it), false);
		}
		t0 = ng_timer_now(tm);
		switch (m->sync) {
		case RP_FENCE:
			if (active)
				st = rp_ops(rp, m, peer, off);
			if (st == NG_OK)
				st = o->fence(c, w);
			break;
		case RP_PSCW:
			st = o->post(c, w, &peer, 1);
			if (st == NG_OK)
				st = rp_access(rp, m, &peer, 1, off);
			if (st == NG_OK)
				st = o->wait(c, w);
			break;
		default:
			st = ng_irecv(c, peer, rbuf, m->size, &rp->reqs[0]);
			if (st == NG_OK)
				st = ng_isend(c, peer, sbuf, m->size, &rp->reqs[1]);
			if (st == NG_OK)
				st = ng_waitall(c, rp->reqs, 2);
			break;
		}
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			break;
		if (rp->me == 0)
			rp_sample(rp, m, it, t0, t1);
		if (active && m->sync != RP_TWOSIDED)
			rp_verify_puts(rp, m, it, peer, 0);
		if (verify && active && m->sync == RP_TWOSIDED) {
			rp_check(rp, m, "message", peer, it, rbuf, rp_put_tag(m, peer, it), false);
			rp->checked++;
		}
	}
	return st;
}

/*
 * The fan tests: origins 1..n into target 0 (fan_in), or origin 0 into
 * targets 1..n (one to one: n = 1).  Per iteration:
 *   pscw   targets: post(origins), wait; origins: start(targets), ops to
 *          each, complete.  Timed at rank 0 (the target of a fan-in, else
 *          the origin).
 *   fence  origins' ops, fence; rank 0 times fence to fence.
 *   lock   origins: lock every target, ops to each, unlock each; every
 *          origin times its own epochs.  Then every rank meets in a fence of
 *          the second window, in which the others wait meanwhile (and serve,
 *          where the module needs them to): one iteration at a time, so no
 *          rank waits there longer than an iteration takes (a module may
 *          end a call that waits beyond --timeout).
 */
ng_status ng_rp_fan(struct rp *rp, const struct rp_meas *m)
{
	const struct ng_rma_ops *o = rp->o;
	const struct ng_timer *tm = rp->tm;
	struct ng_comm *c = rp->c;
	struct ng_win *w = rp->w;
	int me = rp->me, n = m->n, *og = rp->ogrp, *tg = rp->tgrp, nog, ntg;
	bool origin, target, lock = m->sync == RP_LOCK_EXCL || m->sync == RP_LOCK_SHARED;
	bool excl = m->sync == RP_LOCK_EXCL, timer;
	int k = m->fan_in ? me - 1 : 0; /* this origin's index among the origins */
	uint64_t t0 = 0, t1 = 0;
	ng_status st = NG_OK;

	nog = m->fan_in ? n : 1;
	ntg = m->fan_in ? 1 : n;
	for (int i = 0; i < nog; i++)
		og[i] = m->fan_in ? i + 1 : 0;
	for (int i = 0; i < ntg; i++)
		tg[i] = m->fan_in ? 0 : i + 1;
	origin = m->fan_in ? me >= 1 && me <= n : me == 0;
	target = m->fan_in ? me == 0 : me >= 1 && me <= n;
	timer = lock ? origin : me == 0;

	/* fence: opens the first epoch; lock: the origins start together, in a
	 * fence of the other window (no active-target epoch on the locked one) */
	if (m->sync == RP_FENCE || lock)
		st = o->fence(c, lock ? rp->meet : w);
	for (uint64_t it = 0; ng_sampler_more(&rp->smp, it) && st == NG_OK &&
	                      (origin || target || m->sync == RP_FENCE || lock);
	     it++) {
		size_t off = rp_put_off(rp, m, it & 1, k);

		if (origin)
			rp_verify_prep(rp, m, it, tg[0]);
		switch (m->sync) {
		case RP_PSCW:
			t0 = ng_timer_now(tm);
			if (target)
				st = o->post(c, w, og, nog);
			if (origin && st == NG_OK)
				st = rp_access(rp, m, tg, ntg, off);
			if (target && st == NG_OK)
				st = o->wait(c, w);
			t1 = ng_timer_now(tm);
			break;
		case RP_FENCE:
			t0 = ng_timer_now(tm);
			for (int i = 0; origin && i < ntg && st == NG_OK; i++)
				st = rp_ops(rp, m, tg[i], off);
			if (st == NG_OK)
				st = o->fence(c, w);
			t1 = ng_timer_now(tm);
			break;
		default:
			if (!origin)
				break; /* to the meeting (a target serves there) */
			t0 = ng_timer_now(tm);
			for (int i = 0; i < ntg && st == NG_OK; i++)
				st = o->lock(c, w, tg[i], excl);
			for (int i = 0; i < ntg && st == NG_OK; i++)
				st = rp_ops(rp, m, tg[i], off);
			for (int i = 0; i < ntg && st == NG_OK; i++)
				st = o->unlock(c, w, tg[i]);
			t1 = ng_timer_now(tm);
			break;
		}
		if (st != NG_OK)
			break;
		if (timer)
			rp_sample(rp, m, it, t0, t1);
		if (target && !lock)
			for (int i = 0; i < nog; i++)
				rp_verify_puts(rp, m, it, og[i], m->fan_in ? i : 0);
		if (origin) {
			rp_verify_gets(rp, m, it, tg[0]);
			for (int i = 0; lock && i < ntg && st == NG_OK; i++)
				st = rp_verify_readback(rp, m, it, tg[i], k);
		}
		/* every rank meets the others after each lock iteration (the
		 * read-back included), never waiting longer than one of them */
		if (lock && st == NG_OK)
			st = o->fence(c, rp->meet);
	}
	return st;
}
