/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "verbs" backend of the RDMA layer (rdma.h), on the verbs core
 * (modules/ib/verbs.h): any HCA (InfiniBand, RoCE) and Soft-RoCE.
 *
 * One RC queue pair per pair of ranks (UC with cf->unreliable: writes only),
 * and one connected to itself for the rank's own memory, on one completion
 * queue.  Every work request is signaled and carries
 * (peer, ticket) in its wr_id; an RC queue pair completes in order, so a
 * peer's completed count is its QP's count of completions.
 *
 * Memory: mem_alloc() is a registered area of the verbs core; reg() is
 * ibv_reg_mr (which pins the pages: the registration cost the superpipeline
 * measures).  Every registration allows local write and remote write, read
 * and atomics; the remote descriptor is (address, length, rkey): the HCA
 * checks keys and bounds (a stale key is refused at the target and shows as
 * an error completion at the origin), and the layer checks the bounds
 * before posting.
 *
 * Writes: the pieces of a write become the work request's scatter list
 * (at most 2); pieces from unregistered memory are copied into a staging
 * slot of the operation (stage_max bytes, reused when that operation's
 * ticket comes round again and has completed), and so is the whole write
 * when it has more pieces than the list takes.  A staged write of at most
 * the QP's inline size goes inline.  Notices (NG_RDMA_NOTIFY) and writes of
 * blocks (NG_RDMA_BLOCKS) are one RDMA write: an HCA places the bytes of a
 * write in order, the last ones last, which is what MPI fast paths and
 * perftest rely on too.  Atomics return the old value into their slot,
 * copied to *old_p at completion.
 *
 * flush(peer) waits for every operation to the peer: an RC write completes
 * once the target's HCA acknowledged it, placed.  (UC has no
 * acknowledgement: flush there only means "sent".)
 *
 * A post with the send queue full makes progress until there is room;
 * progress polls the completion queue; an error completion names the peer
 * (ng_ibv_wc_error) and ends the instance.
 */
#include "config.h"

#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ib/verbs.h"
#include "module.h"
#include "rdma.h"

#define VB_DEPTH 128u        /* operations in flight per peer */
#define VB_STAGE (16u << 10) /* staging bytes per operation */
#define VB_POLL  16
#define VB_SHIFT 48 /* wr_id: peer << VB_SHIFT | ticket */

struct vb_mr {
	struct ng_rdma_mr pub; /* first */
	struct ibv_mr *mr;
	struct ng_ibv_area area; /* mem_alloc only */
};

struct vb_peer {
	struct ng_ibv_qp q;
	uint64_t *old[VB_DEPTH]; /* atomic results to hand over, by ticket */
};

struct vb {
	struct ng_rdma base; /* first */
	struct ng_ibv v;
	struct ibv_cq *cq;
	struct vb_peer *peers;    /* [size] */
	struct ng_ibv_area stage; /* [size][VB_DEPTH][VB_STAGE] */
	int access;
};

static inline struct vb *vb_of(struct ng_rdma *r)
{
	return ng_container_of(r, struct vb, base);
}

static inline unsigned char *vb_slot(struct vb *b, int peer, uint64_t t)
{
	return b->stage.base + ((size_t)peer * VB_DEPTH + t % VB_DEPTH) * VB_STAGE;
}

/* ---- completions -------------------------------------------------------- */

static ng_status vb_progress(struct ng_rdma *r)
{
	struct vb *b = vb_of(r);
	struct ibv_wc wc[VB_POLL];
	int n = ibv_poll_cq(b->cq, VB_POLL, wc);

	if (n < 0) {
		ng_error("%s: verbs: polling the completion queue failed", r->who);
		return NG_ERR_IO;
	}
	for (int i = 0; i < n; i++) {
		int p = (int)(wc[i].wr_id >> VB_SHIFT);
		uint64_t t = wc[i].wr_id & (((uint64_t)1 << VB_SHIFT) - 1);
		struct vb_peer *pe = &b->peers[p];

		if (ng_ibv_qp_complete(&pe->q, wc[i].status))
			return ng_ibv_wc_error(&b->v, &wc[i], p, "an RDMA operation");
		if (pe->old[t % VB_DEPTH]) {
			memcpy(pe->old[t % VB_DEPTH], vb_slot(b, p, t), 8);
			pe->old[t % VB_DEPTH] = NULL;
		}
		r->completed[p] = pe->q.done;
		r->watch.events++;
	}
	return NG_OK;
}

/* Room for one more operation to @peer: its ticket's staging slot, and the
 * send queue (as deep as the slots), are free once the operation VB_DEPTH
 * back has completed. */
static ng_status vb_room(struct vb *b, int peer)
{
	struct ng_rdma *r = &b->base;

	if (r->issued[peer] + 1 <= VB_DEPTH)
		return NG_OK;
	return ng_rdma_wait(r, peer, r->issued[peer] + 1 - VB_DEPTH);
}

/* Posts @wr (wr_id and flags set here) as the next operation to @peer. */
static ng_status vb_post(struct vb *b, int peer, struct ibv_send_wr *wr, const char *what)
{
	struct ng_rdma *r = &b->base;
	uint64_t t = r->issued[peer] + 1;
	int rc;

	wr->wr_id = (uint64_t)peer << VB_SHIFT | t;
	wr->send_flags |= IBV_SEND_SIGNALED;
	rc = ng_ibv_post(&b->peers[peer].q, wr, 1);
	if (rc) {
		ng_error("%s: verbs: posting %s to rank %d: %s", r->who, what, peer, strerror(rc));
		return NG_ERR_IO;
	}
	r->issued[peer] = t;
	return NG_OK;
}

/* ---- operations ----------------------------------------------------------- */

static ng_status vb_write(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                          const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags, uint64_t *t_p)
{
	struct vb *b = vb_of(r);
	struct ibv_sge sge[2];
	struct ibv_send_wr wr = {0};
	size_t total = 0;
	bool staged = false;
	unsigned ns = 0;
	ng_status st;

	for (unsigned i = 0; i < n; i++) {
		total += iov[i].len;
		staged = staged || (!iov[i].mr && iov[i].len);
	}
	st = ng_rdma_bounds(r, peer, rm, off, total);
	if (st == NG_OK)
		st = vb_room(b, peer);
	if (st != NG_OK)
		return st;
	if ((staged || n > 2) && total <= VB_STAGE) {
		unsigned char *s = vb_slot(b, peer, r->issued[peer] + 1);
		size_t at = 0;

		for (unsigned i = 0; i < n; i++) {
			memcpy(s + at, iov[i].addr, iov[i].len);
			at += iov[i].len;
		}
		sge[ns++] = (struct ibv_sge){(uintptr_t)s, (uint32_t)total, b->stage.mr->lkey};
		staged = true;
	} else if (staged || n > 2) {
		ng_error("%s: verbs: a write of %zu bytes in %u pieces from unregistered memory (at most %u "
		         "bytes)",
		         r->who, total, n, VB_STAGE);
		return NG_ERR_USAGE;
	} else {
		for (unsigned i = 0; i < n; i++)
			if (iov[i].len)
				sge[ns++] = (struct ibv_sge){
				    (uintptr_t)iov[i].addr, (uint32_t)iov[i].len,
				    ((const struct vb_mr *)(const void *)iov[i].mr)->mr->lkey};
	}
	(void)flags; /* one write: the HCA places its bytes in order (see the top) */
	ng_ibv_wr_rdma(&wr, IBV_WR_RDMA_WRITE, 0, rm->addr + off, (uint32_t)rm->key);
	wr.send_flags |= staged && total <= b->peers[peer].q.max_inline ? IBV_SEND_INLINE : 0;
	wr.sg_list = sge;
	wr.num_sge = (int)ns;
	st = vb_post(b, peer, &wr, "an RDMA write");
	if (st == NG_OK)
		*t_p = staged ? 0 : r->issued[peer];
	return st;
}

static ng_status vb_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
                         const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	struct vb *b = vb_of(r);
	struct ibv_sge sge = {(uintptr_t)dst, (uint32_t)len,
	                      ((const struct vb_mr *)(const void *)mr)->mr->lkey};
	struct ibv_send_wr wr = {0};
	ng_status st;

	if (!(r->caps & NG_RDMA_CAP_READ)) {
		ng_error("%s: verbs: unreliable connections have no RDMA read", r->who);
		return NG_ERR_UNSUPPORTED;
	}
	st = ng_rdma_bounds(r, peer, rm, off, len);
	if (st == NG_OK)
		st = vb_room(b, peer);
	if (st != NG_OK)
		return st;
	ng_ibv_wr_rdma(&wr, IBV_WR_RDMA_READ, 0, rm->addr + off, (uint32_t)rm->key);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	st = vb_post(b, peer, &wr, "an RDMA read");
	if (st == NG_OK)
		*t_p = r->issued[peer];
	return st;
}

static ng_status vb_atomic(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
                           uint64_t off, uint64_t operand, uint64_t compare, uint64_t *old_p, uint64_t *t_p)
{
	struct vb *b = vb_of(r);
	struct ibv_send_wr wr = {0};
	struct ibv_sge sge;
	uint64_t t;
	ng_status st;

	if (!(r->caps & NG_RDMA_CAP_ATOMIC)) {
		ng_error("%s: verbs: unreliable connections have no atomics", r->who);
		return NG_ERR_UNSUPPORTED;
	}
	st = ng_rdma_bounds(r, peer, rm, off, 8);
	if (st == NG_OK)
		st = vb_room(b, peer);
	if (st != NG_OK)
		return st;
	t = r->issued[peer] + 1;
	sge = (struct ibv_sge){(uintptr_t)vb_slot(b, peer, t), 8, b->stage.mr->lkey};
	if (aop == NG_RDMA_CAS)
		ng_ibv_wr_atomic(&wr, IBV_WR_ATOMIC_CMP_AND_SWP, 0, rm->addr + off, (uint32_t)rm->key,
		                 compare, operand);
	else
		ng_ibv_wr_atomic(&wr, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, rm->addr + off, (uint32_t)rm->key,
		                 operand, 0);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	b->peers[peer].old[t % VB_DEPTH] = old_p;
	st = vb_post(b, peer, &wr, "an atomic");
	if (st != NG_OK) {
		b->peers[peer].old[t % VB_DEPTH] = NULL;
		return st;
	}
	*t_p = t;
	return NG_OK;
}

static ng_status vb_flush(struct ng_rdma *r, int peer)
{
	return ng_rdma_wait_all(r, peer);
}

/* ---- memory ---------------------------------------------------------------- */

static ng_status vb_mem_alloc(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p)
{
	struct vb *b = vb_of(r);
	struct vb_mr *m = calloc(1, sizeof(*m));
	ng_status st;

	if (!m) {
		ng_error("%s: out of memory", r->who);
		return NG_ERR_NOMEM;
	}
	st = ng_ibv_area_alloc(&b->v, len, b->access, "registered memory", &m->area);
	if (st != NG_OK) {
		free(m);
		return st;
	}
	m->mr = m->area.mr;
	m->pub = (struct ng_rdma_mr){.base = m->area.base, .len = m->area.len};
	m->pub.remote =
	    (struct ng_rdma_rmr){.addr = (uintptr_t)m->area.base, .len = m->area.len, .key = m->mr->rkey};
	*mr_p = &m->pub;
	return NG_OK;
}

static void vb_mem_free(struct ng_rdma *r, struct ng_rdma_mr *pub)
{
	struct vb_mr *m = (struct vb_mr *)(void *)pub;

	(void)r;
	ng_ibv_area_free(&m->area);
	free(m);
}

static ng_status vb_reg(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p)
{
	struct vb *b = vb_of(r);
	struct vb_mr *m = calloc(1, sizeof(*m));

	if (!m) {
		ng_error("%s: out of memory", r->who);
		return NG_ERR_NOMEM;
	}
	m->mr = ibv_reg_mr(b->v.pd, buf, len, b->access);
	if (!m->mr) {
		ng_error("%s: verbs: registering %zu bytes: %s (the locked-memory limit, ulimit -l, may be "
		         "too low)",
		         r->who, len, strerror(errno));
		free(m);
		return NG_ERR_SYS;
	}
	m->pub = (struct ng_rdma_mr){.base = buf, .len = len};
	m->pub.remote = (struct ng_rdma_rmr){.addr = (uintptr_t)buf, .len = len, .key = m->mr->rkey};
	*mr_p = &m->pub;
	return NG_OK;
}

static void vb_dereg(struct ng_rdma *r, struct ng_rdma_mr *pub)
{
	struct vb_mr *m = (struct vb_mr *)(void *)pub;

	(void)r;
	ibv_dereg_mr(m->mr);
	free(m);
}

/* ---- open and close ----------------------------------------------------------- */

static void vb_close(struct ng_rdma *r)
{
	struct vb *b = vb_of(r);

	for (int i = 0; b->peers && i < r->size; i++)
		ng_ibv_qp_destroy(&b->peers[i].q);
	free(b->peers);
	if (b->cq)
		ibv_destroy_cq(b->cq);
	ng_ibv_area_free(&b->stage);
	if (b->v.ctx)
		ng_ibv_close(&b->v);
	ng_rdma_base_fini(r);
	free(b);
}

/* Whether this host has any verbs device (the quiet probe of "auto"). */
static bool vb_any_device(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l)
		ibv_free_device_list(l);
	return l && n > 0;
}

static ng_status vb_open(const struct ng_rdma_backend *be, const struct ng_rdma_conf *cf,
                         struct ng_boot *boot, struct ng_rdma **r_p)
{
	struct vb *b = calloc(1, sizeof(*b));
	struct ng_ibv_conf ic = {
	    .who = cf->who, .dev = cf->dev, .port = cf->port, .gid_index = cf->gid_index};
	struct ng_ibv_qp **qps = NULL;
	enum ibv_qp_type type = cf->unreliable ? IBV_QPT_UC : IBV_QPT_RC;
	uint32_t inl = 220;
	enum ibv_mtu mtu;
	ng_status st, lst = NG_OK;
	char mtus[32];

	*r_p = NULL;
	if (!b) {
		ng_error("%s: out of memory", cf->who);
		return NG_ERR_NOMEM;
	}
	st = ng_rdma_base_init(&b->base, be, cf, boot->rank, boot->size);
	if (st != NG_OK) {
		free(b);
		return st;
	}
	if (cf->quiet) {
		/* "auto": a host without a device passes on quietly (all agree) */
		double none = vb_any_device() ? 0.0 : 1.0;

		st = ng_boot_max(boot, &none, 1);
		if (st != NG_OK || none != 0.0) {
			vb_close(&b->base);
			return st != NG_OK ? st : NG_ERR_NODEV;
		}
	}
	st = ng_ibv_open(&b->v, &ic, boot);
	if (st != NG_OK) {
		b->v.ctx = NULL;
		vb_close(&b->base);
		return st;
	}
	b->access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	            (cf->unreliable ? 0 : IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	b->base.caps = NG_RDMA_CAP_PROGRESS | NG_RDMA_CAP_HWKEY | NG_RDMA_CAP_ANYMEM | NG_RDMA_CAP_KEYS |
	               NG_RDMA_CAP_BLOCKS | (cf->unreliable ? 0 : NG_RDMA_CAP_READ | NG_RDMA_CAP_ATOMIC);
	b->base.stage_max = VB_STAGE;
	b->base.max_write = b->v.pattr.max_msg_sz ? b->v.pattr.max_msg_sz : 0;
	b->peers = calloc((size_t)boot->size, sizeof(*b->peers));
	qps = calloc((size_t)boot->size, sizeof(*qps));
	if (!b->peers || !qps) {
		ng_error("%s: out of memory", cf->who);
		lst = NG_ERR_NOMEM;
	}
	if (lst == NG_OK)
		lst = ng_ibv_area_alloc(&b->v, (size_t)boot->size * VB_DEPTH * VB_STAGE,
		                        IBV_ACCESS_LOCAL_WRITE, "staging memory", &b->stage);
	if (lst == NG_OK) {
		b->cq = ibv_create_cq(b->v.ctx, (int)((size_t)boot->size * VB_DEPTH), NULL, NULL, 0);
		if (!b->cq) {
			ng_error("%s: verbs: cannot create a completion queue on %s: %s", cf->who, b->v.name,
			         strerror(errno));
			lst = NG_ERR_SYS;
		}
	}
	for (int i = 0; lst == NG_OK && i < boot->size; i++) {
		lst = ng_ibv_qp_create(&b->v, type, b->cq, b->cq, VB_DEPTH, 1, &inl, &b->peers[i].q);
		if (lst == NG_OK)
			lst = ng_ibv_qp_init(&b->v, &b->peers[i].q);
		if (i != boot->rank)
			qps[i] = &b->peers[i].q;
	}
	st = ng_ibv_mesh_connect(&b->v, boot, qps, lst, NULL, 0, NULL, &mtu);
	free(qps);
	if (st == NG_OK) {
		/* A rank reaches its own memory through a queue pair connected
		 * to itself (the HCA loops it back). */
		struct ng_ibv_ep me;
		struct ng_ibv_qp *q = &b->peers[boot->rank].q;

		ng_ibv_ep_get(&b->v, &me);
		st = ng_ibv_qp_connect(&b->v, q, &me, q->qp->qp_num, mtu, boot->rank);
	}
	if (st != NG_OK) {
		vb_close(&b->base);
		return st;
	}
	ng_ibv_describe(&b->v, mtu, b->base.desc, sizeof(b->base.desc));
	snprintf(mtus, sizeof(mtus), ", %s", cf->unreliable ? "UC" : "RC");
	strncat(b->base.desc, mtus, sizeof(b->base.desc) - strlen(b->base.desc) - 1);
	*r_p = &b->base;
	return NG_OK;
}

const struct ng_rdma_backend ng_rdma_verbs = {
    .name = "verbs",
    .desc = "InfiniBand/RoCE verbs (and Soft-RoCE): RC queue pairs, hardware keys, one-sided progress",
    .open = vb_open,
    .close = vb_close,
    .mem_alloc = vb_mem_alloc,
    .mem_free = vb_mem_free,
    .reg = vb_reg,
    .dereg = vb_dereg,
    .write = vb_write,
    .read = vb_read,
    .atomic = vb_atomic,
    .progress = vb_progress,
    .flush = vb_flush,
};
