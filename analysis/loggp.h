/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LogGP / pLogP parameter estimation (pure code: no I/O, no module, no
 * timer; GSL for the fits and the Student t quantiles).
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
 * segment of their own.  So the residuals of the stage-1 split give a robust
 * scale s = max(1, 1.4826 median |r / sigma|), and the search is repeated
 * with Tukey-bisquare costs (ng_fit_line_robust, scale s) and the BIC for a
 * known scale, cost + (2m + 4(m - 1)) ln N.  A rejected size costs at most
 * 12, less than any breakpoint (6 ln N), so it cannot buy a segment; a
 * regime of 3 or more sizes off the line can.  A breakpoint is reported as the first x of the new
 * segment; the true change lies between the last x of one segment and the
 * first of the next.
 *
 * LogGP.  ng_loggp_fit() takes the per-size figures of the loggp pattern
 * (all in microseconds):
 *     T(s)   = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1)        transmission time
 *     o_s(s) = (PRTT(n,d,s) - PRTT(1,0,s)) / (n - 1) - d    send overhead
 *     o_r(s) = receive overhead (receiver-timed, message already there)
 *     h(s)   = PRTT(1,0,s) / 2 - o_s(s) - o_r(s)            latency + wire time
 * with a standard error for each, segments T(s), and per segment k, over its
 * sizes from_k .. to_k, fits every quantity as a line in (s - from_k):
 *     g_k   = T at from_k            G_k   = slope of T      (us per byte)
 *     o_s_k = o_s at from_k          O_s_k = slope of o_s
 *     o_r_k = o_r at from_k          O_r_k = slope of o_r
 *     L_k   = h at from_k - (from_k - 1) G_k
 * so that the one-way time of a message of s bytes in segment k is
 * o_s + L + (s - 1) G + o_r, the LogGP model; for a first segment that
 * starts at 1 byte, L is exactly PRTT(1,0,1)/2 - o_s - o_r.  The interval
 * of L_k combines those of h and G_k by interval arithmetic (conservative).
 *
 * Impossible values.  Every parameter is physically non-negative.  An
 * estimate below zero whose interval reaches zero is reported as 0 with the
 * interval cut at 0 and a note; one whose whole interval is negative, or
 * that is not finite, is not reported at all: its value is NAN and .flag
 * says why.  Interval bounds below 0 are cut at 0 (the parameter cannot be
 * negative).  So no negative or NaN number ever leaves as a parameter.
 */
#ifndef NG_ANALYSIS_LOGGP_H
#define NG_ANALYSIS_LOGGP_H

#include <stdbool.h>
#include <stddef.h>

#include "stats.h"

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
 * squares from the least-squares start): residuals are measured in units of
 * sigma * @scale; a point more than 6 such units off the line gets weight 0.
 * The final fit is ng_fit_line() over the points that kept weight, with
 * sigma / sqrt(weight).  @rw (n) receives the weights; *cost_p (NULL-able)
 * the loss sum 2 rho(u), which is the chi^2 near the line and at most 12 per
 * rejected point.  Returns 0, or -1 like ng_fit_line().
 */
int ng_fit_line_robust(const double *x, const double *y, const double *sigma, size_t n, double x0,
                       double scale, double *rw, struct ng_fit *fit_p, double *cost_p);

/* Two-sided 95% Student t quantile t(0.975, dof); dof >= 1. */
double ng_t95(double dof);

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

/* ---- parameters ------------------------------------------------------------ */

/* One estimated parameter.  Valid (reportable) when flag[0] == '\0'. */
struct ng_param {
	double value;  /* NAN when flagged */
	double lo, hi; /* 95% CI, never below 0; hi may be INFINITY */
	char flag[96]; /* why it is not reported; "" when it is */
	char note[96]; /* e.g. a negative estimate clamped to 0; "" when none */
	/* systematic bounds (stats.h, struct ng_unc_set) and the interval
	 * widened by them, [tlo, thi] (tlo never below 0); ng_param_set sets
	 * none and tlo, thi = lo, hi; ng_param_widen adds them */
	struct ng_unc_set unc;
	double tlo, thi;
};

static inline bool ng_param_ok(const struct ng_param *p)
{
	return p->flag[0] == '\0';
}

/*
 * Turns a raw estimate with its interval into a parameter, applying the rule
 * for impossible values above.  @what names it in the flag ("G").
 */
void ng_param_set(struct ng_param *p, const char *what, double value, double lo, double hi);

/* Adds bound @size named @name to @p and recomputes [tlo, thi] = [lo, hi]
 * widened by all of @p's bounds (stats.h: worst-case addition), tlo cut at
 * 0.  Nothing for a flagged parameter. */
void ng_param_widen(struct ng_param *p, const char *name, double size);

/* ---- LogGP ----------------------------------------------------------------- */

/* Per-size input, microseconds; se_* are standard errors (> 0; values at or
 * below 0 are raised to the floor below). */
struct ng_loggp_point {
	double size; /* bytes */
	double prtt1, se_prtt1;
	double T, se_T;
	double os, se_os;
	double orr, se_or;
};

struct ng_loggp_opts {
	size_t max_seg;      /* segments at most (default 3) */
	size_t min_pts;      /* sizes per segment at least (default 3) */
	double se_floor_us;  /* smallest standard error believed (timer resolution); default 0.001 */
	double se_floor_rel; /* and relative to the value; default 1e-4 */
};

#define NG_LOGGP_OPTS_DEFAULT                                                                                \
	{                                                                                                    \
		.max_seg = 3, .min_pts = 3, .se_floor_us = 1e-3, .se_floor_rel = 1e-4                        \
	}

struct ng_loggp_seg {
	size_t first, count; /* point indices */
	double from, to;     /* bytes: first and last size of the segment */
	struct ng_param L, o_s, o_r, g, G, O_s, O_r;
};

struct ng_loggp_model {
	size_t npts;
	size_t nseg;
	struct ng_loggp_seg seg[NG_SEG_MAX];
	double bic[NG_SEG_MAX + 1];
	double scale_T; /* robust residual scale of T (1: as the errors say) */
};

/* Outlier bits per size: which fits rejected the size. */
enum { NG_LOGGP_OUT_T = 1u, NG_LOGGP_OUT_OS = 2u, NG_LOGGP_OUT_OR = 4u, NG_LOGGP_OUT_L = 8u };

/*
 * Fits the LogGP model to @pts[0..n) (ascending sizes).  Every fit is the
 * robust one above, with the residual scale of its quantity estimated over
 * all segments (so one disturbed size does not bend a segment's line); the
 * sizes a fit rejected get their NG_LOGGP_OUT_* bit in @outliers[0..n)
 * (NULL-able).  With fewer than opts->min_pts sizes there is one segment and
 * no search.  Returns 0, or -1 for n == 0 or out-of-memory.  @opts NULL
 * means the defaults.
 */
int ng_loggp_fit(const struct ng_loggp_point *pts, size_t n, const struct ng_loggp_opts *opts,
                 struct ng_loggp_model *model_p, unsigned *outliers);

/*
 * The first segment as a LogGOPSim command line, all in nanoseconds:
 *     -L L -o o -g g -G G -O O -S S
 * with o = (o_s + o_r) / 2, O = (O_s + O_r) / 2 and S the last size of the
 * first segment (the eager/rendezvous threshold: larger messages belong to
 * the next regime).  L, o, g, S are rounded to whole nanoseconds, G and O
 * keep 4 significant digits.  A parameter that is flagged is written as 0
 * and named in @why (NULL-able, may be "").  Returns the length written
 * (snprintf semantics), or -1 when the model has no segment.
 */
int ng_loggp_loggopsim(const struct ng_loggp_model *m, char *buf, size_t len, char *why, size_t whylen);

/*
 * Systematic bounds of the measurement behind a LogGP model, all in
 * microseconds except drift: what one difference of two timer reads can be
 * off by (resolution, and the read overhead: one read's cost lands inside
 * or outside the interval), the timer's drift (a relative error of every
 * duration), and an emulator's overshoot (how late an injected delay ends,
 * per emulated call; 0 without one).  n: messages per train.
 */
struct ng_loggp_sys {
	double res_us, read_us, drift_ppm, emu_us;
	size_t n;
};

/*
 * Propagates @sys to every reportable parameter of @m (ng_param_widen), by
 * the estimators of the loggp pattern (patterns/loggp.c), k = n - 1:
 *   o_s = (PRTT(n,d) - PRTT(1,0)) / k - (waits) / k - read: two round-trip
 *         differences over k and k timed waits over k, so each timer bound
 *         counts (1 + 2 / k) times; one emulated send per sample: emu_us;
 *   o_r = (phase - waits) / k - read: (1 + 1 / k) times; emu_us;
 *   g   = (PRTT(n,0) - PRTT(1,0)) / k: 2 / k times; emu 2 / k (a train's
 *         late end shows once in it, the single round's once);
 *   L   = PRTT(1,0) / 2 - o_s - o_r - (from - 1) G: 1 / 2 time the timer
 *         bounds and o_s's and o_r's (worst-case addition: in truth part of
 *         them cancel), emu: two calls per one-way time, 2 emu_us, and o_s's
 *         and o_r's;
 *   G, O_s, O_r: slopes; a bound common to every size (the same read
 *         overhead, the same emulated lateness at every size: the same
 *         sign) moves a fitted line's intercept by at most the bound and
 *         leaves its slope, so slopes carry only drift.
 * Drift: drift_ppm * 1e-6 * |value| for every parameter.
 */
void ng_loggp_systematic(struct ng_loggp_model *m, const struct ng_loggp_sys *sys);

/* One parameter's share of the above: the timer's bounds of @sys times @kt,
 * the emulator's times @ke, and the drift, named in p->unc and widening
 * p->tlo..p->thi (nothing on a parameter without a value).  pLogP's
 * parameters (patterns/plogp.c) take their bounds through it too. */
void ng_loggp_sys_apply(struct ng_param *p, const struct ng_loggp_sys *sys, double kt, double ke);

/* ---- pLogP ----------------------------------------------------------------- */

/*
 * pLogP latency from the round trip of the smallest message m0 and its gap:
 * L = RTT(m0) / 2 - g(m0), with the interval from interval arithmetic over
 * the two intervals.
 */
void ng_plogp_latency(double rtt, double rtt_lo, double rtt_hi, double g, double g_lo, double g_hi,
                      struct ng_param *L_p);

/* ---- helpers ---------------------------------------------------------------- */

/* Standard error of a median from its 95% confidence interval:
 * (hi - lo) / (2 * 1.96); 0 when the interval is empty or not finite. */
double ng_se_from_ci95(double lo, double hi);

#endif
