/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The benchmark pattern interface.
 *
 * A pattern is one `static const struct ng_pattern` in patterns/.  It declares
 * what it needs of a module (capability flags, rank counts); the driver checks
 * those against the module before anything runs and refuses with a message
 * naming what is missing.  run() is the pattern's whole life: it allocates
 * its buffers with ng_alloc(), measures, and reports through the results API
 * (core/results.h).  All its state lives on its stack or in memory it frees
 * before returning: no globals.
 *
 * Timed regions contain only ng_timer_now() and module operations: no
 * allocation, logging, option lookup or other system calls.  The
 * bookkeeping of a measurement (warm-up, samples, gathering, statistics,
 * the row) is the sampler's, patterns/engine/sampler.h.
 */
#ifndef NG_PATTERN_H
#define NG_PATTERN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../timers/timer.h"
#include "bootstrap.h"
#include "module.h"
#include "options.h"
#include "results.h"
#include "status.h"

struct ng_clock; /* core/clocksync.h */

/* Everything a pattern gets from the driver. */
/* What a sample stream keeps at the most in a run by --time: memory that
 * does not grow with the run's length (patterns/engine/sampler.h).  A multiple of 4. */
#define NG_TIME_SAMPLES 65536

struct ng_run {
	struct ng_comm *comm;         /* the opened module instance */
	struct ng_boot *boot;         /* rank, size, host names, result gathering */
	const struct ng_args *args;   /* parsed options, including the pattern's own */
	const struct ng_timer *timer; /* the chosen timer */
	const size_t *sizes;          /* message sizes to measure, ascending */
	size_t nsizes;
	size_t count;  /* timed repetitions per size (-c) */
	size_t warmup; /* untimed repetitions before them (-w) */
	/* -c, -w, -s given on the command line (else count, warmup and sizes
	 * are the defaults: a pattern may have defaults of its own) */
	bool count_given, warmup_given, sizes_given;
	bool verify;       /* --verify: check every received byte */
	bool raw;          /* --raw: keep raw samples in the result */
	const double *pct; /* --percentiles: fractions, ascending */
	size_t npct;       /* their number */
	bool histogram;    /* --histogram: each STATS's buckets in the row */
	/* --time: each measurement runs this long (seconds) instead of @count
	 * timed repetitions; 0 without.  @count is then NG_TIME_SAMPLES, what a
	 * stream keeps at the most (patterns/engine/sampler.h: runs by time). */
	double time_s;
	double interval_s; /* --interval: a line on stderr this often (seconds); 0: none */
	/* --ci-target: each measurement samples until the 95% interval of its
	 * median lies within this fraction of it (0: off), at least @count
	 * timed repetitions, at most --max-time (@max_time_s) seconds
	 * (patterns/engine/sampler.h: adaptive stopping). */
	double ci_target;
	double max_time_s;
	uint64_t seed;                       /* --seed: pairings, server choice */
	double timeout_s;                    /* a silent peer is lost after this long */
	const volatile sig_atomic_t *cancel; /* set on SIGINT/SIGTERM */
	struct ng_results *results;          /* the result sink; only rank 0 writes it */
	const struct ng_clock *clock;        /* the global clock (core/clocksync.h), every rank */
};

struct ng_pattern {
	const char *name; /* "pingpong" */
	const char *desc; /* one line */
	const struct ng_option *options;
	/* Optional, a table: options another pattern declares that this one
	 * reads too (bibw: "bw-window"), each with its member in this
	 * pattern's configuration struct (ng_config_read); the driver accepts
	 * them with it. */
	const struct ng_option *reads;
	unsigned needs;            /* NG_CAP_* the module must have */
	int min_ranks;             /* at least this many ranks */
	int max_ranks;             /* 0 = no upper bound */
	bool even_ranks;           /* ranks are paired */
	bool by_time;              /* measures by --time (its loops are the sampler's) */
	bool adaptive;             /* takes --ci-target and --max-time in a loop of its own (loggp, plogp) */
	const char *default_sizes; /* size spec used without -s */
	/* Runs the benchmark collectively on all ranks.  Returns NG_OK or the
	 * first error (already reported).  Rows committed before an error are
	 * kept and written with "complete": false.  NG_ERR_USAGE (options or
	 * rank counts the pattern cannot run with) is returned by every rank
	 * alike, before the measurement communicates, and said once (rank 0,
	 * or the rank the ranks agree on): the ranks then leave together. */
	ng_status (*run)(const struct ng_pattern *p, struct ng_run *run);
};

/* Progress line on stderr (rank 0, only when stderr is a terminal):
 * "pingpong: 12/21 sizes, 64 KiB, ETA 3 s".  @done 0 announces @total
 * before the first measurement (no ETA yet), for patterns whose total is
 * not the number of sizes (alltoall: algorithms x sizes).  The line is the
 * result sink's (core/results.h). */
static inline void ng_progress(const struct ng_run *run, size_t done, size_t total, size_t size)
{
	ng_results_progress(run->results, done, total, size);
}

/* Within a long measurement (a run by --time or --ci-target), rank 0,
 * only when stderr is a terminal: redraws the progress line with the
 * current size's progress, @el_s of @limit_s seconds (@bound: at most, the
 * measurement may stop sooner) and @iters repetitions, and the time left.
 * Between batches of a measurement only, never in a timed region. */
static inline void ng_progress_size(const struct ng_run *run, double el_s, double limit_s, bool bound,
                                    uint64_t iters)
{
	ng_results_progress_size(run->results, run->nsizes, el_s, limit_s, bound, iters);
}

/* True once SIGINT/SIGTERM arrived; check between measurements. */
static inline bool ng_cancelled(const struct ng_run *run)
{
	return run->cancel && *run->cancel;
}

#endif
