/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LogGP / pLogP parameter estimation (pure code: no I/O, no module, no
 * timer; the fits are those of lines.h).
 *
 * Straight lines, robust lines and the segments of T(s): lines.h.
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
 * The parameter fits are robust alike, but two neighbouring sizes off a
 * quantity's line are a trend of the segment, not outliers: that line is
 * then least squares over all its sizes (its interval widened by the
 * scatter).
 *
 * Impossible values.  Every parameter is non-negative in LogGP.  An
 * estimate below zero whose interval reaches zero is reported as 0 with the
 * interval cut at 0 and a note; one whose whole interval is negative, or
 * that is not finite, is not reported at all: its value is NAN and .flag
 * says why.  Interval bounds below 0 are cut at 0 (the parameter cannot be
 * negative).  So no negative or NaN number ever leaves as a parameter.  A
 * negative L has a cause of its own: where at most of the segment's sizes
 * o_s(s) + o_r(s) + (s - 1) G alone exceed PRTT(1,0,s) / 2, the overheads
 * overlap the transfer in time (the sender's call already delivers, as on
 * loopback TCP; sender and receiver copy at once over shared memory), and
 * the flag says that L cannot be separated on this transport; where most
 * sizes do not, it says that the segment's lines do not fit its sizes.
 */
#ifndef NG_ANALYSIS_LOGGP_H
#define NG_ANALYSIS_LOGGP_H

#include <stdbool.h>
#include <stddef.h>

#include "lines.h"
#include "stats.h"

/* ---- parameters ------------------------------------------------------------ */

/* One estimated parameter.  Valid (reportable) when flag[0] == '\0'. */
struct ng_param {
	double value;   /* NAN when flagged */
	double lo, hi;  /* 95% CI, never below 0; hi may be INFINITY */
	char flag[224]; /* why it is not reported; "" when it is */
	char note[96];  /* e.g. a negative estimate clamped to 0; "" when none */
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
	size_t max_seg;      /* segments at most (default 5) */
	size_t min_pts;      /* sizes per segment at least (default 3) */
	double se_floor_us;  /* smallest standard error believed (timer resolution); default 0.001 */
	double se_floor_rel; /* and relative to the value; default 1e-4 */
};

#define NG_LOGGP_OPTS_DEFAULT                                                                                \
	{                                                                                                    \
		.max_seg = 5, .min_pts = 3, .se_floor_us = 1e-3, .se_floor_rel = 1e-4                        \
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
