/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs core's connection service (verbs_conn.h): a UD queue pair per
 * rank that connects RC/UC queue pairs on first use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/verbs/verbs_conn.h"
#include "peer.h"

#define NG_IBV_CM_MAGIC 0x4e47434du /* "NGCM" */
#define NG_IBV_CM_GRH   40u
#define NG_IBV_CM_SLOT  128u /* a receive slot: the GRH and a message */
#define NG_IBV_CM_DEPTH 64u  /* service sends in flight */
#define NG_IBV_CM_POLL  8
#define NG_IBV_CM_SPIN  64u                 /* polls between clock reads while a handshake is in progress */
#define NG_IBV_CM_SEND  (UINT64_C(1) << 63) /* wr_id of a service send */

enum { NG_IBV_CM_MSG_REQ = 1, NG_IBV_CM_MSG_REP = 2, NG_IBV_CM_MSG_RTU = 3 };

/* A handshake datagram. */
struct ng_ibv_cm_msg {
	uint32_t magic;
	uint32_t type;
	uint32_t rank; /* the sender */
	uint32_t qpn;  /* REQ, REP: the sender's QP towards the receiver */
};

/* What every rank publishes at open: this record, then the caller's extra
 * bytes, padded to 8. */
struct ng_ibv_cm_rec {
	struct ng_ibv_ep ep;
	int32_t status;
	uint32_t svc_qpn;
};

static inline const struct ng_ibv_cm_rec *ng_ibv_cm_rec(const struct ng_ibv_cm *cm, int i)
{
	return (const struct ng_ibv_cm_rec *)(const void *)(cm->recs + (size_t)i * cm->stride);
}

static ng_status ng_ibv_cm_status(int peer, int32_t status)
{
	size_t v;

	if (ng_peer_slen("verbs status", peer, status, 0, NG_STATUS_COUNT - 1, &v) != NG_OK)
		return NG_ERR_PROTO;
	return (ng_status)v;
}

static int ng_ibv_cm_post_recv(struct ng_ibv_cm *cm, uint32_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(cm->buf.base + (size_t)slot * NG_IBV_CM_SLOT),
	                      .length = NG_IBV_CM_SLOT,
	                      .lkey = cm->buf.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	return ibv_post_recv(cm->q.qp, &wr, &bad);
}

/* The local part of open: CQ, service QP in RTS, receives posted. */
static ng_status ng_ibv_cm_local(struct ng_ibv_cm *cm)
{
	struct ng_ibv *v = cm->v;
	uint32_t inl = 0, depth = NG_IBV_CM_DEPTH;
	ng_status st;

	cm->nrecv = 64u + 2u * (uint32_t)(cm->size < 512 ? cm->size : 512);
	if (v->dattr.max_qp_wr > 0 && cm->nrecv > (uint32_t)v->dattr.max_qp_wr)
		cm->nrecv = (uint32_t)v->dattr.max_qp_wr;
	if (v->dattr.max_qp_wr > 0 && depth > (uint32_t)v->dattr.max_qp_wr)
		depth = (uint32_t)v->dattr.max_qp_wr;
	cm->cq = ibv_create_cq(v->ctx, (int)(cm->nrecv + depth), NULL, NULL, 0);
	if (!cm->cq) {
		ng_error("%s: cannot create the connection service's completion queue on %s: %s", v->who,
		         v->name, strerror(errno));
		return NG_ERR_SYS;
	}
	st = ng_ibv_area_alloc(v, (size_t)(cm->nrecv + depth) * NG_IBV_CM_SLOT, IBV_ACCESS_LOCAL_WRITE,
	                       "connection service", &cm->buf);
	if (!st)
		st = ng_ibv_qp_create(v, IBV_QPT_UD, cm->cq, cm->cq, depth, cm->nrecv, &inl, &cm->q);
	if (!st)
		st = ng_ibv_qp_init(v, &cm->q);
	for (uint32_t s = 0; !st && s < cm->nrecv; s++) {
		int rc = ng_ibv_cm_post_recv(cm, s);

		if (rc) {
			ng_error("%s: posting the connection service's receives: %s", v->who, strerror(rc));
			st = NG_ERR_SYS;
		}
	}
	if (!st)
		st = ng_ibv_qp_connect(v, &cm->q, NULL, 0, v->pattr.active_mtu, -1);
	return st;
}

ng_status ng_ibv_cm_open(struct ng_ibv_cm *cm, struct ng_ibv *v, struct ng_boot *b,
                         const struct ng_ibv_cm_ops *ops, void *ctx, ng_status local, const void *extra,
                         size_t len, void *extras)
{
	size_t size = (size_t)b->size, xoff = sizeof(struct ng_ibv_cm_rec);
	unsigned char *mine = NULL;
	ng_status st;

	memset(cm, 0, sizeof(*cm));
	cm->v = v;
	cm->ops = ops;
	cm->ctx = ctx;
	cm->rank = b->rank;
	cm->size = b->size;
	cm->stride = (xoff + len + 7) / 8 * 8;
	cm->mtu = v->pattr.active_mtu;
	cm->peers = calloc(size, sizeof(*cm->peers));
	cm->recs = calloc(size, cm->stride);
	mine = calloc(1, cm->stride);
	if (!cm->peers || !cm->recs || !mine) {
		ng_error("%s: out of memory", v->who);
		local = local ? local : NG_ERR_NOMEM;
	}
	if (!local)
		local = ng_ibv_cm_local(cm);
	if (mine) {
		struct ng_ibv_cm_rec *r = (struct ng_ibv_cm_rec *)(void *)mine;

		ng_ibv_ep_get(v, &r->ep);
		r->status = (int32_t)local;
		r->svc_qpn = cm->q.qp ? cm->q.qp->qp_num : 0;
		if (len)
			memcpy(mine + xoff, extra, len);
	}
	if (!mine || !cm->recs) {
		/* as ng_ibv_mesh_connect: a rank out of memory leaves */
		st = NG_ERR_NOMEM;
		goto err_close;
	}
	st = ng_boot_allgather(b, mine, cm->stride, cm->recs);
	if (st)
		goto err_close;
	st = local;
	for (size_t i = 0; !st && i < size; i++) {
		const struct ng_ibv_cm_rec *r = ng_ibv_cm_rec(cm, (int)i);

		st = r->status ? ng_ibv_cm_status((int)i, r->status) : NG_OK;
		if (!st && i != (size_t)b->rank)
			st = ng_ibv_ep_take(b, &r->ep, (int)i);
		if ((enum ibv_mtu)r->ep.mtu < cm->mtu)
			cm->mtu = (enum ibv_mtu)r->ep.mtu;
	}
	if (!st)
		st = ng_ibv_eps_check(v, b->rank, size, (const struct ng_ibv_ep *)(const void *)cm->recs,
		                      cm->stride);
	if (st)
		goto err_close;
	for (size_t i = 0; len && i < size; i++)
		memcpy((unsigned char *)extras + i * len, cm->recs + i * cm->stride + xoff, len);
	free(mine);
	return NG_OK;

err_close:
	free(mine);
	ng_ibv_cm_close(cm);
	return st;
}

void ng_ibv_cm_close(struct ng_ibv_cm *cm)
{
	for (int i = 0; cm->peers && i < cm->size; i++)
		if (cm->peers[i].ah)
			ibv_destroy_ah(cm->peers[i].ah);
	ng_ibv_qp_destroy(&cm->q);
	if (cm->cq)
		ibv_destroy_cq(cm->cq);
	cm->cq = NULL;
	ng_ibv_area_free(&cm->buf);
	free(cm->peers);
	free(cm->recs);
	cm->peers = NULL;
	cm->recs = NULL;
}

/* The path MTU of the pair with @peer. */
static enum ibv_mtu ng_ibv_cm_mtu(const struct ng_ibv_cm *cm, int peer)
{
	enum ibv_mtu m = (enum ibv_mtu)ng_ibv_cm_rec(cm, peer)->ep.mtu;

	return m < cm->v->pattr.active_mtu ? m : cm->v->pattr.active_mtu;
}

/* Sends one handshake datagram to @peer.  A full send queue or a failed
 * post is not fatal: the handshake sends again (reported once per peer
 * only when the address handle cannot be made). */
static ng_status ng_ibv_cm_send(struct ng_ibv_cm *cm, int peer, uint32_t type, uint32_t qpn)
{
	struct ng_ibv_cm_peer *p = &cm->peers[peer];
	struct ng_ibv_cm_msg *m;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	ng_status st;

	if (!p->ah) {
		st = ng_ibv_ah_create(cm->v, &ng_ibv_cm_rec(cm, peer)->ep, peer, &p->ah);
		if (st)
			return st;
	}
	p->sent_ns = ng_watch_now_ns();
	if (!ng_ibv_qp_room(&cm->q, 1))
		return NG_OK;
	m = (struct ng_ibv_cm_msg *)(void *)(cm->buf.base + (size_t)(cm->nrecv + cm->q.posted % cm->q.depth) *
	                                                        NG_IBV_CM_SLOT);
	*m = (struct ng_ibv_cm_msg){
	    .magic = NG_IBV_CM_MAGIC, .type = type, .rank = (uint32_t)cm->rank, .qpn = qpn};
	sge = (struct ibv_sge){.addr = (uintptr_t)m, .length = sizeof(*m), .lkey = cm->buf.mr->lkey};
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = NG_IBV_CM_SEND;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud.ah = p->ah;
	wr.wr.ud.remote_qpn = ng_ibv_cm_rec(cm, peer)->svc_qpn;
	wr.wr.ud.remote_qkey = NG_IBV_QKEY;
	if (ibv_post_send(cm->q.qp, &wr, &bad) == 0)
		cm->q.posted++;
	return NG_OK;
}

static ng_status __attribute__((cold)) ng_ibv_cm_fail(struct ng_ibv_cm *cm, int peer, ng_status st)
{
	struct ng_ibv_cm_peer *p = &cm->peers[peer];

	if (p->state == NG_IBV_CM_REQ || p->state == NG_IBV_CM_RTR)
		cm->pending--;
	p->state = NG_IBV_CM_FAILED;
	return st;
}

static void ng_ibv_cm_ready_at(struct ng_ibv_cm *cm, int peer)
{
	struct ng_ibv_cm_peer *p = &cm->peers[peer];

	if (p->t0_ns) {
		cm->connect_ns += ng_watch_now_ns() - p->t0_ns;
		cm->initiated++;
	}
	p->state = NG_IBV_CM_READY;
	cm->pending--;
	cm->nready++;
	if (cm->ops->up)
		cm->ops->up(cm->ctx, peer);
}

ng_status ng_ibv_cm_connect(struct ng_ibv_cm *cm, int peer)
{
	struct ng_ibv_cm_peer *p = &cm->peers[peer];
	struct ng_ibv_qp *q;

	if (p->state != NG_IBV_CM_NONE)
		return p->state == NG_IBV_CM_FAILED ? NG_ERR_IO : NG_OK;
	p->t0_ns = ng_watch_now_ns();
	q = cm->ops->qp(cm->ctx, peer);
	if (!q) {
		p->state = NG_IBV_CM_FAILED;
		return NG_ERR_SYS;
	}
	p->state = NG_IBV_CM_REQ;
	cm->pending++;
	return ng_ibv_cm_send(cm, peer, NG_IBV_CM_MSG_REQ, q->qp->qp_num);
}

/* Answers @peer's REQ for its QP @rqpn: this rank's QP to RTR, the REP. */
static ng_status ng_ibv_cm_answer(struct ng_ibv_cm *cm, int peer, uint32_t rqpn)
{
	struct ng_ibv_cm_peer *p = &cm->peers[peer];
	struct ng_ibv_qp *q = cm->ops->qp(cm->ctx, peer);
	ng_status st;

	if (!q)
		return ng_ibv_cm_fail(cm, peer, NG_ERR_SYS);
	st = ng_ibv_qp_rtr(cm->v, q, &ng_ibv_cm_rec(cm, peer)->ep, rqpn, ng_ibv_cm_mtu(cm, peer), peer);
	if (st)
		return ng_ibv_cm_fail(cm, peer, st);
	if (p->state == NG_IBV_CM_NONE)
		cm->pending++;
	p->state = NG_IBV_CM_RTR;
	p->t0_ns = 0; /* the peer's connection, not this rank's */
	return ng_ibv_cm_send(cm, peer, NG_IBV_CM_MSG_REP, q->qp->qp_num);
}

static ng_status ng_ibv_cm_handle(struct ng_ibv_cm *cm, const struct ng_ibv_cm_msg *m)
{
	int peer = (int)m->rank;
	struct ng_ibv_cm_peer *p = &cm->peers[peer];
	struct ng_ibv_qp *q;
	ng_status st;

	switch (m->type) {
	case NG_IBV_CM_MSG_REQ:
		if (p->state == NG_IBV_CM_NONE || (p->state == NG_IBV_CM_REQ && peer < cm->rank))
			return ng_ibv_cm_answer(cm, peer, m->qpn);
		if (p->state == NG_IBV_CM_RTR || p->state == NG_IBV_CM_READY) {
			/* a REQ sent again: the REP was lost (or crossed it) */
			q = cm->ops->qp(cm->ctx, peer);
			if (q)
				return ng_ibv_cm_send(cm, peer, NG_IBV_CM_MSG_REP, q->qp->qp_num);
		}
		return NG_OK; /* REQ state, higher rank: the peer answers this rank's REQ */
	case NG_IBV_CM_MSG_REP:
		if (p->state == NG_IBV_CM_READY)
			return ng_ibv_cm_send(cm, peer, NG_IBV_CM_MSG_RTU, 0);
		if (p->state != NG_IBV_CM_REQ)
			return NG_OK;
		q = cm->ops->qp(cm->ctx, peer);
		if (!q)
			return ng_ibv_cm_fail(cm, peer, NG_ERR_SYS);
		st = ng_ibv_qp_rtr(cm->v, q, &ng_ibv_cm_rec(cm, peer)->ep, m->qpn, ng_ibv_cm_mtu(cm, peer),
		                   peer);
		if (!st)
			st = ng_ibv_qp_rts(cm->v, q, &ng_ibv_cm_rec(cm, peer)->ep, peer);
		if (st)
			return ng_ibv_cm_fail(cm, peer, st);
		ng_ibv_cm_ready_at(cm, peer);
		return ng_ibv_cm_send(cm, peer, NG_IBV_CM_MSG_RTU, 0);
	case NG_IBV_CM_MSG_RTU:
		if (p->state != NG_IBV_CM_RTR)
			return NG_OK;
		q = cm->ops->qp(cm->ctx, peer);
		if (!q)
			return ng_ibv_cm_fail(cm, peer, NG_ERR_SYS);
		st = ng_ibv_qp_rts(cm->v, q, &ng_ibv_cm_rec(cm, peer)->ep, peer);
		if (st)
			return ng_ibv_cm_fail(cm, peer, st);
		ng_ibv_cm_ready_at(cm, peer);
		return NG_OK;
	default:
		return NG_OK;
	}
}

/* Sends again what was not answered in time. */
static ng_status ng_ibv_cm_resend(struct ng_ibv_cm *cm)
{
	uint64_t now = ng_watch_now_ns();
	ng_status st = NG_OK;

	for (int i = 0; i < cm->size && !st; i++) {
		struct ng_ibv_cm_peer *p = &cm->peers[i];
		struct ng_ibv_qp *q;

		if ((p->state != NG_IBV_CM_REQ && p->state != NG_IBV_CM_RTR) ||
		    now - p->sent_ns < NG_IBV_CM_RESEND_NS)
			continue;
		q = cm->ops->qp(cm->ctx, i);
		if (!q)
			continue;
		cm->resent++;
		st = ng_ibv_cm_send(cm, i, p->state == NG_IBV_CM_REQ ? NG_IBV_CM_MSG_REQ : NG_IBV_CM_MSG_REP,
		                    q->qp->qp_num);
	}
	return st;
}

ng_status ng_ibv_cm_poll(struct ng_ibv_cm *cm)
{
	struct ibv_wc wc[NG_IBV_CM_POLL];
	ng_status st = NG_OK;
	int n;

	if (!cm->cq)
		return NG_OK;
	n = ibv_poll_cq(cm->cq, NG_IBV_CM_POLL, wc);
	for (int i = 0; i < n; i++) {
		const struct ng_ibv_cm_msg *m;
		ng_status s2 = NG_OK;
		uint32_t slot;
		int rc;

		if (wc[i].wr_id == NG_IBV_CM_SEND) {
			cm->q.done++;
			continue;
		}
		slot = (uint32_t)wc[i].wr_id;
		m = (const struct ng_ibv_cm_msg *)(const void *)(cm->buf.base +
		                                                 (size_t)slot * NG_IBV_CM_SLOT +
		                                                 NG_IBV_CM_GRH);
		/* A datagram of this run's service: magic, a rank, that rank's
		 * service QP as the source.  Anything else is dropped. */
		if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= NG_IBV_CM_GRH + sizeof(*m) &&
		    m->magic == NG_IBV_CM_MAGIC && m->rank < (uint32_t)cm->size && (int)m->rank != cm->rank &&
		    ng_ibv_cm_rec(cm, (int)m->rank)->svc_qpn == wc[i].src_qp &&
		    cm->peers[m->rank].state != NG_IBV_CM_FAILED) {
			struct ng_ibv_cm_msg copy = *m;

			cm->events++;
			s2 = ng_ibv_cm_handle(cm, &copy);
		}
		rc = ng_ibv_cm_post_recv(cm, slot);
		if (rc && !st) {
			ng_error("%s: reposting a receive of the connection service: %s", cm->v->who,
			         strerror(rc));
			s2 = NG_ERR_IO;
		}
		if (s2 && !st)
			st = s2;
	}
	if (n < 0 && !st) {
		ng_error("%s: polling the connection service's completion queue failed", cm->v->who);
		st = NG_ERR_IO;
	}
	if (cm->pending && !st && ++cm->spin >= NG_IBV_CM_SPIN) {
		cm->spin = 0;
		st = ng_ibv_cm_resend(cm);
	}
	return st;
}
