/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bootstrap: how ranks find each other before any module runs.
 *
 * Five implementations: "local" (the driver forks N ranks and is their hub),
 * "mpi" (under mpiexec/srun; MPI gives rank, size and exchange), "pmi2" and
 * "pmix" (a Slurm step's tasks without MPI: srun --mpi=pmi2 / --mpi=pmix) and
 * "tcp" (--server / --client HOST, two hosts without MPI).  Modules use the
 * bootstrap only at open time (address exchange) and patterns only between
 * measurements (gathering results); it is never on a data path.
 *
 * All calls are collective over all ranks and blocking.  A lost rank turns
 * into NG_ERR_PEER_LOST (reported once, naming the rank when known).
 */
#ifndef NG_BOOTSTRAP_H
#define NG_BOOTSTRAP_H

#include <stddef.h>

#include "status.h"

struct ng_boot;

struct ng_boot_ops {
	const char *name; /* "local", "mpi", "pmi2", "pmix", "tcp" */
	/* All ranks reach it before any leaves. */
	ng_status (*barrier)(struct ng_boot *b);
	/* Every rank contributes @len bytes from @mine; @all (size * len bytes,
	 * ordered by rank) receives every contribution on every rank. */
	ng_status (*allgather)(struct ng_boot *b, const void *mine, size_t len, void *all);
	/* Releases the bootstrap; b is invalid afterwards. */
	void (*fini)(struct ng_boot *b);
	/*
	 * Optional.  Ends the whole job at once with exit status @code (> 0),
	 * for a failure on this rank that the others may not share: a peer may
	 * be gone, or be waiting in a collective this rank will never join.
	 * Never returns; called instead of fini(), whether a module is still
	 * open or not (nothing is released: the job ends).  Set where the
	 * launcher would leave the other ranks waiting: MPI (MPI_Abort), PMI-2
	 * and PMIx (their aborts end the job step).  NULL
	 * where the launch already takes care of them: the local hub ends the
	 * survivors after its grace period, and a --server/--client peer sees
	 * its connection close; the caller then releases the bootstrap with
	 * fini() as after any other run.
	 */
	void (*abort)(struct ng_boot *b, int code);
};

/* Implementations embed this as their first member. */
struct ng_boot {
	const struct ng_boot_ops *ops;
	int rank;
	int size;
	char host[256]; /* this rank's host name (node membership) */
	char addr[64];  /* numeric IP address peers can reach this rank at */
};

static inline ng_status ng_boot_barrier(struct ng_boot *b)
{
	return b->ops->barrier(b);
}

static inline ng_status ng_boot_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	return b->ops->allgather(b, mine, len, all);
}

/* Copies @len bytes from rank @root's @buf into every rank's @buf.
 * Built on allgather; for small control data only. */
ng_status ng_boot_bcast(struct ng_boot *b, int root, void *buf, size_t len);

/* Element-wise sum / max of @n doubles over all ranks, result on every rank. */
ng_status ng_boot_sum(struct ng_boot *b, double *vals, size_t n);
ng_status ng_boot_max(struct ng_boot *b, double *vals, size_t n);

#endif
