/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clock model's fit: which points to keep, the line through them.
 * Contract in clockfit.h.
 */
#include "clockfit.h"

#include <math.h>
#include <stdlib.h>

static int ng_clockfit_rtt_cmp(const void *a, const void *b)
{
	double x = ((const struct ng_clockfit_pt *)a)->rtt, y = ((const struct ng_clockfit_pt *)b)->rtt;

	return (x > y) - (x < y);
}

/*
 * Keeps the points whose round trip is within twice the least (and 1 us) of
 * it, at least a third of them: a burst whose every exchange was delayed (a
 * rank descheduled throughout) says little about the offset.  Reorders @p,
 * the kept points first; returns their number.
 */
int ng_clockfit_keep(struct ng_clockfit_pt *p, int n)
{
	double limit;
	int k = 0;

	qsort(p, (size_t)n, sizeof(*p), ng_clockfit_rtt_cmp);
	limit = fmax(2.0 * p[0].rtt, p[0].rtt + 1.0);
	while (k < n && (p[k].rtt <= limit || k < n / 3))
		k++;
	return k;
}

/* Least squares y = a + s x over @n points; the largest residual to @res_p,
 * the slope's standard error to @se_p. */
void ng_clockfit_line(const struct ng_clockfit_pt *p, int n, double *a_p, double *s_p, double *res_p,
                      double *se_p)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, res = 0, ss = 0;

	for (int k = 0; k < n; k++) {
		mx += p[k].x / n;
		my += p[k].y / n;
	}
	for (int k = 0; k < n; k++) {
		sxx += (p[k].x - mx) * (p[k].x - mx);
		sxy += (p[k].x - mx) * (p[k].y - my);
	}
	*s_p = sxx > 0 ? sxy / sxx : 0.0;
	*a_p = my - *s_p * mx;
	for (int k = 0; k < n; k++) {
		double e = p[k].y - (*a_p + *s_p * p[k].x);

		res = fmax(res, fabs(e));
		ss += e * e;
	}
	*res_p = res;
	*se_p = n > 2 && sxx > 0 ? sqrt(ss / (n - 2) / sxx) : 0.0;
}

double ng_clockfit_slope_sys(const struct ng_clockfit_pt *p, int n)
{
	double mx = 0, rmin, num = 0, den = 0;

	if (n < 2)
		return 0;
	rmin = p[0].rtt;
	for (int i = 0; i < n; i++) {
		mx += p[i].x / n;
		rmin = p[i].rtt < rmin ? p[i].rtt : rmin;
	}
	for (int i = 0; i < n; i++) {
		double d = p[i].x - mx;

		num += (d < 0 ? -d : d) * (p[i].rtt - rmin) / 2.0;
		den += d * d;
	}
	return den > 0 ? num / den : 0;
}
