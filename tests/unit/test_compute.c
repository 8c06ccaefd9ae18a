/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the pure parts of the overlap and skew patterns: the lists of
 * computation lengths (patterns/engine/compute.h), the iteration count and the rate
 * of the calibrated computation, the kernel's result, the capability check of
 * the engine (patterns/engine/progress.h), and the overlap ratio with its bootstrap
 * interval on samples with a known answer (analysis/overlap.h).
 * Exit 0 on pass, 1 on failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>

#include "analysis/overlap.h"
#include "patterns/engine/compute.h"
#include "patterns/engine/progress.h"
#include "tests/check.h"

/* The lengths of @spec at @t_us into @v; their number, or 0. */
static size_t values(const char *spec, double t_us, double *v)
{
	struct ng_xspec sp;
	char err[256];
	size_t n;

	if (ng_xspec_parse(spec, &sp, err, sizeof(err))) {
		fprintf(stderr, "unexpected parse error for '%s': %s\n", spec, err);
		return 0;
	}
	n = ng_xspec_values(&sp, t_us, v, err, sizeof(err));
	if (!n)
		fprintf(stderr, "'%s' at t = %g: %s\n", spec, t_us, err);
	return n;
}

static bool same(const double *v, size_t n, const double *want, size_t nw)
{
	if (n != nw)
		return false;
	for (size_t i = 0; i < n; i++)
		if (fabs(v[i] - want[i]) > 1e-9 * fmax(1.0, fabs(want[i])))
			return false;
	return true;
}

static void test_spec_good(void)
{
	double v[NG_XSPEC_MAX];
	size_t n;

	/* The default: 12 lengths from 0 to 4 T(0). */
	n = values("0-4t/12", 30.0, v);
	CHECK(n == 12 && v[0] == 0.0 && fabs(v[11] - 120.0) < 1e-9 && fabs(v[1] - 120.0 / 11) < 1e-9,
	      "0-4t/12 at 30 us: n %zu, %g .. %g", n, v[0], n ? v[n - 1] : -1.0);
	{
		const double want[] = {0, 10, 20, 35.5};
		n = values("20,10,35.5", 5.0, v);
		CHECK(same(v, n, want, 4), "list: 0 added, sorted (n %zu)", n);
	}
	{
		const double want[] = {0, 100, 150, 200, 250, 300};
		n = values("100-300:+50", 1.0, v);
		CHECK(same(v, n, want, 6), "step range (n %zu)", n);
	}
	{
		/* 0-1:+0.1 ends at 1 despite rounding; duplicates merged */
		n = values("0-1:+0.1,1,0.5", 1.0, v);
		CHECK(n == 11 && fabs(v[10] - 1.0) < 1e-9, "0-1:+0.1 gives 11 lengths ending at 1 (n %zu)",
		      n);
	}
	{
		const double want[] = {0, 25, 50};
		n = values("0-50/3", 9.0, v);
		CHECK(same(v, n, want, 3), "count range (n %zu)", n);
	}
	{
		/* a plain range is 12 lengths */
		n = values("0-110", 1.0, v);
		CHECK(n == 12 && fabs(v[1] - 10.0) < 1e-9, "A-B is A-B/12 (n %zu)", n);
	}
	{
		/* mixed units: t resolved per size */
		const double want[] = {0, 10, 40};
		n = values("10-2t/2", 20.0, v);
		CHECK(same(v, n, want, 3), "mixed units (n %zu)", n);
	}
	{
		/* 64 lengths plus 0 merged with the first: allowed */
		n = values("0-63/64", 1.0, v);
		CHECK(n == 64, "64 lengths including 0 (n %zu)", n);
	}
}

/* @spec must be refused, by the parser or at @t_us, with @needle in the reason. */
static void refused(const char *spec, double t_us, const char *needle)
{
	struct ng_xspec sp;
	double v[NG_XSPEC_MAX];
	char err[256] = "";
	bool bad = ng_xspec_parse(spec, &sp, err, sizeof(err)) != 0;

	if (!bad)
		bad = ng_xspec_values(&sp, t_us, v, err, sizeof(err)) == 0;
	CHECK(bad, "'%s' accepted", spec);
	CHECK(!bad || strstr(err, needle), "'%s': reason '%s' lacks '%s'", spec, err, needle);
	CHECK(!strchr(err, '\n'), "'%s': reason is one line", spec);
}

static void test_spec_bad(void)
{
	refused("-5", 1.0, "negative");
	refused("10,-5", 1.0, "negative");
	refused("abc", 1.0, "expected a number");
	refused("", 1.0, "empty");
	refused("10,", 1.0, "expected a number");
	refused("5x", 1.0, "unexpected");
	refused("nan", 1.0, "expected a number");
	refused("inf", 1.0, "expected a number");
	refused("0-100/1", 1.0, "2 to 64");
	refused("0-100/65", 1.0, "2 to 64");
	refused("0-100/x", 1.0, "2 to 64");
	refused("0-100:+0", 1.0, "positive");
	refused("0-1000:+1", 1.0, "more than 64");
	refused("100-10", 1.0, "ends below");
	refused("2000000", 1.0, "above the limit");
	/* known only once T(0) is */
	refused("0-1000t/4", 5000.0, "above the limit");
	refused("5t-100", 50.0, "ends below");
	refused("0-40:+1t", 0.5, "more than 64");
	refused("0-63/64,100-163/64", 1.0, "more than 64");
}

static void test_iters_and_rate(void)
{
	struct ng_compute cp = {.iters_per_us = 800.0};
	uint64_t it[5] = {1000, 2000, 1000, 4000, 1000};
	double us[5] = {1.0, 1.0, 2.0, 2.0, 0.5}, scratch[5];

	CHECK(ng_compute_iters(&cp, 0.0) == 0, "0 us");
	CHECK(ng_compute_iters(&cp, -3.0) == 0, "negative us");
	CHECK(ng_compute_iters(&cp, NAN) == 0, "NaN us");
	CHECK(ng_compute_iters(&cp, 1.25) == 1000, "1.25 us at 800/us: %llu",
	      (unsigned long long)ng_compute_iters(&cp, 1.25));
	CHECK(ng_compute_iters(&cp, 1.0 / 1600) == 1, "half an iteration rounds up");
	/* rates 1000, 2000, 500, 2000, 2000: median 2000 */
	CHECK(ng_compute_rate(it, us, 5, scratch) == 2000.0, "median rate");
	CHECK(ng_compute_rate(it, us, 4, scratch) == 1500.0, "median rate of an even count");
	/* The kernel is the LCG it says, from its seed. */
	{
		uint64_t x = 7;

		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		CHECK(ng_compute_kernel(1000, 7) == x, "kernel result");
		CHECK(ng_compute_kernel(0, 42) == 42, "kernel of 0 iterations");
	}
}

static void test_lacking(void)
{
	unsigned two = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK;

	CHECK(ng_pg_lacking(two, false) == 0, "two-sided module for isend/irecv");
	CHECK(ng_pg_lacking(NG_CAP_RELIABLE | NG_CAP_CHANNEL, false) == NG_CAP_NONBLOCK,
	      "a module without non-blocking operations is refused");
	CHECK(ng_pg_lacking(two, true) == NG_CAP_ONESIDED, "--NAME-rma without one-sided operations");
	CHECK(ng_pg_lacking(NG_CAP_ONESIDED, true) == 0, "one-sided module");
	CHECK(ng_pg_lacking(NG_CAP_ONESIDED, false) != 0, "one-sided only, two-sided asked for");
}

/* Ratio on samples with a known answer: T(0) around @t0, exposed time
 * around @e, Gaussian noise of @sd; over many trials the 95% interval must
 * contain the true 1 - e / t0 in roughly 95% of them. */
static void test_ratio(void)
{
	enum { N = 200, TRIALS = 100, B = 500 };
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double *t0 = malloc(N * sizeof(double)), *e = malloc(N * sizeof(double));
	double *bt = malloc(B * sizeof(double)), *be = malloc(B * sizeof(double));
	double *scratch = malloc((N > B ? N : B) * sizeof(double));
	const double T0 = 100.0, E = 30.0, SD = 5.0, truth = 1.0 - E / T0;
	int covered = 0;
	struct ng_ratio r;

	gsl_rng_set(rng, 12345);
	for (int trial = 0; trial < TRIALS; trial++) {
		for (int i = 0; i < N; i++) {
			t0[i] = T0 + gsl_ran_gaussian(rng, SD);
			e[i] = E + gsl_ran_gaussian(rng, SD);
		}
		ng_boot_medians(t0, N, B, 1000 + (uint64_t)trial, scratch, bt);
		ng_boot_medians(e, N, B, 5000 + (uint64_t)trial, scratch, be);
		/* the point estimate from the exact medians */
		memcpy(scratch, t0, N * sizeof(double));
		{
			double mt, me;

			mt = gsl_stats_median(scratch, 1, N);
			memcpy(scratch, e, N * sizeof(double));
			me = gsl_stats_median(scratch, 1, N);
			ng_overlap_ratio(mt, bt, me, be, B, scratch, &r);
		}
		CHECK(r.lo <= r.value && r.value <= r.hi, "trial %d: value %g outside [%g, %g]", trial,
		      r.value, r.lo, r.hi);
		CHECK(fabs(r.value - truth) < 0.05, "trial %d: ratio %g, truth %g", trial, r.value, truth);
		covered += r.lo <= truth && truth <= r.hi;
	}
	/* 95% nominal; a bootstrap of medians of 200 is close to it */
	CHECK(covered >= TRIALS * 85 / 100 && covered <= TRIALS, "coverage %d of %d", covered, TRIALS);

	/* Clipping: computation that adds to the transfer and more (ratio < 0),
	 * and an exposed time of 0 (ratio 1). */
	for (int b = 0; b < B; b++) {
		bt[b] = 100.0 + b % 7;
		be[b] = 120.0 + b % 5;
	}
	ng_overlap_ratio(100.0, bt, 120.0, be, B, scratch, &r);
	CHECK(r.value == 0.0 && r.lo == 0.0 && r.hi == 0.0 && fabs(r.raw + 0.2) < 1e-12,
	      "clipped below: %g raw %g", r.value, r.raw);
	for (int b = 0; b < B; b++)
		be[b] = 0.0;
	ng_overlap_ratio(100.0, bt, 0.0, be, B, scratch, &r);
	CHECK(r.value == 1.0 && r.hi == 1.0 && r.lo == 1.0, "no exposed time: ratio 1 (%g [%g, %g])", r.value,
	      r.lo, r.hi);
	ng_overlap_ratio(0.0, bt, 1.0, be, B, scratch, &r);
	CHECK(isnan(r.value) && isnan(r.lo), "T(0) of 0 gives no ratio");

	/* The bootstrap is reproducible from its seed. */
	for (int i = 0; i < N; i++)
		t0[i] = i;
	ng_boot_medians(t0, N, B, 99, scratch, bt);
	ng_boot_medians(t0, N, B, 99, scratch, be);
	CHECK(memcmp(bt, be, B * sizeof(double)) == 0, "same seed, same resamples");

	CHECK(ng_overlap_bound(50.0, 100.0) == 0.5 && ng_overlap_bound(150.0, 100.0) == 1.0 &&
	          ng_overlap_bound(0.0, 100.0) == 0.0 && isnan(ng_overlap_bound(1.0, 0.0)),
	      "perfect-overlap bound");

	free(scratch);
	free(be);
	free(bt);
	free(e);
	free(t0);
	gsl_rng_free(rng);
}

int main(void)
{
	test_spec_good();
	test_spec_bad();
	test_iters_and_rate();
	test_lacking();
	test_ratio();
	return check_exit();
}
