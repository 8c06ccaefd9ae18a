/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Descriptive statistics of a sample; the contract is in stats.h.
 *
 * The confidence interval of the median is the classic distribution-free one:
 * with B ~ Binomial(n, 1/2) and 0-based ranks j and k = n - 1 - j,
 *
 *   P(X_(j) <= m <= X_(k)) = 1 - 2 P(B <= j),
 *
 * so the narrowest symmetric 95% interval uses the largest j with
 * P(B <= j) <= 0.025.  P(B <= j) is summed term by term in double precision
 * (no normal approximation) for every n: the sum runs downwards from j, where
 * the terms are largest, until they no longer change it.
 */
#include <math.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "stats.h"

/* Half of 1 - 0.95: the probability left in each tail. */
#define NG_STATS_TAIL 0.025

/* P(B <= j) for B ~ Binomial(n, 1/2), j < n. */
static double ng_binom_half_cdf(size_t j, size_t n)
{
	double nd = (double)n, jd = (double)j;
	double lg_n, lg_j, lg_nj, term, sum = 0.0;
	int sign;
	size_t i;

	/* lgamma_r: lgamma() would write the global signgam. */
	lg_n = lgamma_r(nd + 1.0, &sign);
	lg_j = lgamma_r(jd + 1.0, &sign);
	lg_nj = lgamma_r(nd - jd + 1.0, &sign);
	term = exp(lg_n - lg_j - lg_nj - nd * M_LN2);

	/* pmf(i - 1) = pmf(i) * i / (n - i + 1): the terms fall as i falls. */
	for (i = j + 1; i-- > 0;) {
		sum += term;
		if (term <= sum * 1e-17)
			break;
		term *= (double)i / (double)(n - i + 1);
	}
	return sum;
}

bool ng_stats_median_ci_ranks(size_t n, size_t *lo_p, size_t *hi_p)
{
	double guess;
	size_t j;

	if (n == 0)
		return false;

	/* Start near the normal approximation, then settle on the exact rank. */
	guess = (double)n / 2.0 - 0.98 * sqrt((double)n) - 1.0;
	j = guess > 0.0 ? (size_t)guess : 0;
	if (j > (n - 1) / 2)
		j = (n - 1) / 2;
	while (j > 0 && ng_binom_half_cdf(j, n) > NG_STATS_TAIL)
		j--;
	if (ng_binom_half_cdf(j, n) > NG_STATS_TAIL)
		return false;
	while (j + 1 <= (n - 1) / 2 && ng_binom_half_cdf(j + 1, n) <= NG_STATS_TAIL)
		j++;

	*lo_p = j;
	*hi_p = n - 1 - j;
	return true;
}

void ng_stats_compute(double *x, size_t n, struct ng_stats *out_p)
{
	struct ng_stats s = {0};
	size_t lo, hi;

	if (n == 0) {
		*out_p = s;
		return;
	}

	gsl_sort(x, 1, n);
	s.n = n;
	s.min = x[0];
	s.max = x[n - 1];
	s.median = gsl_stats_median_from_sorted_data(x, 1, n);
	s.mean = gsl_stats_mean(x, 1, n);
	s.stddev = n > 1 ? gsl_stats_sd_m(x, 1, n, s.mean) : 0.0;
	s.p99 = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.99);

	if (ng_stats_median_ci_ranks(n, &lo, &hi)) {
		s.ci_lo = x[lo];
		s.ci_hi = x[hi];
		s.ci_exact = true;
	} else {
		s.ci_lo = s.min;
		s.ci_hi = s.max;
		s.ci_exact = false;
	}
	*out_p = s;
}

double ng_stats_sign_r1(const double *x, size_t n, double center)
{
	double num = 0.0, den = 0.0;
	int prev = 0;

	for (size_t i = 0; i < n; i++) {
		int sg = (x[i] > center) - (x[i] < center);

		if (i > 0) {
			num += (double)(prev * sg);
			den += (double)(prev * sg != 0);
		}
		prev = sg;
	}
	return den > 0.0 ? num / den : 0.0;
}

bool ng_stats_alternating(double r1, size_t n)
{
	double lim;

	if (n < 8)
		return false;
	lim = 3.0 / sqrt((double)n);
	return r1 < -(lim > 0.5 ? lim : 0.5);
}
