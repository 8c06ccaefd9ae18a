/* SPDX-License-Identifier: BSD-3-Clause */
/* LogGP / pLogP parameter estimation; the contract is in loggp.h. */
#include "loggp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

/* The standard normal 97.5% quantile, for fits without residual degrees of
 * freedom (where the given standard errors are all there is). */
#define NG_Z975 1.959963984540054

/* BIC parameters charged per breakpoint (see loggp.h). */
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

double ng_se_from_ci95(double lo, double hi)
{
	double w = hi - lo;

	if (!isfinite(w) || w <= 0.0)
		return 0.0;
	return w / (2.0 * NG_Z975);
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

int ng_fit_line_robust(const double *x, const double *y, const double *sigma, size_t n, double x0,
                       double scale, double *rw, struct ng_fit *fit_p, double *cost_p)
{
	double *w, *xs, *ys, *ss, a = 0.0, b = 0.0, cost = 0.0;
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

	for (size_t i = 0; i < n; i++) {
		rw[i] = 1.0;
		w[i] = 1.0 / (sigma[i] * sigma[i]);
	}
	/* Start: the repeated median (up to NG_RM_MAX points: it is quadratic),
	 * else least squares. */
	if (n <= NG_RM_MAX ? ng_repeated_median(x, y, n, x0, xs, &a, &b) : ng_wls(x, y, w, n, x0, &a, &b))
		goto out_free;
	for (int it = 0; it < NG_IRLS_ITER; it++) {
		double change = 0.0;

		if (it > 0 && ng_wls(x, y, w, n, x0, &a, &b))
			goto out_free;
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

/* Robust scale of standardized residuals: 1.4826 * median |u|, at least 1
 * (the given standard errors are never believed too large). */
static double ng_resid_scale(double *u, size_t n)
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

int ng_segments_fit(const double *x, const double *y, const double *sigma, size_t n, size_t max_seg,
                    size_t min_pts, struct ng_segments *seg_p)
{
	struct ng_segments s = {.scale = 1.0};
	struct ng_acc *acc = NULL, all = {0};
	double *cost = NULL, *sig1 = NULL, *u = NULL, *rw = NULL, rss_floor;
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
	acc = calloc(n, sizeof(*acc));
	cost = malloc((M > 1 ? n * n : 1) * sizeof(*cost));
	if (!sig1 || !u || !rw || !acc || !cost)
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

	/* The scale of the residuals of that split, robustly. */
	for (size_t k = 0; k < s.nseg; k++) {
		struct ng_fit f;
		size_t f0 = s.first[k], c = s.count[k];

		if (ng_fit_line(x + f0, y + f0, sig1 + f0, c, x[f0], &f))
			goto out_ok;
		for (i = f0; i < f0 + c; i++)
			u[i] = (y[i] - f.a - f.b * (x[i] - x[f0])) / sig1[i];
	}
	s.scale = ng_resid_scale(u, n);

	/* Stage 2: Tukey-bisquare costs with that scale, BIC with the scale
	 * known: a single wild size costs at most 2 rho(inf) = c^2 / 3 = 12,
	 * less than a breakpoint (6 ln N >= 18 for N >= 20), so it cannot
	 * buy a segment of its own. */
	for (i = 0; i < n; i++) {
		for (j = i; j < n; j++) {
			struct ng_fit f;
			double c;

			if (j + 1 - i < min_pts ||
			    ng_fit_line_robust(x + i, y + i, sig1 + i, j + 1 - i, x[i], s.scale, rw, &f, &c))
				c = INFINITY;
			cost[i * n + j] = c;
		}
	}
	if (ng_dp_run(cost, n, M, &dp))
		goto out_free;
	for (m = 1; m <= M; m++)
		s.bic[m] = dp.best[m] == INFINITY ? INFINITY : dp.best[m] + ng_penalty(m, n);
	s.robust = true;
	ng_dp_pick(&dp, s.bic, M, n, &s);

out_ok:
	*seg_p = s;
	rc = 0;
out_free:
	free(cost);
	free(acc);
	free(rw);
	free(u);
	free(sig1);
	return rc;
}

/* ---- parameters ------------------------------------------------------------ */

void ng_param_set(struct ng_param *p, const char *what, double value, double lo, double hi)
{
	memset(p, 0, sizeof(*p));
	if (isnan(lo))
		lo = -INFINITY;
	if (isnan(hi))
		hi = INFINITY;
	if (!isfinite(value)) {
		p->value = NAN;
		p->lo = p->hi = NAN;
		snprintf(p->flag, sizeof(p->flag), "%s cannot be estimated from these sizes", what);
		return;
	}
	if (value < 0.0) {
		if (hi >= 0.0) {
			snprintf(p->note, sizeof(p->note),
			         "%s estimate %.4g clamped to 0 (its interval reaches 0)", what, value);
			value = 0.0;
		} else {
			p->value = NAN;
			p->lo = p->hi = NAN;
			snprintf(p->flag, sizeof(p->flag),
			         "%s negative (%.4g, 95%% CI [%.4g, %.4g]): physically impossible", what,
			         value, lo, hi);
			return;
		}
	}
	p->value = value;
	p->lo = lo > 0.0 ? lo : 0.0;
	p->hi = hi;
	if (p->lo > value)
		p->lo = value;
	if (p->hi < value)
		p->hi = value;
	p->tlo = p->lo;
	p->thi = p->hi;
}

void ng_param_widen(struct ng_param *p, const char *name, double size)
{
	if (!ng_param_ok(p))
		return;
	ng_unc_add(&p->unc, name, size);
	ng_unc_widen(p->lo, p->hi, &p->unc, &p->tlo, &p->thi);
	if (p->tlo < 0.0)
		p->tlo = 0.0;
}

void ng_loggp_sys_apply(struct ng_param *p, const struct ng_loggp_sys *sys, double kt, double ke)
{
	ng_param_widen(p, "timer_resolution", kt * sys->res_us);
	ng_param_widen(p, "timer_overhead", kt * sys->read_us);
	ng_param_widen(p, "emu_overshoot", ke * sys->emu_us);
	if (ng_param_ok(p))
		ng_param_widen(p, "timer_drift", sys->drift_ppm * 1e-6 * fabs(p->value));
}

void ng_loggp_systematic(struct ng_loggp_model *m, const struct ng_loggp_sys *sys)
{
	double k = sys->n > 1 ? (double)(sys->n - 1) : 1.0;
	double kos = 1.0 + 2.0 / k, kor = 1.0 + 1.0 / k, kg = 2.0 / k;

	for (size_t i = 0; i < m->nseg; i++) {
		struct ng_loggp_seg *s = &m->seg[i];

		ng_loggp_sys_apply(&s->o_s, sys, kos, 1.0);
		ng_loggp_sys_apply(&s->o_r, sys, kor, 1.0);
		ng_loggp_sys_apply(&s->g, sys, kg, kg);
		ng_loggp_sys_apply(&s->L, sys, 0.5 + kos + kor, 2.0 + 1.0 + 1.0);
		ng_loggp_sys_apply(&s->G, sys, 0.0, 0.0);
		ng_loggp_sys_apply(&s->O_s, sys, 0.0, 0.0);
		ng_loggp_sys_apply(&s->O_r, sys, 0.0, 0.0);
	}
}

/* ---- LogGP ----------------------------------------------------------------- */

static double ng_floor_se(double se, double v, const struct ng_loggp_opts *o)
{
	double f = o->se_floor_rel * fabs(v);

	if (f < o->se_floor_us)
		f = o->se_floor_us;
	return (isfinite(se) && se > f) ? se : f;
}

/*
 * Fits one quantity over one segment, robustly with residual scale @scale:
 * intercept at @x0 into @a, slope into @b (NULL: not wanted).  Points that
 * the fit rejected get @bit in @outl.
 */
static void ng_fit_params(const double *x, const double *y, const double *se, size_t n, double x0,
                          double scale, double *rw, unsigned *outl, unsigned bit, struct ng_param *a,
                          const char *aname, struct ng_param *b, const char *bname, struct ng_fit *fit_p)
{
	struct ng_fit f;

	if (n == 1) {
		ng_param_set(a, aname, y[0], y[0] - NG_Z975 * se[0], y[0] + NG_Z975 * se[0]);
		if (b)
			ng_param_set(b, bname, NAN, NAN, NAN);
		*fit_p = (struct ng_fit){.n = 1,
		                         .x0 = x0,
		                         .a = y[0],
		                         .a_lo = a->lo,
		                         .a_hi = a->hi,
		                         .b = NAN,
		                         .b_lo = NAN,
		                         .b_hi = NAN};
		return;
	}
	if (ng_fit_line_robust(x, y, se, n, x0, scale, rw, &f, NULL) && ng_fit_line(x, y, se, n, x0, &f)) {
		ng_param_set(a, aname, NAN, NAN, NAN);
		if (b)
			ng_param_set(b, bname, NAN, NAN, NAN);
		*fit_p = (struct ng_fit){.n = 0, .a = NAN, .b = NAN};
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (rw[i] < 1e-9)
			outl[i] |= bit;
	}
	ng_param_set(a, aname, f.a, f.a_lo, f.a_hi);
	if (b)
		ng_param_set(b, bname, f.b, f.b_lo, f.b_hi);
	*fit_p = f;
}

/* Robust residual scale of one quantity over the segments of @m (least
 * squares per segment). */
static double ng_quantity_scale(const double *x, const double *y, const double *se,
                                const struct ng_loggp_model *m, double *u)
{
	size_t k, i, nu = 0;

	for (k = 0; k < m->nseg; k++) {
		const struct ng_loggp_seg *s = &m->seg[k];
		struct ng_fit f;

		if (s->count < 3 ||
		    ng_fit_line(x + s->first, y + s->first, se + s->first, s->count, s->from, &f))
			continue;
		for (i = s->first; i < s->first + s->count; i++)
			u[nu++] = (y[i] - f.a - f.b * (x[i] - s->from)) / se[i];
	}
	return ng_resid_scale(u, nu);
}

int ng_loggp_fit(const struct ng_loggp_point *pts, size_t n, const struct ng_loggp_opts *opts,
                 struct ng_loggp_model *model_p, unsigned *outliers)
{
	static const struct ng_loggp_opts defaults = NG_LOGGP_OPTS_DEFAULT;
	const struct ng_loggp_opts *o = opts ? opts : &defaults;
	struct ng_loggp_model m = {.npts = n};
	struct ng_segments sg;
	double *x, *T, *sT, *os, *sos, *orr, *sor, *h, *sh, *u, *rw;
	double sc_T = 1.0, sc_os, sc_or, sc_h;
	unsigned *outl;
	double *block;
	int rc = -1;

	for (size_t k = 0; k <= NG_SEG_MAX; k++)
		m.bic[k] = INFINITY;
	*model_p = m;
	if (n == 0)
		return -1;
	block = malloc(11 * n * sizeof(*block));
	outl = calloc(n, sizeof(*outl));
	if (!block || !outl)
		goto out_free;
	x = block;
	T = x + n;
	sT = T + n;
	os = sT + n;
	sos = os + n;
	orr = sos + n;
	sor = orr + n;
	h = sor + n;
	sh = h + n;
	u = sh + n;
	rw = u + n;
	for (size_t i = 0; i < n; i++) {
		const struct ng_loggp_point *p = &pts[i];
		double sp = ng_floor_se(p->se_prtt1, p->prtt1, o);

		x[i] = p->size;
		T[i] = p->T;
		sT[i] = ng_floor_se(p->se_T, p->T, o);
		os[i] = p->os;
		sos[i] = ng_floor_se(p->se_os, p->os, o);
		orr[i] = p->orr;
		sor[i] = ng_floor_se(p->se_or, p->orr, o);
		h[i] = p->prtt1 / 2.0 - p->os - p->orr;
		sh[i] = sqrt(sp * sp / 4.0 + sos[i] * sos[i] + sor[i] * sor[i]);
	}

	if (n >= o->min_pts) {
		if (ng_segments_fit(x, T, sT, n, o->max_seg, o->min_pts, &sg))
			goto out_free;
		memcpy(m.bic, sg.bic, sizeof(m.bic));
		sc_T = sg.scale;
	} else {
		/* Too few sizes to look for regimes: one segment. */
		sg.nseg = 1;
		sg.first[0] = 0;
		sg.count[0] = n;
	}
	m.nseg = sg.nseg;
	for (size_t k = 0; k < sg.nseg; k++) {
		m.seg[k].first = sg.first[k];
		m.seg[k].count = sg.count[k];
		m.seg[k].from = x[sg.first[k]];
		m.seg[k].to = x[sg.first[k] + sg.count[k] - 1];
	}
	sc_os = ng_quantity_scale(x, os, sos, &m, u);
	sc_or = ng_quantity_scale(x, orr, sor, &m, u);
	sc_h = ng_quantity_scale(x, h, sh, &m, u);

	for (size_t k = 0; k < m.nseg; k++) {
		struct ng_loggp_seg *s = &m.seg[k];
		size_t f = s->first, c = s->count;
		struct ng_fit fT, fos, for_, fh;
		double from = s->from, xm1 = from > 1.0 ? from - 1.0 : 0.0;

		ng_fit_params(x + f, T + f, sT + f, c, from, sc_T, rw, outl + f, NG_LOGGP_OUT_T, &s->g, "g",
		              &s->G, "G", &fT);
		ng_fit_params(x + f, os + f, sos + f, c, from, sc_os, rw, outl + f, NG_LOGGP_OUT_OS, &s->o_s,
		              "o_s", &s->O_s, "O_s", &fos);
		ng_fit_params(x + f, orr + f, sor + f, c, from, sc_or, rw, outl + f, NG_LOGGP_OUT_OR, &s->o_r,
		              "o_r", &s->O_r, "O_r", &for_);
		ng_fit_params(x + f, h + f, sh + f, c, from, sc_h, rw, outl + f, NG_LOGGP_OUT_L, &s->L, "L",
		              NULL, NULL, &fh);

		/* L = h(from) - (from - 1) G, using G's raw estimate (even when it
		 * was clamped or flagged, h and G are what they are). */
		if (xm1 > 0.0) {
			double L, lo, hi;

			if (isfinite(fT.b) && fh.n > 0) {
				L = fh.a - xm1 * fT.b;
				lo = fh.a_lo - xm1 * fT.b_hi;
				hi = fh.a_hi - xm1 * fT.b_lo;
			} else {
				L = lo = hi = NAN;
			}
			ng_param_set(&s->L, "L", L, lo, hi);
		}
	}
	m.scale_T = sc_T;
	*model_p = m;
	if (outliers)
		memcpy(outliers, outl, n * sizeof(*outl));
	rc = 0;

out_free:
	free(outl);
	free(block);
	return rc;
}

int ng_loggp_loggopsim(const struct ng_loggp_model *m, char *buf, size_t len, char *why, size_t whylen)
{
	const struct ng_loggp_seg *s;
	double L, o, g, G, O;
	size_t wl = 0;

	if (why && whylen)
		why[0] = '\0';
	if (!m->nseg)
		return -1;
	s = &m->seg[0];

#define NG_PICK(dst, p)                                                                                      \
	do {                                                                                                 \
		if (ng_param_ok(&(p))) {                                                                     \
			dst = (p).value;                                                                     \
		} else {                                                                                     \
			dst = 0.0;                                                                           \
			if (why && wl < whylen)                                                              \
				wl += (size_t)snprintf(why + wl, whylen - wl, "%s%s", wl ? "; " : "",        \
				                       (p).flag);                                            \
		}                                                                                            \
	} while (0)

	NG_PICK(L, s->L);
	NG_PICK(g, s->g);
	NG_PICK(G, s->G);
	{
		double os, orr, Os, Or;

		NG_PICK(os, s->o_s);
		NG_PICK(orr, s->o_r);
		NG_PICK(Os, s->O_s);
		NG_PICK(Or, s->O_r);
		o = (os + orr) / 2.0;
		O = (Os + Or) / 2.0;
	}
#undef NG_PICK

	return snprintf(buf, len, "-L %.0f -o %.0f -g %.0f -G %.4g -O %.4g -S %.0f", L * 1e3, o * 1e3,
	                g * 1e3, G * 1e3, O * 1e3, s->to);
}

/* ---- pLogP ----------------------------------------------------------------- */

void ng_plogp_latency(double rtt, double rtt_lo, double rtt_hi, double g, double g_lo, double g_hi,
                      struct ng_param *L_p)
{
	ng_param_set(L_p, "L", rtt / 2.0 - g, rtt_lo / 2.0 - g_hi, rtt_hi / 2.0 - g_lo);
}
