/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The measurement session (session.h): the loop over variants and sizes
 * around a pattern's steps.
 */
#include <stdlib.h>
#include <time.h>

#include "session.h"

static uint64_t session_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The position and the expected time of a call at @size, for the run's
 * watchdog (core/watchdog.h): twice the mean time of a call of this rank in
 * the previous measurement (its wall time over the calls it completed),
 * scaled up by the size ratio, so that a rank that sits a measurement out
 * in one call (matrix's pairs take turns) expects that long; for the first
 * measurement the whole measurement, its iterations at 10 us + 1 us per
 * byte each (1 MB/s, an emulated device's pace: loose, a first measurement's hang is found later,
 * never a slow one taken for a hang), or its --time, or --max-time for
 * --ci-target.
 */
static void session_where(struct ng_session *s, size_t size)
{
	const struct ng_run *run = s->run;
	struct ng_where *w = &run->comm->where;
	double e;

	if (s->last_ns) {
		e = 2.0 * (double)s->last_ns / (double)(s->last_calls ? s->last_calls : 1);
		if (s->last_size && size > s->last_size)
			e *= (double)size / (double)s->last_size;
	} else if (run->time_s > 0) {
		e = run->time_s * 1e9;
	} else {
		e = (double)(run->count + run->warmup) * (1e4 + 1000.0 * (double)size);
		if (run->ci_target > 0 && run->max_time_s * 1e9 > e)
			e = run->max_time_s * 1e9;
	}
	atomic_store_explicit(&w->phase, "measuring", memory_order_relaxed);
	atomic_store_explicit(&w->size, size, memory_order_relaxed);
	atomic_store_explicit(&w->index, s->index, memory_order_relaxed);
	atomic_store_explicit(&w->nsizes, s->nsizes, memory_order_relaxed);
	atomic_store_explicit(&w->variant, s->variant, memory_order_relaxed);
	atomic_store_explicit(&w->variants, s->variants, memory_order_relaxed);
	atomic_store_explicit(&w->calls0, w->seq, memory_order_relaxed);
	atomic_store_explicit(&w->expect_ns, e < 1.8e19 ? (uint64_t)e : UINT64_MAX / 4, memory_order_relaxed);
}

/* Sets up what every measurement needs: the pattern's state, its own
 * setup, the windows, its ready step.  On error the caller tears down. */
static ng_status session_setup(struct ng_session *s, const struct ng_session_ops *ops, void *state)
{
	bool windows =
	    (ops->flags & NG_SESSION_WINDOWS) || ((ops->flags & NG_SESSION_WINDOWS_MANY) && s->nranks > 2);
	ng_status st;

	if (ops->config) {
		ng_config_read(s->run->args, s->pattern->options, (char *)state + ops->config - 1);
		ng_config_read(s->run->args, s->pattern->reads, (char *)state + ops->config - 1);
	}
	st = ops->setup(s, state);
	if (st == NG_OK && windows)
		st = ng_gclock_setup(&s->gc, s->run, NG_GCLOCK_WINDOWS);
	if (st == NG_OK && ops->ready)
		st = ops->ready(s, state);
	return st;
}

/* One measurement of the current variant at @size, and its row. */
static ng_status session_measure(struct ng_session *s, const struct ng_session_ops *ops, void *state,
                                 size_t size)
{
	ng_status st = NG_OK;
	uint64_t t0 = session_now_ns();

	session_where(s, size);
	if (ops->begin)
		st = ops->begin(s, state, size);
	if (st == NG_OK)
		st = ng_sizes_sync(s->run);
	if (st == NG_OK && ops->arm)
		st = ops->arm(s, state, size);
	/* s->gc.run: the windows were set up (with or without a common clock) */
	if (st == NG_OK && (s->gc.windows || ((ops->flags & NG_SESSION_BARRIER) && s->gc.run)))
		st = ng_gclock_begin(&s->gc);
	if (st == NG_OK)
		st = ops->measure(s, state, size);
	if (st == NG_OK && ops->report)
		st = ops->report(s, state, size);
	s->last_ns = session_now_ns() - t0;
	s->last_size = size;
	s->last_calls =
	    s->run->comm->where.seq - atomic_load_explicit(&s->run->comm->where.calls0, memory_order_relaxed);
	return st;
}

/* Every variant at every size, in order; the first error ends it. */
static ng_status session_loop(struct ng_session *s, const struct ng_session_ops *ops, void *state)
{
	struct ng_run *run = s->run;
	size_t total = s->variants * s->nsizes;
	ng_status st = NG_OK;

	/* the progress line counts every variant's sizes from the start */
	if (s->variants > 1 || (ops->flags & NG_SESSION_ANNOUNCE))
		ng_progress(run, 0, total, s->sizes[0]);
	for (s->variant = 0; s->variant < s->variants; s->variant++) {
		for (s->index = 0; s->index < s->nsizes; s->index++) {
			size_t size = s->sizes[s->index];

			st = session_measure(s, ops, state, size);
			if (st != NG_OK)
				return st;
			s->done++;
			if (s->me == 0)
				ng_progress(run, s->done, total, size);
		}
	}
	return st;
}

ng_status ng_session_run(const struct ng_pattern *p, struct ng_run *run, const struct ng_session_ops *ops)
{
	struct ng_session s = {
	    .run = run,
	    .pattern = p,
	    .me = run->boot->rank,
	    .nranks = run->boot->size,
	    .variants = 1,
	    .sizes = run->sizes,
	    .nsizes = run->nsizes,
	};
	void *state;
	ng_status st;

	st = ops->flags & NG_SESSION_OWN_CHECK ? NG_OK : ng_sizes_check(run);
	if (st != NG_OK)
		return st;
	state = calloc(1, ops->state ? ops->state : 1);
	if (!state) {
		ng_error("%s: out of memory for its state", p->name);
		return NG_ERR_NOMEM;
	}
	atomic_store_explicit(&run->comm->where.phase, "setting up", memory_order_relaxed);
	st = session_setup(&s, ops, state);
	s.status = st;
	if (st == NG_OK) {
		st = session_loop(&s, ops, state);
		bool all = st == NG_OK;

		atomic_store_explicit(&run->comm->where.phase, "concluding", memory_order_relaxed);
		atomic_store_explicit(&run->comm->where.nsizes, 0, memory_order_relaxed);
		if (all && ops->conclude)
			st = ops->conclude(&s, state);
		s.status = st;
		if (ops->finish)
			ops->finish(&s, state, all);
	}
	ops->teardown(&s, state);
	ng_gclock_free(&s.gc);
	free(state);
	return st;
}
