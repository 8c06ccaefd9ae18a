/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The channel's two-sided operations (chan.h: isend, irecv, test, wait) and
 * its progress (chan.c: Progress): the send queue posted as credits allow,
 * the rings read (EAGER messages delivered or kept unexpected, CTSs kept,
 * FINs completing rendezvous receives), waiting under the layer's watchdog.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/chan/chan_int.h"
#include "modules/rdmalayer/rdma.h"
#include "queue.h"

/* Posts what the head of @peer's send queue can post now. */
static ng_status ch_send_progress(struct ng_chan *t, int peer)
{
	struct ch_peer *p = &t->peers[peer];
	ng_status st = ng_ch_ring_get(t, peer);

	if (st != NG_OK)
		return st;
	struct ch_req *r;

	while ((r = ch_head(&p->sq))) {

		if (!r->rndv) {
			if (!ch_credit(t, p, true))
				return NG_OK;
			st = ng_ch_ring_write(t, peer, CH_EAGER, 0, r->buf, r->mr, r->len, &r->ticket);
			if (st != NG_OK)
				return st;
		} else {
			struct ch_cts *c = NULL;
			struct ch_fin f = {.idx = r->idx};
			uint64_t ticket = 0;
			uint8_t flags = 0;

			/* Drop CTSs of messages that went eager (a length mismatch the
			 * receiver reports). */
			while (p->cts_head != p->cts_tail && p->ctss[p->cts_head % t->K].idx < r->idx)
				p->cts_head++;
			if (p->cts_head != p->cts_tail && p->ctss[p->cts_head % t->K].idx == r->idx)
				c = &p->ctss[p->cts_head % t->K];
			if (c && c->len != r->len) {
				flags = CH_F_MISMATCH;
			} else if (!r->posted) {
				/* Before its CTS the protocol may prepare (copy ahead). */
				st = t->rv->tx_step(t->rv_ctx, peer, r->buf, r->len, c ? &c->rm : NULL,
				                    c ? c->off : 0, &r->h, &r->posted, &ticket);
				if (st != NG_OK)
					return st;
				if (!r->posted)
					return NG_OK;
				r->ticket = ticket;
			}
			if (!c || !ch_credit(t, p, false))
				return NG_OK;
			p->cts_head++;
			ticket = r->ticket;
			if (t->lossy && !flags)
				f.tails = ng_chan_tails(r->buf, r->len, t->maxw);
			st = ng_ch_ring_write(t, peer, CH_FIN, flags, &f, NULL, sizeof(f), &r->ticket);
			if (st != NG_OK)
				return st;
			/* The payload's last write, unless the FIN itself needs completing. */
			if (!r->ticket)
				r->ticket = ticket;
			if (flags) {
				ng_queue_pop(&p->sq);
				ch_finish(t, r, NG_ERR_TRUNCATED);
				continue;
			}
		}
		ng_queue_pop(&p->sq);
		r->state = CH_POSTED;
	}
	return NG_OK;
}

/* ---- receiving -------------------------------------------------------- */

static inline unsigned char *ch_slot(const struct ng_chan *t, const struct ch_peer *p, uint64_t n)
{
	return p->ring + (size_t)(n % t->R) * t->slot;
}

/* Copies EAGER ring message @n into receive @r and completes it. */
static void ch_deliver(struct ng_chan *t, struct ch_peer *p, uint64_t n, struct ch_req *r)
{
	struct ch_meta *m = &p->meta[n % t->R];

	if (r->upto && m->len <= r->len)
		r->len = m->len;
	if (m->len != r->len) {
		ch_done(r, NG_ERR_TRUNCATED);
	} else {
		memcpy(r->buf, ch_slot(t, p, n) + CH_HDR, r->len);
		ch_done(r, NG_OK);
	}
	m->done = true;
}

/* Looks at everything that arrived from @peer. */
static ng_status ch_recv_progress(struct ng_chan *t, int peer, bool *seen_p)
{
	struct ch_peer *p = &t->peers[peer];
	bool any = false;

	if (!p->ring)
		return NG_OK;
	for (;;) {
		uint64_t want = p->rx_scan + 1;
		unsigned char *s = ch_slot(t, p, p->rx_scan);
		const struct ch_hdr *h = (const struct ch_hdr *)(void *)s;
		struct ch_meta *m = &p->meta[p->rx_scan % t->R];
		uint32_t len;

		if (ng_rdma_load64((const volatile uint64_t *)&h->seq) != want)
			break;
		len = __atomic_load_n(&h->len, __ATOMIC_RELAXED);
		if (len > t->S)
			len = (uint32_t)t->S;
		if (ng_rdma_load64((const volatile uint64_t *)(void *)(s + CH_HDR + ch_pad8(len))) != want)
			break;
		any = true;
		m->len = h->len;
		m->type = h->type;
		(void)ng_rdma_credit_widen(&p->credit_seen, h->credit, UINT16_MAX, p->tx_seq);
		m->done = false;
		p->rx_scan++;
		if (m->type == CH_EAGER) {
			struct ch_req *r = ch_head(&p->rq);

			if (r && !r->rndv) {
				ng_queue_pop(&p->rq);
				ch_deliver(t, p, want - 1, r);
			} else if (r) {
				/* An EAGER message for a rendezvous receive. */
				if (p->cts_next == r)
					p->cts_next = ch_next(r);
				else
					p->cts_out--;
				ng_queue_pop(&p->rq);
				ch_finish(t, r, NG_ERR_TRUNCATED);
				m->done = true;
			} else {
				p->unexp[(p->unexp_head + p->unexp_n++) % t->R] = want - 1;
			}
		} else if (m->type == CH_CTS) {
			memcpy(&p->ctss[p->cts_tail++ % t->K], s + CH_HDR, sizeof(struct ch_cts));
			m->done = true;
		} else if (m->type == CH_FIN) {
			struct ch_req *r = ch_head(&p->rq);
			ng_status st = NG_ERR_TRUNCATED;

			m->done = true;
			if (!r || !r->rndv || !r->cts) {
				ng_error("%s: rank %d sent a rendezvous completion for no receive", t->who,
				         peer);
				return NG_ERR_PROTO;
			}
			ng_queue_pop(&p->rq);
			p->cts_out--;
			if (!(h->flags & CH_F_MISMATCH))
				st = t->rv->rx_step
				         ? t->rv->rx_step(t->rv_ctx, peer, r->buf, r->len, r->h, true)
				         : NG_OK;
			if (st == NG_OK && t->lossy)
				st = ng_ch_lossy_check(t, peer, r, s + CH_HDR);
			ch_finish(t, r, st);
			if (st != NG_OK && st != NG_ERR_TRUNCATED)
				return st;
		} else {
			ng_error("%s: rank %d sent an unknown ring message (type %u)", t->who, peer, m->type);
			return NG_ERR_PROTO;
		}
	}
	/* The active rendezvous receive takes what has arrived. */
	struct ch_req *r = ch_head(&p->rq);

	if (t->rv->rx_step && r && r->rndv && r->cts) {
		ng_status st = t->rv->rx_step(t->rv_ctx, peer, r->buf, r->len, r->h, false);

		if (st != NG_OK)
			return st;
	}
	if (any) {
		*seen_p = true;
		return ng_ch_release(t, peer);
	}
	return NG_OK;
}

/* One round of progress over every peer with work. */
static ng_status ch_progress(struct ng_chan *t, bool *seen_p)
{
	ng_status st = ng_rdma_progress(t->r);

	for (int i = 0; i < t->size && st == NG_OK; i++) {
		struct ch_peer *p = &t->peers[i];

		/* A peer with messages for me and no ring here yet asks for one. */
		if (!p->ring && ng_rdma_load64(&p->ctl->want)) {
			st = ng_ch_ring_give(t, i);
			if (st != NG_OK)
				break;
		}
		if (ng_queue_empty(&p->rq) && ng_queue_empty(&p->sq))
			continue;
		st = ch_recv_progress(t, i, seen_p);
		if (st == NG_OK && p->cts_next)
			st = ng_ch_send_cts(t, i);
		if (st == NG_OK && !ng_queue_empty(&p->sq))
			st = ch_send_progress(t, i);
	}
	return st;
}

/* ---- the channel ------------------------------------------------------ */

ng_status ng_chan_isend(struct ng_chan *t, int peer, const void *buf, size_t len, struct ng_req *req)
{
	struct ch_req *r = ch_req_of(req);
	struct ch_peer *p = &t->peers[peer];
	const struct ch_block *b = ch_block_find(t, buf, len ? len : 1);

	*r = (struct ch_req){.buf = (unsigned char *)(uintptr_t)buf,
	                     .len = len,
	                     .mr = b ? b->mr : NULL,
	                     .peer = peer,
	                     .rndv = len > t->S,
	                     .state = CH_QUEUED};
	if (!b && len > 0 && !t->anymem) {
		ng_error("%s: send buffer %p is not communication memory (alloc)", t->who, buf);
		return NG_ERR_USAGE;
	}
	r->idx = p->tx_posted++;
	ng_queue_push(&p->sq, &r->link);
	return ch_send_progress(t, peer);
}

static ng_status ch_irecv(struct ng_chan *t, int peer, void *buf, size_t len, bool upto, struct ng_req *req)
{
	struct ch_req *r = ch_req_of(req);
	struct ch_peer *p = &t->peers[peer];

	*r = (struct ch_req){.buf = buf,
	                     .len = len,
	                     .peer = peer,
	                     .is_recv = true,
	                     .upto = upto,
	                     .rndv = len > t->S,
	                     .idx = p->rx_posted++,
	                     .state = CH_QUEUED};
	if (r->rndv && !t->anymem && !ch_block_find(t, buf, len)) {
		ng_error("%s: receive buffer %p is not communication memory (alloc)", t->who, buf);
		return NG_ERR_USAGE;
	}
	/* The first receive from @peer gives it a ring here. */
	if (!p->ring) {
		ng_status st = ng_ch_ring_give(t, peer);

		if (st != NG_OK)
			return st;
	}
	if (p->unexp_n && ng_queue_empty(&p->rq)) {
		uint64_t n = p->unexp[p->unexp_head % t->R];

		p->unexp_head++;
		p->unexp_n--;
		if (r->rndv) {
			ch_done(r, NG_ERR_TRUNCATED);
			p->meta[n % t->R].done = true;
		} else {
			ch_deliver(t, p, n, r);
		}
		return ng_ch_release(t, peer);
	}
	ng_queue_push(&p->rq, &r->link);
	if (r->rndv && !p->cts_next)
		p->cts_next = r;
	if (p->cts_next)
		return ng_ch_send_cts(t, peer);
	return NG_OK;
}

ng_status ng_chan_irecv(struct ng_chan *t, int peer, void *buf, size_t len, struct ng_req *req)
{
	return ch_irecv(t, peer, buf, len, false, req);
}

ng_status ng_chan_irecv_upto(struct ng_chan *t, int peer, void *buf, size_t cap, struct ng_req *req)
{
	return ch_irecv(t, peer, buf, cap < t->S ? cap : t->S, true, req);
}

size_t ng_chan_req_len(struct ng_req *req)
{
	return ch_req_of(req)->len;
}

ng_status ng_chan_test(struct ng_chan *t, struct ng_req *req, bool *done_p)
{
	struct ch_req *r = ch_req_of(req);
	bool seen = false;
	ng_status st;

	if (r->state == CH_QUEUED || (r->state == CH_POSTED && !ng_rdma_done(t->r, r->peer, r->ticket))) {
		st = ch_progress(t, &seen);
		if (st != NG_OK)
			return st;
	}
	if (r->state == CH_POSTED && ng_rdma_done(t->r, r->peer, r->ticket))
		ch_finish(t, r, NG_OK);
	*done_p = r->state == CH_DONE;
	return *done_p ? r->status : NG_OK;
}

ng_status ng_chan_progress(struct ng_chan *t, bool *seen_p)
{
	return ch_progress(t, seen_p);
}

ng_status ng_chan_idle(struct ng_chan *t, int peer)
{
	ng_status st = ng_rdma_idle(t->r, peer);

	if (st == NG_OK && t->lossy && ng_rdma_credit_heal_due(&t->r->watch, &t->healed, CH_HEAL_NS))
		st = ng_ch_heal(t);
	return st;
}

ng_status ng_chan_wait(struct ng_chan *t, struct ng_req *req)
{
	struct ch_req *r = ch_req_of(req);
	ng_status st;

	for (;;) {
		bool seen = false;

		if (r->state == CH_POSTED && ng_rdma_done(t->r, r->peer, r->ticket))
			ch_finish(t, r, NG_OK);
		if (r->state == CH_DONE)
			return r->status;
		if (r->state == CH_POSTED) {
			st = ng_rdma_wait(t->r, r->peer, r->ticket);
			if (st != NG_OK)
				return st;
			continue;
		}
		st = ch_progress(t, &seen);
		if (st != NG_OK)
			return st;
		if (seen) {
			t->r->watch.events++;
			continue;
		}
		st = ng_chan_idle(t, r->peer);
		if (st != NG_OK)
			return st;
	}
}
