/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Straight lines, robust lines and segmented regression (pure code: GSL for
 * the fits and the Student t quantiles), the ground of the LogGP fit
 * (loggp.h).
 *
 * Straight lines.  ng_fit_line() fits y = a + b (x - x0) by weighted least
 * squares (gsl_fit_wlinear, weights 1 / sigma^2).  The covariance is scaled
 * by max(1, chi^2 / (n - 2)): the given sigmas are taken as absolute, but a
 * scatter larger than they promise (noise they missed, a curved regime)
 * widens the intervals instead of being ignored.  95% confidence intervals
 * are estimate +- t(0.975, n - 2) * standard error (gsl_cdf_tdist_Pinv).
 * Without sigmas (NULL) it is ordinary least squares with the covariance
 * scaled by RSS / (n - 2).
 *
 * Segments.  ng_segments_fit() splits points sorted by x into at most
 * max_seg contiguous segments of at least min_pts points each, one straight
 * line per segment (independent lines: a protocol change may jump).  For
 * every number of segments m the partition of least weighted residual sum of
 * squares (RSS) is found exactly by dynamic programming over all candidate
 * breakpoints (every gap between two measured x), and m is chosen by the
 * Bayesian information criterion
 *     BIC(m) = N ln(RSS_m / N) + (2m + 4(m - 1)) ln N   (stage 1)
 * 2 parameters per line, and each breakpoint charged as 4: a breakpoint's
 * location is found by searching all N gaps, so under "no change" the best
 * split gains far more than one ordinary parameter would (plain BIC, 1 per
 * breakpoint, split a straight line with 1% noise in 18% of simulated cases
 * at 34 sizes).  With 4 the simulated rate of spurious splits is below 1%
 * while the breakpoints of the three-regime example in
 * tests/analysis/test_loggp.c are still found exactly in every trial.  Ties
 * go to fewer segments.
 * Stage 2 (robustness, N <= 200): real sweeps have single sizes disturbed
 * by a burst of system noise, which least squares would rather give a
 * segment of their own.  So the search is repeated with Tukey-bisquare
 * costs (ng_fit_line_robust) and the BIC for a known scale, cost +
 * (2m + 4(m - 1)) ln N.  The scale s comes from each inner size's distance
 * u from the line through its two neighbours, in units of its standard
 * deviation (pseudo-residuals: a jump or a bend moves only the sizes beside
 * it), not from the stage-1 split, whose misfit with too few segments would
 * pass for noise and hide every regime: s = max(1, q25(|u|) / 0.3186), the
 * lower quartile, since one wild size moves three of the u.  A
 * rejected size costs at most 12, less than any breakpoint (6 ln N), so it
 * cannot buy a segment; but a size may be rejected only alone: with both
 * neighbours on its segment's line, or at the segment's edge when it also
 * lies off the line of the min_pts sizes beyond that edge (a size that
 * continues the neighbouring sizes' line says that the breakpoint is on its
 * other side), and with min_pts sizes left on the line.  Every other size
 * off the line counts in full, u^2, so a run of sizes off a line is a new
 * segment, never a set of outliers.  Last, a size at a segment's edge that
 * its line rejects (off both lines) stays with the segment whose line it is
 * nearer, so that the breakpoint lies at the gap the other sizes show.  A
 * breakpoint is reported as the first x of the new segment; the true change
 * lies between the last x of one segment and the first of the next.
 */
#ifndef NG_ANALYSIS_LINES_H
#define NG_ANALYSIS_LINES_H

#include <stdbool.h>
#include <stddef.h>

/* ---- straight lines ----------------------------------------------------- */

struct ng_fit {
	size_t n;    /* points fitted */
	double x0;   /* model: y = a + b (x - x0) */
	double a, b; /* intercept at x0, slope */
	double se_a, se_b;
	double cov_ab;
	double rss;                    /* weighted residual sum of squares (chi^2) */
	double a_lo, a_hi, b_lo, b_hi; /* 95% CI; +-INFINITY when n < 3 */
};

/*
 * Fits @y[0..n) over @x[0..n) as above.  @sigma: standard errors of the y
 * (all > 0), or NULL for unweighted.  Returns 0, or -1 when n < 2 or the x
 * are all equal (nothing fitted).
 */
int ng_fit_line(const double *x, const double *y, const double *sigma, size_t n, double x0,
                struct ng_fit *fit_p);

/*
 * Robust version (Tukey's bisquare, c = 6, by iteratively reweighted least
 * squares, from Siegel's repeated median (up to 64 points) and from the
 * weighted least-squares line, keeping the end of lower loss: the bisquare
 * has local minima, and an unweighted start on sizes of unequal errors can
 * end in one that rejects precise points): residuals are measured in units
 * of sigma * @scale; a point more than 6 such units off the line gets weight 0.
 * The final fit is ng_fit_line() over the points that kept weight, with
 * sigma / sqrt(weight).  @rw (n) receives the weights; *cost_p (NULL-able)
 * the loss sum 2 rho(u), which is the chi^2 near the line and at most 12 per
 * rejected point.  Returns 0, or -1 like ng_fit_line().
 */
int ng_fit_line_robust(const double *x, const double *y, const double *sigma, size_t n, double x0,
                       double scale, double *rw, struct ng_fit *fit_p, double *cost_p);

/* Two-sided 95% Student t quantile t(0.975, dof); dof >= 1. */
double ng_t95(double dof);

/* Robust scale of standardized residuals @u[0..n) (reordered: made
 * absolute and sorted): 1.4826 median |u|, at least 1 (the given standard
 * errors are never believed too large); 1 for n == 0. */
double ng_resid_scale(double *u, size_t n);

/* ---- segmented regression ------------------------------------------------ */

#define NG_SEG_MAX 8

struct ng_segments {
	size_t nseg;
	size_t first[NG_SEG_MAX]; /* index of each segment's first point */
	size_t count[NG_SEG_MAX]; /* points in each segment */
	double rss;               /* total cost of the chosen split */
	double
	    bic[NG_SEG_MAX + 1]; /* BIC of the best split into m segments (index m); INFINITY if impossible */
	double scale;            /* robust scale of the residuals (>= 1) */
	bool robust;             /* the Tukey stage decided */
};

/*
 * Segments @y over @x (ascending) as above.  @sigma may be NULL.  @max_seg in
 * 1..NG_SEG_MAX, @min_pts >= 2.  Returns 0, or -1 when n < min_pts (then
 * nothing is fitted) or on out-of-memory.  With fewer than 2 * min_pts points
 * the answer is one segment.
 */
int ng_segments_fit(const double *x, const double *y, const double *sigma, size_t n, size_t max_seg,
                    size_t min_pts, struct ng_segments *seg_p);

#endif
