/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The channel's rendezvous (chan.c: the types CTS and FIN; chan.h: struct
 * ng_chan_rndv): its own protocol (block to block), the CTSs a posted
 * receive sends, and over an unreliable connection the marks and the check
 * of every payload against its FIN (chan.h: the rule).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/chan/chan_int.h"
#include "modules/rdmalayer/rdma.h"

uint64_t ng_chan_tails(const void *buf, size_t len, size_t max)
{
	const unsigned char *b = buf;
	uint64_t x = 0;

	for (size_t at = 0; at < len;) {
		uint64_t w;

		at += ng_chan_piece(len, at, max);
		memcpy(&w, b + at - 8, 8);
		x ^= w;
	}
	return x;
}

void ng_chan_tails_mark(void *buf, size_t len, size_t max, uint64_t key)
{
	unsigned char *b = buf;
	uint64_t i = 0;

	for (size_t at = 0; at < len; i++) {
		uint64_t w = ch_mix(key + i * UINT64_C(0x9e3779b97f4a7c15));

		at += ng_chan_piece(len, at, max);
		memcpy(b + at - 8, &w, 8);
	}
}

/* ---- the channel's own rendezvous: block to block ---------------------- */

static ng_status ch_direct_rx_begin(void *ctx, int peer, void *buf, size_t len, struct ng_rdma_rmr *rm_p,
                                    uint64_t *off_p, void **h_p)
{
	const struct ch_block *b = ch_block_find(ctx, buf, len);

	(void)peer;
	*rm_p = b->mr->remote;
	*off_p = (uint64_t)((unsigned char *)buf - b->base);
	*h_p = NULL;
	return NG_OK;
}

static ng_status ch_direct_tx_step(void *ctx, int peer, const void *buf, size_t len,
                                   const struct ng_rdma_rmr *rm, uint64_t off, void **h_p, bool *done_p,
                                   uint64_t *ticket_p)
{
	struct ng_chan *t = ctx;
	const struct ch_block *b;
	uint64_t ticket = 0;
	ng_status st;

	(void)h_p;
	*done_p = false;
	if (!rm)
		return NG_OK;
	b = ch_block_find(t, buf, len);
	/* The pieces the receiver of a lossy channel marked (chan.h). */
	for (size_t at = 0, n; at < len; at += n) {
		n = ng_chan_piece(len, at, t->maxw);

		st = ng_rdma_write(t->r, peer, (const unsigned char *)buf + at, b->mr, n, rm, off + at, 0,
		                   &ticket);
		if (st != NG_OK)
			return st;
	}
	*ticket_p = ticket;
	*done_p = true;
	return NG_OK;
}

const struct ng_chan_rndv ng_ch_direct = {
    .rx_begin = ch_direct_rx_begin,
    .tx_step = ch_direct_tx_step,
};

/* Sends the CTSs due to @peer. */
ng_status ng_ch_send_cts(struct ng_chan *t, int peer)
{
	struct ch_peer *p = &t->peers[peer];
	uint64_t ticket;
	ng_status st = ng_ch_ring_get(t, peer);

	if (st != NG_OK)
		return st;
	while (p->cts_next && p->cts_out < t->K && ch_credit(t, p, false)) {
		struct ch_req *r = p->cts_next;
		struct ch_cts c = {.idx = r->idx, .len = r->len};

		st = t->rv->rx_begin(t->rv_ctx, peer, r->buf, r->len, &c.rm, &c.off, &r->h);
		if (st != NG_OK)
			return st;
		/* Before the CTS: the sender writes only after it (chan.h). */
		if (t->lossy)
			ng_chan_tails_mark(r->buf, r->len, t->maxw, t->key ^ ch_mix(r->idx));
		st = ng_ch_ring_write(t, peer, CH_CTS, 0, &c, NULL, sizeof(c), &ticket);
		if (st != NG_OK)
			return st;
		r->cts = true;
		p->cts_out++;
		p->cts_next = ch_next(r);
	}
	return NG_OK;
}

/* A lossy channel: whether every piece of rendezvous receive @r arrived,
 * by the FIN at @fin (chan.h). */
ng_status ng_ch_lossy_check(struct ng_chan *t, int peer, const struct ch_req *r, const unsigned char *fin)
{
	struct ch_fin f;

	memcpy(&f, fin, sizeof(f));
	if (ng_chan_tails(r->buf, r->len, t->maxw) == f.tails)
		return NG_OK;
	ng_error("%s: a message of %zu bytes from rank %d did not all arrive (a packet of its payload was "
	         "lost on the unreliable connection)",
	         t->who, r->len, peer);
	return NG_ERR_IO;
}
