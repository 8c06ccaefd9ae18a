/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `ngauge compare` over several runs per side (compare_runs.h): a run's
 * values, the hierarchical bootstrap, the spread between runs.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "compare_runs.h"
#include "load.h"

/* Resamples of the bootstrap; at most about this many draws in all (the
 * files are untrusted: a long sample list makes fewer resamples, never
 * fewer than 200). */
#define NG_CMP_HIER_RESAMPLES 2000
#define NG_CMP_HIER_DRAWS     4e7

size_t ng_cmp_raw_samples(const json_t *row, const char *key, double **x_p)
{
	const json_t *arr = json_object_get(json_object_get(row, "raw"), key), *v;
	size_t n = 0, i;
	double *x;

	*x_p = NULL;
	if (!json_is_array(arr) || json_array_size(arr) < 2)
		return 0;
	x = ng_plot_xcalloc(json_array_size(arr), sizeof(*x));
	json_array_foreach(arr, i, v)
	{
		if (json_is_number(v) && isfinite(json_number_value(v)))
			x[n++] = json_number_value(v);
	}
	if (n < 2) {
		free(x);
		return 0;
	}
	*x_p = x;
	return n;
}

bool ng_cmp_run_from(const json_t *row, const char *key, struct ng_cmp_run *r)
{
	const json_t *st = json_object_get(row, key);
	double lo, hi;

	*r = (struct ng_cmp_run){0};
	r->nx = ng_cmp_raw_samples(row, key, &r->x);
	if (r->nx) {
		double *tmp = ng_plot_xcalloc(r->nx, sizeof(*tmp));

		memcpy(tmp, r->x, r->nx * sizeof(*tmp));
		gsl_sort(tmp, 1, r->nx);
		r->median = gsl_stats_median_from_sorted_data(tmp, 1, r->nx);
		free(tmp);
	} else {
		r->median = ng_plot_num(st, "median");
		ng_plot_ci(st, &lo, &hi);
		if (lo > 0 && hi >= lo && isfinite(hi))
			r->lse = (log(hi) - log(lo)) / (2 * 1.96);
	}
	if (!(r->median > 0) || !isfinite(r->median)) {
		ng_cmp_run_free(r);
		return false;
	}
	return true;
}

void ng_cmp_run_free(struct ng_cmp_run *r)
{
	free(r->x);
	*r = (struct ng_cmp_run){0};
}

double ng_cmp_small_n(size_t n)
{
	if (n < 2)
		return 1.0;
	return sqrt((double)n / (double)(n - 1)) * gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) / 1.96;
}

double ng_cmp_log_sd(const struct ng_cmp_run *r, size_t n)
{
	double m = 0, ss = 0;

	if (n < 2)
		return NAN;
	for (size_t i = 0; i < n; i++)
		m += log(r[i].median) / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (log(r[i].median) - m) * (log(r[i].median) - m);
	return sqrt(ss / (double)(n - 1));
}

/* One resample of a side: the log medians of @n runs drawn with
 * replacement, each resampled within, into @lm. */
static void resample_side(gsl_rng *rng, const struct ng_cmp_run *r, size_t n, double *tmp, double *lm)
{
	for (size_t j = 0; j < n; j++) {
		const struct ng_cmp_run *run = &r[gsl_rng_uniform_int(rng, n)];

		if (run->nx) {
			for (size_t i = 0; i < run->nx; i++)
				tmp[i] = run->x[gsl_rng_uniform_int(rng, run->nx)];
			lm[j] = log(fmax(gsl_stats_median(tmp, 1, run->nx), 1e-300));
		} else {
			lm[j] = log(run->median) + (run->lse > 0 ? gsl_ran_gaussian(rng, run->lse) : 0.0);
		}
	}
}

/* The Hodges-Lehmann estimate of the shift from @la to @lb: the median of
 * every difference lb[j] - la[i] (@work holds na * nb). */
static double hodges_lehmann(const double *la, size_t na, const double *lb, size_t nb, double *work)
{
	size_t k = 0;

	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			work[k++] = lb[j] - la[i];
	gsl_sort(work, 1, k);
	return gsl_stats_median_from_sorted_data(work, 1, k);
}

static double median_log(const struct ng_cmp_run *r, size_t n, double *work)
{
	for (size_t i = 0; i < n; i++)
		work[i] = log(r[i].median);
	gsl_sort(work, 1, n);
	return gsl_stats_median_from_sorted_data(work, 1, n);
}

static size_t most_samples(const struct ng_cmp_run *r, size_t n, double *total_p)
{
	size_t most = 1;

	for (size_t i = 0; i < n; i++) {
		most = r[i].nx > most ? r[i].nx : most;
		*total_p += (double)(r[i].nx ? r[i].nx : 1);
	}
	return most;
}

void ng_cmp_hier(const struct ng_cmp_run *a, size_t na, const struct ng_cmp_run *b, size_t nb,
                 double *med_a_p, double *med_b_p, double *ratio_p, double *lo_p, double *hi_p)
{
	double total = 0, lr, f;
	size_t most = most_samples(a, na, &total), mb = most_samples(b, nb, &total);
	size_t reps = (size_t)fmin(NG_CMP_HIER_RESAMPLES, fmax(200.0, NG_CMP_HIER_DRAWS / total)), k = 0;
	double *tmp = ng_plot_xcalloc(most > mb ? most : mb, sizeof(*tmp));
	double *la = ng_plot_xcalloc(na, sizeof(*la)), *lb = ng_plot_xcalloc(nb, sizeof(*lb));
	double *work = ng_plot_xcalloc(na * nb + na + nb, sizeof(*work));
	double *d = ng_plot_xcalloc(reps, sizeof(*d));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	size_t nmin = na >= 2 && nb >= 2 ? (na < nb ? na : nb) : na >= 2 ? na : nb;

	*med_a_p = exp(median_log(a, na, work));
	*med_b_p = exp(median_log(b, nb, work));
	for (size_t i = 0; i < na; i++)
		la[i] = log(a[i].median);
	for (size_t j = 0; j < nb; j++)
		lb[j] = log(b[j].median);
	lr = hodges_lehmann(la, na, lb, nb, work);
	*ratio_p = exp(lr);
	*lo_p = *hi_p = NAN;
	gsl_rng_set(rng, 1);
	for (size_t r = 0; r < reps; r++) {
		double x;

		resample_side(rng, a, na, tmp, la);
		resample_side(rng, b, nb, tmp, lb);
		x = hodges_lehmann(la, na, lb, nb, work);
		if (isfinite(x))
			d[k++] = x;
	}
	if (k > 10) {
		gsl_sort(d, 1, k);
		f = ng_cmp_small_n(nmin);
		*lo_p = exp(lr - f * fmax(lr - gsl_stats_quantile_from_sorted_data(d, 1, k, 0.025), 0.0));
		*hi_p = exp(lr + f * fmax(gsl_stats_quantile_from_sorted_data(d, 1, k, 0.975) - lr, 0.0));
	}
	gsl_rng_free(rng);
	free(d);
	free(work);
	free(la);
	free(lb);
	free(tmp);
}
