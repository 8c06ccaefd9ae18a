/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "spipe" module: two-sided messages from ordinary (unregistered)
 * memory at RDMA speed, the superpipeline protocol of Denis (Euro-Par 2011)
 * and the protocols it is measured against, on the rdma module's channel
 * (chan.h) over any RDMA layer backend.
 *
 * Buffers are ordinary memory (alloc() maps anonymous pages; the module
 * does not need NG_CAP_REGMEM).  Messages up to --rdma-eager go through the
 * channel's ring (the layer stages the payload: one copy in, one out).
 * Larger ones go by the channel's rendezvous (the receive posts a CTS, the
 * sender writes, a FIN closes) with the protocol of --spipe-mode plugged
 * into the channel (struct ng_chan_rndv):
 *
 *   reg       the sender registers its buffer when the send is posted, the
 *             receiver its buffer before the CTS; one write into it; both
 *             deregister when done.
 *   rcache    the same with the registrations kept in a cache (rcache.h).
 *   copy      the sender copies the whole message into a registered buffer
 *             of its own, writes it (one notified write) into the
 *             receiver's registered buffer, which copies it out.
 *   pipeline  chunks of C_opt(L) (eq. 3) through --spipe-buffers buffers of
 *             --spipe-bufsize bytes: the copy of chunk i+1 overlaps the write
 *             of chunk i; each chunk one notified write, copied out once
 *             complete.
 *   super     the superpipeline: chunks C_i = C_0 q^i (eq. 5) folded onto the
 *             same buffers, cut into sub-blocks of --spipe-block bytes whose
 *             last 8 bytes are a flag; a chunk is ONE write with a notice per
 *             sub-block (NG_RDMA_BLOCKS), so the receiver copies each block
 *             out while the rest of the chunk is still arriving.  The sender
 *             copies its first chunk as soon as the send is posted, while
 *             the CTS may still be on its way.
 *
 * Chunked transfers (copy, pipeline, super).  Chunks to a peer are numbered
 * 1, 2, ... over the whole run (stamps); chunk k goes into buffer (k-1) mod
 * N of the receiver's staging area, whose descriptor the CTS carries, and
 * each of its flags holds k, so an old flag never passes for a new one.
 * Sender and receiver cut a message of L bytes into the same chunks (the
 * schedule is a function of L and of parameters all ranks share: rank 0's
 * model, broadcast at open).  The receiver acknowledges every chunk it has
 * copied out by writing its count into a word at the sender; the sender
 * writes chunk k only when chunk k - N has been acknowledged (N-buffering:
 * with N = 3 it waits for the acknowledgement of the chunk three back, not
 * the previous one), and copies into one of its own N buffers only when
 * the write that last left it has completed.  The FIN follows the last
 * chunk (its notice orders it after them): the receive completes on it,
 * with whatever was not yet copied out copied then.  copy mode is one chunk
 * of the whole message through one buffer (of the message's size, grown
 * when a larger message comes).
 *
 * The registration cache and freed memory (rcache.h).  A registration names
 * the pages mapped when it was made; memory freed and mapped anew at the
 * same address would be served by a stale one.  This module sees every
 * release of the memory it hands out: free() invalidates every cache entry
 * overlapping the block before it unmaps it, so a later block at the same
 * address misses and is registered anew.  Memory that did not come from
 * alloc() (whose release the module cannot see) is registered for the
 * message and deregistered after it, never cached.  We do not intercept
 * malloc/free/munmap of the application (the paper's warning: such hooks
 * break with other allocators and runtimes).
 *
 * --spipe-fresh: every message's buffers are memory the protocol has never
 * seen: the cache forgets them before and after each message, exactly as
 * when the application had freed them and allocated new ones (rcache then
 * misses every time and costs what reg does).  The copy modes never learn
 * anything about user memory, so fresh and reused are the same to them.
 * What the kernel does for truly new pages (faulting them in) is the
 * application's cost and not part of this.
 *
 * The model (spipe_model.h).  open() measures, on the backend in use:
 * lambda_reg, B_reg and their dereg counterparts (registering and
 * deregistering touched memory of 4 KiB to 4 MiB, rank 0; medians),
 * B_copy(L) (memcpy of 4 KiB to 16 MiB, rank 0; medians), lambda_net and
 * B_net (ping-pong of notified writes between registered buffers of ranks
 * 0 and 1, 8 B to 1 MiB, the first quartile of each size's rounds:
 * lambda_net the half round trip of 8 B, 1/B_net the median of the slopes
 * between the sizes from 64 KiB on) and g (a train of 16 writes of 64 B
 * against one, per extra write).  Rank 0 broadcasts the result; it fixes the schedules (C_0 =
 * B_copy(L) 2 lambda_net and q = B_copy(L) / B_net, at least 1.5, unless
 * --spipe-c0 and --spipe-q say otherwise) and the predictions.  The result file gets the
 * parameters under "spipe" and each row the predicted one-way time of its
 * size ("predicted_us", to read against pingpong's latency_us) and that of
 * every mode.
 *
 * Progress and failures: everything happens in the channel's progress
 * (test, wait, blocking calls); a peer that stops writing flags, acks or
 * ring messages is named after --timeout by the channel's watchdog.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/loggp.h"
#include "analysis/stats.h"
#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdma/rcache.h"
#include "modules/rdma/rdma.h"
#include "modules/spipe/spipe_model.h"
#include "options.h"
#include "results.h"

#define SP_NBUF_MAX   16u
#define SP_CTL        64u /* bytes per peer in the acknowledgement area */
#define SP_RC_ENTRIES 64u
#define SP_RC_BYTES   ((size_t)1 << 30)

/* Registered staging memory of a receiver, named by CTSs.  One reference
 * per receive whose CTS named it, one while it is its peer's current area. */
struct sp_area {
	struct ng_rdma_mr *mr;
	unsigned refs;
};

/* A chunk copied into a local buffer, not yet written. */
struct sp_pend {
	unsigned slot;
	size_t len;
};

struct sp_peer {
	/* Sender side: messages to this peer. */
	struct ng_rdma_mr *tx_mr; /* N local buffers of tx_slot bytes */
	size_t tx_slot;
	uint64_t tx_ticket[SP_NBUF_MAX]; /* the write that last left each buffer */
	uint64_t tx_stamp;               /* chunks written */
	uint64_t tx_local;               /* chunks copied (buffer tx_local mod N next) */
	struct sp_pend pend[SP_NBUF_MAX];
	unsigned pend_head, pend_n;
	bool tx_active;
	struct ng_spipe_plan tx_plan;
	size_t tx_copied;
	const volatile uint64_t *ack; /* chunks it has copied out (it writes) */
	/* Receiver side: messages from this peer. */
	struct sp_area *rx_area; /* current: named by new CTSs */
	uint64_t rx_stamp;       /* chunks copied out */
	bool rx_active;
	struct ng_spipe_plan rx_plan;
	size_t rx_pos, rx_chunk, rx_cpos;
	uint64_t ack_word;        /* source of the acknowledgement write */
	struct ng_rdma_rmr r_ack; /* its acknowledgement area */
};

/* A block of alloc() memory. */
struct sp_mem {
	unsigned char *base;
	size_t len;
};

/* Samples of the start-up measurements, for the result file. */
struct sp_samples {
	double reg_size[4], reg_us[4], dereg_us[4];
	double net_size[5], net_us[5];
	double train1_us, train16_us;
	double seconds, seconds_local; /* the whole measurement, its local part */
};

struct spipe {
	struct ng_chan_mod cm; /* first: base, layer, channel */
	struct ng_spipe_proto proto;
	struct ng_spipe_model model;
	struct sp_samples samples;
	size_t S;       /* eager size */
	size_t piece;   /* payload bytes per sub-block (super), 0: one piece per chunk */
	unsigned shift; /* log2 of the sub-block */
	bool fresh;
	bool c0_given, q_given;
	struct ng_rcache rc;
	uint64_t uncached; /* registrations of memory not from alloc() */
	struct ng_rdma_mr *ack_mr;
	struct sp_peer *peers;
	struct sp_mem *mems;
	size_t nmems, capmems;
};

static inline struct spipe *sp_of(struct ng_comm *c)
{
	return ng_container_of(c, struct spipe, cm.base);
}

static inline size_t sp_pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- alloc() memory ----------------------------------------------------- */

static const struct sp_mem *sp_mem_find(const struct spipe *sp, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < sp->nmems; i++) {
		const struct sp_mem *m = &sp->mems[i];

		if (p >= m->base && len <= m->len && (size_t)(p - m->base) <= m->len - len)
			return m;
	}
	return NULL;
}

static ng_status sp_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	struct spipe *sp = sp_of(c);
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = ((len ? len : 1) + page - 1) / page * page;
	void *m;

	if (sp->nmems == sp->capmems) {
		size_t cap = sp->capmems ? 2 * sp->capmems : 8;
		struct sp_mem *t = realloc(sp->mems, cap * sizeof(*t));

		if (!t) {
			ng_error("spipe: out of memory");
			return NG_ERR_NOMEM;
		}
		sp->mems = t;
		sp->capmems = cap;
	}
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		ng_error("spipe: cannot map %zu bytes: %s", n, strerror(errno));
		return NG_ERR_NOMEM;
	}
	sp->mems[sp->nmems++] = (struct sp_mem){.base = m, .len = n};
	*buf_p = m;
	return NG_OK;
}

static void sp_free(struct ng_comm *c, void *buf)
{
	struct spipe *sp = sp_of(c);

	for (size_t i = 0; i < sp->nmems; i++) {
		if (sp->mems[i].base != buf)
			continue;
		/* The memory goes: no registration may outlive it. */
		ng_rcache_invalidate(&sp->rc, buf, sp->mems[i].len);
		munmap(buf, sp->mems[i].len);
		sp->mems[i] = sp->mems[--sp->nmems];
		return;
	}
	ng_error("spipe: free of memory that alloc did not give (%p)", buf);
}

/* ---- registrations (reg, rcache) ----------------------------------------- */

/* The registration of a message's buffer: a cache entry (rcache) or one of
 * its own (reg).  Memory the module cannot watch, and every buffer with
 * --spipe-fresh, is not kept past the message. */
static ng_status sp_reg_get(struct spipe *sp, const void *buf, size_t len, void **h_p,
                            const struct ng_rdma_mr **mr_p, uint64_t *off_p)
{
	struct ng_rcache_ent *e;
	struct ng_rdma_mr *mr;
	ng_status st;

	if (sp->proto.mode == NG_SPIPE_REG) {
		st = ng_rdma_reg(sp->cm.r, (void *)(uintptr_t)buf, len, &mr);
		if (st != NG_OK)
			return st;
		*h_p = mr;
		*mr_p = mr;
		*off_p = 0;
		return NG_OK;
	}
	bool keep = !sp->fresh && sp_mem_find(sp, buf, len);

	if (!keep)
		ng_rcache_invalidate(&sp->rc, buf, len);
	st = ng_rcache_get(&sp->rc, buf, len, &e);
	if (st != NG_OK)
		return st;
	if (!keep) {
		ng_rcache_invalidate(&sp->rc, buf, len); /* dropped at its put */
		sp->uncached += !sp->fresh;
	}
	*h_p = e;
	*mr_p = e->mr;
	*off_p = (uint64_t)((const unsigned char *)buf - e->base);
	return NG_OK;
}

static void sp_reg_put(struct spipe *sp, void *h)
{
	if (sp->proto.mode == NG_SPIPE_REG)
		ng_rdma_dereg(sp->cm.r, h);
	else
		ng_rcache_put(&sp->rc, h);
}

/* ---- staging areas ------------------------------------------------------- */

static void sp_area_unref(struct spipe *sp, struct sp_area *a)
{
	if (--a->refs)
		return;
	ng_rdma_mem_free(sp->cm.r, a->mr);
	free(a);
}

/* Bytes a buffer must hold for a chunked message of @len bytes (copy: the
 * message, padded, with its flag). */
static size_t sp_slot_need(const struct spipe *sp, size_t len)
{
	return sp->proto.mode == NG_SPIPE_COPY ? sp_pad8(len) + 8 : sp->proto.slot;
}

/* Bytes of the area of a peer's receiver for a message of @len bytes. */
static size_t sp_area_need(const struct spipe *sp, size_t len)
{
	return sp->proto.mode == NG_SPIPE_COPY ? sp_slot_need(sp, len) : sp->proto.nbuf * sp->proto.slot;
}

/* Where chunk @stamp lies in an area (and at its sender's offset). */
static size_t sp_slot_off(const struct spipe *sp, uint64_t stamp)
{
	return sp->proto.mode == NG_SPIPE_COPY ? 0 : (size_t)((stamp - 1) % sp->proto.nbuf) * sp->proto.slot;
}

/* Bytes written for a chunk of @c payload bytes. */
static size_t sp_wire(const struct spipe *sp, size_t c)
{
	return sp->piece ? ng_spipe_wire(c, sp->piece) : sp_pad8(c) + 8;
}

/* ---- the rendezvous protocols (struct ng_chan_rndv) ----------------------- */

static ng_status sp_rx_begin(void *ctx, int peer, void *buf, size_t len, struct ng_rdma_rmr *rm_p,
                             uint64_t *off_p, void **h_p)
{
	struct spipe *sp = ctx;
	struct sp_peer *p = &sp->peers[peer];
	struct sp_area *a = p->rx_area;
	const struct ng_rdma_mr *mr;
	size_t need;
	ng_status st;

	if (sp->proto.mode <= NG_SPIPE_RCACHE) {
		st = sp_reg_get(sp, buf, len, h_p, &mr, off_p);
		if (st == NG_OK)
			*rm_p = mr->remote;
		return st;
	}
	need = sp_area_need(sp, len);
	if (!a || a->mr->len < need) {
		/* A new area (copy mode: the message grew); receives that
		 * named the old one keep it until they end. */
		struct sp_area *n = calloc(1, sizeof(*n));

		if (!n) {
			ng_error("spipe: out of memory");
			return NG_ERR_NOMEM;
		}
		if (sp->proto.mode == NG_SPIPE_COPY && need < ((size_t)1 << 62)) {
			size_t pow = 4096;

			while (pow < need)
				pow *= 2;
			need = pow;
		}
		st = ng_rdma_mem_alloc(sp->cm.r, need, &n->mr);
		if (st != NG_OK) {
			free(n);
			return st;
		}
		n->refs = 1;
		if (a)
			sp_area_unref(sp, a);
		p->rx_area = a = n;
	}
	a->refs++;
	*h_p = a;
	*rm_p = a->mr->remote;
	*off_p = 0;
	return NG_OK;
}

/* Copies chunk @stamp's pieces that have arrived into the receive buffer;
 * true once the whole chunk is out. */
static bool sp_rx_chunk(struct spipe *sp, struct sp_peer *p, unsigned char *buf, const unsigned char *slot,
                        uint64_t stamp)
{
	size_t piece = sp->piece ? sp->piece : p->rx_chunk;

	while (p->rx_cpos < p->rx_chunk) {
		size_t k = p->rx_cpos / piece,
		       n = p->rx_chunk - p->rx_cpos < piece ? p->rx_chunk - p->rx_cpos : piece;
		const unsigned char *src = slot + k * (piece + 8);

		if (ng_rdma_load64((const volatile uint64_t *)(const void *)(src + sp_pad8(n))) != stamp)
			return false;
		memcpy(buf + p->rx_pos, src, n);
		p->rx_pos += n;
		p->rx_cpos += n;
	}
	return true;
}

static ng_status sp_rx_step(void *ctx, int peer, void *buf, size_t len, void *h, bool fin)
{
	struct spipe *sp = ctx;
	struct sp_peer *p = &sp->peers[peer];
	struct ng_rdma *r = sp->cm.r;
	struct sp_area *a = h;
	ng_status st;

	if (sp->proto.mode <= NG_SPIPE_RCACHE)
		return NG_OK;
	if (!p->rx_active) {
		ng_spipe_plan_init(&p->rx_plan, &sp->model, &sp->proto, len);
		p->rx_pos = p->rx_cpos = 0;
		p->rx_chunk = ng_spipe_plan_next(&p->rx_plan);
		p->rx_active = true;
	}
	while (p->rx_pos < len) {
		uint64_t stamp = p->rx_stamp + 1, t;
		const unsigned char *slot = (const unsigned char *)a->mr->base + sp_slot_off(sp, stamp);
		size_t before = p->rx_pos;

		if (!sp_rx_chunk(sp, p, buf, slot, stamp)) {
			if (p->rx_pos != before)
				r->watch.events++;
			if (!fin)
				return NG_OK;
			ng_error("spipe: rank %d ended a message whose chunk %llu has not arrived", peer,
			         (unsigned long long)stamp);
			return NG_ERR_PROTO;
		}
		r->watch.events++;
		/* The buffer is free again: tell the sender. */
		p->rx_stamp = stamp;
		p->ack_word = stamp;
		st = ng_rdma_write(r, peer, &p->ack_word, NULL, 8, &p->r_ack, (uint64_t)r->rank * SP_CTL,
		                   NG_RDMA_NOTIFY, &t);
		if (st != NG_OK)
			return st;
		p->rx_chunk = ng_spipe_plan_next(&p->rx_plan);
		p->rx_cpos = 0;
	}
	return NG_OK;
}

/* Copies the next chunk of the active send into local buffer tx_local mod N. */
static void sp_tx_copy(struct spipe *sp, struct sp_peer *p, const unsigned char *src)
{
	unsigned slot = (unsigned)(p->tx_local % sp->proto.nbuf);
	unsigned char *dst = (unsigned char *)p->tx_mr->base + (size_t)slot * p->tx_slot;
	size_t c = ng_spipe_plan_next(&p->tx_plan);

	src += p->tx_copied;
	if (sp->piece) {
		for (size_t at = 0, k = 0; at < c; at += sp->piece, k++) {
			size_t n = c - at < sp->piece ? c - at : sp->piece;

			memcpy(dst + k * (sp->piece + 8), src + at, n);
		}
	} else {
		memcpy(dst, src, c);
	}
	p->pend[(p->pend_head + p->pend_n++) % SP_NBUF_MAX] = (struct sp_pend){.slot = slot, .len = c};
	p->tx_local++;
	p->tx_copied += c;
}

/* Writes the oldest copied chunk as chunk ++tx_stamp. */
static ng_status sp_tx_write(struct spipe *sp, int peer, struct sp_peer *p, const struct ng_rdma_rmr *rm,
                             uint64_t off)
{
	struct sp_pend *pe = &p->pend[p->pend_head];
	unsigned char *src = (unsigned char *)p->tx_mr->base + (size_t)pe->slot * p->tx_slot;
	uint64_t stamp = ++p->tx_stamp;
	size_t piece = sp->piece ? sp->piece : pe->len;
	unsigned flags = sp->piece ? NG_RDMA_BLOCKS(sp->shift) : NG_RDMA_NOTIFY;

	/* A flag after every piece: the chunk's stamp. */
	for (size_t at = 0, k = 0; at < pe->len; at += piece, k++) {
		size_t n = pe->len - at < piece ? pe->len - at : piece;

		memcpy(src + k * (piece + 8) + sp_pad8(n), &stamp, 8);
	}
	p->pend_head = (p->pend_head + 1) % SP_NBUF_MAX;
	p->pend_n--;
	return ng_rdma_write(sp->cm.r, peer, src, p->tx_mr, sp_wire(sp, pe->len), rm,
	                     off + sp_slot_off(sp, stamp), flags, &p->tx_ticket[pe->slot]);
}

/* Room in the local buffers for the next chunk (copy mode: grown to the
 * message once the last write from them is done). */
static ng_status sp_tx_room(struct spipe *sp, int peer, struct sp_peer *p, size_t len, bool *ok_p)
{
	struct ng_rdma *r = sp->cm.r;
	size_t need = sp_slot_need(sp, len);
	unsigned slot = (unsigned)(p->tx_local % sp->proto.nbuf);

	*ok_p = false;
	if (p->pend_n >= sp->proto.nbuf || !ng_rdma_done(r, peer, p->tx_ticket[slot]))
		return NG_OK;
	if (!p->tx_mr || p->tx_slot < need) {
		/* copy mode: powers of two, so that growing messages rarely grow it */
		size_t pow = sp->proto.mode == NG_SPIPE_COPY ? 4096 : need;
		ng_status st;

		while (pow < need)
			pow *= 2;
		for (unsigned i = 0; i < sp->proto.nbuf; i++)
			if (!ng_rdma_done(r, peer, p->tx_ticket[i]))
				return NG_OK;
		ng_rdma_mem_free(r, p->tx_mr);
		p->tx_mr = NULL;
		st = ng_rdma_mem_alloc(r, pow * sp->proto.nbuf, &p->tx_mr);
		if (st != NG_OK)
			return st;
		p->tx_slot = pow;
	}
	*ok_p = true;
	return NG_OK;
}

static ng_status sp_tx_step(void *ctx, int peer, const void *buf, size_t len, const struct ng_rdma_rmr *rm,
                            uint64_t off, void **h_p, bool *done_p, uint64_t *ticket_p)
{
	struct spipe *sp = ctx;
	struct sp_peer *p = &sp->peers[peer];
	struct ng_rdma *r = sp->cm.r;
	ng_status st;

	*done_p = false;
	if (sp->proto.mode <= NG_SPIPE_RCACHE) {
		const struct ng_rdma_mr *mr;
		uint64_t at, ticket = 0;
		size_t max;

		/* Registered as soon as the send is posted, written once the CTS came. */
		if (!*h_p) {
			st = sp_reg_get(sp, buf, len, h_p, &mr, &at);
			if (st != NG_OK)
				return st;
		}
		if (!rm)
			return NG_OK;
		mr = sp->proto.mode == NG_SPIPE_REG ? *h_p : ((const struct ng_rcache_ent *)*h_p)->mr;
		max = r->max_write ? r->max_write : len;
		for (size_t done = 0; done < len; done += max) {
			size_t n = len - done < max ? len - done : max;

			st = ng_rdma_write(r, peer, (const unsigned char *)buf + done, mr, n, rm, off + done,
			                   0, &ticket);
			if (st != NG_OK)
				return st;
		}
		*ticket_p = ticket;
		*done_p = true;
		return NG_OK;
	}
	if (!p->tx_active) {
		ng_spipe_plan_init(&p->tx_plan, &sp->model, &sp->proto, len);
		p->tx_copied = 0;
		p->tx_active = true;
		*h_p = p; /* released early only when the send fails */
	}
	for (;;) {
		bool room;

		if (p->pend_n && rm && p->tx_stamp - ng_rdma_load64(p->ack) < sp->proto.nbuf) {
			st = sp_tx_write(sp, peer, p, rm, off);
			if (st != NG_OK)
				return st;
			r->watch.events++;
			continue;
		}
		if (p->tx_copied == len)
			break;
		st = sp_tx_room(sp, peer, p, len, &room);
		if (st != NG_OK)
			return st;
		if (!room)
			break;
		sp_tx_copy(sp, p, buf);
	}
	if (p->tx_copied == len && !p->pend_n) {
		/* Everything is out of the user's buffer. */
		p->tx_active = false;
		*h_p = NULL;
		*ticket_p = 0;
		*done_p = true;
	}
	return NG_OK;
}

static void sp_release(void *ctx, int peer, void *h, bool recv)
{
	struct spipe *sp = ctx;
	struct sp_peer *p = &sp->peers[peer];

	if (sp->proto.mode <= NG_SPIPE_RCACHE) {
		sp_reg_put(sp, h);
	} else if (recv) {
		p->rx_active = false;
		sp_area_unref(sp, h);
	} else {
		/* A send that ended before all of it was written (a length
		 * mismatch): what it copied is dropped. */
		p->pend_n = 0;
		p->tx_active = false;
	}
}

static const struct ng_chan_rndv sp_rndv = {
    .rx_begin = sp_rx_begin,
    .rx_step = sp_rx_step,
    .tx_step = sp_tx_step,
    .release = sp_release,
};

/* ---- the model: start-up measurements ----------------------------------- */

static double sp_us_since(uint64_t t0)
{
	return (double)(ng_watch_now_ns() - t0) / 1e3;
}

/* The median of @x[0..n) (sorted in place; analysis/stats.h). */
static double sp_median(double *x, size_t n)
{
	struct ng_stats st;

	ng_stats_compute(x, n, &st);
	return st.median;
}

/* A line through the samples: intercept (>= 0) and slope (>= 0). */
static void sp_line(const double *x, const double *y, size_t n, double *a_p, double *b_p)
{
	struct ng_fit f;

	*a_p = *b_p = 0.0;
	if (ng_fit_line(x, y, NULL, n, 0.0, &f) != 0)
		return;
	*a_p = f.a > 0 ? f.a : 0.0;
	*b_p = f.b > 0 ? f.b : 0.0;
}

/* Rank 0: memcpy and registration, on memory it has touched. */
static ng_status sp_measure_local(struct spipe *sp)
{
	static const size_t copy_sizes[] = {4096, 16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20};
	static const size_t reg_sizes[] = {4096, 65536, 1 << 20, 4 << 20};
	struct ng_spipe_model *m = &sp->model;
	struct sp_samples *sa = &sp->samples;
	size_t max = (size_t)16 << 20;
	unsigned char *a = malloc(2 * max);
	double t[64];
	ng_status st = NG_OK;

	if (!a) {
		ng_error("spipe: out of memory for the start-up measurements");
		return NG_ERR_NOMEM;
	}
	memset(a, 1, 2 * max);
	m->ncopy = sizeof(copy_sizes) / sizeof(copy_sizes[0]);
	for (size_t i = 0; i < m->ncopy; i++) {
		size_t L = copy_sizes[i], reps = (size_t)(4 << 20) / L;

		reps = reps < 3 ? 3 : reps > 32 ? 32 : reps;
		memcpy(a + max, a, L); /* warm */
		for (size_t k = 0; k < reps; k++) {
			uint64_t t0 = ng_watch_now_ns();

			memcpy(a + max, a, L);
			__asm__ volatile("" ::: "memory");
			t[k] = sp_us_since(t0);
		}
		m->copy_size[i] = (double)L;
		m->copy_MBps[i] = (double)L / sp_median(t, reps);
	}
	for (size_t i = 0; i < 4 && st == NG_OK; i++) {
		double td[16];

		for (size_t k = 0; k < 11 && st == NG_OK; k++) {
			struct ng_rdma_mr *mr;
			uint64_t t0 = ng_watch_now_ns();

			st = ng_rdma_reg(sp->cm.r, a + 4096 * k, reg_sizes[i], &mr);
			if (st != NG_OK)
				break;
			t[k] = sp_us_since(t0);
			t0 = ng_watch_now_ns();
			ng_rdma_dereg(sp->cm.r, mr);
			td[k] = sp_us_since(t0);
		}
		if (st != NG_OK)
			break;
		/* the first registration of a range may fault pages in: left out */
		sa->reg_size[i] = (double)reg_sizes[i];
		sa->reg_us[i] = sp_median(t + 1, 10);
		sa->dereg_us[i] = sp_median(td + 1, 10);
	}
	free(a);
	if (st != NG_OK)
		return st;
	sp_line(sa->reg_size, sa->reg_us, 4, &m->lambda_reg_us, &m->reg_us_per_byte);
	sp_line(sa->reg_size, sa->dereg_us, 4, &m->lambda_dereg_us, &m->dereg_us_per_byte);
	return NG_OK;
}

/*
 * The network between ranks 0 and 1: a ping-pong of notified writes.  Rank 0
 * decides how long each size runs (a time budget, at least 3 timed rounds)
 * and tells rank 1 in band: the word of a size's last round carries
 * SP_LAST, and before every size a control word says whether it runs at
 * all (sizes whose one-way time would exceed what the budget allows are
 * left out: an emulated device moves a few MB/s).
 */
struct sp_net {
	struct spipe *sp;
	struct ng_rdma_mr *mr; /* [0, NET_MAX) arrivals, [NET_MAX, 2 NET_MAX) sources, then control */
	struct ng_rdma_rmr peer_rm;
	int peer;
	uint64_t seq, cseq;
};

#define NET_MAX      ((size_t)1 << 20)
#define NET_CTL      (2 * NET_MAX)
#define SP_LAST      ((uint64_t)1 << 62)
#define NET_BUDGET   0.1 /* seconds of timed rounds per size */
#define NET_TOO_MUCH 2e4 /* us one way: larger sizes are not measured */

/* One round trip (rank 0, timed into *@us_p) or echo (rank 1) of @n writes
 * of @len bytes, the last notified; *@last_p: rank 0 says it is the last. */
static ng_status sp_net_round(struct sp_net *nt, size_t len, size_t n, bool *last_p, double *us_p)
{
	struct ng_rdma *r = nt->sp->cm.r;
	unsigned char *in = nt->mr->base, *out = in + NET_MAX;
	const volatile uint64_t *w = (const volatile uint64_t *)(void *)(in + len * n - 8);
	uint64_t seq = ++nt->seq, word = seq, t0 = 0, tk;
	bool first = r->rank == 0;
	ng_status st;

	if (!first) {
		st = ng_rdma_wait_word(r, w, seq, nt->peer);
		if (st != NG_OK)
			return st;
		*last_p = (ng_rdma_load64(w) & SP_LAST) != 0;
	} else {
		word |= *last_p ? SP_LAST : 0;
		t0 = ng_watch_now_ns();
	}
	memcpy(out + len * n - 8, &word, 8);
	for (size_t i = 0; i < n; i++) {
		st = ng_rdma_write(r, nt->peer, out + i * len, nt->mr, len, &nt->peer_rm, i * len,
		                   i + 1 == n ? NG_RDMA_NOTIFY : 0, &tk);
		if (st != NG_OK)
			return st;
	}
	if (first) {
		st = ng_rdma_wait_word(r, w, seq, nt->peer);
		if (st != NG_OK)
			return st;
		*us_p = sp_us_since(t0) / 2.0;
	}
	return ng_rdma_wait_all(r, nt->peer);
}

/* Whether the next size runs: rank 0 says (@go), rank 1 learns it. */
static ng_status sp_net_go(struct sp_net *nt, bool *go_p)
{
	struct ng_rdma *r = nt->sp->cm.r;
	const volatile uint64_t *w =
	    (const volatile uint64_t *)(void *)((unsigned char *)nt->mr->base + NET_CTL);
	uint64_t v = ++nt->cseq * 2, tk;
	ng_status st;

	if (r->rank != 0) {
		st = ng_rdma_wait_word(r, w, v, nt->peer);
		*go_p = ng_rdma_load64(w) & 1;
		return st;
	}
	v |= *go_p;
	st = ng_rdma_write(r, nt->peer, &v, NULL, 8, &nt->peer_rm, NET_CTL, NG_RDMA_NOTIFY, &tk);
	return st == NG_OK ? ng_rdma_wait_all(r, nt->peer) : st;
}

/* One untimed round, then timed ones for NET_BUDGET seconds (3 to 64);
 * rank 0 gets their first quartile. */
static ng_status sp_net_median(struct sp_net *nt, size_t len, size_t n, double *us_p)
{
	double t[64], dummy;
	uint64_t t0 = 0;
	size_t k = 0;
	bool last = false;
	ng_status st = sp_net_round(nt, len, n, &last, &dummy);

	while (st == NG_OK && !(nt->sp->cm.base.rank != 0 && last)) {
		if (nt->sp->cm.base.rank == 0) {
			if (!k)
				t0 = ng_watch_now_ns();
			last = k + 1 == 64 ||
			       (k + 1 >= 3 && (double)(ng_watch_now_ns() - t0) / 1e9 > NET_BUDGET);
		}
		st = sp_net_round(nt, len, n, &last, &t[k < 64 ? k : 63]);
		k++;
		if (nt->sp->cm.base.rank == 0 && last)
			break;
	}
	/* the first quartile: a busy host adds milliseconds to some rounds */
	if (st == NG_OK && nt->sp->cm.base.rank == 0) {
		k = k < 64 ? k : 64;
		(void)sp_median(t, k); /* sorts */
		*us_p = t[(k - 1) / 4];
	}
	return st;
}

static ng_status sp_measure_net(struct spipe *sp, struct ng_boot *b)
{
	static const size_t sizes[] = {8, 65536, 262144, 1 << 20};
	struct ng_spipe_model *m = &sp->model;
	struct sp_samples *sa = &sp->samples;
	struct sp_net nt = {.sp = sp, .peer = b->rank == 0 ? 1 : 0};
	struct ng_rdma_rmr *all = calloc((size_t)b->size, sizeof(*all));
	size_t nsz = 0;
	ng_status st;

	if (!all) {
		ng_error("spipe: out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_rdma_mem_alloc(sp->cm.r, 2 * NET_MAX + 64, &nt.mr);
	if (st == NG_OK)
		st = ng_boot_allgather(b, &nt.mr->remote, sizeof(nt.mr->remote), all);
	if (st == NG_OK && b->rank < 2) {
		nt.peer_rm = all[nt.peer];
		for (size_t i = 0; i < 4 && st == NG_OK; i++) {
			/* the next size would take four times as long */
			bool go = i < 2 ||
			          sa->net_us[i - 1] * (double)sizes[i] / (double)sizes[i - 1] < NET_TOO_MUCH;

			st = sp_net_go(&nt, &go);
			if (st != NG_OK || !go)
				break;
			sa->net_size[i] = (double)sizes[i];
			st = sp_net_median(&nt, sizes[i], 1, &sa->net_us[i]);
			nsz = i + 1;
		}
		if (st == NG_OK)
			st = sp_net_median(&nt, 64, 1, &sa->train1_us);
		if (st == NG_OK)
			st = sp_net_median(&nt, 64, 16, &sa->train16_us);
	}
	if (st == NG_OK)
		st = ng_boot_barrier(b);
	ng_rdma_mem_free(sp->cm.r, nt.mr);
	free(all);
	if (st != NG_OK || b->rank != 0)
		return st;
	m->lambda_net_us = sa->net_us[0];
	/* the median of the slopes between pairs of sizes (Theil-Sen): one size
	 * that a busy host slowed does not tilt it */
	{
		double sl[10];
		size_t ns = 0;

		for (size_t i = 1; i < nsz; i++)
			for (size_t j = i + 1; j < nsz; j++)
				sl[ns++] =
				    (sa->net_us[j] - sa->net_us[i]) / (sa->net_size[j] - sa->net_size[i]);
		m->net_us_per_byte = ns ? sp_median(sl, ns) : 0.0;
	}
	/* A noisy host can flatten the slope: then the largest write alone. */
	if (!(m->net_us_per_byte > 0))
		m->net_us_per_byte = fmax(sa->net_us[nsz - 1] - sa->net_us[0], sa->net_us[nsz - 1] / 2) /
		                     sa->net_size[nsz - 1];
	m->g_us = (sa->train16_us - sa->train1_us) / 15.0;
	if (!(m->g_us > 0))
		m->g_us = 0;
	return NG_OK;
}

/* Collective: the model, measured by ranks 0 (and 1) and known to all. */
static ng_status sp_measure(struct spipe *sp, struct ng_boot *b)
{
	uint64_t t0 = ng_watch_now_ns();
	ng_status st = NG_OK;
	double failed;

	if (b->rank == 0)
		st = sp_measure_local(sp);
	/* rank 0 failed (and said why): all leave */
	failed = st == NG_OK ? 0.0 : 1.0;
	if (ng_boot_max(b, &failed, 1) != NG_OK)
		return NG_ERR_PEER_LOST;
	if (failed != 0.0)
		return st != NG_OK ? st : NG_ERR_IO;
	sp->samples.seconds_local = (double)(ng_watch_now_ns() - t0) / 1e9;
	if (b->size > 1)
		st = sp_measure_net(sp, b);
	if (st != NG_OK)
		return st;
	sp->samples.seconds = (double)(ng_watch_now_ns() - t0) / 1e9;
	st = ng_boot_bcast(b, 0, &sp->model, sizeof(sp->model));
	if (st == NG_OK)
		st = ng_boot_bcast(b, 0, &sp->samples, sizeof(sp->samples));
	return st;
}

/* ---- the result file ------------------------------------------------------ */

static json_t *sp_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A bandwidth in MB/s from a cost per byte (null: no measurable cost). */
static json_t *sp_bw(double us_per_byte)
{
	return us_per_byte > 0 ? json_real(1.0 / us_per_byte) : json_null();
}

static const char *const sp_equations[] = {
    "reg: T_reg(L) + T_dereg(L) + lambda_net + L/B_net",
    "rcache: lambda_net + L/B_net (a hit; with --spipe-fresh as reg)",
    "copy: 2 L/B_copy(L) + lambda_net + L/B_net",
    "pipeline: eq. 1, 2 C/B_copy(L) + n g + lambda_net + L/B_net, C = C_opt(L) (eq. 3) within the buffer",
    "super: eq. 9 + C_0/B_copy(L), eq. 9 = b/B_copy(L) + n g + lambda_net + L/B_net (the CTS of a receive "
    "posted first leaves no round trip to hide the first chunk's copy); without sub-blocks eq. 8, "
    "(C_0 + C_n)/B_copy(L) + n g + lambda_net + L/B_net",
};

static json_t *sp_report(struct ng_comm *c)
{
	struct spipe *sp = sp_of(c);
	const struct ng_spipe_model *m = &sp->model;
	const struct sp_samples *sa = &sp->samples;
	json_t *copy = json_array(), *reg = json_array(), *net = json_array(), *eqs = json_object();

	for (size_t i = 0; i < m->ncopy; i++)
		json_array_append_new(
		    copy, json_pack("{s:f,s:o}", "size", m->copy_size[i], "MBps", sp_num(m->copy_MBps[i])));
	for (size_t i = 0; i < 4; i++)
		json_array_append_new(reg,
		                      json_pack("{s:f,s:o,s:o}", "size", sa->reg_size[i], "reg_us",
		                                sp_num(sa->reg_us[i]), "dereg_us", sp_num(sa->dereg_us[i])));
	for (size_t i = 0; c->size > 1 && i < 4 && sa->net_size[i] > 0; i++)
		json_array_append_new(
		    net, json_pack("{s:f,s:o}", "size", sa->net_size[i], "T_us", sp_num(sa->net_us[i])));
	for (unsigned i = 0; i < NG_SPIPE_NMODES; i++)
		json_object_set_new(eqs, ng_spipe_mode_name((enum ng_spipe_mode)i),
		                    json_string(sp_equations[i]));
	return json_pack(
	    "{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:b,s:o,s:o,"
	    "s:{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:f,s:f,s:s},"
	    "s:o,s:{s:I,s:I,s:I,s:I,s:I}}",
	    "mode", ng_spipe_mode_name(sp->proto.mode), "memory", sp->fresh ? "fresh" : "reused",
	    "memory_note",
	    sp->fresh
	        ? "every message on memory the protocol has never seen: registrations of the buffers are "
	          "dropped before and after each message, as when they are freed and allocated anew "
	          "(first use; the registration cache misses every time)"
	        : "the same buffers again and again (steady state: a registration cache hits)",
	    "eager_bytes", (json_int_t)sp->S, "buffers", (json_int_t)sp->proto.nbuf, "buffer_bytes",
	    (json_int_t)sp->proto.slot, "block_bytes", (json_int_t)sp->proto.block, "sub_blocks",
	    sp->proto.subblocks, "c0_bytes",
	    sp->c0_given ? json_integer((json_int_t)sp->proto.c0)
	                 : json_string("model: B_copy(L) 2 lambda_net"),
	    "q", sp->q_given ? json_real(sp->proto.q) : json_string("model: B_copy(L) / B_net, at least 1.5"),
	    "model", "lambda_reg_us", sp_num(m->lambda_reg_us), "B_reg_MBps", sp_bw(m->reg_us_per_byte),
	    "lambda_dereg_us", sp_num(m->lambda_dereg_us), "B_dereg_MBps", sp_bw(m->dereg_us_per_byte),
	    "B_copy_MBps", copy, "lambda_net_us", c->size > 1 ? sp_num(m->lambda_net_us) : json_null(),
	    "B_net_MBps", c->size > 1 ? sp_bw(m->net_us_per_byte) : json_null(), "g_us",
	    c->size > 1 ? sp_num(m->g_us) : json_null(), "reg_samples", reg, "net_samples", net,
	    "train_64B_us", json_pack("{s:o,s:o}", "1", sp_num(sa->train1_us), "16", sp_num(sa->train16_us)),
	    "equations", eqs, "registration_samples_note",
	    json_string(
	        "touched memory, median of 10 after one untimed; net: half round trip of notified writes "
	        "between ranks 0 and 1"),
	    "seconds", sa->seconds, "seconds_local", sa->seconds_local, "measured_on",
	    "rank 0 (network: ranks 0 and 1)", "backend", json_string(sp->cm.r->desc), "rcache", "hits",
	    (json_int_t)sp->rc.hits, "misses", (json_int_t)sp->rc.misses, "evictions",
	    (json_int_t)sp->rc.evictions, "invalidations", (json_int_t)sp->rc.invalidations, "uncached",
	    (json_int_t)sp->uncached);
}

static void sp_report_row(struct ng_comm *c, size_t size, struct ng_row *row)
{
	struct spipe *sp = sp_of(c);
	struct ng_spipe_pred pr;
	struct ng_spipe_shape sh;
	json_t *by = json_object();

	if (c->size < 2 || !by)
		return;
	ng_spipe_predict(&sp->model, &sp->proto, size, sp->fresh, &pr);
	if (size <= sp->S) {
		ng_row_number(row, "predicted_us", pr.eager);
		json_object_set_new(by, "eager", sp_num(pr.eager));
	} else {
		ng_row_number(row, "predicted_us", pr.mode[sp->proto.mode]);
		for (unsigned i = 0; i < NG_SPIPE_NMODES; i++)
			json_object_set_new(by, ng_spipe_mode_name((enum ng_spipe_mode)i),
			                    sp_num(pr.mode[i]));
		json_object_set_new(by, "super_eq8", sp_num(pr.super_eq8));
		json_object_set_new(by, "super_eq9", sp_num(pr.super_eq9));
		if (sp->proto.mode >= NG_SPIPE_COPY) {
			ng_spipe_plan_shape(&sp->model, &sp->proto, size, &sh);
			json_object_set_new(by, "chunks", json_integer((json_int_t)sh.n));
			json_object_set_new(by, "first_chunk_bytes", json_integer((json_int_t)sh.c0));
			json_object_set_new(by, "largest_chunk_bytes", json_integer((json_int_t)sh.largest));
			if (sp->proto.mode == NG_SPIPE_SUPER)
				json_object_set_new(by, "q", sp_num(sh.q));
		}
	}
	ng_row_json(row, "predicted_us_by_mode", by);
}

/* ---- open and close -------------------------------------------------------- */

static void sp_close(struct ng_comm *c)
{
	struct spipe *sp = sp_of(c);

	for (int i = 0; sp->peers && i < c->size; i++) {
		struct sp_peer *p = &sp->peers[i];

		ng_rdma_mem_free(sp->cm.r, p->tx_mr);
		if (p->rx_area) {
			ng_rdma_mem_free(sp->cm.r, p->rx_area->mr);
			free(p->rx_area);
		}
	}
	free(sp->peers);
	if (sp->cm.r) {
		ng_rcache_fini(&sp->rc);
		ng_rdma_mem_free(sp->cm.r, sp->ack_mr);
	}
	ng_chan_mod_fini(&sp->cm);
	for (size_t i = 0; i < sp->nmems; i++)
		munmap(sp->mems[i].base, sp->mems[i].len);
	free(sp->mems);
	free(sp);
}

/* The protocol's settings; NG_ERR_USAGE (said by rank 0) when one is bad. */
static ng_status sp_conf(struct spipe *sp, const struct ng_module_env *env)
{
	const struct ng_args *a = env->args;
	long long nbuf = ng_args_int(a, "spipe-buffers");
	size_t block = ng_args_size(a, "spipe-block"), slot = ng_args_size(a, "spipe-bufsize");
	bool say = env->boot->rank == 0;

	/* The words of --spipe-mode are those of enum ng_spipe_mode, in order. */
	sp->proto.mode = (enum ng_spipe_mode)ng_args_choice(a, "spipe-mode");
	if (nbuf < 1 || nbuf > SP_NBUF_MAX) {
		if (say)
			ng_error("--spipe-buffers %lld is outside 1-%u", nbuf, SP_NBUF_MAX);
		return NG_ERR_USAGE;
	}
	if (block < 64 || block > ((size_t)1 << 20) || (block & (block - 1))) {
		if (say)
			ng_error("--spipe-block %zu must be a power of two between 64 and 1M", block);
		return NG_ERR_USAGE;
	}
	if (slot < block || slot % block || slot > ((size_t)1 << 30)) {
		if (say)
			ng_error("--spipe-bufsize %zu must be a multiple of --spipe-block (%zu), at most 1G",
			         slot, block);
		return NG_ERR_USAGE;
	}
	sp->c0_given = ng_args_given(a, "spipe-c0");
	sp->q_given = ng_args_given(a, "spipe-q");
	sp->proto.c0 = sp->c0_given ? ng_args_size(a, "spipe-c0") : 0;
	sp->proto.q = sp->q_given ? ng_args_double(a, "spipe-q") : 0.0;
	if (sp->c0_given && sp->proto.c0 < 8) {
		if (say)
			ng_error("--spipe-c0 must be at least 8 bytes");
		return NG_ERR_USAGE;
	}
	if (sp->q_given && !(sp->proto.q >= 1.0 && sp->proto.q <= 64.0)) {
		if (say)
			ng_error("--spipe-q must be between 1 and 64");
		return NG_ERR_USAGE;
	}
	sp->proto.nbuf = sp->proto.mode == NG_SPIPE_COPY ? 1 : (size_t)nbuf;
	sp->proto.slot = slot;
	sp->proto.block = block;
	sp->fresh = ng_args_flag(a, "spipe-fresh");
	while (((size_t)1 << sp->shift) < block)
		sp->shift++;
	return NG_OK;
}

/* What every rank publishes. */
struct sp_addr {
	struct ng_rdma_rmr ack;
	struct ng_spipe_proto proto;
	uint64_t fresh;
};

static ng_status sp_open(const struct ng_module *m, const struct ng_module_env *env, struct ng_comm **comm_p)
{
	struct spipe *sp = calloc(1, sizeof(*sp));
	struct ng_boot *b = env->boot;
	struct sp_addr mine, *all = NULL;
	struct ng_chan_conf cf;
	ng_status st;

	*comm_p = NULL;
	if (!sp) {
		ng_error("spipe: out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_chan_conf_read(env, &cf);
	if (st == NG_OK)
		st = sp_conf(sp, env);
	if (st != NG_OK) {
		free(sp);
		return st;
	}
	st = ng_chan_mod_init(&sp->cm, m, m, env, &cf);
	if (st != NG_OK) {
		free(sp);
		return st;
	}
	sp->S = cf.eager;
	if (sp->cm.r->max_write && sp->proto.slot > sp->cm.r->max_write) {
		if (b->rank == 0)
			ng_error("--spipe-bufsize %zu is above the largest write of the backend (%zu)",
			         sp->proto.slot, sp->cm.r->max_write);
		st = NG_ERR_USAGE;
		goto err;
	}
	/* Sub-blocks where the layer writes a chunk of them as one operation. */
	sp->proto.subblocks = sp->proto.mode == NG_SPIPE_SUPER && (sp->cm.r->caps & NG_RDMA_CAP_BLOCKS);
	sp->piece = sp->proto.subblocks ? ng_spipe_payload(sp->proto.block) : 0;
	st = ng_chan_set_rndv(sp->cm.ch, &sp_rndv, sp);
	if (st != NG_OK)
		goto err;
	st = ng_rcache_init(&sp->rc, sp->cm.r, SP_RC_ENTRIES, SP_RC_BYTES);
	if (st != NG_OK)
		goto err;
	sp->peers = calloc((size_t)b->size, sizeof(*sp->peers));
	all = calloc((size_t)b->size, sizeof(*all));
	if (!sp->peers || !all) {
		ng_error("spipe: out of memory");
		st = NG_ERR_NOMEM;
		goto err;
	}
	st = ng_rdma_mem_alloc(sp->cm.r, (size_t)b->size * SP_CTL, &sp->ack_mr);
	if (st != NG_OK)
		goto err;
	mine = (struct sp_addr){.ack = sp->ack_mr->remote, .proto = sp->proto, .fresh = sp->fresh};
	st = ng_boot_allgather(b, &mine, sizeof(mine), all);
	if (st != NG_OK)
		goto err;
	for (int i = 0; i < b->size; i++) {
		struct sp_peer *p = &sp->peers[i];

		if (memcmp(&all[i].proto, &sp->proto, sizeof(sp->proto)) != 0 || all[i].fresh != sp->fresh) {
			if (b->rank == 0)
				ng_error("spipe: rank %d has other --spipe-* settings than rank 0", i);
			st = NG_ERR_USAGE;
			goto err;
		}
		p->r_ack = all[i].ack;
		p->ack = (const volatile uint64_t *)(const void *)((unsigned char *)sp->ack_mr->base +
		                                                   (size_t)i * SP_CTL);
	}
	st = sp_measure(sp, b);
	if (st != NG_OK)
		goto err;
	free(all);
	snprintf(sp->cm.base.device, sizeof(sp->cm.base.device), "%.100s, spipe %s, eager %zu B, %zu x %zu B",
	         sp->cm.r->desc, ng_spipe_mode_name(sp->proto.mode), sp->S, sp->proto.nbuf, sp->proto.slot);
	*comm_p = &sp->cm.base;
	return NG_OK;

err:
	free(all);
	sp_close(&sp->cm.base);
	return st;
}

/* clang-format off */
static const struct ng_option sp_own_options[] = {
	{ .name = "spipe-mode", .type = NG_OPT_CHOICE, .def = "super", .choices = "reg|rcache|copy|pipeline|super",
	  .help = "spipe: messages above --rdma-eager: reg (register the buffers on the fly), rcache (keep the "
	          "registrations), copy (whole messages through a registered buffer), pipeline (fixed chunks "
	          "C_opt), super (the superpipeline)" },
	{ .name = "spipe-block", .type = NG_OPT_SIZE, .def = "4K",
	  .help = "spipe super: sub-block bytes (a power of two, 64 B-1M), each ending in an 8-byte flag" },
	{ .name = "spipe-buffers", .type = NG_OPT_INT, .def = "3", .metavar = "N",
	  .help = "spipe pipeline/super: registered buffers per peer a message is folded onto (1-16)" },
	{ .name = "spipe-bufsize", .type = NG_OPT_SIZE, .def = "1M",
	  .help = "spipe pipeline/super: bytes per buffer, the largest chunk (a multiple of --spipe-block)" },
	{ .name = "spipe-c0", .type = NG_OPT_SIZE, .metavar = "BYTES",
	  .help = "spipe super: first chunk (default from the model: B_copy x 2 lambda_net)" },
	{ .name = "spipe-q", .type = NG_OPT_DOUBLE, .metavar = "Q",
	  .help = "spipe super: chunk growth factor (default from the model: B_copy / B_net, at least 1.5)" },
	{ .name = "spipe-fresh", .type = NG_OPT_FLAG,
	  .help = "spipe: every message on memory the protocol has never seen (the registration cache forgets "
	          "the buffers before each message, as when they were freed and allocated anew)" },
	{ .name = NULL },
};
/* clang-format on */

/* The layer's options, the channel's, its own. */
static const struct ng_option *const sp_options[] = {ng_rdma_options, ng_chan_options, sp_own_options, NULL};

const struct ng_module ng_module_spipe = {
    .name = "spipe",
    .desc = "messages from ordinary memory over the RDMA layer: the superpipeline (--spipe-mode super) and "
            "register-on-the-fly, registration cache, copy and pipeline protocols, with their model",
    .options = sp_options,
    .reads = ng_rdma_reads,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .hdr_bytes = NG_CHAN_MSG_HDR,
    .open = sp_open,
    .close = sp_close,
    .alloc = sp_alloc,
    .free = sp_free,
    .msg = &ng_chan_msg_ops,
    .report = sp_report,
    .report_row = sp_report_row,
};
