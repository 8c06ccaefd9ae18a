/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of analysis/stats: descriptive statistics on data sets with
 * hand-computed answers, the order-statistic ranks of the median's 95% CI
 * against published tables and against GSL's binomial distribution, and the
 * interval's coverage in a simulation; the bootstrap interval of a ratio
 * of quantiles.  Exit 0 on pass, 1 on failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "analysis/stats.h"

#define NG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct ng_test_ctx {
	unsigned int checks;
	unsigned int failures;
};

static void ng_check(struct ng_test_ctx *c, bool ok, const char *what, size_t n)
{
	c->checks++;
	if (!ok) {
		c->failures++;
		fprintf(stderr, "FAIL (n=%zu): %s\n", n, what);
	}
}

static bool ng_close(double got, double want)
{
	return fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want));
}

static void ng_check_val(struct ng_test_ctx *c, double got, double want, const char *what, size_t n)
{
	c->checks++;
	if (!ng_close(got, want)) {
		c->failures++;
		fprintf(stderr, "FAIL (n=%zu): %s = %.17g, expected %.17g\n", n, what, got, want);
	}
}

struct ng_stats_case {
	double x[10];
	size_t n;
	struct ng_stats want;
};

/* Expected values computed by hand: p99 by linear interpolation at (n-1)*0.99. */
/* clang-format off */
static const struct ng_stats_case ng_cases[] = {
	{ /* odd n, too small for a 95% interval */
	  .x = { 5, 1, 4, 2, 3 }, .n = 5,
	  .want = { .n = 5, .min = 1, .median = 3, .mean = 3,
		    .stddev = 1.5811388300841898, /* sqrt(10/4) */
		    .p99 = 4.96, .max = 5, .ci_lo = 1, .ci_hi = 5, .ci_exact = false } },
	{ /* even n: median is the mean of the 5th and 6th values; CI ranks 1..8 */
	  .x = { 10, 2, 8, 4, 6, 1, 9, 3, 7, 5 }, .n = 10,
	  .want = { .n = 10, .min = 1, .median = 5.5, .mean = 5.5,
		    .stddev = 3.0276503540974917, /* sqrt(82.5/9) */
		    .p99 = 9.91, .max = 10, .ci_lo = 2, .ci_hi = 9, .ci_exact = true } },
	{ /* even n, fractional values */
	  .x = { 0.5, 2.5, 1.0, 4.0 }, .n = 4,
	  .want = { .n = 4, .min = 0.5, .median = 1.75, .mean = 2.0,
		    .stddev = 1.5811388300841898, /* sqrt(7.5/3) */
		    .p99 = 3.955, .max = 4.0, .ci_lo = 0.5, .ci_hi = 4.0, .ci_exact = false } },
	{ /* odd n with ties and negatives */
	  .x = { 2, -1, 10, 0, -3, 2, -1 }, .n = 7,
	  .want = { .n = 7, .min = -3, .median = 0, .mean = 9.0 / 7.0,
		    .stddev = 4.231401884099631, /* sqrt((125 - 81/7)/6) */
		    .p99 = 9.52, .max = 10, .ci_lo = -3, .ci_hi = 10, .ci_exact = true } },
	{ /* n == 6: the smallest n with an interval, ranks 0..5 */
	  .x = { 3, 1, 2, 6, 5, 4 }, .n = 6,
	  .want = { .n = 6, .min = 1, .median = 3.5, .mean = 3.5,
		    .stddev = 1.8708286933869707, /* sqrt(17.5/5) */
		    .p99 = 5.95, .max = 6, .ci_lo = 1, .ci_hi = 6, .ci_exact = true } },
	{ /* a single value: stddev 0, interval [min, max] */
	  .x = { 7 }, .n = 1,
	  .want = { .n = 1, .min = 7, .median = 7, .mean = 7, .stddev = 0,
		    .p99 = 7, .max = 7, .ci_lo = 7, .ci_hi = 7, .ci_exact = false } },
	{ /* empty sample: all zero */
	  .n = 0, .want = { 0 } },
};
/* clang-format on */

static void ng_test_known(struct ng_test_ctx *c)
{
	size_t i, k;

	for (i = 0; i < NG_ARRAY_SIZE(ng_cases); i++) {
		const struct ng_stats_case *tc = &ng_cases[i];
		const struct ng_stats *w = &tc->want;
		double x[10];
		struct ng_stats s;
		size_t n = tc->n;

		for (k = 0; k < NG_ARRAY_SIZE(x); k++)
			x[k] = tc->x[k];
		ng_stats_compute(x, n, &s);

		ng_check(c, s.n == w->n, "n", n);
		ng_check_val(c, s.min, w->min, "min", n);
		ng_check_val(c, s.median, w->median, "median", n);
		ng_check_val(c, s.mean, w->mean, "mean", n);
		ng_check_val(c, s.stddev, w->stddev, "stddev", n);
		ng_check_val(c, s.p99, w->p99, "p99", n);
		ng_check_val(c, s.max, w->max, "max", n);
		ng_check_val(c, s.ci_lo, w->ci_lo, "ci_lo", n);
		ng_check_val(c, s.ci_hi, w->ci_hi, "ci_hi", n);
		ng_check(c, s.ci_exact == w->ci_exact, "ci_exact", n);
		ng_check(c, s.ci_lo <= s.median && s.median <= s.ci_hi, "CI contains the median", n);
		for (k = 1; k < n; k++)
			ng_check(c, x[k - 1] <= x[k], "sample sorted in place", n);
	}
}

/*
 * 95% CI of the median, 1-based order statistics (r, s), as tabulated in
 * nonparametric statistics texts (exact binomial, coverage >= 95%).
 */
static const struct {
	size_t n, r, s;
} ng_ci_table[] = {
    {6, 1, 6},   {7, 1, 7},   {8, 1, 8},    {9, 2, 8},    {10, 2, 9},   {11, 2, 10},   {12, 3, 10},
    {13, 3, 11}, {14, 3, 12}, {15, 4, 12},  {16, 4, 13},  {17, 5, 13},  {18, 5, 14},   {19, 5, 15},
    {20, 6, 15}, {25, 8, 18}, {30, 10, 21}, {40, 14, 27}, {50, 18, 33}, {100, 40, 61}, {1000, 469, 532},
};

static void ng_test_ci_ranks(struct ng_test_ctx *c)
{
	size_t i, n, lo, hi;

	for (n = 0; n < 6; n++)
		ng_check(c, !ng_stats_median_ci_ranks(n, &lo, &hi), "no interval below n = 6", n);

	for (i = 0; i < NG_ARRAY_SIZE(ng_ci_table); i++) {
		n = ng_ci_table[i].n;
		if (!ng_stats_median_ci_ranks(n, &lo, &hi)) {
			ng_check(c, false, "interval exists", n);
			continue;
		}
		c->checks++;
		if (lo != ng_ci_table[i].r - 1 || hi != ng_ci_table[i].s - 1) {
			c->failures++;
			fprintf(stderr, "FAIL (n=%zu): ranks %zu..%zu, expected %zu..%zu\n", n, lo, hi,
			        ng_ci_table[i].r - 1, ng_ci_table[i].s - 1);
		}
	}

	/* Definition, against GSL's binomial CDF: coverage >= 95%, and the next
	 * narrower symmetric pair falls below it. */
	for (n = 6; n <= 1000; n++) {
		double cov, cov_narrower;

		if (!ng_stats_median_ci_ranks(n, &lo, &hi)) {
			ng_check(c, false, "interval exists", n);
			continue;
		}
		ng_check(c, hi == n - 1 - lo, "ranks symmetric", n);
		ng_check(c, lo <= (n - 1) / 2 && hi >= n / 2, "ranks around the median", n);
		cov = 1.0 - 2.0 * gsl_cdf_binomial_P((unsigned int)lo, 0.5, (unsigned int)n);
		cov_narrower = 1.0 - 2.0 * gsl_cdf_binomial_P((unsigned int)lo + 1, 0.5, (unsigned int)n);
		ng_check(c, cov >= 0.95, "coverage at least 95%", n);
		ng_check(c, lo + 1 > (n - 1) / 2 || cov_narrower < 0.95, "narrowest such pair", n);
	}

	/* Large n: close to the normal approximation n/2 -+ 1.96 sqrt(n)/2. */
	n = 1000000;
	if (ng_stats_median_ci_ranks(n, &lo, &hi)) {
		double want = n / 2.0 - 0.5 - 1.959964 * sqrt((double)n) / 2.0;

		ng_check(c, fabs((double)lo - want) <= 1.0, "large-n rank near normal approximation", n);
		ng_check(c, hi == n - 1 - lo, "ranks symmetric", n);
	} else {
		ng_check(c, false, "interval exists", n);
	}
}

/*
 * Coverage: 2000 samples of n = 25 from an exponential distribution (mean 1,
 * true median ln 2); the nominal coverage of ranks 7..17 is 95.67%.
 */
static void ng_test_coverage(struct ng_test_ctx *c)
{
	enum { NG_TRIALS = 2000, NG_N = 25 };
	const double true_median = M_LN2;
	gsl_rng *rng;
	double x[NG_N];
	struct ng_stats s;
	size_t trial, i, covered = 0;
	double frac;

	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!rng) {
		ng_check(c, false, "gsl_rng_alloc", NG_N);
		return;
	}
	gsl_rng_set(rng, 20240611u);
	for (trial = 0; trial < NG_TRIALS; trial++) {
		for (i = 0; i < NG_N; i++)
			x[i] = gsl_ran_exponential(rng, 1.0);
		ng_stats_compute(x, NG_N, &s);
		ng_check(c, s.ci_exact, "interval exists", NG_N);
		ng_check(c, s.ci_lo <= s.median && s.median <= s.ci_hi, "CI contains the median", NG_N);
		if (s.ci_lo <= true_median && true_median <= s.ci_hi)
			covered++;
	}
	gsl_rng_free(rng);

	frac = (double)covered / NG_TRIALS;
	printf("coverage of the true median: %.2f%% (%zu of %d)\n", 100.0 * frac, covered, NG_TRIALS);
	ng_check(c, frac >= 0.93 && frac <= 0.975, "coverage within 93..97.5%", NG_N);
}

/*
 * The alternation flag: a series that alternates between two levels (with
 * outliers that leave a Pearson r1 near 0) is flagged; independent samples,
 * a slow drift and a series of one value are not; fewer than 10 never.
 */
static void ng_test_alternation(struct ng_test_ctx *c)
{
	enum { N = 200 };
	double x[N];
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	unsigned int iid_flagged = 0;

	gsl_rng_set(rng, 7);
	for (size_t i = 0; i < N; i++)
		x[i] = (i % 2 ? 0.70 : 0.06) + 0.01 * gsl_rng_uniform(rng) + (i % 37 == 5 ? 50.0 : 0.0);
	ng_check(c, ng_stats_sign_r1(x, N, 0.38) < -0.85, "alternating series with outliers: r1 near -1", N);
	ng_check(c, ng_stats_alternating(ng_stats_sign_r1(x, N, 0.38), N), "alternating series flagged", N);
	ng_check(c, !ng_stats_alternating(ng_stats_sign_r1(x, 7, 0.38), 7), "7 samples never flagged", 7);
	ng_check(c, !ng_stats_alternating(ng_stats_sign_r1(x, 9, 0.38), 9), "9 samples: 3 / sqrt(9) = 1", 9);
	ng_check(c, ng_stats_alternating(ng_stats_sign_r1(x, 10, 0.38), 10), "10 alternating samples flagged",
	         10);
	for (size_t i = 0; i < N; i++)
		x[i] = 1.0 + 0.001 * (double)i;
	ng_check(c, !ng_stats_alternating(ng_stats_sign_r1(x, N, x[N / 2]), N), "a drift is not alternation",
	         N);
	for (size_t i = 0; i < N; i++)
		x[i] = 2.0;
	ng_check_val(c, ng_stats_sign_r1(x, N, 2.0), 0.0, "one value: r1", N);
	/* independent samples: flagged in (far) fewer than 1% of 1000 series */
	for (int rep = 0; rep < 1000; rep++) {
		struct ng_stats st;
		double y[N];

		for (size_t i = 0; i < N; i++)
			x[i] = y[i] = gsl_ran_lognormal(rng, 0.0, 0.5);
		ng_stats_compute(y, N, &st);
		iid_flagged += ng_stats_alternating(ng_stats_sign_r1(x, N, st.median), N);
	}
	ng_check(c, iid_flagged < 10, "independent samples rarely flagged", iid_flagged);
	gsl_rng_free(rng);
}

/*
 * The halves' rank test: a steady series is not flagged (in far fewer than 1%
 * of 1000), one whose second half is 10% slower is; the p-value of a small
 * case against the exact U (by hand: first half {1, 2, 3, ...} all below the
 * second).
 */
static void ng_test_halves(struct ng_test_ctx *c)
{
	enum { N = 400 };
	double x[N], shift, p;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	unsigned int steady = 0, drift = 0;

	gsl_rng_set(rng, 11);
	for (int rep = 0; rep < 1000; rep++) {
		for (size_t i = 0; i < N; i++)
			x[i] = gsl_ran_lognormal(rng, 1.0, 0.3);
		p = ng_stats_halves(x, N, &shift);
		steady += ng_stats_unstable(p, shift, 2.7, 0.0);
		for (size_t i = 0; i < N; i++)
			x[i] = gsl_ran_lognormal(rng, 1.0, 0.1) * (i >= N / 2 ? 1.10 : 1.0);
		p = ng_stats_halves(x, N, &shift);
		drift += ng_stats_unstable(p, shift, 2.7, 0.0);
	}
	ng_check(c, steady < 5, "steady series rarely unstable", steady);
	ng_check(c, drift > 990, "a 10% step is unstable", drift);
	/* 20 values, halves 0..9 and 10..19: U = 0, z = (50 - 0.5) / sqrt(175) */
	for (size_t i = 0; i < 20; i++)
		x[i] = (double)i;
	p = ng_stats_halves(x, 20, &shift);
	ng_check_val(c, shift, 10.0, "halves: shift", 20);
	ng_check(c, fabs(p - 2.0 * gsl_cdf_ugaussian_Q(49.5 / sqrt(175.0))) < 1e-12, "halves: p", 20);
	/* ties: every value equal, p = 1 */
	for (size_t i = 0; i < 20; i++)
		x[i] = 3.0;
	ng_check_val(c, ng_stats_halves(x, 20, &shift), 1.0, "halves: all tied", 20);
	ng_check_val(c, ng_stats_halves(x, 19, &shift), 1.0, "halves: fewer than 20", 19);
	gsl_rng_free(rng);
}

/* ng_stats_ratio_ci: the interval of a ratio of quantiles holds the true
 * ratio of two samples drawn from one distribution scaled by 2 (median and
 * p99), is exactly 3 for samples that differ by a factor of 3 only, is seeded
 * (the same answer twice) and is NAN where the quantiles are not positive. */
static void ng_test_ratio_ci(struct ng_test_ctx *c)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double a[400], b[400], lo, hi, lo2, hi2;

	gsl_rng_set(rng, 7);
	for (size_t i = 0; i < 400; i++) {
		a[i] = 10.0 + gsl_ran_exponential(rng, 2.0);
		b[i] = 2.0 * (10.0 + gsl_ran_exponential(rng, 2.0));
	}
	ng_stats_ratio_ci(a, 400, b, 400, 0.5, &lo, &hi);
	ng_check(c, lo < 2.0 && 2.0 < hi && hi - lo < 0.2, "ratio_ci: median of 2x holds 2, narrow", 400);
	ng_stats_ratio_ci(a, 400, b, 400, 0.5, &lo2, &hi2);
	ng_check(c, lo == lo2 && hi == hi2, "ratio_ci: seeded, the same interval twice", 400);
	ng_stats_ratio_ci(a, 400, b, 400, 0.99, &lo, &hi);
	ng_check(c, lo < 2.0 && 2.0 < hi, "ratio_ci: p99 of 2x holds 2", 400);
	for (size_t i = 0; i < 400; i++)
		b[i] = 3.0 * a[i];
	ng_stats_ratio_ci(a, 400, b, 400, 0.5, &lo, &hi);
	ng_check(c, lo <= 3.0 && hi >= 3.0 && hi / lo < 1.2, "ratio_ci: b = 3a: about 3", 400);
	for (size_t i = 0; i < 400; i++)
		a[i] = 0.0;
	ng_stats_ratio_ci(a, 400, b, 400, 0.5, &lo, &hi);
	ng_check(c, isnan(lo) && isnan(hi), "ratio_ci: zero quantiles: NAN", 400);
	gsl_rng_free(rng);
}

int main(void)
{
	struct ng_test_ctx c = {0};

	ng_test_known(&c);
	ng_test_ci_ranks(&c);
	ng_test_coverage(&c);
	ng_test_alternation(&c);
	ng_test_halves(&c);
	ng_test_ratio_ci(&c);

	printf("%u checks, %u failures\n", c.checks, c.failures);
	return c.failures ? 1 : 0;
}
