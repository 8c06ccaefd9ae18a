/* SPDX-License-Identifier: BSD-3-Clause */
/* The RDMA layer's backend list, opening by name, and the helpers every
 * backend shares (rdma.h). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/rdma/rdma.h"

#if NG_HAVE_VERBS
extern const struct ng_rdma_backend ng_rdma_verbs;
#endif
extern const struct ng_rdma_backend ng_rdma_shm;
#if NG_HAVE_LIBFABRIC
extern const struct ng_rdma_backend ng_rdma_ofi;
#endif

const struct ng_rdma_backend *const ng_rdma_backends[] = {
#if NG_HAVE_VERBS
    &ng_rdma_verbs,
#endif
    &ng_rdma_shm,
#if NG_HAVE_LIBFABRIC
    &ng_rdma_ofi,
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
	    ;
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
				return ng_rdma_backends[i]->open(ng_rdma_backends[i], cf, boot, r_p);
		if (boot->rank == 0)
			ng_error("%s: unknown RDMA backend '%s' (choices: %s)", cf->who, name,
			         ng_rdma_backend_names());
		return NG_ERR_USAGE;
	}
	/* auto: every rank tries the same backends in the same order, and open
	 * is collective, so all ranks end on the same one. */
	quiet.quiet = true;
	for (size_t i = 0; ng_rdma_backends[i]; i++) {
		st = ng_rdma_backends[i]->open(ng_rdma_backends[i], &quiet, boot, r_p);
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

/* One idle round of a wait loop: the watchdog's verdict, reported. */
static ng_status ng_rdma_idle(struct ng_rdma *r, int peer)
{
	ng_status st = ng_watch_idle(&r->watch);

	if (st == NG_ERR_TIMEOUT) {
		ng_error("%s: rank %d lost (nothing from it for %.0f s)", r->who, peer,
		         (double)r->watch.timeout_ns / 1e9);
		return NG_ERR_PEER_LOST;
	}
	return st;
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
