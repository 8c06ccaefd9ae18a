/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The channel's rings (chan.c: Ring, Rings at first use, Flow control):
 * writing a ring message, the ring a peer writes into, given at its first
 * use and told to the peer, and the credits (slots released, the credit
 * word, told again on a lossy channel's silence).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "modules/chan/chan_int.h"
#include "modules/rdmalayer/rdma.h"

/* ---- sending ring messages -------------------------------------------- */

/* The notice word of a ring's descriptor: never 0, and another for a torn
 * descriptor but by chance. */
static uint64_t ch_ring_seal(const struct ng_rdma_rmr *m)
{
	return ch_mix(m->addr ^ ch_mix(m->len ^ ch_mix(m->key ^ ch_mix(m->aux)))) | 1;
}

/* My ring at @peer, for my messages: known once it told me (it gives one
 * when it first receives from me or when I ask); asks once.  NG_OK with
 * p->ring_known still false: not yet. */
ng_status ng_ch_ring_get(struct ng_chan *t, int peer)
{
	struct ch_peer *p = &t->peers[peer];
	uint64_t one = 1, ticket, seal;
	ng_status st;

	if (p->ring_known)
		return NG_OK;
	seal = ng_rdma_load64(&p->ctl->ring_ready);
	if (seal) {
		const struct ch_ctl *c = (const struct ch_ctl *)(uintptr_t)p->ctl;
		struct ng_rdma_rmr m = c->ring;

		if (ch_ring_seal(&m) == seal) {
			p->r_ring = m;
			p->ring_known = true;
			t->r->watch.events++;
			return NG_OK;
		}
	}
	if (p->ring_asked)
		return NG_OK;
	st = ng_rdma_write(t->r, peer, &one, NULL, 8, &p->r_ctl,
	                   (uint64_t)t->rank * CH_CTL + offsetof(struct ch_ctl, want), NG_RDMA_NOTIFY,
	                   &ticket);
	p->ring_asked = st == NG_OK;
	return st;
}

/* Tells @peer where my ring for its messages is (written again by
 * ng_ch_heal on a lossy channel until it sends). */
static ng_status ch_ring_tell(struct ng_chan *t, int peer, unsigned flags)
{
	struct ch_peer *p = &t->peers[peer];
	uint64_t ticket;

	p->give.ring = p->ring_mr->remote;
	p->give.ready = ch_ring_seal(&p->give.ring);
	return ng_rdma_write(t->r, peer, &p->give, NULL, sizeof(p->give), &p->r_ctl,
	                     (uint64_t)t->rank * CH_CTL + offsetof(struct ch_ctl, ring),
	                     NG_RDMA_NOTIFY | flags, &ticket);
}

/* Allocates the ring that @peer writes its messages into, at its first use
 * (my first receive from it, or its asking), and tells it (doc/rdma.md:
 * ring memory only for the peers that talk to this rank). */
ng_status ng_ch_ring_give(struct ng_chan *t, int peer)
{
	struct ch_peer *p = &t->peers[peer];
	ng_status st;

	if (p->ring)
		return NG_OK;
	st = ng_rdma_mem_alloc(t->r, t->R * t->slot, &p->ring_mr);
	if (st != NG_OK)
		return st;
	p->ring = p->ring_mr->base;
	return ch_ring_tell(t, peer, 0);
}

/* Writes ring message number ++tx_seq of @type with @body (@mr: its
 * registration, NULL when small enough to be staged) to @peer. */
ng_status ng_ch_ring_write(struct ng_chan *t, int peer, uint8_t type, uint8_t flags, const void *body,
                           const struct ng_rdma_mr *mr, size_t len, uint64_t *ticket_p)
{
	struct ch_peer *p = &t->peers[peer];
	uint64_t seq = ++p->tx_seq;
	struct ch_hdr h = {
	    .seq = seq, .len = (uint32_t)len, .type = type, .flags = flags, .credit = (uint16_t)p->rx_free};
	uint64_t tail[2] = {0, seq};
	size_t pad = ch_pad8(len) - len;
	struct ng_rdma_iov iov[3] = {
	    {&h, CH_HDR, NULL},
	    {body, len, mr},
	    {(unsigned char *)tail + 8 - pad, pad + CH_TRAIL, NULL},
	};
	uint64_t off = ((seq - 1) % t->R) * t->slot;

	ng_status st;

	if (len) {
		st = ng_rdma_writev(t->r, peer, iov, 3, &p->r_ring, off, NG_RDMA_NOTIFY, ticket_p);
	} else {
		iov[1] = iov[2];
		st = ng_rdma_writev(t->r, peer, iov, 2, &p->r_ring, off, NG_RDMA_NOTIFY, ticket_p);
	}
	if (st == NG_OK)
		p->credit_sent = p->rx_free;
	return st;
}

/* Releases the consumed prefix of @peer's ring and returns credits. */
ng_status ng_ch_release(struct ng_chan *t, int peer)
{
	struct ch_peer *p = &t->peers[peer];
	uint64_t ticket;

	while (p->rx_free < p->rx_scan && p->meta[p->rx_free % t->R].done) {
		p->meta[p->rx_free % t->R].done = false;
		p->rx_free++;
	}
	if (p->rx_free - p->credit_sent < (t->R / 4 ? t->R / 4 : 1))
		return NG_OK;
	p->credit_word = p->rx_free;
	p->credit_sent = p->rx_free;
	return ng_rdma_write(t->r, peer, &p->credit_word, NULL, 8, &p->r_ctl, (uint64_t)t->rank * CH_CTL,
	                     NG_RDMA_NOTIFY, &ticket);
}

/* Tells every peer that was given credits its release count again (a
 * lossy channel's wait heard nothing for CH_HEAL_NS: chan.h), and what a
 * lost write of the rings' setup would leave undone: a ring given to a
 * peer that has not written into it yet, a ring asked for and not told.
 * Quiet writes: no sign of the peer to the watchdog. */
ng_status ng_ch_heal(struct ng_chan *t)
{
	ng_status st = NG_OK;

	for (int i = 0; i < t->size && st == NG_OK; i++) {
		struct ch_peer *p = &t->peers[i];
		uint64_t ticket, one = 1;

		if (p->ring && !p->rx_scan)
			st = ch_ring_tell(t, i, NG_RDMA_QUIET);
		if (st == NG_OK && p->ring_asked && !p->ring_known)
			st = ng_rdma_write(t->r, i, &one, NULL, 8, &p->r_ctl,
			                   (uint64_t)t->rank * CH_CTL + offsetof(struct ch_ctl, want),
			                   NG_RDMA_NOTIFY | NG_RDMA_QUIET, &ticket);
		if (st != NG_OK || !p->rx_free)
			continue;
		p->credit_word = p->rx_free;
		p->credit_sent = p->rx_free;
		st = ng_rdma_write(t->r, i, &p->credit_word, NULL, 8, &p->r_ctl, (uint64_t)t->rank * CH_CTL,
		                   NG_RDMA_NOTIFY | NG_RDMA_QUIET, &ticket);
	}
	return st;
}
