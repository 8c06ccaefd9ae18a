/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "rdma" module: two-sided messages over the RDMA layer (rdma.h), the
 * one-sided channel of the Netgauge paper (Fig. 4), on any backend.
 *
 * Ring.  Every rank keeps, for every peer, a ring of R = --rdma-ring slots
 * that only that peer writes into, and one 64-bit credit word per peer that
 * the peer writes.  A ring message is ONE write with a notice (rdma.h,
 * NG_RDMA_NOTIFY) of
 *     [seq 8 | len 4 | type 1 | flags 1 | credit 2 | payload, padded to 8 | seq 8]
 * into slot (seq - 1) % R, where seq is the sender's ring message number
 * (1, 2, ...; slots are never cleared, the number tells old from new).  The
 * receiver polls the header's seq of its next slot, then the trailing seq
 * after the payload, whose notice makes the whole message visible.  One
 * write per message, no completion to wait for when the backend inlines or
 * copies it: the latency of the write channel is one RDMA write.  Types:
 *   EAGER  a whole message of at most S = --rdma-eager bytes;
 *   CTS    "clear to send": the receive buffer (descriptor, offset, length)
 *          for data message idx, sent when a receive larger than S is posted;
 *   FIN    the sender has written data message idx into that buffer (its
 *          notice orders it after the payload's writes).
 * Where a CTS points and how the payload gets there is the rendezvous
 * protocol's (chan.h, struct ng_chan_rndv): by default the receive block
 * itself, written from the send block; spipe's protocols register on the
 * fly, cache registrations, or copy through buffers of their own.
 * Data messages (EAGER or rendezvous) are numbered in posting order on both
 * sides; the n-th receive from a peer gets the n-th message from it.
 *
 * Rings at first use.  Only the control words (struct ch_ctl, 64 bytes
 * per peer: the credit word, the peer's ring for my messages, its ask)
 * are there for every peer from the open on.  The ring for a peer's
 * messages is allocated and registered by the receiver when first used:
 * at its first receive from that peer, or when the peer, holding a message
 * and no ring, has asked (it writes ctl.want, which every progress round
 * looks at for the peers without a ring); the receiver then writes the
 * ring's descriptor into the peer's ctl (ring, then ring_ready as the
 * notice), and the peer's ring messages wait until it sees it.  So the
 * first message to a new peer needs that peer's progress on the channel,
 * and its first receive or progress allocates (the one allocation of the
 * data path, once per pair: a warm-up's).  Over UC a lost ask or
 * descriptor is written again by the heal below.
 *
 * Flow control as in ibrc: a sender has at most R ring messages unreleased
 * at the receiver; EAGER messages may use only R - 2K of them (K = max(1,
 * R/8) CTSs outstanding per direction), so CTS and FIN always find room.
 * The receiver releases slots in ring order once consumed.  Every ring
 * message carries the low 16 bits of its sender's release count (credit;
 * the receiver widens it against the highest count seen, R <= 4096), so
 * traffic in both directions returns credits with no write of its own; when
 * R/4 more slots are released than the peer has been told, the receiver
 * writes its release count into the sender's credit word (traffic in one
 * direction).  A receiver keeps unexpected EAGER messages (no receive posted yet)
 * in the ring: at most R - 2K per peer, further sends wait.
 *
 * Over an unreliable connection (UC, ng_chan_set_lossy: ibuc --ib-mode
 * write) a lost packet drops the rest of its write and nobody is told.  A
 * lost ring message or CTS stalls the ring (the run fails after --timeout,
 * as ibuc says); a lost piece of a rendezvous payload would not, since its
 * FIN is a write of its own: so the receiver marks the last word of every
 * payload piece before its CTS and the FIN carries the XOR of the words
 * the sender wrote there; a receive whose buffer does not match fails with
 * NG_ERR_IO, naming the peer (chan.h: the rule, its cost and its limit).
 * Rendezvous stays zero-copy over UC; large messages are not carried
 * another way.  A lost credit write is healed: a wait that hears nothing
 * for 50 ms writes every peer's absolute release count again, every 50 ms
 * of the silence (writes the watchdog does not count as a sign of life).
 *
 * Lengths: a receive of another length than the message gives
 * NG_ERR_TRUNCATED; a rendezvous send whose receive is no larger than S (so
 * no CTS ever comes) is an error that shows as the peer's silence after
 * --timeout where the transport cannot tell a live peer (rdma.h, Errors);
 * where it can (verbs RC), the wait lasts until the run is cancelled.
 *
 * Progress happens in test, wait and the blocking calls: the backend's
 * progress, then every peer with posted work: its ring, then its send queue.
 * Waiting spins (or yields, --rdma-poll yield) under the layer's watchdog:
 * silence for --timeout while waiting names the peer as lost, unless the
 * transport confirms it alive (rdma.h, Errors).
 */
#include "config.h"

#include <assert.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdmalayer/rdma.h"
#include "options.h"
#include "peer.h"
#include "queue.h"

#define CH_HDR     16u
#define CH_TRAIL   8u
#define CH_CTL     64u /* bytes per peer in the control area (struct ch_ctl) */
#define CH_NONE    SIZE_MAX
#define CH_HEAL_NS 50000000u /* lossy: credits told again after 50 ms of silence */

enum ch_type { CH_EAGER = 0, CH_CTS = 1, CH_FIN = 2 };
enum { CH_F_MISMATCH = 1 };

struct ch_hdr {
	uint64_t seq;
	uint32_t len; /* payload bytes */
	uint8_t type;
	uint8_t flags;
	uint16_t credit; /* the sender's release count, low bits */
};

struct ch_cts {
	uint64_t idx;
	struct ng_rdma_rmr rm;
	uint64_t off;
	uint64_t len;
};

/* What a peer writes into my control area (one per peer, CH_CTL bytes). */
struct ch_ctl {
	uint64_t credit;         /* its release count of my messages */
	struct ng_rdma_rmr ring; /* its ring for my messages ... */
	uint64_t ring_ready;     /* ... valid once this is ch_ring_seal(ring), the notice
	                          * of that write (a provider whose notice overtakes
	                          * its data shows a seal that does not fit yet) */
	uint64_t want;           /* 1: it has messages for me and no ring in my memory */
};

static_assert(sizeof(struct ch_ctl) <= CH_CTL, "control words fit");

struct ch_fin {
	uint64_t idx;
	uint64_t tails; /* lossy: the payload's ng_chan_tails */
};

static_assert(sizeof(struct ch_hdr) == CH_HDR, "ring header size");
static_assert(CH_HDR + CH_TRAIL == NG_CHAN_MSG_HDR, "ring message overhead");

enum ch_state { CH_QUEUED, CH_POSTED, CH_DONE };

/* Per-request state in struct ng_req.priv. */
struct ch_req {
	struct ng_qlink link; /* in its peer's send or receive queue */
	unsigned char *buf;
	size_t len;
	const struct ng_rdma_mr *mr; /* holding buf */
	uint64_t idx;                /* data message number */
	uint64_t ticket;             /* posted send: its last write */
	int peer;
	ng_status status;
	void *h; /* the rendezvous protocol's handle */
	uint8_t state;
	bool is_recv;
	bool rndv;
	bool cts;    /* receive: CTS sent */
	bool upto;   /* receive: any length up to len (len becomes the message's) */
	bool posted; /* rendezvous send: every write of the payload posted */
};

static_assert(sizeof(struct ch_req) <= sizeof(((struct ng_req *)0)->priv), "ch_req fits in ng_req");
static_assert(alignof(struct ch_req) <= alignof(struct ng_req), "ch_req alignment");

struct ch_meta {
	uint32_t len;
	uint8_t type;
	bool done;
};

struct ch_peer {
	/* Receive side: its messages in my ring (NULL until first used). */
	unsigned char *ring;
	struct ng_rdma_mr *ring_mr;
	struct ch_meta *meta; /* [R] */
	uint64_t rx_scan;     /* ring messages arrived and looked at */
	uint64_t rx_free;     /* released (a prefix) */
	uint64_t credit_sent; /* rx_free last told the peer (written or carried) */
	uint64_t rx_posted;   /* receives posted */
	uint64_t *unexp;      /* [R] ring numbers of EAGER messages not received yet */
	size_t unexp_head, unexp_n;
	struct ng_queue rq;      /* receives not complete, in order */
	struct ch_req *cts_next; /* first rendezvous receive in rq without a CTS */
	uint64_t cts_out;        /* CTSs sent whose FIN has not come */
	/* Send side. */
	struct ng_queue sq;          /* sends not (fully) posted */
	uint64_t tx_seq;             /* ring messages sent */
	uint64_t tx_posted;          /* sends posted */
	volatile struct ch_ctl *ctl; /* what it writes into my memory: credits, its ring */
	bool ring_asked;             /* I asked it for a ring (ctl.want written) */
	bool ring_known;             /* r_ring holds its ring for my messages */
	uint64_t credit_seen;        /* the highest count seen, written or carried */
	struct ch_cts *ctss;         /* [K] CTSs received */
	uint64_t cts_head, cts_tail;
	uint64_t credit_word; /* source of the credit write */
	struct {
		struct ng_rdma_rmr ring;
		uint64_t ready;
	} give; /* source of the write that tells it my ring */
	/* Where I write. */
	struct ng_rdma_rmr r_ring, r_ctl;
};

struct ch_block {
	unsigned char *base;
	size_t len;
	struct ng_rdma_mr *mr;
};

struct ng_chan {
	struct ng_rdma *r;
	const char *who;
	const struct ng_chan_rndv *rv; /* rendezvous protocol */
	void *rv_ctx;
	bool anymem; /* buffers need not be blocks (a protocol of a module's own) */
	bool lossy;  /* writes may be lost unseen (UC): rendezvous checked, credits healed */
	int rank, size;
	size_t R, K, S, slot, quota;
	size_t maxw;     /* rendezvous pieces: the smallest largest write of all ranks (0: any) */
	uint64_t key;    /* lossy: the key of the payload marks */
	uint64_t healed; /* lossy: when credits were last told again */
	struct ng_rdma_mr *ctl_mr;
	struct ch_peer *peers;
	struct ch_meta *metas;
	uint64_t *unexps;
	struct ch_cts *ctss;
	struct ch_block *blocks;
	size_t nblocks, capblocks, last;
};

/* What every rank publishes. */
struct ch_addr {
	struct ng_rdma_rmr ctl;
	uint64_t R, S, maxw;
};

static inline struct ch_req *ch_req_of(struct ng_req *r)
{
	return (struct ch_req *)(void *)r->priv;
}

static inline size_t ch_pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Bytes of a ring slot for messages of at most @eager bytes. */
static inline size_t ch_slot_bytes(size_t eager)
{
	return (CH_HDR + ch_pad8(eager) + CH_TRAIL + 63) / 64 * 64;
}

size_t ng_chan_pinned_bytes(size_t ranks, size_t ring, size_t eager)
{
	size_t page = 4096, one = ring * ch_slot_bytes(eager), ctl = ranks * CH_CTL;

	/* A ring per peer (a registration of its own, in pages), the control
	 * words of every peer, a staging ring per peer. */
	return ranks * ((one + page - 1) / page * page) + (ctl + page - 1) / page * page +
	       ranks * ng_rdma_stage_bytes(ng_chan_stage_need(eager));
}

/* splitmix64's finaliser: the marks of a lossy rendezvous. */
static inline uint64_t ch_mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

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

/* The request of queue node @n (NULL: none). */
static inline struct ch_req *ch_req_at(struct ng_qlink *n)
{
	return n ? NG_QUEUE_ENTRY(n, struct ch_req, link) : NULL;
}

static inline struct ch_req *ch_head(const struct ng_queue *q)
{
	return ch_req_at(ng_queue_first(q));
}

static inline struct ch_req *ch_next(const struct ch_req *r)
{
	return ch_req_at(r->link.next);
}

static inline void ch_done(struct ch_req *r, ng_status st)
{
	r->status = st;
	r->state = CH_DONE;
}

/* Completes a request that may hold a rendezvous handle. */
static inline void ch_finish(struct ng_chan *t, struct ch_req *r, ng_status st)
{
	if (r->h && t->rv->release)
		t->rv->release(t->rv_ctx, r->peer, r->h, r->is_recv);
	r->h = NULL;
	ch_done(r, st);
}

/* The registered block holding [buf, buf + len). */
static const struct ch_block *ch_block_find(struct ng_chan *t, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (t->last < t->nblocks) {
		const struct ch_block *b = &t->blocks[t->last];
		if (p >= b->base && len <= b->len && (size_t)(p - b->base) <= b->len - len)
			return b;
	}
	for (size_t i = 0; i < t->nblocks; i++) {
		const struct ch_block *b = &t->blocks[i];
		if (p >= b->base && len <= b->len && (size_t)(p - b->base) <= b->len - len) {
			t->last = i;
			return b;
		}
	}
	return NULL;
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

static const struct ng_chan_rndv ch_direct = {
    .rx_begin = ch_direct_rx_begin,
    .tx_step = ch_direct_tx_step,
};

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
static ng_status ch_ring_get(struct ng_chan *t, int peer)
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
 * ch_heal on a lossy channel until it sends). */
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
static ng_status ch_ring_give(struct ng_chan *t, int peer)
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

/* Room for one more ring message to @p (EAGER: within the quota), in a
 * ring it told me (ch_ring_get). */
static inline bool ch_credit(const struct ng_chan *t, struct ch_peer *p, bool eager)
{
	uint64_t lim = eager ? t->quota : t->R, word;

	if (!p->ring_known)
		return false;
	if (p->tx_seq - p->credit_seen < lim)
		return true;
	/* Messages may have carried a later count than the word holds. */
	word = __atomic_load_n(&p->ctl->credit, __ATOMIC_ACQUIRE);
	(void)ng_rdma_credit_word(&p->credit_seen, word, p->tx_seq);
	return p->tx_seq - p->credit_seen < lim;
}

/* Writes ring message number ++tx_seq of @type with @body (@mr: its
 * registration, NULL when small enough to be staged) to @peer. */
static ng_status ch_ring_write(struct ng_chan *t, int peer, uint8_t type, uint8_t flags, const void *body,
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

/* Sends the CTSs due to @peer. */
static ng_status ch_send_cts(struct ng_chan *t, int peer)
{
	struct ch_peer *p = &t->peers[peer];
	uint64_t ticket;
	ng_status st = ch_ring_get(t, peer);

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
		st = ch_ring_write(t, peer, CH_CTS, 0, &c, NULL, sizeof(c), &ticket);
		if (st != NG_OK)
			return st;
		r->cts = true;
		p->cts_out++;
		p->cts_next = ch_next(r);
	}
	return NG_OK;
}

/* Posts what the head of @peer's send queue can post now. */
static ng_status ch_send_progress(struct ng_chan *t, int peer)
{
	struct ch_peer *p = &t->peers[peer];
	ng_status st = ch_ring_get(t, peer);

	if (st != NG_OK)
		return st;
	struct ch_req *r;

	while ((r = ch_head(&p->sq))) {

		if (!r->rndv) {
			if (!ch_credit(t, p, true))
				return NG_OK;
			st = ch_ring_write(t, peer, CH_EAGER, 0, r->buf, r->mr, r->len, &r->ticket);
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
			st = ch_ring_write(t, peer, CH_FIN, flags, &f, NULL, sizeof(f), &r->ticket);
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

/* Releases the consumed prefix of @peer's ring and returns credits. */
static ng_status ch_release(struct ng_chan *t, int peer)
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

/* A lossy channel: whether every piece of rendezvous receive @r arrived,
 * by the FIN at @fin (chan.h). */
static ng_status ch_lossy_check(struct ng_chan *t, int peer, const struct ch_req *r, const unsigned char *fin)
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

/* Tells every peer that was given credits its release count again (a
 * lossy channel's wait heard nothing for CH_HEAL_NS: chan.h), and what a
 * lost write of the rings' setup would leave undone: a ring given to a
 * peer that has not written into it yet, a ring asked for and not told.
 * Quiet writes: no sign of the peer to the watchdog. */
static ng_status ch_heal(struct ng_chan *t)
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
				st = ch_lossy_check(t, peer, r, s + CH_HDR);
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
		return ch_release(t, peer);
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
			st = ch_ring_give(t, i);
			if (st != NG_OK)
				break;
		}
		if (ng_queue_empty(&p->rq) && ng_queue_empty(&p->sq))
			continue;
		st = ch_recv_progress(t, i, seen_p);
		if (st == NG_OK && p->cts_next)
			st = ch_send_cts(t, i);
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
		ng_status st = ch_ring_give(t, peer);

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
		return ch_release(t, peer);
	}
	ng_queue_push(&p->rq, &r->link);
	if (r->rndv && !p->cts_next)
		p->cts_next = r;
	if (p->cts_next)
		return ch_send_cts(t, peer);
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
		st = ch_heal(t);
	return st;
}

void ng_chan_set_lossy(struct ng_chan *t)
{
	t->lossy = true;
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

ng_status ng_chan_set_rndv(struct ng_chan *t, const struct ng_chan_rndv *rv, void *ctx)
{
	if (t->lossy) {
		if (t->rank == 0)
			ng_error("%s: a rendezvous protocol of a module's own needs a reliable transport "
			         "(the channel checks only its own rendezvous over UC)",
			         t->who);
		return NG_ERR_USAGE;
	}
	if (ng_chan_stage_need(t->S) > t->r->stage_max) {
		if (t->rank == 0)
			ng_error(
			    "%s: a ring message of the eager size %zu (%zu bytes with its header and "
			    "trailer) is above the %zu bytes the %s backend stages from unregistered memory "
			    "(lower --rdma-eager)",
			    t->who, t->S, ng_chan_stage_need(t->S), t->r->stage_max, t->r->be->name);
		return NG_ERR_USAGE;
	}
	t->rv = rv;
	t->rv_ctx = ctx;
	t->anymem = true;
	return NG_OK;
}

ng_status ng_chan_block_add(struct ng_chan *t, struct ng_rdma_mr *mr)
{
	if (t->nblocks == t->capblocks) {
		size_t cap = t->capblocks ? 2 * t->capblocks : 8;
		struct ch_block *b = realloc(t->blocks, cap * sizeof(*b));

		if (!b) {
			ng_error("%s: out of memory", t->who);
			return NG_ERR_NOMEM;
		}
		t->blocks = b;
		t->capblocks = cap;
	}
	t->blocks[t->nblocks++] = (struct ch_block){.base = mr->base, .len = mr->len, .mr = mr};
	return NG_OK;
}

struct ng_rdma_mr *ng_chan_block_remove(struct ng_chan *t, void *base)
{
	for (size_t i = 0; i < t->nblocks; i++)
		if (t->blocks[i].base == base) {
			struct ng_rdma_mr *mr = t->blocks[i].mr;

			t->blocks[i] = t->blocks[--t->nblocks];
			t->last = 0;
			return mr;
		}
	return NULL;
}

void ng_chan_destroy(struct ng_chan *t)
{
	if (!t)
		return;
	for (int i = 0; t->peers && i < t->size; i++)
		ng_rdma_mem_free(t->r, t->peers[i].ring_mr);
	ng_rdma_mem_free(t->r, t->ctl_mr);
	free(t->blocks);
	free(t->peers);
	free(t->metas);
	free(t->unexps);
	free(t->ctss);
	free(t);
}

ng_status ng_chan_new(struct ng_rdma *r, struct ng_boot *b, size_t ring, size_t eager, struct ng_chan **ch_p)
{
	struct ng_chan *t = calloc(1, sizeof(*t));
	struct ch_addr mine, *all = NULL;
	size_t n = (size_t)b->size, maxw;
	ng_status st;

	*ch_p = NULL;
	if (!t) {
		ng_error("%s: out of memory", r->who);
		return NG_ERR_NOMEM;
	}
	t->r = r;
	t->who = r->who;
	t->rv = &ch_direct;
	t->rv_ctx = t;
	t->rank = b->rank;
	t->size = b->size;
	t->R = ring;
	t->S = eager;
	t->K = t->R / 8 ? t->R / 8 : 1;
	t->quota = t->R - 2 * t->K;
	t->slot = ch_slot_bytes(t->S);
	t->peers = calloc(n, sizeof(*t->peers));
	t->metas = calloc(n * t->R, sizeof(*t->metas));
	t->unexps = calloc(n * t->R, sizeof(*t->unexps));
	t->ctss = calloc(n * t->K, sizeof(*t->ctss));
	all = calloc(n, sizeof(*all));
	if (!t->peers || !t->metas || !t->unexps || !t->ctss || !all) {
		ng_error("%s: out of memory", t->who);
		st = NG_ERR_NOMEM;
		goto err;
	}
	/* The rings come at first use (ch_ring_give); the control words now. */
	st = ng_rdma_mem_alloc(r, n * CH_CTL, &t->ctl_mr);
	if (st != NG_OK)
		goto err;
	mine = (struct ch_addr){.ctl = t->ctl_mr->remote, .R = t->R, .S = t->S, .maxw = r->max_write};
	st = ng_boot_allgather(b, &mine, sizeof(mine), all);
	if (st != NG_OK)
		goto err;
	for (size_t i = 0; i < n; i++) {
		struct ch_peer *p = &t->peers[i];

		if (all[i].R != t->R || all[i].S != t->S) {
			if (b->rank == 0)
				ng_error("%s: rank %zu has another ring (%llu slots of %llu bytes) than rank "
				         "0 (%zu of %zu)",
				         t->who, i, (unsigned long long)all[i].R,
				         (unsigned long long)all[i].S, t->R, t->S);
			st = NG_ERR_USAGE;
			goto err;
		}
		/* A peer's largest write cuts rendezvous payloads (ng_chan_piece:
		 * 0, unlimited, or at least 16 bytes, peer.h). */
		if (all[i].maxw &&
		    ng_peer_len("largest RDMA write", (int)i, all[i].maxw, 16, SIZE_MAX, &maxw) != NG_OK) {
			st = NG_ERR_PROTO;
			goto err;
		}
		ng_queue_init(&p->rq);
		ng_queue_init(&p->sq);
		p->meta = t->metas + i * t->R;
		p->unexp = t->unexps + i * t->R;
		p->ctss = t->ctss + i * t->K;
		p->ctl = (volatile struct ch_ctl *)(void *)((unsigned char *)t->ctl_mr->base + i * CH_CTL);
		p->r_ctl = all[i].ctl;
		t->maxw = ng_rdma_max_join(t->maxw, (size_t)all[i].maxw);
	}
	/* The marks' key: another per run and rank (chan.h). */
	t->key = ch_mix(ng_watch_now_ns() ^ (uint64_t)(uintptr_t)t ^ ((uint64_t)b->rank << 48));
	free(all);
	/* Nobody writes before everyone has set up. */
	st = ng_boot_barrier(b);
	if (st != NG_OK) {
		ng_chan_destroy(t);
		return st;
	}
	*ch_p = t;
	return NG_OK;

err:
	free(all);
	ng_chan_destroy(t);
	return st;
}

void ng_chan_blocks_free(struct ng_chan *t)
{
	for (size_t i = 0; i < t->nblocks; i++)
		ng_rdma_mem_free(t->r, t->blocks[i].mr);
	t->nblocks = 0;
}
