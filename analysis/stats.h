/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Descriptive statistics of a sample (GSL).
 *
 * median: gsl_stats_median_from_sorted_data (mean of the two middle values
 *         for an even count).
 * p99:    gsl_stats_quantile_from_sorted_data(0.99), linear interpolation.
 * stddev: sample standard deviation (n-1); 0 for n == 1.
 * ci95 of the median: distribution-free order-statistic interval; the ranks
 *         j, k are the smallest symmetric pair around the median whose binomial
 *         coverage P(X_(j) <= m <= X_(k)) is at least 95%.  For n < 6 no such
 *         pair exists and the interval is [min, max] (ci_exact = false).
 * alternating: the samples, in the order measured, alternate between two
 *         levels (ng_stats_sign_r1 and ng_stats_alternating below).
 */
#ifndef NG_STATS_H
#define NG_STATS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Systematic bounds (issue 23 item 4).  A confidence interval covers the
 * sampling error only; the instrument adds errors that no number of samples
 * averages away: the timer's resolution and the cost of one read in every
 * difference of two reads, the timer's drift over the run, an emulator's
 * lateness, the offset bound where ranks' clocks are compared.  Each is a
 * bound b_i >= 0 on |error| of the figure, in the figure's unit, named.  They
 * combine with the sampling interval by worst-case addition:
 *
 *   ci95_total = [lo - sum_i b_i, hi + sum_i b_i]
 *
 * the conservative choice (no assumption that the bounds are independent
 * or random: a read overhead has the same sign in every sample, so it does
 * not average out, and a root-sum-square would claim that it does).
 */
#define NG_UNC_MAX 8

struct ng_unc {
	const char *name; /* static string, e.g. "timer_resolution" */
	double size;      /* bound >= 0, in the figure's unit */
};

struct ng_unc_set {
	size_t n;
	struct ng_unc b[NG_UNC_MAX];
};

/* Adds bound @size named @name (static) to @u; a bound of the same name
 * adds to it; a size that is not finite or not above 0 is left out, and so
 * is a new name beyond NG_UNC_MAX. */
void ng_unc_add(struct ng_unc_set *u, const char *name, double size);

/* The sum of @u's bounds (0 for none or NULL). */
double ng_unc_sum(const struct ng_unc_set *u);

/* ci95_total of the interval [@lo, @hi] under @u: each side moved out by
 * the sum of the bounds; a side that is not finite stays as it is. */
void ng_unc_widen(double lo, double hi, const struct ng_unc_set *u, double *tlo_p, double *thi_p);

/* Percentiles a STATS can carry (--percentiles). */
#define NG_STATS_PCT_MAX 12

struct ng_stats {
	size_t n;
	double min, median, mean, stddev, p99, max;
	double ci_lo, ci_hi; /* 95% CI of the median */
	bool ci_exact;       /* false when n is too small for a 95% interval */
	bool alternating;    /* set by the caller: ng_stats_alternating, in the order measured */
	bool unstable;       /* set by the caller: ng_stats_unstable, in the order measured */
	/* the chosen percentiles (ng_stats_percentiles): pct[i] of fraction
	 * pct_q[i], NaN where n cannot support it */
	size_t npct;
	double pct_q[NG_STATS_PCT_MAX], pct[NG_STATS_PCT_MAX];
	/* systematic bounds on the median (ng_unc_add; none from
	 * ng_stats_compute): ci95_total is ci95 widened by them */
	struct ng_unc_set unc;
};

/* Computes the statistics of @x[0..n).  Sorts @x in place.  n == 0 gives all
 * fields 0 and n = 0. */
void ng_stats_compute(double *x, size_t n, struct ng_stats *out_p);

/* Order-statistic ranks (0-based, inclusive) of the 95% CI of the median for
 * a sample of n; returns false when n is too small. */
bool ng_stats_median_ci_ranks(size_t n, size_t *lo_p, size_t *hi_p);

/*
 * The @k quantiles @q[0..k) (fractions, 0 < q < 1) of the sorted
 * @x[0..n) into st->pct (GSL's interpolation, as p99), st->npct = k; a
 * quantile the count cannot support, n (1 - q) < 1 (fewer samples beyond
 * it than one), is NaN (p90 needs 10 samples, p99.9 1,000, p99.99 10,000).
 * @k at most NG_STATS_PCT_MAX.
 */
void ng_stats_percentiles(const double *x, size_t n, const double *q, size_t k, struct ng_stats *st);

/* Whether n samples support the @q quantile (above). */
bool ng_stats_pct_supported(size_t n, double q);

/* The key of the @q quantile in a STATS: "p" and the percentage, e.g.
 * p50, p99.9, p99.99 (at most 7 significant digits). */
void ng_stats_pct_key(double q, char *buf, size_t len);

/*
 * Parses --percentiles LIST: comma-separated percentages, each a decimal
 * number above 0 and below 100, ascending, no empty item, at most
 * NG_STATS_PCT_MAX of them, into fractions @q (p / 100).  Returns the
 * number parsed, or 0 with a reason in @why ("'x' is not a percentage
 * above 0 and below 100").
 */
size_t ng_stats_parse_percentiles(const char *list, double *q, char *why, size_t len);

/*
 * Alternation of @x[0..n) in the order measured: the lag-1 autocorrelation
 * of the signs of x[i] - @center (a sample equal to @center counts 0),
 *
 *   r1 = sum_i s_i s_(i+1) / #{i : s_i s_(i+1) != 0},
 *
 * -1 for samples that fall on either side of @center in turn, near 0
 * (standard deviation about 1/sqrt(n)) for independent ones.  The signs make
 * it blind to the size of outliers (a Pearson r1 of a series that alternates
 * with a few large outliers stays near 0).  Returns 0 when no two
 * consecutive samples differ from @center.  With @center the median, ng_stats_alternating
 * decides.
 */
double ng_stats_sign_r1(const double *x, size_t n, double center);

/* Whether @r1 (ng_stats_sign_r1 of n samples about their median) says they
 * alternate: n >= 8 and r1 < -max(0.5, 3 / sqrt(n)), three standard
 * deviations of r1 for independent samples, and never less than half (so
 * it takes n >= 10 in practice: r1 >= -1). */
bool ng_stats_alternating(double r1, size_t n);

/*
 * Stationarity: the first half of @x[0..n) (in the order measured) against
 * the second (the middle sample of an odd n left out), by the Mann-Whitney
 * rank test (normal approximation with the tie correction): the two-sided
 * p-value that the halves come from one distribution, and in *@shift_p the
 * second half's median minus the first's.  Reorders @x (each half sorted).
 * p = 1 for fewer than 20 samples.
 */
double ng_stats_halves(double *x, size_t n, double *shift_p);

/* Whether halves with p-value @p and median shift @shift, in a series of
 * median @median, differ beyond chance and beyond noise: p < 0.001 (one in a
 * thousand steady series is flagged), |shift| > 1% of |median| and |shift| >
 * @floor (what the instrument cannot tell apart, e.g. two timer resolutions;
 * 0 for none). @shift, @median and @floor in the same unit. */
bool ng_stats_unstable(double p, double shift, double median, double floor);

/*
 * Percentile bootstrap of the ratio of quantiles quantile_q(b) / quantile_q(a)
 * (q = 0.5: the ratio of medians, as `ngauge compare` reports it; q = 0.99:
 * of the 99th percentiles, as the congestion pattern's impact factor): each
 * resample draws na values of @a and nb of @b with replacement, and the 95%
 * interval is the 2.5th and 97.5th percentile of the log ratios of the
 * resamples whose quantiles are both positive.  At most about 4e7 draws in
 * all (fewer resamples for very long samples, never fewer than 200, at most
 * 2000); the generator (MT19937) is seeded with 1, so the same samples give
 * the same interval.  *@lo_p and *@hi_p are NAN when 10 resamples or fewer
 * had positive quantiles, or when memory ran out (na, nb >= 1).
 */
void ng_stats_ratio_ci(const double *a, size_t na, const double *b, size_t nb, double q, double *lo_p,
                       double *hi_p);

#endif
