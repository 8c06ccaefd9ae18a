/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rma module's sendrecv design (rma.h), the baseline: every operation
 * is a message over the operations' channel, applied by the target when it
 * is inside a one-sided call (ng_rma_mod_serve, in rma.c).
 */
#include "config.h"

#include "module.h"
#include "modules/rma/rma.h"

/* ---- operations ------------------------------------------------------- */

static ng_status rma_sr_put(struct ng_comm *c, struct ng_win *w, int target, size_t off, const void *origin,
                            size_t len)
{
	struct rma *m = rma_of(c);
	size_t max = m->S - sizeof(struct rma_msg);
	ng_status st = ng_rma_mod_check(m, w, target, off, len);

	if (st != NG_OK || !len)
		return st;
	st = ng_rma_mod_wait_ready(m, w, target);
	for (size_t at = 0; at < len && st == NG_OK; at += max) {
		struct rma_msg h = {.type = M_PUT,
		                    .len = (uint32_t)(len - at < max ? len - at : max),
		                    .off = off + at,
		                    .win = w->id};

		st = ng_rma_mod_send(m, target, &h, (const unsigned char *)origin + at);
	}
	return st;
}

static ng_status rma_sr_get(struct ng_comm *c, struct ng_win *w, int target, size_t off, void *origin,
                            size_t len)
{
	struct rma *m = rma_of(c);
	/* One request per chunk of at most half the table of gets in flight. */
	size_t chunk = (m->S - sizeof(struct rma_msg)) * (RMA_NPEND / 2);
	ng_status st = ng_rma_mod_check(m, w, target, off, len);

	if (st != NG_OK || !len)
		return st;
	st = ng_rma_mod_wait_ready(m, w, target);
	for (size_t at = 0; at < len && st == NG_OK; at += chunk) {
		size_t n = len - at < chunk ? len - at : chunk;
		struct rma_msg h = {.type = M_GETREQ, .off = off + at, .arg = n, .win = w->id};

		if (!ng_rma_mod_get_expect(m, (unsigned char *)origin + at, n, &h.id)) {
			st = ng_rma_mod_settle(m);
			if (st == NG_OK &&
			    !ng_rma_mod_get_expect(m, (unsigned char *)origin + at, n, &h.id)) {
				ng_error("%s: no room for a get with nothing in flight", rma_who(m));
				st = NG_ERR_INTERNAL;
			}
		}
		if (st == NG_OK)
			st = ng_rma_mod_send(m, target, &h, NULL);
	}
	return st;
}

static ng_status rma_sr_accumulate(struct ng_comm *c, struct ng_win *w, int target, size_t off,
                                   const void *origin, size_t count, enum ng_rma_type type, enum ng_rma_op op)
{
	struct rma *m = rma_of(c);
	size_t es = rma_type_size(type), len = count * es;
	size_t max = (m->S - sizeof(struct rma_msg)) / es * es;
	ng_status st = ng_rma_mod_check(m, w, target, off, len);

	if (st == NG_OK)
		st = ng_rma_mod_wait_ready(m, w, target);
	for (size_t at = 0; at < len && st == NG_OK; at += max) {
		size_t n = len - at < max ? len - at : max;
		struct rma_msg h = {.type = M_ACC,
		                    .dtype = (uint8_t)type,
		                    .op = (uint8_t)op,
		                    .len = (uint32_t)n,
		                    .off = off + at,
		                    .win = w->id};

		st = ng_rma_mod_send(m, target, &h, (const unsigned char *)origin + at);
	}
	return st;
}

/* ---- synchronisation -------------------------------------------------- */

static ng_status rma_sr_fence(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	int me = c->rank, n = c->size;
	uint64_t ep = ++w->fence_epoch;
	struct rma_msg h = {.type = M_FENCE, .arg = ep, .win = w->id};
	ng_status st = NG_OK;

	if (w->in_access || w->in_expose) {
		ng_error("%s: fence inside a post/start epoch", rma_who(m));
		return NG_ERR_USAGE;
	}
	for (int p = 0; p < n && st == NG_OK; p++)
		if (p != me)
			st = ng_rma_mod_send(m, p, &h, NULL);
	for (int p = 0; p < n && st == NG_OK; p++)
		if (p != me)
			st = ng_rma_mod_until(m, &w->fence_seen[p], ep, p, "did not reach the fence");
	if (st == NG_OK)
		st = ng_rma_mod_settle(m);
	w->in_fence = st == NG_OK;
	return st;
}

static ng_status rma_sr_post(struct ng_comm *c, struct ng_win *w, const int *group, int n)
{
	struct rma *m = rma_of(c);
	struct rma_msg h = {.type = M_POST, .win = w->id};
	ng_status st = ng_rma_mod_post_begin(m, w, group, n);

	/* A POST to each origin. */
	for (int i = 0; i < n && st == NG_OK; i++) {
		int o = group[i];

		++w->posts_sent[o];
		w->done_want[o]++;
		st = ng_rma_mod_send(m, o, &h, NULL);
	}
	return st;
}

static ng_status rma_sr_complete(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	struct rma_msg h = {.type = M_DONE, .win = w->id};
	ng_status st = ng_rma_mod_complete_begin(m, w);

	if (st != NG_OK)
		return st;
	/* A DONE to each target, once its POST came. */
	for (int i = 0; i < w->nacc && st == NG_OK; i++) {
		int t = w->acc_grp[i];

		++w->dones_sent[t];
		st = ng_rma_mod_wait_ready(m, w, t);
		if (st == NG_OK)
			st = ng_rma_mod_send(m, t, &h, NULL);
	}
	return ng_rma_mod_complete_end(m, w, st);
}

/* Serves until *@flag is set (an answer of @target), then clears it. */
static ng_status rma_sr_answer(struct rma *m, uint8_t *flag, int target, const char *what)
{
	ng_status st = NG_OK;

	while (st == NG_OK && !*flag) {
		bool seen = false;

		st = ng_rma_mod_serve(m, &seen);
		if (st == NG_OK && !seen)
			st = ng_rma_mod_idle(m, target, what);
	}
	*flag = 0;
	return st;
}

/* A LOCK request, which the target grants in its calls. */
static ng_status rma_sr_lock(struct ng_comm *c, struct ng_win *w, int target, bool exclusive)
{
	struct rma *m = rma_of(c);
	struct rma_msg h = {.type = M_LOCK, .excl = exclusive, .win = w->id};
	ng_status st = ng_rma_mod_lock_begin(m, w, target);

	if (st != NG_OK)
		return st;
	st = ng_rma_mod_send(m, target, &h, NULL);
	if (st == NG_OK)
		st = rma_sr_answer(m, &w->granted[target], target, "granted no lock");
	else
		w->granted[target] = 0;
	return ng_rma_mod_lock_end(m, w, target, exclusive, st);
}

/* An UNLOCK, which the target acknowledges once the epoch's operations are
 * applied. */
static ng_status rma_sr_unlock(struct ng_comm *c, struct ng_win *w, int target)
{
	struct rma *m = rma_of(c);
	struct rma_msg h = {.type = M_UNLOCK, .win = w->id};
	ng_status st = ng_rma_mod_unlock_begin(m, w, target);

	if (st != NG_OK)
		return st;
	st = ng_rma_mod_send(m, target, &h, NULL);
	if (st == NG_OK)
		st = rma_sr_answer(m, &w->unlacked[target], target, "acknowledged no unlock");
	else
		w->unlacked[target] = 0;
	if (st == NG_OK)
		st = ng_rma_mod_settle(m);
	ng_rma_mod_unlock_end(w, target);
	return st;
}

/* Posts and the ends of access epochs arrive as messages. */
static ng_status rma_sr_win_allocate(struct ng_comm *c, size_t len, void **base_p, struct ng_win **win_p)
{
	ng_status st = ng_rma_mod_win_new(c, len, base_p, win_p);
	struct ng_win *w = *win_p;

	if (w) {
		w->posts = w->post_seen;
		w->posts_stride = 1;
		w->dones = w->done_seen;
		w->dones_stride = 1;
	}
	return st;
}

const struct ng_rma_ops ng_rma_mod_sendrecv_ops = {
    .win_allocate = rma_sr_win_allocate,
    .win_free = ng_rma_mod_win_free,
    .put = rma_sr_put,
    .get = rma_sr_get,
    .accumulate = rma_sr_accumulate,
    .fence = rma_sr_fence,
    .post = rma_sr_post,
    .start = ng_rma_mod_start,
    .complete = rma_sr_complete,
    .wait = ng_rma_mod_wait,
    .lock = rma_sr_lock,
    .unlock = rma_sr_unlock,
};
