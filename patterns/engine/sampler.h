/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sampler: the skeleton every measuring pattern shares, written once.
 *
 * A pattern measures in *measurements* (one size, or one size of one
 * algorithm, one pair count, ...).  A measurement runs iterations back to
 * back: @skip untimed ones (warm-up, a checked iteration), then @count timed
 * ones; every rank that takes part runs the same iterations.  Each timed
 * iteration leaves one value (microseconds, or whatever the pattern times)
 * in each of the sampler's *streams* on the ranks that time it: pingpong's
 * half round trips, one stream per client of 1n, the iteration time and the
 * computation of every length of overlap.  After the measurement the
 * sampler brings the streams together (gather: every rank's streams on
 * every rank), combines them on the reporting rank (a pool of several
 * ranks' streams, the largest value of each iteration over all ranks),
 * computes the statistics (a STATS of the result format) and begins the
 * row.  So a change to what a STATS holds, or to how samples are kept, is
 * made here and in analysis/stats.c, never in a pattern.
 *
 *   struct ng_sampler s;                        setup, once per run
 *   ng_sampler_init(&s, run, &spec);
 *   for each measurement:
 *       ng_sampler_start(&s, skip, count);      outside the loop
 *       for (it = 0; ng_sampler_more(&s, it); it++) {
 *           t0 = ng_timer_now(tm);  ...module operations...  t1 = ng_timer_now(tm);
 *           ng_sampler_add(&s, 0, it, ng_timer_us(tm, t1 - t0));
 *       }
 *       ng_sampler_gather(&s);                  collective, after the loop
 *       x = ng_sampler_pool(&s, 0, ranks, k);   reporter: combine
 *       row = ng_sampler_row(&s, size);
 *       ng_sampler_row_stats(&s, row, "latency_us", x, n, NULL);
 *   ng_sampler_free(&s);
 *
 * Ownership: the sampler owns every sample it holds.  Its memory is
 * allocated by ng_sampler_init (and ng_sampler_reserve) and freed by
 * ng_sampler_free.  What a pointer it returns points to stays as it is
 * until the next start, gather, share, pool, max, reserve or free.
 *
 * Inside a timed loop (between the first and the last iteration of a
 * measurement) a pattern calls only ng_sampler_more, ng_sampler_timed,
 * ng_sampler_add and ng_sampler_push: inline, they allocate nothing, log
 * nothing, look up no option and make no system call, and none of them is
 * ever inside a timed region (between the two timer reads of a sample).
 * Everything else is for before or after the loop.
 *
 * A measurement's iterations are counted from 0, untimed ones included, so
 * --verify payloads and buffer parities can key on them.
 *
 * Where a change to sampling goes, once for every pattern:
 *   - how long a measurement runs: ng_sampler_start and ng_sampler_more
 *     (every rank of a measurement runs its loop on ng_sampler_more, the
 *     passive side too, so a decision to stop early, which all ranks must
 *     take together, can be made there between batches of iterations; ranks
 *     a measurement leaves idle, such as mpbibw's or rma's, would join it
 *     there);
 *   - what is kept of a sample: ng_sampler_add and ng_sampler_push (every
 *     sample passes there);
 *   - what a STATS holds and what a row says of its samples:
 *     ng_sampler_stats, ng_sampler_row_stats and ng_sampler_row (and
 *     analysis/stats.c, results.c's ng_stats_json, common.c's packing).
 *
 * Runs by time (--time SEC, run->time_s): a measurement runs its loop until
 * SEC seconds have passed on rank 0, in memory that does not grow with the
 * run.  ng_sampler_more asks every rank at agreed iterations (a bootstrap
 * exchange between two iterations, never inside a timed region): rank 0
 * says whether to go on and how many iterations until the next question
 * (about 20 ms of them, fewer near the end or before an --interval line).
 * The streams then hold at most run->count (NG_TIME_SAMPLES) values: once
 * full, every other pair of kept values is dropped and from then on only
 * every second pair of iterations is kept (pairs 2, 4, 8, ... iterations
 * apart), the same iterations on every rank.  So the statistics of a run by
 * time are those of a systematic subsample of all its iterations, in the
 * order measured (adjacent pairs stay adjacent for the alternation test);
 * the row says how many iterations ran ("iterations") and how many were kept
 * ("count").  Patterns whose loops ask anything else between iterations
 * (a look-ahead that waits for a peer) do not measure by time
 * (struct ng_pattern's by_time).
 *
 * Adaptive stopping (--ci-target REL, run->ci_target; --max-time SEC,
 * run->max_time_s) runs on the same questions: a measurement runs at least
 * the @count iterations ng_sampler_start is given (the floor: a batch ends
 * exactly there) and at most max_time_s seconds of rank 0's timer from
 * ng_sampler_start (its warm-up included); past the floor, at the questions
 * where the timed iterations have grown by a tenth since the last check,
 * every rank checks the 95% interval of the median of each of its own
 * streams that holds values (analysis/stats.h's order statistics over the
 * values kept, as the row's ci95) and says whether each lies within REL of
 * its median on both sides; the measurement stops when every rank says so.
 * So every rank decides alike from the same exchange.  The row says why it
 * stopped ("stop": "ci"; "count" when the interval was already within at
 * the floor; "time" when --max-time or --time ran out) and "elapsed_s", the
 * seconds from ng_sampler_start to the stop on rank 0's timer.
 *
 * Progress on a terminal: on the reporting rank, when stderr is a terminal,
 * a question redraws (at most four times a second) one line on stderr with
 * the size's progress and the time left (core/pattern.h,
 * ng_progress_size); never when stderr is not a terminal, never between
 * the two timer reads of a sample.
 *
 * How loggp's and plogp's budgets relate (assess.h): their batches of
 * interleaved rounds ask between batches as these questions do, and stop
 * when the CI half-widths of their parameters are within --NAME-ci of the
 * scale; --ci-target REL, when given, is that target, -c their floor of
 * rounds and --max-time SEC bounds each size's share of --NAME-budget.
 * Their samplers are NG_SAMPLER_OWN (never by time), and they tell theirs
 * why a size stopped (ng_sampler_stopped), so their rows say it alike.
 *
 * Patterns that do not run one fixed loop per measurement say so where
 * they loop (assess.h: adaptive batches of interleaved rounds; onen.c's
 * reply arrivals, whose statistics are merged rather than their samples).
 */
#ifndef NG_PATTERNS_SAMPLER_H
#define NG_PATTERNS_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analysis/hist.h"
#include "common.h"

/* Doubles each rank adds to a question of a run by time (sampler.c). */
#define NG_SAMPLER_ASK 8

/* What a sampler holds and where its samples go (ng_sampler_init). */
enum {
	/* ng_sampler_gather: every rank's streams and tail on every rank */
	NG_SAMPLER_GATHER = 1u << 0,
	/* ng_sampler_share: one rank's stream copied to every rank */
	NG_SAMPLER_SHARE = 1u << 1,
	/* the pattern runs loops of its own (ng_sampler_push; assess.h): never
	 * by time nor by the sampler's --ci-target questions */
	NG_SAMPLER_OWN = 1u << 2,
};

struct ng_sampler_spec {
	const char *name; /* the pattern, for messages */
	size_t streams;   /* values per timed iteration (0 counts as 1) */
	size_t cap;       /* samples a stream holds: the largest count, or what push may append */
	size_t tail;      /* doubles per rank gathered after the streams (counters, flags) */
	size_t pool;      /* ranks' streams the reporter pools at most (0 or 1: none) */
	unsigned flags;   /* NG_SAMPLER_* */
};

struct ng_sampler {
	struct ng_run *run;
	const char *name;
	size_t streams, cap, tail, pool;
	unsigned flags;
	bool reporter; /* this rank writes the results */
	/* the current measurement */
	size_t skip;  /* untimed iterations */
	size_t count; /* timed iterations (by time: the samples kept, known at the end) */
	uint64_t end; /* ng_sampler_more is true below this iteration without asking */
	/* by time (run->time_s > 0; see "Runs by time" above) */
	bool by_time;
	bool stopped;       /* the measurement's end is agreed */
	uint64_t stride;    /* of the iterations kept: pairs 2 * stride apart */
	uint64_t iters;     /* timed iterations run, once stopped */
	uint64_t t0;        /* timer ticks at the first timed iteration (rank 0) */
	double next_line;   /* seconds into the measurement of the next --interval line */
	uint64_t line_from; /* timed iteration of the last --interval line */
	bool line_due;      /* at the next question */
	/* adaptive stopping (--ci-target; see above) */
	bool ci;          /* run->ci_target > 0 */
	size_t floor;     /* timed iterations at least (@count of start) */
	uint64_t checked; /* timed iterations at the last check (0: none yet) */
	uint64_t t_start; /* timer ticks at ng_sampler_start (rank 0: --max-time, elapsed_s) */
	double elapsed_s; /* rank 0's seconds from start to the stop */
	const char *stop; /* why the measurement stopped: "time", "ci" or "count" */
	bool tty;         /* the reporter's stderr is a terminal: progress lines */
	bool own_stop;    /* ng_sampler_stopped was called for this measurement */
	double shown;     /* seconds into the measurement of the last progress line */
	double *ask;      /* [ranks * NG_SAMPLER_ASK] the questions' exchange (owned) */
	size_t *fill;     /* [streams] samples in each stream */
	/* memory, owned */
	double *mine;        /* [streams * cap + tail] this rank's streams, then its tail */
	double *all;         /* [ranks * (streams * cap + tail)] after gather; [ranks * cap] for share */
	double *work;        /* [max(pool, 1) * cap] reporter: pools, maxima, derived series */
	double *scratch;     /* [max(pool, 1) * cap] reporter, [cap] elsewhere: statistics */
	struct ng_hist hist; /* of the last STATS computed */
	/* its halves' rank test (analysis/stats.h, ng_stats_halves) */
	double halves_p, halves_shift;
	/* the current row */
	size_t size;      /* its size, for notes */
	bool noted;       /* its note on alternating or drifting samples is given */
	json_t *row_hist; /* --histogram: its "histogram" object (the row owns it) */
};

/*
 * Allocates what @spec asks for (the streams on every rank, the gathering
 * area with NG_SAMPLER_GATHER or NG_SAMPLER_SHARE, the reporter's pool and
 * scratch) and zeroes it.  @run must outlive the sampler.  NG_ERR_NOMEM is
 * reported ("NAME: out of memory for N samples"); nothing is left
 * allocated then, and ng_sampler_free is safe either way.  Not collective.
 */
ng_status ng_sampler_init(struct ng_sampler *s, struct ng_run *run, const struct ng_sampler_spec *spec);

/*
 * Grows the sampler to at least @streams streams (a pattern whose number of
 * streams depends on the measurement, e.g. overlap's lengths), keeping cap,
 * tail and pool; the memory moves and is zeroed.  NG_ERR_NOMEM reported (the
 * sampler is then empty but safe to free).  Between measurements only.
 */
ng_status ng_sampler_reserve(struct ng_sampler *s, size_t streams);

/* Frees everything; safe on a zeroed, partially set up or freed sampler. */
void ng_sampler_free(struct ng_sampler *s);

/* ---- one measurement ---------------------------------------------------- */

/*
 * Starts a measurement of @skip untimed and then @count timed iterations
 * (@count at most cap): empties the streams and zeroes them and the tail,
 * so a rank that times nothing contributes zeros.  By time, @count is
 * ignored; with --ci-target it is the floor.  Not collective.
 */
void ng_sampler_start(struct ng_sampler *s, size_t skip, size_t count);

/* By time: agrees with every rank whether iteration @it runs (see "Runs by
 * time"); false once the measurement is over.  Collective at the
 * iterations it decides on; called by ng_sampler_more only. */
bool ng_sampler_extend(struct ng_sampler *s, uint64_t it);

/* The loop condition: whether iteration @it of the measurement runs.  Every
 * rank of a measurement asks it for the same iterations, in order (asking
 * again for one already asked, e.g. the next iteration's, is free). */
static inline bool ng_sampler_more(struct ng_sampler *s, uint64_t it)
{
	if (it < s->end)
		return true;
	return s->by_time && ng_sampler_extend(s, it);
}

/* Whether iteration @it is timed (past the untimed ones). */
static inline bool ng_sampler_timed(const struct ng_sampler *s, uint64_t it)
{
	return it >= s->skip;
}

/* Records @v, the value of iteration @it, in @stream; nothing for an untimed
 * iteration.  At most one value per stream and iteration. */
static inline void ng_sampler_add(struct ng_sampler *s, size_t stream, uint64_t it, double v)
{
	uint64_t j, m;

	if (it < s->skip)
		return;
	if (!s->by_time) {
		s->mine[stream * s->cap + s->fill[stream]++] = v;
		return;
	}
	/* by time: pairs of iterations 2 * stride apart are kept */
	j = it - s->skip;
	m = j & (2 * s->stride - 1);
	if (m < 2 && (j / (2 * s->stride)) * 2 + m < s->cap) {
		s->fill[stream] = (size_t)((j / (2 * s->stride)) * 2 + m);
		s->mine[stream * s->cap + s->fill[stream]++] = v;
	}
}

/* Appends @v to @stream whatever the iteration: for streams that take
 * several values per iteration, or whose pattern decides itself which
 * iterations are timed (assess.h).  At most cap values per measurement. */
static inline void ng_sampler_push(struct ng_sampler *s, size_t stream, double v)
{
	s->mine[stream * s->cap + s->fill[stream]++] = v;
}

/* This rank's @stream and the number of values in it. */
static inline double *ng_sampler_mine(const struct ng_sampler *s, size_t stream)
{
	return s->mine + stream * s->cap;
}
static inline size_t ng_sampler_n(const struct ng_sampler *s, size_t stream)
{
	return s->fill[stream];
}

/* Timed iterations of the current measurement. */
static inline size_t ng_sampler_count(const struct ng_sampler *s)
{
	return s->count;
}

/* This rank's tail (spec.tail doubles, zeroed by start): what it adds to
 * the gathering beside its samples. */
static inline double *ng_sampler_tail(const struct ng_sampler *s)
{
	return s->mine + s->streams * s->cap;
}

/* ---- bringing the samples together (collective) ------------------------ */

/*
 * Every rank's streams and tail on every rank (NG_SAMPLER_GATHER), through
 * the bootstrap.  Every rank calls it once per measurement, with the same
 * count, also a rank that timed nothing.  Returns the bootstrap's status.
 */
ng_status ng_sampler_gather(struct ng_sampler *s);

/*
 * @stream of rank @root on every rank (NG_SAMPLER_SHARE): the values and
 * their number replace each rank's own.  Every rank must hold the same
 * number of values in @stream (a rank holds placeholders for values only
 * @root measures).  Returns the bootstrap's status.
 */
ng_status ng_sampler_share(struct ng_sampler *s, size_t stream, int root);

/* After gather: rank @rank's @stream (count values, zeros where it timed
 * nothing) and its tail. */
const double *ng_sampler_of(const struct ng_sampler *s, int rank, size_t stream);
const double *ng_sampler_tail_of(const struct ng_sampler *s, int rank);

/* ---- combining (reporter, after gather) ---------------------------------- */

/*
 * The @stream of the ranks @ranks[0..n) one after the other (count values
 * each, n at most spec.pool), in the sampler's work area; *@len_p = n *
 * count.  The pooled samples of paired or many-origin patterns.
 */
const double *ng_sampler_pool(struct ng_sampler *s, size_t stream, const int *ranks, size_t n, size_t *len_p);

/*
 * Per timed iteration, the largest value of @stream over all ranks (count
 * values, in the work area): the time of a collective step is the time of
 * its slowest rank.  Ranks that timed nothing contribute zeros.
 */
const double *ng_sampler_max(struct ng_sampler *s, size_t stream);

/* The reporter's work area (max(pool, 1) * cap doubles) for a series the
 * pattern derives from its samples; overwritten by pool and max. */
static inline double *ng_sampler_work(const struct ng_sampler *s)
{
	return s->work;
}

/* ---- statistics and the row --------------------------------------------- */

/*
 * Folds @x[0..n) in place into means of @k consecutive values (a sample of
 * @k timed units: e.g. two fence epochs, whose times alternate between a
 * long and a short one); a trailing group of fewer than @k values is left
 * out.  Returns the number of values now in @x (n / k; n for k < 2).
 */
size_t ng_sampler_fold(double *x, size_t n, size_t k);

/*
 * The STATS of @x[0..n) (n at most the scratch: cap, or pool * cap on the
 * reporter); @x is not reordered and is read in the order measured: a
 * series that alternates between two levels (analysis/stats.h,
 * ng_stats_alternating) is flagged in the STATS ("alternating"), as is one
 * whose first and second halves differ (ng_stats_halves, ng_stats_unstable:
 * "unstable"), and the row calls below print one note per row about it.  The STATS carries the
 * run's --percentiles (exact, from the samples), and the sampler's
 * histogram (analysis/hist.h, fixed memory allocated by init) holds the
 * values afterwards: with --histogram the row calls write its buckets into
 * the row's "histogram" under the STATS's key.  ng_sampler_bw: of the bandwidths (or
 * rates) @bytes / x[i] instead, a non-positive time counting as 0 (see
 * ng_samples_bw).  Any rank; not collective.
 */
void ng_sampler_stats(struct ng_sampler *s, const double *x, size_t n, struct ng_stats *st_p);
void ng_sampler_bw(struct ng_sampler *s, const double *x, size_t n, double bytes, struct ng_stats *st_p);

/* A pattern with loops of its own (NG_SAMPLER_OWN; assess.h) whose
 * measurement stopped by --ci-target: @iters rounds, why (@stop: "ci",
 * "count" or "time", a static string) and @elapsed_s from its start; the
 * next row says them as a run by time's does.  Cleared by start. */
void ng_sampler_stopped(struct ng_sampler *s, uint64_t iters, const char *stop, double elapsed_s);

/* Begins the row of @size for the current measurement ("count": its timed
 * iterations; by time or --ci-target also "iterations", "stop" and
 * "elapsed_s"); NULL where the row calls are no-ops (ranks but the
 * reporter).  ng_sampler_row_n: with @count given, for a pattern whose
 * measurement is not one fixed loop (assess.h). */
struct ng_row *ng_sampler_row(struct ng_sampler *s, size_t size);
struct ng_row *ng_sampler_row_n(struct ng_sampler *s, size_t size, size_t count);

/* Computes the STATS of @x[0..n) (of @bytes / x with ng_sampler_row_bw) and
 * adds it to @row under @key; the STATS also in *@st_p unless NULL. */
void ng_sampler_row_stats(struct ng_sampler *s, struct ng_row *row, const char *key, const double *x,
                          size_t n, struct ng_stats *st_p);
void ng_sampler_row_bw(struct ng_sampler *s, struct ng_row *row, const char *key, const double *x, size_t n,
                       double bytes, struct ng_stats *st_p);

/* Keeps @x[0..n) as the row's raw samples of @key (--raw). */
void ng_sampler_row_raw(const struct ng_sampler *s, struct ng_row *row, const char *key, const double *x,
                        size_t n);

#endif
