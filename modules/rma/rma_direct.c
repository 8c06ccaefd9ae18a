/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rma module's direct design (rma.h): put = RDMA write, get = RDMA
 * read, accumulate under the target's accumulate lock, every
 * synchronisation by notified writes and remote atomics; no target
 * involvement.  --rma-sched reorder and aggregate schedule an epoch's
 * operations: aggregation sends a PSCW epoch's small puts and the requests
 * of its small gets with the completion (rma.h), which the target serves in
 * its wait.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "modules/rdmalayer/rdma.h"
#include "modules/rma/rma.h"

/* The step between two attempts to take a lock at @peer (an atomic that
 * found it taken).  Every attempt completes, which the watchdog counts as
 * progress, so the lock's holder is timed here instead: NG_ERR_TIMEOUT once
 * the attempts have failed for the timeout since *@since_ns (0 before the
 * first failure). */
static ng_status rma_retry(struct rma *m, int peer, const char *what, uint64_t *since_ns)
{
	struct ng_watch *wd = &m->cm.r->watch;
	uint64_t now = ng_watch_now_ns();

	if (ng_watch_cancelled(wd))
		return NG_ERR_CANCELLED;
	if (wd->yield)
		sched_yield();
	if (!*since_ns) {
		*since_ns = now;
	} else if (wd->timeout_ns && now - *since_ns > wd->timeout_ns) {
		ng_error("%s: rank %d %s for %.0f s", rma_who(m), peer, what, (double)wd->timeout_ns / 1e9);
		return NG_ERR_TIMEOUT;
	}
	return NG_OK;
}

/* ---- issuing an epoch's operations ------------------------------------- */

static ng_status rma_issue(struct rma *m, struct ng_win *w, const struct rma_op *o)
{
	struct ng_rdma *r = m->cm.r;
	size_t max = r->max_write ? r->max_write : o->len;
	ng_status st = NG_OK;

	for (size_t at = 0; at < o->len && st == NG_OK; at += max) {
		size_t n = o->len - at < max ? o->len - at : max;
		uint64_t t;

		if (o->kind == RMA_PUT)
			st = ng_rdma_write(r, o->target, o->src + at, o->mr, n, &w->rmem[o->target],
			                   o->off + at, 0, &t);
		else
			st = ng_rdma_read(r, o->target, o->dst + at, o->mr, n, &w->rmem[o->target],
			                  o->off + at, &t);
	}
	w->touched[o->target] = true;
	return st;
}

static ng_status rma_issue_queue(struct rma *m, struct ng_win *w)
{
	size_t n = w->nops, gi = 0, pi = 0;
	ng_status st;

	/* In posting order, or (reorder) gets first, interleaved with puts. */
	for (size_t k = 0; k < n; k++) {
		const struct rma_op *o;

		if (!m->reorder) {
			o = &w->ops[k];
		} else {
			bool want_get = k % 2 == 0;

			while (gi < n && w->ops[gi].kind != RMA_GET)
				gi++;
			while (pi < n && w->ops[pi].kind != RMA_PUT)
				pi++;
			if ((want_get && gi < n) || pi >= n)
				o = &w->ops[gi++];
			else
				o = &w->ops[pi++];
		}
		st = ng_rma_mod_wait_ready(m, w, o->target);
		if (st == NG_OK)
			st = rma_issue(m, w, o);
		if (st != NG_OK)
			return st;
	}
	w->nops = 0;
	return NG_OK;
}

/* Issues the queue, waits until every operation of the epoch has completed
 * here, copies staged gets out and empties the staging area. */
static ng_status rma_drain(struct rma *m, struct ng_win *w)
{
	ng_status st = rma_issue_queue(m, w);

	for (int p = 0; p < m->cm.base.size && st == NG_OK; p++)
		if (w->touched[p])
			st = ng_rdma_wait_all(m->cm.r, p);
	if (st != NG_OK)
		return st;
	for (size_t i = 0; i < w->ncopies; i++)
		memcpy(w->copies[i].to, w->copies[i].from, w->copies[i].len);
	w->ncopies = 0;
	m->stage_used = 0;
	return NG_OK;
}

/* Makes the epoch's writes visible at every target touched. */
static ng_status rma_flush_touched(struct rma *m, struct ng_win *w)
{
	ng_status st = NG_OK;

	for (int p = 0; p < m->cm.base.size && st == NG_OK; p++)
		if (w->touched[p]) {
			st = ng_rdma_flush(m->cm.r, p);
			w->touched[p] = false;
		}
	return st;
}

static ng_status rma_enqueue(struct rma *m, struct ng_win *w, const struct rma_op *o)
{
	ng_status st;

	if (!m->reorder && rma_ready(w, o->target))
		return rma_issue(m, w, o);
	if (w->nops == RMA_NOPS) {
		st = rma_issue_queue(m, w);
		if (st != NG_OK)
			return st;
	}
	w->ops[w->nops++] = *o;
	return NG_OK;
}

static ng_status rma_stage(struct rma *m, struct ng_win *w, size_t len, unsigned char **p_p)
{
	size_t need = (len + 63) & ~(size_t)63;
	ng_status st;

	if (m->stage_used + need > RMA_STAGE) {
		st = rma_drain(m, w);
		if (st != NG_OK)
			return st;
	}
	*p_p = (unsigned char *)m->stage_mr->base + m->stage_used;
	m->stage_used += need;
	return NG_OK;
}

/* The registration holding [p, p + len): the window, or the cache. */
static ng_status rma_lookup(struct rma *m, struct ng_win *w, const void *p, size_t len,
                            const struct ng_rdma_mr **mr_p)
{
	const unsigned char *b = p, *wb = w->mem->base;
	struct rma_reg *victim = &m->cache[0];
	ng_status st;

	if (b >= wb && len <= w->mem->len && (size_t)(b - wb) <= w->mem->len - len) {
		*mr_p = w->mem;
		return NG_OK;
	}
	for (int i = 0; i < RMA_NCACHE; i++) {
		struct rma_reg *e = &m->cache[i];

		if (e->mr && b >= e->base && len <= e->len && (size_t)(b - e->base) <= e->len - len) {
			e->used = ++m->cache_clock;
			*mr_p = e->mr;
			return NG_OK;
		}
		if (!e->mr || (victim->mr && e->used < victim->used))
			victim = e;
	}
	if (victim->mr) {
		st = rma_drain(m, w); /* nothing in flight may still use it */
		if (st != NG_OK)
			return st;
		ng_rdma_dereg(m->cm.r, victim->mr);
		victim->mr = NULL;
	}
	st = ng_rdma_reg(m->cm.r, (void *)(uintptr_t)p, len, &victim->mr);
	if (st != NG_OK)
		return st;
	victim->base = (unsigned char *)(uintptr_t)p;
	victim->len = len;
	victim->used = ++m->cache_clock;
	*mr_p = victim->mr;
	return NG_OK;
}

/* Whether an operation of @len bytes to @t travels in the epoch's
 * completion message: --rma-sched aggregate|all, at most --rma-aggregate
 * bytes, inside a PSCW access epoch to @t (whose complete sends the message
 * and whose target serves it in its wait).  Fence and lock epochs have no
 * such message (the fence is a barrier of notified writes; a passive target
 * is in no call), so their operations stay RDMA writes and reads. */
static bool rma_agg_wanted(const struct rma *m, const struct ng_win *w, int t, size_t len)
{
	return m->aggregate && len <= m->agg_max && w->in_access && w->ingrp[t] && !w->locked[t];
}

/* Whether @h (and its @h->len bytes of data) still fits into @t's
 * aggregation buffer, with room for the DONE that ends the message. */
static bool rma_agg_room(const struct rma *m, const struct ng_win *w, int t, const struct rma_msg *h)
{
	size_t need = sizeof(*h) + ((h->len + 7) & ~(size_t)7);

	return w->agg_used[t] + need + sizeof(*h) <= m->S;
}

/* Appends a message that fits (rma_agg_room) to @t's aggregation buffer. */
static void rma_agg_add(struct rma *m, struct ng_win *w, int t, const struct rma_msg *h, const void *data)
{
	unsigned char *b = w->agg + (size_t)t * m->S;

	memcpy(b + w->agg_used[t], h, sizeof(*h));
	if (data)
		memcpy(b + w->agg_used[t] + sizeof(*h), data, h->len);
	w->agg_used[t] += sizeof(*h) + ((h->len + 7) & ~(size_t)7);
}

/* ---- operations ------------------------------------------------------- */

static ng_status rma_direct_put(struct ng_comm *c, struct ng_win *w, int target, size_t off,
                                const void *origin, size_t len)
{
	struct rma *m = rma_of(c);
	struct rma_op o = {.kind = RMA_PUT, .target = target, .off = off, .len = len, .src = origin};
	ng_status st = ng_rma_mod_check(m, w, target, off, len);

	if (st != NG_OK || !len)
		return st;
	if (rma_agg_wanted(m, w, target, len)) {
		struct rma_msg h = {.type = M_PUT, .len = (uint32_t)len, .off = off, .win = w->id};

		if (rma_agg_room(m, w, target, &h)) {
			rma_agg_add(m, w, target, &h, origin);
			return NG_OK;
		}
	}
	if (len <= RMA_STAGE_MAX) {
		unsigned char *s;

		st = rma_stage(m, w, len, &s);
		if (st != NG_OK)
			return st;
		memcpy(s, origin, len);
		o.src = s;
		o.mr = m->stage_mr;
	} else {
		st = rma_lookup(m, w, origin, len, &o.mr);
		if (st != NG_OK)
			return st;
	}
	return rma_enqueue(m, w, &o);
}

static ng_status rma_direct_get(struct ng_comm *c, struct ng_win *w, int target, size_t off, void *origin,
                                size_t len)
{
	struct rma *m = rma_of(c);
	struct rma_op o = {.kind = RMA_GET, .target = target, .off = off, .len = len, .dst = origin};
	ng_status st = ng_rma_mod_check(m, w, target, off, len);

	if (st != NG_OK || !len)
		return st;
	/* Aggregated: a request in the completion message, answered by the
	 * target in its wait straight into @origin (M_GETREP, the sendrecv
	 * design's answer); complete returns once every answer is here. */
	if (rma_agg_wanted(m, w, target, len)) {
		struct rma_msg h = {.type = M_GETREQ, .off = off, .arg = len, .win = w->id};

		if (rma_agg_room(m, w, target, &h) && ng_rma_mod_get_expect(m, origin, len, &h.id)) {
			rma_agg_add(m, w, target, &h, NULL);
			return NG_OK;
		}
	}
	if (len <= RMA_STAGE_MAX) {
		st = rma_stage(m, w, len, &o.dst);
		if (st != NG_OK)
			return st;
		o.mr = m->stage_mr;
		w->copies[w->ncopies++] = (struct rma_copy){.to = origin, .from = o.dst, .len = len};
	} else {
		st = rma_lookup(m, w, origin, len, &o.mr);
		if (st != NG_OK)
			return st;
	}
	if (w->ncopies == RMA_NOPS) {
		st = rma_enqueue(m, w, &o);
		return st == NG_OK ? rma_drain(m, w) : st;
	}
	return rma_enqueue(m, w, &o);
}

/* Direct accumulate of one piece: the target's accumulate lock, read,
 * combine, write, release. */
static ng_status rma_acc_direct(struct rma *m, struct ng_win *w, int t, size_t off, const unsigned char *src,
                                size_t len, enum ng_rma_type type, enum ng_rma_op op)
{
	struct ng_rdma *r = m->cm.r;
	const struct ng_rdma_rmr *ctl = &w->rctl[t];
	uint64_t accoff = (uint64_t)((const volatile unsigned char *)w->accw - (unsigned char *)w->ctl->base);
	uint64_t old = 0, tk, since = 0, mine = (uint64_t)m->cm.base.rank + 1;
	unsigned char *buf;
	ng_status st;

	st = rma_stage(m, w, len, &buf);
	while (st == NG_OK) {
		st = ng_rdma_cas(r, t, ctl, accoff, 0, mine, &old, &tk);
		if (st == NG_OK)
			st = ng_rdma_wait(r, t, tk);
		if (st != NG_OK || old == 0)
			break;
		st = rma_retry(m, t, "held its accumulate lock", &since);
	}
	r->watch.events++;
	if (st == NG_OK)
		st = ng_rdma_read(r, t, buf, m->stage_mr, len, &w->rmem[t], off, &tk);
	if (st == NG_OK)
		st = ng_rdma_wait(r, t, tk);
	if (st != NG_OK)
		return st;
	ng_rma_mod_combine(buf, src, len / rma_type_size(type), type, op);
	st = ng_rdma_write(r, t, buf, m->stage_mr, len, &w->rmem[t], off, 0, &tk);
	/* The release: after the data is in place (flush: atomics may pass
	 * writes), and by an atomic, never a write: the lock word is the target
	 * of other ranks' compare-and-swaps, and a plain write to such a word may
	 * be lost (see rdma.h, Ordering). */
	if (st == NG_OK)
		st = ng_rdma_flush(r, t);
	if (st == NG_OK)
		st = ng_rdma_fadd(r, t, ctl, accoff, (uint64_t)0 - mine, &old, &tk);
	if (st == NG_OK)
		st = ng_rdma_wait(r, t, tk);
	return st;
}

static ng_status rma_direct_accumulate(struct ng_comm *c, struct ng_win *w, int target, size_t off,
                                       const void *origin, size_t count, enum ng_rma_type type,
                                       enum ng_rma_op op)
{
	struct rma *m = rma_of(c);
	size_t es = rma_type_size(type), len = count * es;
	size_t max = RMA_STAGE / 4 / es * es;
	ng_status st = ng_rma_mod_check(m, w, target, off, len);

	if (st == NG_OK)
		st = ng_rma_mod_wait_ready(m, w, target);
	for (size_t at = 0; at < len && st == NG_OK; at += max) {
		size_t n = len - at < max ? len - at : max;

		st = rma_acc_direct(m, w, target, off + at, (const unsigned char *)origin + at, n, type, op);
	}
	return st;
}

/* ---- synchronisation -------------------------------------------------- */

static ng_status rma_direct_fence(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	int me = c->rank, n = c->size;
	uint64_t ep = ++w->fence_epoch;
	ng_status st = NG_OK;

	if (w->in_access || w->in_expose) {
		ng_error("%s: fence inside a post/start epoch", rma_who(m));
		return NG_ERR_USAGE;
	}
	st = rma_drain(m, w);
	if (st == NG_OK)
		st = rma_flush_touched(m, w);
	/* Dissemination barrier: in round k, tell me + 2^k, hear from me - 2^k. */
	for (int k = 0; k < w->nrounds && st == NG_OK; k++) {
		int to = (me + (1 << k)) % n, from = (me - (1 << k) % n + n) % n;
		uint64_t tk;

		st = ng_rdma_write(m->cm.r, to, &ep, NULL, 8, &w->rctl[to],
		                   (uint64_t)((const volatile unsigned char *)&w->fbar[RMA_LINE * k] -
		                              (unsigned char *)w->ctl->base),
		                   NG_RDMA_NOTIFY, &tk);
		if (st == NG_OK)
			st = ng_rma_mod_until(m, &w->fbar[RMA_LINE * k], ep, from, "did not reach the fence");
	}
	w->in_fence = st == NG_OK;
	return st;
}

static ng_status rma_direct_post(struct ng_comm *c, struct ng_win *w, const int *group, int n)
{
	struct rma *m = rma_of(c);
	uint64_t at = (uint64_t)((const volatile unsigned char *)&w->post[RMA_LINE * c->rank] -
	                         (unsigned char *)w->ctl->base);
	ng_status st = ng_rma_mod_post_begin(m, w, group, n);

	/* A notified write of post[me] at each origin. */
	for (int i = 0; i < n && st == NG_OK; i++) {
		int o = group[i];
		uint64_t v = ++w->posts_sent[o], tk;

		w->done_want[o]++;
		st = ng_rdma_write(m->cm.r, o, &v, NULL, 8, &w->rctl[o], at, NG_RDMA_NOTIFY, &tk);
	}
	return st;
}

static ng_status rma_direct_complete(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	uint64_t at = (uint64_t)((const volatile unsigned char *)&w->done[RMA_LINE * c->rank] -
	                         (unsigned char *)w->ctl->base);
	ng_status st = ng_rma_mod_complete_begin(m, w);

	if (st != NG_OK)
		return st;
	st = rma_drain(m, w);
	for (int i = 0; i < w->nacc && st == NG_OK; i++) {
		int t = w->acc_grp[i];
		struct rma_msg h = {.type = M_DONE, .win = w->id};
		uint64_t v = ++w->dones_sent[t], tk;

		st = ng_rma_mod_wait_ready(m, w, t);
		if (st != NG_OK)
			break;
		if (w->touched[t])
			st = ng_rdma_flush(m->cm.r, t);
		w->touched[t] = false;
		if (m->aggregate) {
			/* The epoch's small puts, its small gets' requests and the
			 * DONE in one message; complete_end's settle waits for the
			 * gets' answers. */
			unsigned char *b = w->agg + (size_t)t * m->S;

			memcpy(b + w->agg_used[t], &h, sizeof(h));
			if (st == NG_OK)
				st = ng_rma_mod_send_raw(m, t, b, w->agg_used[t] + sizeof(h));
			w->agg_used[t] = 0;
		} else if (st == NG_OK) {
			st = ng_rdma_write(m->cm.r, t, &v, NULL, 8, &w->rctl[t], at, NG_RDMA_NOTIFY, &tk);
		}
	}
	return ng_rma_mod_complete_end(m, w, st);
}

static ng_status rma_direct_lock(struct ng_comm *c, struct ng_win *w, int target, bool exclusive)
{
	struct rma *m = rma_of(c);
	struct ng_rdma *r = m->cm.r;
	uint64_t lockoff =
	    (uint64_t)((const volatile unsigned char *)w->lockw - (unsigned char *)w->ctl->base);
	uint64_t old, tk, since = 0;
	ng_status st = ng_rma_mod_lock_begin(m, w, target);

	if (st != NG_OK)
		return st;
	for (;;) {
		if (exclusive)
			st = ng_rdma_cas(r, target, &w->rctl[target], lockoff, 0, LOCK_EXCL, &old, &tk);
		else
			st = ng_rdma_fadd(r, target, &w->rctl[target], lockoff, 1, &old, &tk);
		if (st == NG_OK)
			st = ng_rdma_wait(r, target, tk);
		if (st != NG_OK || (exclusive ? old == 0 : !(old & LOCK_EXCL)))
			break;
		if (!exclusive) {
			st = ng_rdma_fadd(r, target, &w->rctl[target], lockoff, (uint64_t)-1, &old, &tk);
			if (st == NG_OK)
				st = ng_rdma_wait(r, target, tk);
		}
		if (st == NG_OK)
			st = rma_retry(m, target, "kept its window locked", &since);
		if (st != NG_OK)
			break;
	}
	return ng_rma_mod_lock_end(m, w, target, exclusive, st);
}

static ng_status rma_direct_unlock(struct ng_comm *c, struct ng_win *w, int target)
{
	struct rma *m = rma_of(c);
	struct ng_rdma *r = m->cm.r;
	uint64_t lockoff =
	    (uint64_t)((const volatile unsigned char *)w->lockw - (unsigned char *)w->ctl->base);
	uint64_t old, tk;
	ng_status st = ng_rma_mod_unlock_begin(m, w, target);

	if (st != NG_OK)
		return st;
	st = rma_drain(m, w);
	if (st == NG_OK && w->touched[target])
		st = ng_rdma_flush(r, target);
	w->touched[target] = false;
	if (st == NG_OK)
		st = ng_rdma_fadd(r, target, &w->rctl[target], lockoff,
		                  w->locked[target] == 2 ? (uint64_t)0 - LOCK_EXCL : (uint64_t)-1, &old, &tk);
	if (st == NG_OK)
		st = ng_rdma_wait(r, target, tk);
	ng_rma_mod_unlock_end(w, target);
	return st;
}

/* Posts are notified writes into the control words, and so are the ends
 * of access epochs unless they travel as messages (aggregation). */
static ng_status rma_direct_win_allocate(struct ng_comm *c, size_t len, void **base_p, struct ng_win **win_p)
{
	ng_status st = ng_rma_mod_win_new(c, len, base_p, win_p);
	struct ng_win *w = *win_p;

	if (w) {
		w->posts = w->post;
		w->posts_stride = RMA_LINE;
		w->dones = rma_of(c)->aggregate ? w->done_seen : w->done;
		w->dones_stride = rma_of(c)->aggregate ? 1 : RMA_LINE;
	}
	return st;
}

const struct ng_rma_ops ng_rma_mod_direct_ops = {
    .win_allocate = rma_direct_win_allocate,
    .win_free = ng_rma_mod_win_free,
    .put = rma_direct_put,
    .get = rma_direct_get,
    .accumulate = rma_direct_accumulate,
    .fence = rma_direct_fence,
    .post = rma_direct_post,
    .start = ng_rma_mod_start,
    .complete = rma_direct_complete,
    .wait = ng_rma_mod_wait,
    .lock = rma_direct_lock,
    .unlock = rma_direct_unlock,
};
