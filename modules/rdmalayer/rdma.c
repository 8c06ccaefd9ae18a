/* SPDX-License-Identifier: BSD-3-Clause */
/* The RDMA layer's backend list, opening by name, and the helpers every
 * backend shares (rdma.h). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/rdmalayer/rdma.h"
#include "plugin.h"

/* The backends in plugins (core/plugin.h) by name here; their operations in
 * ngauge-verbs.so (verbs.c), ngauge-ofi.so (ofi.c) and ngauge-ucx.so
 * (ucx.c). */
#if NG_HAVE_VERBS
static const struct ng_rdma_backend ng_rdma_verbs = {.name = "verbs", .plugin = "verbs"};
#endif
extern const struct ng_rdma_backend ng_rdma_shm;
#if NG_HAVE_LIBFABRIC
static const struct ng_rdma_backend ng_rdma_ofi = {.name = "ofi", .plugin = "ofi"};
#endif
#if NG_HAVE_UCX
static const struct ng_rdma_backend ng_rdma_ucx = {.name = "ucx", .plugin = "ucx"};
#endif

const struct ng_rdma_backend *const ng_rdma_backends[] = {
#if NG_HAVE_VERBS
    &ng_rdma_verbs,
#endif
    &ng_rdma_shm,
#if NG_HAVE_LIBFABRIC
    &ng_rdma_ofi,
#endif
#if NG_HAVE_UCX
    &ng_rdma_ucx,
#endif
    NULL,
};

const char *ng_rdma_backend_names(void)
{
	return ""
#if NG_HAVE_VERBS
	       "verbs|"
#endif
	       "shm"
#if NG_HAVE_LIBFABRIC
	       "|ofi"
#endif
#if NG_HAVE_UCX
	       "|ucx"
#endif
	    ;
}

/* Opens backend @be, the plugin's when its operations are in one (not found:
 * NG_ERR_USAGE, said by rank 0 unless cf->quiet), its library kept from the
 * stop signals' dispositions. */
static ng_status open_backend(const struct ng_rdma_backend *be, const struct ng_rdma_conf *cf,
                              struct ng_boot *boot, struct ng_rdma **r_p)
{
	char who[64], entry[64];
	struct ng_plugin_guard g;
	const void *impl;
	ng_status st;

	if (!be->plugin)
		return be->open(be, cf, boot, r_p);
	snprintf(who, sizeof(who), "%s: RDMA backend %s", cf->who, be->name);
	snprintf(entry, sizeof(entry), "rdma:%s", be->name);
	if (ng_plugin_entry(be->plugin, entry, who, cf->quiet || boot->rank != 0, &impl) != NG_OK)
		return NG_ERR_USAGE;
	be = impl;
	/* Its library may take the stop signals while it starts (plugin.h). */
	ng_plugin_guard_enter(&g);
	st = be->open(be, cf, boot, r_p);
	ng_plugin_guard_leave(&g);
	return st;
}

ng_status ng_rdma_open(const char *name, const struct ng_rdma_conf *cf, struct ng_boot *boot,
                       struct ng_rdma **r_p)
{
	struct ng_rdma_conf quiet = *cf;
	ng_status st = NG_ERR_NODEV;

	*r_p = NULL;
	if (name && *name && strcmp(name, "auto") != 0) {
		for (size_t i = 0; ng_rdma_backends[i]; i++)
			if (strcmp(ng_rdma_backends[i]->name, name) == 0)
				return open_backend(ng_rdma_backends[i], cf, boot, r_p);
		if (boot->rank == 0)
			ng_error("%s: unknown RDMA backend '%s' (choices: %s)", cf->who, name,
			         ng_rdma_backend_names());
		return NG_ERR_USAGE;
	}
	/* auto: every rank tries the same backends in the same order, and open
	 * is collective, so all ranks end on the same one. */
	quiet.quiet = true;
	for (size_t i = 0; ng_rdma_backends[i]; i++) {
		st = open_backend(ng_rdma_backends[i], &quiet, boot, r_p);
		if (st == NG_OK || st == NG_ERR_CANCELLED || st == NG_ERR_PEER_LOST)
			return st;
	}
	if (boot->rank == 0)
		ng_error(
		    "%s: no RDMA backend could be opened (tried %s; name one with --rdma-backend to see why)",
		    cf->who, ng_rdma_backend_names());
	return st;
}

ng_status ng_rdma_base_init(struct ng_rdma *r, const struct ng_rdma_backend *be,
                            const struct ng_rdma_conf *cf, int rank, int size)
{
	r->be = be;
	r->who = cf->who;
	r->rank = rank;
	r->size = size;
	r->issued = calloc((size_t)size, sizeof(*r->issued));
	r->completed = calloc((size_t)size, sizeof(*r->completed));
	if (!r->issued || !r->completed) {
		free(r->issued);
		free(r->completed);
		r->issued = r->completed = NULL;
		ng_error("%s: out of memory", cf->who);
		return NG_ERR_NOMEM;
	}
	ng_watch_init(&r->watch, cf->cancel, cf->timeout_s, cf->yield);
	r->stage_max = cf->stage ? cf->stage : NG_RDMA_STAGE_DEF;
	r->max_write = cf->max_write;
	return NG_OK;
}

size_t ng_rdma_max_join(size_t a, size_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

void ng_rdma_base_fini(struct ng_rdma *r)
{
	free(r->issued);
	free(r->completed);
	r->issued = r->completed = NULL;
}

ng_status ng_rdma_write_pieces(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov,
                               const struct ng_rdma_rmr *rm, uint64_t off, unsigned shift, uint64_t *t_p)
{
	size_t piece = (size_t)1 << shift;
	ng_status st = NG_OK;

	*t_p = 0;
	for (size_t at = 0; at < iov->len && st == NG_OK; at += piece) {
		struct ng_rdma_iov one = {(const unsigned char *)iov->addr + at,
		                          iov->len - at < piece ? iov->len - at : piece, iov->mr};
		uint64_t t = 0;

		st = r->be->write(r, peer, &one, 1, rm, off + at, NG_RDMA_NOTIFY, &t);
		if (t)
			*t_p = t;
	}
	return st;
}

ng_status ng_rdma_bounds_error(const struct ng_rdma *r, int peer, const struct ng_rdma_rmr *rm, uint64_t off,
                               uint64_t len)
{
	ng_error("%s: access to bytes %" PRIu64 "..%" PRIu64 " of a %" PRIu64
	         "-byte region of rank %d is out of bounds",
	         r->who, off, off + len, rm->len, peer);
	return NG_ERR_USAGE;
}

ng_status ng_rdma_idle(struct ng_rdma *r, int peer)
{
	struct ng_watch *w = &r->watch;
	ng_status st = ng_watch_idle(w), ans = NG_ERR_UNSUPPORTED;
	uint64_t deadline;

	if (st != NG_OK && st != NG_ERR_TIMEOUT)
		return st;
	/* The plain rule between clock reads (spin != 0), where the transport
	 * cannot tell, and before half the timeout of silence. */
	if (st == NG_OK &&
	    (w->spin || !r->be->alive || !w->timeout_ns || w->last_ns - w->since_ns < w->timeout_ns / 2))
		return NG_OK;
	if (r->be->alive) {
		/* Silent for half the timeout.  Gone, or alive and not running (or
		 * still moving a long write)?  Ask the transport (rdma.h, Errors),
		 * and give it until the timeout is up; a silence first seen past
		 * its half (a late clock read) gets a quarter of the timeout. */
		deadline = w->since_ns + w->timeout_ns;
		if (deadline < w->last_ns + w->timeout_ns / 4)
			deadline = w->last_ns + w->timeout_ns / 4;
		ans = r->be->alive(r, peer, deadline);
		if (ans == NG_OK) {
			/* alive: the silence starts again */
			w->events++;
			return NG_OK;
		}
		if (ans != NG_ERR_UNSUPPORTED && ans != NG_ERR_TIMEOUT)
			return ans;
	}
	if (st == NG_OK && ans == NG_ERR_UNSUPPORTED)
		return NG_OK; /* cannot tell: the plain rule */
	ng_error("%s: rank %d lost (nothing from it for %.3g s%s)", r->who, peer,
	         (double)(ng_watch_now_ns() - w->since_ns) / 1e9,
	         ans == NG_ERR_TIMEOUT ? ", and its end of the transport does not answer" : "");
	return NG_ERR_PEER_LOST;
}

ng_status ng_rdma_wait(struct ng_rdma *r, int peer, uint64_t t)
{
	ng_status st;

	while (!ng_rdma_done(r, peer, t)) {
		uint64_t before = r->completed[peer];

		st = ng_rdma_progress(r);
		if (st != NG_OK)
			return st;
		if (r->completed[peer] != before) {
			r->watch.events++;
			continue;
		}
		st = ng_rdma_idle(r, peer);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

ng_status ng_rdma_wait_all(struct ng_rdma *r, int peer)
{
	return ng_rdma_wait(r, peer, r->issued[peer]);
}

ng_status ng_rdma_wait_word(struct ng_rdma *r, const volatile uint64_t *w, uint64_t v, int peer)
{
	ng_status st;

	while (ng_rdma_load64(w) < v) {
		st = ng_rdma_progress(r);
		if (st != NG_OK)
			return st;
		st = ng_rdma_idle(r, peer);
		if (st != NG_OK)
			return st;
	}
	r->watch.events++;
	return NG_OK;
}

/* ---- lengths ---------------------------------------------------------- */

unsigned ng_rdma_iov_slice(const struct ng_rdma_iov *iov, unsigned n, size_t at, size_t len,
                           struct ng_rdma_iov *out)
{
	unsigned k = 0;
	size_t pos = 0;

	for (unsigned i = 0; i < n && len; i++) {
		size_t l = iov[i].len, from, take;

		if (pos + l <= at) {
			pos += l;
			continue;
		}
		from = at > pos ? at - pos : 0;
		take = l - from < len ? l - from : len;
		out[k++] = (struct ng_rdma_iov){(const unsigned char *)iov[i].addr + from, take, iov[i].mr};
		len -= take;
		at += take;
		pos += l;
	}
	return k;
}

size_t ng_rdma_split_len(size_t left, size_t max, unsigned flags)
{
	size_t take = left < max ? left : max;

	if (flags & NG_RDMA_F_BLOCKS) {
		size_t piece = (size_t)1 << NG_RDMA_BLOCK_SHIFT(flags);

		if (take < left)
			take -= take % piece;
		return take;
	}
	/* A notice is the last 8 bytes of the last write: never alone short. */
	if ((flags & NG_RDMA_NOTIFY) && take < left && left - take < 8)
		take = left - 8;
	return take;
}

ng_status ng_rdma_write_split(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                              size_t total, const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags,
                              uint64_t *t_p)
{
	size_t max = r->max_write;
	ng_status st = NG_OK;

	*t_p = 0;
	for (size_t at = 0; at < total && st == NG_OK;) {
		struct ng_rdma_iov part[NG_RDMA_IOV_MAX];
		size_t take = ng_rdma_split_len(total - at, max, flags);
		unsigned k, f = flags;
		uint64_t t = 0;

		if (!take) {
			ng_error(
			    "%s: a write of %zu bytes to rank %d cannot be split into writes of at most %zu "
			    "bytes (its pieces or notice are larger)",
			    r->who, total, peer, max);
			return NG_ERR_USAGE;
		}
		k = ng_rdma_iov_slice(iov, n, at, take, part);
		if (at + take < total)
			f &= ~(unsigned)NG_RDMA_NOTIFY;
		st = r->be->write(r, peer, part, k, rm, off + at, f, &t);
		if (t > *t_p)
			*t_p = t;
		at += take;
	}
	return st;
}

/* ---- staging ---------------------------------------------------------- */

size_t ng_rdma_stage_bytes(size_t stage_max)
{
	size_t one = (stage_max + 7) & ~(size_t)7;

	return (4 * one + 4095) / 4096 * 4096;
}

ng_status ng_rdma_stage_take(struct ng_rdma *r, struct ng_rdma_stage *s, int peer, size_t depth, size_t len,
                             unsigned char **p_p)
{
	ng_status st;
	size_t size;

	len = (len + 7) & ~(size_t)7;
	if (len > ((r->stage_max + 7) & ~(size_t)7)) {
		ng_error("%s: a write of %zu bytes from unregistered memory to rank %d (at most %zu)", r->who,
		         len, peer, r->stage_max);
		return NG_ERR_USAGE;
	}
	if (!s->mr) {
		s->mark = calloc(depth + 1, sizeof(*s->mark));
		if (!s->mark) {
			ng_error("%s: out of memory", r->who);
			return NG_ERR_NOMEM;
		}
		st = r->be->mem_alloc(r, ng_rdma_stage_bytes(r->stage_max), &s->mr);
		if (st != NG_OK) {
			free(s->mark);
			s->mark = NULL;
			s->mr = NULL;
			return st;
		}
		s->tail = 0;
	}
	size = s->mr->len;
	for (;;) {
		uint64_t head = s->mark[r->completed[peer] % (depth + 1)], at = s->tail;

		if (at % size + len > size)
			at += size - at % size;
		if (at + len - head <= size) {
			s->tail = at + len;
			*p_p = (unsigned char *)s->mr->base + at % size;
			return NG_OK;
		}
		st = r->be->progress(r);
		if (st == NG_OK)
			st = ng_rdma_idle(r, peer);
		if (st != NG_OK)
			return st;
	}
}

void ng_rdma_stage_free(struct ng_rdma *r, struct ng_rdma_stage *s)
{
	if (s->mr)
		r->be->mem_free(r, s->mr);
	free(s->mark);
	*s = (struct ng_rdma_stage){0};
}
