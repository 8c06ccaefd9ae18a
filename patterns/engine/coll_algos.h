/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collective algorithms of the coll pattern (coll_algos.c) and the state
 * they share with its driver (patterns/coll.c: selection, buffers, timing,
 * verification, report).  Private to the two; the driver calls down, never
 * the algorithms up.
 *
 * Every algorithm works on the three buffers of struct ng_coll (from the
 * module's alloc(), each P * smax bytes) with the layout of the module's own
 * collective (core/module.h, .coll): @count elements per block, sums,
 * root 0.  An algorithm is called inside the timed region: it makes module
 * calls, copies and sums elements; it allocates nothing, logs nothing and
 * makes no system call of its own.  Zero-length pieces (fewer elements than
 * ranks) are not sent: sender and receiver skip them alike.
 *
 * Non-powers of two (rd, rabenseifner; MPICH's fold): with pof2 the largest
 * power of two not above P and rem = P - pof2, the even ranks below 2 rem
 * give their data to the odd rank above them and sit out; the pof2 ranks
 * left are the virtual ranks 0..pof2-1 (v < rem: rank 2v + 1, else v + rem),
 * and virtual rank v stands for the ranks [first(v), first(v + 1)), with
 * first(v) = 2v for v < rem, v + rem otherwise.  At the end the odd ranks
 * hand the result back.
 */
#ifndef NG_PATTERNS_COLL_ALGOS_H
#define NG_PATTERNS_COLL_ALGOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

enum ng_coll_algo {
	NG_CA_RING,
	NG_CA_RD,
	NG_CA_BINOMIAL,
	NG_CA_RABENSEIFNER,
	NG_CA_SAG,
	NG_CA_DISSEMINATION,
	NG_CA_LINEAR,
	NG_CA_NATIVE,
	NG_CA_NALGOS
};

/* The algorithms' names, as --coll-algo takes them. */
extern const char *const ng_coll_algo_names[NG_CA_NALGOS];
/* The operations' names, as --coll-op takes them (enum ng_coll_op). */
extern const char *const ng_coll_op_names[NG_COLL_NOPS];
/* The element types' names, as --coll-type takes them, and their sizes. */
extern const char *const ng_coll_type_names[NG_COLL_NTYPES];
extern const size_t ng_coll_type_size[NG_COLL_NTYPES];

/* Whether algorithm @algo is one of operation @op's (native: all). */
bool ng_coll_applies(enum ng_coll_op op, int algo);

struct ng_coll_exec {
	struct ng_comm *c;
	int me, P;
	int pof2, rem; /* the fold (above) */
	int vr;        /* this rank's virtual rank; -1 for the ranks that sit out */
	bool nb;       /* the module has isend/irecv: exchanges post both */
	enum ng_coll_type type;
	size_t esize;                     /* bytes per element */
	unsigned char *sbuf, *rbuf, *tmp; /* P * smax bytes each */
	struct ng_req reqs[2];
};

/* Sets up the fold and the fields but the buffers (not collective). */
void ng_coll_exec_init(struct ng_coll_exec *x, struct ng_comm *c, enum ng_coll_type type);

/*
 * One collective @op with algorithm @algo, @count elements per block (layout
 * of core/module.h's .coll, root 0): sbuf to rbuf; bcast in place in rbuf.
 * Collective; NG_OK or the module's error (reported by the module).
 */
ng_status ng_coll_exec(struct ng_coll_exec *x, enum ng_coll_op op, int algo, size_t count);

/* A barrier of ngauge's own (dissemination over the module): barrier
 * timing's separator. */
ng_status ng_coll_barrier(struct ng_coll_exec *x);

#endif
