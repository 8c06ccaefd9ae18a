/* SPDX-License-Identifier: BSD-3-Clause */
/* The log-linear histogram; the contract is in hist.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

bool ng_hist_init(struct ng_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->counts = calloc(NG_HIST_BUCKETS, sizeof(*h->counts));
	ng_hist_reset(h);
	return h->counts != NULL;
}

void ng_hist_free(struct ng_hist *h)
{
	free(h->counts);
	h->counts = NULL;
}

void ng_hist_reset(struct ng_hist *h)
{
	if (h->counts)
		memset(h->counts, 0, NG_HIST_BUCKETS * sizeof(*h->counts));
	h->n = h->nonpos = 0;
	h->min = INFINITY;
	h->max = -INFINITY;
}

size_t ng_hist_index(double v)
{
	int e;
	double m = frexp(v, &e); /* v = m 2^e, m in [0.5, 1) */
	long oct = (long)e - 1 - NG_HIST_EMIN;
	long sub = (long)((2.0 * m - 1.0) * NG_HIST_SUB);

	if (oct < 0)
		return 0;
	if (oct >= NG_HIST_EMAX - NG_HIST_EMIN)
		return NG_HIST_BUCKETS - 1;
	if (sub >= NG_HIST_SUB)
		sub = NG_HIST_SUB - 1;
	return (size_t)oct * NG_HIST_SUB + (size_t)sub;
}

void ng_hist_bounds(size_t i, double *lo_p, double *hi_p)
{
	int e = (int)(i / NG_HIST_SUB) + NG_HIST_EMIN;
	double base = ldexp(1.0, e), w = base / NG_HIST_SUB;

	*lo_p = base + w * (double)(i % NG_HIST_SUB);
	*hi_p = *lo_p + w;
}

void ng_hist_add(struct ng_hist *h, double v)
{
	if (isnan(v))
		return;
	h->n++;
	h->min = v < h->min ? v : h->min;
	h->max = v > h->max ? v : h->max;
	if (v <= 0.0)
		h->nonpos++;
	else
		h->counts[ng_hist_index(v)]++;
}

/* The value of order statistic @k (0-based) as the histogram knows it. */
static double ng_hist_order(const struct ng_hist *h, uint64_t k)
{
	uint64_t seen = h->nonpos;
	double lo, hi, v;

	if (k == 0)
		return h->min;
	if (k + 1 >= h->n)
		return h->max;
	if (k < seen)
		return h->min;
	for (size_t i = 0; i < NG_HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (k < seen) {
			ng_hist_bounds(i, &lo, &hi);
			v = 0.5 * (lo + hi);
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}

double ng_hist_quantile(const struct ng_hist *h, double q)
{
	double pos, frac, a, b;
	uint64_t j;

	if (h->n == 0)
		return NAN;
	q = q < 0.0 ? 0.0 : q > 1.0 ? 1.0 : q;
	pos = q * (double)(h->n - 1);
	j = (uint64_t)pos;
	frac = pos - (double)j;
	a = ng_hist_order(h, j);
	if (frac == 0.0 || j + 1 >= h->n)
		return a;
	b = ng_hist_order(h, j + 1);
	return a + frac * (b - a);
}
