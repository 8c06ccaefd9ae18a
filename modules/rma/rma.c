/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "rma" module: MPI-2 one-sided communication (core/module.h, struct
 * ng_rma_ops) over ngauge's RDMA layer (rdma.h), the way "Efficient
 * Implementation of MPI-2 Passive One-Sided Communication on InfiniBand
 * Clusters" / "MPI-2 one-sided over InfiniBand" §4 designs it, with the
 * scheduling of "Scheduling of MPI-2 One Sided Operations" §4.  Its two-sided
 * operations are the rdma module's channel (chan.h) on the same layer.
 *
 * Windows.  win_allocate() allocates the window memory with the layer
 * (registered once), a control area of 64-bit words, and exchanges both
 * descriptors and the window length over the bootstrap.  Control area of
 * rank r, one word each, every word on a cache line of its own (a poller
 * never shares its line with another word being written):
 *   post[t]   written by target t: how many exposure epochs t opened to r
 *   done[o]   written by origin o: how many access epochs o closed to r
 *   fbar[k]   fence barrier, round k (dissemination barrier)
 *   lock      passive target lock: shared holders, + LOCK_EXCL if exclusive
 *   acc       the window's accumulate lock: 0 free, else holder + 1
 *
 * --rma-design direct (default):
 *   put = RDMA write, get = RDMA read, from the origin buffer when it is
 *   registered (the window, a cached registration for buffers above 64 KiB)
 *   or through a registered staging area (copied in at put, out at the
 *   epoch's end for get);
 *   accumulate = take the target's accumulate lock with compare-and-swap,
 *   RDMA read, combine here, RDMA write, release with a notified write;
 *   post = a notified write of post[me] at each origin; start records the
 *   group and communication to a target begins as soon as its post is
 *   seen (operations to a target whose post is not seen yet wait in a
 *   queue and go out at the next call that sees it); complete waits for
 *   local completion, flushes each target and writes done[me] there; wait
 *   polls done[o] of every origin of its group;
 *   fence = complete the epoch's operations, flush every target touched,
 *   then a dissemination barrier of notified writes;
 *   lock = fetch-and-add / compare-and-swap on the target's lock word
 *   (shared: add 1, back off while LOCK_EXCL is set; exclusive: 0 ->
 *   LOCK_EXCL), unlock = complete, flush, atomic release.  No target
 *   involvement anywhere.
 *   --rma-sched reorder: the epoch's operations are queued until complete
 *   and issued gets first, interleaved with puts (get, put, get, put, ...),
 *   so reads and writes use both directions of a link at once;
 *   --rma-sched aggregate: puts up to --rma-aggregate bytes are not
 *   written but packed into the epoch's completion message (one channel
 *   message instead of a write per put plus the done write), which the
 *   target unpacks in its wait; all = both.
 *
 * --rma-design sendrecv: the baseline.  Every operation is a message over a
 *   channel of its own (requests of at most the eager size; larger ones in
 *   pieces), applied by the target when it is inside a one-sided call
 *   (post/wait/fence/...; a target that computes outside them delays its
 *   origins: that is what this design shows).  post sends POST to each
 *   origin, whose operations wait for it; complete sends DONE; gets are
 *   answered with the data; lock/unlock are requests the target grants and
 *   acknowledges, so a passive-target epoch needs the target inside a call
 *   (in a benchmark, waiting in the closing fence).
 *
 * Errors (one line each): a range outside the target's window, a target
 * outside the epoch's group or 0..size-1, an operation outside an epoch,
 * unlock without lock, complete without start, wait without post: usage
 * (NG_ERR_USAGE); a target that does not post within --timeout:
 * NG_ERR_TIMEOUT ("rank T opened no exposure epoch within S s").
 *
 * Limits: origin buffers above 64 KiB stay registered in a cache of 16 until
 * the window is freed: memory freed and reused at the same address while a
 * window lives may be served by a stale registration (verbs).  Queued
 * operations per epoch: 4096 (more are issued early).
 */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdma/rdma.h"
#include "options.h"

extern const struct ng_module ng_module_rma;

#define RMA_STAGE     ((size_t)4 << 20)  /* staging bytes */
#define RMA_STAGE_MAX ((size_t)64 << 10) /* larger origin buffers are registered */
#define RMA_NCACHE    16
#define RMA_NOPS      4096
#define RMA_NPEND     4096
#define LOCK_EXCL     ((uint64_t)1 << 32)
#define RMA_LINE      8 /* words: every control word has a cache line of its own */

enum rma_kind { RMA_PUT, RMA_GET, RMA_ACC };

/* A queued operation (direct design). */
struct rma_op {
	uint8_t kind;
	int target;
	uint64_t off;
	size_t len;
	const unsigned char *src;    /* put: origin data (staged or registered) */
	unsigned char *dst;          /* get: where the data lands (staged or registered) */
	const struct ng_rdma_mr *mr; /* of src/dst, NULL: staged copy (put) */
};

/* A get whose data lands in staging and is copied out at the epoch's end. */
struct rma_copy {
	unsigned char *to;
	const unsigned char *from;
	size_t len;
};

/* Messages of the sendrecv design and of aggregation: a header and its data
 * (padded to 8 bytes); one channel message may carry several. */
enum rma_msg_type {
	M_PUT,
	M_ACC,
	M_GETREQ,
	M_GETREP,
	M_POST,
	M_DONE,
	M_FENCE,
	M_LOCK,
	M_GRANT,
	M_UNLOCK,
	M_UNLACK
};

struct rma_msg {
	uint8_t type;
	uint8_t dtype; /* M_ACC: enum ng_rma_type */
	uint8_t op;    /* M_ACC: enum ng_rma_op */
	uint8_t excl;  /* M_LOCK */
	uint32_t len;  /* data bytes that follow */
	uint64_t off;  /* in the target's window */
	uint64_t id;   /* M_GETREQ/M_GETREP: pending get */
	uint64_t arg;  /* M_GETREQ: bytes asked for; M_FENCE: epoch */
	uint32_t win;  /* window number (in creation order, the same on every rank) */
	uint32_t pad;
};

#define RMA_NSLOT 64 /* outgoing message buffers */

struct rma_slot {
	struct ng_req req;
	bool busy;
};

struct rma_reg {
	unsigned char *base;
	size_t len;
	struct ng_rdma_mr *mr;
	uint64_t used;
};

struct rma {
	struct ng_chan_mod cm; /* first: the two-sided channel and the layer */
	bool sendrecv;
	bool reorder, aggregate;
	size_t agg_max;
	struct ng_chan *ich; /* the operations' channel (sendrecv, aggregate) */
	size_t S;            /* its largest message */
	struct ng_rdma_mr *box_mr;
	unsigned char *inbox;   /* [size][S] */
	unsigned char *outbox;  /* [RMA_NSLOT][S] */
	unsigned char *scratch; /* [S] the message being applied */
	unsigned char *selfbox; /* [S] a message to this rank itself */
	struct ng_req *inreq;   /* [size] */
	struct rma_slot slots[RMA_NSLOT];
	struct rma_msg *replies; /* [RMA_NPEND] queued answers: peer in .excl/.id */
	int *reply_to;
	size_t rq_head, rq_n;
	/* origin memory */
	struct ng_rdma_mr *stage_mr;
	size_t stage_used;
	struct rma_reg cache[RMA_NCACHE];
	uint64_t cache_clock;
	unsigned char **pend; /* [RMA_NPEND] destinations of gets in flight (sendrecv) */
	size_t npend_out;
	uint64_t pend_next;
	struct ng_boot *boot; /* windows are created and freed collectively */
	struct ng_win *wins;
	uint32_t nwins; /* windows created so far */
};

struct ng_win {
	struct rma *m;
	uint32_t id;
	size_t len;
	struct ng_rdma_mr *mem, *ctl;
	struct ng_rdma_rmr *rmem, *rctl; /* [size] */
	uint64_t *wlen;                  /* [size] */
	volatile uint64_t *post, *done, *fbar, *lockw, *accw;
	int nrounds;
	bool in_access, in_expose, in_fence;
	int *acc_grp, nacc, *exp_grp, nexp;
	bool *ingrp;          /* [size] target in the access group */
	uint64_t *post_want;  /* [size] */
	uint64_t *post_seen;  /* [size] sendrecv: POSTs received */
	bool *ready;          /* [size] its post was seen (or: lock held, fence) */
	uint64_t *posts_sent; /* [size] */
	uint64_t *dones_sent; /* [size] */
	uint64_t *done_want;  /* [size] */
	uint64_t *done_seen;  /* [size] sendrecv, aggregate: DONEs received */
	uint64_t *fence_seen; /* [size] sendrecv: FENCE epochs received */
	uint64_t fence_epoch;
	uint8_t *locked;   /* [size] 0, 1 shared, 2 exclusive */
	uint8_t *granted;  /* [size] sendrecv */
	uint8_t *unlacked; /* [size] sendrecv */
	bool *touched;     /* [size] written to in this epoch */
	struct rma_op *ops;
	size_t nops;
	struct rma_copy *copies;
	size_t ncopies;
	unsigned char *agg;   /* [size][S] aggregation (direct, aggregate) */
	size_t *agg_used;     /* [size] */
	int lock_excl_holder; /* sendrecv target */
	int lock_shared;
	int *lock_queue; /* [size] origin + 1, negative: exclusive */
	size_t lq_head, lq_n;
	struct ng_win *next;
};

struct rma_waddr {
	struct ng_rdma_rmr mem, ctl;
	uint64_t len;
};

static inline struct rma *rma_of(struct ng_comm *c)
{
	return ng_container_of(c, struct rma, cm.base);
}

static inline const char *rma_who(const struct rma *m)
{
	return m->cm.base.mod->name;
}

/* The idle step of a wait for @peer; @what says what is awaited. */
static ng_status rma_idle(struct rma *m, int peer, const char *what)
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

/* ---- accumulate: combining -------------------------------------------- */

static size_t rma_type_size(unsigned t)
{
	return t == NG_RMA_INT32 ? 4 : 8;
}

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

static void rma_combine(unsigned char *dst, const unsigned char *src, size_t count, unsigned type,
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

/* Applies the messages in @msg (@n bytes) from @from: state changes only;
 * answers are queued. */
static struct ng_win *rma_win_find(struct rma *m, uint32_t id)
{
	struct ng_win *w = m->wins;

	while (w && w->id != id)
		w = w->next;
	return w;
}

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
		    (h.type == M_GETREP && (h.id >= m->pend_next || !m->pend[h.id % RMA_NPEND]))) {
			ng_error("%s: a malformed request from rank %d", rma_who(m), from);
			return NG_ERR_PROTO;
		}
		switch (h.type) {
		case M_PUT:
			memcpy(win + h.off, msg + sizeof(h), h.len);
			break;
		case M_ACC:
			rma_combine(win + h.off, msg + sizeof(h), h.len / rma_type_size(h.dtype), h.dtype,
			            h.op);
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
static ng_status rma_serve(struct rma *m, bool *seen_p)
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
static ng_status rma_msg_send(struct rma *m, int peer, const struct rma_msg *h, const void *data)
{
	if (peer == m->cm.base.rank)
		return rma_self(m, h, data);
	for (;;) {
		int slot = rma_slot_free(m);
		bool seen = false;
		ng_status st;

		if (slot >= 0)
			return rma_slot_send(m, slot, peer, h, data);
		st = rma_serve(m, &seen);
		if (st == NG_OK && !seen)
			st = rma_idle(m, peer, "took none of our messages");
		if (st != NG_OK)
			return st;
	}
}

/* Sends the prepared messages @buf (@len bytes) to @peer. */
static ng_status rma_msg_send_raw(struct rma *m, int peer, const void *buf, size_t len)
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
		st = rma_serve(m, &seen);
		if (st == NG_OK && !seen)
			st = rma_idle(m, peer, "took none of our messages");
		if (st != NG_OK)
			return st;
	}
}

/* Serves until *@word >= @v (a counter in this process's memory that
 * messages or remote writes advance).  Reaching it is progress for the
 * watchdog: a remote write that ends the wait is an event like a message
 * (else the silence of many satisfied waits adds up to a false timeout). */
static ng_status rma_until(struct rma *m, const volatile uint64_t *word, uint64_t v, int peer,
                           const char *what)
{
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < v) {
		bool seen = false;
		ng_status st = rma_serve(m, &seen);

		if (st == NG_OK && !seen)
			st = rma_idle(m, peer, what);
		if (st != NG_OK)
			return st;
		if (seen)
			m->cm.r->watch.events++;
	}
	m->cm.r->watch.events++; /* the counter moved: progress, not silence */
	return NG_OK;
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
static ng_status rma_settle(struct rma *m)
{
	while (m->ich && (m->npend_out > 0 || m->rq_n > 0 || rma_slots_busy(m))) {
		bool seen = false;
		ng_status st = rma_serve(m, &seen);

		if (st == NG_OK && !seen)
			st = rma_idle(m, -1, "answered none of our requests");
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* ---- epochs and checks ------------------------------------------------ */

static ng_status rma_check(struct rma *m, struct ng_win *w, int target, size_t off, size_t len)
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

/* Whether @t's exposure epoch for the current access epoch was seen. */
static bool rma_ready(struct rma *m, struct ng_win *w, int t)
{
	if (!w->ready[t]) {
		uint64_t seen =
		    m->sendrecv ? w->post_seen[t] : __atomic_load_n(&w->post[RMA_LINE * t], __ATOMIC_ACQUIRE);

		w->ready[t] = seen >= w->post_want[t];
	}
	return w->ready[t];
}

static ng_status rma_wait_ready(struct rma *m, struct ng_win *w, int t)
{
	while (!rma_ready(m, w, t)) {
		bool seen = false;
		ng_status st = rma_serve(m, &seen);

		if (st == NG_OK && !seen)
			st = rma_idle(m, t, "opened no exposure epoch (post)");
		if (st != NG_OK)
			return st;
	}
	/* A post seen is progress for the watchdog (rma_until). */
	m->cm.r->watch.events++;
	return NG_OK;
}

/* ---- the direct design ------------------------------------------------ */

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
		st = rma_wait_ready(m, w, o->target);
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

	if (!m->reorder && rma_ready(m, w, o->target))
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

/* Appends a message to @t's aggregation buffer; false when it is full. */
static bool rma_agg_add(struct rma *m, struct ng_win *w, int t, const struct rma_msg *h, const void *data)
{
	size_t need = sizeof(*h) + ((h->len + 7) & ~(size_t)7);
	unsigned char *b = w->agg + (size_t)t * m->S;

	/* Room for the DONE that ends the message. */
	if (w->agg_used[t] + need + sizeof(*h) > m->S)
		return false;
	memcpy(b + w->agg_used[t], h, sizeof(*h));
	memcpy(b + w->agg_used[t] + sizeof(*h), data, h->len);
	w->agg_used[t] += need;
	return true;
}

/* ---- operations ------------------------------------------------------- */

static ng_status rma_put(struct ng_comm *c, struct ng_win *w, int target, size_t off, const void *origin,
                         size_t len)
{
	struct rma *m = rma_of(c);
	struct rma_op o = {.kind = RMA_PUT, .target = target, .off = off, .len = len, .src = origin};
	ng_status st = rma_check(m, w, target, off, len);

	if (st != NG_OK || !len)
		return st;
	if (m->sendrecv) {
		size_t max = m->S - sizeof(struct rma_msg);

		st = rma_wait_ready(m, w, target);
		for (size_t at = 0; at < len && st == NG_OK; at += max) {
			struct rma_msg h = {.type = M_PUT,
			                    .len = (uint32_t)(len - at < max ? len - at : max),
			                    .off = off + at,
			                    .win = w->id};

			st = rma_msg_send(m, target, &h, (const unsigned char *)origin + at);
		}
		return st;
	}
	if (m->aggregate && w->in_access && len <= m->agg_max) {
		struct rma_msg h = {.type = M_PUT, .len = (uint32_t)len, .off = off, .win = w->id};

		if (rma_agg_add(m, w, target, &h, origin))
			return NG_OK;
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

static ng_status rma_get(struct ng_comm *c, struct ng_win *w, int target, size_t off, void *origin,
                         size_t len)
{
	struct rma *m = rma_of(c);
	struct rma_op o = {.kind = RMA_GET, .target = target, .off = off, .len = len, .dst = origin};
	ng_status st = rma_check(m, w, target, off, len);

	if (st != NG_OK || !len)
		return st;
	if (m->sendrecv) {
		size_t max = m->S - sizeof(struct rma_msg), pieces = (len + max - 1) / max;
		struct rma_msg h = {
		    .type = M_GETREQ, .off = off, .arg = len, .id = m->pend_next, .win = w->id};

		if (m->npend_out + pieces > RMA_NPEND) {
			st = rma_settle(m);
			if (st != NG_OK)
				return st;
		}
		for (size_t i = 0; i < pieces; i++)
			m->pend[(m->pend_next + i) % RMA_NPEND] = (unsigned char *)origin + i * max;
		m->pend_next += pieces;
		m->npend_out += pieces;
		st = rma_wait_ready(m, w, target);
		return st == NG_OK ? rma_msg_send(m, target, &h, NULL) : st;
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
	rma_combine(buf, src, len / rma_type_size(type), type, op);
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

static ng_status rma_accumulate(struct ng_comm *c, struct ng_win *w, int target, size_t off,
                                const void *origin, size_t count, enum ng_rma_type type, enum ng_rma_op op)
{
	struct rma *m = rma_of(c);
	size_t es = rma_type_size(type), len = count * es;
	size_t max = m->sendrecv ? (m->S - sizeof(struct rma_msg)) / es * es : RMA_STAGE / 4 / es * es;
	ng_status st = rma_check(m, w, target, off, len);

	if (st == NG_OK)
		st = rma_wait_ready(m, w, target);
	for (size_t at = 0; at < len && st == NG_OK; at += max) {
		size_t n = len - at < max ? len - at : max;

		if (m->sendrecv) {
			struct rma_msg h = {.type = M_ACC,
			                    .dtype = (uint8_t)type,
			                    .op = (uint8_t)op,
			                    .len = (uint32_t)n,
			                    .off = off + at,
			                    .win = w->id};

			st = rma_msg_send(m, target, &h, (const unsigned char *)origin + at);
		} else {
			st = rma_acc_direct(m, w, target, off + at, (const unsigned char *)origin + at, n,
			                    type, op);
		}
	}
	return st;
}

/* ---- synchronisation -------------------------------------------------- */

static ng_status rma_fence(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	int me = c->rank, n = c->size;
	uint64_t ep = ++w->fence_epoch;
	ng_status st = NG_OK;

	if (w->in_access || w->in_expose) {
		ng_error("%s: fence inside a post/start epoch", rma_who(m));
		return NG_ERR_USAGE;
	}
	if (m->sendrecv) {
		struct rma_msg h = {.type = M_FENCE, .arg = ep, .win = w->id};

		for (int p = 0; p < n && st == NG_OK; p++)
			if (p != me)
				st = rma_msg_send(m, p, &h, NULL);
		for (int p = 0; p < n && st == NG_OK; p++)
			if (p != me)
				st = rma_until(m, &w->fence_seen[p], ep, p, "did not reach the fence");
		if (st == NG_OK)
			st = rma_settle(m);
		w->in_fence = st == NG_OK;
		return st;
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
			st = rma_until(m, &w->fbar[RMA_LINE * k], ep, from, "did not reach the fence");
	}
	w->in_fence = st == NG_OK;
	return st;
}

static ng_status rma_post(struct ng_comm *c, struct ng_win *w, const int *group, int n)
{
	struct rma *m = rma_of(c);
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
	for (int i = 0; i < n && st == NG_OK; i++) {
		int o = group[i];
		uint64_t v = ++w->posts_sent[o], tk;

		w->done_want[o]++;
		if (m->sendrecv) {
			struct rma_msg h = {.type = M_POST, .win = w->id};

			st = rma_msg_send(m, o, &h, NULL);
		} else {
			st = ng_rdma_write(
			    m->cm.r, o, &v, NULL, 8, &w->rctl[o],
			    (uint64_t)((const volatile unsigned char *)&w->post[RMA_LINE * c->rank] -
			               (unsigned char *)w->ctl->base),
			    NG_RDMA_NOTIFY, &tk);
		}
	}
	return st;
}

static ng_status rma_start(struct ng_comm *c, struct ng_win *w, const int *group, int n)
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

static ng_status rma_complete(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	ng_status st = NG_OK;

	if (!w->in_access) {
		ng_error("%s: complete without start", rma_who(m));
		return NG_ERR_USAGE;
	}
	if (!m->sendrecv)
		st = rma_drain(m, w);
	for (int i = 0; i < w->nacc && st == NG_OK; i++) {
		int t = w->acc_grp[i];
		struct rma_msg h = {.type = M_DONE, .win = w->id};
		uint64_t v = ++w->dones_sent[t], tk;

		st = rma_wait_ready(m, w, t);
		if (st != NG_OK)
			break;
		if (m->sendrecv) {
			st = rma_msg_send(m, t, &h, NULL);
		} else if (m->aggregate) {
			/* The epoch's small puts and the DONE in one message. */
			unsigned char *b = w->agg + (size_t)t * m->S;

			if (w->touched[t])
				st = ng_rdma_flush(m->cm.r, t);
			w->touched[t] = false;
			memcpy(b + w->agg_used[t], &h, sizeof(h));
			if (st == NG_OK)
				st = rma_msg_send_raw(m, t, b, w->agg_used[t] + sizeof(h));
			w->agg_used[t] = 0;
		} else {
			if (w->touched[t])
				st = ng_rdma_flush(m->cm.r, t);
			w->touched[t] = false;
			if (st == NG_OK)
				st = ng_rdma_write(
				    m->cm.r, t, &v, NULL, 8, &w->rctl[t],
				    (uint64_t)((const volatile unsigned char *)&w->done[RMA_LINE * c->rank] -
				               (unsigned char *)w->ctl->base),
				    NG_RDMA_NOTIFY, &tk);
		}
	}
	if (st == NG_OK && m->ich)
		st = rma_settle(m);
	for (int i = 0; i < w->nacc; i++)
		w->ingrp[w->acc_grp[i]] = false;
	w->in_access = false;
	return st;
}

static ng_status rma_wait(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	bool msgs = m->sendrecv || m->aggregate;
	ng_status st = NG_OK;

	if (!w->in_expose) {
		ng_error("%s: wait without post", rma_who(m));
		return NG_ERR_USAGE;
	}
	for (int i = 0; i < w->nexp && st == NG_OK; i++) {
		int o = w->exp_grp[i];

		st = rma_until(m, msgs ? &w->done_seen[o] : &w->done[RMA_LINE * o], w->done_want[o], o,
		               "did not complete its access epoch");
	}
	if (st == NG_OK && m->ich)
		st = rma_settle(m);
	w->in_expose = false;
	return st;
}

static ng_status rma_lock(struct ng_comm *c, struct ng_win *w, int target, bool exclusive)
{
	struct rma *m = rma_of(c);
	struct ng_rdma *r = m->cm.r;
	uint64_t lockoff =
	    (uint64_t)((const volatile unsigned char *)w->lockw - (unsigned char *)w->ctl->base);
	uint64_t old, tk, since = 0;
	ng_status st = NG_OK;

	if (target < 0 || target >= c->size) {
		ng_error("%s: lock of rank %d, not a rank of this run (0-%d)", rma_who(m), target,
		         c->size - 1);
		return NG_ERR_USAGE;
	}
	if (w->locked[target]) {
		ng_error("%s: lock of rank %d, which this rank holds already", rma_who(m), target);
		return NG_ERR_USAGE;
	}
	if (m->sendrecv) {
		struct rma_msg h = {.type = M_LOCK, .excl = exclusive, .win = w->id};

		st = rma_msg_send(m, target, &h, NULL);
		while (st == NG_OK && !w->granted[target]) {
			bool seen = false;

			st = rma_serve(m, &seen);
			if (st == NG_OK && !seen)
				st = rma_idle(m, target, "granted no lock");
		}
		w->granted[target] = 0;
	} else {
		for (;;) {
			if (exclusive)
				st = ng_rdma_cas(r, target, &w->rctl[target], lockoff, 0, LOCK_EXCL, &old,
				                 &tk);
			else
				st = ng_rdma_fadd(r, target, &w->rctl[target], lockoff, 1, &old, &tk);
			if (st == NG_OK)
				st = ng_rdma_wait(r, target, tk);
			if (st != NG_OK || (exclusive ? old == 0 : !(old & LOCK_EXCL)))
				break;
			if (!exclusive) {
				st = ng_rdma_fadd(r, target, &w->rctl[target], lockoff, (uint64_t)-1, &old,
				                  &tk);
				if (st == NG_OK)
					st = ng_rdma_wait(r, target, tk);
			}
			if (st == NG_OK)
				st = rma_retry(m, target, "kept its window locked", &since);
			if (st != NG_OK)
				break;
		}
	}
	if (st == NG_OK) {
		w->locked[target] = exclusive ? 2 : 1;
		w->ready[target] = true;
		m->cm.r->watch.events++;
	}
	return st;
}

static ng_status rma_unlock(struct ng_comm *c, struct ng_win *w, int target)
{
	struct rma *m = rma_of(c);
	struct ng_rdma *r = m->cm.r;
	uint64_t lockoff =
	    (uint64_t)((const volatile unsigned char *)w->lockw - (unsigned char *)w->ctl->base);
	uint64_t old, tk;
	ng_status st;

	if (target < 0 || target >= c->size || !w->locked[target]) {
		ng_error("%s: unlock of rank %d without a lock", rma_who(m), target);
		return NG_ERR_USAGE;
	}
	if (m->sendrecv) {
		struct rma_msg h = {.type = M_UNLOCK, .win = w->id};

		st = rma_msg_send(m, target, &h, NULL);
		while (st == NG_OK && !w->unlacked[target]) {
			bool seen = false;

			st = rma_serve(m, &seen);
			if (st == NG_OK && !seen)
				st = rma_idle(m, target, "acknowledged no unlock");
		}
		w->unlacked[target] = 0;
		if (st == NG_OK)
			st = rma_settle(m);
	} else {
		st = rma_drain(m, w);
		if (st == NG_OK && w->touched[target])
			st = ng_rdma_flush(r, target);
		w->touched[target] = false;
		if (st == NG_OK)
			st = ng_rdma_fadd(r, target, &w->rctl[target], lockoff,
			                  w->locked[target] == 2 ? (uint64_t)0 - LOCK_EXCL : (uint64_t)-1,
			                  &old, &tk);
		if (st == NG_OK)
			st = ng_rdma_wait(r, target, tk);
	}
	w->locked[target] = 0;
	w->ready[target] = false;
	return st;
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

static ng_status rma_win_allocate(struct ng_comm *c, size_t len, void **base_p, struct ng_win **win_p)
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

static void rma_win_free(struct ng_comm *c, struct ng_win *w)
{
	struct rma *m = rma_of(c);
	struct ng_win **pp = &m->wins;

	if (!w)
		return;
	/* Collective: nobody frees memory another rank may still access. */
	rma_settle(m);
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
	free(m->replies);
	free(m->reply_to);
	free(m);
}

static ng_status rma_open(const struct ng_module *mod, const struct ng_module_env *env,
                          struct ng_comm **comm_p)
{
	const struct ng_args *a = env->args;
	/* --rma-design direct|sendrecv; --rma-sched none|reorder|aggregate|all:
	 * bit 0 reorder, bit 1 aggregate. */
	int design = ng_args_choice(a, "rma-design"), sched = ng_args_choice(a, "rma-sched");
	struct ng_chan_conf cf;
	struct rma *m;
	size_t n = (size_t)env->boot->size;
	ng_status st = ng_chan_conf_read(env, &cf);

	*comm_p = NULL;
	if (st != NG_OK)
		return st;
	m = calloc(1, sizeof(*m));
	if (!m) {
		ng_error("%s: out of memory", mod->name);
		return NG_ERR_NOMEM;
	}
	m->boot = env->boot;
	m->sendrecv = design == 1;
	m->reorder = !m->sendrecv && (sched & 1);
	m->aggregate = !m->sendrecv && (sched & 2);
	m->agg_max = ng_args_size(a, "rma-aggregate");
	st = ng_chan_mod_init(&m->cm, mod, mod, env, &cf);
	if (st != NG_OK) {
		free(m);
		return st;
	}
	m->S = cf.eager;
	m->pend = calloc(RMA_NPEND, sizeof(*m->pend));
	m->replies = calloc(RMA_NPEND, sizeof(*m->replies));
	m->reply_to = calloc(RMA_NPEND, sizeof(*m->reply_to));
	m->inreq = calloc(n, sizeof(*m->inreq));
	m->scratch = malloc(m->S);
	m->selfbox = malloc(m->S);
	if (!m->selfbox || !m->pend || !m->replies || !m->reply_to || !m->inreq || !m->scratch) {
		ng_error("%s: out of memory", mod->name);
		st = NG_ERR_NOMEM;
		goto err;
	}
	st = ng_rdma_mem_alloc(m->cm.r, RMA_STAGE, &m->stage_mr);
	if (st != NG_OK)
		goto err;
	if (m->sendrecv || m->aggregate) {
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
		         m->sendrecv ? "sendrecv" : "direct", m->reorder ? " reorder" : "",
		         m->aggregate ? " aggregate" : "");
	}
	*comm_p = &m->cm.base;
	return NG_OK;

err:
	rma_close(&m->cm.base);
	return st;
}

/* clang-format off */
static const struct ng_option rma_own_options[] = {
	{ .name = "rma-design", .type = NG_OPT_CHOICE, .def = "direct", .choices = "direct|sendrecv",
	  .help = "rma: direct (put = RDMA write, get = RDMA read, flags by RDMA; no target involvement), or "
	          "sendrecv (operations shipped as messages, applied by the target in its synchronisation calls)" },
	{ .name = "rma-sched", .type = NG_OPT_CHOICE, .def = "none", .choices = "none|reorder|aggregate|all",
	  .help = "rma direct: scheduling within an epoch: reorder (gets first, reads and writes interleaved), "
	          "aggregate (small operations travel with the epoch's completion message), all (both)" },
	{ .name = "rma-aggregate", .type = NG_OPT_SIZE, .def = "256",
	  .help = "rma: operations up to this many bytes are aggregated (--rma-sched aggregate|all)" },
	{ .name = NULL },
};
/* clang-format on */

/* The layer's options, the channel's, its own. */
static const struct ng_option *const rma_options[] = {ng_rdma_options, ng_chan_options, rma_own_options,
                                                      NULL};

static const struct ng_rma_ops rma_ops = {
    .win_allocate = rma_win_allocate,
    .win_free = rma_win_free,
    .put = rma_put,
    .get = rma_get,
    .accumulate = rma_accumulate,
    .fence = rma_fence,
    .post = rma_post,
    .start = rma_start,
    .complete = rma_complete,
    .wait = rma_wait,
    .lock = rma_lock,
    .unlock = rma_unlock,
};

const struct ng_module ng_module_rma = {
    .name = "rma",
    .desc =
        "MPI-2 one-sided communication over the RDMA layer (--rma-design direct|sendrecv, --rma-sched), and "
        "the rdma module's two-sided channel",
    .options = rma_options,
    .reads = ng_rdma_reads,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK |
            NG_CAP_ONESIDED,
    .open = rma_open,
    .close = rma_close,
    .alloc = ng_chan_mod_alloc,
    .free = ng_chan_mod_free,
    .msg = &ng_chan_msg_ops,
    .rma = &rma_ops,
};
