/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "verbs" backend of the RDMA layer (rdma.h): any HCA (InfiniBand,
 * RoCE) and Soft-RoCE, on the verbs core (modules/verbs/verbs.h).
 *
 * Connections.  One RC queue pair per pair of ranks (UC with
 * conf->unreliable: writes only, no reads or atomics), all on one
 * completion queue, connected as a full mesh by ng_ibv_mesh_connect (which
 * also makes every rank wait until all QPs are ready).  Operations on a
 * rank's own memory go through the HCA too, on a QP connected to a second
 * local QP (so that they are atomic with respect to everybody else's
 * atomics on the same words).  No receive is ever posted: everything is
 * RDMA write, read and atomics.
 *
 * Tickets.  Every operation is one work request; the ticket of an
 * operation to peer p is its work request number on p's QP.  A QP completes
 * in order, so the completion of WR n sets completed[p] = n.  A write whose
 * bytes all went inline, or were copied into the staging area, returns
 * ticket 0: its sources may be reused at once (the WR still counts towards
 * flush).  Signaling is selective (verbs.h, ng_ibv_qp_signal_due): a WR
 * with a ticket, a staged write (its staging bytes are reused at its
 * completion), reads, atomics and probes are signaled, an inline write only
 * when a quarter of the queue went unsignaled before it, so a stream of
 * small writes (the channel's small messages, credit words) costs one
 * completion per depth / 4 of them.  issued[p] is the last signaled WR:
 * waiting for it waits for every operation with a ticket; flush(p) first
 * posts a signaled empty write when inline writes follow it.  Room: at most conf->depth
 * (default 128, the device's limit if lower) WRs in flight per QP; a post
 * with the queue full polls until there is room.  Every completion is a
 * sign of the peer for the watchdog except a write's with NG_RDMA_QUIET
 * (the channel's credits told again over UC), marked in its wr_id.
 *
 * Writes.  Up to NG_RDMA_IOV_MAX pieces become the scatter list of ONE RDMA
 * write: inline when the whole write fits the QP's inline size (no lkey
 * needed: any memory), else each registered piece directly and the
 * unregistered ones copied into the peer's staging ring (rdma.h: registered
 * at the first staged write to that peer, ng_rdma_stage_bytes(stage_max)
 * bytes).  A write or read longer than the port's max_msg_sz is split into
 * several WRs, in order.  A write with NG_RDMA_NOTIFY is the same single write: RC and UC
 * place a write's bytes in order and execute writes of one QP in order, so
 * its last 8 bytes become visible after everything before them (what
 * perftest and MPI libraries' fast paths rely on).  A write of blocks
 * (NG_RDMA_BLOCKS) is that single write as well, for the same reason: the
 * HCA places its pieces in order, each piece's notice after its body.
 *
 * Reads and atomics need registered local memory (the layer's contract):
 * a read lands in @mr directly; an atomic's old value lands in 8 bytes of
 * the staging ring and is copied to *old_p when the WR completes.
 *
 * flush(p): waits until every WR to p has completed.  On RC a write
 * completes when the target has acknowledged it, after it was placed in
 * order with the writes before it: complete and visible.  On UC completion
 * means sent (UC has no acknowledgement and no read to fence with): UC
 * cannot promise visibility, as its name says.
 *
 * Keys are the HCA's: a wrong or stale rkey is refused at the target and
 * ends the connection with an error completion at the origin (reported as a
 * remote access error), so bounds are checked by the layer before posting.
 * Progress: the HCA's, never the target's CPU (NG_RDMA_CAP_PROGRESS).
 *
 * alive(p): an empty RDMA write to p (no memory, no key: IBA C9-88), which
 * p's queue pair acknowledges without p's CPU (Soft-RoCE: in the kernel, on
 * the poster's own CPU), in microseconds, for a rank that is alive however
 * starved.  It completes behind the work already on the queue pair (RC
 * completes in order), so the completion of any of that work answers too;
 * one probe per peer at a time.  A queue pair dies with its process: then
 * nothing answers by the deadline and the end is taken as gone.  With
 * earlier work still pending and no completion by the deadline (a long
 * write on a slow link), the answer is alive: on RC a peer that is gone
 * under pending work ends it with an error completion once the retries run
 * out (an HCA: 7 retries of 67 ms), reported as lost; Soft-RoCE takes
 * retry_cnt 7 as "retry forever" and never does, so there only the launcher
 * names such a peer.  UC acknowledges nothing: it cannot tell.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "modules/rdmalayer/rdma.h"
#include "modules/verbs/verbs.h"
#include "modules/verbs/verbs_conn.h"

#define VB_DEPTH  128u /* WRs in flight per QP */
#define VB_INLINE 256u /* inline size asked for */
#define VB_POLL   16
#define VB_NBITS  48                              /* wr_id: peer << VB_NBITS | [VB_QUIET] | WR number */
#define VB_QUIET  (UINT64_C(1) << (VB_NBITS - 1)) /* NG_RDMA_QUIET: no event */
#define VB_NMASK  (VB_QUIET - 1)

struct vb_mr {
	struct ng_rdma_mr pub; /* first */
	struct ibv_mr *mr;
	void *raw; /* mem_alloc: what to free */
	struct vb_mr *prev, *next;
};

struct vb {
	struct ng_rdma base; /* first */
	struct ng_ibv v;
	struct ibv_cq *cq;
	struct ng_ibv_qp *qps;       /* [size]; qps[rank] is connected to @loop */
	struct ng_ibv_qp loop;       /* the responder of operations on my own memory */
	struct ng_rdma_stage *stage; /* [size]: staging rings, allocated when first used */
	uint64_t **old;              /* [size][depth]: where an atomic's old value goes */
	const void **old_at;         /* [size][depth]: where the HCA put it (staging) */
	uint64_t *probe;             /* [size]: WR number of the oldest unanswered alive() probe (0: none) */
	uint64_t *probe_work;        /* [size]: the last signaled WR before it */
	struct vb_mr *mrs;           /* every registration, for close() */
	uint32_t depth;
	uint32_t max_inline;
	uint32_t inl; /* inline size asked of the next QP */
	bool uc;
	bool lazy;           /* QPs on first use (cf->lazy) */
	bool *up;            /* [size]: the QP towards the peer is in RTS */
	struct ng_ibv_cm cm; /* lazy: the connection service (verbs_conn.h) */
	ng_status err;       /* the first failure; then every call returns it */
};

static inline struct vb *vb_of(struct ng_rdma *r)
{
	return ng_container_of(r, struct vb, base);
}

/* ---- completions ------------------------------------------------------ */

static ng_status __attribute__((cold)) vb_wc_error(struct vb *b, const struct ibv_wc *wc, int peer)
{
	if (b->err == NG_OK)
		b->err = ng_ibv_wc_error(&b->v, wc, peer, "an RDMA operation");
	return b->err;
}

static ng_status vb_progress(struct ng_rdma *r)
{
	struct vb *b = vb_of(r);
	struct ibv_wc wc[VB_POLL];
	int n;

	if (b->err != NG_OK)
		return b->err;
	n = ibv_poll_cq(b->cq, VB_POLL, wc);
	if (n < 0) {
		ng_error("%s: verbs: polling the completion queue failed", r->who);
		return b->err = NG_ERR_IO;
	}
	bool loud = false;

	for (int i = 0; i < n; i++) {
		int peer = (int)(wc[i].wr_id >> VB_NBITS);
		uint64_t wr = wc[i].wr_id & VB_NMASK;
		size_t slot = (size_t)peer * b->depth + wr % b->depth;

		if (wc[i].status != IBV_WC_SUCCESS)
			return vb_wc_error(b, &wc[i], peer);
		loud |= !(wc[i].wr_id & VB_QUIET);
		b->qps[peer].done = wr;
		r->completed[peer] = wr;
		if (b->old[slot]) {
			memcpy(b->old[slot], b->old_at[slot], 8);
			b->old[slot] = NULL;
		}
	}
	if (loud)
		r->watch.events++;
	if (n == 0 && b->lazy) {
		/* An idle poll answers the connection service (first use). */
		uint64_t ev = b->cm.events;
		ng_status st = ng_ibv_cm_poll(&b->cm);

		if (st != NG_OK)
			return b->err = st;
		r->watch.events += b->cm.events - ev;
	}
	return NG_OK;
}

/* First use of @peer (lazy): connects its QP, making progress (so that
 * the peer's own first use of this rank is answered meanwhile), bounded by
 * the timeout.  Cold: once per pair, in the warm-up. */
static ng_status __attribute__((cold, noinline)) vb_first_use(struct vb *b, int peer)
{
	struct ng_rdma *r = &b->base;
	ng_status st = ng_ibv_cm_connect(&b->cm, peer);

	while (st == NG_OK && !b->up[peer]) {
		uint64_t ev = r->watch.events;

		st = vb_progress(r);
		if (st == NG_OK && ng_ibv_cm_failed(&b->cm, peer))
			st = NG_ERR_IO;
		if (st == NG_OK && r->watch.events == ev)
			st = ng_watch_idle(&r->watch);
		if (st == NG_ERR_TIMEOUT) {
			ng_error("%s: verbs: rank %d lost (no answer to the connection request for %.0f s)",
			         r->who, peer, (double)r->watch.timeout_ns / 1e9);
			st = NG_ERR_PEER_LOST;
		}
	}
	if (st != NG_OK && b->err == NG_OK)
		b->err = st;
	return st;
}

/* Waits until one more WR fits into @peer's send queue. */
static ng_status vb_room(struct vb *b, int peer)
{
	struct ng_rdma *r = &b->base;
	ng_status st;

	if (b->err != NG_OK)
		return b->err;
	if (__builtin_expect(!b->up[peer], 0)) {
		st = vb_first_use(b, peer);
		if (st != NG_OK)
			return st;
	}
	while (!ng_ibv_qp_room(&b->qps[peer], 1)) {
		uint64_t before = r->completed[peer];

		st = vb_progress(r);
		if (st == NG_OK && r->completed[peer] == before)
			st = ng_watch_idle(&r->watch);
		if (st == NG_ERR_TIMEOUT) {
			ng_error("%s: verbs: rank %d lost (no completion for %.0f s)", r->who, peer,
			         (double)r->watch.timeout_ns / 1e9);
			return b->err = NG_ERR_PEER_LOST;
		}
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* Posts @wr as the next WR to @peer (room checked), signaled when @need
 * (someone waits for its completion) or when the queue needs one. */
static ng_status vb_post(struct vb *b, int peer, struct ibv_send_wr *wr, bool need, const char *what)
{
	struct ng_ibv_qp *q = &b->qps[peer];
	bool sig = ng_ibv_qp_signal_due(q, need);
	int rc;

	wr->send_flags = (wr->send_flags & ~(unsigned)IBV_SEND_SIGNALED) | (sig ? IBV_SEND_SIGNALED : 0);
	rc = ng_ibv_post(q, wr, 1);
	if (rc) {
		ng_error("%s: verbs: posting %s to rank %d: %s", b->base.who, what, peer, strerror(rc));
		return b->err = NG_ERR_IO;
	}
	if (sig) {
		ng_ibv_qp_signaled(q);
		b->base.issued[peer] = q->posted;
	}
	ng_rdma_stage_mark(&b->stage[peer], b->depth, b->qps[peer].posted);
	return NG_OK;
}

static inline uint32_t vb_lkey(const struct ng_rdma_mr *mr)
{
	return ((const struct vb_mr *)(const void *)mr)->mr->lkey;
}

/* ---- operations ------------------------------------------------------- */

static ng_status vb_write(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                          const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags, uint64_t *t_p)
{
	struct vb *b = vb_of(r);
	struct ibv_sge sge[NG_RDMA_IOV_MAX];
	struct ibv_send_wr wr;
	size_t total = 0, staged = 0, unreg = 0;
	unsigned char *slot = NULL;
	uint32_t slkey = 0;
	bool inl, copied = true;
	uint64_t wrn;
	int ns = 0;
	ng_status st;

	/* One write: its last bytes land last, piece by piece (see the top). */
	for (unsigned i = 0; i < n; i++) {
		total += iov[i].len;
		unreg += iov[i].mr ? 0 : iov[i].len;
	}
	st = ng_rdma_bounds(r, peer, rm, off, total);
	if (st != NG_OK)
		return st;
	if (r->max_write && total > r->max_write)
		return ng_rdma_write_split(r, peer, iov, n, total, rm, off, flags, t_p);
	inl = total <= b->max_inline;
	if (!inl && unreg) {
		st = ng_rdma_stage_take(r, &b->stage[peer], peer, b->depth, unreg, &slot);
		if (st != NG_OK)
			return st;
		slkey = vb_lkey(b->stage[peer].mr);
	}
	st = vb_room(b, peer);
	if (st != NG_OK)
		return st;
	wrn = b->qps[peer].posted + 1;
	for (unsigned i = 0; i < n; i++) {
		const struct ng_rdma_iov *p = &iov[i];

		if (!p->len)
			continue;
		if (inl) {
			sge[ns++] = (struct ibv_sge){(uint64_t)(uintptr_t)p->addr, (uint32_t)p->len, 0};
		} else if (p->mr) {
			sge[ns++] =
			    (struct ibv_sge){(uint64_t)(uintptr_t)p->addr, (uint32_t)p->len, vb_lkey(p->mr)};
			copied = false;
		} else {
			memcpy(slot + staged, p->addr, p->len);
			/* Consecutive staged pieces share one entry. */
			if (ns && sge[ns - 1].lkey == slkey &&
			    sge[ns - 1].addr + sge[ns - 1].length == (uint64_t)(uintptr_t)(slot + staged))
				sge[ns - 1].length += (uint32_t)p->len;
			else
				sge[ns++] = (struct ibv_sge){(uint64_t)(uintptr_t)(slot + staged),
				                             (uint32_t)p->len, slkey};
			staged += p->len;
		}
	}
	memset(&wr, 0, sizeof(wr));
	ng_ibv_wr_rdma(&wr, IBV_WR_RDMA_WRITE,
	               (uint64_t)peer << VB_NBITS | wrn | ((flags & NG_RDMA_QUIET) ? VB_QUIET : 0),
	               rm->addr + off, (uint32_t)rm->key);
	wr.sg_list = sge;
	wr.num_sge = ns;
	if (inl && ns)
		wr.send_flags |= IBV_SEND_INLINE;
	st = vb_post(b, peer, &wr, !inl, "an RDMA write");
	if (st != NG_OK)
		return st;
	*t_p = inl || copied ? 0 : wrn;
	return NG_OK;
}

static ng_status vb_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
                         const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	struct vb *b = vb_of(r);
	struct ibv_sge sge = {(uint64_t)(uintptr_t)dst, (uint32_t)len, 0};
	struct ibv_send_wr wr;
	ng_status st;

	if (b->uc || !mr) {
		ng_error("%s: verbs: %s", r->who,
		         b->uc ? "UC queue pairs have no RDMA read" : "a read into unregistered memory");
		return b->uc ? NG_ERR_UNSUPPORTED : NG_ERR_USAGE;
	}
	st = ng_rdma_bounds(r, peer, rm, off, len);
	if (st != NG_OK)
		return st;
	/* Longer than the port's largest message: consecutive reads. */
	while (r->max_write && len > r->max_write) {
		st = vb_read(r, peer, dst, mr, r->max_write, rm, off, t_p);
		if (st != NG_OK)
			return st;
		dst = (unsigned char *)dst + r->max_write;
		sge.addr += r->max_write;
		off += r->max_write;
		len -= r->max_write;
	}
	sge.length = (uint32_t)len;
	st = vb_room(b, peer);
	if (st != NG_OK)
		return st;
	sge.lkey = vb_lkey(mr);
	memset(&wr, 0, sizeof(wr));
	ng_ibv_wr_rdma(&wr, IBV_WR_RDMA_READ, (uint64_t)peer << VB_NBITS | (b->qps[peer].posted + 1),
	               rm->addr + off, (uint32_t)rm->key);
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	st = vb_post(b, peer, &wr, true, "an RDMA read");
	if (st == NG_OK)
		*t_p = b->qps[peer].posted;
	return st;
}

static ng_status vb_atomic(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
                           uint64_t off, uint64_t operand, uint64_t compare, uint64_t *old_p, uint64_t *t_p)
{
	struct vb *b = vb_of(r);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	unsigned char *slot;
	size_t at;
	uint64_t wrn;
	ng_status st;

	if (!(r->caps & NG_RDMA_CAP_ATOMIC)) {
		ng_error("%s: verbs: %s has no remote atomics", r->who, b->uc ? "UC" : b->v.name);
		return NG_ERR_UNSUPPORTED;
	}
	if ((rm->addr + off) % 8) {
		ng_error("%s: verbs: an atomic on a word that is not 8-byte aligned (offset %llu)", r->who,
		         (unsigned long long)off);
		return NG_ERR_USAGE;
	}
	st = ng_rdma_bounds(r, peer, rm, off, 8);
	if (st == NG_OK)
		st = ng_rdma_stage_take(r, &b->stage[peer], peer, b->depth, 8, &slot);
	if (st == NG_OK)
		st = vb_room(b, peer);
	if (st != NG_OK)
		return st;
	wrn = b->qps[peer].posted + 1;
	at = (size_t)peer * b->depth + wrn % b->depth;
	sge = (struct ibv_sge){(uint64_t)(uintptr_t)slot, 8, vb_lkey(b->stage[peer].mr)};
	memset(&wr, 0, sizeof(wr));
	if (aop == NG_RDMA_CAS)
		ng_ibv_wr_atomic(&wr, IBV_WR_ATOMIC_CMP_AND_SWP, (uint64_t)peer << VB_NBITS | wrn,
		                 rm->addr + off, (uint32_t)rm->key, compare, operand);
	else
		ng_ibv_wr_atomic(&wr, IBV_WR_ATOMIC_FETCH_AND_ADD, (uint64_t)peer << VB_NBITS | wrn,
		                 rm->addr + off, (uint32_t)rm->key, operand, 0);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	b->old[at] = old_p;
	b->old_at[at] = slot;
	st = vb_post(b, peer, &wr, true, aop == NG_RDMA_CAS ? "a compare-and-swap" : "a fetch-and-add");
	if (st != NG_OK) {
		b->old[at] = NULL;
		return st;
	}
	*t_p = wrn;
	return NG_OK;
}

static ng_status vb_flush(struct ng_rdma *r, int peer)
{
	struct vb *b = vb_of(r);
	struct ng_ibv_qp *q = &b->qps[peer];
	ng_status st;

	/* Unsignaled writes after the last signaled WR: a signaled empty write
	 * behind them (no memory, no key), whose completion is theirs too. */
	if (q->posted > q->sig_last) {
		struct ibv_send_wr wr;

		st = vb_room(b, peer);
		if (st != NG_OK)
			return st;
		memset(&wr, 0, sizeof(wr));
		ng_ibv_wr_rdma(&wr, IBV_WR_RDMA_WRITE, (uint64_t)peer << VB_NBITS | (q->posted + 1), 0, 0);
		st = vb_post(b, peer, &wr, true, "an empty RDMA write");
		if (st != NG_OK)
			return st;
	}
	return ng_rdma_wait_all(r, peer);
}

static ng_status vb_alive(struct ng_rdma *r, int peer, uint64_t deadline_ns)
{
	struct vb *b = vb_of(r);
	struct ng_ibv_qp *q = &b->qps[peer];
	uint64_t before = r->completed[peer];
	bool pending;
	ng_status st = NG_OK;

	if (b->uc || !b->up[peer])
		return NG_ERR_UNSUPPORTED; /* UC, or no QP yet: cannot tell */
	if (b->err != NG_OK)
		return b->err;
	if (b->probe[peer] && q->done >= b->probe[peer])
		b->probe[peer] = 0; /* the last probe was answered */
	/* Work someone waits for, older than any unanswered probe, still in
	 * flight (unsignaled writes have no completion of their own). */
	pending = q->done < (b->probe[peer] ? b->probe_work[peer] : q->sig_last);
	if (!b->probe[peer] && ng_ibv_qp_room(q, 1)) {
		struct ibv_send_wr wr;

		uint64_t work = q->sig_last;

		memset(&wr, 0, sizeof(wr));
		ng_ibv_wr_rdma(&wr, IBV_WR_RDMA_WRITE, (uint64_t)peer << VB_NBITS | (q->posted + 1), 0, 0);
		st = vb_post(b, peer, &wr, true, "an empty RDMA write");
		if (st == NG_OK) {
			b->probe[peer] = q->posted;
			b->probe_work[peer] = work;
		}
	}
	/* Any completion on the queue pair answers: the probe's, or that of
	 * earlier work, which the peer's end acknowledged just the same. */
	while (st == NG_OK && r->completed[peer] == before) {
		st = vb_progress(r);
		if (st != NG_OK)
			break;
		if (ng_watch_cancelled(&r->watch))
			return NG_ERR_CANCELLED;
		if (ng_watch_now_ns() > deadline_ns)
			return pending ? NG_OK : NG_ERR_TIMEOUT;
		if (r->watch.yield)
			sched_yield();
	}
	return st;
}

/* ---- memory ----------------------------------------------------------- */

static ng_status vb_reg_raw(struct vb *b, void *buf, size_t len, void *raw, struct ng_rdma_mr **mr_p)
{
	struct vb_mr *m = calloc(1, sizeof(*m));

	if (!m) {
		ng_error("%s: out of memory", b->base.who);
		return NG_ERR_NOMEM;
	}
	m->mr = ibv_reg_mr(b->v.pd, buf, len, b->v.mem_access);
	if (!m->mr) {
		ng_ibv_reg_error(&b->v, len, "RDMA memory", errno);
		free(m);
		return NG_ERR_NOMEM;
	}
	m->raw = raw;
	m->pub.base = buf;
	m->pub.len = len;
	m->pub.remote =
	    (struct ng_rdma_rmr){.addr = (uint64_t)(uintptr_t)buf, .len = len, .key = m->mr->rkey};
	m->next = b->mrs;
	if (b->mrs)
		b->mrs->prev = m;
	b->mrs = m;
	*mr_p = &m->pub;
	return NG_OK;
}

static ng_status vb_reg(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p)
{
	return vb_reg_raw(vb_of(r), buf, len, NULL, mr_p);
}

static void vb_dereg(struct ng_rdma *r, struct ng_rdma_mr *pub)
{
	struct vb *b = vb_of(r);
	struct vb_mr *m = (struct vb_mr *)(void *)pub;

	if (m->prev)
		m->prev->next = m->next;
	else
		b->mrs = m->next;
	if (m->next)
		m->next->prev = m->prev;
	ibv_dereg_mr(m->mr);
	free(m->raw);
	free(m);
}

static ng_status vb_mem_alloc(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p)
{
	struct vb *b = vb_of(r);
	size_t plen = len ? (len + b->v.page - 1) / b->v.page * b->v.page : b->v.page;
	void *buf = aligned_alloc(b->v.page, plen);
	ng_status st;

	if (!buf) {
		ng_error("%s: out of memory for %zu bytes", r->who, len);
		return NG_ERR_NOMEM;
	}
	memset(buf, 0, plen);
	st = vb_reg_raw(b, buf, plen, buf, mr_p);
	if (st != NG_OK)
		free(buf);
	return st;
}

/* ---- open and close --------------------------------------------------- */

static void vb_close(struct ng_rdma *r)
{
	struct vb *b = vb_of(r);

	for (int p = 0; b->qps && p < r->size; p++)
		ng_ibv_qp_destroy(&b->qps[p]);
	ng_ibv_qp_destroy(&b->loop);
	ng_ibv_cm_close(&b->cm);
	for (int p = 0; b->stage && p < r->size; p++)
		ng_rdma_stage_free(r, &b->stage[p]);
	while (b->mrs)
		vb_dereg(r, &b->mrs->pub);
	if (b->cq)
		ibv_destroy_cq(b->cq);
	if (b->v.ctx)
		ng_ibv_close(&b->v);
	free(b->qps);
	free(b->up);
	free(b->old);
	free(b->probe);
	free(b->probe_work);
	free(b->old_at);
	free(b->stage);
	ng_rdma_base_fini(r);
	free(b);
}

/* The QP towards @peer: created, in INIT. */
static ng_status vb_peer_qp(struct vb *b, int peer)
{
	struct ng_ibv_qp *q = &b->qps[peer];
	ng_status st;

	st = ng_ibv_qp_create(&b->v, b->uc ? IBV_QPT_UC : IBV_QPT_RC, b->cq, b->cq, b->depth, 1, &b->inl, q);
	if (st != NG_OK)
		return st;
	q->sig_every = b->depth / 4 ? b->depth / 4 : 1;
	if (peer != b->base.rank)
		b->base.qps++;
	return ng_ibv_qp_init(&b->v, q);
}

/* The connection service's callbacks (verbs_conn.h). */
static struct ng_ibv_qp *vb_cm_qp(void *ctx, int peer)
{
	struct vb *b = ctx;

	if (!b->qps[peer].qp && vb_peer_qp(b, peer) != NG_OK) {
		ng_ibv_qp_destroy(&b->qps[peer]);
		return NULL;
	}
	return &b->qps[peer];
}

static void vb_cm_up(void *ctx, int peer)
{
	struct vb *b = ctx;

	b->up[peer] = true;
	b->base.connect_ns = b->cm.connect_ns;
}

static const struct ng_ibv_cm_ops vb_cm_ops = {.qp = vb_cm_qp, .up = vb_cm_up};

/* Connects qps[rank] and @loop to each other: the path to my own memory. */
static ng_status vb_loop(struct vb *b, uint32_t inl)
{
	struct ng_ibv_qp *q = &b->qps[b->base.rank];
	struct ng_ibv_ep me;
	ng_status st;

	ng_ibv_ep_get(&b->v, &me);
	st = ng_ibv_qp_create(&b->v, b->uc ? IBV_QPT_UC : IBV_QPT_RC, b->cq, b->cq, 1, 1, &inl, &b->loop);
	if (st == NG_OK)
		st = ng_ibv_qp_init(&b->v, &b->loop);
	if (st == NG_OK)
		st = ng_ibv_qp_connect(&b->v, &b->loop, &me, q->qp->qp_num, b->v.pattr.active_mtu,
		                       b->base.rank);
	if (st == NG_OK)
		st =
		    ng_ibv_qp_connect(&b->v, q, &me, b->loop.qp->qp_num, b->v.pattr.active_mtu, b->base.rank);
	return st;
}

static ng_status vb_open(const struct ng_rdma_backend *be, const struct ng_rdma_conf *cf,
                         struct ng_boot *boot, struct ng_rdma **r_p)
{
	struct ng_ibv_conf ic = {.who = cf->who,
	                         .dev = cf->dev,
	                         .port = cf->port,
	                         .gid_index = cf->gid_index,
	                         .sl = cf->sl,
	                         .tclass = cf->tclass,
	                         .qpt = cf->unreliable ? IBV_QPT_UC : IBV_QPT_RC,
	                         .quiet = cf->quiet};
	size_t n = (size_t)boot->size;
	struct ng_ibv_qp **qpp = NULL;
	enum ibv_mtu mtu = IBV_MTU_256;
	ng_status st;
	struct vb *b;
	char dev[120];

	*r_p = NULL;
	b = calloc(1, sizeof(*b));
	if (!b) {
		ng_error("%s: out of memory", cf->who);
		return NG_ERR_NOMEM;
	}
	st = ng_rdma_base_init(&b->base, be, cf, boot->rank, boot->size);
	if (st != NG_OK) {
		free(b);
		return st;
	}
	st = ng_ibv_open(&b->v, &ic, boot);
	if (st != NG_OK) {
		ng_rdma_base_fini(&b->base);
		free(b);
		return st;
	}
	b->uc = cf->unreliable;
	b->lazy = cf->lazy;
	b->inl = VB_INLINE;
	b->depth = cf->depth ? (uint32_t)cf->depth : VB_DEPTH;
	if (b->v.dattr.max_qp_wr > 0 && b->depth > (uint32_t)b->v.dattr.max_qp_wr)
		b->depth = (uint32_t)b->v.dattr.max_qp_wr;

	/* Local setup; a rank that fails takes part in the exchange with its
	 * status, so that all fail together. */
	b->qps = calloc(n, sizeof(*b->qps));
	b->up = calloc(n, sizeof(*b->up));
	b->old = calloc(n * b->depth, sizeof(*b->old));
	b->probe = calloc(n, sizeof(*b->probe));
	b->probe_work = calloc(n, sizeof(*b->probe_work));
	b->old_at = calloc(n * b->depth, sizeof(*b->old_at));
	b->stage = calloc(n, sizeof(*b->stage));
	qpp = calloc(n, sizeof(*qpp));
	if (!b->qps || !b->up || !b->old || !b->probe || !b->probe_work || !b->old_at || !b->stage || !qpp) {
		ng_error("%s: out of memory", cf->who);
		st = NG_ERR_NOMEM;
	}
	if (st == NG_OK) {
		int cqe = (int)(n * b->depth);

		if (b->v.dattr.max_cqe > 0 && cqe > b->v.dattr.max_cqe)
			cqe = b->v.dattr.max_cqe;
		b->cq = ibv_create_cq(b->v.ctx, cqe, NULL, NULL, 0);
		if (!b->cq) {
			ng_error("%s: verbs: cannot create a completion queue of %d entries on %s: %s",
			         cf->who, cqe, b->v.name, strerror(errno));
			st = NG_ERR_SYS;
		}
	}
	/* Lazy: only the QP to this rank's own memory now. */
	for (size_t p = 0; st == NG_OK && p < n; p++) {
		if (b->lazy && p != (size_t)boot->rank)
			continue;
		st = vb_peer_qp(b, (int)p);
		if (p != (size_t)boot->rank)
			qpp[p] = &b->qps[p];
	}
	b->max_inline = b->inl;
	if (st == NG_OK)
		st = vb_loop(b, b->inl);
	if (b->lazy) {
		st = ng_ibv_cm_open(&b->cm, &b->v, boot, &vb_cm_ops, b, st, NULL, 0, NULL);
		mtu = b->cm.mtu;
		if (st == NG_OK)
			b->up[boot->rank] = true;
	} else {
		st = ng_ibv_mesh_connect(&b->v, boot, qpp, st, NULL, 0, NULL, &mtu);
		for (size_t p = 0; st == NG_OK && p < n; p++)
			b->up[p] = true;
	}
	free(qpp);
	if (st != NG_OK) {
		vb_close(&b->base);
		return st;
	}
	b->base.caps = NG_RDMA_CAP_PROGRESS | NG_RDMA_CAP_HWKEY | NG_RDMA_CAP_KEYS | NG_RDMA_CAP_ANYMEM |
	               NG_RDMA_CAP_BLOCKS | NG_RDMA_CAP_PINS;
	if (!b->uc) {
		b->base.caps |= NG_RDMA_CAP_READ;
		if (b->v.dattr.atomic_cap != IBV_ATOMIC_NONE)
			b->base.caps |= NG_RDMA_CAP_ATOMIC;
	}
	b->base.max_write = ng_rdma_max_join(b->base.max_write, b->v.pattr.max_msg_sz);
	b->base.qps_kept = true;
	b->base.lazy = b->lazy;
	b->base.qps_at_open = b->base.qps;
	ng_ibv_describe(&b->v, mtu, dev, sizeof(dev));
	snprintf(b->base.desc, sizeof(b->base.desc), "verbs %s, %s, inline %u", dev, b->uc ? "UC" : "RC",
	         b->max_inline);
	*r_p = &b->base;
	return NG_OK;
}

const struct ng_rdma_backend ng_rdma_verbs = {
    .name = "verbs",
    .desc = "InfiniBand/RoCE verbs (any HCA, Soft-RoCE): RC queue pairs, hardware keys",
    .open = vb_open,
    .close = vb_close,
    .mem_alloc = vb_mem_alloc,
    .mem_free = vb_dereg,
    .reg = vb_reg,
    .dereg = vb_dereg,
    .write = vb_write,
    .read = vb_read,
    .atomic = vb_atomic,
    .progress = vb_progress,
    .flush = vb_flush,
    .alive = vb_alive,
};
