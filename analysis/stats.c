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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
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

bool ng_stats_pct_supported(size_t n, double q)
{
	return (double)n * (1.0 - q) >= 1.0 - 1e-9;
}

void ng_stats_percentiles(const double *x, size_t n, const double *q, size_t k, struct ng_stats *st)
{
	st->npct = k < NG_STATS_PCT_MAX ? k : NG_STATS_PCT_MAX;
	for (size_t i = 0; i < st->npct; i++) {
		st->pct_q[i] = q[i];
		st->pct[i] = ng_stats_pct_supported(n, q[i])
		                 ? gsl_stats_quantile_from_sorted_data(x, 1, n, q[i])
		                 : NAN;
	}
}

void ng_stats_pct_key(double q, char *buf, size_t len)
{
	snprintf(buf, len, "p%.7g", q * 100.0);
}

size_t ng_stats_parse_percentiles(const char *list, double *q, char *why, size_t len)
{
	const char *at = list;
	size_t k = 0;

	for (;;) {
		size_t item = strcspn(at, ",");
		char buf[32], *end;
		double p;

		if (item == 0 || item >= sizeof(buf)) {
			snprintf(why, len, "%s", item ? "an item is too long" : "an empty item");
			return 0;
		}
		memcpy(buf, at, item);
		buf[item] = '\0';
		p = strtod(buf, &end);
		if (*end || !(p > 0.0 && p < 100.0) || strspn(buf, "0123456789.") != item) {
			snprintf(why, len, "'%s' is not a percentage above 0 and below 100", buf);
			return 0;
		}
		/* its key (ng_stats_pct_key) names it alone: 50.00000001 would be
		 * a second p50, 99.99999999 a p100 */
		char key[40];
		ng_stats_pct_key(p / 100.0, key, sizeof(key));
		if (strtod(key + 1, NULL) != p) {
			snprintf(why, len, "'%s' has more than 7 significant digits (its key would be %s)",
			         buf, key);
			return 0;
		}
		if (k == NG_STATS_PCT_MAX) {
			snprintf(why, len, "more than %d percentiles", NG_STATS_PCT_MAX);
			return 0;
		}
		if (k > 0 && p / 100.0 <= q[k - 1]) {
			snprintf(why, len, "'%s' does not follow %.7g: the list must ascend", buf,
			         q[k - 1] * 100.0);
			return 0;
		}
		q[k++] = p / 100.0;
		if (!at[item])
			return k;
		at += item + 1;
	}
}

double ng_stats_halves(double *x, size_t n, double *shift_p)
{
	size_t h = n / 2, i = 0, j = 0;
	double *a = x, *b = x + (n - h), u = 0.0, ties = 0.0, N = 2.0 * (double)h, mu, var, z;

	*shift_p = 0.0;
	if (n < 20)
		return 1.0;
	gsl_sort(a, 1, h);
	gsl_sort(b, 1, h);
	*shift_p = gsl_stats_median_from_sorted_data(b, 1, h) - gsl_stats_median_from_sorted_data(a, 1, h);
	/* U: pairs (a, b) with a > b, ties half; and the tie groups (t^3 - t) */
	while (i < h || j < h) {
		double v = i < h && (j == h || a[i] <= b[j]) ? a[i] : b[j];
		size_t ca = 0, cb = 0;

		while (i < h && a[i] == v)
			ca++, i++;
		while (j < h && b[j] == v)
			cb++, j++;
		/* the a's of value v exceed every b before j's group */
		u += (double)ca * ((double)(j - cb) + 0.5 * (double)cb);
		ties += pow((double)(ca + cb), 3.0) - (double)(ca + cb);
	}
	mu = (double)h * (double)h / 2.0;
	var = (double)h * (double)h / 12.0 * ((N + 1.0) - ties / (N * (N - 1.0)));
	if (var <= 0.0)
		return 1.0;
	z = (fabs(u - mu) - 0.5) / sqrt(var);
	return z <= 0.0 ? 1.0 : 2.0 * gsl_cdf_ugaussian_Q(z);
}

bool ng_stats_unstable(double p, double shift, double median, double floor)
{
	return p < 1e-3 && fabs(shift) > 0.01 * fabs(median) && fabs(shift) > floor;
}

void ng_unc_add(struct ng_unc_set *u, const char *name, double size)
{
	if (!u || !name || !isfinite(size) || !(size > 0.0))
		return;
	for (size_t i = 0; i < u->n; i++) {
		if (strcmp(u->b[i].name, name) == 0) {
			u->b[i].size += size;
			return;
		}
	}
	if (u->n < NG_UNC_MAX)
		u->b[u->n++] = (struct ng_unc){.name = name, .size = size};
}

double ng_unc_sum(const struct ng_unc_set *u)
{
	double s = 0.0;

	for (size_t i = 0; u && i < u->n; i++)
		s += u->b[i].size;
	return s;
}

void ng_unc_widen(double lo, double hi, const struct ng_unc_set *u, double *tlo_p, double *thi_p)
{
	double s = ng_unc_sum(u);

	*tlo_p = isfinite(lo) ? lo - s : lo;
	*thi_p = isfinite(hi) ? hi + s : hi;
}

/* The quantile @q of @x[0..n), reordering @x (the median by selection, as
 * GSL's gsl_stats_median, so that q = 0.5 gives what compare always gave). */
static double quantile_of(double *x, size_t n, double q)
{
	if (q == 0.5)
		return gsl_stats_median(x, 1, n);
	gsl_sort(x, 1, n);
	return gsl_stats_quantile_from_sorted_data(x, 1, n, q);
}

void ng_stats_ratio_ci(const double *a, size_t na, const double *b, size_t nb, double q, double *lo_p,
                       double *hi_p)
{
	/* at most ~4e7 draws: fewer resamples for very long sample lists
	 * (compare's files are untrusted), never fewer than 200 */
	size_t reps = (size_t)fmin(2000.0, fmax(200.0, 4e7 / (double)(na + nb)));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double *ra = malloc(na * sizeof(*ra)), *rb = malloc(nb * sizeof(*rb));
	double *lr = malloc(reps * sizeof(*lr));
	size_t k = 0;

	*lo_p = *hi_p = NAN;
	if (!rng || !ra || !rb || !lr || !na || !nb)
		goto out;
	gsl_rng_set(rng, 1);
	for (size_t r = 0; r < reps; r++) {
		double qa, qb;

		for (size_t i = 0; i < na; i++)
			ra[i] = a[gsl_rng_uniform_int(rng, na)];
		for (size_t i = 0; i < nb; i++)
			rb[i] = b[gsl_rng_uniform_int(rng, nb)];
		qa = quantile_of(ra, na, q);
		qb = quantile_of(rb, nb, q);
		if (qa > 0 && qb > 0)
			lr[k++] = log(qb / qa);
	}
	if (k > 10) {
		gsl_sort(lr, 1, k);
		*lo_p = exp(gsl_stats_quantile_from_sorted_data(lr, 1, k, 0.025));
		*hi_p = exp(gsl_stats_quantile_from_sorted_data(lr, 1, k, 0.975));
	}
out:
	free(lr);
	free(ra);
	free(rb);
	if (rng)
		gsl_rng_free(rng);
}
