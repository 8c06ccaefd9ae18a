/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The global clock's conversions (patterns/engine/gclock.c) against a known truth:
 * on a shared clock a reading and its time are each other's inverse; on a
 * fitted model that is exact for a test-only skew (offset 1,000 µs, drift
 * 50 ppm on rank 1, over one unskewed counter), rank 1's ticks for a start
 * time are rank 0's, so both ranks would start at the same instant, and
 * both put one reading at the same time; the spread's bound is the two
 * largest offset bounds grown by their drift bounds.  No ranks are started:
 * the structs are filled as ng_gclock_setup and ng_clock_sync would.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/clocksync.h"
#include "patterns/engine/gclock.h"
#include "tests/check.h"

static void test_shared(void)
{
	struct ng_timer tm = {.kind = NG_TIMER_TSC, .ns_per_tick = 0.3571, .resolution_ns = 10.0};
	struct ng_clock clk = {.mode = NG_SYNC_AUTO, .shared = true, .size = 4};
	struct ng_run run = {.timer = &tm, .clock = &clk};
	struct ng_gclock g = {
	    .run = &run, .me = 2, .nranks = 4, .on = true, .base = 123456789012ull, .ns0 = 0.3571};

	for (double t = -5.0; t < 3e7; t = fabs(t) * 3.0 + 7.0) {
		uint64_t raw = ng_gclock_local(&g, t);
		double back = ng_gclock_us(&g, raw);

		/* within half a tick */
		CHECK(fabs(back - t) <= 0.5 * 0.3571e-3 + 1e-9, "shared: %.6f us -> %llu ticks -> %.6f us", t,
		      (unsigned long long)raw, back);
		CHECK(ng_gclock_local(&g, ng_gclock_us(&g, raw)) == raw,
		      "shared: ticks %llu do not come back", (unsigned long long)raw);
	}
	CHECK(fabs(ng_gclock_bound_us(&g, 1e6) - 0.01) < 1e-12, "shared: bound %.6f, not the resolution",
	      ng_gclock_bound_us(&g, 1e6));
}

static void test_model(void)
{
	/* one counter in ns (--timer clock on one host): the truth is the raw reading */
	const uint64_t base = 5000000000ull, epoch = base + 2000000ull;
	const double off_ns = 1e6, rate = 50e-6;
	struct ng_timer t0 = {.kind = NG_TIMER_CLOCK, .ns_per_tick = 1.0, .resolution_ns = 20.0};
	struct ng_timer t1 = t0;
	struct ng_clock_rank ranks[3] = {{0}};
	struct ng_clock clk = {
	    .mode = NG_SYNC_FORCE, .fitted = true, .size = 3, .epoch_ns = epoch, .ranks = ranks};
	struct ng_run r0 = {.timer = &t0, .clock = &clk}, r1 = {.timer = &t1, .clock = &clk};
	struct ng_gclock g0 = {.run = &r0, .me = 0, .nranks = 3, .on = true, .model = true, .base = base};
	struct ng_gclock g1 = {.run = &r1, .me = 1, .nranks = 3, .on = true, .model = true, .base = base};

	/* rank 1's global reading: raw + off + rate * (raw - base), i.e. local(T) = T + offset + drift * (T -
	 * epoch) with the offset the skew's at the epoch and the drift its rate: the model exact */
	t1.skewed = true;
	t1.skew_base = base;
	t1.skew_off = off_ns;
	t1.skew_rate = rate;
	ranks[1].offset_us = (off_ns + rate * (double)(epoch - base)) * 1e-3;
	ranks[1].drift_ppm = rate * 1e6;
	ranks[1].bound_us = 5.0;
	ranks[1].drift_bound_ppm = 2.0;
	ranks[2].bound_us = 3.0;
	ranks[2].drift_bound_ppm = 1.0;

	for (double t = 0.0; t < 6e7; t = t * 2.0 + 1000.0) {
		uint64_t a = ng_gclock_local(&g0, t), b = ng_gclock_local(&g1, t);
		int64_t d = (int64_t)(b - a);

		/* the same instant on the one counter, within a tick of rounding */
		CHECK(d >= -1 && d <= 1, "model: %.0f us: rank 0 starts at %llu, rank 1 at %llu", t,
		      (unsigned long long)a, (unsigned long long)b);
		CHECK(fabs(ng_gclock_us(&g1, b) - t) < 2e-3, "model: rank 1's start %.4f us, not %.4f",
		      ng_gclock_us(&g1, b), t);
		CHECK(fabs(ng_gclock_us(&g0, a) - ng_gclock_us(&g1, a)) < 2e-3,
		      "model: one reading, two times: %.4f and %.4f us", ng_gclock_us(&g0, a),
		      ng_gclock_us(&g1, a));
	}
	/* 10 s after the epoch: 5 + 2 ppm * 10 s and 3 + 1 ppm * 10 s */
	CHECK(fabs(ng_gclock_bound_us(&g0, 1e7) - (25.0 + 13.0)) < 1e-6, "model: bound %.6f, not 38",
	      ng_gclock_bound_us(&g0, 1e7));
	CHECK(fabs(ng_gclock_bound_us(&g1, 0.0) - 8.0) < 1e-6, "model: bound at the epoch %.6f, not 8",
	      ng_gclock_bound_us(&g1, 0.0));
}

int main(void)
{
	test_shared();
	test_model();
	return check_exit();
}
