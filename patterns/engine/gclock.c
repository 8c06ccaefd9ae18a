/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The global clock for the patterns: conversions and window starts.
 * Contract in gclock.h.
 */
#include "gclock.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "core/clocksync.h"

/* Rank 0's time at the set-up broadcast to every rank of a shared clock. */
struct ng_gclock_origin {
	uint64_t base;
	double ns_per_tick;
};

/* The first margin: four times a broadcast and a barrier over the
 * bootstrap, timed by rank 0 (gclock.h); every rank gets rank 0's. */
static ng_status ng_gclock_margin(struct ng_gclock *g)
{
	const struct ng_timer *tm = g->run->timer;
	struct ng_boot *b = g->run->boot;
	uint64_t t0 = ng_timer_now(tm);
	double m = 0.0;
	ng_status st;

	st = ng_boot_bcast(b, 0, &m, sizeof(m));
	if (st == NG_OK)
		st = ng_boot_barrier(b);
	m = fmax(4.0 * ng_timer_us(tm, ng_timer_now(tm) - t0), NG_GCLOCK_MARGIN_MIN_US);
	g->margin_us = fmin(m, NG_GCLOCK_MARGIN_MAX_US);
	if (st == NG_OK)
		st = ng_boot_bcast(b, 0, &g->margin_us, sizeof(g->margin_us));
	return st;
}

ng_status ng_gclock_setup(struct ng_gclock *g, const struct ng_run *run, unsigned flags)
{
	const struct ng_clock *clk = run->clock;
	struct ng_gclock_origin origin = {ng_timer_now(run->timer), run->timer->ns_per_tick};
	bool shared = false, off = !clk || clk->mode == NG_SYNC_OFF;
	ng_status st;

	*g = (struct ng_gclock){.run = run, .me = run->boot->rank, .nranks = run->boot->size};
	if (!off && clk->fitted) {
		g->on = g->model = true;
		g->base = origin.base;
	} else {
		if (!off) {
			shared = clk->shared;
			g->why = clk->why;
		} else if (flags & NG_GCLOCK_OFF_SHARED) {
			st = ng_clock_shared(run->boot, run->timer, &shared, &g->why);
			if (st != NG_OK)
				return st;
		}
		if (!shared)
			return NG_OK;
		/* one clock: every rank counts from rank 0's reading, on its calibration */
		st = ng_boot_bcast(run->boot, 0, &origin, sizeof(origin));
		if (st != NG_OK)
			return st;
		g->on = true;
		g->base = origin.base;
		g->ns0 = origin.ns_per_tick;
	}
	if (!(flags & NG_GCLOCK_WINDOWS))
		return NG_OK;
	g->all = calloc(3 * (size_t)g->nranks, sizeof(*g->all));
	if (!g->all) {
		ng_error("out of memory for %d ranks' starts", g->nranks);
		return NG_ERR_NOMEM;
	}
	g->windows = true;
	return ng_gclock_margin(g);
}

void ng_gclock_free(struct ng_gclock *g)
{
	free(g->all);
	g->all = NULL;
	g->windows = false;
}

void ng_gclock_us_all(const struct ng_gclock *g, uint64_t base, double *x, size_t n)
{
	for (size_t k = 0; k < n; k++)
		x[k] = ng_gclock_us(g, base + (uint64_t)(int64_t)x[k]);
}

double ng_gclock_us(const struct ng_gclock *g, uint64_t raw)
{
	const struct ng_timer *tm = g->run->timer;
	const struct ng_clock *clk = g->run->clock;
	long double ns, ref;

	if (!g->model)
		return (double)(int64_t)(raw - g->base) * g->ns0 * 1e-3;
	ns = (long double)ng_timer_global_of(tm, raw) * (long double)tm->ns_per_tick;
	ref = ng_clock_to_ref_ns(clk, g->me, ns);
	return (double)((ref - (long double)clk->epoch_ns) * 1e-3L);
}

uint64_t ng_gclock_local(const struct ng_gclock *g, double t_us)
{
	const struct ng_timer *tm = g->run->timer;
	const struct ng_clock *clk = g->run->clock;
	long double ticks;

	if (!g->model)
		return g->base + (uint64_t)llround(t_us * 1e3 / g->ns0);
	ticks = ng_clock_from_ref_ns(clk, g->me, (long double)clk->epoch_ns + (long double)t_us * 1e3L) /
	        (long double)tm->ns_per_tick;
	/* the test-only skew: global = raw + off + rate * (raw - skew_base) */
	if (tm->skewed)
		ticks = (long double)tm->skew_base +
		        (ticks - (long double)tm->skew_base - (long double)tm->skew_off) /
		            (1.0L + (long double)tm->skew_rate);
	return (uint64_t)llroundl(ticks);
}

double ng_gclock_bound_us(const struct ng_gclock *g, double t_us)
{
	const struct ng_clock *clk = g->run->clock;
	long double at = (long double)clk->epoch_ns + (long double)t_us * 1e3L;
	double first = 0.0, second = 0.0;

	if (!g->model)
		return g->run->timer->resolution_ns * 1e-3;
	/* rank 0's bound is zero: a pair's bound is the sum of the two ranks' */
	for (int i = 1; i < clk->size; i++) {
		double b = ng_clock_pair_bound_us(clk, i, 0, at);

		if (b > first) {
			second = first;
			first = b;
		} else if (b > second) {
			second = b;
		}
	}
	return first + second;
}

ng_status ng_gclock_begin(struct ng_gclock *g)
{
	const struct ng_timer *tm = g->run->timer;
	uint64_t target, now;
	double t_us = 0.0;
	ng_status st;

	if (!g->windows)
		return ng_boot_barrier(g->run->boot);
	if (g->me == 0)
		t_us = ng_gclock_us(g, ng_timer_now(tm)) + g->margin_us;
	st = ng_boot_bcast(g->run->boot, 0, &t_us, sizeof(t_us));
	if (st != NG_OK)
		return st;
	g->target_us = t_us;
	target = ng_gclock_local(g, t_us);
	now = ng_timer_now(tm);
	g->late = !g->idle && (int64_t)(now - target) > 0;
	g->late_arrival = g->late;
	g->started = true;
	if (g->idle)
		return NG_OK;
	/* sleep through most of the margin (gclock.h), then spin */
	if (!g->late) {
		double us = ng_timer_us(tm, target - now) - NG_GCLOCK_SPIN_US;

		if (us > 0.0) {
			struct timespec ts = {.tv_sec = (time_t)(us * 1e-6),
			                      .tv_nsec = (long)(fmod(us, 1e6) * 1e3)};

			nanosleep(&ts, NULL);
			now = ng_timer_now(tm);
			/* a wake-up after T is a late start too */
			g->late = (int64_t)(now - target) > 0;
		}
	}
	/* the spin: timer reads only */
	while ((int64_t)(now - target) < 0)
		now = ng_timer_now(tm);
	g->start = now;
	return NG_OK;
}

ng_status ng_gclock_end(struct ng_gclock *g)
{
	double mine[3], lo = INFINITY, hi = -INFINITY;
	bool late = false, late_arrival = false;
	ng_status st;

	g->have = g->windows && g->started;
	if (!g->have)
		return NG_OK;
	g->started = false;
	mine[0] = g->idle ? 0.0 : ng_gclock_us(g, g->start);
	mine[1] = g->late_arrival ? 2.0 : g->late ? 1.0 : 0.0;
	mine[2] = g->idle ? 1.0 : 0.0;
	st = ng_boot_allgather(g->run->boot, mine, sizeof(mine), g->all);
	if (st != NG_OK)
		return st;
	for (int r = 0; r < g->nranks; r++) {
		const double *x = g->all + 3 * r;

		if (x[2] != 0.0)
			continue;
		lo = fmin(lo, x[0]);
		hi = fmax(hi, x[0]);
		late = late || x[1] != 0.0;
		late_arrival = late_arrival || x[1] == 2.0;
	}
	g->spread_us = hi > lo ? hi - lo : 0.0;
	g->any_late = late;
	g->bound_us = ng_gclock_bound_us(g, g->target_us);
	if (late_arrival)
		g->margin_us = fmin(2.0 * g->margin_us, NG_GCLOCK_MARGIN_MAX_US);
	return NG_OK;
}

void ng_gclock_row(const struct ng_gclock *g, struct ng_row *row)
{
	if (!g->have)
		return;
	ng_row_number(row, "start_spread_us", g->spread_us);
	ng_row_json(row, "start_late", json_boolean(g->any_late));
	ng_row_number(row, "start_bound_us", g->bound_us);
}
