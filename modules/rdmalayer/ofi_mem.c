/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory of the RDMA layer's ofi backend: registration (with a key of its
 * own unless the provider gives one, bound to the endpoint where the
 * provider asks; libfabric's cache is off: ofi.c, Registrations), and
 * registered memory allocated in whole pages.
 */
#include "config.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "modules/rdmalayer/ofi_int.h"
#include "modules/rdmalayer/rdma.h"

/* ---- memory ----------------------------------------------------------- */

ng_status ng_ofi_reg(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p)
{
	struct ofi *o = ofi_of(r);
	struct ofi_mr *m = calloc(1, sizeof(*m));
	uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	int rc;

	if (!m) {
		ng_error("%s: out of memory", r->who);
		return NG_ERR_NOMEM;
	}
	rc = fi_mr_reg(o->domain, buf, len, access, 0, o->prov_key ? 0 : ++o->next_key, 0, &m->mr, NULL);
	if (rc)
		m->mr = NULL; /* a failed fi_mr_reg has freed what it made (verbs;ofi_rxm) */
	if (!rc && o->ep_bind) {
		rc = fi_mr_bind(m->mr, &o->ep->fid, 0);
		if (!rc)
			rc = fi_mr_enable(m->mr);
	}
	if (rc) {
		ng_error("%s: ofi: registering %zu bytes: %s%s", r->who, len, fi_strerror(-rc),
		         rc == -FI_ENOKEY && *o->cache
		             ? " (libfabric's registration cache gave a registration the provider already "
		               "has a key for: FI_MR_CACHE_MAX_COUNT=0 turns the cache off)"
		             : "");
		if (m->mr)
			fi_close(&m->mr->fid);
		free(m);
		return NG_ERR_SYS;
	}
	m->desc = fi_mr_desc(m->mr);
	m->pub.base = buf;
	m->pub.len = len;
	m->pub.remote = (struct ng_rdma_rmr){
	    .addr = o->virt ? (uint64_t)(uintptr_t)buf : 0, .len = len, .key = fi_mr_key(m->mr)};
	*mr_p = &m->pub;
	return NG_OK;
}

void ng_ofi_dereg(struct ng_rdma *r, struct ng_rdma_mr *pub)
{
	struct ofi_mr *m = (struct ofi_mr *)(void *)pub;

	(void)r;
	fi_close(&m->mr->fid);
	free(m->raw);
	free(m);
}

ng_status ng_ofi_mem_alloc(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p)
{
	size_t plen = (len + 4095) / 4096 * 4096;
	void *buf = aligned_alloc(4096, plen ? plen : 4096);
	ng_status st;

	if (!buf) {
		ng_error("%s: out of memory for %zu bytes", r->who, len);
		return NG_ERR_NOMEM;
	}
	memset(buf, 0, plen ? plen : 4096);
	st = ng_ofi_reg(r, buf, plen ? plen : 4096, mr_p);
	if (st != NG_OK) {
		free(buf);
		return st;
	}
	((struct ofi_mr *)(void *)*mr_p)->raw = buf;
	return NG_OK;
}
