/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of the channel (chan.h) share: the ring message format,
 * the control words, the per-peer and per-request state, the small helpers
 * every part uses (static inline), and the few functions one part calls in
 * another.  The parts: chan.c sets a channel up and tears it down (and
 * describes the protocol); chan_ring.c writes ring messages and keeps the
 * rings and the credits; chan_rndv.c is the rendezvous (the channel's own
 * protocol, the CTS, the check of a lossy channel); chan_msg.c the two-sided
 * operations and the progress that reads the rings.  Internal to
 * modules/chan/.
 */
#ifndef NG_CHAN_CHAN_INT_H
#define NG_CHAN_CHAN_INT_H

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdmalayer/rdma.h"
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

/* splitmix64's finaliser: the marks of a lossy rendezvous. */
static inline uint64_t ch_mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
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
static inline const struct ch_block *ch_block_find(struct ng_chan *t, const void *buf, size_t len)
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

/* Room for one more ring message to @p (EAGER: within the quota), in a
 * ring it told me (ng_ch_ring_get). */
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

/* ---- chan_ring.c: ring messages, rings at first use, credits ----------- */

/* My ring at @peer, for my messages: known once it told me; asks once.
 * NG_OK with the peer's ring_known still false: not yet. */
ng_status ng_ch_ring_get(struct ng_chan *t, int peer);
/* Allocates the ring that @peer writes its messages into, at its first
 * use, and tells it. */
ng_status ng_ch_ring_give(struct ng_chan *t, int peer);
/* Writes ring message number ++tx_seq of @type with @body to @peer. */
ng_status ng_ch_ring_write(struct ng_chan *t, int peer, uint8_t type, uint8_t flags, const void *body,
                           const struct ng_rdma_mr *mr, size_t len, uint64_t *ticket_p);
/* Releases the consumed prefix of @peer's ring and returns credits. */
ng_status ng_ch_release(struct ng_chan *t, int peer);
/* A lossy channel's silence: credits and the rings' setup told again. */
ng_status ng_ch_heal(struct ng_chan *t);

/* ---- chan_rndv.c: the rendezvous ---------------------------------------- */

/* The channel's own rendezvous protocol: block to block. */
extern const struct ng_chan_rndv ng_ch_direct;
/* Sends the CTSs due to @peer. */
ng_status ng_ch_send_cts(struct ng_chan *t, int peer);
/* A lossy channel: whether every piece of rendezvous receive @r arrived,
 * by the FIN at @fin. */
ng_status ng_ch_lossy_check(struct ng_chan *t, int peer, const struct ch_req *r, const unsigned char *fin);

#endif
