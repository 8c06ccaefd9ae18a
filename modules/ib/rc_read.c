/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibrc --ib-mode read: the receiver pulls every message with RDMA read after
 * the sender's NOTICE, then tells the sender its buffer is free (FIN).  The
 * protocol is described in rc_int.h; the ring, credits, progress and setup
 * are rc.c's, which calls the four functions here.
 */
#include <string.h>

#include "modules/ib/rc_int.h"

bool ng_rc_read_send(struct ng_rc *t, struct ng_rc_peer *p, struct ng_ib_req *r)
{
	struct ng_rc_cts *c;
	struct ibv_sge sge;
	bool inl;
	int rc;

	if (!ng_rc_room(t, p, 1) || !ng_rc_credit(t, p, true))
		return false;
	/* Staged with the work request that carries it. */
	c = (struct ng_rc_cts *)(void *)ng_rc_stage(t, p);
	*c = ng_rc_notice_make(p->tx_idx, (uintptr_t)r->buf, r->len, r->bkey);
	sge = (struct ibv_sge){
	    .addr = (uintptr_t)c, .length = sizeof(*c), .lkey = ng_ibv_stage_lkey(&t->stage)};
	rc = ng_rc_post_msg(t, p, NG_RC_NOTICE, 0, &sge, 1, &inl);
	if (rc) {
		ng_rc_post_error(t, p, "a notice", rc);
		ng_ib_req_done(r, p->err);
		return true;
	}
	r->idx = p->tx_idx++;
	if (ng_ib_queue_head(&p->sq) == r)
		ng_ib_queue_pop(&p->sq);
	ng_queue_push(&p->wq, &r->link);
	return true;
}

void ng_rc_read_deliver(struct ng_rc *t, struct ng_rc_peer *p, uint64_t s)
{
	size_t slot = (size_t)(s % t->R);
	struct ng_rc_meta *m = &p->meta[slot];
	struct ng_ib_req *r;
	struct ng_rc_cts c;

	if (m->type != NG_RC_NOTICE || m->len != sizeof(c)) {
		ng_rc_proto(t, p, "a data message other than a notice in read mode");
		return;
	}
	memcpy(&c, ng_rc_payload(t, p, slot), sizeof(c));
	m->done = true;
	r = ng_ib_queue_pop(&p->rq);
	if (c.idx != r->idx) {
		ng_ib_req_done(r, NG_ERR_PROTO);
		ng_rc_proto(t, p, "a notice out of message order");
		return;
	}
	r->raddr = c.addr;
	r->rkey = c.rkey;
	r->off = 0;
	r->mismatch = c.len != r->len;
	if (r->mismatch) {
		(void)ng_rc_truncated(t, p, (size_t)c.len, r->len);
		r->off = r->len; /* nothing to read */
	}
	r->wr = 0; /* no read: done at once */
	ng_queue_push(&p->rdq, &r->link);
}

void ng_rc_read_fin(struct ng_rc *t, struct ng_rc_peer *p, const struct ng_rc_meta *m)
{
	struct ng_ib_req *r = ng_ib_queue_head(&p->wq);

	if (!r) {
		ng_rc_proto(t, p, "a FIN for no send");
		return;
	}
	ng_ib_queue_pop(&p->wq);
	if (m->flags & NG_RC_F_MISMATCH) {
		ng_error("%s: rank %d receives another length than this message of %zu bytes",
		         t->base.mod->name, p->rank, r->len);
		ng_ib_req_done(r, NG_ERR_TRUNCATED);
	} else {
		ng_ib_req_done(r, NG_OK);
	}
	t->watch.events++;
}

/* Posts what is left of the reads of @r.  Returns false when the send queue
 * is full (or the post failed: @p failed). */
static bool ng_rc_read_post(struct ng_rc *t, struct ng_rc_peer *p, struct ng_ib_req *r)
{
	size_t n;

	while ((n = ng_rc_read_piece(r->len, r->off, t->maxw)) > 0) {
		struct ibv_send_wr wr;
		struct ibv_sge sge = {
		    .addr = (uintptr_t)(r->buf + r->off), .length = (uint32_t)n, .lkey = r->lkey};
		int rc;

		if (!ng_rc_room(t, p, 1))
			return false;
		memset(&wr, 0, sizeof(wr));
		ng_ibv_wr_rdma(&wr, IBV_WR_RDMA_READ, (uint64_t)p->rank, r->raddr + r->off, r->rkey);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		rc = ng_rc_post(t, p, &wr);
		if (rc) {
			ng_rc_post_error(t, p, "an RDMA read", rc);
			return false;
		}
		r->off += n;
		r->wr = p->q.posted;
		t->watch.events++;
	}
	return true;
}

void ng_rc_read_progress(struct ng_rc *t, struct ng_rc_peer *p)
{
	struct ng_ib_req *r;

	/* FINs of the receives whose reads are done, in order. */
	while ((r = ng_ib_queue_head(&p->rdq)) && r->off == r->len && ng_ibv_qp_is_done(&p->q, r->wr)) {
		bool inl;
		int rc;

		if (ng_ibv_qp_failed(&p->q, r->wr) || !ng_rc_room(t, p, 1) || !ng_rc_credit(t, p, false))
			return; /* a failed read fails the peer in the poll */
		rc = ng_rc_post_msg(t, p, NG_RC_FIN, r->mismatch ? NG_RC_F_MISMATCH : 0, NULL, 0, &inl);
		if (rc) {
			ng_rc_post_error(t, p, "a FIN", rc);
			return;
		}
		ng_ib_queue_pop(&p->rdq);
		ng_ib_req_done(r, r->mismatch ? NG_ERR_TRUNCATED : NG_OK);
		t->watch.events++;
	}
	/* Reads, in order, as far as the send queue has room. */
	for (r = ng_ib_queue_head(&p->rdq); r && !p->err; r = ng_ib_req_next(r))
		if (!ng_rc_read_post(t, p, r))
			return;
}
