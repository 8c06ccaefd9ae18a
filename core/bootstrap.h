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

#include <stdbool.h>
#include <stddef.h>

#include "status.h"
#include "where.h"

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
	/*
	 * Where the peers are not vouched for (the --server's child serving a
	 * client): the numeric address the client's bootstrap connection came
	 * from; "" in every other launch.  A module connects to an address a
	 * peer published only when ng_boot_may_connect() agrees, so that a
	 * client cannot point the server at a third host or at the server's own
	 * loopback (doc/security.md).
	 */
	char peer_addr[64];
	/* --allow's networks, which also admit a published address (a client
	 * with several interfaces); NULL: none.  Borrowed from the server. */
	const struct ng_allow *allow;
	/*
	 * Set by the driver before fini(), once every result is written: the
	 * status the process ends with, and how long fini() may take (0: no
	 * bound).  A bootstrap whose teardown is a library's own (MPI_Finalize)
	 * and can hang in it ends the process with exit_code, saying so, when
	 * fini_limit_s has passed: nothing measured is lost by then.
	 */
	int exit_code;
	double fini_limit_s;
	/* Set by the driver once the module is open: where the rank's calls
	 * are marked for the run's watchdog (base/where.h); the barrier and
	 * the allgather below mark theirs there.  NULL: not marked. */
	struct ng_where *where;
};

/* Whether this rank may connect to @addr (numeric), which a peer published:
 * always where b->peer_addr is "", else only to the peer's own address or
 * one b->allow admits.  On false it has said why in one line naming @what
 * ("tcp listener of rank 0"). */
bool ng_boot_may_connect(const struct ng_boot *b, const char *addr, const char *what);

static inline ng_status ng_boot_barrier(struct ng_boot *b)
{
	if (!b->where)
		return b->ops->barrier(b);
	ng_where_enter(b->where, NG_AT_BARRIER, -1);
	ng_status st = b->ops->barrier(b);
	ng_where_leave(b->where);
	return st;
}

static inline ng_status ng_boot_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	if (!b->where)
		return b->ops->allgather(b, mine, len, all);
	ng_where_enter(b->where, NG_AT_ALLGATHER, -1);
	ng_status st = b->ops->allgather(b, mine, len, all);
	ng_where_leave(b->where);
	return st;
}

/* Copies @len bytes from rank @root's @buf into every rank's @buf.
 * Built on allgather; for small control data only. */
ng_status ng_boot_bcast(struct ng_boot *b, int root, void *buf, size_t len);

/* Element-wise sum / max of @n doubles over all ranks, result on every rank. */
ng_status ng_boot_sum(struct ng_boot *b, double *vals, size_t n);
ng_status ng_boot_max(struct ng_boot *b, double *vals, size_t n);

/*
 * Before any bootstrap exists, what the launcher's environment says: the
 * driver picks the bootstrap by it (core/launch.h has the constructors).
 */

/* True when the environment says we were started by mpiexec/srun
 * (PMI_RANK, PMI_SIZE, PMIX_RANK, OMPI_COMM_WORLD_SIZE, SLURM_PROCID with
 * SLURM_NTASKS > 1). */
bool ng_launched_by_mpi(void);
/* The rank the launcher gave this process (PMI_RANK, PMIX_RANK,
 * OMPI_COMM_WORLD_RANK, SLURM_PROCID), -1 when none says. */
int ng_launcher_rank(void);

#endif
