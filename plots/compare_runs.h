/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The statistics of `ngauge compare` over several runs per side
 * (compare_runs.c; doc/compare.md): a row's values in one run, the
 * hierarchical bootstrap of the ratio of two sides' medians, the spread of
 * run medians, and the small-sample factor of an interval over few runs.
 * Pure functions of their input: the same runs give the same interval.
 */
#ifndef NG_PLOT_COMPARE_RUNS_H
#define NG_PLOT_COMPARE_RUNS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* One run's values of a row's measure: its raw samples (x, nx >= 2), or
 * else its median with the log-scale standard error of its reported 95%
 * interval (lse; 0 when it has none). */
struct ng_cmp_run {
	double *x; /* owned, NULL without samples */
	size_t nx;
	double median, lse;
};

/* The finite raw samples of @key in @row, malloc'ed into *x_p; 0 (and
 * NULL) when there are fewer than two. */
size_t ng_cmp_raw_samples(const json_t *row, const char *key, double **x_p);

/* Fills @r from @key of @row (a result row): false (nothing owned) when the
 * row has no positive median there. */
bool ng_cmp_run_from(const json_t *row, const char *key, struct ng_cmp_run *r);
void ng_cmp_run_free(struct ng_cmp_run *r);

/*
 * The ratio B/A of two sides' runs and its hierarchical bootstrap.  The
 * ratio is the Hodges-Lehmann estimate over runs: the median of the ratios
 * of every B run's median to every A run's (a run that met a burst of load
 * moves it little); *med_a_p, *med_b_p: the median of each side's run
 * medians.  Its interval: 2,000 resamples from a fixed seed, each drawing as
 * many runs as a side has, with replacement, then each drawn run's samples
 * with replacement (a run without samples: its median moved by a normal draw
 * of its reported interval's log-scale error), the estimate of each; the
 * 2.5% and 97.5% points, widened about the ratio by ng_cmp_small_n() of the
 * smaller side with at least two runs.
 */
void ng_cmp_hier(const struct ng_cmp_run *a, size_t na, const struct ng_cmp_run *b, size_t nb,
                 double *med_a_p, double *med_b_p, double *ratio_p, double *lo_p, double *hi_p);

/* sqrt(n / (n - 1)) * t(0.975, n - 1) / 1.96: how much wider an interval
 * over n runs must be than the percentile bootstrap's, which sees (n-1)/n
 * of their variance and a normal quantile where Student's applies; 1 for
 * n < 2. */
double ng_cmp_small_n(size_t n);

/* The sample standard deviation of the logarithms of the runs' medians
 * (n - 1 in the denominator); NaN for fewer than two runs. */
double ng_cmp_log_sd(const struct ng_cmp_run *r, size_t n);

#endif
