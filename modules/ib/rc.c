/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "ibrc" and "ibuc" modules: two-sided messages over InfiniBand/RoCE
 * reliable (RC) or unreliable (UC) connections, one queue pair per pair of
 * ranks, on the verbs core (verbs.h).
 *
 * --ib-mode write is not this file's: it is the rdma module's channel
 * (modules/chan/chan.h, the Netgauge paper's one-sided channel, Fig. 4) over
 * the RDMA layer's verbs backend, one RDMA write per message, with the --ib-*
 * settings.  --ib-mode read (the receiver pulls every message with RDMA
 * read after the sender's notice) uses this file's ring, credits, progress
 * and setup, and its own data path in rc_read.c (described in rc_int.h).
 * What follows describes send mode.
 *
 * Ring.  Every rank keeps, for every peer, a ring of R = --ib-ring slots of
 * S = --ib-eager payload bytes that only that peer sends into, and a 64-bit
 * word the peer writes with RDMA: its credits (how many of my messages it
 * has released).  A ring message is one of
 *   EAGER  a whole message of at most S bytes;
 *   CTS    "clear to send": the receiver's buffer (address, key, length) for
 *          data message number idx, sent when a receive larger than S is
 *          posted;
 *   FIN    the sender has RDMA-written data message idx into that buffer.
 * Data messages (EAGER or rendezvous) are numbered in posting order on both
 * sides; message order is the match, the n-th receive gets the n-th message.
 *
 * Data path: ring messages are SEND_WITH_IMM into the peer's pre-posted
 * receives (one per slot, reposted in ring order), the immediate carries the
 * type (and flags); a rendezvous is RDMA writes into the receive buffer, the
 * last one WRITE_WITH_IMM as its FIN.  Messages up to the device's
 * max_inline_data go inline.
 *
 * Flow control: a sender may have at most R ring messages unreleased at the
 * receiver; the receiver releases slots in ring order once consumed.  Every
 * ring message carries the sender's own release count in its immediate data
 * (the low 29 bits, widened by the receiver against the last count it saw),
 * so traffic in both directions (a ping-pong) returns credits with no work
 * request of its own; when R/4 more slots are released than the peer has been
 * told, the receiver RDMA-writes its release count into the sender's credit
 * word (traffic in one direction); on UC, where that write can be lost
 * unnoticed, every peer is told again every 50 ms of silence.  A ring never overflows: no
 * receiver-not-ready on RC, no drops on UC.  EAGER messages may use only R - 2K of the R credits
 * (K = max(1, R/8) CTSs outstanding per direction), so CTS and FIN always
 * find room even when unexpected EAGER messages (no receive posted yet) fill
 * the ring.  CTS and FIN are processed in the background even when they lie
 * behind unexpected EAGER messages.  Limits: a rank buffers at most R - 2K
 * unexpected EAGER messages per peer (further sends wait until receives are
 * posted), and while such messages stay unreceived, at most 2K rendezvous
 * exchanges with that peer can proceed past them.
 *
 * Completion: signaled selectively (ng_rc_post): a work request that a send
 * waits for (a message not inline, a rendezvous's last write or FIN, a
 * read) and at least every quarter send queue's worth, so a stream of
 * inline messages, credit writes and CTSs costs a completion per
 * depth / 4 work requests, not one each; a completion completes every
 * request before it on its QP (its number is in the wr_id).  A send is
 * complete once the QP has completed its last work request (an inline EAGER
 * send at once).
 * Progress (test, wait, blocking calls) polls the completion queues and the
 * counters in user space: no system call besides the provider's own
 * doorbells.  Peer loss: an error completion names the peer; silence for
 * --timeout seconds while requests are outstanding fails the awaited peer
 * with NG_ERR_PEER_LOST (UC never reports a loss otherwise); the cancel flag
 * is checked in the same loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/chan/chan.h"
#include "modules/ib/rc_int.h"

/* The executable's descriptors (ib_desc.c), and the operations below. */
extern const struct ng_module ng_module_ibrc;
extern const struct ng_module ng_module_ibuc;
extern const struct ng_module_ops ng_module_ops_ibrc;
extern const struct ng_module_ops ng_module_ops_ibuc;

static void __attribute__((cold)) ng_rc_stall(struct ng_rc *t, int hint, ng_status st)
{
	struct ng_rc_peer *p = &t->peers[hint];
	size_t others = t->nactive - (p->apos != NG_RC_NONE);

	if (st == NG_ERR_TIMEOUT) {
		ng_error("%s: rank %d lost: nothing from it for %g s (no completion, no message)%s",
		         t->base.mod->name, hint, (double)t->watch.timeout_ns / 1e9,
		         others ? "; failing the other waiting ranks too" : "");
		st = NG_ERR_PEER_LOST;
	}
	ng_rc_fail(t, p, st);
	while (t->nactive)
		ng_rc_fail(t, &t->peers[t->active[t->nactive - 1]], st);
}

/* Returns my release count to @p when due and possible. */
static void ng_rc_post_credit(struct ng_rc *t, struct ng_rc_peer *p)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint64_t *val;
	int rc;

	if (!ng_rc_room(t, p, 1))
		return;
	val = (uint64_t *)(void *)ng_rc_stage(t, p);
	*val = p->rx_free;
	sge = (struct ibv_sge){.addr = (uintptr_t)val, .length = 8, .lkey = ng_ibv_stage_lkey(&t->stage)};
	memset(&wr, 0, sizeof(wr));
	ng_ibv_wr_rdma(&wr, IBV_WR_RDMA_WRITE, (uint64_t)p->rank | (t->healing ? NG_RC_WR_HEAL : 0),
	               p->r_ctl + 8, p->r_ctl_rkey);
	/* Nobody waits for it: signaled only when the queue needs one. */
	wr.send_flags = 8 <= t->max_inline ? IBV_SEND_INLINE : 0;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	rc = ng_rc_post(t, p, &wr);
	if (rc) {
		ng_rc_post_error(t, p, "credits", rc);
		return;
	}
	p->credit_sent = p->rx_free;
	p->credit_due = false;
}

/* An EAGER send.  Returns false when it must wait (credit, room). */
static bool ng_rc_post_eager(struct ng_rc *t, struct ng_rc_peer *p, struct ng_ib_req *r)
{
	struct ibv_sge sge = {.addr = (uintptr_t)r->buf, .length = (uint32_t)r->len, .lkey = r->lkey};
	bool inl;
	int rc;

	if (!ng_rc_room(t, p, 1) || !ng_rc_credit(t, p, true))
		return false;
	rc = ng_rc_post_msg(t, p, NG_RC_EAGER, 0, &sge, r->len ? 1 : 0, &inl);
	if (rc) {
		ng_rc_post_error(t, p, "a message", rc);
		ng_ib_req_done(r, p->err);
		return true;
	}
	p->tx_idx++;
	r->wr = p->q.posted;
	if (inl)
		ng_ib_req_done(r, NG_OK);
	else
		r->state = NG_IB_POSTED;
	return true;
}

/*
 * A rendezvous send: waits for the receiver's CTS, RDMA-writes the payload
 * into its buffer (in pieces of at most maxw bytes, as the send queue has
 * room) and ends with the FIN.  Returns false when it must wait; then it
 * stays at the head of the send queue and continues from r->off.
 */
static bool ng_rc_post_rndv(struct ng_rc *t, struct ng_rc_peer *p, struct ng_ib_req *r)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	bool inl;
	int rc;

	if (!r->cts) {
		const struct ng_rc_cts *c;

		if (p->cts_head == p->cts_tail)
			return false;
		c = &p->cts[p->cts_head % t->K];
		if (c->idx != p->tx_idx) {
			ng_rc_proto(t, p,
			            "its receive and this send do not pair (one expects a small message, the "
			            "other a large one)");
			ng_ib_req_done(r, p->err);
			return true;
		}
		r->raddr = c->addr;
		r->rkey = c->rkey;
		r->mismatch = c->len != r->len;
		r->cts = true;
		p->cts_head++;
		if (r->mismatch) {
			ng_error("%s: rank %d receives %llu bytes for this message of %zu", t->base.mod->name,
			         p->rank, (unsigned long long)c->len, r->len);
			r->off = r->len;
		}
	}
	while (r->off < r->len) {
		size_t n = r->len - r->off < t->maxw ? r->len - r->off : t->maxw;
		bool fin = r->off + n == r->len;

		if (!ng_rc_room(t, p, 1) || (fin && !ng_rc_credit(t, p, false)))
			return false;
		memset(&wr, 0, sizeof(wr));
		ng_ibv_wr_rdma(&wr, fin ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE, (uint64_t)p->rank,
		               r->raddr + r->off, r->rkey);
		if (fin)
			wr.imm_data = htonl(NG_RC_IMM(NG_RC_FIN, 0, p->rx_free));
		else
			wr.send_flags = 0; /* the last write's completion covers it */
		sge = (struct ibv_sge){
		    .addr = (uintptr_t)(r->buf + r->off), .length = (uint32_t)n, .lkey = r->lkey};
		wr.sg_list = &sge;
		wr.num_sge = 1;
		rc = ng_rc_post(t, p, &wr);
		if (rc) {
			ng_rc_post_error(t, p, "an RDMA write", rc);
			ng_ib_req_done(r, p->err);
			return true;
		}
		r->off += n;
		if (fin) {
			p->tx_seq++;
			ng_rc_credit_carried(p);
			goto posted;
		}
	}
	/* Nothing to write: the FIN as a ring message. */
	if (!ng_rc_room(t, p, 1) || !ng_rc_credit(t, p, false))
		return false;
	rc = ng_rc_post_msg(t, p, NG_RC_FIN, r->mismatch ? NG_RC_F_MISMATCH : 0, NULL, 0, &inl);
	if (rc) {
		ng_rc_post_error(t, p, "a message", rc);
		ng_ib_req_done(r, p->err);
		return true;
	}
posted:
	p->tx_idx++;
	r->wr = p->q.posted;
	r->state = NG_IB_POSTED;
	return true;
}

/* Posts what the send queue of @p holds, in order, as far as possible. */
static void ng_rc_push(struct ng_rc *t, struct ng_rc_peer *p)
{
	struct ng_ib_req *r;

	while ((r = ng_ib_queue_head(&p->sq))) {
		bool posted;

		if (t->read) /* the NOTICE: moves r to p->wq */
			posted = ng_rc_read_send(t, p, r);
		else
			posted = r->rndv ? ng_rc_post_rndv(t, p, r) : ng_rc_post_eager(t, p, r);
		if (p->err) /* failed: the queue was dropped */
			return;
		if (!posted)
			return;
		if (!t->read)
			ng_ib_queue_pop(&p->sq);
		t->watch.events++;
	}
}

/* Sends the CTSs of posted large receives, in order. */
static void ng_rc_send_cts(struct ng_rc *t, struct ng_rc_peer *p)
{
	struct ng_ib_req *r;

	while ((r = p->cts_next)) {
		struct ng_rc_cts *c;
		struct ibv_sge sge;
		bool inl;
		int rc;

		if (!r->rndv) {
			p->cts_next = ng_ib_req_next(r);
			continue;
		}
		if (p->cts_out >= t->K || !ng_rc_room(t, p, 1) || !ng_rc_credit(t, p, false))
			return;
		/* Staged with the work request that carries it. */
		c = (struct ng_rc_cts *)(void *)ng_rc_stage(t, p);
		*c = (struct ng_rc_cts){
		    .idx = r->idx, .addr = (uintptr_t)r->buf, .len = r->len, .rkey = r->bkey};
		sge = (struct ibv_sge){
		    .addr = (uintptr_t)c, .length = sizeof(*c), .lkey = ng_ibv_stage_lkey(&t->stage)};
		rc = ng_rc_post_msg(t, p, NG_RC_CTS, 0, &sge, 1, &inl);
		if (rc) {
			ng_rc_post_error(t, p, "a CTS", rc);
			return;
		}
		r->cts = true;
		p->cts_out++;
		p->cts_next = ng_ib_req_next(r);
		t->watch.events++;
	}
}

/* ---- receive side ----------------------------------------------------- */

/* Gives ring message @s (a data message) to the receive at the head of rq. */
static void ng_rc_deliver(struct ng_rc *t, struct ng_rc_peer *p, uint64_t s)
{
	size_t slot = (size_t)(s % t->R);
	struct ng_rc_meta *m = &p->meta[slot];
	struct ng_ib_req *r = ng_ib_queue_head(&p->rq);
	ng_status st = NG_OK;

	if (t->read) {
		ng_rc_read_deliver(t, p, s);
		return;
	}
	if (m->type == NG_RC_EAGER) {
		if (r->rndv || m->len != r->len)
			st = ng_rc_truncated(t, p, m->len, r->len);
		else
			memcpy(r->buf, ng_rc_payload(t, p, slot), m->len);
	} else if (!r->cts) {
		ng_rc_proto(t, p, "a FIN for a receive that sent no CTS");
		return;
	} else {
		p->cts_out--;
		if (m->flags & NG_RC_F_MISMATCH)
			st = ng_rc_truncated(t, p, SIZE_MAX, r->len);
	}
	m->done = true;
	if (p->cts_next == r)
		p->cts_next = ng_ib_req_next(r);
	ng_ib_queue_pop(&p->rq);
	ng_ib_req_done(r, st);
}

/* Matches buffered (unexpected) data messages with posted receives. */
static void ng_rc_match(struct ng_rc *t, struct ng_rc_peer *p)
{
	while (p->unexp_n && !ng_queue_empty(&p->rq) && !p->err) {
		uint64_t s = p->unexp[p->unexp_head];

		p->unexp_head = (p->unexp_head + 1) % t->R;
		p->unexp_n--;
		ng_rc_deliver(t, p, s);
	}
}

/* Looks at the ring messages of @p that arrived since the last look. */
static void ng_rc_scan(struct ng_rc *t, struct ng_rc_peer *p)
{
	uint64_t tail = p->rx_tail;

	if (tail - p->rx_free > t->R) {
		ng_rc_proto(t, p, "it overran the ring");
		return;
	}
	while (p->rx_scan < tail && !p->err) {
		uint64_t s = p->rx_scan;
		size_t slot = (size_t)(s % t->R);
		struct ng_rc_meta *m = &p->meta[slot];

		if (t->read && m->type == NG_RC_FIN) {
			ng_rc_read_fin(t, p, m);
			m->done = true;
		} else if (m->type == NG_RC_CTS) {
			if (p->cts_tail - p->cts_head >= t->K) {
				ng_rc_proto(t, p, "more CTSs than the window allows");
				return;
			}
			memcpy(&p->cts[p->cts_tail % t->K], ng_rc_payload(t, p, slot),
			       sizeof(struct ng_rc_cts));
			p->cts_tail++;
			m->done = true;
		} else if (!p->unexp_n && !ng_queue_empty(&p->rq)) {
			ng_rc_deliver(t, p, s);
		} else {
			p->unexp[(p->unexp_head + p->unexp_n) % t->R] = s;
			p->unexp_n++;
		}
		p->rx_scan++;
		t->watch.events++;
	}
}

/* Releases consumed slots in ring order (send mode: reposts their receives)
 * and returns credits when R/4 more are free. */
static void ng_rc_release(struct ng_rc *t, struct ng_rc_peer *p)
{
	while (p->rx_free < p->rx_scan) {
		size_t slot = (size_t)(p->rx_free % t->R);
		int rc;

		if (!p->meta[slot].done)
			break;
		p->meta[slot].done = false;
		rc = ng_rc_post_slot(t, p, slot);
		if (rc) {
			ng_error("%s: reposting a receive for rank %d: %s", t->base.mod->name, p->rank,
			         strerror(rc));
			ng_rc_fail(t, p, NG_ERR_IO);
			return;
		}
		p->rx_free++;
	}
	if (p->rx_free - p->credit_sent >= t->thresh)
		p->credit_due = true;
	if (p->credit_due)
		ng_rc_post_credit(t, p);
}

/* ---- progress --------------------------------------------------------- */

static void ng_rc_peer_progress(struct ng_rc *t, struct ng_rc_peer *p)
{
	if (!p->err) {
		ng_rc_match(t, p);
		ng_rc_scan(t, p);
	}
	if (!p->err)
		ng_rc_release(t, p);
	if (!p->err && t->read)
		ng_rc_read_progress(t, p);
	if (!p->err)
		ng_rc_send_cts(t, p);
	if (!p->err)
		ng_rc_push(t, p);
	ng_rc_deactivate(t, p);
}

/* UC: credits told again after a silence (ng_rdma_credit_heal_due): a lost
 * credit write would leave a sender waiting for ever. */
static void ng_rc_heal(struct ng_rc *t)
{
	if (!ng_rdma_credit_heal_due(&t->watch, &t->healed, NG_RC_HEAL_NS))
		return;
	t->healing = true;
	for (int i = 0; i < t->base.size; i++) {
		struct ng_rc_peer *p = &t->peers[i];

		if (i != t->base.rank && !p->err && p->credit_sent)
			ng_rc_post_credit(t, p);
	}
	t->healing = false;
}

static void __attribute__((cold)) ng_rc_cq_error(struct ng_rc *t, const char *which, int n)
{
	ng_error("%s: polling the %s completion queue: %s", t->base.mod->name, which,
	         strerror(n < 0 ? -n : EIO));
	while (t->nactive)
		ng_rc_fail(t, &t->peers[t->active[t->nactive - 1]], NG_ERR_IO);
}

/* Polls the completion queues. */
static void ng_rc_poll(struct ng_rc *t)
{
	struct ibv_wc wc[NG_RC_POLL];
	int n, i;

	n = ibv_poll_cq(t->scq, NG_RC_POLL, wc);
	if (n < 0) {
		ng_rc_cq_error(t, "send", n);
		return;
	}
	for (i = 0; i < n; i++) {
		struct ng_rc_peer *p = &t->peers[wc[i].wr_id & NG_RC_WR_RANK];
		uint64_t num = ng_ibv_qp_number(&p->q, wc[i].wr_id >> NG_RC_WR_SHIFT, NG_RC_WR_BITS);

		/* An error flushes unsignaled requests too: never below zero. */
		t->scq_busy -= t->scq_busy > 0;
		/* A credit write told again (ng_rc_heal) is no sign of the peer. */
		t->watch.events += !(wc[i].wr_id & NG_RC_WR_HEAL);
		if (ng_ibv_qp_complete_to(&p->q, num, wc[i].status) && !p->err)
			ng_rc_fail(t, p, ng_ibv_wc_error(&t->v, &wc[i], p->rank, "a send"));
	}

	n = ibv_poll_cq(t->rcq, NG_RC_POLL, wc);
	if (n < 0) {
		ng_rc_cq_error(t, "receive", n);
		return;
	}
	for (i = 0; i < n; i++) {
		struct ng_rc_peer *p = &t->peers[wc[i].wr_id >> 32];
		size_t slot = (size_t)(wc[i].wr_id & 0xffffffffu);
		struct ng_rc_meta *m = &p->meta[slot];
		uint32_t imm;

		if (wc[i].status != IBV_WC_SUCCESS) {
			if (!p->err)
				ng_rc_fail(t, p, ng_ibv_wc_error(&t->v, &wc[i], p->rank, "a receive"));
			continue;
		}
		if (slot != p->rx_tail % t->R || !(wc[i].wc_flags & IBV_WC_WITH_IMM)) {
			if (!p->err)
				ng_rc_proto(
				    t, p, "a receive completed out of ring order or without immediate data");
			continue;
		}
		imm = ntohl(wc[i].imm_data);
		m->type = (uint8_t)(imm >> 30);
		m->flags = (uint8_t)(imm >> NG_RC_CREDIT_BITS & 1u);
		if (ng_rdma_credit_widen(&p->credit_seen, imm, NG_RC_CREDIT_MASK, p->tx_seq))
			t->watch.events++;
		m->len = wc[i].opcode == IBV_WC_RECV ? wc[i].byte_len : 0;
		p->rx_tail++;
	}
	t->watch.events += (uint64_t)n;
}

/* One round of progress on everything; @hint is the peer a caller waits
 * for (blamed when nothing happens for --timeout seconds). */
static void ng_rc_progress(struct ng_rc *t, int hint)
{
	uint64_t ev = t->watch.events;
	ng_status st;
	size_t i;

	if (__builtin_expect(ng_watch_cancelled(&t->watch), 0)) {
		ng_rc_stall(t, hint, NG_ERR_CANCELLED);
		return;
	}
	ng_rc_poll(t);
	/* Backwards: a peer that goes idle is replaced by one already seen. */
	for (i = t->nactive; i-- > 0;) {
		if (i < t->nactive)
			ng_rc_peer_progress(t, &t->peers[t->active[i]]);
	}
	if (t->watch.events == ev && t->lazy) {
		/* An idle round answers the connection service (first use). */
		uint64_t cev = t->cm.events;

		st = ng_ibv_cm_poll(&t->cm);
		if (st) {
			ng_rc_stall(t, hint, st);
			return;
		}
		t->watch.events += t->cm.events - cev;
	}
	if (t->watch.events == ev) {
		st = ng_watch_idle(&t->watch);
		if (st)
			ng_rc_stall(t, hint, st);
		else if (t->type == IBV_QPT_UC)
			ng_rc_heal(t);
	}
}

/* Completes a posted send whose work requests are done. */
static inline void ng_rc_check(struct ng_rc *t, struct ng_ib_req *r)
{
	struct ng_rc_peer *p;

	if (r->state == NG_IB_DONE)
		return;
	p = &t->peers[r->peer];
	if (r->state == NG_IB_QUEUED) {
		/* In a queue until posted or failed; a failed peer dropped them all. */
		if (p->err)
			ng_ib_req_done(r, p->err);
		return;
	}
	if (ng_ibv_qp_is_done(&p->q, r->wr)) {
		ng_status st = NG_OK;

		if (ng_ibv_qp_failed(&p->q, r->wr))
			st = p->err ? p->err : NG_ERR_IO;
		else if (r->mismatch)
			st = NG_ERR_TRUNCATED;
		ng_ib_req_done(r, st);
	} else if (p->err) {
		ng_ib_req_done(r, p->err);
	}
}

/* ---- operations ------------------------------------------------------- */

static ng_status ng_rc_wait(struct ng_comm *c, struct ng_req *req)
{
	struct ng_rc *t = ng_rc_of(c);
	struct ng_ib_req *r = ng_ib_req_of(req);

	while (r->state != NG_IB_DONE) {
		ng_rc_progress(t, r->peer);
		ng_rc_check(t, r);
	}
	return r->status;
}

static ng_status ng_rc_test(struct ng_comm *c, struct ng_req *req, bool *done_p)
{
	struct ng_rc *t = ng_rc_of(c);
	struct ng_ib_req *r = ng_ib_req_of(req);

	if (r->state != NG_IB_DONE) {
		ng_rc_progress(t, r->peer);
		ng_rc_check(t, r);
	}
	*done_p = r->state == NG_IB_DONE;
	return *done_p ? r->status : NG_OK;
}

/* A peer named for the first time (--connect lazy): starts connecting to it
 * (verbs_conn.h); the work posted meanwhile waits in its queues (ng_rc_room
 * says no room until the QP is up).  Cold: once per pair, in the warm-up. */
static ng_status __attribute__((cold, noinline)) ng_rc_first_use(struct ng_rc *t, struct ng_rc_peer *p)
{
	ng_status st = t->lazy ? ng_ibv_cm_connect(&t->cm, p->rank) : NG_OK;

	if (st)
		ng_rc_fail(t, p, st);
	return st;
}

/* Finds the registration of @buf; reports a buffer not from alloc(). */
static inline ng_status ng_rc_keys(struct ng_rc *t, struct ng_ib_req *r)
{
	const struct ng_ibv_mem *m = ng_ibv_mem_find(&t->v, r->buf, r->len);

	if (__builtin_expect(!m, 0)) {
		ng_error("%s: buffer %p (%zu bytes) does not come from the module's alloc()",
		         t->base.mod->name, (void *)r->buf, r->len);
		return NG_ERR_USAGE;
	}
	r->lkey = m->mr->lkey;
	r->bkey = m->mr->rkey;
	return NG_OK;
}

static ng_status ng_rc_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *req)
{
	struct ng_rc *t = ng_rc_of(c);
	struct ng_rc_peer *p = &t->peers[peer];
	struct ng_ib_req *r = ng_ib_req_of(req);
	ng_status st;

	assert(peer >= 0 && peer < c->size && peer != c->rank);
	ng_ib_req_init(r, peer, buf, len, false);
	st = p->err ? p->err : ng_rc_keys(t, r);
	if (__builtin_expect(!p->up, 0) && !st)
		st = ng_rc_first_use(t, p);
	if (st) {
		ng_ib_req_done(r, st);
		return st;
	}
	if (t->read) {
		if (!ng_queue_empty(&p->sq) || !ng_rc_read_send(t, p, r))
			ng_queue_push(&p->sq, &r->link);
		ng_rc_activate(t, p);
		return r->state == NG_IB_DONE ? r->status : NG_OK;
	}
	r->rndv = len > t->eager;
	if (ng_queue_empty(&p->sq) && (r->rndv ? ng_rc_post_rndv(t, p, r) : ng_rc_post_eager(t, p, r)))
		return r->state == NG_IB_DONE ? r->status : NG_OK;
	ng_queue_push(&p->sq, &r->link);
	ng_rc_activate(t, p);
	return NG_OK;
}

static ng_status ng_rc_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *req)
{
	struct ng_rc *t = ng_rc_of(c);
	struct ng_rc_peer *p = &t->peers[peer];
	struct ng_ib_req *r = ng_ib_req_of(req);
	ng_status st;

	assert(peer >= 0 && peer < c->size && peer != c->rank);
	ng_ib_req_init(r, peer, buf, len, true);
	st = p->err ? p->err : ng_rc_keys(t, r);
	if (__builtin_expect(!p->up, 0) && !st)
		st = ng_rc_first_use(t, p);
	if (st) {
		ng_ib_req_done(r, st);
		return st;
	}
	r->rndv = !t->read && len > t->eager; /* read mode: no CTS */
	r->idx = p->rx_posted++;
	ng_queue_push(&p->rq, &r->link);
	if (!p->cts_next && !t->read)
		p->cts_next = r;
	ng_rc_activate(t, p);
	if (p->unexp_n)
		ng_rc_match(t, p);
	else if (r->rndv)
		ng_rc_send_cts(t, p);
	return r->state == NG_IB_DONE ? r->status : NG_OK;
}

/* Blocking send and receive are the core's: isend/irecv + wait. */
static const struct ng_msg_ops ng_rc_msg_ops = {
    .isend = ng_rc_isend,
    .irecv = ng_rc_irecv,
    .test = ng_rc_test,
    .wait = ng_rc_wait,
};

static ng_status ng_rc_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	return ng_ibv_mem_alloc(&ng_rc_of(c)->v, len, buf_p);
}

static void ng_rc_free(struct ng_comm *c, void *buf)
{
	if (buf)
		ng_ibv_mem_free(&ng_rc_of(c)->v, buf);
}

/* ---- setup ------------------------------------------------------------ */

static void ng_rc_close(struct ng_comm *c)
{
	struct ng_rc *t = ng_rc_of(c);

	if (t->peers)
		for (int i = 0; i < c->size; i++) {
			ng_ibv_qp_destroy(&t->peers[i].q);
			ng_ibv_area_free(&t->peers[i].ring_a);
		}
	ng_ibv_cm_close(&t->cm);
	if (t->rcq && t->rcq != t->scq)
		ibv_destroy_cq(t->rcq);
	if (t->scq)
		ibv_destroy_cq(t->scq);
	ng_ibv_stage_free(&t->stage);
	ng_ibv_area_free(&t->ctl_a);
	ng_ibv_close(&t->v);
	free(t->active);
	free(t->ctss);
	free(t->unexps);
	free(t->metas);
	free(t->peers);
	free(t);
}

/* Everything local: memory, CQs, and (eager) the QPs in INIT with their
 * receives posted. */
static ng_status ng_rc_setup(struct ng_rc *t)
{
	size_t size = (size_t)t->base.size, npeers = size - 1;
	const char *who = t->base.mod->name;
	ng_status st;

	t->peers = calloc(size, sizeof(*t->peers));
	t->metas = calloc(size * t->R, sizeof(*t->metas));
	t->unexps = calloc(size * t->R, sizeof(*t->unexps));
	t->ctss = calloc(size * t->K, sizeof(*t->ctss));
	t->active = calloc(size, sizeof(*t->active));
	if (!t->peers || !t->metas || !t->unexps || !t->ctss || !t->active) {
		ng_error("%s: out of memory", who);
		return NG_ERR_NOMEM;
	}
	st = ng_ibv_area_alloc(&t->v, size * NG_RC_CTL, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	                       "counters", &t->ctl_a);
	if (!st)
		st = ng_ibv_stage_alloc(&t->v, size, t->depth, NG_RC_STAGE, &t->stage);
	if (st)
		return st;

	t->scq = ibv_create_cq(t->v.ctx, (int)t->scq_size, NULL, NULL, 0);
	if (!t->scq) {
		ng_error("%s: cannot create a completion queue of %u entries on %s: %s", who, t->scq_size,
		         t->v.name, strerror(errno));
		return NG_ERR_SYS;
	}
	t->rcq = ibv_create_cq(t->v.ctx, (int)(npeers ? npeers * t->R : 1), NULL, NULL, 0);
	if (!t->rcq) {
		ng_error("%s: cannot create a completion queue of %zu entries on %s: %s", who, npeers * t->R,
		         t->v.name, strerror(errno));
		return NG_ERR_SYS;
	}

	for (size_t i = 0; i < size; i++) {
		struct ng_rc_peer *p = &t->peers[i];

		p->rank = (int)i;
		p->apos = NG_RC_NONE;
		ng_queue_init(&p->rq);
		ng_queue_init(&p->sq);
		ng_queue_init(&p->rdq);
		ng_queue_init(&p->wq);
		p->meta = &t->metas[i * t->R];
		p->unexp = &t->unexps[i * t->R];
		p->cts = &t->ctss[i * t->K];
		p->ctl = (volatile uint64_t *)(void *)(t->ctl_a.base + i * NG_RC_CTL);
		if (i == (size_t)t->base.rank || t->lazy)
			continue;
		st = ng_rc_peer_qp(t, p);
		if (st)
			return st;
	}
	t->nqps_open = t->nqps;
	return NG_OK;
}

static ng_status ng_rc_open(const struct ng_module *m, const struct ng_module_env *env,
                            struct ng_comm **comm_p)
{
	struct ng_boot *b = env->boot;
	size_t size = (size_t)b->size;
	enum ibv_mtu mtu = IBV_MTU_256;
	struct ng_rc_addr mine, *all;
	struct ng_ibv_qp **qps;
	struct ng_ib_conf cf;
	ng_status st, lst;
	struct ng_rc *t;

	st = ng_ib_conf_read(env, m->name, &cf);
	if (st)
		return st;
	if (cf.read && m == &ng_module_ibuc) {
		if (b->rank == 0)
			ng_error(
			    "%s: --ib-mode read needs RDMA read, which unreliable connections lack; use ibrc",
			    m->name);
		return NG_ERR_USAGE;
	}
	if (cf.write) {
		struct ng_chan_conf cc = {
		    .backend = "verbs",
		    .rdma = {.dev = cf.dev.dev,
		             .port = cf.dev.port,
		             .gid_index = cf.dev.gid_index,
		             .sl = cf.dev.sl,
		             .tclass = cf.dev.tclass,
		             .unreliable = m == &ng_module_ibuc,
		             .yield = cf.yield},
		    .ring = cf.ring,
		    .eager = cf.eager,
		};

		return ng_chan_open(m, env, &cc, comm_p);
	}
	t = calloc(1, sizeof(*t));
	all = calloc(size, sizeof(*all));
	qps = calloc(size, sizeof(*qps));
	if (!t || !all || !qps) {
		ng_error("%s: out of memory", m->name);
		free(qps);
		free(all);
		free(t);
		return NG_ERR_NOMEM;
	}
	ng_comm_init(&t->base, m, m == &ng_module_ibuc ? &ng_module_ops_ibuc : &ng_module_ops_ibrc, b->rank,
	             b->size, env->cancel);
	t->base.spins = !cf.yield;
	t->type = m == &ng_module_ibuc ? IBV_QPT_UC : IBV_QPT_RC;
	t->read = cf.read;
	t->lazy = env->connect_lazy;
	t->inl = NG_RC_INLINE;
	cf.dev.qpt = t->type;
	ng_watch_init(&t->watch, env->cancel, env->timeout_s, cf.yield);

	st = ng_ibv_open(&t->v, &cf.dev, b);
	if (st) {
		free(qps);
		free(all);
		free(t);
		return st;
	}

	/* Local setup, then the collective exchange and connection (a rank that
	 * failed takes part with its status, so that all fail together). */
	lst = ng_rc_sizes(t, &cf);
	if (!lst)
		lst = ng_rc_setup(t);
	memset(&mine, 0, sizeof(mine));
	mine.ring = (uint32_t)t->R;
	mine.eager = (uint32_t)t->eager;
	mine.read = t->read;
	if (!lst) {
		mine.ctl_base = (uintptr_t)t->ctl_a.base;
		mine.ctl_rkey = t->ctl_a.mr->rkey;
	}
	if (t->lazy) {
		st = ng_ibv_cm_open(&t->cm, &t->v, b, &ng_rc_cm_ops, t, lst, &mine, sizeof(mine), all);
		mtu = t->cm.mtu;
	} else {
		for (size_t i = 0; !lst && i < size; i++)
			qps[i] = i == (size_t)b->rank ? NULL : &t->peers[i].q;
		st = ng_ibv_mesh_connect(&t->v, b, qps, lst, &mine, sizeof(mine), all, &mtu);
		for (size_t i = 0; !st && i < size; i++)
			t->peers[i].up = i != (size_t)b->rank;
	}
	if (st)
		goto err_close;
	for (size_t i = 0; i < size; i++) {
		struct ng_rc_peer *p = &t->peers[i];

		if (all[i].ring != t->R || all[i].eager != t->eager || all[i].read != t->read) {
			if (b->rank == 0)
				ng_error(
				    "%s: rank %zu runs with other --ib-ring, --ib-eager or --ib-mode values",
				    m->name, i);
			st = NG_ERR_USAGE;
			goto err_close;
		}
		p->r_ctl = all[i].ctl_base + (uint64_t)b->rank * NG_RC_CTL;
		p->r_ctl_rkey = all[i].ctl_rkey;
	}
	free(qps);
	free(all);

	ng_ibv_describe(&t->v, mtu, t->base.device, sizeof(t->base.device));
	/* UC: a rendezvous is one WRITE_WITH_IMM, which UC places whole or not
	 * at all (a lost packet drops the rest of the message and its
	 * immediate); in pieces, a lost earlier one would complete the receive
	 * with old bytes.  So no message above one write. */
	if (t->type == IBV_QPT_UC)
		t->base.max_msg = t->maxw;
	*comm_p = &t->base;
	return NG_OK;

err_close:
	free(qps);
	free(all);
	ng_rc_close(&t->base);
	return st;
}

/* The operations of the executable's descriptors ng_module_ibrc and
 * ng_module_ibuc (ib_desc.c), ngauge-verbs.so's entries "module:ibrc" and
 * "module:ibuc": one table under the two names the entries take. */
#define NG_RC_OPS                                                                                            \
	{                                                                                                    \
		.open = ng_rc_open, .close = ng_rc_close, .alloc = ng_rc_alloc, .free = ng_rc_free,          \
		.msg = &ng_rc_msg_ops, .report = ng_rc_report,                                               \
	}
const struct ng_module_ops ng_module_ops_ibrc = NG_RC_OPS;
const struct ng_module_ops ng_module_ops_ibuc = NG_RC_OPS;
