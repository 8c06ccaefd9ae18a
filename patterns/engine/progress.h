/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine of the overlap and skew patterns: does communication progress
 * while a rank computes?  (MPI-2 one-sided paper, §5.5-5.6.)
 *
 * Two ranks: rank 0 is the active side (the sender, or the origin of a
 * one-sided epoch), rank 1 the passive side (the receiver, or the target).
 * Every iteration moves a burst of B messages of one size from rank 0 to
 * rank 1 and each rank times its own part of it; a rank may compute for X
 * microseconds (patterns/engine/compute.h) at a place the pattern chooses.
 *
 * Two-sided (modules with non-blocking operations), per iteration:
 *   sender:    recv(ready)  | t0  isend x B   [compute]  waitall   t1
 *   receiver:  t0  irecv x B  send(ready)  [compute: AFTER_POST]  waitall  t1
 *              or, BEFORE_POST:  t0  send(ready)  compute  irecv x B  waitall  t1
 * "ready" is an empty message from the receiver: it starts the sender's
 * iteration, so the sender's timed part never includes waiting for the
 * receiver's previous iteration, and the receiver's irecvs are posted before
 * the data is sent (unless the receiver is to compute first).
 *
 * One-sided (--NAME-rma; modules with NG_CAP_ONESIDED), per iteration, on a
 * window of B slots at the target:
 *   origin:  post; wait (ready epoch)  | t0  start  put x B  [compute]  complete  t1
 *   target:  start; complete (ready epoch)  | t0  post  [compute]  wait  t1
 * The ready epoch is an empty access epoch of the target to the origin: it
 * plays the part of the ready message (the origin's timed part starts
 * together with the target's, not after the target's previous iteration).
 * The B puts go to distinct slots of the target's window from one origin
 * buffer, as in the paper's bandwidth test; the paper's default is B = 16.
 *
 * The compute placement of each rank: NONE, AFTER_POST (after its operations
 * are posted and before it completes them: overlap; the one-sided target of
 * skew), BEFORE_POST (two-sided receiver: before it posts its receives).
 * Around every computation the rank reads the timer twice: each sample has
 * its iteration time and the length of its computation.  A timed region
 * holds timer reads, module operations and the computation, nothing else.
 *
 * Per size: --warmup untimed iterations without computation, then a probe of
 * NG_PG_PROBE timed ones whose median is each rank's transfer time T(0); the
 * lengths come from the pattern's SPEC (--NAME-compute) with "t" = T(0) of
 * the ranks the pattern names (the largest of them); then one untimed round
 * and --count timed rounds, each round one iteration per length in
 * ascending order (interleaved, so slow drift hits every length alike).
 * Every rank's samples are then gathered to rank 0, which reports.  The
 * rounds are the sampler's iterations (the untimed round its one untimed
 * iteration); each length has two streams, the iteration times and the
 * computations.  The probe is not sampled: it only decides the lengths.
 *
 * Options read here, owned by the pattern NAME: NAME-compute (SPEC),
 * NAME-burst (B; default 16 one-sided, 1 two-sided), NAME-rma (flag).
 * --verify: every message's payload is checked by the receiver after its
 * iteration (the origin fills its buffer before its iteration starts).
 */
#ifndef NG_PATTERNS_PROGRESS_H
#define NG_PATTERNS_PROGRESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compute.h"
#include "sampler.h"
#include "session.h"

#define NG_PG_PROBE 32 /* timed iterations of the probe */

/* What the patterns ask of the driver: two ranks, reliable delivery; the
 * rest (non-blocking or one-sided operations) depends on NAME-rma and is
 * checked by ng_pg_setup. */
#define NG_PG_PATTERN_NEEDS .needs = NG_CAP_RELIABLE, .min_ranks = 2, .max_ranks = 2, .even_ranks = true

enum ng_pg_role { NG_PG_ACTIVE = 0, NG_PG_PASSIVE = 1 };

enum ng_pg_place { NG_PG_NONE, NG_PG_AFTER_POST, NG_PG_BEFORE_POST };

struct ng_pg;

struct ng_pg_ops {
	const char *name; /* the pattern: messages and the option prefix "NAME-" */
	/* Rank 0 with results: one size's rows and block; the samples of both
	 * ranks are in ng_pg_t() / ng_pg_x(). */
	ng_status (*report)(struct ng_pg *pg, size_t size);
	/* Rank 0 with results, after the last size and the recheck. */
	ng_status (*finish)(struct ng_pg *pg);
};

/* The options every pattern on this engine declares as NAME-compute,
 * NAME-rma and NAME-burst, read into its state's pg.cfg by the session
 * (its table: NG_STRING_AT(struct ng_ov, pg.cfg.compute), ...). */
struct ng_pg_config {
	const char *compute; /* the computation lengths (an xspec) */
	bool rma;            /* one-sided epochs */
	long long burst;     /* messages per iteration ... */
	bool burst_given;    /* ... when given (else 16 with rma, else 1) */
};

struct ng_pg {
	/* read by the session (NG_SESSION_CONFIG_STATE) */
	struct ng_pg_config cfg;
	/* set by the pattern before ng_pg_setup */
	enum ng_pg_place place[2]; /* per role */
	unsigned ref_roles;        /* 1u << role: whose T(0) the unit "t" means */
	/* set by ng_pg_setup */
	const struct ng_pg_ops *ops;
	struct ng_run *run;
	struct ng_comm *c;
	const struct ng_timer *tm;
	enum ng_pg_role role;
	int peer;
	bool rma;
	size_t burst;
	const char *spec_text;
	struct ng_xspec spec;
	struct ng_compute cp;
	double cal[2][3]; /* per rank: rate at start, at the end, spread */
	/* communication */
	size_t stride;       /* between the slots of a burst */
	struct ng_bufs bufs; /* two-sided: B send (sender) or receive (receiver) slots */
	void *ctl;           /* two-sided: the ready message */
	struct ng_req *reqs; /* [burst] */
	struct ng_win *win;  /* one-sided */
	void *win_base;
	void *src; /* one-sided origin buffer */
	uint64_t iter;
	/* the current size */
	size_t npts;
	double xs[NG_XSPEC_MAX];      /* requested lengths (us) */
	uint64_t iters[NG_XSPEC_MAX]; /* their kernel iterations */
	double probe[2];              /* each rank's T(0) from the probe (us) */
	double t_ref;                 /* the transfer time the unit "t" stood for */
	/* streams 0..npts-1: iteration times of each length, npts..2 npts-1:
	 * its computations (us); both ranks' after the size */
	struct ng_sampler smp;
	bool ended; /* the run ended well on this rank (ng_pg_conclude) */
};

/* The samples of @role (= its rank) after the size: its iteration times and
 * its computations' lengths (us), [pt * count + r]. */
static inline const double *ng_pg_t(const struct ng_pg *pg, int role)
{
	return ng_sampler_of(&pg->smp, role, 0);
}
static inline const double *ng_pg_x(const struct ng_pg *pg, int role)
{
	return ng_sampler_of(&pg->smp, role, pg->npts);
}

/*
 * The capability an instance with @caps lacks for the engine (one-sided
 * operations with @rma, else two-sided non-blocking ones), or 0.
 */
unsigned ng_pg_lacking(unsigned caps, bool rma);

/* ---- the session's steps (session.h) --------------------------------------- */

/*
 * A pattern's state embeds struct ng_pg first; its session has the flag
 * NG_SESSION_OWN_CHECK (the capabilities and the options are refused
 * before the sizes, every rank agreeing, and every usage error ends in a
 * barrier, so that the one report is out before any rank leaves); its setup
 * step sets place and ref_roles and calls ng_pg_setup with its ops, the
 * other steps are these (or call them):
 *
 *   static const struct ng_session_ops ng_ov_session = {
 *       .state = sizeof(struct ng_ov),
 *       .flags = NG_SESSION_OWN_CHECK,
 *       .setup = ng_ov_setup,            -> ng_pg_setup(s, &ov->pg, &ng_ov_ops)
 *       .measure = ng_pg_measure,
 *       .report = ng_pg_report,
 *       .conclude = ng_pg_conclude,
 *       .teardown = ng_ov_teardown,      -> ng_pg_teardown(s, &ov->pg)
 *   };
 */

/* Setup: the options and capabilities (NG_ERR_USAGE, said once), the
 * sizes (ng_sizes_check), buffers or the window, requests, the ranks'
 * calibrations (collective). */
ng_status ng_pg_setup(struct ng_session *s, struct ng_pg *pg, const struct ng_pg_ops *ops);

/* Measure: one size, the warm-up, the probe and its lengths, then the
 * rounds (the sampler's iterations). */
ng_status ng_pg_measure(struct ng_session *s, void *state, size_t size);

/* Report: both ranks' samples on every rank, then ops->report on the
 * reporting rank. */
ng_status ng_pg_report(struct ng_session *s, void *state, size_t size);

/* Conclude, after every size: the recheck of the calibration (collective),
 * then ops->finish on the reporting rank. */
ng_status ng_pg_conclude(struct ng_session *s, void *state);

/* Teardown: frees what ng_pg_setup allocated, the window collectively only
 * after a run every rank finished (pg->ended: after an error a peer may be
 * gone, and closing the instance frees it).  Safe on a zeroed or partially
 * set up state. */
void ng_pg_teardown(struct ng_session *s, void *state);

/* The "compute" object of a block: the kernel and each rank's calibration
 * (and its recheck once done).  A new reference, NULL on out-of-memory. */
json_t *ng_pg_compute_json(const struct ng_pg *pg);

/* A parameter of the result format, {"value": v, "ci95": [lo, hi]}, with
 * non-finite numbers as null; a new reference, NULL on out-of-memory. */
json_t *ng_pg_param_json(double v, double lo, double hi);

/* "two-sided" or "one-sided". */
static inline const char *ng_pg_mode(const struct ng_pg *pg)
{
	return pg->rma ? "one-sided" : "two-sided";
}

#endif
