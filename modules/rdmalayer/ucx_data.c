/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path of the RDMA layer's ucx backend (ucx.c: the backend, its
 * keys and what it opens): completions, writes (staged, notified, split),
 * reads, atomics, flush, and the lookup of a peer's key.
 *
 * Completion.  Every operation has a record in a ring per peer, indexed by
 * its ticket, that its UCP callback marks done; the peer's completed count
 * advances over the finished prefix (UCP completes out of order).  A call
 * that completes at once (UCS_OK) marks its record done there; a request is
 * handed back to UCP by its callback (ucp_request_free: a request freed
 * earlier gets no callback).
 * UCP's completion of a put means its source may be reused, not that it was
 * placed: flush says that.
 *
 * Sources.  UCP takes any local memory (it registers or copies what it
 * needs), so registered pieces of a write are put as they are, one put each;
 * unregistered pieces are copied into the peer's staging ring (rdma.h) and
 * put from there, so they may be reused on return.
 *
 * Notices (NG_RDMA_NOTIFY).  The body, then, when anything was posted to
 * the peer since its endpoint was last flushed, ucp_ep_flush_nbx (waited
 * for), then the last 8 bytes as a put of their own (a single put gives no
 * order among its own bytes).  Not ucp_worker_fence: UCX 1.13 has no fence
 * per endpoint, and the worker's orders the word after the operations to
 * every peer, so over transports whose puts the target completes (tcp's
 * emulation) it waits for peers that have stopped progressing (ranks gone
 * on to a barrier of the bootstrap): a deadlock.  A write of blocks
 * (NG_RDMA_BLOCKS) is one notified write per piece.
 *
 * flush(peer): every operation to the peer completes, then ucp_ep_flush_nbx
 * on its endpoint: its puts, gets and atomics are placed at the peer.
 *
 * Bounds: every access is checked against the descriptor (ng_rdma_bounds)
 * before it is posted.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "module.h"
#include "modules/rdmalayer/rdma.h"
#include "modules/rdmalayer/ucx_int.h"

/* ---- errors and completions --------------------------------------------- */

ng_status ng_rucx_fail(const struct rucx *u, const char *call, int peer, ucs_status_t s)
{
	if (peer >= 0)
		ng_error("%s: ucx: %s to rank %d: %s", u->base.who, call, peer, ucs_status_string(s));
	else
		ng_error("%s: ucx: %s: %s", u->base.who, call, ucs_status_string(s));
	switch (s) {
	case UCS_ERR_NO_MEMORY:
		return NG_ERR_NOMEM;
	case UCS_ERR_CONNECTION_RESET:
	case UCS_ERR_ENDPOINT_TIMEOUT:
	case UCS_ERR_UNREACHABLE:
		return NG_ERR_PEER_LOST;
	case UCS_ERR_CANCELED:
		return NG_ERR_CANCELLED;
	default:
		return NG_ERR_IO;
	}
}

/* Marks @op done (its old value delivered) and advances its peer's
 * finished prefix. */
static void rucx_complete(struct rucx *u, struct rucx_op *op)
{
	struct ng_rdma *r = &u->base;
	int p = op->peer;

	op->done = true;
	if (op->old_p) {
		*op->old_p = op->val[1];
		op->old_p = NULL;
	}
	while (r->completed[p] < r->issued[p]) {
		struct rucx_op *q = &u->ops[(size_t)p * RUCX_DEPTH + (r->completed[p] + 1) % RUCX_DEPTH];

		if (!q->done || q->ticket != r->completed[p] + 1)
			break;
		q->done = false;
		r->completed[p]++;
	}
	r->watch.events++;
}

/* UCP's completion callback of every counted operation. */
static void rucx_cb(void *req, ucs_status_t s, void *user)
{
	struct rucx_op *op = user;
	struct rucx *u = op->u;

	ucp_request_free(req);
	if (s != UCS_OK && u->err == NG_OK) {
		u->err = NG_ERR_IO;
		u->err_peer = op->peer;
		u->err_status = s;
	}
	rucx_complete(u, op);
}

ng_status ng_rucx_progress(struct ng_rdma *r)
{
	struct rucx *u = rucx_of(r);

	ucp_worker_progress(u->worker);
	if (__builtin_expect(u->err != NG_OK, 0)) {
		/* A peer that stopped first, interrupted, is no fault. */
		if (ng_watch_cancelled(&r->watch))
			return NG_ERR_CANCELLED;
		if (u->err_status != UCS_OK) {
			u->err = ng_rucx_fail(u, "an operation", u->err_peer, u->err_status);
			if (u->err == NG_ERR_IO)
				u->err = NG_ERR_PEER_LOST;
			u->err_status = UCS_OK;
		}
		return u->err;
	}
	return NG_OK;
}

/* The record of the next operation to @peer (waits for room). */
static ng_status rucx_next(struct rucx *u, int peer, struct rucx_op **op_p)
{
	struct ng_rdma *r = &u->base;
	uint64_t t = r->issued[peer] + 1;
	ng_status st;

	while (t - r->completed[peer] > RUCX_DEPTH) {
		st = ng_rucx_progress(r);
		if (st == NG_OK)
			st = ng_rdma_idle(r, peer);
		if (st != NG_OK)
			return st;
	}
	*op_p = &u->ops[(size_t)peer * RUCX_DEPTH + t % RUCX_DEPTH];
	**op_p = (struct rucx_op){.u = u, .ticket = t, .peer = peer};
	return NG_OK;
}

/* What a UCP call gave for @op: counted (its ticket issued), completed now
 * when it did (UCS_OK), else left to the callback; an error reported. */
static ng_status rucx_posted(struct rucx *u, struct rucx_op *op, ucs_status_ptr_t req, const char *what)
{
	struct ng_rdma *r = &u->base;
	int p = op->peer;

	if (UCS_PTR_IS_ERR(req))
		return ng_rucx_fail(u, what, p, UCS_PTR_STATUS(req));
	r->issued[p]++;
	u->dirty[p] = true;
	ng_rdma_stage_mark(&u->stage[p], RUCX_DEPTH, r->issued[p]);
	/* A request is freed by its callback (freed now, it would get none). */
	if (req == NULL)
		rucx_complete(u, op);
	return NG_OK;
}

ng_status ng_rucx_wait_req(struct rucx *u, int peer, ucs_status_ptr_t req, const char *what)
{
	struct ng_rdma *r = &u->base;
	ucs_status_t s;
	ng_status st = NG_OK;

	if (req == NULL)
		return NG_OK;
	if (UCS_PTR_IS_ERR(req))
		return ng_rucx_fail(u, what, peer, UCS_PTR_STATUS(req));
	while ((s = ucp_request_check_status(req)) == UCS_INPROGRESS) {
		st = ng_rucx_progress(r);
		if (st == NG_OK)
			st = ng_rdma_idle(r, peer);
		if (st != NG_OK)
			break;
	}
	ucp_request_free(req);
	if (st != NG_OK)
		return st;
	r->watch.events++;
	return s == UCS_OK ? NG_OK : ng_rucx_fail(u, what, peer, s);
}

/* ---- keys --------------------------------------------------------------- */

/* The unpacked key of descriptor @rm of @peer: kept from an earlier access
 * through the same key, else read from the peer's directory (see
 * ucx_int.h).  A key whose slot holds another generation is refused. */
static ng_status rucx_rkey(struct rucx *u, int peer, const struct ng_rdma_rmr *rm, ucp_rkey_h *rkey_p)
{
	struct ng_rdma *r = &u->base;
	uint64_t slot = rm->key & 0xffffffffu, gen = rm->key >> 32;
	const volatile struct rucx_slot *f = &u->fetch;
	struct rucx_key *k;
	ucp_request_param_t prm = {0};
	ucs_status_t s;
	ng_status st;

	if (__builtin_expect(u->keys[peer] != NULL && slot < RUCX_SLOTS, 1)) {
		k = &u->keys[peer][slot];
		if (k->rkey && k->key == rm->key) {
			*rkey_p = k->rkey;
			return NG_OK;
		}
	}
	if (slot >= RUCX_SLOTS || (unsigned)peer >= (unsigned)r->size) {
		ng_error("%s: ucx: a key of rank %d names no registration (slot %" PRIu64 ")", r->who, peer,
		         slot);
		return NG_ERR_USAGE;
	}
	/* The first access through this key: the peer's slot. */
	if (!u->keys[peer]) {
		u->keys[peer] = calloc(RUCX_SLOTS, sizeof(*u->keys[peer]));
		if (!u->keys[peer]) {
			ng_error("%s: out of memory", r->who);
			return NG_ERR_NOMEM;
		}
	}
	k = &u->keys[peer][slot];
	memset(&u->fetch, 0, sizeof(u->fetch));
	st = ng_rucx_wait_req(u, peer,
	                      ucp_get_nbx(u->eps[peer], &u->fetch, sizeof(u->fetch),
	                                  u->dir_addr[peer] + RUCX_CTL(r->size) + slot * RUCX_SLOT,
	                                  u->dir_rkey[peer], &prm),
	                      "reading a key");
	if (st != NG_OK)
		return st;
	if (f->head != gen || f->tail != gen || f->len > sizeof(f->key)) {
		ng_error("%s: ucx: a stale or forged key of rank %d (slot %" PRIu64 ", generation %" PRIu64
		         ", the slot holds %" PRIu64 ")",
		         r->who, peer, slot, gen, (uint64_t)f->head);
		return NG_ERR_USAGE;
	}
	if (k->rkey) {
		ucp_rkey_destroy(k->rkey);
		k->rkey = NULL;
	}
	s = ucp_ep_rkey_unpack(u->eps[peer], u->fetch.key, &k->rkey);
	if (s != UCS_OK) {
		k->rkey = NULL;
		return ng_rucx_fail(u, "ucp_ep_rkey_unpack", peer, s);
	}
	k->key = rm->key;
	*rkey_p = k->rkey;
	return NG_OK;
}

/* ---- operations --------------------------------------------------------- */

/* One counted put of @len bytes from @src to @raddr. */
static ng_status rucx_put1(struct rucx *u, int peer, const void *src, size_t len, uint64_t raddr,
                           ucp_rkey_h rkey, struct rucx_op *op)
{
	ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
	                           .cb.send = rucx_cb,
	                           .user_data = op};

	return rucx_posted(u, op, ucp_put_nbx(u->eps[peer], src, len, raddr, rkey, &prm), "ucp_put_nbx");
}

ng_status ng_rucx_put_word(struct rucx *u, int peer, uint64_t word, uint64_t raddr, ucp_rkey_h rkey)
{
	struct rucx_op *op;
	ng_status st = rucx_next(u, peer, &op);

	if (st != NG_OK)
		return st;
	op->val[0] = word;
	return rucx_put1(u, peer, &op->val[0], 8, raddr, rkey, op);
}

/* One write of @iov[0..n) (@total bytes) without a notice to @raddr:
 * registered pieces put as they are, the others staged.  *@t_p: the last
 * ticket, 0 when every source was staged. */
static ng_status rucx_put(struct rucx *u, int peer, const struct ng_rdma_iov *iov, unsigned n, uint64_t raddr,
                          ucp_rkey_h rkey, uint64_t *t_p)
{
	struct ng_rdma *r = &u->base;
	unsigned char *stage = NULL;
	size_t unreg = 0, at = 0;
	bool all_staged = true;
	ng_status st = NG_OK;

	for (unsigned i = 0; i < n; i++)
		unreg += iov[i].mr ? 0 : iov[i].len;
	for (unsigned i = 0; i < n && st == NG_OK; i++) {
		const struct ng_rdma_iov *p = &iov[i];
		const void *src = p->addr;
		struct rucx_op *op;

		if (!p->len)
			continue;
		st = rucx_next(u, peer, &op);
		if (st == NG_OK && !p->mr && !stage)
			st = ng_rdma_stage_take(r, &u->stage[peer], peer, RUCX_DEPTH, unreg, &stage);
		if (st != NG_OK)
			break;
		if (!p->mr) {
			memcpy(stage, p->addr, p->len);
			src = stage;
			stage += p->len;
		} else {
			all_staged = false;
		}
		st = rucx_put1(u, peer, src, p->len, raddr + at, rkey, op);
		at += p->len;
	}
	*t_p = all_staged ? 0 : r->issued[peer];
	return st;
}

/* Everything posted to @peer so far placed there (the endpoint flushed),
 * unless nothing was posted since the last flush. */
static ng_status rucx_fence(struct rucx *u, int peer)
{
	ucp_request_param_t prm = {0};
	ng_status st;

	if (!u->dirty[peer])
		return NG_OK;
	st = ng_rucx_wait_req(u, peer, ucp_ep_flush_nbx(u->eps[peer], &prm), "ucp_ep_flush_nbx");
	if (st == NG_OK)
		u->dirty[peer] = false;
	return st;
}

/* A write whose last 8 bytes are a notice: the body, the endpoint's flush,
 * the word. */
static ng_status rucx_notify(struct rucx *u, int peer, const struct ng_rdma_iov *iov, unsigned n,
                             size_t total, uint64_t raddr, ucp_rkey_h rkey, uint64_t *t_p)
{
	struct ng_rdma_iov body[NG_RDMA_IOV_MAX], w[NG_RDMA_IOV_MAX];
	unsigned nb = ng_rdma_iov_slice(iov, n, 0, total - 8, body);
	unsigned nw = ng_rdma_iov_slice(iov, n, total - 8, 8, w);
	unsigned char word[8];
	struct rucx_op *op;
	uint64_t tb = 0;
	size_t at = 0;
	ng_status st = NG_OK;

	for (unsigned i = 0; i < nw; i++) {
		memcpy(word + at, w[i].addr, w[i].len);
		at += w[i].len;
	}
	if (total > 8)
		st = rucx_put(u, peer, body, nb, raddr, rkey, &tb);
	if (st != NG_OK)
		return st;
	st = rucx_fence(u, peer);
	if (st == NG_OK)
		st = rucx_next(u, peer, &op);
	if (st != NG_OK)
		return st;
	memcpy(&op->val[0], word, 8);
	st = rucx_put1(u, peer, &op->val[0], 8, raddr + total - 8, rkey, op);
	/* The word is the record's own copy: only the body's sources matter. */
	*t_p = tb;
	return st;
}

ng_status ng_rucx_write(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                        const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags, uint64_t *t_p)
{
	struct rucx *u = rucx_of(r);
	ucp_rkey_h rkey;
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
	st = rucx_rkey(u, peer, rm, &rkey);
	if (st != NG_OK)
		return st;
	if (flags & NG_RDMA_NOTIFY)
		return rucx_notify(u, peer, iov, n, total, rm->addr + off, rkey, t_p);
	return rucx_put(u, peer, iov, n, rm->addr + off, rkey, t_p);
}

ng_status ng_rucx_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
                       const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	struct rucx *u = rucx_of(r);
	ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
	                           .cb.send = rucx_cb};
	struct rucx_op *op;
	ucp_rkey_h rkey;
	ng_status st = ng_rdma_bounds(r, peer, rm, off, len);

	(void)mr;
	if (st == NG_OK)
		st = rucx_rkey(u, peer, rm, &rkey);
	if (st != NG_OK)
		return st;
	/* Longer than the largest read asked for (tests): consecutive reads. */
	while (r->max_write && len > r->max_write) {
		st = rucx_next(u, peer, &op);
		if (st != NG_OK)
			return st;
		prm.user_data = op;
		st = rucx_posted(u, op,
		                 ucp_get_nbx(u->eps[peer], dst, r->max_write, rm->addr + off, rkey, &prm),
		                 "ucp_get_nbx");
		if (st != NG_OK)
			return st;
		dst = (unsigned char *)dst + r->max_write;
		off += r->max_write;
		len -= r->max_write;
	}
	st = rucx_next(u, peer, &op);
	if (st != NG_OK)
		return st;
	prm.user_data = op;
	st = rucx_posted(u, op, ucp_get_nbx(u->eps[peer], dst, len, rm->addr + off, rkey, &prm),
	                 "ucp_get_nbx");
	*t_p = r->issued[peer];
	return st;
}

ng_status ng_rucx_atomic(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
                         uint64_t off, uint64_t operand, uint64_t compare, uint64_t *old_p, uint64_t *t_p)
{
	struct rucx *u = rucx_of(r);
	ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
	                                           UCP_OP_ATTR_FIELD_DATATYPE |
	                                           UCP_OP_ATTR_FIELD_REPLY_BUFFER,
	                           .cb.send = rucx_cb,
	                           .datatype = ucp_dt_make_contig(8)};
	struct rucx_op *op;
	ucp_rkey_h rkey;
	ng_status st = ng_rdma_bounds(r, peer, rm, off, 8);

	if (st == NG_OK && ((rm->addr + off) & 7u)) {
		ng_error("%s: ucx: an atomic on a word of rank %d that is not 8-byte aligned", r->who, peer);
		return NG_ERR_USAGE;
	}
	if (st == NG_OK)
		st = rucx_rkey(u, peer, rm, &rkey);
	if (st == NG_OK)
		st = rucx_next(u, peer, &op);
	if (st != NG_OK)
		return st;
	/* CSWAP: buffer is the value compared, the reply buffer the swap value
	 * in and the old value out; ADD: buffer the addend, the reply the old
	 * value. */
	op->val[0] = aop == NG_RDMA_CAS ? compare : operand;
	op->val[1] = aop == NG_RDMA_CAS ? operand : 0;
	op->old_p = old_p;
	prm.user_data = op;
	prm.reply_buffer = &op->val[1];
	st = rucx_posted(u, op,
	                 ucp_atomic_op_nbx(u->eps[peer],
	                                   aop == NG_RDMA_CAS ? UCP_ATOMIC_OP_CSWAP : UCP_ATOMIC_OP_ADD,
	                                   &op->val[0], 1, rm->addr + off, rkey, &prm),
	                 aop == NG_RDMA_CAS ? "a compare-and-swap" : "a fetch-and-add");
	*t_p = r->issued[peer];
	return st;
}

ng_status ng_rucx_flush(struct ng_rdma *r, int peer)
{
	ng_status st = ng_rdma_wait_all(r, peer);

	if (st != NG_OK)
		return st;
	rucx_of(r)->dirty[peer] = true; /* a write of ticket 0 counts too */
	return rucx_fence(rucx_of(r), peer);
}
