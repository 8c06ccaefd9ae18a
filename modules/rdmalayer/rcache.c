/* SPDX-License-Identifier: BSD-3-Clause */
/* The registration cache (rcache.h). */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "modules/rdmalayer/rcache.h"
#include "modules/rdmalayer/rdma.h"

ng_status ng_rcache_init(struct ng_rcache *c, struct ng_rdma *r, size_t max, size_t max_bytes)
{
	*c = (struct ng_rcache){
	    .r = r, .max = max, .max_bytes = max_bytes, .page = (size_t)sysconf(_SC_PAGESIZE)};
	c->ents = calloc(max, sizeof(*c->ents));
	if (!c->ents) {
		ng_error("%s: out of memory", r->who);
		return NG_ERR_NOMEM;
	}
	return NG_OK;
}

static void rc_drop(struct ng_rcache *c, struct ng_rcache_ent *e)
{
	ng_rdma_dereg(c->r, e->mr);
	c->bytes -= e->len;
	*e = (struct ng_rcache_ent){0};
}

void ng_rcache_fini(struct ng_rcache *c)
{
	for (size_t i = 0; c->ents && i < c->max; i++)
		if (c->ents[i].mr)
			rc_drop(c, &c->ents[i]);
	free(c->ents);
	c->ents = NULL;
}

/* The least recently used entry nobody holds (NULL: none). */
static struct ng_rcache_ent *rc_victim(struct ng_rcache *c)
{
	struct ng_rcache_ent *v = NULL;

	for (size_t i = 0; i < c->max; i++) {
		struct ng_rcache_ent *e = &c->ents[i];

		if (e->mr && !e->refs && (!v || e->used < v->used))
			v = e;
	}
	return v;
}

ng_status ng_rcache_get(struct ng_rcache *c, const void *buf, size_t len, struct ng_rcache_ent **e_p)
{
	const unsigned char *p = buf;
	uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(c->page - 1);
	uintptr_t hi = ((uintptr_t)p + len + c->page - 1) & ~(uintptr_t)(c->page - 1);
	struct ng_rcache_ent *e, *free_e = NULL;
	ng_status st;

	for (size_t i = 0; i < c->max; i++) {
		e = &c->ents[i];
		if (!e->mr) {
			free_e = free_e ? free_e : e;
			continue;
		}
		if (!e->stale && p >= e->base && len <= e->len && (size_t)(p - e->base) <= e->len - len) {
			e->used = ++c->clock;
			e->refs++;
			c->hits++;
			*e_p = e;
			return NG_OK;
		}
	}
	c->misses++;
	/* Room: a free entry and the byte limit, evicting what nobody holds. */
	while (!free_e || c->bytes + (hi - lo) > c->max_bytes) {
		e = rc_victim(c);
		if (!e)
			break;
		rc_drop(c, e);
		c->evictions++;
		free_e = free_e ? free_e : e;
	}
	if (!free_e) {
		ng_error("%s: registration cache: all %zu entries are in use", c->r->who, c->max);
		return NG_ERR_NOMEM;
	}
	st = ng_rdma_reg(c->r, (void *)lo, hi - lo, &free_e->mr);
	if (st != NG_OK) {
		free_e->mr = NULL;
		return st;
	}
	free_e->base = (unsigned char *)lo;
	free_e->len = hi - lo;
	free_e->used = ++c->clock;
	free_e->refs = 1;
	free_e->stale = false;
	c->bytes += free_e->len;
	*e_p = free_e;
	return NG_OK;
}

void ng_rcache_put(struct ng_rcache *c, struct ng_rcache_ent *e)
{
	if (--e->refs == 0 && e->stale)
		rc_drop(c, e);
}

void ng_rcache_invalidate(struct ng_rcache *c, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < c->max; i++) {
		struct ng_rcache_ent *e = &c->ents[i];

		if (!e->mr || e->stale || p >= e->base + e->len || e->base >= p + len)
			continue;
		c->invalidations++;
		if (e->refs)
			e->stale = true;
		else
			rc_drop(c, e);
	}
}
