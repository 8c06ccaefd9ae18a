/* SPDX-License-Identifier: BSD-3-Clause */
/* Overlap ratio and skew slope; the contract is in overlap.h. */
#include "overlap.h"

#include <math.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

void ng_boot_medians(const double *x, size_t n, size_t B, uint64_t seed, double *scratch, double *med)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);

	if (!rng) {
		/* GSL's own allocation failure calls its error handler (abort);
		 * not reached with the default handler. */
		for (size_t b = 0; b < B; b++)
			med[b] = NAN;
		return;
	}
	gsl_rng_set(rng, (unsigned long)(seed ^ (seed >> 32)));
	for (size_t b = 0; b < B; b++) {
		for (size_t i = 0; i < n; i++)
			scratch[i] = x[gsl_rng_uniform_int(rng, n)];
		/* Quickselect (rearranges scratch). */
		med[b] = gsl_stats_median(scratch, 1, n);
	}
	gsl_rng_free(rng);
}

static double ng_clip01(double v)
{
	return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

void ng_overlap_ratio(double t0, const double *t0_boot, double e, const double *e_boot, size_t B,
                      double *scratch, struct ng_ratio *r_p)
{
	size_t k = 0;

	r_p->value = r_p->lo = r_p->hi = r_p->raw = NAN;
	if (!(t0 > 0.0))
		return;
	r_p->raw = 1.0 - e / t0;
	r_p->value = ng_clip01(r_p->raw);
	for (size_t b = 0; b < B; b++)
		if (t0_boot[b] > 0.0 && isfinite(e_boot[b]))
			scratch[k++] = 1.0 - e_boot[b] / t0_boot[b];
	if (k < 2)
		return;
	gsl_sort(scratch, 1, k);
	r_p->lo = ng_clip01(gsl_stats_quantile_from_sorted_data(scratch, 1, k, 0.025));
	r_p->hi = ng_clip01(gsl_stats_quantile_from_sorted_data(scratch, 1, k, 0.975));
}

double ng_overlap_bound(double x, double t0)
{
	if (!(t0 > 0.0))
		return NAN;
	if (!(x > 0.0))
		return 0.0;
	return x >= t0 ? 1.0 : x / t0;
}
