/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path of the RDMA layer's ofi backend (ofi.c: the backend, how it
 * picks the provider and the semantics of notices and flush): completions,
 * writes (staged, notified, split), reads, atomics, flush, and the test
 * fault.
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
 *
 * Keys and bounds: the shm provider ignores keys on its fast path, so every
 * access is checked against the descriptor (ng_rdma_bounds) before it is
 * posted, on every provider.
 */
#include "config.h"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <string.h>
#include <sys/uio.h>

#include "module.h"
#include "modules/rdmalayer/ofi_int.h"
#include "modules/rdmalayer/rdma.h"

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

ng_status ng_ofi_progress(struct ng_rdma *r)
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
		st = ng_ofi_progress(r);
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
			ng_status st_ = ng_ofi_progress(&(o)->base);                                         \
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

ng_status ng_ofi_write(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
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

ng_status ng_ofi_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
                      const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	struct ofi *o = ofi_of(r);
	struct ofi_op *op;
	ng_status st = ng_rdma_bounds(r, peer, rm, off, len);

	if (st != NG_OK)
		return st;
	/* Longer than the provider's largest message: consecutive reads. */
	while (r->max_write && len > r->max_write) {
		st = ng_ofi_read(r, peer, dst, mr, r->max_write, rm, off, t_p);
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

ng_status ng_ofi_atomic(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
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

ng_status ng_ofi_flush(struct ng_rdma *r, int peer)
{
	struct ofi *o = ofi_of(r);
	ng_status st = ng_rdma_wait_all(r, peer);
	uint64_t t;

	/* Delivery-complete writes are placed once complete. */
	if (st != NG_OK || o->sem == OFI_SEM_DELIVERY)
		return st;
	/* Ordered: a read after the writes (FI_ORDER_RAW) is answered after them. */
	st = ng_ofi_read(r, peer,
	                 (unsigned char *)o->ctl->pub.base + (size_t)r->rank * 8 + 8 * (size_t)r->size,
	                 &o->ctl->pub, 8, &o->rctl[peer], 0, &t);
	return st == NG_OK ? ng_rdma_wait(r, peer, t) : st;
}
