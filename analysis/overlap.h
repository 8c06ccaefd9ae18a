/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The figures of the overlap and skew patterns (pure code: GSL, no I/O).
 *
 * Overlap ratio.  For one computation length X a rank times iterations of
 * "post the communication, compute, complete": t_i per iteration, of which
 * x_i was the computation itself (timed too).  Without computation the
 * iterations take t0_j: the transfer time T(0) = median(t0).  The ratio is
 *     r = (T(0) + X - T(X)) / T(0) = 1 - E / T(0),   E = median(t_i - x_i),
 * the share of the transfer time hidden behind the computation: 0 when the
 * computation simply adds to it, 1 when none of the transfer shows.  E, the
 * exposed communication time, takes the computation's length from each
 * iteration's own timing, so a computation stretched by an interrupt
 * stretches its iteration as much and cancels out; with x_i = X it is the
 * formula above.  r is clipped to [0, 1] (a computation slowed by the
 * transfer's own memory traffic can make it negative, noise can push it
 * above 1); .raw keeps the unclipped value.
 *
 * Its 95% confidence interval is a percentile bootstrap: the two samples
 * (t0 and t - x) are resampled independently with replacement B times
 * (NG_BOOT_B), the ratio of each pair of resampled medians computed, and the
 * 2.5% and 97.5% quantiles of those B ratios, clipped to [0, 1], are the
 * interval.  The resampling is seeded, so a result file can be recomputed.
 * The bootstrap medians of t0 can be computed once and shared by every X
 * (ng_boot_medians), as the samples of different X are independent.
 *
 * The bound of a perfect overlap: T(X) = max(T(0), X), so r <= min(1, X / T(0)).
 *
 * The skew pattern's slope is ng_fit_line() of analysis/loggp.h over the
 * medians (patterns/skew.c).
 */
#ifndef NG_ANALYSIS_OVERLAP_H
#define NG_ANALYSIS_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

#define NG_BOOT_B 2000

/*
 * Medians of @B bootstrap resamples of @x[0..n) (n >= 1) into @med[0..B),
 * from a generator seeded with @seed; @scratch holds n doubles.  The median
 * is GSL's (mean of the two middle values for even n), as everywhere.
 */
void ng_boot_medians(const double *x, size_t n, size_t B, uint64_t seed, double *scratch, double *med);

struct ng_ratio {
	double value;  /* clipped to [0, 1] */
	double lo, hi; /* 95% CI, clipped */
	double raw;    /* unclipped */
};

/*
 * The overlap ratio of a transfer time @t0 (the median) and an exposed time
 * @e, with the interval from their bootstrap medians @t0_boot and @e_boot
 * (B each, paired by index); @scratch holds B doubles.  A non-positive @t0
 * gives NaN everywhere.
 */
void ng_overlap_ratio(double t0, const double *t0_boot, double e, const double *e_boot, size_t B,
                      double *scratch, struct ng_ratio *r_p);

/* min(1, x / t0), 0 for x <= 0, NaN for t0 <= 0. */
double ng_overlap_bound(double x, double t0);

#endif
