/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A registration cache over the RDMA layer (rdma.h): registrations of user
 * memory kept after use, so that sending from the same memory again costs
 * a lookup instead of a registration (the "pin-down cache" of Tezuka et
 * al.).  Internal to modules/ (spipe's rcache mode).
 *
 * Entries cover whole pages: a request for [buf, buf + len) hits an entry
 * whose pages contain it, else the pages of the request are registered as
 * a new entry, evicting the least recently used entry that no transfer
 * holds when the cache is full (entries or bytes).  get() takes a
 * reference, put() drops it.
 *
 * Correctness when memory is freed and reused.  A registration belongs to
 * the pages that were mapped at registration time; after the application
 * frees memory (munmap, or free() giving pages back) and gets new memory at
 * the same address, a cached entry would name the old pages (an HCA would
 * write into them, not into the new memory).  The cache cannot see frees by
 * itself: its owner must call ng_rcache_invalidate() for every range whose
 * memory goes away, before it goes (spipe does it in its free(), which
 * every buffer from its alloc() passes through).  An entry invalidated
 * while a transfer holds it is deregistered when the last reference goes.
 * Memory whose release the owner cannot see must not be cached at all.
 *
 * Hot path: get() of a hit is a scan of at most @max entries, no system
 * call; a miss registers (the backend's cost: what is measured).
 */
#ifndef NG_RDMA_RCACHE_H
#define NG_RDMA_RCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

struct ng_rdma;
struct ng_rdma_mr;

struct ng_rcache_ent {
	unsigned char *base; /* first page */
	size_t len;          /* whole pages */
	struct ng_rdma_mr *mr;
	uint64_t used; /* clock of the last get */
	unsigned refs;
	bool stale; /* invalidated while held: deregistered at the last put */
};

struct ng_rcache {
	struct ng_rdma *r;
	struct ng_rcache_ent *ents; /* [max]: an entry is live when mr != NULL */
	size_t max;
	size_t max_bytes, bytes; /* registered bytes: limit and current */
	size_t page;
	uint64_t clock;
	/* Counters (for the result file). */
	uint64_t hits, misses, evictions, invalidations;
};

/* A cache of at most @max entries and @max_bytes registered bytes over @r.
 * NG_ERR_NOMEM (reported). */
ng_status ng_rcache_init(struct ng_rcache *c, struct ng_rdma *r, size_t max, size_t max_bytes);
/* Deregisters every entry (held or not) and frees the table. */
void ng_rcache_fini(struct ng_rcache *c);

/* The entry whose registration covers [buf, buf + len), len > 0, with a
 * reference taken; registers on a miss.  Errors are the layer's (reported);
 * NG_ERR_NOMEM when every entry is held. */
ng_status ng_rcache_get(struct ng_rcache *c, const void *buf, size_t len, struct ng_rcache_ent **e_p);
/* Drops a reference taken by get(). */
void ng_rcache_put(struct ng_rcache *c, struct ng_rcache_ent *e);
/* The memory [buf, buf + len) goes away or is replaced: every entry that
 * overlaps it is dropped (deregistered now, or at its last put). */
void ng_rcache_invalidate(struct ng_rcache *c, const void *buf, size_t len);

#endif
