/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives derived from allgather, for small control data. */
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "allow.h"
#include "launch.h"

ng_status ng_boot_bcast(struct ng_boot *b, int root, void *buf, size_t len)
{
	unsigned char *all = malloc(len * (size_t)b->size + 1);
	ng_status st;

	if (!all) {
		ng_error("out of memory for a bootstrap exchange of %zu bytes", len * (size_t)b->size);
		return NG_ERR_NOMEM;
	}
	st = ng_boot_allgather(b, buf, len, all);
	if (st == NG_OK)
		memcpy(buf, all + (size_t)root * len, len);
	free(all);
	return st;
}

static ng_status reduce(struct ng_boot *b, double *vals, size_t n, int max)
{
	double *all = malloc(n * (size_t)b->size * sizeof(*all) + 1);
	ng_status st;

	if (!all) {
		ng_error("out of memory for a bootstrap reduction of %zu values", n);
		return NG_ERR_NOMEM;
	}
	st = ng_boot_allgather(b, vals, n * sizeof(*vals), all);
	if (st == NG_OK) {
		for (size_t i = 0; i < n; i++) {
			double acc = all[i];
			for (int r = 1; r < b->size; r++) {
				double v = all[(size_t)r * n + i];
				acc = max ? (v > acc ? v : acc) : acc + v;
			}
			vals[i] = acc;
		}
	}
	free(all);
	return st;
}

ng_status ng_boot_sum(struct ng_boot *b, double *vals, size_t n)
{
	return reduce(b, vals, n, 0);
}
ng_status ng_boot_max(struct ng_boot *b, double *vals, size_t n)
{
	return reduce(b, vals, n, 1);
}

int ng_launcher_rank(void)
{
	static const char *const vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return atoi(v);
	}
	return -1;
}

bool ng_launched_by_mpi(void)
{
	static const char *const vars[] = {"PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE",
	                                   "MPI_LOCALNRANKS"};
	const char *n;

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return true;
	n = getenv("SLURM_NTASKS");
	return getenv("SLURM_PROCID") && getenv("SLURM_STEP_ID") && n && atoi(n) > 1;
}

bool ng_boot_may_connect(const struct ng_boot *b, const char *addr, const char *what)
{
	if (!b->peer_addr[0] || strcmp(addr, b->peer_addr) == 0 || ng_allow_match(b->allow, addr))
		return true;
	ng_error("%s is at %s, not at the address the client connected from (%s), and no --allow admits "
	         "it: refused to connect there",
	         what, addr, b->peer_addr);
	return false;
}
