/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives derived from allgather, for small control data; what the
 * launcher's environment says; whom a rank may connect to. */
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "bootstrap.h"

/* Bytes of @n items of @size bytes from each of @b's ranks (+ 1, so that
 * malloc never sees 0) in *@bytes_p; false when that does not fit in a
 * size_t, reported. */
static bool ng_boot_bytes(const struct ng_boot *b, size_t n, size_t size, const char *what, size_t *bytes_p)
{
	size_t per;

	if (b->size > 0 && !__builtin_mul_overflow(n, size, &per) &&
	    !__builtin_mul_overflow(per, (size_t)b->size, bytes_p) &&
	    !__builtin_add_overflow(*bytes_p, 1, bytes_p))
		return true;
	ng_error("bootstrap: a %s of %zu x %zu bytes over %d ranks does not fit in memory", what, n, size,
	         b->size);
	return false;
}

ng_status ng_boot_bcast(struct ng_boot *b, int root, void *buf, size_t len)
{
	unsigned char *all;
	ng_status st;
	size_t bytes;

	if (root < 0 || root >= b->size) {
		ng_error("bootstrap: broadcast from rank %d of %d", root, b->size);
		return NG_ERR_INTERNAL;
	}
	if (!ng_boot_bytes(b, len, 1, "broadcast", &bytes))
		return NG_ERR_NOMEM;
	all = malloc(bytes);
	if (!all) {
		ng_error("out of memory for a bootstrap exchange of %zu bytes", bytes - 1);
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
	double *all;
	ng_status st;
	size_t bytes;

	if (!ng_boot_bytes(b, n, sizeof(*all), "reduction", &bytes))
		return NG_ERR_NOMEM;
	all = malloc(bytes);
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
