/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The measurement session: the run of a measuring pattern, written once.
 *
 * A pattern says what to measure; the session runs it over every size.  The
 * pattern fills a `static const struct ng_session_ops` (its state's size,
 * whether its ranks start each measurement together, and the steps below)
 * and its run() is one line:
 *
 *   static ng_status ng_pp_run(const struct ng_pattern *p, struct ng_run *run)
 *   {
 *       return ng_session_run(p, run, &ng_pp_session);
 *   }
 *
 * ng_session_run then does, on every rank alike:
 *
 *   check the sizes against the module (ng_sizes_check)        NG_ERR_USAGE
 *   (not with NG_SESSION_OWN_CHECK: setup checks what it measures)
 *   state = zeroed ops->state bytes
 *   ops->setup(s, state)              buffers, samplers, pairs; may set
 *                                     s->variants (alltoall's algorithms,
 *                                     mpbibw's pair counts)
 *   with NG_SESSION_WINDOWS: the global clock's windows (gclock.h)
 *   ops->ready(s, state)              optional: what needs the windows
 *   announce variants x sizes on the progress line (variants > 1, or
 *   NG_SESSION_ANNOUNCE)
 *   for each variant, for each size (s->variant, s->index):
 *       ops->begin(s, state, size)    optional: per-measurement resets
 *       every rank here, or all stop on a cancel (ng_sizes_sync)
 *       ops->arm(s, state, size)      optional: what must follow that
 *                                     agreement and precede the start
 *                                     (1n's pre-posted receives)
 *       with windows: the ranks start together (ng_gclock_begin; with
 *       NG_SESSION_BARRIER, its barrier where there is no common clock)
 *       ops->measure(s, state, size)  the loops; the sampler inside
 *       ops->report(s, state, size)   optional: gather, row, commit (none
 *                                     where a measurement has no row of its
 *                                     own: ebb's rounds)
 *       the progress line (rank 0)
 *   ops->conclude(s, state)           optional: after a complete loop only
 *                                     (loggp's parameters, overlap's
 *                                     recheck, ebb's one row over its
 *                                     rounds); its error is the run's
 *   ops->finish(s, state, all)        optional: after the loop (also after
 *                                     an error in it; not after a failed setup)
 *   ops->teardown(s, state)           also after a failed setup
 *
 * The first error ends the loop; rows committed before it are kept (the
 * result says "complete": false).  A step's error is reported by the step.
 * finish and teardown find it in s->status (NG_OK after a complete run):
 * rma frees its window collectively only when every rank ends alike.
 *
 * The sizes the loop runs over are s->sizes[0..s->nsizes), run->sizes
 * unless setup points them at a list of its own (which the state owns):
 * rma's plan, whose every entry (test, mode, origins) has its own size, is
 * one such list (s->index is the entry), its progress line counting it;
 * ebb's rounds, every one at --ebb-size (s->index is the round), another;
 * noise's one measurement at size 0, whatever -s says, a third.
 *
 * The run policy (count, --time, --ci-target and --max-time, warm-up,
 * --verify, --raw, percentiles, histogram, progress within a size,
 * cancellation) is the sampler's (sampler.h) and this loop's: a pattern
 * never loops over sizes or variants itself.  Whether a pattern measures by
 * --time or takes --ci-target is what it declares in struct ng_pattern
 * (by_time, adaptive); core/ reads it there.
 *
 * Ownership: the session owns the state block and frees it after teardown;
 * whatever setup allocates inside it, teardown frees (safe after a partial
 * setup: the block starts zeroed).  Nothing here runs inside a timed region.
 */
#ifndef NG_PATTERNS_SESSION_H
#define NG_PATTERNS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gclock.h"

struct ng_session;

/* What a pattern's session starts each measurement with (ops->flags). */
enum {
	/* the ranks start each measurement together in a window of the global
	 * clock (gclock.h, NG_GCLOCK_WINDOWS) */
	NG_SESSION_WINDOWS = 1u << 0,
	/* the same, only with more than two ranks (two ranks start together by
	 * their first message) */
	NG_SESSION_WINDOWS_MANY = 1u << 1,
	/* announce the total on the progress line before the first measurement
	 * even with one variant (alltoall, mpbibw: their total is variants x
	 * sizes whatever the count of variants) */
	NG_SESSION_ANNOUNCE = 1u << 2,
	/* with NG_SESSION_WINDOWS: where the ranks have no common clock (no
	 * windows), they still meet before each measurement, in the barrier
	 * ng_gclock_begin is then (1n, n1: every first receive posted before
	 * anyone sends); without it they go on from ng_sizes_sync */
	NG_SESSION_BARRIER = 1u << 3,
	/* the session does not check the sizes (ng_sizes_check): setup checks
	 * what it measures where its own refusals put it (overlap and skew
	 * after the capabilities every rank agrees on first; ebb its
	 * --ebb-size, the one size its rounds measure; noise, which sends no
	 * message, nothing) */
	NG_SESSION_OWN_CHECK = 1u << 4,
};

#define NG_SESSION_CONFIG(T, m) (offsetof(T, m) + 1)
/* the configuration struct is the state itself (the tables' slots are
 * offsets in the state: overlap's NG_STRING_AT(struct ng_ov, pg.cfg.compute)) */
#define NG_SESSION_CONFIG_STATE 1

struct ng_session_ops {
	size_t state;   /* bytes of the pattern's state (zeroed), at least 1 */
	unsigned flags; /* NG_SESSION_* */
	/* optional, NG_SESSION_CONFIG(state type, member): where in the state
	 * the pattern's configuration struct is; the session reads the
	 * pattern's .options and .reads into it (ng_config_read) before setup */
	size_t config;
	ng_status (*setup)(struct ng_session *s, void *state);
	ng_status (*ready)(struct ng_session *s, void *state);              /* optional */
	ng_status (*begin)(struct ng_session *s, void *state, size_t size); /* optional */
	ng_status (*arm)(struct ng_session *s, void *state, size_t size);   /* optional */
	ng_status (*measure)(struct ng_session *s, void *state, size_t size);
	ng_status (*report)(struct ng_session *s, void *state, size_t size); /* optional */
	/* optional: after every variant and size was measured and reported
	 * (never after an error), before finish: a summary the run's status
	 * depends on (a collective, a block); its error is the run's */
	ng_status (*conclude)(struct ng_session *s, void *state);
	/* optional; @all: every variant and size was measured and reported */
	void (*finish)(struct ng_session *s, void *state, bool all);
	void (*teardown)(struct ng_session *s, void *state);
};

struct ng_session {
	struct ng_run *run;
	const struct ng_pattern *pattern;
	int me;          /* this rank */
	int nranks;      /* ranks of the run */
	size_t variants; /* outer loops over the sizes (setup may raise it); 1 */
	size_t variant;  /* the current one, from 0 */
	size_t index;    /* the current size's index in s->sizes */
	size_t done;     /* measurements reported so far */
	/* the sizes of every variant: run->sizes, or setup's own list */
	const size_t *sizes;
	size_t nsizes;
	ng_status status; /* for finish and teardown: NG_OK or the first error */
	/* the last measurement's wall time and size (the watchdog's expected
	 * time of a call in the next, core/watchdog.h) */
	uint64_t last_ns;
	size_t last_size;
	uint64_t last_calls; /* the calls this rank completed in it */
	/* With NG_SESSION_WINDOWS (and NG_SESSION_WINDOWS_MANY beyond two
	 * ranks): the windows; a step may set gc.idle for a rank that sits out
	 * a measurement (gclock.h). */
	struct ng_gclock gc;
};

/* Runs @p with @ops on every rank (collective).  NG_OK or the first
 * error, already reported. */
ng_status ng_session_run(const struct ng_pattern *p, struct ng_run *run, const struct ng_session_ops *ops);

#endif
