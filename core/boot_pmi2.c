/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMI-2 bootstrap: a Slurm job step's tasks (srun --mpi=pmi2) without MPI,
 * through Slurm's libpmi2.  Rank and size are PMI2_Init's; barrier is a KVS
 * fence; allgather puts this rank's bytes in the step's key-value space,
 * fences, and gets every rank's.
 *
 * Values are strings of at most PMI2_MAX_VALLEN bytes: the bytes go
 * hex-encoded in chunks, under keys "ng<exchange>.<rank>.<chunk>" that are
 * never reused (one new exchange number per call, the same on every rank as
 * the calls are collective).  For control data: every chunk is a key in
 * srun's memory until the step ends.
 */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "peer.h"
#include "plugin.h"

/* Bytes per value: two hex digits each, and the terminating NUL. */
#define CHUNK ((PMI2_MAX_VALLEN - 1) / 2)

struct boot_pmi2 {
	struct ng_boot base; /* first */
	unsigned long seq;   /* exchanges so far */
};

static ng_status pmi2_fail(const char *call, int rc)
{
	ng_error("pmi2 bootstrap: %s failed (PMI-2 error %d): a task of the step is gone, or srun "
	         "ended it",
	         call, rc);
	return NG_ERR_PEER_LOST;
}

static ng_status pmi2_barrier(struct ng_boot *b)
{
	int rc = PMI2_KVS_Fence();

	(void)b;
	return rc == PMI2_SUCCESS ? NG_OK : pmi2_fail("PMI2_KVS_Fence", rc);
}

static ng_status pmi2_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	struct boot_pmi2 *p = (struct boot_pmi2 *)b;
	static const char hex[] = "0123456789abcdef";
	const unsigned char *src = mine;
	unsigned char *dst = all;
	size_t chunks = (len + CHUNK - 1) / CHUNK;
	char key[PMI2_MAX_KEYLEN], val[PMI2_MAX_VALLEN];
	unsigned long seq = ++p->seq;
	size_t got;
	int rc, vlen;

	for (size_t c = 0; c < chunks; c++) {
		size_t off = c * CHUNK, n = len - off < CHUNK ? len - off : CHUNK;

		for (size_t i = 0; i < n; i++) {
			val[2 * i] = hex[src[off + i] >> 4];
			val[2 * i + 1] = hex[src[off + i] & 15];
		}
		val[2 * n] = '\0';
		snprintf(key, sizeof(key), "ng%lu.%d.%zu", seq, b->rank, c);
		rc = PMI2_KVS_Put(key, val);
		if (rc != PMI2_SUCCESS)
			return pmi2_fail("PMI2_KVS_Put", rc);
	}
	rc = PMI2_KVS_Fence();
	if (rc != PMI2_SUCCESS)
		return pmi2_fail("PMI2_KVS_Fence", rc);
	for (int r = 0; r < b->size; r++) {
		if (r == b->rank) {
			memcpy(dst + (size_t)r * len, src, len);
			continue;
		}
		for (size_t c = 0; c < chunks; c++) {
			size_t off = c * CHUNK, n = len - off < CHUNK ? len - off : CHUNK;
			unsigned char *out = dst + (size_t)r * len + off;

			snprintf(key, sizeof(key), "ng%lu.%d.%zu", seq, r, c);
			rc = PMI2_KVS_Get(NULL, r, key, val, sizeof(val), &vlen);
			if (rc != PMI2_SUCCESS)
				return pmi2_fail("PMI2_KVS_Get", rc);
			/* Exactly the hex digits of this chunk: the loop below
			 * reads 2 n characters of val. */
			if (ng_peer_slen("PMI-2 value length", r, vlen, (int64_t)(2 * n), (int64_t)(2 * n),
			                 &got))
				return NG_ERR_PROTO;
			for (size_t i = 0; i < n; i++) {
				const char *hi = strchr(hex, val[2 * i]), *lo = strchr(hex, val[2 * i + 1]);

				if (!hi || !lo || !*hi || !*lo) {
					ng_error("pmi2 bootstrap: rank %d sent a value that is not hex", r);
					return NG_ERR_PROTO;
				}
				out[i] = (unsigned char)((hi - hex) << 4 | (lo - hex));
			}
		}
	}
	return NG_OK;
}

static void pmi2_fini(struct ng_boot *b)
{
	PMI2_Finalize();
	free(b);
}

/* srun leaves the other tasks waiting in a fence: PMI2_Abort ends the step. */
static void pmi2_abort(struct ng_boot *b, int code)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "ngauge rank %d failed (exit %d)", b->rank, code);
	PMI2_Abort(1, msg);
	exit(code);
}

static const struct ng_boot_ops pmi2_ops = {
    .name = "pmi2",
    .barrier = pmi2_barrier,
    .allgather = pmi2_allgather,
    .fini = pmi2_fini,
    .abort = pmi2_abort,
};

ng_status ng_boot_pmi2(struct ng_boot **b_p)
{
	struct boot_pmi2 *p = calloc(1, sizeof(*p));
	int spawned = 0, appnum = 0, rc;

	if (!p) {
		ng_error("pmi2 bootstrap: out of memory");
		return NG_ERR_NOMEM;
	}
	rc = PMI2_Init(&spawned, &p->base.size, &p->base.rank, &appnum);
	if (rc != PMI2_SUCCESS) {
		ng_error("pmi2 bootstrap: PMI2_Init failed (PMI-2 error %d)", rc);
		free(p);
		return NG_ERR_SYS;
	}
	p->base.ops = &pmi2_ops;
	ng_boot_identity(&p->base);
	*b_p = &p->base;
	return NG_OK;
}

/* ngauge-pmi2.so's entry (core/plugin.h): the executable links no libpmi2. */
static const struct ng_pmi_launch ng_pmi2_launch = {.boot = ng_boot_pmi2};

static const struct ng_plugin_entry ng_plugin_pmi2_entries[] = {
    {"launch:pmi2", &ng_pmi2_launch},
    {NULL, NULL},
};

extern NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_pmi2;
NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_pmi2 = {
    .abi = NG_PLUGIN_ABI,
    .name = "pmi2",
    .ops_size = sizeof(struct ng_module_ops),
    .entries = ng_plugin_pmi2_entries,
};
