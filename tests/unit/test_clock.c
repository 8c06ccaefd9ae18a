/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the global clock's pieces: the fit (analysis/clockfit) on
 * points with a known offset and drift, a scatter within ±0.2 µs and
 * descheduled bursts (round trips far above the least) that must be dropped;
 * and the timer's test-only skew (NGAUGE_TEST_CLOCK_SKEW): only the named
 * rank's clock moves, by the injected offset and drift.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/clockfit.h"
#include "check.h"
#include "timers/timer.h"

#define N 24

/*
 * Both clocks at one instant: rank 1's read between two reads of rank 0's,
 * whose midpoint stands for it; the narrowest of 50 tries, so that a
 * preemption (or a slow sanitized call) between two reads cannot pass for
 * a skew.  @g0 is rank 0's global time, @g1 rank 1's.
 */
static void both_at_once(const struct ng_timer *t0, const struct ng_timer *t1, double *g0, double *g1)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 50; i++) {
		uint64_t x = ng_timer_global(t0), y = ng_timer_global(t1), z = ng_timer_global(t0);

		if (z - x < best) {
			best = z - x;
			*g0 = (double)x + (double)(z - x) / 2.0;
			*g1 = (double)y;
		}
	}
}

int main(void)
{
	struct ng_clockfit_pt p[N];
	double a, s, res, se;
	unsigned seed = 1;
	int n;

	/* y = 1000 + 50 ppm * x over 0.3 s; every fifth point from a burst
	 * delayed throughout (round trip 300 µs, offset estimate 100 µs off). */
	for (int k = 0; k < N; k++) {
		double jitter = ((double)rand_r(&seed) / RAND_MAX - 0.5) * 0.4;
		bool slow = k % 5 == 2;

		p[k].x = k * 300000.0 / (N - 1);
		p[k].y = 1000.0 + 50e-6 * p[k].x + jitter + (slow ? 100.0 : 0.0);
		p[k].rtt = slow ? 300.0 : 13.0 + fabs(jitter);
	}
	n = ng_clockfit_keep(p, N);
	CHECK(n == N - 5, "kept %d of %d points, expected %d", n, N, N - 5);
	for (int k = 0; k < n; k++)
		CHECK(p[k].rtt < 20.0, "point %d with round trip %g kept", k, p[k].rtt);
	ng_clockfit_line(p, n, &a, &s, &res, &se);
	CHECK(fabs(a - 1000.0) < 0.3, "offset %g, expected 1000", a);
	CHECK(fabs(s * 1e6 - 50.0) < 2.0, "drift %g ppm, expected 50", s * 1e6);
	CHECK(res <= 0.4 && res > 0, "largest residual %g", res);
	CHECK(se > 0 && fabs(s * 1e6 - 50.0) <= 4 * se * 1e6, "drift %g ppm, standard error %g ppm", s * 1e6,
	      se * 1e6);

	/* Round trips spread far apart (only two within twice the least): at least
	 * a third are kept. */
	for (int k = 0; k < N; k++)
		p[k] = (struct ng_clockfit_pt){.x = k, .y = 5.0, .rtt = 100.0 * (k + 1)};
	n = ng_clockfit_keep(p, N);
	CHECK(n == N / 3, "kept %d of evenly slow points, expected %d", n, N / 3);
	ng_clockfit_line(p, n, &a, &s, &res, &se);
	CHECK(fabs(a - 5.0) < 1e-9 && fabs(s) < 1e-12 && res < 1e-9, "flat line: a %g s %g res %g", a, s,
	      res);

	/* The asymmetry term: each point off by up to half its round trip's
	 * excess over the least; errors of that size, signed to tilt the line
	 * most, tilt the fitted slope by exactly the term, and any others less. */
	for (int k = 0; k < N; k++) {
		double x = k * 300000.0 / (N - 1), d = 4.0 * (k % 3);

		p[k] = (struct ng_clockfit_pt){
		    .x = x, .y = 7.0 + (x < 150000.0 ? -d / 2 : d / 2), .rtt = 13.0 + d};
	}
	double sys = ng_clockfit_slope_sys(p, N);
	ng_clockfit_line(p, N, &a, &s, &res, &se);
	CHECK(sys > 0 && fabs(s - sys) <= 1e-9 * sys, "worst tilt: slope %g, term %g", s, sys);
	for (int trial = 0; trial < 100; trial++) {
		for (int k = 0; k < N; k++)
			p[k].y = 7.0 + ((double)rand_r(&seed) / RAND_MAX - 0.5) * (p[k].rtt - 13.0);
		ng_clockfit_line(p, N, &a, &s, &res, &se);
		CHECK(fabs(s) <= sys * (1 + 1e-9), "trial %d: slope %g above the term %g", trial, s, sys);
	}

	/* The skew: rank 1 named, rank 0 untouched, rank 1 ahead by 1000 µs and
	 * 50 ppm faster. */
	struct ng_timer t0, t1;

	setenv("NGAUGE_TEST_CLOCK_SKEW", "1:1000:50", 1);
	CHECK(ng_timer_init(&t0, "clock", NULL) == NG_OK && ng_timer_skew_env(&t0, 0) == NG_OK, "rank 0");
	CHECK(ng_timer_init(&t1, "clock", NULL) == NG_OK && ng_timer_skew_env(&t1, 1) == NG_OK, "rank 1");
	CHECK(!t0.skewed && t1.skewed, "skewed: rank 0 %d, rank 1 %d", t0.skewed, t1.skewed);
	double a0, a1, b0, b1;
	both_at_once(&t0, &t1, &a0, &a1);
	double ahead = ng_timer_us(&t1, (uint64_t)(a1 - a0 + 0.5));
	CHECK(ahead > 999.0 && ahead < 1001.0, "rank 1 ahead by %g us, expected 1000", ahead);
	ng_timer_spin_us(&t0, 100000.0);
	both_at_once(&t0, &t1, &b0, &b1);
	double ppm = ((b1 - a1) / (b0 - a0) - 1.0) * 1e6;
	CHECK(fabs(ppm - 50.0) < 5.0, "rank 1 runs %g ppm fast, expected 50", ppm);
	CHECK(fabs(ng_timer_skew_at_us(&t1, (uint64_t)a1) - 1000.0) < 1.0, "injected offset %g",
	      ng_timer_skew_at_us(&t1, (uint64_t)a1));
	setenv("NGAUGE_TEST_CLOCK_SKEW", "1:x", 1);
	CHECK(ng_timer_skew_env(&t0, 1) == NG_ERR_USAGE, "a malformed value is refused");
	return check_exit();
}
