/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "ucx" backend of the RDMA layer (rdma.h): UCX's UCP, one context
 * (UCP_FEATURE_RMA | UCP_FEATURE_AMO64) and one worker per rank, an
 * endpoint to every rank (itself included), so one code path reaches what
 * UCX reaches: shared memory (posix, sysv, cma), tcp, InfiniBand and RoCE
 * (rc, dc, ud), and more.  The transports are UCX's choice, steered by the
 * UCX_* environment (UCX_TLS, UCX_NET_DEVICES: ucp_config_read).
 *
 * Operations: puts, gets and atomics (ucp_put_nbx, ucp_get_nbx,
 * ucp_atomic_op_nbx ADD and CSWAP with a reply buffer), completion by
 * callback, flush by ucp_ep_flush_nbx, notices after the endpoint's flush
 * (ucx_data.c).  Transports without remote memory access of their own (tcp)
 * are served by UCP's emulation over active messages at the target, in its
 * ucp_worker_progress: NG_RDMA_CAP_PROGRESS is never set.
 *
 * Memory: reg() is ucp_mem_map of the caller's memory; mem_alloc() asks UCP
 * to allocate (UCP_MEM_MAP_ALLOCATE: shared memory, sysv or posix, by
 * UCX_ALLOC_PRIO), so that peers on the host reach it, atomics included,
 * with loads and stores; when what UCP gives is not page aligned, page
 * aligned heap memory is mapped instead.  Keys travel through each rank's
 * key directory (ucx_int.h): a descriptor names a slot and its generation.
 * A peer keeps a key it unpacked, so a descriptor used after its
 * registration ended still reaches the old memory through transports that
 * check no key (shared memory, tcp's emulation): no NG_RDMA_CAP_KEYS.
 * A slot reused by a new registration refuses the old descriptor.
 *
 * Connection: endpoints are created at open; UCP finishes connecting when
 * both sides progress, so open() ends with two rounds in which every rank
 * writes a word at every other rank and progresses until it has everybody's.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "module.h"
#include "modules/rdmalayer/rdma.h"
#include "modules/rdmalayer/ucx_int.h"
#include "peer.h"

extern char **environ;

/* ---- memory ------------------------------------------------------------- */

/* A registration's handle for @memh over [@buf, @buf + @len), linked into
 * the instance's list. */
static struct rucx_mr *rucx_mr_new(struct rucx *u, ucp_mem_h memh, void *buf, size_t len)
{
	struct rucx_mr *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->memh = memh;
	m->slot = RUCX_SLOTS;
	m->pub.base = buf;
	m->pub.len = len;
	m->pub.remote = (struct ng_rdma_rmr){.addr = (uint64_t)(uintptr_t)buf, .len = len};
	m->next = u->regs;
	if (u->regs)
		u->regs->prev = m;
	u->regs = m;
	return m;
}

/* Packs @m's key into a free slot of the directory and names the slot in
 * its descriptor. */
static ng_status rucx_publish(struct rucx *u, struct rucx_mr *m)
{
	struct rucx_slot *s;
	void *buf = NULL;
	size_t len = 0;
	uint32_t slot;
	ucs_status_t us;

	if (!u->nfree) {
		ng_error("%s: ucx: more than %u registrations at once", u->base.who, RUCX_SLOTS);
		return NG_ERR_NOMEM;
	}
	us = ucp_rkey_pack(u->ctx, m->memh, &buf, &len);
	if (us != UCS_OK)
		return ng_rucx_fail(u, "ucp_rkey_pack", -1, us);
	if (len > sizeof(s->key)) {
		ng_error("%s: ucx: a packed key of %zu bytes, above the %zu of a directory slot", u->base.who,
		         len, sizeof(s->key));
		ucp_rkey_buffer_release(buf);
		return NG_ERR_UNSUPPORTED;
	}
	slot = u->free_slots[--u->nfree];
	s = (struct rucx_slot *)((unsigned char *)u->dir->pub.base + RUCX_CTL(u->base.size)) + slot;
	__atomic_store_n(&s->head, 0, __ATOMIC_RELEASE);
	s->len = len;
	memcpy(s->key, buf, len);
	ucp_rkey_buffer_release(buf);
	__atomic_store_n(&s->tail, ++u->gen[slot], __ATOMIC_RELEASE);
	__atomic_store_n(&s->head, u->gen[slot], __ATOMIC_RELEASE);
	m->slot = slot;
	m->pub.remote.key = slot | (uint64_t)u->gen[slot] << 32;
	return NG_OK;
}

static void rucx_dereg(struct ng_rdma *r, struct ng_rdma_mr *pub)
{
	struct rucx *u = rucx_of(r);
	struct rucx_mr *m = (struct rucx_mr *)(void *)pub;

	if (m->slot < RUCX_SLOTS) {
		struct rucx_slot *s =
		    (struct rucx_slot *)((unsigned char *)u->dir->pub.base + RUCX_CTL(r->size)) + m->slot;

		__atomic_store_n(&s->head, 0, __ATOMIC_RELEASE);
		u->free_slots[u->nfree++] = m->slot;
	}
	ucp_mem_unmap(u->ctx, m->memh);
	if (m->prev)
		m->prev->next = m->next;
	else
		u->regs = m->next;
	if (m->next)
		m->next->prev = m->prev;
	if (!m->mapped)
		free(m->raw);
	free(m);
}

/* Maps [@buf, @buf + @len) (NULL: UCP allocates @len bytes) into *@m_p,
 * not yet published. */
static ng_status rucx_map(struct rucx *u, void *buf, size_t len, struct rucx_mr **m_p)
{
	ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
	                                         UCP_MEM_MAP_PARAM_FIELD_LENGTH |
	                                         UCP_MEM_MAP_PARAM_FIELD_FLAGS,
	                           .address = buf,
	                           .length = len,
	                           .flags = buf ? 0 : UCP_MEM_MAP_ALLOCATE};
	ucp_mem_attr_t ma = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH};
	ucp_mem_h memh;
	ucs_status_t s;

	s = ucp_mem_map(u->ctx, &mp, &memh);
	if (s != UCS_OK) {
		ng_error("%s: ucx: ucp_mem_map of %zu bytes: %s", u->base.who, len, ucs_status_string(s));
		return NG_ERR_SYS;
	}
	if (!buf) {
		s = ucp_mem_query(memh, &ma);
		if (s != UCS_OK || ((uintptr_t)ma.address & 4095u) || ma.length < len) {
			/* Not what mem_alloc promises: the caller maps heap memory. */
			ucp_mem_unmap(u->ctx, memh);
			return NG_ERR_UNSUPPORTED;
		}
		buf = ma.address;
	}
	*m_p = rucx_mr_new(u, memh, buf, len);
	if (!*m_p) {
		ucp_mem_unmap(u->ctx, memh);
		ng_error("%s: out of memory", u->base.who);
		return NG_ERR_NOMEM;
	}
	(*m_p)->mapped = !mp.address;
	return NG_OK;
}

static ng_status rucx_reg(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p)
{
	struct rucx *u = rucx_of(r);
	struct rucx_mr *m;
	ng_status st = rucx_map(u, buf, len, &m);

	if (st != NG_OK)
		return st;
	st = rucx_publish(u, m);
	if (st != NG_OK) {
		rucx_dereg(r, &m->pub);
		return st;
	}
	*mr_p = &m->pub;
	return NG_OK;
}

/* Registered memory of @len bytes, zeroed, not published (the directory). */
static ng_status rucx_alloc(struct rucx *u, size_t len, struct rucx_mr **m_p)
{
	size_t plen = len ? (len + 4095) / 4096 * 4096 : 4096;
	void *buf;
	ng_status st = rucx_map(u, NULL, plen, m_p);

	if (st != NG_ERR_UNSUPPORTED) {
		if (st == NG_OK)
			memset((*m_p)->pub.base, 0, plen);
		return st;
	}
	buf = aligned_alloc(4096, plen);
	if (!buf) {
		ng_error("%s: out of memory for %zu bytes", u->base.who, len);
		return NG_ERR_NOMEM;
	}
	memset(buf, 0, plen);
	st = rucx_map(u, buf, plen, m_p);
	if (st != NG_OK) {
		free(buf);
		return st;
	}
	(*m_p)->raw = buf;
	return NG_OK;
}

static ng_status rucx_mem_alloc(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p)
{
	struct rucx *u = rucx_of(r);
	struct rucx_mr *m;
	ng_status st = rucx_alloc(u, len, &m);

	if (st != NG_OK)
		return st;
	st = rucx_publish(u, m);
	if (st != NG_OK) {
		rucx_dereg(r, &m->pub);
		return st;
	}
	*mr_p = &m->pub;
	return NG_OK;
}

/* ---- what UCX chose ------------------------------------------------------ */

/* The transports of @ep's lanes as one line ("posix/memory cma/memory") into
 * @buf, from ucp_ep_print_info's text (UCX 1.13 has no query for them):
 * a lane's line holds "lane[N]:  M:TL/DEV.K md[..]", the transport the word
 * after "M:" without its ".K". */
static void rucx_tls(ucp_ep_h ep, char *buf, size_t len)
{
	char *text = NULL, *line, *save = NULL;
	size_t tlen = 0, at = 0;
	FILE *f = open_memstream(&text, &tlen);

	buf[0] = 0;
	if (!f)
		return;
	ucp_ep_print_info(ep, f);
	if (fclose(f) != 0) {
		free(text);
		return;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "lane["), tl[64];
		size_t n;

		if (!p || !(p = strchr(p, ':')))
			continue;
		p += 1 + strspn(p + 1, " ");
		p += strspn(p, "0123456789");
		if (*p++ != ':')
			continue;
		n = strcspn(p, " \t");
		if (!n || n >= sizeof(tl))
			continue;
		memcpy(tl, p, n);
		tl[n] = 0;
		if ((p = strrchr(tl, '.')) && p[1] && strspn(p + 1, "0123456789") == strlen(p + 1))
			*p = 0;
		if (strstr(buf, tl))
			continue;
		at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s", at ? " " : "", tl);
		if (at >= len) {
			buf[len - 1] = 0;
			break;
		}
	}
	free(text);
}

/* The backend's block of the result's setup (rdma.h: setup): UCX's version,
 * the UCX_* environment and the transports of every endpoint. */
static json_t *rucx_setup(struct ng_rdma *r)
{
	struct rucx *u = rucx_of(r);
	json_t *env = json_object(), *peers = json_object();

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[128];

		if (strncmp(*e, "UCX_", 4) != 0 || !eq || (size_t)(eq - *e) >= sizeof(name))
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = 0;
		json_object_set_new(env, name, json_string(eq + 1));
	}
	for (int p = 0; p < r->size; p++) {
		char key[16], tls[256];

		if (!u->eps[p])
			continue;
		rucx_tls(u->eps[p], tls, sizeof(tls));
		snprintf(key, sizeof(key), "%d", p);
		json_object_set_new(peers, key, json_string(tls));
	}
	return json_pack("{s:s,s:o,s:o}", "ucx_version", ucp_get_version_string(), "env", env, "transports",
	                 peers);
}

/* ---- open and close ----------------------------------------------------- */

static void rucx_close(struct ng_rdma *r)
{
	struct rucx *u = rucx_of(r);

	for (int p = 0; u->stage && p < r->size; p++)
		ng_rdma_stage_free(r, &u->stage[p]);
	for (int p = 0; u->keys && p < r->size; p++) {
		for (size_t i = 0; u->keys[p] && i < RUCX_SLOTS; i++)
			if (u->keys[p][i].rkey)
				ucp_rkey_destroy(u->keys[p][i].rkey);
		free(u->keys[p]);
	}
	for (int p = 0; u->dir_rkey && p < r->size; p++)
		if (u->dir_rkey[p])
			ucp_rkey_destroy(u->dir_rkey[p]);
	/* Not collective: what is still in flight is given a second to finish
	 * (a peer that has gone would never answer), then the endpoints are
	 * closed at once. */
	if (u->worker && u->eps) {
		ucp_request_param_t prm = {0};
		ucs_status_ptr_t req = ucp_worker_flush_nbx(u->worker, &prm);
		uint64_t end = ng_watch_now_ns() + 1000000000u;

		if (UCS_PTR_IS_PTR(req)) {
			while (ucp_request_check_status(req) == UCS_INPROGRESS && ng_watch_now_ns() < end)
				ucp_worker_progress(u->worker);
			ucp_request_free(req);
		}
	}
	for (int p = 0; u->eps && p < r->size; p++) {
		ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
		                           .flags = UCP_EP_CLOSE_FLAG_FORCE};
		ucs_status_ptr_t req;

		if (!u->eps[p])
			continue;
		req = ucp_ep_close_nbx(u->eps[p], &prm);
		if (UCS_PTR_IS_PTR(req)) {
			while (ucp_request_check_status(req) == UCS_INPROGRESS)
				ucp_worker_progress(u->worker);
			ucp_request_free(req);
		}
	}
	while (u->regs)
		rucx_dereg(r, &u->regs->pub);
	if (u->worker)
		ucp_worker_destroy(u->worker);
	if (u->ctx)
		ucp_cleanup(u->ctx);
	free(u->eps);
	free(u->dirty);
	free(u->ops);
	free(u->stage);
	free(u->keys);
	free(u->dir_rkey);
	free(u->dir_addr);
	free(u->free_slots);
	free(u->gen);
	ng_rdma_base_fini(r);
	free(u);
}

/* The context, the worker, the arrays and the directory; *@why_p on a
 * failure (reported here when NULL). */
static ng_status rucx_start(struct rucx *u, size_t n, const char **why_p)
{
	ucp_params_t cp = {.field_mask = UCP_PARAM_FIELD_FEATURES,
	                   .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64};
	ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
	                          .thread_mode = UCS_THREAD_MODE_SINGLE};
	ucp_config_t *cfg;
	ucs_status_t s;

	s = ucp_config_read(NULL, NULL, &cfg);
	if (s != UCS_OK) {
		*why_p = "ucp_config_read (the UCX_* environment) failed";
		return NG_ERR_NODEV;
	}
	s = ucp_init(&cp, cfg, &u->ctx);
	ucp_config_release(cfg);
	if (s != UCS_OK) {
		u->ctx = NULL;
		*why_p = "ucp_init failed (no transport with remote memory access and atomics?)";
		return NG_ERR_NODEV;
	}
	s = ucp_worker_create(u->ctx, &wp, &u->worker);
	if (s != UCS_OK) {
		u->worker = NULL;
		*why_p = "ucp_worker_create failed";
		return NG_ERR_NODEV;
	}
	u->eps = calloc(n, sizeof(*u->eps));
	u->dirty = calloc(n, sizeof(*u->dirty));
	u->ops = calloc(n * RUCX_DEPTH, sizeof(*u->ops));
	u->stage = calloc(n, sizeof(*u->stage));
	u->keys = calloc(n, sizeof(*u->keys));
	u->dir_rkey = calloc(n, sizeof(*u->dir_rkey));
	u->dir_addr = calloc(n, sizeof(*u->dir_addr));
	u->free_slots = calloc(RUCX_SLOTS, sizeof(*u->free_slots));
	u->gen = calloc(RUCX_SLOTS, sizeof(*u->gen));
	if (!u->eps || !u->dirty || !u->ops || !u->stage || !u->keys || !u->dir_rkey || !u->dir_addr ||
	    !u->free_slots || !u->gen) {
		*why_p = "out of memory";
		return NG_ERR_NOMEM;
	}
	for (uint32_t i = 0; i < RUCX_SLOTS; i++)
		u->free_slots[i] = RUCX_SLOTS - 1 - i;
	u->nfree = RUCX_SLOTS;
	*why_p = NULL;
	return rucx_alloc(u, RUCX_CTL(n) + (size_t)RUCX_SLOTS * RUCX_SLOT, &u->dir);
}

/* What every rank tells first: its status, and the sizes of its worker's
 * address and its directory's packed key. */
struct rucx_hello {
	int32_t status;
	uint32_t alen, klen;
	uint32_t pad;
	uint64_t dir;
};

/* The worker's address and the directory's packed key into @blob (at most
 * @len bytes: NULL to size them into @h). */
static ng_status rucx_blob(struct rucx *u, struct rucx_hello *h, unsigned char *blob, size_t len)
{
	ucp_address_t *addr = NULL;
	void *key = NULL;
	size_t alen = 0, klen = 0;
	ucs_status_t s;

	s = ucp_worker_get_address(u->worker, &addr, &alen);
	if (s != UCS_OK)
		return ng_rucx_fail(u, "ucp_worker_get_address", -1, s);
	s = ucp_rkey_pack(u->ctx, u->dir->memh, &key, &klen);
	if (s != UCS_OK) {
		ucp_worker_release_address(u->worker, addr);
		return ng_rucx_fail(u, "ucp_rkey_pack", -1, s);
	}
	if (!blob) {
		h->alen = (uint32_t)alen;
		h->klen = (uint32_t)klen;
		h->dir = (uint64_t)(uintptr_t)u->dir->pub.base;
	} else if (alen + klen <= len) {
		memcpy(blob, addr, alen);
		memcpy(blob + alen, key, klen);
	}
	ucp_rkey_buffer_release(key);
	ucp_worker_release_address(u->worker, addr);
	return NG_OK;
}

/* Every rank's endpoint and directory key from what all told (@hs, @blobs of
 * @bl bytes each). */
static ng_status rucx_connect(struct rucx *u, const struct rucx_hello *hs, const unsigned char *blobs,
                              size_t bl)
{
	struct ng_rdma *r = &u->base;
	ng_status st = NG_OK;

	for (int p = 0; p < r->size && st == NG_OK; p++) {
		const unsigned char *b = blobs + (size_t)p * bl;
		ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
		                      .address = (const ucp_address_t *)(const void *)b};
		ucs_status_t s = ucp_ep_create(u->worker, &ep, &u->eps[p]);

		if (s != UCS_OK) {
			u->eps[p] = NULL;
			st = ng_rucx_fail(u, "ucp_ep_create", p, s);
			break;
		}
		s = ucp_ep_rkey_unpack(u->eps[p], b + hs[p].alen, &u->dir_rkey[p]);
		if (s != UCS_OK) {
			u->dir_rkey[p] = NULL;
			st = ng_rucx_fail(u, "ucp_ep_rkey_unpack (a directory)", p, s);
		}
		u->dir_addr[p] = hs[p].dir;
	}
	return st;
}

/* Writes a word at every peer, progressing until every peer's word arrived
 * (value @round): the connection rounds.  The first flushes its words, the
 * second only tells that the first is done everywhere: a flush over tcp's
 * emulation waits for the peer's progress, and a peer past the last round
 * makes none (it is in the bootstrap, or the caller's code). */
static ng_status rucx_round(struct rucx *u, uint64_t round)
{
	struct ng_rdma *r = &u->base;
	volatile uint64_t *mine =
	    (volatile uint64_t *)u->dir->pub.base + (size_t)(round - 1) * (size_t)r->size;
	ng_status st = NG_OK;

	for (int p = 0; p < r->size && st == NG_OK; p++)
		if (p != r->rank)
			st = ng_rucx_put_word(
			    u, p, round,
			    u->dir_addr[p] + ((size_t)(round - 1) * (size_t)r->size + (size_t)r->rank) * 8,
			    u->dir_rkey[p]);
	for (int p = 0; p < r->size && st == NG_OK; p++) {
		if (p == r->rank)
			continue;
		st = round == 1 ? ng_rucx_flush(r, p) : ng_rdma_wait_all(r, p);
		if (st == NG_OK)
			st = ng_rdma_wait_word(r, &mine[p], round, p);
	}
	return st;
}

/* The first status of @n ranks' @sts other than NG_OK (@st: this rank's). */
static ng_status rucx_agree(const int32_t *sts, size_t n, ng_status st)
{
	size_t v;

	for (size_t i = 0; i < n && st == NG_OK; i++)
		if (sts[i] != NG_OK)
			st = ng_peer_len("ucx status", (int)i, (uint64_t)sts[i], 0, NG_STATUS_COUNT - 1,
			                 &v) == NG_OK
			         ? (ng_status)v
			         : NG_ERR_PROTO;
	return st;
}

static ng_status rucx_open(const struct ng_rdma_backend *be, const struct ng_rdma_conf *cf,
                           struct ng_boot *boot, struct ng_rdma **r_p)
{
	struct rucx *u = calloc(1, sizeof(*u));
	size_t n = (size_t)boot->size, bl = 0;
	struct rucx_hello mine = {0}, *hs = NULL;
	unsigned char *blob = NULL, *blobs = NULL;
	int32_t st32, *sts = NULL;
	const char *why = NULL;
	ng_status st;

	*r_p = NULL;
	if (!u) {
		ng_error("%s: out of memory", cf->who);
		return NG_ERR_NOMEM;
	}
	st = ng_rdma_base_init(&u->base, be, cf, boot->rank, boot->size);
	if (st != NG_OK) {
		free(u);
		return st;
	}
	hs = calloc(n, sizeof(*hs));
	sts = calloc(n, sizeof(*sts));
	if (!hs || !sts) {
		st = NG_ERR_NOMEM;
		why = "out of memory";
	}
	if (st == NG_OK)
		st = rucx_start(u, n, &why);
	if (st == NG_OK)
		st = rucx_blob(u, &mine, NULL, 0);
	if (st != NG_OK && why && !cf->quiet)
		ng_error("%s: ucx backend: %s", cf->who, why);
	mine.status = st;
	if (!hs || ng_boot_allgather(boot, &mine, sizeof(mine), hs) != NG_OK)
		goto err_lost;
	for (size_t i = 0; i < n; i++) {
		sts[i] = hs[i].status;
		if (hs[i].status == NG_OK && (hs[i].alen > (1u << 20) || hs[i].klen > (1u << 20)))
			sts[i] = ng_peer_bad("ucx address length", (int)i, "above 1 MiB");
		else if (hs[i].status == NG_OK && hs[i].alen + hs[i].klen > bl)
			bl = hs[i].alen + hs[i].klen;
	}
	st = rucx_agree(sts, n, st);
	if (st != NG_OK)
		goto err_close;
	/* The addresses and the directories' keys, in blobs of the largest size. */
	bl = (bl + 7) / 8 * 8;
	blob = calloc(1, bl);
	blobs = calloc(n, bl);
	if (!blob || !blobs) {
		ng_error("%s: out of memory", cf->who);
		goto err_lost;
	}
	st = rucx_blob(u, &mine, blob, bl);
	if (ng_boot_allgather(boot, blob, bl, blobs) != NG_OK)
		goto err_lost;
	if (st == NG_OK)
		st = rucx_connect(u, hs, blobs, bl);
	st32 = (int32_t)st;
	if (ng_boot_allgather(boot, &st32, sizeof(st32), sts) != NG_OK)
		goto err_lost;
	st = rucx_agree(sts, n, st);
	if (st == NG_OK)
		st = rucx_round(u, 1);
	if (st == NG_OK)
		st = rucx_round(u, 2);
	if (st != NG_OK)
		goto err_close;
	free(hs);
	free(sts);
	free(blob);
	free(blobs);
	u->base.caps = NG_RDMA_CAP_READ | NG_RDMA_CAP_ATOMIC | NG_RDMA_CAP_ANYMEM;
	rucx_tls(u->eps[(boot->rank + 1) % boot->size], u->tls, sizeof(u->tls));
	snprintf(u->base.desc, sizeof(u->base.desc), "ucx UCP %s, %s", ucp_get_version_string(),
	         *u->tls ? u->tls : "transports unknown");
	*r_p = &u->base;
	return NG_OK;

err_lost:
	st = NG_ERR_PEER_LOST;
err_close:
	free(hs);
	free(sts);
	free(blob);
	free(blobs);
	rucx_close(&u->base);
	return st;
}

const struct ng_rdma_backend ng_rdma_ucx = {
    .name = "ucx",
    .desc = "UCX UCP (UCX_TLS): shared memory, tcp, InfiniBand, RoCE",
    .open = rucx_open,
    .close = rucx_close,
    .mem_alloc = rucx_mem_alloc,
    .mem_free = rucx_dereg,
    .reg = rucx_reg,
    .dereg = rucx_dereg,
    .write = ng_rucx_write,
    .read = ng_rucx_read,
    .atomic = ng_rucx_atomic,
    .progress = ng_rucx_progress,
    .flush = ng_rucx_flush,
    .setup = rucx_setup,
};
