/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "ibud" module: two-sided messages over InfiniBand/RoCE unreliable
 * datagrams, on the verbs core (verbs.h).
 *
 * One UD queue pair per rank and an address handle per peer.  A message is
 * one SEND_WITH_IMM of at most the path MTU minus 40 bytes (the GRH that
 * lands in front of every received datagram); the instance's max_msg says
 * so and the driver refuses larger sizes.  Sends up to the device's
 * max_inline_data go inline.
 *
 * Receives: one shared ring of (R + 2) slots per peer (R = --ib-ring), all
 * pre-posted; a completion names its slot (wr_id) and its sender (the
 * immediate carries the sender's rank; the source QP is checked, so stray
 * datagrams are dropped).  Arrived datagrams queue per sender until a receive
 * takes them, in arrival order: message order is the match (a UD path
 * delivers in order; a datagram lost on the way stalls the receiver, which
 * fails the awaited peer after --timeout seconds).
 *
 * Flow control, so that a ring never overflows: a sender has at most R
 * datagrams unreleased at a receiver.  The receiver tells its release count
 * (low 16 bits) in the immediate of every datagram it sends back, and in a
 * zero-length credit datagram once R/2 more are released with nothing going
 * back; credit datagrams use the 2 spare slots per peer and need no credit.
 * A credit datagram can be lost: every 50 ms of silence every peer is told
 * again (one more is dropped harmlessly when the spare slots are taken).
 * The sender widens the 16 bits against the highest count it knows
 * (ng_rdma_credit_widen): a count behind it (a reordered or duplicated
 * datagram) is ignored, also at the wrap, and one above the datagrams sent
 * is never taken.
 * Immediate: bit 31 credit datagram, bits 30-16 sender rank (so at most
 * 32768 ranks), bits 15-0 release count.
 *
 * Signaling is selective (verbs.h, ng_ibv_qp_signal_due): a send that is
 * not inline (its buffer is in use until it completes) is signaled, inline
 * sends and credit datagrams only every quarter queue; the wr_id carries the
 * request's number, so a completion completes every request before it.
 *
 * Progress, completion, timeouts and cancellation work as in rc.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "modules/ib/ib.h"
#include "modules/rdmalayer/rdma.h"
#include "peer.h"

/* The operations below. */
extern const struct ng_module_ops ng_module_ops_ibud;

#define NG_UD_GRH      40u
#define NG_UD_SPARE    2u                  /* slots per peer beyond R, for credit datagrams */
#define NG_UD_WR_RANK  0xffffffffu         /* send wr_id: the peer's rank ... */
#define NG_UD_WR_HEAL  ((uint64_t)1 << 32) /* ... a credit datagram told again ... */
#define NG_UD_WR_SHIFT 33u                 /* ... and the low bits of its number */
#define NG_UD_WR_BITS  31u
#define NG_UD_HEAL_NS  50000000u /* credits told again after 50 ms of silence */
#define NG_UD_DEPTH    1024u     /* send queue depth (the device's limit if lower) */
#define NG_UD_INLINE   512u
#define NG_UD_POLL     16
#define NG_UD_NONE     SIZE_MAX
#define NG_UD_MAXRANK  32768
#define NG_UD_CREDIT   0x80000000u

struct ng_ud_peer {
	struct ibv_ah *ah;
	uint32_t qpn;
	int rank;
	ng_status err;        /* NG_OK, or why this peer is unusable (reported) */
	size_t apos;          /* index in the active list, NG_UD_NONE when idle */
	uint64_t tx_seq;      /* datagrams sent to the peer */
	uint64_t credit_seen; /* its release count of mine */
	uint64_t rx_free;     /* its datagrams I released */
	uint64_t credit_sent; /* rx_free last told */
	uint32_t *arr;        /* [R] slots of its arrived datagrams, oldest first */
	size_t arr_head, arr_n;
	struct ng_queue rq; /* posted receives */
	struct ng_queue sq; /* sends waiting for credit or room */
	bool credit_due;
};

struct ng_ud {
	struct ng_comm base; /* first: container_of */
	uint64_t healed;     /* the silence whose credits were told again */
	bool healing;        /* posting those: their completions are no event */
	struct ng_ibv v;
	struct ng_ibv_qp q;
	struct ibv_cq *scq, *rcq;
	struct ng_ibv_area ring_a;
	size_t R, nslots, slot, thresh;
	uint32_t max_inline;
	uint32_t *slot_len;       /* [nslots] payload bytes of an arrived datagram */
	struct ng_ud_peer *peers; /* [size] */
	uint32_t *arrs;           /* [size * R] */
	int *active;
	size_t nactive;
	struct ng_watch watch;
	/* Address handles: every peer's at open (--connect eager), or each
	 * made when a datagram first goes to its peer (lazy) from @eps. */
	bool lazy;
	struct ng_ibv_ep *eps; /* [size] (lazy) */
	size_t nahs, nahs_open;
};

/* One rank's address, exchanged with ng_boot_allgather. */
struct ng_ud_wire {
	struct ng_ibv_ep ep;
	int32_t status;
	uint32_t qpn;
	uint32_t ring;
	uint32_t pad;
};

static inline struct ng_ud *ng_ud_of(struct ng_comm *c)
{
	return ng_container_of(c, struct ng_ud, base);
}

/* ---- active peers ----------------------------------------------------- */

static void ng_ud_activate(struct ng_ud *u, struct ng_ud_peer *p)
{
	if (p->apos != NG_UD_NONE)
		return;
	p->apos = u->nactive;
	u->active[u->nactive++] = p->rank;
}

static void ng_ud_deactivate(struct ng_ud *u, struct ng_ud_peer *p)
{
	int last;

	if (p->apos == NG_UD_NONE || !ng_queue_empty(&p->sq) || !ng_queue_empty(&p->rq) || p->credit_due)
		return;
	last = u->active[--u->nactive];
	u->active[p->apos] = last;
	u->peers[last].apos = p->apos;
	p->apos = NG_UD_NONE;
}

/* ---- errors (cold) ---------------------------------------------------- */

static void __attribute__((cold)) ng_ud_fail(struct ng_ud *u, struct ng_ud_peer *p, ng_status st)
{
	if (!p->err)
		p->err = st;
	ng_ib_queue_drop(&p->rq, p->err);
	ng_ib_queue_drop(&p->sq, p->err);
	p->credit_due = false;
	ng_ud_deactivate(u, p);
}

/* Fails every peer: the shared QP or a CQ is broken. */
static void __attribute__((cold)) ng_ud_fail_all(struct ng_ud *u, ng_status st)
{
	for (int i = 0; i < u->base.size; i++)
		if (i != u->base.rank)
			ng_ud_fail(u, &u->peers[i], st);
}

static void __attribute__((cold)) ng_ud_stall(struct ng_ud *u, int hint, ng_status st)
{
	struct ng_ud_peer *p = &u->peers[hint];
	size_t others = u->nactive - (p->apos != NG_UD_NONE);

	if (st == NG_ERR_TIMEOUT) {
		ng_error("%s: rank %d lost: nothing from it for %g s (a datagram may have been dropped)%s",
		         u->base.mod->name, hint, (double)u->watch.timeout_ns / 1e9,
		         others ? "; failing the other waiting ranks too" : "");
		st = NG_ERR_PEER_LOST;
	}
	ng_ud_fail(u, p, st);
	while (u->nactive)
		ng_ud_fail(u, &u->peers[u->active[u->nactive - 1]], st);
}

/* ---- data path -------------------------------------------------------- */

static inline int ng_ud_post_slot(struct ng_ud *u, size_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(u->ring_a.base + slot * u->slot),
	                      .length = (uint32_t)u->slot,
	                      .lkey = u->ring_a.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	return ibv_post_recv(u->q.qp, &wr, &bad);
}

static inline bool ng_ud_repost(struct ng_ud *u, size_t slot)
{
	int rc = ng_ud_post_slot(u, slot);

	if (__builtin_expect(rc != 0, 0)) {
		ng_error("%s: reposting a receive: %s", u->base.mod->name, strerror(rc));
		ng_ud_fail_all(u, NG_ERR_IO);
		return false;
	}
	return true;
}

/* The address handle of @p, made on its first datagram (lazy): a system
 * call once per peer, in the warm-up.  Returns 0 or an errno (reported). */
static int __attribute__((cold, noinline)) ng_ud_first_use(struct ng_ud *u, struct ng_ud_peer *p)
{
	if (ng_ibv_ah_create(&u->v, &u->eps[p->rank], p->rank, &p->ah) != NG_OK)
		return EIO;
	u->nahs++;
	return 0;
}

/* Posts one datagram to @p: @r's payload, or (r NULL) a credit datagram. */
static int ng_ud_post(struct ng_ud *u, struct ng_ud_peer *p, struct ng_ib_req *r, bool *inl_p)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	uint32_t imm = (uint32_t)u->base.rank << 16 | (uint32_t)(p->rx_free & 0xffffu);
	bool sig;
	int rc;

	if (__builtin_expect(!p->ah, 0) && (rc = ng_ud_first_use(u, p)) != 0)
		return rc;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uint64_t)p->rank | (u->healing ? NG_UD_WR_HEAL : 0) | (u->q.posted + 1) << NG_UD_WR_SHIFT;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.wr.ud.ah = p->ah;
	wr.wr.ud.remote_qpn = p->qpn;
	wr.wr.ud.remote_qkey = NG_IBV_QKEY;
	*inl_p = true;
	if (r && r->len) {
		sge =
		    (struct ibv_sge){.addr = (uintptr_t)r->buf, .length = (uint32_t)r->len, .lkey = r->lkey};
		wr.sg_list = &sge;
		wr.num_sge = 1;
		*inl_p = r->len <= u->max_inline;
	}
	if (*inl_p)
		wr.send_flags |= IBV_SEND_INLINE;
	/* Signaled when the send waits for it (its buffer), else every
	 * sig_every-th (selective signaling, as in rc.c). */
	sig = ng_ibv_qp_signal_due(&u->q, !*inl_p);
	if (sig)
		wr.send_flags |= IBV_SEND_SIGNALED;
	if (!r)
		imm |= NG_UD_CREDIT;
	wr.imm_data = htonl(imm);
	rc = ng_ibv_post(&u->q, &wr, 1);
	if (!rc) {
		if (sig)
			ng_ibv_qp_signaled(&u->q);
		p->credit_sent = p->rx_free;
		p->credit_due = false;
	}
	return rc;
}

/* Posts send @r when credit and room allow.  Returns false when it must
 * wait. */
static bool ng_ud_post_send(struct ng_ud *u, struct ng_ud_peer *p, struct ng_ib_req *r)
{
	bool inl;
	int rc;

	if (!ng_ibv_qp_room(&u->q, 1) || p->tx_seq - p->credit_seen >= u->R)
		return false;
	rc = ng_ud_post(u, p, r, &inl);
	if (rc) {
		ng_error("%s: posting a datagram to rank %d: %s", u->base.mod->name, p->rank, strerror(rc));
		ng_ud_fail(u, p, NG_ERR_IO);
		ng_ib_req_done(r, p->err);
		return true;
	}
	p->tx_seq++;
	r->wr = u->q.posted;
	if (inl)
		ng_ib_req_done(r, NG_OK);
	else
		r->state = NG_IB_POSTED;
	return true;
}

/* Hands arrived datagrams of @p to its posted receives, oldest first. */
static void ng_ud_match(struct ng_ud *u, struct ng_ud_peer *p)
{
	while (p->arr_n && !ng_queue_empty(&p->rq)) {
		size_t slot = p->arr[p->arr_head];
		struct ng_ib_req *r = ng_ib_queue_pop(&p->rq);
		uint32_t len = u->slot_len[slot];

		p->arr_head = (p->arr_head + 1) % u->R;
		p->arr_n--;
		if (len != r->len) {
			ng_error("%s: a message of %u bytes from rank %d, but the receive expects %zu",
			         u->base.mod->name, len, p->rank, r->len);
			ng_ib_req_done(r, NG_ERR_TRUNCATED);
		} else {
			memcpy(r->buf, u->ring_a.base + slot * u->slot + NG_UD_GRH, len);
			ng_ib_req_done(r, NG_OK);
		}
		if (!ng_ud_repost(u, slot))
			return;
		p->rx_free++;
		u->watch.events++;
	}
	if (p->rx_free - p->credit_sent >= u->thresh)
		p->credit_due = true;
}

static void ng_ud_peer_progress(struct ng_ud *u, struct ng_ud_peer *p)
{
	struct ng_ib_req *r;
	bool inl;
	int rc;

	if (!p->err)
		ng_ud_match(u, p);
	while (!p->err && (r = ng_ib_queue_head(&p->sq))) {
		bool posted = ng_ud_post_send(u, p, r);

		if (p->err || !posted)
			break;
		ng_ib_queue_pop(&p->sq);
		u->watch.events++;
	}
	if (!p->err && p->credit_due && ng_ibv_qp_room(&u->q, 1)) {
		rc = ng_ud_post(u, p, NULL, &inl);
		if (rc) {
			ng_error("%s: posting credits to rank %d: %s", u->base.mod->name, p->rank,
			         strerror(rc));
			ng_ud_fail(u, p, NG_ERR_IO);
		}
	}
	ng_ud_deactivate(u, p);
}

/* Credits told again after a silence (ng_rdma_credit_heal_due): a lost
 * credit datagram would leave a sender waiting for ever. */
static void ng_ud_heal(struct ng_ud *u)
{
	u->healing = true;
	for (int i = 0; i < u->base.size; i++) {
		struct ng_ud_peer *p = &u->peers[i];
		bool inl;
		int rc;

		if (i == u->base.rank || p->err || !p->credit_sent || !ng_ibv_qp_room(&u->q, 1))
			continue;
		rc = ng_ud_post(u, p, NULL, &inl);
		if (rc) {
			ng_error("%s: posting credits to rank %d: %s", u->base.mod->name, p->rank,
			         strerror(rc));
			ng_ud_fail(u, p, NG_ERR_IO);
		}
	}
	u->healing = false;
}

static void __attribute__((cold)) ng_ud_cq_error(struct ng_ud *u, const char *which, int n)
{
	ng_error("%s: polling the %s completion queue: %s", u->base.mod->name, which,
	         strerror(n < 0 ? -n : EIO));
	ng_ud_fail_all(u, NG_ERR_IO);
}

/* The sender of a received datagram, or NULL for a stray one. */
static inline struct ng_ud_peer *ng_ud_sender(struct ng_ud *u, const struct ibv_wc *wc, uint32_t imm)
{
	uint32_t rank = (imm >> 16) & 0x7fffu;

	if (rank >= (uint32_t)u->base.size || rank == (uint32_t)u->base.rank ||
	    u->peers[rank].qpn != wc->src_qp)
		return NULL;
	return &u->peers[rank];
}

static void ng_ud_poll(struct ng_ud *u)
{
	struct ibv_wc wc[NG_UD_POLL];
	int n, i;

	n = ibv_poll_cq(u->scq, NG_UD_POLL, wc);
	if (n < 0) {
		ng_ud_cq_error(u, "send", n);
		return;
	}
	for (i = 0; i < n; i++) {
		struct ng_ud_peer *p = &u->peers[wc[i].wr_id & NG_UD_WR_RANK];
		uint64_t num = ng_ibv_qp_number(&u->q, wc[i].wr_id >> NG_UD_WR_SHIFT, NG_UD_WR_BITS);

		/* A credit datagram told again (ng_ud_heal) is no sign of the peer. */
		u->watch.events += !(wc[i].wr_id & NG_UD_WR_HEAL);

		/* A completion completes every request before it. */
		if (ng_ibv_qp_complete_to(&u->q, num, wc[i].status)) {
			/* UD send errors are local: the QP is broken for every peer. */
			ng_error("%s: a datagram to rank %d failed: %s (vendor error 0x%x)",
			         u->base.mod->name, p->rank, ibv_wc_status_str(wc[i].status),
			         wc[i].vendor_err);
			ng_ud_fail_all(u, NG_ERR_IO);
		}
	}

	n = ibv_poll_cq(u->rcq, NG_UD_POLL, wc);
	if (n < 0) {
		ng_ud_cq_error(u, "receive", n);
		return;
	}
	for (i = 0; i < n; i++) {
		size_t slot = (size_t)wc[i].wr_id;
		struct ng_ud_peer *p;
		uint32_t imm;

		if (wc[i].status != IBV_WC_SUCCESS) {
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				ng_error("%s: a receive failed: %s (vendor error 0x%x)", u->base.mod->name,
				         ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
				ng_ud_fail_all(u, NG_ERR_IO);
			}
			continue;
		}
		imm = (wc[i].wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc[i].imm_data) : 0;
		p = (wc[i].wc_flags & IBV_WC_WITH_IMM) && wc[i].byte_len >= NG_UD_GRH
		        ? ng_ud_sender(u, &wc[i], imm)
		        : NULL;
		if (!p || p->err || (imm & NG_UD_CREDIT)) {
			if (p)
				(void)ng_rdma_credit_widen(&p->credit_seen, imm, UINT16_MAX, p->tx_seq);
			if (!ng_ud_repost(u, slot))
				return;
			continue;
		}
		(void)ng_rdma_credit_widen(&p->credit_seen, imm, UINT16_MAX, p->tx_seq);
		if (p->arr_n == u->R) {
			ng_error("%s: rank %d sent more datagrams than it had credit for", u->base.mod->name,
			         p->rank);
			ng_ud_fail(u, p, NG_ERR_PROTO);
			if (!ng_ud_repost(u, slot))
				return;
			continue;
		}
		u->slot_len[slot] = wc[i].byte_len - NG_UD_GRH;
		p->arr[(p->arr_head + p->arr_n) % u->R] = (uint32_t)slot;
		p->arr_n++;
		if (!ng_queue_empty(&p->sq))
			ng_ud_activate(u, p); /* its credit may free a waiting send */
	}
	u->watch.events += (uint64_t)n;
}

static void ng_ud_progress(struct ng_ud *u, int hint)
{
	uint64_t ev = u->watch.events;
	ng_status st;
	size_t i;

	if (__builtin_expect(ng_watch_cancelled(&u->watch), 0)) {
		ng_ud_stall(u, hint, NG_ERR_CANCELLED);
		return;
	}
	ng_ud_poll(u);
	for (i = u->nactive; i-- > 0;) {
		if (i < u->nactive)
			ng_ud_peer_progress(u, &u->peers[u->active[i]]);
	}
	if (u->watch.events == ev) {
		st = ng_watch_idle(&u->watch);
		if (st)
			ng_ud_stall(u, hint, st);
		else if (ng_rdma_credit_heal_due(&u->watch, &u->healed, NG_UD_HEAL_NS))
			ng_ud_heal(u);
	}
}

static inline void ng_ud_check(struct ng_ud *u, struct ng_ib_req *r)
{
	if (r->state == NG_IB_QUEUED && u->peers[r->peer].err)
		ng_ib_req_done(r, u->peers[r->peer].err);
	if (r->state != NG_IB_POSTED)
		return;
	if (ng_ibv_qp_is_done(&u->q, r->wr))
		ng_ib_req_done(r, ng_ibv_qp_failed(&u->q, r->wr) ? NG_ERR_IO : NG_OK);
	else if (u->peers[r->peer].err)
		ng_ib_req_done(r, u->peers[r->peer].err);
}

/* ---- operations ------------------------------------------------------- */

static ng_status ng_ud_wait(struct ng_comm *c, struct ng_req *req)
{
	struct ng_ud *u = ng_ud_of(c);
	struct ng_ib_req *r = ng_ib_req_of(req);

	while (r->state != NG_IB_DONE) {
		ng_ud_progress(u, r->peer);
		ng_ud_check(u, r);
	}
	return r->status;
}

static ng_status ng_ud_test(struct ng_comm *c, struct ng_req *req, bool *done_p)
{
	struct ng_ud *u = ng_ud_of(c);
	struct ng_ib_req *r = ng_ib_req_of(req);

	if (r->state != NG_IB_DONE) {
		ng_ud_progress(u, r->peer);
		ng_ud_check(u, r);
	}
	*done_p = r->state == NG_IB_DONE;
	return *done_p ? r->status : NG_OK;
}

static ng_status ng_ud_start(struct ng_ud *u, struct ng_ib_req *r)
{
	const struct ng_ibv_mem *m;
	ng_status st = u->peers[r->peer].err;

	if (!st && r->len > u->base.max_msg) {
		ng_error("%s: a message of %zu bytes is above the datagram limit of %zu", u->base.mod->name,
		         r->len, u->base.max_msg);
		st = NG_ERR_USAGE;
	}
	if (!st) {
		m = ng_ibv_mem_find(&u->v, r->buf, r->len);
		if (m) {
			r->lkey = m->mr->lkey;
			return NG_OK;
		}
		ng_error("%s: buffer %p (%zu bytes) does not come from the module's alloc()",
		         u->base.mod->name, (void *)r->buf, r->len);
		st = NG_ERR_USAGE;
	}
	ng_ib_req_done(r, st);
	return st;
}

static ng_status ng_ud_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *req)
{
	struct ng_ud *u = ng_ud_of(c);
	struct ng_ud_peer *p = &u->peers[peer];
	struct ng_ib_req *r = ng_ib_req_of(req);
	ng_status st;

	assert(peer >= 0 && peer < c->size && peer != c->rank);
	ng_ib_req_init(r, peer, buf, len, false);
	st = ng_ud_start(u, r);
	if (st)
		return st;
	if (ng_queue_empty(&p->sq) && ng_ud_post_send(u, p, r))
		return r->state == NG_IB_DONE ? r->status : NG_OK;
	ng_queue_push(&p->sq, &r->link);
	ng_ud_activate(u, p);
	return NG_OK;
}

static ng_status ng_ud_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *req)
{
	struct ng_ud *u = ng_ud_of(c);
	struct ng_ud_peer *p = &u->peers[peer];
	struct ng_ib_req *r = ng_ib_req_of(req);
	ng_status st;

	assert(peer >= 0 && peer < c->size && peer != c->rank);
	ng_ib_req_init(r, peer, buf, len, true);
	st = ng_ud_start(u, r);
	if (st)
		return st;
	ng_queue_push(&p->rq, &r->link);
	ng_ud_activate(u, p);
	if (p->arr_n)
		ng_ud_match(u, p);
	return r->state == NG_IB_DONE ? r->status : NG_OK;
}

/* Blocking send and receive are the core's: isend/irecv + wait. */
static const struct ng_msg_ops ng_ud_msg_ops = {
    .isend = ng_ud_isend,
    .irecv = ng_ud_irecv,
    .test = ng_ud_test,
    .wait = ng_ud_wait,
};

static ng_status ng_ud_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	return ng_ibv_mem_alloc(&ng_ud_of(c)->v, len, buf_p);
}

static void ng_ud_free(struct ng_comm *c, void *buf)
{
	if (buf)
		ng_ibv_mem_free(&ng_ud_of(c)->v, buf);
}

/* ---- setup ------------------------------------------------------------ */

static void ng_ud_close(struct ng_comm *c)
{
	struct ng_ud *u = ng_ud_of(c);

	ng_ibv_qp_destroy(&u->q);
	if (u->peers)
		for (int i = 0; i < c->size; i++)
			if (u->peers[i].ah)
				ibv_destroy_ah(u->peers[i].ah);
	if (u->rcq)
		ibv_destroy_cq(u->rcq);
	if (u->scq)
		ibv_destroy_cq(u->scq);
	ng_ibv_area_free(&u->ring_a);
	ng_ibv_close(&u->v);
	free(u->eps);
	free(u->active);
	free(u->arrs);
	free(u->slot_len);
	free(u->peers);
	free(u);
}

/* Memory, CQs and the QP in INIT with the ring posted. */
static ng_status ng_ud_setup(struct ng_ud *u, const struct ng_ib_conf *cf)
{
	const struct ibv_device_attr *d = &u->v.dattr;
	size_t size = (size_t)u->base.size, npeers = size - 1;
	const char *who = u->base.mod->name;
	uint32_t inl = NG_UD_INLINE, depth;
	ng_status st;

	if (size > NG_UD_MAXRANK) {
		ng_error("%s: at most %d ranks (the immediate data has 15 bits for the rank)", who,
		         NG_UD_MAXRANK);
		return NG_ERR_USAGE;
	}
	u->R = cf->ring;
	u->thresh = u->R / 2;
	u->nslots = (u->R + NG_UD_SPARE) * (npeers ? npeers : 1);
	u->slot = (NG_UD_GRH + ng_ibv_mtu_bytes(u->v.pattr.active_mtu) + 63) / 64 * 64;
	if (u->nslots > (size_t)d->max_qp_wr || u->nslots > (size_t)d->max_cqe) {
		ng_error(
		    "%s: %zu peers * (--ib-ring %zu + %u) receives exceed what %s allows (%d work requests, "
		    "%d completions); lower --ib-ring",
		    who, npeers, u->R, NG_UD_SPARE, u->v.name, d->max_qp_wr, d->max_cqe);
		return NG_ERR_USAGE;
	}
	depth = NG_UD_DEPTH < (uint32_t)d->max_qp_wr ? NG_UD_DEPTH : (uint32_t)d->max_qp_wr;
	if (depth > (uint32_t)d->max_cqe)
		depth = (uint32_t)d->max_cqe;

	u->peers = calloc(size, sizeof(*u->peers));
	u->arrs = calloc(size * u->R, sizeof(*u->arrs));
	u->slot_len = calloc(u->nslots, sizeof(*u->slot_len));
	u->active = calloc(size, sizeof(*u->active));
	if (!u->peers || !u->arrs || !u->slot_len || !u->active) {
		ng_error("%s: out of memory", who);
		return NG_ERR_NOMEM;
	}
	for (size_t i = 0; i < size; i++) {
		u->peers[i].rank = (int)i;
		u->peers[i].apos = NG_UD_NONE;
		u->peers[i].arr = &u->arrs[i * u->R];
		ng_queue_init(&u->peers[i].rq);
		ng_queue_init(&u->peers[i].sq);
	}
	st =
	    ng_ibv_area_alloc(&u->v, u->nslots * u->slot, IBV_ACCESS_LOCAL_WRITE, "receive ring", &u->ring_a);
	if (st)
		return st;
	u->scq = ibv_create_cq(u->v.ctx, (int)depth, NULL, NULL, 0);
	u->rcq = u->scq ? ibv_create_cq(u->v.ctx, (int)u->nslots, NULL, NULL, 0) : NULL;
	if (!u->rcq) {
		ng_error("%s: cannot create completion queues (%u and %zu entries) on %s: %s", who, depth,
		         u->nslots, u->v.name, strerror(errno));
		return NG_ERR_SYS;
	}
	st = ng_ibv_qp_create(&u->v, IBV_QPT_UD, u->scq, u->rcq, depth, (uint32_t)u->nslots, &inl, &u->q);
	u->q.sig_every = depth / 4 ? depth / 4 : 1;
	if (st)
		return st;
	u->max_inline = u->q.max_inline;
	st = ng_ibv_qp_init(&u->v, &u->q);
	if (st)
		return st;
	for (size_t s = 0; s < u->nslots; s++) {
		int rc = ng_ud_post_slot(u, s);

		if (rc) {
			ng_error("%s: posting the receive ring: %s", who, strerror(rc));
			return NG_ERR_SYS;
		}
	}
	return NG_OK;
}

static ng_status ng_ud_open(const struct ng_module *m, const struct ng_module_env *env,
                            struct ng_comm **comm_p)
{
	struct ng_boot *b = env->boot;
	size_t size = (size_t)b->size;
	struct ng_ud_wire mine, *all = NULL;
	enum ibv_mtu mtu;
	struct ng_ib_conf cf;
	int32_t ok, *oks = NULL;
	ng_status st, lst;
	struct ng_ud *u;

	st = ng_ib_conf_read(env, m->name, &cf);
	if (st)
		return st;
	if (cf.write || cf.read) {
		if (b->rank == 0)
			ng_error("%s: --ib-mode %s needs a connection (ibrc or ibuc); datagrams only send",
			         m->name, cf.write ? "write" : "read");
		return NG_ERR_USAGE;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		ng_error("%s: out of memory", m->name);
		return NG_ERR_NOMEM;
	}
	ng_comm_init(&u->base, m, &ng_module_ops_ibud, b->rank, b->size, env->cancel);
	u->base.spins = !cf.yield;
	u->lazy = env->connect_lazy;
	ng_watch_init(&u->watch, env->cancel, env->timeout_s, cf.yield);

	cf.dev.qpt = IBV_QPT_UD;
	st = ng_ibv_open(&u->v, &cf.dev, b);
	if (st) {
		free(u);
		return st;
	}
	lst = ng_ud_setup(u, &cf);

	all = calloc(size, sizeof(*all));
	oks = calloc(size, sizeof(*oks));
	if (!all || !oks) {
		ng_error("%s: out of memory", m->name);
		st = NG_ERR_NOMEM;
		goto err_free;
	}
	memset(&mine, 0, sizeof(mine));
	ng_ibv_ep_get(&u->v, &mine.ep);
	mine.status = (int32_t)lst;
	mine.qpn = u->q.qp ? u->q.qp->qp_num : 0;
	mine.ring = (uint32_t)cf.ring;
	st = ng_boot_allgather(b, &mine, sizeof(mine), all);
	if (st)
		goto err_free;
	if (lst) {
		st = lst;
		goto err_free;
	}
	mtu = u->v.pattr.active_mtu;
	for (size_t i = 0; i < size; i++) {
		if (all[i].status) {
			/* A peer's status: one of ng_status (peer.h). */
			size_t v;

			st = ng_peer_slen("ibud status", (int)i, all[i].status, 1, NG_STATUS_COUNT - 1, &v)
			         ? NG_ERR_PROTO
			         : (ng_status)v;
			goto err_free;
		}
		if (i != (size_t)b->rank && (st = ng_ibv_ep_take(b, &all[i].ep, (int)i)) != NG_OK)
			goto err_free;
		if (all[i].ring != mine.ring) {
			if (b->rank == 0)
				ng_error("%s: rank %zu runs with another --ib-ring", m->name, i);
			st = NG_ERR_USAGE;
			goto err_free;
		}
		if (all[i].ep.mtu < mtu)
			mtu = (enum ibv_mtu)all[i].ep.mtu;
	}
	st = ng_ibv_eps_check(&u->v, b->rank, size, &all[0].ep, sizeof(*all));
	if (st)
		goto err_free;

	/* RTR/RTS, address handles; then agree that all are ready. */
	lst = ng_ibv_qp_connect(&u->v, &u->q, NULL, 0, mtu, -1);
	if (u->lazy && !lst) {
		u->eps = calloc(size, sizeof(*u->eps));
		if (!u->eps) {
			ng_error("%s: out of memory", m->name);
			lst = NG_ERR_NOMEM;
		}
	}
	for (size_t i = 0; i < size && !lst; i++) {
		if (i == (size_t)b->rank)
			continue;
		u->peers[i].qpn = all[i].qpn;
		if (u->lazy) {
			u->eps[i] = all[i].ep;
			continue;
		}
		lst = ng_ibv_ah_create(&u->v, &all[i].ep, (int)i, &u->peers[i].ah);
		u->nahs += !lst;
	}
	u->nahs_open = u->nahs;
	ok = (int32_t)lst;
	st = ng_boot_allgather(b, &ok, sizeof(ok), oks);
	if (st)
		goto err_free;
	for (size_t i = 0; i < size; i++) {
		if (oks[i]) {
			size_t v;

			st = lst ? lst
			     : ng_peer_slen("ibud status", (int)i, oks[i], 1, NG_STATUS_COUNT - 1, &v)
			         ? NG_ERR_PROTO
			         : (ng_status)v;
			goto err_free;
		}
	}
	free(oks);
	free(all);

	u->base.max_msg = ng_ibv_mtu_bytes(mtu) - NG_UD_GRH;
	ng_ibv_describe(&u->v, mtu, u->base.device, sizeof(u->base.device));
	*comm_p = &u->base;
	return NG_OK;

err_free:
	free(oks);
	free(all);
	ng_ud_close(&u->base);
	return st;
}

/* The "ibud" block of the result (rank 0's): its one QP and its address
 * handles. */
static json_t *ng_ud_report(struct ng_comm *c)
{
	struct ng_ud *u = ng_ud_of(c);

	return json_pack("{s:s,s:I,s:I,s:I}", "connect", u->lazy ? "lazy" : "eager", "qps", (json_int_t)1,
	                 "address_handles", (json_int_t)u->nahs, "address_handles_at_open",
	                 (json_int_t)u->nahs_open);
}

/* clang-format off */
_Static_assert(NG_IBUD_MAX_MSG == 4096 - NG_UD_GRH, "ib_desc.h and ud.c agree on ibud's largest message");

/* The operations of the executable's descriptor ng_module_ibud
 * (ib_desc.c), ngauge-verbs.so's entry "module:ibud". */
const struct ng_module_ops ng_module_ops_ibud = {
	.open = ng_ud_open,
	.close = ng_ud_close,
	.alloc = ng_ud_alloc,
	.free = ng_ud_free,
	.msg = &ng_ud_msg_ops,
	.report = ng_ud_report,
};
/* clang-format on */
