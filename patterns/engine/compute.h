/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Calibrated computation for the overlap and skew patterns: a busy loop whose
 * length is given in microseconds, and the lists of lengths a run measures.
 *
 * The kernel (ng_compute_kernel) is a chain of dependent 64-bit multiply-adds
 * on one register (a linear congruential step), with a compiler barrier on
 * every step so that it can be neither vectorised, nor unrolled into
 * independent chains, nor folded into a closed form: one iteration costs one
 * multiply-add latency whatever the memory system does, and the loop touches
 * no memory at all (none of the transfer's buffers, not even the stack).  It
 * is what an application's computation is to the network: CPU time during
 * which the program makes no communication call.
 *
 * Calibration (ng_compute_calibrate) against the run's timer: the kernel is
 * run in windows of about NG_COMPUTE_WINDOW_US, each timed by the timer and
 * by the thread's CPU time (CLOCK_THREAD_CPUTIME_ID, outside any timed
 * region), and only the windows during which the thread kept the CPU count
 * (CPU time at least NG_COMPUTE_CPU_SHARE of the window): on a shared host
 * most windows can lose the CPU for a while, which would make the kernel
 * look slower than it is.  The rate (iterations per microsecond of the
 * timer) is the median over NG_COMPUTE_WINDOWS undisturbed windows (the
 * last windows count whatever they are when NG_COMPUTE_TRIES windows
 * would not give enough): a few milliseconds on a quiet host.
 * ng_compute_recheck() measures the rate again the same way at the end of
 * a run; both go into the result, so a CPU whose clock changed during the
 * run shows.  The patterns also time every computation they run, which
 * shows what it really took (a preempted computation takes longer).
 *
 * Lengths (SPEC of --overlap-compute and --skew-compute): a comma-separated
 * list of items, each
 *     V            one length
 *     A-B/N        N lengths evenly spaced from A to B, both included (N 2..64)
 *     A-B:+S       A, A + S, A + 2S, ... up to B (at most 64 lengths)
 *     A-B          the same as A-B/12
 * where a value is a non-negative decimal number of microseconds, or a number
 * followed by "t": that many times the transfer time T(0), which the pattern
 * measures per size before it decides the lengths (the default "0-4t/12" is
 * 12 lengths from 0 to 4 T(0)).  The lengths are sorted, duplicates dropped,
 * and 0 is always measured (T(0) is the reference of every figure); at most
 * NG_XSPEC_MAX lengths, each at most NG_XSPEC_MAX_US.
 *
 * Everything here but the kernel, the calibration and the recheck is pure
 * (no timer, no I/O) and unit-tested (tests/unit/test_compute.c).
 */
#ifndef NG_PATTERNS_COMPUTE_H
#define NG_PATTERNS_COMPUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../timers/timer.h"

#define NG_COMPUTE_WINDOWS   31 /* undisturbed windows per calibration */
#define NG_COMPUTE_WINDOW_US 200.0
#define NG_COMPUTE_TRIES     2000 /* windows at most (0.4 s) */
#define NG_COMPUTE_CPU_SHARE 0.98 /* a window is undisturbed when the thread ran this share of it */

struct ng_compute {
	double iters_per_us;     /* calibrated at start */
	double iters_per_us_end; /* at the recheck; 0 before it */
	double spread;           /* interdecile range / median of the start windows' rates */
};

/* The loop: @iters dependent steps from @x; returns the last value (callers
 * may ignore it: the loop cannot be removed). */
uint64_t ng_compute_kernel(uint64_t iters, uint64_t x);

/* Median of the rates iters[i] / us[i] over @n windows (n >= 1, us > 0);
 * @scratch holds n doubles. */
double ng_compute_rate(const uint64_t *iters, const double *us, size_t n, double *scratch);

/* Calibrates @cp against @tm (about 20 ms of busy loop). */
void ng_compute_calibrate(struct ng_compute *cp, const struct ng_timer *tm);

/* Measures the rate again into cp->iters_per_us_end. */
void ng_compute_recheck(struct ng_compute *cp, const struct ng_timer *tm);

/* Iterations that last @us microseconds at the calibrated rate: rounded to the
 * nearest, 0 for us <= 0 or NaN. */
uint64_t ng_compute_iters(const struct ng_compute *cp, double us);

/* ---- lists of lengths ------------------------------------------------- */

#define NG_XSPEC_MAX    64
#define NG_XSPEC_ITEMS  32
#define NG_XSPEC_MAX_US 1e6 /* one second */

struct ng_xspec_val {
	double v; /* microseconds, or multiples of T(0) when @t */
	bool t;
};

struct ng_xspec_item {
	struct ng_xspec_val lo, hi, step; /* hi == lo for a single value */
	size_t n;                         /* evenly spaced lengths; 0: by step; 1: one value */
};

struct ng_xspec {
	struct ng_xspec_item it[NG_XSPEC_ITEMS];
	size_t nit;
	bool relative; /* some value is in units of T(0) */
};

/*
 * Parses @s into @sp.  On a malformed or negative value, a range whose end
 * is below its start (when both have the same unit), a count outside 2..64,
 * a step that is not positive or gives more than 64 lengths, or too many
 * items, writes a one-line reason to @err and returns -1; else 0.
 */
int ng_xspec_parse(const char *s, struct ng_xspec *sp, char *err, size_t errlen);

/*
 * The lengths of @sp (microseconds) for a transfer time of @t_us: ascending,
 * without duplicates, 0 first.  Writes at most NG_XSPEC_MAX into @v and
 * returns their number, or 0 with a reason in @err when there would be more
 * or some length exceeds NG_XSPEC_MAX_US (possible only once @t_us is
 * known).
 */
size_t ng_xspec_values(const struct ng_xspec *sp, double t_us, double *v, char *err, size_t errlen);

#endif
