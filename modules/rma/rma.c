/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "rma" module (rma.h): what both designs share - the operations'
 * channel, the checks of epochs, the start and wait of PSCW, windows, open
 * and close - and the module's descriptors.
 */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdmalayer/rdma.h"
#include "modules/rma/rma.h"
#include "options.h"

/* The module's options (rma_own_options), as ng_config_read gives them. */
struct rma_config {
	int design;       /* --rma-design: RMA_SENDRECV or direct */
	int sched;        /* --rma-sched: bit 0 reorder, bit 1 aggregate */
	size_t aggregate; /* --rma-aggregate */
};

/* clang-format off */
static const struct ng_option rma_own_options[] = {
	{ .name = "rma-design", NG_CHOICE_AT(struct rma_config, design),
	  .def = "direct", .choices = "direct|sendrecv",
	  .help = "rma: direct (put = RDMA write, get = RDMA read, flags by RDMA; no target involvement), or "
	          "sendrecv (operations shipped as messages, applied by the target in its synchronisation calls)" },
	{ .name = "rma-sched", NG_CHOICE_AT(struct rma_config, sched),
	  .def = "none", .choices = "none|reorder|aggregate|all",
	  .applies = "rma-design=direct",
	  .help = "rma direct: scheduling within an epoch: reorder (gets first, reads and writes interleaved), "
	          "aggregate (small operations travel with the epoch's completion message), all (both)" },
	{ .name = "rma-aggregate", NG_SIZE_AT(struct rma_config, aggregate),
	  .def = "256", .applies = "rma-sched=aggregate|all",
	  .help = "rma: operations up to this many bytes are aggregated (--rma-sched aggregate|all)" },
	{ .name = NULL },
};
/* clang-format on */

/* The word index of --rma-design sendrecv. */
#define RMA_SENDRECV 1

/* The layer's options, the channel's, its own. */
static const struct ng_option *const rma_options[] = {ng_rdma_options, ng_chan_options, rma_own_options,
                                                      NULL};

static void rma_close(struct ng_comm *c);
static ng_status rma_open(const struct ng_module *mod, const struct ng_module_env *env,
                          struct ng_comm **comm_p);

/* The operations of the direct design (the default) and of the sendrecv
 * design (they differ in .rma only). */
static const struct ng_module_ops rma_direct_ops = {
    .open = rma_open,
    .close = rma_close,
    .alloc = ng_chan_mod_alloc,
    .free = ng_chan_mod_free,
    .msg = &ng_chan_msg_ops,
    .rma = &ng_rma_mod_direct_ops,
};

/* What serves an instance of the sendrecv design (ng_comm.ops). */
static const struct ng_module_ops rma_sendrecv_ops = {
    .open = rma_open,
    .close = rma_close,
    .alloc = ng_chan_mod_alloc,
    .free = ng_chan_mod_free,
    .msg = &ng_chan_msg_ops,
    .rma = &ng_rma_mod_sendrecv_ops,
};

const struct ng_module ng_module_rma = {
    .name = "rma",
    .desc = "MPI-2 one-sided communication over the RDMA layer (--rma-design direct|sendrecv, --rma-sched), "
            "and the rdma module's two-sided channel",
    .options = rma_options,
    .reads = ng_rdma_reads,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK |
            NG_CAP_ONESIDED,
    .ops = &rma_direct_ops,
};

struct rma_waddr {
	struct ng_rdma_rmr mem, ctl;
	uint64_t len;
};

/* The idle step of a wait for @peer; @what says what is awaited. */
ng_status ng_rma_mod_idle(struct rma *m, int peer, const char *what)
{
	ng_status st = ng_watch_idle(&m->cm.r->watch);

	if (st == NG_ERR_TIMEOUT) {
		if (peer >= 0)
			ng_error("%s: rank %d %s within %.0f s", rma_who(m), peer, what,
			         (double)m->cm.r->watch.timeout_ns / 1e9);
		else
			ng_error("%s: the peers %s within %.0f s", rma_who(m), what,
			         (double)m->cm.r->watch.timeout_ns / 1e9);
		return NG_ERR_TIMEOUT;
	}
	return st;
}

/* ---- accumulate: combining -------------------------------------------- */

#define RMA_COMBINE(T)                                                                                       \
	for (size_t i = 0; i < count; i++) {                                                                 \
		T a, b;                                                                                      \
		memcpy(&a, dst + i * sizeof(T), sizeof(T));                                                  \
		memcpy(&b, src + i * sizeof(T), sizeof(T));                                                  \
		if (op == NG_RMA_SUM)                                                                        \
			a = a + b;                                                                           \
		else if (op == NG_RMA_REPLACE || (op == NG_RMA_MAX && b > a) || (op == NG_RMA_MIN && b < a)) \
			a = b;                                                                               \
		memcpy(dst + i * sizeof(T), &a, sizeof(T));                                                  \
	}

void ng_rma_mod_combine(unsigned char *dst, const unsigned char *src, size_t count, unsigned type,
                        unsigned op)
{
	if (type == NG_RMA_INT32) {
		RMA_COMBINE(int32_t);
	} else if (type == NG_RMA_INT64) {
		RMA_COMBINE(int64_t);
	} else {
		RMA_COMBINE(double);
	}
}

/* ---- the operations' channel ------------------------------------------ */

/* Completes finished sends; sends queued answers while slots are free.
 * Never blocks. */
static ng_status rma_flush_replies(struct rma *m);

/* A free outgoing buffer, or -1. */
static int rma_slot_free(struct rma *m)
{
	for (int i = 0; i < RMA_NSLOT; i++) {
		struct rma_slot *s = &m->slots[i];
		bool done;

		if (s->busy && ng_chan_test(m->ich, &s->req, &done) == NG_OK && done)
			s->busy = false;
		if (!s->busy)
			return i;
	}
	return -1;
}

static ng_status rma_apply(struct rma *m, int from, const unsigned char *msg, size_t n);

/* A message to this rank itself is applied at once. */
static ng_status rma_self(struct rma *m, const struct rma_msg *h, const void *data)
{
	memcpy(m->selfbox, h, sizeof(*h));
	if (h->len && data)
		memcpy(m->selfbox + sizeof(*h), data, h->len);
	return rma_apply(m, m->cm.base.rank, m->selfbox, sizeof(*h) + h->len);
}

static ng_status rma_slot_send(struct rma *m, int slot, int peer, const struct rma_msg *h, const void *data)
{
	unsigned char *b = m->outbox + (size_t)slot * m->S;

	if (peer == m->cm.base.rank)
		return rma_self(m, h, data);
	memcpy(b, h, sizeof(*h));
	if (h->len && data)
		memcpy(b + sizeof(*h), data, h->len);
	m->slots[slot].busy = true;
	return ng_chan_isend(m->ich, peer, b, sizeof(*h) + ((h->len + 7) & ~(size_t)7), &m->slots[slot].req);
}

/* The window with number @id (NULL: none). */
static struct ng_win *rma_win_find(struct rma *m, uint32_t id)
{
	struct ng_win *w = m->wins;

	while (w && w->id != id)
		w = w->next;
	return w;
}

/* Applies the messages in @msg (@n bytes) from @from: state changes only;
 * answers are queued. */
static ng_status rma_apply(struct rma *m, int from, const unsigned char *msg, size_t n)
{
	while (n >= sizeof(struct rma_msg)) {
		struct rma_msg h;
		struct ng_win *w;
		unsigned char *win;
		size_t step;

		memcpy(&h, msg, sizeof(h));
		w = rma_win_find(m, h.win);
		if (!w) {
			ng_error("%s: a request from rank %d for a window that does not exist", rma_who(m),
			         from);
			return NG_ERR_PROTO;
		}
		win = w->mem->base;
		step = sizeof(h) + ((h.len + 7) & ~(size_t)7);
		if (sizeof(h) + h.len > n ||
		    ((h.type == M_PUT || h.type == M_ACC) && (h.off > w->len || h.len > w->len - h.off)) ||
		    (h.type == M_GETREQ && (h.off > w->len || h.arg > w->len - h.off)) ||
		    /* An answer fills its get's piece exactly: one more compare in
		     * this test, which every message takes already. */
		    (h.type == M_GETREP && (h.id >= m->pend_next || !m->pend[h.id % RMA_NPEND] ||
		                            h.len != m->pend_len[h.id % RMA_NPEND]))) {
			ng_error("%s: a malformed request from rank %d", rma_who(m), from);
			return NG_ERR_PROTO;
		}
		switch (h.type) {
		case M_PUT:
			memcpy(win + h.off, msg + sizeof(h), h.len);
			break;
		case M_ACC:
			ng_rma_mod_combine(win + h.off, msg + sizeof(h), h.len / rma_type_size(h.dtype),
			                   h.dtype, h.op);
			break;
		case M_GETREQ:
		case M_UNLOCK:
			if (m->rq_n == RMA_NPEND) {
				ng_error("%s: more than %d requests to answer", rma_who(m), RMA_NPEND);
				return NG_ERR_PROTO;
			}
			if (h.type == M_UNLOCK) {
				if (w->lock_excl_holder == from)
					w->lock_excl_holder = -1;
				else
					w->lock_shared--;
				h = (struct rma_msg){.type = M_UNLACK, .win = w->id};
			}
			m->replies[(m->rq_head + m->rq_n) % RMA_NPEND] = h;
			m->reply_to[(m->rq_head + m->rq_n++) % RMA_NPEND] = from;
			break;
		case M_GETREP:
			memcpy(m->pend[h.id % RMA_NPEND], msg + sizeof(h), h.len);
			m->pend[h.id % RMA_NPEND] = NULL;
			m->npend_out--;
			break;
		case M_POST:
			w->post_seen[from]++;
			break;
		case M_DONE:
			w->done_seen[from]++;
			break;
		case M_FENCE:
			w->fence_seen[from] = h.arg;
			break;
		case M_LOCK:
			w->lock_queue[(w->lq_head + w->lq_n++) % (size_t)m->cm.base.size] =
			    h.excl ? -(from + 1) : from + 1;
			break;
		case M_GRANT:
			w->granted[from] = 1;
			break;
		case M_UNLACK:
			w->unlacked[from] = 1;
			break;
		default:
			ng_error("%s: an unknown request (type %u) from rank %d", rma_who(m), h.type, from);
			return NG_ERR_PROTO;
		}
		msg += step;
		n = n > step ? n - step : 0;
		/* Grant what the lock allows, in order of request. */
		while (w->lq_n && m->rq_n < RMA_NPEND) {
			int e = w->lock_queue[w->lq_head % (size_t)m->cm.base.size];

			if (w->lock_excl_holder >= 0 || (e < 0 && w->lock_shared > 0))
				break;
			w->lq_head++;
			w->lq_n--;
			if (e < 0)
				w->lock_excl_holder = -e - 1;
			else
				w->lock_shared++;
			m->replies[(m->rq_head + m->rq_n) % RMA_NPEND] =
			    (struct rma_msg){.type = M_GRANT, .win = w->id};
			m->reply_to[(m->rq_head + m->rq_n++) % RMA_NPEND] = e < 0 ? -e - 1 : e - 1;
		}
	}
	return NG_OK;
}

static ng_status rma_flush_replies(struct rma *m)
{
	while (m->rq_n) {
		struct rma_msg *h = &m->replies[m->rq_head % RMA_NPEND];
		int peer = m->reply_to[m->rq_head % RMA_NPEND];
		int slot = rma_slot_free(m);
		ng_status st;

		if (slot < 0)
			return NG_OK;
		if (h->type == M_GETREQ) {
			/* Answer in pieces of what a message holds. */
			size_t max = m->S - sizeof(*h), len = h->arg < max ? (size_t)h->arg : max;
			struct rma_msg rep = {
			    .type = M_GETREP, .len = (uint32_t)len, .id = h->id, .win = h->win};
			struct ng_win *w = rma_win_find(m, h->win);

			st = rma_slot_send(m, slot, peer, &rep, (unsigned char *)w->mem->base + h->off);
			if (st != NG_OK)
				return st;
			h->off += len;
			h->arg -= len;
			h->id++;
			if (h->arg)
				continue;
		} else {
			st = rma_slot_send(m, slot, peer, h, NULL);
			if (st != NG_OK)
				return st;
		}
		m->rq_head++;
		m->rq_n--;
	}
	return NG_OK;
}

/* Serves what has arrived on the operations' channel and sends what is
 * queued.  Never blocks; *@seen_p when anything happened. */
ng_status ng_rma_mod_serve(struct rma *m, bool *seen_p)
{
	ng_status st = ng_rdma_progress(m->cm.r);

	for (int p = 0; st == NG_OK && m->ich && p < m->cm.base.size; p++) {
		bool done = false;
		size_t n;

		if (p == m->cm.base.rank)
			continue;
		st = ng_chan_test(m->ich, &m->inreq[p], &done);
		if (st != NG_OK || !done)
			continue;
		*seen_p = true;
		n = ng_chan_req_len(&m->inreq[p]);
		memcpy(m->scratch, m->inbox + (size_t)p * m->S, n);
		st = ng_chan_irecv_upto(m->ich, p, m->inbox + (size_t)p * m->S, m->S, &m->inreq[p]);
		if (st == NG_OK)
			st = rma_apply(m, p, m->scratch, n);
	}
	if (st == NG_OK && m->ich && m->rq_n)
		st = rma_flush_replies(m);
	return st;
}

/* Sends one message (@h and its data) to @peer, serving while no buffer is
 * free. */
ng_status ng_rma_mod_send(struct rma *m, int peer, const struct rma_msg *h, const void *data)
{
	if (peer == m->cm.base.rank)
		return rma_self(m, h, data);
	for (;;) {
		int slot = rma_slot_free(m);
		bool seen = false;
		ng_status st;

		if (slot >= 0)
			return rma_slot_send(m, slot, peer, h, data);
		st = ng_rma_mod_serve(m, &seen);
		if (st == NG_OK && !seen)
			st = ng_rma_mod_idle(m, peer, "took none of our messages");
		if (st != NG_OK)
			return st;
	}
}

/* Sends the prepared messages @buf (@len bytes) to @peer. */
ng_status ng_rma_mod_send_raw(struct rma *m, int peer, const void *buf, size_t len)
{
	if (peer == m->cm.base.rank) {
		memcpy(m->selfbox, buf, len);
		return rma_apply(m, peer, m->selfbox, len);
	}
	for (;;) {
		int slot = rma_slot_free(m);
		bool seen = false;
		ng_status st;

		if (slot >= 0) {
			memcpy(m->outbox + (size_t)slot * m->S, buf, len);
			m->slots[slot].busy = true;
			return ng_chan_isend(m->ich, peer, m->outbox + (size_t)slot * m->S, len,
			                     &m->slots[slot].req);
		}
		st = ng_rma_mod_serve(m, &seen);
		if (st == NG_OK && !seen)
			st = ng_rma_mod_idle(m, peer, "took none of our messages");
		if (st != NG_OK)
			return st;
	}
}

/* Serves until *@word >= @v (a counter in this process's memory that
 * messages or remote writes advance).  Reaching it is progress for the
 * watchdog: a remote write that ends the wait is an event like a message
 * (else the silence of many satisfied waits adds up to a false timeout). */
ng_status ng_rma_mod_until(struct rma *m, const volatile uint64_t *word, uint64_t v, int peer,
                           const char *what)
{
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < v) {
		bool seen = false;
		ng_status st = ng_rma_mod_serve(m, &seen);

		if (st == NG_OK && !seen)
			st = ng_rma_mod_idle(m, peer, what);
		if (st != NG_OK)
			return st;
		if (seen)
			m->cm.r->watch.events++;
	}
	m->cm.r->watch.events++; /* the counter moved: progress, not silence */
	return NG_OK;
}

/* Reserves the pending-get ids of a get of @len bytes into @origin: one
 * per answer (M_GETREP) of at most S - header bytes; each slot must be free
 * (an unanswered older get whose id wrapped onto it keeps it). */
bool ng_rma_mod_get_expect(struct rma *m, void *origin, size_t len, uint64_t *id_p)
{
	size_t max = m->S - sizeof(struct rma_msg), pieces = (len + max - 1) / max;

	if (m->npend_out + pieces > RMA_NPEND)
		return false;
	for (size_t i = 0; i < pieces; i++)
		if (m->pend[(m->pend_next + i) % RMA_NPEND])
			return false;
	for (size_t i = 0; i < pieces; i++) {
		m->pend[(m->pend_next + i) % RMA_NPEND] = (unsigned char *)origin + i * max;
		m->pend_len[(m->pend_next + i) % RMA_NPEND] =
		    (uint32_t)(len - i * max < max ? len - i * max : max);
	}
	*id_p = m->pend_next;
	m->pend_next += pieces;
	m->npend_out += pieces;
	return true;
}

/* Whether any outgoing message is still in flight. */
static bool rma_slots_busy(struct rma *m)
{
	bool busy = false;

	for (int i = 0; i < RMA_NSLOT; i++) {
		struct rma_slot *s = &m->slots[i];
		bool done;

		if (s->busy && ng_chan_test(m->ich, &s->req, &done) == NG_OK && done)
			s->busy = false;
		busy = busy || s->busy;
	}
	return busy;
}

/* Every message sent, every answer given, every get of ours answered. */
ng_status ng_rma_mod_settle(struct rma *m)
{
	while (m->ich && (m->npend_out > 0 || m->rq_n > 0 || rma_slots_busy(m))) {
		bool seen = false;
		ng_status st = ng_rma_mod_serve(m, &seen);

		if (st == NG_OK && !seen)
			st = ng_rma_mod_idle(m, -1, "answered none of our requests");
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* ---- epochs and checks ------------------------------------------------ */

ng_status ng_rma_mod_check(struct rma *m, struct ng_win *w, int target, size_t off, size_t len)
{
	if (target < 0 || target >= m->cm.base.size) {
		ng_error("%s: rank %d is not a rank of this run (0-%d)", rma_who(m), target,
		         m->cm.base.size - 1);
		return NG_ERR_USAGE;
	}
	if (!w->in_fence && !w->locked[target] && !(w->in_access && w->ingrp[target])) {
		ng_error("%s: an operation to rank %d outside an access epoch to it (start, fence or lock)",
		         rma_who(m), target);
		return NG_ERR_USAGE;
	}
	if (off > w->wlen[target] || len > w->wlen[target] - off) {
		ng_error("%s: bytes %zu..%zu are outside the %llu-byte window of rank %d", rma_who(m), off,
		         off + len, (unsigned long long)w->wlen[target], target);
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

static ng_status rma_group(struct rma *m, const int *group, int n, const char *call)
{
	for (int i = 0; i < n; i++) {
		if (group[i] < 0 || group[i] >= m->cm.base.size || group[i] == m->cm.base.rank) {
			ng_error("%s: %s: rank %d cannot be in the group (ranks 0-%d, not the caller)",
			         rma_who(m), call, group[i], m->cm.base.size - 1);
			return NG_ERR_USAGE;
		}
		for (int k = 0; k < i; k++)
			if (group[k] == group[i]) {
				ng_error("%s: %s: rank %d is twice in the group", rma_who(m), call, group[i]);
				return NG_ERR_USAGE;
			}
	}
	return NG_OK;
}

ng_status ng_rma_mod_wait_ready(struct rma *m, struct ng_win *w, int t)
{
	while (!rma_ready(w, t)) {
		bool seen = false;
		ng_status st = ng_rma_mod_serve(m, &seen);

		if (st == NG_OK && !seen)
			st = ng_rma_mod_idle(m, t, "opened no exposure epoch (post)");
		if (st != NG_OK)
			return st;
	}
	/* A post seen is progress for the watchdog (rma_until). */
	m->cm.r->watch.events++;
	return NG_OK;
}

ng_status ng_rma_mod_post_begin(struct rma *m, struct ng_win *w, const int *group, int n)
{
	ng_status st = rma_group(m, group, n, "post");

	if (st != NG_OK)
		return st;
	if (w->in_expose) {
		ng_error("%s: post inside an exposure epoch (wait first)", rma_who(m));
		return NG_ERR_USAGE;
	}
	memcpy(w->exp_grp, group, (size_t)n * sizeof(*group));
	w->nexp = n;
	w->in_expose = true;
	w->in_fence = false;
	return NG_OK;
}

ng_status ng_rma_mod_start(struct ng_comm *c, struct ng_win *w, const int *group, int n)
{
	struct rma *m = rma_of(c);
	ng_status st = rma_group(m, group, n, "start");

	if (st != NG_OK)
		return st;
	if (w->in_access) {
		ng_error("%s: start inside an access epoch (complete first)", rma_who(m));
		return NG_ERR_USAGE;
	}
	memcpy(w->acc_grp, group, (size_t)n * sizeof(*group));
	w->nacc = n;
	w->in_access = true;
	w->in_fence = false;
	for (int i = 0; i < n; i++) {
		int t = group[i];

		w->ingrp[t] = true;
		w->post_want[t]++;
		w->ready[t] = false;
		w->agg_used[t] = 0;
	}
	return NG_OK;
}

ng_status ng_rma_mod_complete_begin(struct rma *m, struct ng_win *w)
{
	if (!w->in_access) {
		ng_error("%s: complete without start", rma_who(m));
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

ng_status ng_rma_mod_complete_end(struct rma *m, struct ng_win *w, ng_status st)
{
	if (st == NG_OK && m->ich)
		st = ng_rma_mod_settle(m);
	for (int i = 0; i < w->nacc; i++)
		w->ingrp[w->acc_grp[i]] = false;
	w->in_access = false;
	return st;
}

ng_status ng_rma_mod_wait(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	ng_status st = NG_OK;

	if (!w->in_expose) {
		ng_error("%s: wait without post", rma_who(m));
		return NG_ERR_USAGE;
	}
	for (int i = 0; i < w->nexp && st == NG_OK; i++) {
		int o = w->exp_grp[i];

		st = ng_rma_mod_until(m, &w->dones[(size_t)o * w->dones_stride], w->done_want[o], o,
		                      "did not complete its access epoch");
	}
	if (st == NG_OK && m->ich)
		st = ng_rma_mod_settle(m);
	w->in_expose = false;
	return st;
}

ng_status ng_rma_mod_lock_begin(struct rma *m, struct ng_win *w, int target)
{
	if (target < 0 || target >= m->cm.base.size) {
		ng_error("%s: lock of rank %d, not a rank of this run (0-%d)", rma_who(m), target,
		         m->cm.base.size - 1);
		return NG_ERR_USAGE;
	}
	if (w->locked[target]) {
		ng_error("%s: lock of rank %d, which this rank holds already", rma_who(m), target);
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

ng_status ng_rma_mod_lock_end(struct rma *m, struct ng_win *w, int target, bool exclusive, ng_status st)
{
	if (st == NG_OK) {
		w->locked[target] = exclusive ? 2 : 1;
		w->ready[target] = true;
		m->cm.r->watch.events++;
	}
	return st;
}

ng_status ng_rma_mod_unlock_begin(struct rma *m, struct ng_win *w, int target)
{
	if (target < 0 || target >= m->cm.base.size || !w->locked[target]) {
		ng_error("%s: unlock of rank %d without a lock", rma_who(m), target);
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

void ng_rma_mod_unlock_end(struct ng_win *w, int target)
{
	w->locked[target] = 0;
	w->ready[target] = false;
}

/* ---- windows ---------------------------------------------------------- */

static void rma_win_release(struct rma *m, struct ng_win *w)
{
	ng_rdma_mem_free(m->cm.r, w->mem);
	ng_rdma_mem_free(m->cm.r, w->ctl);
	free(w->rmem);
	free(w->rctl);
	free(w->wlen);
	free(w->acc_grp);
	free(w->exp_grp);
	free(w->ingrp);
	free(w->post_want);
	free(w->post_seen);
	free(w->ready);
	free(w->posts_sent);
	free(w->dones_sent);
	free(w->done_want);
	free(w->done_seen);
	free(w->fence_seen);
	free(w->locked);
	free(w->granted);
	free(w->unlacked);
	free(w->touched);
	free(w->ops);
	free(w->copies);
	free(w->agg);
	free(w->agg_used);
	free(w->lock_queue);
	free(w);
}

ng_status ng_rma_mod_win_new(struct ng_comm *c, size_t len, void **base_p, struct ng_win **win_p)
{
	struct rma *m = rma_of(c);
	struct ng_boot *b = m->boot;
	size_t n = (size_t)c->size, words = RMA_LINE * (2 * n + 64 + 2);
	struct ng_win *w = calloc(1, sizeof(*w));
	struct rma_waddr mine, *all = NULL;
	ng_status st = NG_ERR_NOMEM;

	*win_p = NULL;
	if (!w)
		goto err_oom;
	w->m = m;
	w->len = len;
	w->rmem = calloc(n, sizeof(*w->rmem));
	w->rctl = calloc(n, sizeof(*w->rctl));
	w->wlen = calloc(n, sizeof(*w->wlen));
	w->acc_grp = calloc(n, sizeof(int));
	w->exp_grp = calloc(n, sizeof(int));
	w->ingrp = calloc(n, sizeof(bool));
	w->post_want = calloc(n, sizeof(uint64_t));
	w->post_seen = calloc(n, sizeof(uint64_t));
	w->ready = calloc(n, sizeof(bool));
	w->posts_sent = calloc(n, sizeof(uint64_t));
	w->dones_sent = calloc(n, sizeof(uint64_t));
	w->done_want = calloc(n, sizeof(uint64_t));
	w->done_seen = calloc(n, sizeof(uint64_t));
	w->fence_seen = calloc(n, sizeof(uint64_t));
	w->locked = calloc(n, 1);
	w->granted = calloc(n, 1);
	w->unlacked = calloc(n, 1);
	w->touched = calloc(n, sizeof(bool));
	w->ops = calloc(RMA_NOPS, sizeof(*w->ops));
	w->copies = calloc(RMA_NOPS, sizeof(*w->copies));
	w->agg = m->aggregate ? calloc(n, m->S) : malloc(1);
	w->agg_used = calloc(n, sizeof(size_t));
	w->lock_queue = calloc(n, sizeof(int));
	all = calloc(n, sizeof(*all));
	if (!w->rmem || !w->rctl || !w->wlen || !w->acc_grp || !w->exp_grp || !w->ingrp || !w->post_want ||
	    !w->post_seen || !w->ready || !w->posts_sent || !w->dones_sent || !w->done_want ||
	    !w->done_seen || !w->fence_seen || !w->locked || !w->granted || !w->unlacked || !w->touched ||
	    !w->ops || !w->copies || !w->agg || !w->agg_used || !w->lock_queue || !all)
		goto err_oom;
	w->lock_excl_holder = -1;
	while ((1 << w->nrounds) < c->size)
		w->nrounds++;
	st = ng_rdma_mem_alloc(m->cm.r, len ? len : 8, &w->mem);
	if (st == NG_OK)
		st = ng_rdma_mem_alloc(m->cm.r, words * 8, &w->ctl);
	if (st != NG_OK)
		goto err_free;
	{
		volatile uint64_t *ctl = w->ctl->base;

		w->post = ctl;
		w->done = ctl + RMA_LINE * n;
		w->fbar = ctl + RMA_LINE * 2 * n;
		w->lockw = ctl + RMA_LINE * (2 * n + 64);
		w->accw = ctl + RMA_LINE * (2 * n + 65);
	}
	mine = (struct rma_waddr){.mem = w->mem->remote, .ctl = w->ctl->remote, .len = len};
	st = ng_boot_allgather(b, &mine, sizeof(mine), all);
	if (st != NG_OK)
		goto err_free;
	for (size_t i = 0; i < n; i++) {
		w->rmem[i] = all[i].mem;
		w->rctl[i] = all[i].ctl;
		w->wlen[i] = all[i].len;
	}
	free(all);
	w->id = m->nwins++;
	w->next = m->wins;
	m->wins = w;
	*base_p = w->mem->base;
	*win_p = w;
	/* Nobody accesses a window before every rank has it. */
	return ng_boot_barrier(b);

err_oom:
	ng_error("%s: out of memory for a window", rma_who(m));
	st = NG_ERR_NOMEM;
err_free:
	free(all);
	if (w)
		rma_win_release(m, w);
	return st;
}

void ng_rma_mod_win_free(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	struct ng_win **pp = &m->wins;

	if (!w)
		return;
	/* Collective: nobody frees memory another rank may still access. */
	ng_rma_mod_settle(m);
	ng_boot_barrier(m->boot);
	while (*pp && *pp != w)
		pp = &(*pp)->next;
	if (*pp)
		*pp = w->next;
	rma_win_release(m, w);
}

/* ---- the module ------------------------------------------------------- */

static void rma_close(struct ng_comm *c)
{
	struct rma *m = rma_of(c);

	while (m->wins) {
		struct ng_win *w = m->wins;

		m->wins = w->next;
		rma_win_release(m, w);
	}
	for (int i = 0; i < RMA_NCACHE; i++)
		ng_rdma_dereg(m->cm.r, m->cache[i].mr);
	if (m->cm.r) {
		ng_rdma_mem_free(m->cm.r, m->box_mr);
		ng_rdma_mem_free(m->cm.r, m->stage_mr);
	}
	ng_chan_destroy(m->ich);
	ng_chan_mod_fini(&m->cm);
	free(m->scratch);
	free(m->selfbox);
	free(m->inreq);
	free(m->pend);
	free(m->pend_len);
	free(m->replies);
	free(m->reply_to);
	free(m);
}

static ng_status rma_open(const struct ng_module *mod, const struct ng_module_env *env,
                          struct ng_comm **comm_p)
{
	struct rma_config o;
	bool sendrecv;
	int sched;
	struct ng_chan_conf cf;
	struct ng_module_env eenv;
	struct rma *m;
	size_t n = (size_t)env->boot->size;
	ng_status st = ng_chan_conf_read(env, &cf);

	/* --rma-design direct|sendrecv; --rma-sched none|reorder|aggregate|all:
	 * bit 0 reorder, bit 1 aggregate. */
	ng_config_read(env->args, rma_own_options, &o);
	sendrecv = o.design == RMA_SENDRECV;
	sched = o.sched;

	*comm_p = NULL;
	if (st != NG_OK)
		return st;
	m = calloc(1, sizeof(*m));
	if (!m) {
		ng_error("%s: out of memory", mod->name);
		return NG_ERR_NOMEM;
	}
	m->boot = env->boot;
	m->reorder = !sendrecv && (sched & 1);
	m->aggregate = !sendrecv && (sched & 2);
	m->agg_max = o.aggregate;
	/* The design's operations serve the instance from here on.  Every
	 * queue pair at open whatever --connect says: a passive target's
	 * memory is reached without its CPU (NG_RDMA_CAP_PROGRESS), and a
	 * connection on first use needs the target to answer. */
	eenv = *env;
	eenv.connect_lazy = false;
	st = ng_chan_mod_init(&m->cm, mod, sendrecv ? &rma_sendrecv_ops : &rma_direct_ops, &eenv, &cf);
	if (st != NG_OK) {
		free(m);
		return st;
	}
	/* The direct design's locks, accumulates and completions are remote
	 * atomics, its gets RDMA reads: refused up front on a backend without
	 * them (every rank opened the same backend, so all refuse together),
	 * not at the first lock. */
	if (!sendrecv && (m->cm.r->caps & (NG_RDMA_CAP_ATOMIC | NG_RDMA_CAP_READ)) !=
	                     (NG_RDMA_CAP_ATOMIC | NG_RDMA_CAP_READ)) {
		if (env->boot->rank == 0)
			ng_error("%s: --rma-design direct needs remote %s, which the RDMA layer's backend "
			         "does not "
			         "offer here (%s): use --rma-design sendrecv",
			         mod->name, (m->cm.r->caps & NG_RDMA_CAP_ATOMIC) ? "reads" : "atomics",
			         m->cm.r->desc);
		ng_chan_mod_fini(&m->cm);
		free(m);
		return NG_ERR_UNSUPPORTED;
	}
	m->S = cf.eager;
	m->pend = calloc(RMA_NPEND, sizeof(*m->pend));
	m->pend_len = calloc(RMA_NPEND, sizeof(*m->pend_len));
	m->replies = calloc(RMA_NPEND, sizeof(*m->replies));
	m->reply_to = calloc(RMA_NPEND, sizeof(*m->reply_to));
	m->inreq = calloc(n, sizeof(*m->inreq));
	m->scratch = malloc(m->S);
	m->selfbox = malloc(m->S);
	if (!m->selfbox || !m->pend || !m->pend_len || !m->replies || !m->reply_to || !m->inreq ||
	    !m->scratch) {
		ng_error("%s: out of memory", mod->name);
		st = NG_ERR_NOMEM;
		goto err;
	}
	st = ng_rdma_mem_alloc(m->cm.r, RMA_STAGE, &m->stage_mr);
	if (st != NG_OK)
		goto err;
	if (sendrecv || m->aggregate) {
		st = ng_chan_new(m->cm.r, env->boot, cf.ring, cf.eager, &m->ich);
		if (st == NG_OK)
			st = ng_rdma_mem_alloc(m->cm.r, (n + RMA_NSLOT) * m->S, &m->box_mr);
		if (st == NG_OK)
			st = ng_chan_block_add(m->ich, m->box_mr);
		if (st != NG_OK)
			goto err;
		m->inbox = m->box_mr->base;
		m->outbox = m->inbox + n * m->S;
		for (int p = 0; p < (int)n && st == NG_OK; p++)
			if (p != env->boot->rank)
				st = ng_chan_irecv_upto(m->ich, p, m->inbox + (size_t)p * m->S, m->S,
				                        &m->inreq[p]);
		if (st != NG_OK)
			goto err;
	}
	{
		size_t l = strlen(m->cm.base.device);

		snprintf(m->cm.base.device + l, sizeof(m->cm.base.device) - l, ", %s%s%s",
		         sendrecv ? "sendrecv" : "direct", m->reorder ? " reorder" : "",
		         m->aggregate ? " aggregate" : "");
	}
	*comm_p = &m->cm.base;
	return NG_OK;

err:
	rma_close(&m->cm.base);
	return st;
}
