/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "spipe" module (spipe.h): the rendezvous protocols plugged into the
 * channel, alloc() memory and registrations, open and close.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdmalayer/rcache.h"
#include "modules/rdmalayer/rdma.h"
#include "modules/spipe/spipe.h"
#include "modules/spipe/spipe_model.h"
#include "options.h"

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

/* The module's own options (sp_own_options), as ng_config_read gives them. */
struct sp_config {
	int mode;          /* --spipe-mode: the words are those of enum ng_spipe_mode, in order */
	size_t block;      /* --spipe-block */
	long long buffers; /* --spipe-buffers */
	size_t bufsize;    /* --spipe-bufsize */
	size_t c0;         /* --spipe-c0 */
	double q;          /* --spipe-q */
	bool c0_given;     /* --spipe-c0 given (else the model's) */
	bool q_given;      /* --spipe-q given (else the model's) */
	bool fresh;        /* --spipe-fresh */
};

/* clang-format off */
static const struct ng_option sp_own_options[] = {
	{ .name = "spipe-mode", NG_CHOICE_AT(struct sp_config, mode),
	  .def = "super", .choices = "reg|rcache|copy|pipeline|super",
	  .help = "spipe: messages above --rdma-eager: reg (register the buffers on the fly), rcache (keep the "
	          "registrations), copy (whole messages through a registered buffer), pipeline (fixed chunks "
	          "C_opt), super (the superpipeline)" },
	{ .name = "spipe-block", NG_SIZE_AT(struct sp_config, block), .def = "4K", .min = 64, .max = 1 << 20,
	  .applies = "spipe-mode=pipeline|super",
	  .help = "spipe super: sub-block bytes (a power of two, 64 B-1M), each ending in an 8-byte flag; "
	          "pipeline: the smallest chunk" },
	{ .name = "spipe-buffers", NG_INT_AT(struct sp_config, buffers),
	  .def = "3", .metavar = "N", .min = 1, .max = 16,
	  .applies = "spipe-mode=pipeline|super",
	  .help = "spipe pipeline/super: registered buffers per peer a message is folded onto (1-16)" },
	{ .name = "spipe-bufsize", NG_SIZE_AT(struct sp_config, bufsize),
	  .def = "1M", .applies = "spipe-mode=pipeline|super",
	  .help = "spipe pipeline/super: bytes per buffer, the largest chunk (a multiple of --spipe-block)" },
	{ .name = "spipe-c0", NG_SIZE_AT(struct sp_config, c0), NG_GIVEN_AT(struct sp_config, c0_given),
	  .metavar = "BYTES", .applies = "spipe-mode=super",
	  .help = "spipe super: first chunk (default from the model: B_copy x 2 lambda_net)" },
	{ .name = "spipe-q", NG_DOUBLE_AT(struct sp_config, q), NG_GIVEN_AT(struct sp_config, q_given),
	  .metavar = "Q", .applies = "spipe-mode=super",
	  .help = "spipe super: chunk growth factor (default from the model: B_copy / B_net, at least 1.5)" },
	{ .name = "spipe-fresh", NG_FLAG_AT(struct sp_config, fresh),
	  .help = "spipe: every message on memory the protocol has never seen (the registration cache forgets "
	          "the buffers before each message, as when they were freed and allocated anew)" },
	{ .name = NULL },
};
/* clang-format on */

/* The protocol's settings; NG_ERR_USAGE (said by rank 0) when one is bad. */
static ng_status sp_conf(struct spipe *sp, const struct ng_module_env *env)
{
	struct sp_config o;
	long long nbuf;
	size_t block, slot;
	bool say = env->boot->rank == 0;

	ng_config_read(env->args, sp_own_options, &o);
	nbuf = o.buffers;
	block = o.block;
	slot = o.bufsize;
	/* The words of --spipe-mode are those of enum ng_spipe_mode, in order. */
	sp->proto.mode = (enum ng_spipe_mode)o.mode;
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
	sp->c0_given = o.c0_given;
	sp->q_given = o.q_given;
	sp->proto.c0 = sp->c0_given ? o.c0 : 0;
	sp->proto.q = sp->q_given ? o.q : 0.0;
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
	sp->fresh = o.fresh;
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

/* The module's operations (below). */
static const struct ng_module_ops sp_ops;

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
	st = ng_chan_mod_init(&sp->cm, m, &sp_ops, env, &cf);
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
	st = ng_spipe_measure(sp, b);
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

/* The layer's options, the channel's, its own. */
static const struct ng_option *const sp_options[] = {ng_rdma_options, ng_chan_options, sp_own_options, NULL};

static const struct ng_module_ops sp_ops = {
    .open = sp_open,
    .close = sp_close,
    .alloc = sp_alloc,
    .free = sp_free,
    .msg = &ng_chan_msg_ops,
    .report = ng_spipe_report,
    .report_row = ng_spipe_report_row,
};

const struct ng_module ng_module_spipe = {
    .name = "spipe",
    .desc = "messages from ordinary memory over the RDMA layer: the superpipeline (--spipe-mode super) and "
            "register-on-the-fly, registration cache, copy and pipeline protocols, with their model",
    .options = sp_options,
    .reads = ng_rdma_reads,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .hdr_bytes = NG_CHAN_MSG_HDR,
    .ops = &sp_ops,
};
