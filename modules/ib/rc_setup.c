/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibrc/ibuc (rc.c): the sizes of an instance, its queue pairs (made at open,
 * or on first use through the connection service, modules/verbs/verbs_conn.h)
 * and its block in the result.  Declared in rc_int.h.
 */
#include <jansson.h>
#include <stdlib.h>

#include "modules/ib/rc_int.h"

/* Sizes from the options and the device's limits.  Reports what does not
 * fit. */
ng_status ng_rc_sizes(struct ng_rc *t, const struct ng_ib_conf *cf)
{
	const struct ibv_device_attr *d = &t->v.dattr;
	const char *who = t->base.mod->name;
	size_t npeers = (size_t)t->base.size - 1;

	t->R = cf->ring;
	t->K = t->R / 8 ? t->R / 8 : 1;
	t->eager_quota = t->R - 2 * t->K;
	t->thresh = t->R / 4 ? t->R / 4 : 1;
	if (t->thresh > t->eager_quota)
		t->thresh = t->eager_quota;
	t->eager = cf->eager;
	t->slot = (t->eager + 63) / 64 * 64;
	t->ring_stride = t->R * t->slot;
	t->maxw = t->v.pattr.max_msg_sz ? t->v.pattr.max_msg_sz : (size_t)1 << 30;
	if (t->maxw > (size_t)1 << 30)
		t->maxw = (size_t)1 << 30;
	t->depth = (uint32_t)(2 * t->R + NG_RC_SLACK);
	if (t->depth > (uint32_t)d->max_qp_wr || t->R > (size_t)d->max_qp_wr) {
		ng_error("%s: --ib-ring %zu needs %u work requests per queue pair, %s allows %d", who, t->R,
		         t->depth, t->v.name, d->max_qp_wr);
		return NG_ERR_USAGE;
	}
	if (t->read && d->max_qp_init_rd_atom < 1) {
		ng_error("%s: --ib-mode read: %s issues no RDMA reads (max_qp_init_rd_atom 0)", who,
		         t->v.name);
		return NG_ERR_USAGE;
	}
	if (t->eager > t->maxw) {
		ng_error("%s: --ib-eager %zu is above the port's largest message (%zu bytes)", who, t->eager,
		         t->maxw);
		return NG_ERR_USAGE;
	}
	if (npeers * t->R > (size_t)d->max_cqe) {
		ng_error(
		    "%s: %zu peers * --ib-ring %zu receives exceed the %d entries of a completion queue on "
		    "%s; lower --ib-ring",
		    who, npeers, t->R, d->max_cqe, t->v.name);
		return NG_ERR_USAGE;
	}
	t->scq_size =
	    (uint32_t)(npeers * t->depth < (size_t)d->max_cqe ? npeers * t->depth : (size_t)d->max_cqe);
	if (t->scq_size < 4)
		t->scq_size = 4;
	return NG_OK;
}

/* The QP towards @p: created, in INIT, its receive ring posted. */
ng_status ng_rc_peer_qp(struct ng_rc *t, struct ng_rc_peer *p)
{
	ng_status st;

	/* the ring is only ever a receive's target (send mode: the peer's
	 * SEND_WITH_IMM lands in a posted slot): local access */
	if (!p->ring_a.base) {
		st = ng_ibv_area_alloc(&t->v, t->ring_stride, IBV_ACCESS_LOCAL_WRITE, "receive ring",
		                       &p->ring_a);
		if (st)
			return st;
	}
	st = ng_ibv_qp_create(&t->v, t->type, t->scq, t->rcq, t->depth, (uint32_t)t->R, &t->inl, &p->q);
	if (st)
		return st;
	t->nqps++;
	p->q.sig_every = t->depth / 4 ? t->depth / 4 : 1;
	st = ng_ibv_qp_init(&t->v, &p->q);
	if (st)
		return st;
	for (size_t s = 0; s < t->R; s++) {
		int rc = ng_rc_post_slot(t, p, s);

		if (rc) {
			ng_error("%s: posting the receive ring for rank %d: %s", t->base.mod->name, p->rank,
			         strerror(rc));
			return NG_ERR_SYS;
		}
	}
	t->max_inline = p->q.max_inline;
	return NG_OK;
}

/* The connection service's callbacks (verbs_conn.h). */
static struct ng_ibv_qp *ng_rc_cm_qp(void *ctx, int peer)
{
	struct ng_rc *t = ctx;
	struct ng_rc_peer *p = &t->peers[peer];

	if (!p->q.qp && ng_rc_peer_qp(t, p) != NG_OK) {
		ng_ibv_qp_destroy(&p->q);
		return NULL;
	}
	return &p->q;
}

static void ng_rc_cm_up(void *ctx, int peer)
{
	struct ng_rc *t = ctx;
	struct ng_rc_peer *p = &t->peers[peer];

	p->up = true;
	if (!p->err)
		ng_rc_activate(t, p);
}

const struct ng_ibv_cm_ops ng_rc_cm_ops = {.qp = ng_rc_cm_qp, .up = ng_rc_cm_up};

/* The "ibrc"/"ibuc" block of the result (rank 0's): how its QPs were made. */
json_t *ng_rc_report(struct ng_comm *c)
{
	struct ng_rc *t = ng_rc_of(c);

	return json_pack("{s:s,s:I,s:I,s:f,s:I}", "connect", t->lazy ? "lazy" : "eager", "qps",
	                 (json_int_t)t->nqps, "qps_at_open", (json_int_t)t->nqps_open, "connect_ms",
	                 (double)t->cm.connect_ns * 1e-6, "handshakes_resent", (json_int_t)t->cm.resent);
}
