/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The alltoall algorithms' interface (alltoall_algos.c) to the pattern's
 * driver (alltoall.c: selection, buffers, measurement, report), and the
 * state they share.  Private to the two; the driver calls down, never the
 * algorithms up.
 *
 * The algorithms keep no state of their own: everything is in struct ng_a2a,
 * set up by the driver.  An algorithm (ng_a2a_fns) is called inside the
 * timed region: it makes module calls, copies blocks and (leader, sa, rd)
 * waits at the node's barrier; it allocates nothing and reports only an
 * error that ends the run.
 */
#ifndef NG_PATTERNS_ALLTOALL_ALGOS_H
#define NG_PATTERNS_ALLTOALL_ALGOS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes.h"
#include "sampler.h"

enum ng_a2a_algo {
	NG_A2A_BRUCK,
	NG_A2A_ISEND,
	NG_A2A_PAIRWISE,
	NG_A2A_LEADER,
	NG_A2A_SA,
	NG_A2A_RD,
	NG_A2A_MPI,
	NG_A2A_NALGOS,
};

/* One step of a shift exchange (pairwise, bruck). */
struct ng_a2a_step {
	int dst, src;
	bool send_first; /* blocking order: send then receive, else the reverse */
	size_t nblk;     /* bruck: blocks moved in this step */
};

/* One message of an aggregated exchange (leader, sa, rd). */
struct ng_a2a_msg {
	int peer;
	int node;    /* the peer's node */
	size_t blk;  /* first block in the staging buffer, or in the user buffer when direct */
	size_t nblk; /* message length in blocks */
	bool direct; /* straight from the send / into the receive buffer */
};

struct ng_a2a_plan {
	struct ng_a2a_msg *send, *recv;
	size_t nsend, nrecv;
	size_t stage_s, stage_r; /* staging blocks needed */
};

/* Control block at the start of a node's segment, one cache line each. */
struct ng_a2a_ctl {
	_Alignas(64) atomic_uint count; /* ranks arrived at the current barrier */
	_Alignas(64) atomic_uint gen;   /* barriers completed */
};

struct ng_a2a_shm {
	void *base;
	size_t len;
	struct ng_a2a_ctl *ctl;
	unsigned char *g[2]; /* gather / aggregation area, by iteration parity */
	unsigned char *d[2]; /* distribution area, by iteration parity */
	unsigned gen;        /* barriers this rank has passed */
	unsigned epoch;      /* iterations of the shared-memory algorithms */
};

/* alltoall's options (patterns/alltoall.c's table). */
struct ng_a2a_config {
	const char *algos;  /* --a2a-algo */
	bool blocking;      /* --a2a-blocking */
	long long per_node; /* --ranks-per-node */
};

struct ng_a2a {
	struct ng_a2a_config cfg;
	struct ng_run *run;
	struct ng_comm *c;
	int me, P;
	bool nb;       /* the module has isend/irecv/test/wait */
	bool nb_steps; /* bruck and pairwise use them */
	struct ng_nodes nodes;
	int node, local, ln; /* this rank's node, local index, node size */

	int order[NG_A2A_NALGOS]; /* algorithms to run, in order */
	size_t nalgos;
	const char *skipped[NG_A2A_NALGOS]; /* why an algorithm of "all" did not run */
	char native_why[256];               /* why the module's own alltoall cannot run */

	size_t smax;
	unsigned char *sbuf, *rbuf;       /* P blocks each */
	unsigned char *tmp;               /* bruck: P blocks */
	unsigned char *stage_s, *stage_r; /* staging for packed messages */
	struct ng_req *reqs;
	size_t nreqs;

	struct ng_a2a_step *pw; /* [P - 1] pairwise steps */
	struct ng_a2a_step *bk; /* [nbk] bruck steps */
	size_t nbk;
	struct ng_a2a_plan sa, rd, ld;
	size_t *sa_wpos; /* [P] sa: where this rank writes its block for rank j */
	size_t sa_agg;   /* sa: first block of this rank's aggregation area */
	size_t sa_intra; /* sa: first block of the intra-node blocks for this rank */
	int *rd_fromd;   /* rd: ranks whose block this rank takes from the segment */
	size_t nrd_fromd;
	bool shm_g, shm_d; /* which areas the selected algorithms need */
	struct ng_a2a_shm shm;

	struct ng_sampler smp; /* one stream, this rank's times; the tail: its verify flag */
	double *medians;       /* [NG_A2A_NALGOS * nsizes] for the summary (reporter) */
	size_t checked;        /* iterations verified in the current measurement */
};

static inline unsigned char *ng_a2a_blk(unsigned char *base, size_t i, size_t s)
{
	return base + i * s;
}

/* ---- schedules (alltoall_algos.c), once per run, not collective ---------- */

/* The steps and message lists of every algorithm for this rank, into the
 * arrays the driver allocated (pw, bk, the plans, sa_wpos, rd_fromd). */
void ng_a2a_pairwise_plan(struct ng_a2a *a);
/* Returns the largest bruck step in blocks. */
size_t ng_a2a_bruck_plan(struct ng_a2a *a);
void ng_a2a_sa_plan(struct ng_a2a *a);
void ng_a2a_rd_plan(struct ng_a2a *a);
void ng_a2a_leader_plan(struct ng_a2a *a);

/* Largest message of @algo in blocks on any rank (for the module's max_msg;
 * the same on every rank, so all ranks select alike). */
size_t ng_a2a_max_blocks(const struct ng_a2a *a, int algo);

/* ---- the node's shared memory (alltoall_algos.c) ------------------------- */

/*
 * Collective: one segment per node, holding the control block and the areas
 * the selected algorithms need (a->shm_g, a->shm_d), each ln * P * smax
 * bytes per parity.  The node's lowest rank creates it; every rank maps it;
 * then the creator unlinks it, success or not, so the name lives only during
 * this call.  Errors reported by the rank that had them.
 */
ng_status ng_a2a_shm_setup(struct ng_a2a *a);
/* Unmaps the segment; safe when none is mapped. */
void ng_a2a_shm_unmap(struct ng_a2a_shm *s);

/* Collective: whether every rank succeeded; @failed is this rank's part.
 * Returns the bootstrap's error, NG_ERR_SYS when some rank failed (that rank
 * reported why), or NG_OK. */
ng_status ng_a2a_agree(struct ng_a2a *a, bool failed);

/* ---- the algorithms (alltoall_algos.c) ----------------------------------- */

/* One alltoall of @s bytes per block with algorithm k: sbuf to rbuf. */
extern ng_status (*const ng_a2a_fns[NG_A2A_NALGOS])(struct ng_a2a *a, size_t s);

#endif
