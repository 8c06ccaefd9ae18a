/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timer set-up and self-check; the contract is in timer.h.
 *
 * TSC calibration: NG_CAL_WINDOWS busy-waited windows of NG_CAL_WINDOW_NS
 * each (100 ms in all), timed by both the TSC and CLOCK_MONOTONIC_RAW; the
 * frequency is the median of the windows' ratios.  Each end point of a window
 * is the tightest of a few (rdtscp, clock_gettime, rdtscp) triples, so a
 * preemption inside a triple cannot skew it.
 *
 * Resolution and overhead come from NG_SELF_READS back-to-back reads of the
 * timer itself: resolution is the smallest non-zero difference, overhead the
 * median difference.  On a clock coarser than its own read cost the median
 * difference is 0; the overhead is then the mean over the whole run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "timer.h"

#define NG_CAL_WINDOWS    5
#define NG_CAL_WINDOW_NS  20000000u /* 20 ms */
#define NG_CAL_TRIES      8         /* triples per window end point */
#define NG_CAL_SPREAD_PPM 1000.0    /* warn when the windows disagree more */
#define NG_SELF_READS     10000

/* One instant read on both clocks. */
struct ng_timer_pair {
	uint64_t ticks;
	uint64_t ns;
};

static uint64_t ng_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool ng_timer_tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u)
		return false;
	if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx))
		return false;
	return (edx >> 8) & 1u;
#else
	return false;
#endif
}

/* True when ng_timer_now() can read the TSC here: x86-64 with rdtscp. */
static bool ng_timer_has_rdtscp(void)
{
#if defined(__x86_64__)
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000001u)
		return false;
	if (!__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx))
		return false;
	return (edx >> 27) & 1u;
#else
	return false;
#endif
}

static void ng_timer_pair_read(const struct ng_timer *t, struct ng_timer_pair *p)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < NG_CAL_TRIES; i++) {
		uint64_t a = ng_timer_now(t);
		uint64_t ns = ng_raw_ns();
		uint64_t b = ng_timer_now(t);

		if (b - a < best) {
			best = b - a;
			p->ticks = a + (b - a) / 2;
			p->ns = ns;
		}
	}
}

/*
 * Ticks of @t per nanosecond of CLOCK_MONOTONIC_RAW, median over the windows.
 * The relative spread of the windows goes to @spread_ppm_p.
 */
static double ng_timer_measure_ghz(const struct ng_timer *t, double *spread_ppm_p)
{
	double ratio[NG_CAL_WINDOWS];
	double median;
	size_t w;

	for (w = 0; w < NG_CAL_WINDOWS; w++) {
		struct ng_timer_pair start = {0}, end = {0};

		ng_timer_pair_read(t, &start);
		while (ng_raw_ns() - start.ns < NG_CAL_WINDOW_NS)
			;
		ng_timer_pair_read(t, &end);
		ratio[w] = (double)(end.ticks - start.ticks) / (double)(end.ns - start.ns);
	}
	gsl_sort(ratio, 1, NG_CAL_WINDOWS);
	median = gsl_stats_median_from_sorted_data(ratio, 1, NG_CAL_WINDOWS);
	*spread_ppm_p = median > 0.0 ? (ratio[NG_CAL_WINDOWS - 1] - ratio[0]) / median * 1e6 : 0.0;
	return median;
}

static int ng_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Fills in resolution_ns and overhead_ns of a timer whose ns_per_tick is set. */
static ng_status ng_timer_self_check(struct ng_timer *t)
{
	uint64_t *d;
	uint64_t first, prev, now, res = UINT64_MAX, median;
	size_t i;

	d = malloc(NG_SELF_READS * sizeof(*d));
	if (!d) {
		ng_error("timer %s: cannot allocate %zu bytes for the self-check", t->name,
		         NG_SELF_READS * sizeof(*d));
		return NG_ERR_NOMEM;
	}

	first = prev = ng_timer_now(t);
	for (i = 0; i < NG_SELF_READS; i++) {
		now = ng_timer_now(t);
		d[i] = now - prev;
		prev = now;
	}

	for (i = 0; i < NG_SELF_READS; i++)
		if (d[i] != 0 && d[i] < res)
			res = d[i];
	qsort(d, NG_SELF_READS, sizeof(*d), ng_u64_cmp);
	median = d[NG_SELF_READS / 2];

	t->resolution_ns = res == UINT64_MAX ? 0.0 : ng_timer_ns(t, res);
	if (median != 0)
		t->overhead_ns = ng_timer_ns(t, median);
	else
		t->overhead_ns = ng_timer_ns(t, prev - first) / NG_SELF_READS;

	free(d);
	if (t->resolution_ns <= 0.0) {
		ng_error("timer %s did not advance over %d reads", t->name, NG_SELF_READS);
		return NG_ERR_SYS;
	}
	return NG_OK;
}

static ng_status ng_timer_init_tsc(struct ng_timer *t)
{
	double ghz, spread_ppm;

	if (!t->invariant_tsc) {
		ng_error("timer tsc: this CPU has no invariant TSC "
		         "(CPUID 0x80000007 EDX bit 8); use --timer clock");
		return NG_ERR_UNSUPPORTED;
	}
	if (!ng_timer_has_rdtscp()) {
		ng_error("timer tsc: rdtscp is not available on this CPU "
		         "or architecture; use --timer clock");
		return NG_ERR_UNSUPPORTED;
	}

	t->kind = NG_TIMER_TSC;
	t->name = "tsc";
	ghz = ng_timer_measure_ghz(t, &spread_ppm);
	if (!(ghz > 0.0)) {
		ng_error("timer tsc: calibration against CLOCK_MONOTONIC_RAW failed "
		         "(%g ticks/ns)",
		         ghz);
		return NG_ERR_SYS;
	}
	if (spread_ppm > NG_CAL_SPREAD_PPM)
		ng_warn("timer tsc: calibration windows disagree by %.0f ppm", spread_ppm);
	t->tsc_ghz = ghz;
	t->ns_per_tick = 1.0 / ghz;
	return NG_OK;
}

ng_status ng_timer_init(struct ng_timer *t, const char *name, double (*wtime)(void))
{
	struct timespec ts;
	ng_status st;

	memset(t, 0, sizeof(*t));
	t->invariant_tsc = ng_timer_tsc_invariant();
	t->ns_per_tick = 1.0;

	/* Every timer needs the raw clock: calibration or the clock itself. */
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) != 0) {
		ng_error("clock_gettime(CLOCK_MONOTONIC_RAW): %s", strerror(errno));
		return NG_ERR_SYS;
	}

	if (!name) {
		if (t->invariant_tsc && ng_timer_has_rdtscp())
			st = ng_timer_init_tsc(t);
		else {
			t->kind = NG_TIMER_CLOCK;
			t->name = "clock";
			st = NG_OK;
		}
	} else if (strcmp(name, "tsc") == 0) {
		st = ng_timer_init_tsc(t);
	} else if (strcmp(name, "clock") == 0) {
		t->kind = NG_TIMER_CLOCK;
		t->name = "clock";
		st = NG_OK;
	} else if (strcmp(name, "mpi") == 0) {
		if (!wtime) {
			ng_error("timer mpi is only available in an MPI launch");
			return NG_ERR_UNSUPPORTED;
		}
		t->kind = NG_TIMER_MPI;
		t->name = "mpi";
		t->wtime = wtime;
		st = NG_OK;
	} else {
		ng_error("unknown timer '%s' (valid: tsc, clock, mpi)", name);
		return NG_ERR_USAGE;
	}
	if (st != NG_OK)
		return st;

	return ng_timer_self_check(t);
}

void ng_timer_recheck(struct ng_timer *t)
{
	double ghz, spread_ppm;

	if (t->kind != NG_TIMER_TSC || !(t->tsc_ghz > 0.0))
		return;
	ghz = ng_timer_measure_ghz(t, &spread_ppm);
	t->drift_ppm = (ghz - t->tsc_ghz) / t->tsc_ghz * 1e6;
}

void ng_timer_spin_us(const struct ng_timer *t, double us)
{
	uint64_t start, ticks;

	if (!(us > 0.0))
		return;
	ticks = (uint64_t)(us * 1e3 / t->ns_per_tick + 0.5);
	start = ng_timer_now(t);
	while (ng_timer_now(t) - start < ticks)
		;
}

void ng_timer_print(const struct ng_timer *t)
{
	printf("timer:          %s\n", t->name ? t->name : "(none)");
	if (t->kind == NG_TIMER_TSC) {
		printf("frequency:      %.6f GHz (calibrated against CLOCK_MONOTONIC_RAW)\n", t->tsc_ghz);
	} else {
		printf("frequency:      1 GHz (ticks are nanoseconds)\n");
	}
	printf("resolution:     %.1f ns\n", t->resolution_ns);
	printf("overhead:       %.1f ns per read\n", t->overhead_ns);
	printf("invariant TSC:  %s\n", t->invariant_tsc ? "yes" : "no");
	if (t->kind == NG_TIMER_TSC && t->drift_ppm != 0.0)
		printf("drift:          %+.1f ppm since calibration\n", t->drift_ppm);
}

ng_status ng_timer_skew_env(struct ng_timer *t, int rank)
{
	const char *v = getenv("NGAUGE_TEST_CLOCK_SKEW");
	double off_us, ppm;
	int r, n = 0;

	if (!v || !*v)
		return NG_OK;
	if (sscanf(v, "%d:%lf:%lf%n", &r, &off_us, &ppm, &n) != 3 || v[n] != '\0') {
		ng_error("NGAUGE_TEST_CLOCK_SKEW='%s': expected RANK:OFFSET_US:DRIFT_PPM", v);
		return NG_ERR_USAGE;
	}
	if (r != rank)
		return NG_OK;
	t->skew_off_us = off_us;
	t->skew_drift_ppm = ppm;
	t->skew_off = off_us * 1e3 / t->ns_per_tick;
	t->skew_rate = ppm * 1e-6;
	t->skew_base = ng_timer_now(t);
	t->skewed = true;
	return NG_OK;
}

double ng_timer_skew_at_us(const struct ng_timer *t, uint64_t ticks)
{
	if (!t->skewed)
		return 0.0;
	return t->skew_off_us + t->skew_rate * ng_timer_us(t, ticks - t->skew_base);
}
