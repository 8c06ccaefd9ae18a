/* SPDX-License-Identifier: BSD-3-Clause */
/* Straight lines, robust lines and segmented regression; the contract is in
 * lines.h. */
#include "lines.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

/* The standard normal 97.5% quantile, for fits without residual degrees of
 * freedom (where the given standard errors are all there is). */
#define NG_Z975 1.959963984540054

/* BIC parameters charged per breakpoint (see lines.h). */
#define NG_SEG_BREAK_PARAMS 4.0
/* Tukey bisquare tuning constant, in robust standard deviations. */
#define NG_TUKEY_C   6.0
#define NG_IRLS_ITER 30
#define NG_RM_MAX    64 /* repeated-median start up to this many points */
/* Segmentation limits: robust stage up to this many points, any split at
 * all up to NG_SEG_MAX_POINTS (the cost matrix is N^2 doubles). */
#define NG_SEG_ROBUST_MAX 200
#define NG_SEG_MAX_POINTS 1024

double ng_t95(double dof)
{
	if (!(dof >= 1.0))
		return NG_Z975;
	return gsl_cdf_tdist_Pinv(0.975, dof);
}

/* ---- straight lines ----------------------------------------------------- */

int ng_fit_line(const double *x, const double *y, const double *sigma, size_t n, double x0,
                struct ng_fit *fit_p)
{
	double c0, c1, cov00, cov01, cov11, chisq, scale, t;
	double *xs, *w = NULL;
	struct ng_fit f = {.n = n, .x0 = x0};
	bool spread = false;
	int rc = -1;

	if (n < 2)
		return -1;
	for (size_t i = 1; i < n && !spread; i++)
		spread = x[i] != x[0];
	if (!spread)
		return -1;

	xs = malloc(n * sizeof(*xs));
	if (!xs)
		return -1;
	if (sigma) {
		w = malloc(n * sizeof(*w));
		if (!w)
			goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		xs[i] = x[i] - x0;
		if (w)
			w[i] = 1.0 / (sigma[i] * sigma[i]);
	}

	if (w) {
		gsl_fit_wlinear(xs, 1, w, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &chisq);
		/* Absolute errors, but never trust them to be smaller than the
		 * scatter says. */
		scale = n > 2 ? chisq / (double)(n - 2) : 1.0;
		if (scale < 1.0)
			scale = 1.0;
	} else {
		/* gsl_fit_linear already scales by sumsq / (n - 2). */
		gsl_fit_linear(xs, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &chisq);
		scale = 1.0;
	}
	f.a = c0;
	f.b = c1;
	f.rss = chisq;
	f.se_a = sqrt(cov00 * scale);
	f.se_b = sqrt(cov11 * scale);
	f.cov_ab = cov01 * scale;
	if (n > 2 || w) {
		t = ng_t95((double)n - 2.0);
		f.a_lo = f.a - t * f.se_a;
		f.a_hi = f.a + t * f.se_a;
		f.b_lo = f.b - t * f.se_b;
		f.b_hi = f.b + t * f.se_b;
	} else {
		/* Two points, no errors given: a line through both, no interval. */
		f.a_lo = f.b_lo = -INFINITY;
		f.a_hi = f.b_hi = INFINITY;
	}
	*fit_p = f;
	rc = 0;

out_free:
	free(w);
	free(xs);
	return rc;
}

/* ---- robust lines (Tukey bisquare) ---------------------------------------- */

/* Tukey's bisquare loss, scaled so that rho(u) = u^2 / 2 near 0, and its
 * IRLS weight. */
static double ng_tukey_rho(double u)
{
	const double c = NG_TUKEY_C;
	double t;

	if (fabs(u) >= c)
		return c * c / 6.0;
	t = 1.0 - (u / c) * (u / c);
	return c * c / 6.0 * (1.0 - t * t * t);
}

static double ng_tukey_w(double u)
{
	const double c = NG_TUKEY_C;
	double t;

	if (fabs(u) >= c)
		return 0.0;
	t = 1.0 - (u / c) * (u / c);
	return t * t;
}

/* Weighted least squares without allocation (weights w >= 0): a + b (x - x0).
 * Returns -1 when fewer than two distinct x carry weight. */
static int ng_wls(const double *x, const double *y, const double *w, size_t n, double x0, double *a_p,
                  double *b_p)
{
	double W = 0.0, mx = 0.0, my = 0.0, sxx = 0.0, sxy = 0.0;

	for (size_t i = 0; i < n; i++) {
		double dx, dy;

		if (!(w[i] > 0.0))
			continue;
		W += w[i];
		dx = x[i] - x0 - mx;
		dy = y[i] - my;
		mx += dx * w[i] / W;
		my += dy * w[i] / W;
		sxx += w[i] * dx * (x[i] - x0 - mx);
		sxy += w[i] * dx * (y[i] - my);
	}
	if (!(W > 0.0) || !(sxx > 0.0))
		return -1;
	*b_p = sxy / sxx;
	*a_p = my - *b_p * mx;
	return 0;
}

/*
 * Siegel's repeated-median line through (x, y): slope = median over i of the
 * median over j of the pairwise slopes, intercept = median of y - b (x - x0).
 * Half the points may be wild without moving it: the start for IRLS.
 * @tmp: 2n doubles.  Returns -1 when the x are all equal.
 */
static int ng_repeated_median(const double *x, const double *y, size_t n, double x0, double *tmp, double *a_p,
                              double *b_p)
{
	double *inner = tmp, *outer = tmp + n;
	size_t no = 0;

	for (size_t i = 0; i < n; i++) {
		size_t ni = 0;

		for (size_t j = 0; j < n; j++) {
			if (x[j] != x[i])
				inner[ni++] = (y[j] - y[i]) / (x[j] - x[i]);
		}
		if (ni)
			outer[no++] = gsl_stats_median(inner, 1, ni); /* quickselect; reorders */
	}
	if (!no)
		return -1;
	*b_p = gsl_stats_median(outer, 1, no);
	for (size_t i = 0; i < n; i++)
		inner[i] = y[i] - *b_p * (x[i] - x0);
	*a_p = gsl_stats_median(inner, 1, n);
	return 0;
}

/*
 * IRLS with Tukey weights from the line (*a_p, *b_p): the weights go to
 * @rw, @w is work (n); returns the bisquare loss of the line it ends on,
 * or INFINITY when fewer than two distinct x keep weight.
 */
static double ng_irls(const double *x, const double *y, const double *sigma, size_t n, double x0,
                      double scale, double *a_p, double *b_p, double *rw, double *w)
{
	double a = *a_p, b = *b_p, cost = 0.0;

	for (size_t i = 0; i < n; i++)
		rw[i] = 1.0;
	for (int it = 0; it < NG_IRLS_ITER; it++) {
		double change = 0.0;

		if (it > 0 && ng_wls(x, y, w, n, x0, &a, &b))
			return INFINITY;
		for (size_t i = 0; i < n; i++) {
			double u = (y[i] - a - b * (x[i] - x0)) / (sigma[i] * scale), nw = ng_tukey_w(u);

			if (fabs(nw - rw[i]) > change)
				change = fabs(nw - rw[i]);
			rw[i] = nw;
			w[i] = nw / (sigma[i] * sigma[i]);
		}
		if (change < 1e-6)
			break;
	}
	for (size_t i = 0; i < n; i++)
		cost += 2.0 * ng_tukey_rho((y[i] - a - b * (x[i] - x0)) / (sigma[i] * scale));
	*a_p = a;
	*b_p = b;
	return cost;
}

int ng_fit_line_robust(const double *x, const double *y, const double *sigma, size_t n, double x0,
                       double scale, double *rw, struct ng_fit *fit_p, double *cost_p)
{
	double *w, *xs, *ys, *ss, *rw2, a = 0.0, b = 0.0, a2 = 0.0, b2 = 0.0, cost = 0.0, c1 = INFINITY, c2;
	size_t m;
	int rc = -1;

	if (n < 2)
		return -1;
	if (!(scale > 0.0))
		scale = 1.0;
	w = malloc(5 * n * sizeof(*w));
	if (!w)
		return -1;
	xs = w + n;
	ys = xs + n;
	ss = ys + n;
	rw2 = ss + n;

	/* Two starts: the repeated median (up to NG_RM_MAX points: it is
	 * quadratic) and weighted least squares; the end of lower loss wins. */
	for (size_t i = 0; i < n; i++)
		w[i] = 1.0 / (sigma[i] * sigma[i]);
	if (ng_wls(x, y, w, n, x0, &a2, &b2))
		goto out_free;
	if (n <= NG_RM_MAX && !ng_repeated_median(x, y, n, x0, xs, &a, &b))
		c1 = ng_irls(x, y, sigma, n, x0, scale, &a, &b, rw, w);
	for (size_t i = 0; i < n; i++)
		w[i] = 1.0 / (sigma[i] * sigma[i]);
	c2 = ng_irls(x, y, sigma, n, x0, scale, &a2, &b2, rw2, w);
	if (c2 < c1 - 1e-9)
		memcpy(rw, rw2, n * sizeof(*rw));
	else if (c1 == INFINITY)
		goto out_free;

	/* The final fit over the points that kept weight, with its interval. */
	m = 0;
	for (size_t i = 0; i < n; i++) {
		if (rw[i] < 1e-9)
			continue;
		xs[m] = x[i];
		ys[m] = y[i];
		ss[m] = sigma[i] / sqrt(rw[i]);
		m++;
	}
	if (ng_fit_line(xs, ys, ss, m, x0, fit_p))
		goto out_free;
	for (size_t i = 0; i < n; i++)
		cost += 2.0 * ng_tukey_rho((y[i] - fit_p->a - fit_p->b * (x[i] - x0)) / (sigma[i] * scale));
	if (cost_p)
		*cost_p = cost;
	rc = 0;

out_free:
	free(w);
	return rc;
}

double ng_resid_scale(double *u, size_t n)
{
	double s;

	if (n == 0)
		return 1.0;
	for (size_t i = 0; i < n; i++)
		u[i] = fabs(u[i]);
	gsl_sort(u, 1, n);
	s = 1.4826 * gsl_stats_median_from_sorted_data(u, 1, n);
	return s > 1.0 ? s : 1.0;
}

/* ---- segmented regression ------------------------------------------------ */

/* Running weighted regression sums (West / Welford updates: no cancellation
 * between large sums). */
struct ng_acc {
	double W, mx, my, cxx, cxy, cyy;
};

static void ng_acc_add(struct ng_acc *a, double w, double x, double y)
{
	double dx = x - a->mx, dy = y - a->my;

	a->W += w;
	a->mx += dx * w / a->W;
	a->my += dy * w / a->W;
	a->cxx += w * dx * (x - a->mx);
	a->cxy += w * dx * (y - a->my);
	a->cyy += w * dy * (y - a->my);
}

static double ng_acc_rss(const struct ng_acc *a)
{
	double rss = a->cyy;

	if (a->cxx > 0.0)
		rss -= a->cxy * a->cxy / a->cxx;
	return rss > 0.0 ? rss : 0.0;
}

/*
 * Least total cost partition of points 0..n-1 into m = 1..M segments of at
 * least @min_pts points, from @cost[i * n + j] (segment i..j; INFINITY where
 * not allowed).  best[m] receives the total, first[m][k] the segments.
 */
struct ng_dp {
	double best[NG_SEG_MAX + 1];
	size_t first[NG_SEG_MAX + 1][NG_SEG_MAX];
};

static int ng_dp_run(const double *cost, size_t n, size_t M, struct ng_dp *dp)
{
	size_t stride = n + 1, m, i, j;
	double *best = malloc((M + 1) * stride * sizeof(*best));
	size_t *back = calloc((M + 1) * stride, sizeof(*back));
	int rc = -1;

	if (!best || !back)
		goto out_free;
	for (i = 0; i < (M + 1) * stride; i++)
		best[i] = INFINITY;
	best[0] = 0.0; /* zero segments cover zero points */
	/* best[m][j + 1]: least cost of points 0..j in m segments; back: the
	 * first point of the last one. */
	for (j = 0; j < n; j++) {
		for (i = 0; i <= j; i++) {
			double c = cost[i * n + j];

			if (c == INFINITY)
				continue;
			for (m = 1; m <= M; m++) {
				double prev = best[(m - 1) * stride + i];

				if (prev + c < best[m * stride + j + 1]) {
					best[m * stride + j + 1] = prev + c;
					back[m * stride + j + 1] = i;
				}
			}
		}
	}
	for (m = 0; m <= NG_SEG_MAX; m++)
		dp->best[m] = INFINITY;
	for (m = 1; m <= M; m++) {
		dp->best[m] = best[m * stride + n];
		if (dp->best[m] == INFINITY)
			continue;
		j = n;
		for (size_t k = m; k >= 1; k--) {
			i = back[k * stride + j];
			dp->first[m][k - 1] = i;
			j = i;
		}
	}
	rc = 0;
out_free:
	free(back);
	free(best);
	return rc;
}

/* Picks the number of segments of least BIC (ties: fewer) into @s. */
static void ng_dp_pick(const struct ng_dp *dp, const double *bic, size_t M, size_t n, struct ng_segments *s)
{
	size_t mbest = 1;
	double bmin = INFINITY;

	for (size_t m = 1; m <= M; m++) {
		if (bic[m] < bmin - 1e-9) {
			bmin = bic[m];
			mbest = m;
		}
	}
	s->nseg = mbest;
	s->rss = dp->best[mbest];
	for (size_t k = 0; k < mbest; k++) {
		size_t next = k + 1 < mbest ? dp->first[mbest][k + 1] : n;

		s->first[k] = dp->first[mbest][k];
		s->count[k] = next - s->first[k];
	}
}

static double ng_penalty(size_t m, size_t n)
{
	return (2.0 * (double)m + NG_SEG_BREAK_PARAMS * (double)(m - 1)) * log((double)n);
}

/*
 * The noise scale, whatever the lines: each inner point's distance from the
 * line through its two neighbours in units of its standard deviation
 * (pseudo-residuals, Gasser, Sroka and Jennen-Steinmetz 1986).  A jump or a
 * bend moves only the points beside it, so these measure the noise, never
 * the misfit of too few segments; a wild point moves three of them, so the
 * scale is their lower quartile over 0.3186 (normal noise), which a sixth
 * of wild points would not move as it moves the median.  At least 1.
 */
static double ng_local_scale(const double *x, const double *y, const double *sig, size_t n, double *u)
{
	size_t m = 0;
	double s;

	for (size_t i = 1; i + 1 < n; i++) {
		double d = x[i + 1] - x[i - 1], a = (x[i + 1] - x[i]) / d, b = (x[i] - x[i - 1]) / d;
		double e = a * y[i - 1] + b * y[i + 1] - y[i];

		u[m++] = fabs(e) / sqrt(sig[i] * sig[i] + a * a * sig[i - 1] * sig[i - 1] +
		                        b * b * sig[i + 1] * sig[i + 1]);
	}
	if (m == 0)
		return 1.0;
	gsl_sort(u, 1, m);
	s = gsl_stats_quantile_from_sorted_data(u, 1, m, 0.25) / 0.3186;
	return s > 1.0 ? s : 1.0;
}

/*
 * Whether point @i lies on the least-squares line through the @k points
 * before it (@dir < 0) or after it (@dir > 0), extrapolated: within c = 6
 * standard deviations of its own error and the line's at x_i, times
 * @scale.  False where there are not @k such points.
 */
static bool ng_seg_on_neighbours(const double *x, const double *y, const double *sig, size_t n, size_t i,
                                 int dir, size_t k, double scale)
{
	size_t lo = dir < 0 ? i - k : i + 1;
	struct ng_fit f;

	if (dir < 0 ? i < k : i + k >= n)
		return false;
	/* the line's intercept at x_i is its value there, se_a its error */
	if (ng_fit_line(x + lo, y + lo, sig + lo, k, x[i], &f))
		return false;
	return fabs(y[i] - f.a) <= NG_TUKEY_C * scale * sqrt(sig[i] * sig[i] + f.se_a * f.se_a);
}

/*
 * Stage 2's cost of segment i..j: the Tukey loss of its robust line with
 * residual scale @scale, where the line may reject a size as an outlier
 * (costing at most 12) only alone, with at least @min_pts sizes kept on
 * the line, and at an edge only a size that also lies off the line of the
 * sizes beyond that edge (@off_left[i], @off_right[j]).  Any other size off
 * the line counts in full, u^2: a run of sizes off a line is a regime, and
 * an edge size that continues the neighbouring sizes' line says that the
 * breakpoint is on its other side.  INFINITY when nothing fits.  @rw: n.
 */
static double ng_seg_robust_cost(const double *x, const double *y, const double *sig, size_t i, size_t j,
                                 size_t min_pts, double scale, const bool *off_left, const bool *off_right,
                                 double *rw)
{
	size_t len = j + 1 - i, kept = 0;
	struct ng_fit f;
	double c = 0.0;

	if (ng_fit_line_robust(x + i, y + i, sig + i, len, x[i], scale, rw, &f, NULL))
		return INFINITY;
	for (size_t k = 0; k < len; k++)
		kept += rw[k] >= 1e-9;
	for (size_t k = 0; k < len; k++) {
		double u = (y[i + k] - f.a - f.b * (x[i + k] - x[i])) / (sig[i + k] * scale);
		bool alone = kept >= min_pts && (k == 0 ? off_left[i] : rw[k - 1] >= 1e-9) &&
		             (k + 1 == len ? off_right[j] : rw[k + 1] >= 1e-9);

		c += rw[k] >= 1e-9 || alone ? 2.0 * ng_tukey_rho(u) : u * u;
	}
	return c;
}

/*
 * A size at a segment's edge that its segment's robust line rejects lies
 * off both lines beside the breakpoint (it was disturbed, or the change
 * happened within its measurement): it is left in the segment whose line
 * it is nearer, so that the breakpoint lands at the gap the other sizes
 * show.  Segments keep @min_pts sizes.  @rw: n doubles.
 */
static void ng_seg_edges(const double *x, const double *y, const double *sig, size_t min_pts,
                         struct ng_segments *s, double *rw)
{
	for (size_t k = 1; k < s->nseg; k++) {
		size_t f0 = s->first[k - 1], c0 = s->count[k - 1], f1 = s->first[k], c1 = s->count[k];
		struct ng_fit l0, l1;
		bool out0, out1;
		double d0, d1;

		if (ng_fit_line_robust(x + f0, y + f0, sig + f0, c0, x[f0], s->scale, rw, &l0, NULL))
			continue;
		out0 = rw[c0 - 1] < 1e-9;
		if (ng_fit_line_robust(x + f1, y + f1, sig + f1, c1, x[f1], s->scale, rw, &l1, NULL))
			continue;
		out1 = rw[0] < 1e-9;
		if (out1 && c1 > min_pts) {
			/* the first of segment k */
			d0 = fabs(y[f1] - l0.a - l0.b * (x[f1] - x[f0]));
			d1 = fabs(y[f1] - l1.a);
			if (d0 < d1) {
				s->first[k]++;
				s->count[k]--;
				s->count[k - 1]++;
			}
		} else if (out0 && c0 > min_pts) {
			/* the last of segment k - 1 */
			size_t a = f0 + c0 - 1;

			d0 = fabs(y[a] - l0.a - l0.b * (x[a] - x[f0]));
			d1 = fabs(y[a] - l1.a - l1.b * (x[a] - x[f1]));
			if (d1 < d0) {
				s->first[k]--;
				s->count[k]++;
				s->count[k - 1]--;
			}
		}
	}
}

int ng_segments_fit(const double *x, const double *y, const double *sigma, size_t n, size_t max_seg,
                    size_t min_pts, struct ng_segments *seg_p)
{
	struct ng_segments s = {.scale = 1.0};
	struct ng_acc *acc = NULL, all = {0};
	double *cost = NULL, *sig1 = NULL, *u = NULL, *rw = NULL, rss_floor;
	bool *offl = NULL, *offr = NULL;
	struct ng_dp dp;
	size_t M, m, i, j;
	int rc = -1;

	for (m = 0; m <= NG_SEG_MAX; m++)
		s.bic[m] = INFINITY;
	if (min_pts < 2)
		min_pts = 2;
	if (max_seg < 1)
		max_seg = 1;
	if (max_seg > NG_SEG_MAX)
		max_seg = NG_SEG_MAX;
	if (n < min_pts)
		return -1;
	M = n / min_pts < max_seg ? n / min_pts : max_seg;
	if (n > NG_SEG_MAX_POINTS)
		M = 1;

	sig1 = malloc(n * sizeof(*sig1));
	u = malloc(n * sizeof(*u));
	rw = malloc(n * sizeof(*rw));
	offl = malloc(2 * n * sizeof(*offl));
	offr = offl + n;
	acc = calloc(n, sizeof(*acc));
	cost = malloc((M > 1 ? n * n : 1) * sizeof(*cost));
	if (!sig1 || !u || !rw || !offl || !acc || !cost)
		goto out_free;
	for (i = 0; i < n; i++)
		sig1[i] = sigma ? sigma[i] : 1.0;
	for (i = 0; i < n; i++)
		ng_acc_add(&all, 1.0 / (sig1[i] * sig1[i]), x[i], y[i]);

	if (M == 1) {
		s.nseg = 1;
		s.first[0] = 0;
		s.count[0] = n;
		s.rss = ng_acc_rss(&all);
		goto out_ok;
	}

	/* Stage 1: least squares.  acc[i] accumulates points i..j. */
	for (j = 0; j < n; j++) {
		double w = 1.0 / (sig1[j] * sig1[j]);

		for (i = 0; i <= j; i++) {
			ng_acc_add(&acc[i], w, x[j], y[j]);
			cost[i * n + j] = j + 1 - i >= min_pts ? ng_acc_rss(&acc[i]) : INFINITY;
		}
		for (i = j + 1; i < n; i++)
			cost[i * n + j] = INFINITY;
	}
	if (ng_dp_run(cost, n, M, &dp))
		goto out_free;
	/* The floor is relative to the points' total variation, so rounding in
	 * noise-free data cannot pick a split. */
	rss_floor = 1e-10 * all.cyy;
	if (!(rss_floor > 1e-300))
		rss_floor = 1e-300;
	for (m = 1; m <= M; m++) {
		double rss = dp.best[m];

		if (rss == INFINITY)
			continue;
		if (rss < rss_floor)
			rss = rss_floor;
		s.bic[m] = (double)n * log(rss / (double)n) + ng_penalty(m, n);
	}
	ng_dp_pick(&dp, s.bic, M, n, &s);
	if (n > NG_SEG_ROBUST_MAX)
		goto out_ok;

	/* The noise scale, from each size's neighbours (not from the split:
	 * a split with too few segments would pass its misfit off as noise,
	 * and a large scale hides every regime from stage 2). */
	s.scale = ng_local_scale(x, y, sig1, n, u);

	/* Stage 2: Tukey-bisquare costs with that scale, BIC with the scale
	 * known: a single wild size costs at most 2 rho(inf) = c^2 / 3 = 12,
	 * less than a breakpoint (6 ln N >= 18 for N >= 20), so it cannot
	 * buy a segment of its own; a run of sizes off a line is no set of
	 * outliers (ng_seg_robust_cost): it counts in full, so it buys one. */
	for (i = 0; i < n; i++) {
		offl[i] = !ng_seg_on_neighbours(x, y, sig1, n, i, -1, min_pts, s.scale);
		offr[i] = !ng_seg_on_neighbours(x, y, sig1, n, i, 1, min_pts, s.scale);
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			cost[i * n + j] =
			    j < i || j + 1 - i < min_pts
			        ? INFINITY
			        : ng_seg_robust_cost(x, y, sig1, i, j, min_pts, s.scale, offl, offr, rw);
	}
	if (ng_dp_run(cost, n, M, &dp))
		goto out_free;
	for (m = 1; m <= M; m++)
		s.bic[m] = dp.best[m] == INFINITY ? INFINITY : dp.best[m] + ng_penalty(m, n);
	s.robust = true;
	ng_dp_pick(&dp, s.bic, M, n, &s);
	ng_seg_edges(x, y, sig1, min_pts, &s, rw);

out_ok:
	*seg_p = s;
	rc = 0;
out_free:
	free(cost);
	free(acc);
	free(offl);
	free(rw);
	free(u);
	free(sig1);
	return rc;
}
