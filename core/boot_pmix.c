/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMIx bootstrap: a job step's tasks started with PMIx (srun --mpi=pmix, or
 * any PMIx launcher) without MPI.  Rank is PMIx_Init's, size the job's
 * PMIX_JOB_SIZE; barrier is a fence; allgather puts this rank's bytes (one
 * byte object under a key never reused: "ng.<exchange>"), fences with data
 * collection, and gets every rank's.
 */
#include <limits.h>
#include <pmix.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "peer.h"
#include "plugin.h"

struct boot_pmix {
	struct ng_boot base; /* first */
	pmix_proc_t me;
	unsigned long seq; /* exchanges so far */
};

static ng_status pmix_fail(const char *call, pmix_status_t rc)
{
	ng_error("pmix bootstrap: %s: %s", call, PMIx_Error_string(rc));
	return NG_ERR_PEER_LOST;
}

static ng_status pmix_barrier(struct ng_boot *b)
{
	pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);

	(void)b;
	return rc == PMIX_SUCCESS ? NG_OK : pmix_fail("PMIx_Fence", rc);
}

static ng_status pmix_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	struct boot_pmix *p = (struct boot_pmix *)b;
	unsigned char *dst = all;
	char key[PMIX_MAX_KEYLEN + 1];
	pmix_value_t v, *got = NULL;
	pmix_info_t collect;
	bool yes = true;
	pmix_proc_t peer;
	pmix_status_t rc;
	size_t n;

	snprintf(key, sizeof(key), "ng.%lu", ++p->seq);
	PMIX_VALUE_CONSTRUCT(&v);
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)(uintptr_t)mine /* PMIx_Put copies it */;
	v.data.bo.size = len;
	rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	if (rc == PMIX_SUCCESS)
		rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS)
		return pmix_fail("PMIx_Put", rc);
	PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
	rc = PMIx_Fence(NULL, 0, &collect, 1);
	PMIX_INFO_DESTRUCT(&collect);
	if (rc != PMIX_SUCCESS)
		return pmix_fail("PMIx_Fence", rc);
	PMIX_PROC_CONSTRUCT(&peer);
	PMIX_LOAD_NSPACE(peer.nspace, p->me.nspace);
	for (int r = 0; r < b->size; r++) {
		if (r == b->rank) {
			memcpy(dst + (size_t)r * len, mine, len);
			continue;
		}
		peer.rank = (pmix_rank_t)r;
		rc = PMIx_Get(&peer, key, NULL, 0, &got);
		if (rc != PMIX_SUCCESS)
			return pmix_fail("PMIx_Get", rc);
		/* Exactly @len bytes: what is copied below fits @all. */
		if (got->type != PMIX_BYTE_OBJECT) {
			PMIX_VALUE_RELEASE(got);
			return ng_peer_bad("PMIx value", r, "not a byte object");
		}
		if (ng_peer_len("PMIx value size", r, got->data.bo.size, len, len, &n)) {
			PMIX_VALUE_RELEASE(got);
			return NG_ERR_PROTO;
		}
		if (len)
			memcpy(dst + (size_t)r * len, got->data.bo.bytes, len);
		PMIX_VALUE_RELEASE(got);
	}
	return NG_OK;
}

static void pmix_fini(struct ng_boot *b)
{
	PMIx_Finalize(NULL, 0);
	free(b);
}

/* The launcher leaves the other tasks waiting in a fence: PMIx_Abort ends the job. */
static void pmix_abort(struct ng_boot *b, int code)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "ngauge rank %d failed (exit %d)", b->rank, code);
	PMIx_Abort(code, msg, NULL, 0);
	exit(code);
}

static const struct ng_boot_ops pmix_ops = {
    .name = "pmix",
    .barrier = pmix_barrier,
    .allgather = pmix_allgather,
    .fini = pmix_fini,
    .abort = pmix_abort,
};

ng_status ng_boot_pmix(struct ng_boot **b_p)
{
	struct boot_pmix *p = calloc(1, sizeof(*p));
	pmix_value_t *size = NULL;
	pmix_proc_t job;
	pmix_status_t rc;

	if (!p) {
		ng_error("pmix bootstrap: out of memory");
		return NG_ERR_NOMEM;
	}
	rc = PMIx_Init(&p->me, NULL, 0);
	if (rc != PMIX_SUCCESS) {
		ng_error("pmix bootstrap: PMIx_Init: %s", PMIx_Error_string(rc));
		free(p);
		return NG_ERR_SYS;
	}
	PMIX_PROC_CONSTRUCT(&job);
	PMIX_LOAD_NSPACE(job.nspace, p->me.nspace);
	job.rank = PMIX_RANK_WILDCARD;
	rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &size);
	if (rc != PMIX_SUCCESS || size->type != PMIX_UINT32) {
		ng_error("pmix bootstrap: the job's size: %s",
		         rc != PMIX_SUCCESS ? PMIx_Error_string(rc) : "not a number");
		if (rc == PMIX_SUCCESS)
			PMIX_VALUE_RELEASE(size);
		PMIx_Finalize(NULL, 0);
		free(p);
		return NG_ERR_SYS;
	}
	/* From the launcher: a rank of this many, each an int. */
	if (size->data.uint32 < 1 || size->data.uint32 > INT_MAX || p->me.rank >= size->data.uint32) {
		ng_error("pmix bootstrap: rank %u of a job of %u", (unsigned)p->me.rank,
		         (unsigned)size->data.uint32);
		PMIX_VALUE_RELEASE(size);
		PMIx_Finalize(NULL, 0);
		free(p);
		return NG_ERR_SYS;
	}
	p->base.size = (int)size->data.uint32;
	PMIX_VALUE_RELEASE(size);
	p->base.rank = (int)p->me.rank;
	p->base.ops = &pmix_ops;
	ng_boot_identity(&p->base);
	*b_p = &p->base;
	return NG_OK;
}

/* ngauge-pmix.so's entry (core/plugin.h): the executable links no libpmix. */
static const struct ng_pmi_launch ng_pmix_launch = {.boot = ng_boot_pmix};

static const struct ng_plugin_entry ng_plugin_pmix_entries[] = {
    {"launch:pmix", &ng_pmix_launch},
    {NULL, NULL},
};

extern NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_pmix;
NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_pmix = {
    .abi = NG_PLUGIN_ABI,
    .name = "pmix",
    .ops_size = sizeof(struct ng_module_ops),
    .entries = ng_plugin_pmix_entries,
};
