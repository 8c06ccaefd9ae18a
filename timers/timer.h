/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timers.  ng_timer_now() is inline and cheap: it is the only thing a pattern
 * calls inside a timed region besides the module's operations.
 *
 *   tsc   - rdtscp; only where CPUID reports an invariant TSC.  Calibrated
 *           against CLOCK_MONOTONIC_RAW over ~100 ms at start and checked
 *           again at the end of the run (ng_timer_recheck).
 *   clock - clock_gettime(CLOCK_MONOTONIC_RAW), in nanoseconds.
 *   mpi   - MPI_Wtime (only in an MPI launch).
 *
 * Default: tsc where invariant, else clock.
 */
#ifndef NG_TIMER_H
#define NG_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "status.h"

enum ng_timer_kind { NG_TIMER_TSC, NG_TIMER_CLOCK, NG_TIMER_MPI };

struct ng_timer {
	enum ng_timer_kind kind;
	const char *name;
	double ns_per_tick;    /* conversion factor */
	double resolution_ns;  /* smallest observed non-zero difference */
	double overhead_ns;    /* cost of one read (median of back-to-back reads) */
	bool invariant_tsc;    /* CPUID 0x80000007 EDX bit 8 */
	double tsc_ghz;        /* calibrated frequency (tsc only) */
	double drift_ppm;      /* end-of-run recheck vs start calibration (tsc) */
	double (*wtime)(void); /* mpi: MPI_Wtime wrapper, set by the driver */
	/* Test-only clock skew (NGAUGE_TEST_CLOCK_SKEW, ng_timer_skew_env):
	 * ng_timer_global() returns raw + skew_off + skew_rate * (raw - skew_base). */
	bool skewed;
	uint64_t skew_base; /* raw ticks when the skew was set up */
	double skew_off;    /* ticks */
	double skew_rate;   /* drift as a fraction (50 ppm: 5e-5) */
	double skew_off_us; /* the injected amounts, as given */
	double skew_drift_ppm;
};

/* True when the CPU reports an invariant TSC. */
bool ng_timer_tsc_invariant(void);

/*
 * Sets up timer @name ("tsc", "clock", "mpi", or NULL for the default):
 * calibrates, measures resolution and overhead.  @wtime is required for "mpi"
 * (NULL otherwise).  NG_ERR_UNSUPPORTED (reported) when the timer is not
 * usable here, e.g. tsc without an invariant TSC.
 */
ng_status ng_timer_init(struct ng_timer *t, const char *name, double (*wtime)(void));

/* Re-measures the TSC frequency (~100 ms) and stores the drift in ppm. */
void ng_timer_recheck(struct ng_timer *t);

/* The current time in ticks: the clock's own reading (what every timed
 * region reads; the test-only skew never touches it). */
static inline uint64_t ng_timer_now(const struct ng_timer *t)
{
	switch (t->kind) {
#if defined(__x86_64__)
	case NG_TIMER_TSC: {
		uint32_t lo, hi, aux;
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	case NG_TIMER_MPI:
		return (uint64_t)(t->wtime() * 1e9);
	case NG_TIMER_CLOCK:
	default: {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	}
}

/* What ng_timer_global() would have read when ng_timer_now() read @raw:
 * @raw with the test-only skew applied where one is set; for timestamps
 * taken in a timed region and compared across ranks after it. */
static inline uint64_t ng_timer_global_of(const struct ng_timer *t, uint64_t raw)
{
	if (t->skewed)
		return raw + (uint64_t)(int64_t)(t->skew_off +
		                                 t->skew_rate * (double)(int64_t)(raw - t->skew_base));
	return raw;
}

/* The current time in ticks as clocks compared across ranks read it
 * (core/clocksync.h): ng_timer_now() with the test-only skew applied where
 * one is set (ng_timer_skew_env), so that synchronisation can be checked
 * against a known truth; without one, ng_timer_now(). */
static inline uint64_t ng_timer_global(const struct ng_timer *t)
{
	return ng_timer_global_of(t, ng_timer_now(t));
}

/*
 * Test only: reads NGAUGE_TEST_CLOCK_SKEW=RANK:OFFSET_US:DRIFT_PPM once and,
 * on rank @rank when it is RANK, makes ng_timer_global() run OFFSET_US ahead and
 * DRIFT_PPM faster from now on (doc/clock.md).  Unset: nothing changes.
 * NG_ERR_USAGE (reported) for a malformed value.
 */
ng_status ng_timer_skew_env(struct ng_timer *t, int rank);

/* The injected offset (µs) of a skewed clock at its reading @ticks; 0 when
 * no skew is set. */
double ng_timer_skew_at_us(const struct ng_timer *t, uint64_t ticks);

/* Tick differences to microseconds / nanoseconds. */
static inline double ng_timer_us(const struct ng_timer *t, uint64_t ticks)
{
	return (double)ticks * t->ns_per_tick * 1e-3;
}
static inline double ng_timer_ns(const struct ng_timer *t, uint64_t ticks)
{
	return (double)ticks * t->ns_per_tick;
}

/* Busy-waits for @us microseconds on timer @t (no system call). */
void ng_timer_spin_us(const struct ng_timer *t, double us);

/* Prints the timer report of `ngauge --timer-info` to stdout. */
void ng_timer_print(const struct ng_timer *t);

#endif
