/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bounded-memory log-linear histogram of positive values (HdrHistogram's
 * layout): each power of two [2^e, 2^(e+1)) is cut into NG_HIST_SUB equal
 * buckets, so a bucket is at most 1/NG_HIST_SUB = 0.78% of its lower bound
 * wide, and a value read back as its bucket's midpoint is within 0.39% of
 * the value.  Octaves from 2^NG_HIST_EMIN to 2^NG_HIST_EMAX (about 1e-9 to
 * 1e12, in whatever unit the samples have) are kept, in one fixed array:
 * the memory does not grow with the number of values (a value outside the
 * range lands in the first or last bucket; zero and negative values are
 * counted apart).  The exact smallest and largest values are kept beside.
 *
 * Ownership: ng_hist_init allocates the buckets, ng_hist_free frees them.
 * ng_hist_add neither allocates nor logs nor makes a system call.  Pure
 * otherwise; not thread-safe.
 */
#ifndef NG_HIST_H
#define NG_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NG_HIST_SUB_BITS 7
#define NG_HIST_SUB      (1 << NG_HIST_SUB_BITS)
#define NG_HIST_EMIN     (-30)
#define NG_HIST_EMAX     40
#define NG_HIST_BUCKETS  ((size_t)(NG_HIST_EMAX - NG_HIST_EMIN) * NG_HIST_SUB)

struct ng_hist {
	uint64_t *counts; /* [NG_HIST_BUCKETS] */
	uint64_t n;       /* values added, non-positive ones included */
	uint64_t nonpos;  /* values <= 0 (counted below every bucket) */
	double min, max;  /* exact, over every value added */
};

/* Allocates the buckets (NG_HIST_BUCKETS counters) and empties the
 * histogram; false when out of memory (nothing reported, nothing left
 * allocated). */
bool ng_hist_init(struct ng_hist *h);
void ng_hist_free(struct ng_hist *h);

/* Empties it, keeping the buckets. */
void ng_hist_reset(struct ng_hist *h);

/* Counts @v (a NaN is ignored). */
void ng_hist_add(struct ng_hist *h, double v);

/* The bucket of a positive @v, and bucket @i's bounds [lo, hi). */
size_t ng_hist_index(double v);
void ng_hist_bounds(size_t i, double *lo_p, double *hi_p);

/*
 * The @q quantile (0 <= q <= 1) as GSL's gsl_stats_quantile_from_sorted_data
 * gives it for the sorted values x (linear interpolation between x[j] and
 * x[j+1], j = floor(q (n - 1))), each order statistic read as its bucket's
 * midpoint clamped to [min, max] (the smallest and largest exactly; a
 * non-positive one as min).  Within 0.4% of the exact quantile for positive
 * values inside the range.  NaN for an empty histogram.
 */
double ng_hist_quantile(const struct ng_hist *h, double q);

#endif
