/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of analysis/hist: quantiles read from the log-linear histogram
 * against the exact quantiles (GSL, linear interpolation) of the same
 * samples, within 1% relative, over uniform, log-normal, bimodal and
 * heavy-tailed (Pareto) samples; the bucket layout (every value inside its
 * bucket, buckets at most 1/128 of their lower bound wide); non-positive
 * values and the bounded memory.  Exit 0 on pass, 1 on failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "analysis/hist.h"

#define N 200000

static unsigned int ng_checks, ng_failures;

static void ng_check(bool ok, const char *what, double got, double want)
{
	ng_checks++;
	if (!ok) {
		ng_failures++;
		fprintf(stderr, "FAIL: %s: got %.9g, expected %.9g\n", what, got, want);
	}
}

static double ng_draw(gsl_rng *rng, int dist)
{
	switch (dist) {
	case 0:
		return 1.0 + 9.0 * gsl_rng_uniform(rng); /* uniform 1..10 */
	case 1:
		return gsl_ran_lognormal(rng, 0.5, 0.8);
	case 2: /* bimodal: 2 us and 40 us, 30% in the second */
		return gsl_rng_uniform(rng) < 0.3 ? gsl_ran_gaussian(rng, 1.0) + 40.0
		                                  : fabs(gsl_ran_gaussian(rng, 0.05)) + 2.0;
	default:
		return gsl_ran_pareto(rng, 1.2, 0.5); /* heavy tail: infinite variance */
	}
}

int main(void)
{
	static const char *const names[] = {"uniform", "log-normal", "bimodal", "pareto"};
	static const double qs[] = {0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0};
	double *x = malloc(N * sizeof(*x));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct ng_hist h;
	char what[128];

	if (!x || !rng || !ng_hist_init(&h))
		return 1;
	gsl_rng_set(rng, 23);
	for (int d = 0; d < 4; d++) {
		for (size_t n = 1000; n <= N; n *= 200) {
			ng_hist_reset(&h);
			for (size_t i = 0; i < n; i++) {
				x[i] = ng_draw(rng, d);
				ng_hist_add(&h, x[i]);
			}
			gsl_sort(x, 1, n);
			for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
				double want = gsl_stats_quantile_from_sorted_data(x, 1, n, qs[k]);
				double got = ng_hist_quantile(&h, qs[k]);

				snprintf(what, sizeof(what), "%s n=%zu q=%g", names[d], n, qs[k]);
				ng_check(fabs(got - want) <= 0.01 * want, what, got, want);
			}
			ng_check(h.n == n, "count", (double)h.n, (double)n);
		}
	}

	/* every value lies in its bucket; the bucket is narrow enough */
	for (int i = 0; i < 100000; i++) {
		double v = exp(gsl_ran_flat(rng, -20.0, 27.0)), lo, hi;
		size_t b = ng_hist_index(v);

		ng_hist_bounds(b, &lo, &hi);
		ng_check(lo <= v && v < hi, "value inside its bucket", v, lo);
		ng_check(hi - lo <= lo / 128.0 * (1 + 1e-12), "bucket width", hi - lo, lo / 128.0);
	}

	/* zero and negative values: counted, below every bucket, min exact */
	ng_hist_reset(&h);
	for (int i = 0; i < 10; i++)
		ng_hist_add(&h, i < 3 ? 0.0 : (double)i);
	ng_hist_add(&h, NAN);
	ng_check(h.n == 10 && h.nonpos == 3, "non-positive values counted", (double)h.nonpos, 3);
	ng_check(ng_hist_quantile(&h, 0.2) == 0.0, "a quantile among the zeros", ng_hist_quantile(&h, 0.2),
	         0);
	ng_check(ng_hist_quantile(&h, 1.0) == 9.0, "the largest exactly", ng_hist_quantile(&h, 1.0), 9);
	ng_hist_reset(&h);
	ng_check(isnan(ng_hist_quantile(&h, 0.5)), "empty: NaN", ng_hist_quantile(&h, 0.5), NAN);
	/* bounded memory: the buckets are all there is, whatever the count */
	ng_check(NG_HIST_BUCKETS * sizeof(*h.counts) <= 128 * 1024, "bucket memory", NG_HIST_BUCKETS * 8.0,
	         128 * 1024);

	ng_hist_free(&h);
	gsl_rng_free(rng);
	free(x);
	printf("%u checks, %u failures\n", ng_checks, ng_failures);
	return ng_failures ? 1 : 0;
}
