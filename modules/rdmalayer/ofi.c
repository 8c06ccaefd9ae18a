/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "ofi" backend of the RDMA layer (rdma.h): libfabric, one reliable
 * datagram endpoint (FI_EP_RDM) per rank with FI_RMA | FI_ATOMIC, so one
 * code path reaches EFA, Slingshot (cxi), Omni-Path (psm3), verbs;ofi_rxm,
 * and here the shm and tcp;ofi_rxm providers.
 *
 * Provider.  --ofi-provider NAME, else the first provider fi_getinfo lists
 * that is not sockets, net or udp;ofi_rxd (they claim RMA but do not
 * progress usefully: a busy thread per endpoint, atomics that return
 * -FI_ENOSYS), and not shm when the ranks are on several hosts.  Every rank
 * must end on the same provider (checked).  When all ranks share one host,
 * the endpoint is bound to 127.0.0.1 (FI_SOURCE), so that a network
 * provider never sends a byte off the machine.
 *
 * Hints: every memory-registration mode bit this code honours (FI_MR_LOCAL:
 * local buffers are registered or staged; VIRT_ADDR: remote address is the
 * virtual address, else the offset; ALLOCATED; PROV_KEY; ENDPOINT: bound and
 * enabled), FI_CONTEXT/FI_CONTEXT2 (every operation carries its own context),
 * and automatic data progress where the provider grants it (tcp;ofi_rxm does
 * with FI_ATOMIC in the caps; shm refuses it, then manual progress).
 * NG_RDMA_CAP_PROGRESS is set only when automatic progress was granted
 * (never for shm: its atomics, first contacts and, once ordering is asked
 * for, its writes wait for the target's progress).
 *
 * Semantics.  A notice must land after the data it covers and flush must
 * mean placed: asked for, never assumed.  First ordered writes and reads
 * (FI_ORDER_WAW | FI_ORDER_RAW in tx_attr and rx_attr->msg_order, checked
 * as granted: shm grants them); else delivery completion
 * (FI_DELIVERY_COMPLETE in tx_attr->op_flags, checked: tcp;ofi_rxm, whose
 * own order is only RAS/WAS/SAS); a provider with neither is refused, naming
 * it and what it lacks.  The mode is in the description ("ordered",
 * "delivery-complete").
 *
 * Completion.  Every operation has a context in a ring per peer, indexed by
 * its ticket; the completion queue marks contexts done, and the peer's
 * completed count advances over the finished prefix (providers may complete
 * out of order).  Unregistered pieces of a write are copied into the peer's
 * staging ring (rdma.h: registered at the first staged operation to that
 * peer, ng_rdma_stage_bytes(stage_max)), registered pieces are posted with
 * their own descriptors: under FI_MR_LOCAL no descriptor is ever NULL.  More
 * pieces than the provider's iov_limit are staged together, or written one
 * by one when too large.  Atomics use staged operands and result, copied to
 * *old_p at completion.  A post answered with -FI_EAGAIN makes progress and
 * tries again.  Writes and reads above the provider's max_msg_size are
 * split (rdma.h, Lengths).
 *
 * Notices (NG_RDMA_NOTIFY).  The body, then the last 8 bytes as a write of
 * their own: within ONE write no provider orders the last word after the
 * rest (a provider's copy is one string operation whose stores another core
 * may see in any order: with body and notice in one write over shm, spipe
 * --verify found a notice visible before bytes hundreds of bytes ahead of
 * it).  Ordered: the word is posted right after the body.  Delivery-complete:
 * every write carries FI_DELIVERY_COMPLETE, and the word waits until every
 * earlier write to the peer has completed.  A write of blocks
 * (NG_RDMA_BLOCKS) is one notified write per piece.
 *
 * flush(peer): every operation to the peer completes; ordered, then an
 * 8-byte read from the peer, which FI_ORDER_RAW answers after the writes.
 *
 * Tests: NGAUGE_OFI_FAULT=late turns the provider into one that completes a
 * plain write at once and places its second half only after OFI_LATE
 * rounds of progress and grants no ordering;
 * NGAUGE_OFI_FAULT=late-nodc grants no delivery completion either (refused).
 * NGAUGE_OFI_SEM=ordered|delivery|assume forces a mode; "assume" is the
 * former behaviour: plain writes and the order taken for granted
 * (tests/integration/ofi_order.sh shows it failing --verify under the
 * fault, and the default passing).

 * Registrations.  libfabric's own registration cache (FI_MR_CACHE_MAX_COUNT,
 * on by default for verbs and others) is turned off at open, before the
 * first libfabric call, unless the user set that variable to something else
 * (then the description says so).  Two reasons: a registration is what
 * spipe's reg mode measures and what its rcache mode caches itself, so a
 * cache below would report a lookup as a registration; and verbs;ofi_rxm
 * with FI_ATOMIC refuses a second registration of memory the cache already
 * holds ("MR map insert for atomic verification failed", -FI_ENOKEY: the
 * rma pattern's windows inside allocated memory hit it).  A libfabric that
 * an MPI library of the same process initialised earlier keeps its cache.
 *
 * Keys and bounds: the shm provider ignores keys on its fast path, so every
 * access is checked against the descriptor (ng_rdma_bounds) before it is
 * posted, on every provider.
 *
 * Connection: the first operation to a peer returns -FI_EAGAIN until the
 * peer progresses, so open() ends with two rounds in which every rank writes
 * a word at every other rank and progresses until it has everybody's.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "module.h"
#include "modules/rdmalayer/ofi_name.h"
#include "modules/rdmalayer/rdma.h"
#include "peer.h"

#define OFI_DEPTH   128u /* operations in flight per peer */
#define OFI_NAMELEN 256u
#define OFI_POLL    16
#define OFI_ORDER   (FI_ORDER_WAW | FI_ORDER_RAW) /* what notices and flush need, ordered */
#define OFI_HELD    64u                           /* test fault: pieces held back at most */
#define OFI_ARENA   ((size_t)8 << 20)             /* test fault: copies of held writes */
#define OFI_FOPS    1024u                         /* test fault: contexts of held pieces */
#define OFI_LATE    64u                           /* test fault: progress rounds a piece is held */

/* How notices and flush are made safe (see the top). */
enum ofi_sem { OFI_SEM_ORDERED, OFI_SEM_DELIVERY, OFI_SEM_ASSUME };
static const char *const ofi_sem_names[] = {"ordered", "delivery-complete", "assumed order"};

struct ofi_op {
	struct fi_context2 fctx; /* first: the provider's */
	uint64_t ticket;
	uint64_t *old_p;     /* atomic: where the old value goes */
	const uint64_t *res; /* atomic: where the provider put it (staging) */
	int peer;            /* -1: a held piece of the test fault (not counted) */
	bool done;
};

struct ofi_mr {
	struct ng_rdma_mr pub; /* first */
	struct fid_mr *mr;
	void *desc;
	void *raw; /* mem_alloc: what to free */
};

/* Test fault: a piece of a write posted late. */
struct ofi_held {
	int peer;
	void *src;
	size_t len;
	uint64_t addr, key;
};

struct ofi {
	struct ng_rdma base; /* first */
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t *addr;             /* [size] */
	struct ofi_op *ops;          /* [size][OFI_DEPTH] */
	struct ng_rdma_stage *stage; /* [size]: staging rings, allocated when first used */
	struct ofi_mr *ctl;          /* [size] words: connection rounds, flush reads */
	struct ng_rdma_rmr *rctl;    /* [size] */
	char cache[12];              /* the user's FI_MR_CACHE_MAX_COUNT when not 0, else "" */
	uint64_t next_key;
	uint64_t wflags; /* of every write: FI_DELIVERY_COMPLETE in that mode */
	size_t iov_limit;
	enum ofi_sem sem;
	bool virt, local, prov_key, ep_bind;
	/* The test fault (NGAUGE_OFI_FAULT=late). */
	bool fault, releasing;
	struct ofi_mr *arena;
	size_t arena_at;
	struct ofi_held held[OFI_HELD];
	unsigned nheld, idle;
	struct ofi_op *fops; /* [OFI_FOPS] */
	size_t fop;
	char prov[64];
};

static inline struct ofi *ofi_of(struct ng_rdma *r)
{
	return ng_container_of(r, struct ofi, base);
}

/* ---- completions ------------------------------------------------------ */

static ng_status __attribute__((cold)) ofi_cq_error(struct ofi *o)
{
	struct fi_cq_err_entry e = {0};
	struct ofi_op *op;
	char buf[256];

	if (fi_cq_readerr(o->cq, &e, 0) < 0) {
		ng_error("%s: ofi: reading a completion error failed", o->base.who);
		return NG_ERR_IO;
	}
	op = e.op_context;
	/* A peer that stopped first, interrupted, is no fault. */
	if (ng_watch_cancelled(&o->base.watch))
		return NG_ERR_CANCELLED;
	ng_error("%s: ofi: an operation on rank %d failed: %s", o->base.who, op ? op->peer : -1,
	         fi_cq_strerror(o->cq, e.prov_errno, e.err_data, buf, sizeof(buf)));
	return NG_ERR_PEER_LOST;
}

/* Marks @op done and advances its peer's finished prefix. */
static void ofi_complete(struct ofi *o, struct ofi_op *op)
{
	struct ng_rdma *r = &o->base;
	int p = op->peer;

	op->done = true;
	if (op->old_p) {
		*op->old_p = *op->res;
		op->old_p = NULL;
	}
	while (r->completed[p] < r->issued[p]) {
		struct ofi_op *q = &o->ops[(size_t)p * OFI_DEPTH + (r->completed[p] + 1) % OFI_DEPTH];

		if (!q->done || q->ticket != r->completed[p] + 1)
			break;
		q->done = false;
		r->completed[p]++;
	}
}

static ng_status ofi_release(struct ofi *o, unsigned upto);

static ng_status ofi_progress(struct ng_rdma *r)
{
	struct ofi *o = ofi_of(r);
	struct fi_cq_entry ent[OFI_POLL];
	ssize_t n;

	/* Test fault: held pieces go out a round of progress later. */
	if (o->nheld && !o->releasing && ++o->idle >= OFI_LATE) {
		ng_status st = ofi_release(o, o->nheld);

		if (st != NG_OK)
			return st;
	}
	n = fi_cq_read(o->cq, ent, OFI_POLL);
	if (n == -FI_EAGAIN)
		return NG_OK;
	if (n == -FI_EAVAIL)
		return ofi_cq_error(o);
	if (n < 0) {
		ng_error("%s: ofi: polling the completion queue: %s", r->who, fi_strerror((int)-n));
		return NG_ERR_IO;
	}
	for (ssize_t i = 0; i < n; i++) {
		struct ofi_op *op = ent[i].op_context;

		if (op->peer < 0)
			continue;
		ofi_complete(o, op);
		r->watch.events++;
	}
	return NG_OK;
}

/* The context of the next operation to @peer (waits for room). */
static ng_status ofi_next(struct ofi *o, int peer, struct ofi_op **op_p)
{
	struct ng_rdma *r = &o->base;
	uint64_t t = r->issued[peer] + 1;
	size_t i = (size_t)peer * OFI_DEPTH + t % OFI_DEPTH;
	ng_status st;

	while (t - r->completed[peer] > OFI_DEPTH) {
		st = ofi_progress(r);
		if (st == NG_OK)
			st = ng_watch_idle(&r->watch);
		if (st == NG_ERR_TIMEOUT) {
			ng_error("%s: ofi: rank %d lost (no completion for %.0f s)", r->who, peer,
			         (double)r->watch.timeout_ns / 1e9);
			return NG_ERR_PEER_LOST;
		}
		if (st != NG_OK)
			return st;
	}
	*op_p = &o->ops[i];
	**op_p = (struct ofi_op){.ticket = t, .peer = peer};
	return NG_OK;
}

/* Posts with @call until it is not -FI_EAGAIN (making progress meanwhile);
 * @count: then the operation's ticket is taken. */
#define OFI_TRY(o, peer, what, call, count)                                                                  \
	do {                                                                                                 \
		ssize_t rc_;                                                                                 \
		while ((rc_ = (call)) == -FI_EAGAIN) {                                                       \
			ng_status st_ = ofi_progress(&(o)->base);                                            \
			if (st_ == NG_OK)                                                                    \
				st_ = ng_watch_idle(&(o)->base.watch);                                       \
			if (st_ == NG_ERR_TIMEOUT) {                                                         \
				ng_error("%s: ofi: rank %d lost (%s refused for %.0f s)", (o)->base.who,     \
				         peer, what, (double)(o)->base.watch.timeout_ns / 1e9);              \
				return NG_ERR_PEER_LOST;                                                     \
			}                                                                                    \
			if (st_ != NG_OK)                                                                    \
				return st_;                                                                  \
		}                                                                                            \
		if (rc_) {                                                                                   \
			ng_error("%s: ofi: %s to rank %d: %s", (o)->base.who, what, peer,                    \
			         fi_strerror((int)-rc_));                                                    \
			return NG_ERR_IO;                                                                    \
		}                                                                                            \
		if (count) {                                                                                 \
			(o)->base.issued[peer]++;                                                            \
			ng_rdma_stage_mark(&(o)->stage[peer], OFI_DEPTH, (o)->base.issued[peer]);            \
		}                                                                                            \
	} while (0)
#define OFI_POST(o, peer, what, call) OFI_TRY(o, peer, what, call, true)

static inline void *ofi_desc(const struct ng_rdma_mr *mr)
{
	return mr ? ((const struct ofi_mr *)(const void *)mr)->desc : NULL;
}

/* ---- the test fault: a provider that completes writes before placing them,
 * and places them late ---------------------------------------------------- */

static ng_status ofi_post_held(struct ofi *o, struct ofi_held *h)
{
	struct ofi_op *op = &o->fops[o->fop++ % OFI_FOPS];

	*op = (struct ofi_op){.peer = -1};
	OFI_TRY(o, h->peer, "an RDMA write",
	        fi_write(o->ep, h->src, h->len, o->arena->desc, o->addr[h->peer], h->addr, h->key, op),
	        false);
	return NG_OK;
}

/* Posts the held pieces [0, @upto), oldest first. */
static ng_status ofi_release(struct ofi *o, unsigned upto)
{
	ng_status st = NG_OK;
	unsigned i;

	o->releasing = true;
	for (i = 0; i < upto && st == NG_OK; i++)
		st = ofi_post_held(o, &o->held[i]);
	memmove(o->held, o->held + i, (o->nheld - i) * sizeof(*o->held));
	o->nheld -= i;
	o->idle = 0;
	o->releasing = false;
	return st;
}

/* A plain write under the fault: copied, completed at once, its first half
 * posted now and its second held back for OFI_LATE rounds of progress. */
static ng_status ofi_fault_write(struct ofi *o, int peer, const struct iovec *v, size_t n, size_t total,
                                 uint64_t addr, uint64_t key, struct ofi_op *op)
{
	unsigned char *dst;
	size_t half = total >= 16 ? total / 2 / 8 * 8 : total, at = 0;
	ng_status st;

	if (o->nheld + 2 > OFI_HELD) {
		st = ofi_release(o, o->nheld);
		if (st != NG_OK)
			return st;
	}
	if (o->arena_at + total > OFI_ARENA)
		o->arena_at = 0;
	dst = (unsigned char *)o->arena->pub.base + o->arena_at;
	o->arena_at += (total + 63) / 64 * 64;
	for (size_t i = 0; i < n; i++) {
		memcpy(dst + at, v[i].iov_base, v[i].iov_len);
		at += v[i].iov_len;
	}
	st = ofi_post_held(
	    o, &(struct ofi_held){.peer = peer, .src = dst, .len = half, .addr = addr, .key = key});
	if (st == NG_OK && half < total)
		o->held[o->nheld++] = (struct ofi_held){
		    .peer = peer, .src = dst + half, .len = total - half, .addr = addr + half, .key = key};
	o->base.issued[peer]++;
	ng_rdma_stage_mark(&o->stage[peer], OFI_DEPTH, o->base.issued[peer]);
	ofi_complete(o, op);
	return st;
}

/* ---- operations ------------------------------------------------------- */

/* One write of @iov[0..n) (@total bytes, at most max_write) without a
 * notice: registered pieces as they are, the others staged. */
static ng_status ofi_put(struct ofi *o, int peer, const struct ng_rdma_iov *iov, unsigned n, size_t total,
                         const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	struct ng_rdma *r = &o->base;
	struct iovec v[NG_RDMA_IOV_MAX];
	void *d[NG_RDMA_IOV_MAX];
	size_t unreg = 0, nv = 0, at = 0;
	unsigned char *stage = NULL;
	struct ofi_op *op;
	ng_status st;

	for (unsigned i = 0; i < n; i++)
		unreg += iov[i].mr ? 0 : iov[i].len;
	/* More pieces than the provider takes in one write: all staged when
	 * they fit, else a write per piece (unordered: there is no notice). */
	if (n > o->iov_limit && unreg < total && total > r->stage_max) {
		uint64_t t = 0;

		*t_p = 0;
		for (unsigned i = 0; i < n; i++) {
			st = ofi_put(o, peer, &iov[i], 1, iov[i].len, rm, off + at, &t);
			if (st != NG_OK)
				return st;
			if (t > *t_p)
				*t_p = t;
			at += iov[i].len;
		}
		return NG_OK;
	}
	if (n > o->iov_limit)
		unreg = total;
	st = ofi_next(o, peer, &op);
	if (st == NG_OK && unreg)
		st = ng_rdma_stage_take(r, &o->stage[peer], peer, OFI_DEPTH, unreg, &stage);
	if (st != NG_OK)
		return st;
	for (unsigned i = 0; i < n; i++) {
		const struct ng_rdma_iov *p = &iov[i];

		if (!p->len)
			continue;
		if (p->mr && unreg < total) {
			v[nv] = (struct iovec){(void *)(uintptr_t)p->addr, p->len};
			d[nv++] = ofi_desc(p->mr);
			continue;
		}
		memcpy(stage + at, p->addr, p->len);
		/* Consecutive staged pieces share one entry. */
		if (nv && d[nv - 1] == o->stage[peer].mr &&
		    (unsigned char *)v[nv - 1].iov_base + v[nv - 1].iov_len == stage + at)
			v[nv - 1].iov_len += p->len;
		else {
			v[nv] = (struct iovec){stage + at, p->len};
			d[nv++] = o->stage[peer].mr;
		}
		at += p->len;
	}
	/* The staged entries' descriptor (marked by the ring's handle above). */
	for (size_t i = 0; i < nv; i++)
		if (stage && d[i] == o->stage[peer].mr)
			d[i] = ofi_desc(o->stage[peer].mr);
	if (o->fault && !(o->wflags & FI_DELIVERY_COMPLETE)) {
		st = ofi_fault_write(o, peer, v, nv, total, rm->addr + off, rm->key, op);
	} else {
		struct fi_rma_iov ri = {.addr = rm->addr + off, .len = total, .key = rm->key};
		struct fi_msg_rma msg = {.msg_iov = v,
		                         .desc = d,
		                         .iov_count = nv,
		                         .addr = o->addr[peer],
		                         .rma_iov = &ri,
		                         .rma_iov_count = 1,
		                         .context = op};

		OFI_POST(o, peer, "an RDMA write", fi_writemsg(o->ep, &msg, FI_COMPLETION | o->wflags));
		st = NG_OK;
	}
	*t_p = unreg == total ? 0 : r->issued[peer];
	return st;
}

/* A write whose last 8 bytes are a notice: the body, then the word as a
 * write of its own, once the mode makes it land after everything before
 * it (see the top). */
static ng_status ofi_notify(struct ofi *o, int peer, const struct ng_rdma_iov *iov, unsigned n, size_t total,
                            const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	struct ng_rdma_iov body[NG_RDMA_IOV_MAX], w[NG_RDMA_IOV_MAX], tail;
	unsigned nb = ng_rdma_iov_slice(iov, n, 0, total - 8, body);
	unsigned nw = ng_rdma_iov_slice(iov, n, total - 8, 8, w);
	unsigned char word[8];
	uint64_t tb = 0;
	size_t at = 0;
	ng_status st = NG_OK;

	for (unsigned i = 0; i < nw; i++) {
		memcpy(word + at, w[i].addr, w[i].len);
		at += w[i].len;
	}
	if (total > 8)
		st = ofi_put(o, peer, body, nb, total - 8, rm, off, &tb);
	/* Delivery-complete: every earlier write to the peer is placed once
	 * complete. */
	if (st == NG_OK && o->sem == OFI_SEM_DELIVERY)
		st = ng_rdma_wait_all(&o->base, peer);
	tail = (struct ng_rdma_iov){word, 8, NULL};
	if (st == NG_OK)
		st = ofi_put(o, peer, &tail, 1, 8, rm, off + total - 8, t_p);
	if (st == NG_OK && !*t_p)
		*t_p = tb;
	return st;
}

static ng_status ofi_write(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                           const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags, uint64_t *t_p)
{
	struct ofi *o = ofi_of(r);
	size_t total = 0;
	ng_status st;

	for (unsigned i = 0; i < n; i++)
		total += iov[i].len;
	st = ng_rdma_bounds(r, peer, rm, off, total);
	if (st != NG_OK)
		return st;
	if (flags & NG_RDMA_F_BLOCKS)
		return ng_rdma_write_pieces(r, peer, &iov[0], rm, off, NG_RDMA_BLOCK_SHIFT(flags), t_p);
	if (r->max_write && total > r->max_write)
		return ng_rdma_write_split(r, peer, iov, n, total, rm, off, flags, t_p);
	if (flags & NG_RDMA_NOTIFY)
		return ofi_notify(o, peer, iov, n, total, rm, off, t_p);
	return ofi_put(o, peer, iov, n, total, rm, off, t_p);
}

static ng_status ofi_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
                          const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	struct ofi *o = ofi_of(r);
	struct ofi_op *op;
	ng_status st = ng_rdma_bounds(r, peer, rm, off, len);

	if (st != NG_OK)
		return st;
	/* Longer than the provider's largest message: consecutive reads. */
	while (r->max_write && len > r->max_write) {
		st = ofi_read(r, peer, dst, mr, r->max_write, rm, off, t_p);
		if (st != NG_OK)
			return st;
		dst = (unsigned char *)dst + r->max_write;
		off += r->max_write;
		len -= r->max_write;
	}
	st = ofi_next(o, peer, &op);
	if (st != NG_OK)
		return st;
	OFI_POST(o, peer, "an RDMA read",
	         fi_read(o->ep, dst, len, ofi_desc(mr), o->addr[peer], rm->addr + off, rm->key, op));
	*t_p = r->issued[peer];
	return NG_OK;
}

static ng_status ofi_atomic(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
                            uint64_t off, uint64_t operand, uint64_t compare, uint64_t *old_p, uint64_t *t_p)
{
	struct ofi *o = ofi_of(r);
	struct ofi_op *op;
	unsigned char *stage;
	uint64_t *v;
	void *desc;
	ng_status st = ng_rdma_bounds(r, peer, rm, off, 8);

	if (st == NG_OK)
		st = ofi_next(o, peer, &op);
	if (st == NG_OK)
		st = ng_rdma_stage_take(r, &o->stage[peer], peer, OFI_DEPTH, 24, &stage);
	if (st != NG_OK)
		return st;
	desc = ofi_desc(o->stage[peer].mr);
	v = (uint64_t *)(void *)stage; /* [0] operand, [1] compare, [2] result */
	v[0] = operand;
	v[1] = compare;
	op->old_p = old_p;
	op->res = &v[2];
	if (aop == NG_RDMA_CAS)
		OFI_POST(o, peer, "a compare-and-swap",
		         fi_compare_atomic(o->ep, &v[0], 1, desc, &v[1], desc, &v[2], desc, o->addr[peer],
		                           rm->addr + off, rm->key, FI_UINT64, FI_CSWAP, op));
	else
		OFI_POST(o, peer, "a fetch-and-add",
		         fi_fetch_atomic(o->ep, &v[0], 1, desc, &v[2], desc, o->addr[peer], rm->addr + off,
		                         rm->key, FI_UINT64, FI_SUM, op));
	*t_p = r->issued[peer];
	return NG_OK;
}

static ng_status ofi_flush(struct ng_rdma *r, int peer)
{
	struct ofi *o = ofi_of(r);
	ng_status st = ng_rdma_wait_all(r, peer);
	uint64_t t;

	/* Delivery-complete writes are placed once complete. */
	if (st != NG_OK || o->sem == OFI_SEM_DELIVERY)
		return st;
	/* Ordered: a read after the writes (FI_ORDER_RAW) is answered after them. */
	st = ofi_read(r, peer, (unsigned char *)o->ctl->pub.base + (size_t)r->rank * 8 + 8 * (size_t)r->size,
	              &o->ctl->pub, 8, &o->rctl[peer], 0, &t);
	return st == NG_OK ? ng_rdma_wait(r, peer, t) : st;
}

/* ---- memory ----------------------------------------------------------- */

static ng_status ofi_reg(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p)
{
	struct ofi *o = ofi_of(r);
	struct ofi_mr *m = calloc(1, sizeof(*m));
	uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	int rc;

	if (!m) {
		ng_error("%s: out of memory", r->who);
		return NG_ERR_NOMEM;
	}
	rc = fi_mr_reg(o->domain, buf, len, access, 0, o->prov_key ? 0 : ++o->next_key, 0, &m->mr, NULL);
	if (rc)
		m->mr = NULL; /* a failed fi_mr_reg has freed what it made (verbs;ofi_rxm) */
	if (!rc && o->ep_bind) {
		rc = fi_mr_bind(m->mr, &o->ep->fid, 0);
		if (!rc)
			rc = fi_mr_enable(m->mr);
	}
	if (rc) {
		ng_error("%s: ofi: registering %zu bytes: %s%s", r->who, len, fi_strerror(-rc),
		         rc == -FI_ENOKEY && *o->cache
		             ? " (libfabric's registration cache gave a registration the provider already "
		               "has a key for: FI_MR_CACHE_MAX_COUNT=0 turns the cache off)"
		             : "");
		if (m->mr)
			fi_close(&m->mr->fid);
		free(m);
		return NG_ERR_SYS;
	}
	m->desc = fi_mr_desc(m->mr);
	m->pub.base = buf;
	m->pub.len = len;
	m->pub.remote = (struct ng_rdma_rmr){
	    .addr = o->virt ? (uint64_t)(uintptr_t)buf : 0, .len = len, .key = fi_mr_key(m->mr)};
	*mr_p = &m->pub;
	return NG_OK;
}

static void ofi_dereg(struct ng_rdma *r, struct ng_rdma_mr *pub)
{
	struct ofi_mr *m = (struct ofi_mr *)(void *)pub;

	(void)r;
	fi_close(&m->mr->fid);
	free(m->raw);
	free(m);
}

static ng_status ofi_mem_alloc(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p)
{
	size_t plen = (len + 4095) / 4096 * 4096;
	void *buf = aligned_alloc(4096, plen ? plen : 4096);
	ng_status st;

	if (!buf) {
		ng_error("%s: out of memory for %zu bytes", r->who, len);
		return NG_ERR_NOMEM;
	}
	memset(buf, 0, plen ? plen : 4096);
	st = ofi_reg(r, buf, plen ? plen : 4096, mr_p);
	if (st != NG_OK) {
		free(buf);
		return st;
	}
	((struct ofi_mr *)(void *)*mr_p)->raw = buf;
	return NG_OK;
}

/* ---- open and close --------------------------------------------------- */

static void ofi_close(struct ng_rdma *r)
{
	struct ofi *o = ofi_of(r);

	for (int p = 0; o->stage && p < r->size; p++)
		ng_rdma_stage_free(r, &o->stage[p]);
	if (o->arena)
		ofi_dereg(r, &o->arena->pub);
	if (o->ctl)
		ofi_dereg(r, &o->ctl->pub);
	if (o->ep)
		fi_close(&o->ep->fid);
	if (o->av)
		fi_close(&o->av->fid);
	if (o->cq)
		fi_close(&o->cq->fid);
	if (o->domain)
		fi_close(&o->domain->fid);
	if (o->fabric)
		fi_close(&o->fabric->fid);
	if (o->info)
		fi_freeinfo(o->info);
	free(o->addr);
	free(o->ops);
	free(o->fops);
	free(o->stage);
	free(o->rctl);
	ng_rdma_base_fini(r);
	free(o);
}

/* Whether @i is bound to 127.0.0.1. */
/* Whether provider @prov ("tcp;ofi_rxm", "verbs;ofi_rxm", "shm", ...) pins
 * what it registers: a provider for a device does (verbs, efa, cxi, psm3,
 * opx ...); the software providers (and utility layers) over sockets or
 * shared memory register keys only. */
static bool ofi_pins(const char *prov)
{
	static const char *const soft[] = {"tcp",     "udp", "shm",     "sm2",
	                                   "sockets", "net", "ofi_rxm", "ofi_rxd"};
	const char *p = prov;

	while (*p) {
		size_t n = strcspn(p, ";"), i;

		for (i = 0; i < sizeof(soft) / sizeof(soft[0]); i++)
			if (strlen(soft[i]) == n && strncmp(p, soft[i], n) == 0)
				break;
		if (n && i == sizeof(soft) / sizeof(soft[0]))
			return true;
		p += n + (p[n] == ';');
	}
	return false;
}

static bool ofi_loopback(const struct fi_info *i)
{
	const struct sockaddr_in *a = i->src_addr;

	return i->addr_format == FI_SOCKADDR_IN && a && i->src_addrlen >= sizeof(*a) &&
	       a->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
}

static bool ofi_useless(const char *prov)
{
	return strcmp(prov, "sockets") == 0 || strcmp(prov, "net") == 0 || strncmp(prov, "udp", 3) == 0;
}

/* The fi_info of provider @prov (NULL: the first useful one) with or
 * without automatic progress, not shm unless @shm_ok when none is named,
 * asking for the semantics @sem (ordered:
 * FI_ORDER_WAW | FI_ORDER_RAW; delivery-complete: FI_DELIVERY_COMPLETE;
 * assumed: nothing) (a copy), or NULL with *@why_p. */
static struct fi_info *ofi_pick(const char *prov, bool one_host, bool shm_ok, bool autoprog, enum ofi_sem sem,
                                const char **why_p)
{
	struct fi_info *hints = fi_allocinfo(), *list = NULL, *pick = NULL;
	int rc;

	if (!hints) {
		*why_p = "out of memory";
		return NULL;
	}
	hints->caps = FI_RMA | FI_ATOMIC;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode =
	    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	if (autoprog)
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	if (sem == OFI_SEM_ORDERED) {
		hints->tx_attr->msg_order = OFI_ORDER;
		hints->rx_attr->msg_order = OFI_ORDER;
	} else if (sem == OFI_SEM_DELIVERY) {
		hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	}
	if (prov)
		hints->fabric_attr->prov_name = strdup(prov);
	/* Socket providers on one host: bound to loopback (shm has no
	 * address; it would give every rank the same name; an RDMA device
	 * such as verbs' has no loopback address and loops back itself). */
	rc = one_host && prov && strncmp(prov, "tcp", 3) == 0
	         ? fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", NULL, FI_SOURCE, hints, &list)
	         : -FI_ENODATA;
	if (rc)
		rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &list);
	fi_freeinfo(hints);
	if (rc) {
		*why_p = fi_strerror(-rc);
		return NULL;
	}
	for (struct fi_info *i = list; i && !pick; i = i->next) {
		const char *p = i->fabric_attr->prov_name;

		if (!prov && (ofi_useless(p) || (!shm_ok && strcmp(p, "shm") == 0)))
			continue;
		/* What was asked must have been granted. */
		if (sem == OFI_SEM_ORDERED && ((i->tx_attr->msg_order & OFI_ORDER) != OFI_ORDER ||
		                               (i->rx_attr->msg_order & OFI_ORDER) != OFI_ORDER))
			continue;
		if (sem == OFI_SEM_DELIVERY && !(i->tx_attr->op_flags & FI_DELIVERY_COMPLETE))
			continue;
		pick = fi_dupinfo(i);
	}
	fi_freeinfo(list);
	if (!pick)
		*why_p = "no provider offers RDMA and atomics here";
	return pick;
}

/* "shm, tcp;ofi_rxm, ...": the providers with RDMA and atomics here. */
static void ofi_names(char *buf, size_t len)
{
	struct fi_info *hints = fi_allocinfo(), *list = NULL;
	size_t at = 0;

	buf[0] = 0;
	if (!hints)
		return;
	hints->caps = FI_RMA | FI_ATOMIC;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode =
	    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	if (fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &list) == 0) {
		for (struct fi_info *i = list; i; i = i->next) {
			const char *p = i->fabric_attr->prov_name;

			if (strstr(buf, p))
				continue;
			at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s", at ? ", " : "", p);
		}
	}
	fi_freeinfo(list);
	fi_freeinfo(hints);
}

/* Writes a word at every peer, progressing until every peer's word arrived
 * (value @round): the connection rounds. */
static ng_status ofi_round(struct ofi *o, uint64_t round)
{
	struct ng_rdma *r = &o->base;
	volatile uint64_t *mine = o->ctl->pub.base;
	ng_status st = NG_OK;
	uint64_t t;

	for (int p = 0; p < r->size && st == NG_OK; p++)
		if (p != r->rank)
			st = ofi_write(r, p, &(struct ng_rdma_iov){&round, 8, NULL}, 1, &o->rctl[p],
			               (uint64_t)r->rank * 8, 0, &t);
	for (int p = 0; p < r->size && st == NG_OK; p++) {
		if (p == r->rank)
			continue;
		st = ng_rdma_wait_all(r, p);
		if (st == NG_OK)
			st = ng_rdma_wait_word(r, &mine[p], round, p);
	}
	return st;
}

/* A peer's status from the exchange: one of ng_status, else NG_ERR_PROTO
 * (reported). */
static ng_status ofi_peer_status(size_t peer, int64_t status)
{
	size_t v;

	if (ng_peer_slen("ofi status", (int)peer, status, 0, NG_STATUS_COUNT - 1, &v) != NG_OK)
		return NG_ERR_PROTO;
	return (ng_status)v;
}

static ng_status ofi_open(const struct ng_rdma_backend *be, const struct ng_rdma_conf *cf,
                          struct ng_boot *boot, struct ng_rdma **r_p)
{
	struct ofi *o = calloc(1, sizeof(*o));
	struct {
		int32_t status;
		uint32_t len;
		char prov[64];
		char host[64];
		unsigned char name[OFI_NAMELEN];
	} mine, *all = NULL;
	size_t n = (size_t)boot->size, len = OFI_NAMELEN, nlen;
	const char *why = NULL, *call = "";
	char whybuf[160];
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
	struct fi_av_attr ava = {.type = FI_AV_TABLE};
	struct ng_rdma_rmr rc_mine, *rc_all = NULL;
	const char *prov = cf->provider && *cf->provider ? cf->provider : NULL;
	const char *fault = getenv("NGAUGE_OFI_FAULT"), *force = getenv("NGAUGE_OFI_SEM");
	bool one_host = true, autoprog = false, lacks = false, nodc, shm, shm_ok;
	ng_status st = NG_OK;
	int rc = 0;

	*r_p = NULL;
	if (!o) {
		ng_error("%s: out of memory", cf->who);
		return NG_ERR_NOMEM;
	}
	st = ng_rdma_base_init(&o->base, be, cf, boot->rank, boot->size);
	if (st != NG_OK) {
		free(o);
		return st;
	}
	o->fault = fault && strncmp(fault, "late", 4) == 0;
	nodc = fault && strcmp(fault, "late-nodc") == 0;
	memset(&mine, 0, sizeof(mine));
	snprintf(mine.host, sizeof(mine.host), "%.63s", boot->host);
	all = calloc(n, sizeof(*all));
	rc_all = calloc(n, sizeof(*rc_all));
	if (!all || !rc_all) {
		free(all);
		free(rc_all);
		ofi_close(&o->base);
		return NG_ERR_NOMEM;
	}
	/* Which hosts: one, or several (then no shm, no loopback binding). */
	if (ng_boot_allgather(boot, &mine, sizeof(mine), all) != NG_OK)
		goto err_lost;
	/* The peers' host names are strings for strcmp (a peer's field may lack
	 * its NUL: then only compared, truncated, and so another host). */
	for (size_t i = 0; i < n; i++) {
		(void)ng_peer_str(all[i].host, sizeof(all[i].host));
		one_host = one_host && strcmp(all[i].host, all[0].host) == 0;
	}
	/* The shm provider is never picked by itself for a --server's client:
	 * it reaches a peer by its process id (see ofi_name.h). */
	shm_ok = one_host && !boot->peer_addr[0];

	/* libfabric sizes per-peer resources by its universe size (256 unless
	 * told): verbs;ofi_rxm's completion queue of (tx + rx) x 256 entries is
	 * above what Soft-RoCE and many HCAs create.  The job's size, unless the
	 * user set it. */
	{
		char u[24];

		snprintf(u, sizeof(u), "%zu", n < 2 ? (size_t)2 : n);
		setenv("FI_UNIVERSE_SIZE", u, 0);
	}
	/* libfabric's registration cache off, unless the user set it (see the
	 * top: Registrations). */
	{
		const char *cache = getenv("FI_MR_CACHE_MAX_COUNT");

		if (cache && strcmp(cache, "0") != 0)
			snprintf(o->cache, sizeof(o->cache), "%.8s", cache);
		else
			setenv("FI_MR_CACHE_MAX_COUNT", "0", 1);
	}
	/* The provider first; then the semantics the notices and flush need,
	 * ordered before delivery-complete, each with (bound to loopback on
	 * one host) automatic progress where it has it. */
	o->info = ofi_pick(prov, one_host, shm_ok, false, OFI_SEM_ASSUME, &why);
	if (o->info) {
		enum ofi_sem try[2] = {OFI_SEM_ORDERED, OFI_SEM_DELIVERY};
		size_t ntry = 2;

		snprintf(o->prov, sizeof(o->prov), "%s", o->info->fabric_attr->prov_name);
		fi_freeinfo(o->info);
		o->info = NULL;
		if (force && strcmp(force, "assume") == 0) {
			try[0] = OFI_SEM_ASSUME;
			ntry = 1;
		} else if (force && strcmp(force, "ordered") == 0) {
			try[0] = OFI_SEM_ORDERED;
			ntry = 1;
		} else if (force && strcmp(force, "delivery") == 0) {
			try[0] = OFI_SEM_DELIVERY;
			ntry = 1;
		}
		for (size_t k = 0; k < ntry && !o->info; k++)
			for (int ap = 1; ap >= 0 && !o->info; ap--) {
				/* Tests: the faulty provider grants no ordering ("late") and
				 * no delivery completion either ("late-nodc"). */
				if ((o->fault && try[k] == OFI_SEM_ORDERED) ||
				    (nodc && try[k] == OFI_SEM_DELIVERY))
					break;
				o->info = ofi_pick(o->prov, one_host, shm_ok, ap, try[k], &why);
				autoprog = ap;
				o->sem = try[k];
			}
		if (!o->info) {
			lacks = true;
			if (boot->rank == 0 && !cf->quiet)
				ng_error(
				    "%s: ofi: provider %s%s grants neither ordered writes and reads "
				    "(FI_ORDER_WAW and FI_ORDER_RAW) nor delivery completion "
				    "(FI_DELIVERY_COMPLETE): a notice or a flush could overtake the data "
				    "it covers, so it is not used",
				    cf->who, o->prov, o->fault ? " (with NGAUGE_OFI_FAULT)" : "");
		}
	}
	if (o->info) {
		snprintf(o->prov, sizeof(o->prov), "%s", o->info->fabric_attr->prov_name);
		o->virt = o->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
		o->prov_key = o->info->domain_attr->mr_mode & FI_MR_PROV_KEY;
		o->ep_bind = o->info->domain_attr->mr_mode & FI_MR_ENDPOINT;
		o->local = o->info->domain_attr->mr_mode & FI_MR_LOCAL;
		o->wflags = o->sem == OFI_SEM_DELIVERY ? FI_DELIVERY_COMPLETE : 0;
		o->iov_limit = o->info->tx_attr->iov_limit ? o->info->tx_attr->iov_limit : 1;
		if (o->iov_limit > NG_RDMA_IOV_MAX)
			o->iov_limit = NG_RDMA_IOV_MAX;
		cqa.size = n * OFI_DEPTH;
		ava.count = n;
		call = "fi_fabric";
		rc = fi_fabric(o->info->fabric_attr, &o->fabric, NULL);
		if (!rc) {
			call = "fi_domain";
			rc = fi_domain(o->fabric, o->info, &o->domain, NULL);
		}
		if (!rc) {
			call = "fi_cq_open";
			rc = fi_cq_open(o->domain, &cqa, &o->cq, NULL);
		}
		if (!rc) {
			call = "fi_av_open";
			rc = fi_av_open(o->domain, &ava, &o->av, NULL);
		}
		if (!rc) {
			call = "fi_endpoint";
			rc = fi_endpoint(o->domain, o->info, &o->ep, NULL);
		}
		if (!rc) {
			call = "fi_ep_bind (the address vector)";
			rc = fi_ep_bind(o->ep, &o->av->fid, 0);
		}
		if (!rc) {
			call = "fi_ep_bind (the completion queue)";
			rc = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV);
		}
		if (!rc) {
			call = "fi_enable";
			rc = fi_enable(o->ep);
		}
		if (!rc) {
			call = "fi_getname";
			rc = fi_getname(&o->ep->fid, mine.name, &len);
		}
		if (rc) {
			snprintf(whybuf, sizeof(whybuf), "%s: %s", call, fi_strerror(-rc));
			why = whybuf;
			st = NG_ERR_NODEV;
		}
	} else if (lacks) {
		why = NULL;
		st = NG_ERR_UNSUPPORTED;
	} else if (cf->provider && *cf->provider) {
		char names[512];

		ofi_names(names, sizeof(names));
		if (boot->rank == 0)
			ng_error(
			    "%s: ofi: provider '%s' offers no RDMA with atomics here (providers that do: %s)",
			    cf->who, cf->provider, *names ? names : "none");
		why = NULL;
		st = NG_ERR_USAGE;
	} else {
		st = NG_ERR_NODEV;
	}
	if (st == NG_OK) {
		o->addr = calloc(n, sizeof(*o->addr));
		o->ops = calloc(n * OFI_DEPTH, sizeof(*o->ops));
		o->rctl = calloc(n, sizeof(*o->rctl));
		o->stage = calloc(n, sizeof(*o->stage));
		o->fops = o->fault ? calloc(OFI_FOPS, sizeof(*o->fops)) : NULL;
		if (!o->addr || !o->ops || !o->rctl || !o->stage || (o->fault && !o->fops)) {
			why = "out of memory";
			st = NG_ERR_NOMEM;
		}
	}
	if (st == NG_OK && o->fault)
		st = ofi_mem_alloc(&o->base, OFI_ARENA, (struct ng_rdma_mr **)&o->arena);
	if (st == NG_OK)
		st = ofi_mem_alloc(&o->base, 2 * n * 8, (struct ng_rdma_mr **)&o->ctl);
	mine.status = st;
	mine.len = (uint32_t)len;
	snprintf(mine.prov, sizeof(mine.prov), "%s", o->prov);
	if (st != NG_OK && why && !cf->quiet)
		ng_error("%s: ofi backend%s%s: %s", cf->who, cf->provider ? " with provider " : "",
		         cf->provider ? cf->provider : "", why);
	if (ng_boot_allgather(boot, &mine, sizeof(mine), all) != NG_OK)
		goto err_lost;
	for (size_t i = 0; i < n && st == NG_OK; i++) {
		/* What a peer sent: its status indexes the status names, its
		 * provider is a string for strcmp and the message, its name's
		 * length is at most the field (peer.h). */
		if (all[i].status != NG_OK) {
			st = ofi_peer_status(i, all[i].status);
		} else if (!ng_peer_str(all[i].prov, sizeof(all[i].prov))) {
			st = ng_peer_bad("ofi provider name", (int)i, "not terminated");
		} else if (ng_peer_len("ofi endpoint address length", (int)i, all[i].len, 1, OFI_NAMELEN,
		                       &nlen) != NG_OK) {
			st = NG_ERR_PROTO;
		} else if (strcmp(all[i].prov, all[0].prov) != 0) {
			if (boot->rank == 0 && !cf->quiet)
				ng_error("%s: ofi: rank %zu chose provider %s, rank 0 %s", cf->who, i,
				         all[i].prov, all[0].prov);
			st = NG_ERR_NODEV;
		}
	}
	/* Every peer's name is one this rank may send to before any is
	 * inserted (the first operation connects: none is posted unless all
	 * ranks agree below). */
	for (size_t i = 0; i < n && st == NG_OK; i++)
		if (i != (size_t)boot->rank)
			st = ng_ofi_name_check(boot, o->info->addr_format, i, all[i].name, all[i].len);
	for (size_t i = 0; i < n && st == NG_OK; i++)
		if (fi_av_insert(o->av, all[i].name, 1, &o->addr[i], 0, NULL) != 1) {
			if (!cf->quiet)
				ng_error("%s: ofi: cannot insert the address of rank %zu", cf->who, i);
			st = NG_ERR_NODEV;
		}
	/* The control words' descriptors, and one more round to agree. */
	rc_mine = st == NG_OK ? o->ctl->pub.remote : (struct ng_rdma_rmr){0};
	rc_mine.aux = (uint64_t)st;
	if (ng_boot_allgather(boot, &rc_mine, sizeof(rc_mine), rc_all) != NG_OK)
		goto err_lost;
	for (size_t i = 0; i < n; i++) {
		if (rc_all[i].aux != NG_OK && st == NG_OK)
			st = ng_peer_len("ofi status", (int)i, rc_all[i].aux, 0, NG_STATUS_COUNT - 1,
			                 &nlen) == NG_OK
			         ? (ng_status)nlen
			         : NG_ERR_PROTO;
		if (o->rctl) {
			o->rctl[i] = rc_all[i];
			o->rctl[i].aux = 0;
		}
	}
	free(all);
	free(rc_all);
	if (st == NG_OK)
		st = ofi_round(o, 1);
	if (st == NG_OK)
		st = ofi_round(o, 2);
	if (st != NG_OK) {
		ofi_close(&o->base);
		return st;
	}
	/* Keys: checked at the target by network providers (a wrong key is
	 * refused there, though the origin may see success); the shm provider
	 * ignores them. */
	shm = strcmp(o->prov, "shm") == 0;
	o->base.caps = NG_RDMA_CAP_READ | NG_RDMA_CAP_ATOMIC | NG_RDMA_CAP_ANYMEM |
	               (shm ? 0 : NG_RDMA_CAP_HWKEY | NG_RDMA_CAP_KEYS) |
	               (autoprog && !shm ? NG_RDMA_CAP_PROGRESS : 0) |
	               (ofi_pins(o->prov) ? NG_RDMA_CAP_PINS : 0);
	o->base.max_write = ng_rdma_max_join(o->base.max_write, o->info->ep_attr->max_msg_size);
	snprintf(o->base.desc, sizeof(o->base.desc), "ofi %s%s, %s progress, %s%s%s", o->prov,
	         ofi_loopback(o->info) ? " 127.0.0.1" : "", autoprog ? "auto" : "manual",
	         ofi_sem_names[o->sem], *o->cache ? ", MR cache " : "", o->cache);
	*r_p = &o->base;
	return NG_OK;

err_lost:
	free(all);
	free(rc_all);
	ofi_close(&o->base);
	return NG_ERR_PEER_LOST;
}

const struct ng_rdma_backend ng_rdma_ofi = {
    .name = "ofi",
    .desc = "libfabric (--ofi-provider): EFA, cxi, psm3, verbs;ofi_rxm, shm, tcp;ofi_rxm",
    .open = ofi_open,
    .close = ofi_close,
    .mem_alloc = ofi_mem_alloc,
    .mem_free = ofi_dereg,
    .reg = ofi_reg,
    .dereg = ofi_dereg,
    .write = ofi_write,
    .read = ofi_read,
    .atomic = ofi_atomic,
    .progress = ofi_progress,
    .flush = ofi_flush,
};
