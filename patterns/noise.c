/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * noise: operating-system noise on every rank at once, without communication
 * during the measurement (Netgauge's noise pattern).
 *
 * Methods (--noise-method):
 *   selfish  a tight loop of timer reads; every gap between two reads above
 *            the threshold is a detour (its start and length);
 *   fwq      fixed work quantum: N equal quanta of computation, each timed;
 *            a quantum's excess over the fastest one is a detour;
 *   ftq      fixed time quantum: work counted in N equal time slices; the
 *            work a slice lacks against the best slice, as time, is a detour.
 * For every rank: the detours' histogram (four bins per octave from the
 * threshold), the fraction of time lost to detours, and the longest detours
 * with their start (microseconds since the common start, a barrier before
 * the measurement).  Rank 0 writes the block "noise" and one row (size 0)
 * with the detours' lengths pooled over the ranks.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/compute.h"
#include "engine/sampler.h"
#include "engine/session.h"
#include "peer.h"

#define NG_NZ_BINS      96 /* four per octave: 24 octaves above the threshold */
#define NG_NZ_PER_OCT   4
#define NG_NZ_TOP       32                 /* longest detours kept per rank */
#define NG_NZ_QUANTUM   1000.0             /* fwq/ftq quantum, microseconds */
#define NG_NZ_SLOTS     1024               /* the trace: the measured time cut into this many slots */
#define NG_NZ_COUNT_MAX 9007199254740992.0 /* 2^53: a count a double holds exactly, a json_int_t too */

struct ng_nz_detour {
	double t_us;   /* start, since the common start */
	double len_us; /* length */
};

/* One rank's summary: fixed size, so that every rank's gathers in one call. */
struct ng_nz_sum {
	double span_us; /* measured time */
	double lost_us; /* sum of the detours' lengths */
	double detours; /* how many */
	double thr_ns;  /* the threshold this rank used */
	double ntop;    /* entries of top[] in use */
	double slot_us; /* the trace's slot: the asked-for time / NG_NZ_SLOTS */
	double bins[NG_NZ_BINS];
	struct ng_nz_detour top[NG_NZ_TOP]; /* ascending by length */
	/* the detours over time, for the figure: the longest detour of each
	 * slot (length 0: none), in bounded memory whatever the run's length */
	struct ng_nz_detour trace[NG_NZ_SLOTS];
};

static void ng_nz_record(struct ng_nz_sum *s, double t_us, double len_us)
{
	double r = len_us * 1e3 / s->thr_ns;
	long b = r > 1.0 ? (long)floor(log2(r) * NG_NZ_PER_OCT) : 0;
	size_t n = (size_t)s->ntop, i;
	double slot = s->slot_us > 0 ? floor(t_us / s->slot_us) : 0;
	struct ng_nz_detour *tr = &s->trace[slot < NG_NZ_SLOTS - 1 ? (size_t)fmax(slot, 0) : NG_NZ_SLOTS - 1];

	if (len_us > tr->len_us)
		*tr = (struct ng_nz_detour){.t_us = t_us, .len_us = len_us};
	s->detours += 1.0;
	s->lost_us += len_us;
	s->bins[b < 0 ? 0 : (b >= NG_NZ_BINS ? NG_NZ_BINS - 1 : b)] += 1.0;
	if (n == NG_NZ_TOP && len_us <= s->top[0].len_us)
		return;
	if (n == NG_NZ_TOP) { /* drop the shortest */
		memmove(&s->top[0], &s->top[1], (NG_NZ_TOP - 1) * sizeof s->top[0]);
		n--;
	}
	for (i = n; i > 0 && s->top[i - 1].len_us > len_us; i--)
		s->top[i] = s->top[i - 1];
	s->top[i] = (struct ng_nz_detour){.t_us = t_us, .len_us = len_us};
	s->ntop = (double)(n + 1);
}

/* The median gap between two timer reads, in ticks. */
static uint64_t ng_nz_overhead(const struct ng_timer *tm)
{
	enum { N = 1001 };
	uint64_t d[N], prev = ng_timer_now(tm);

	for (size_t i = 0; i < N; i++) {
		uint64_t t = ng_timer_now(tm);

		d[i] = t - prev;
		prev = t;
	}
	for (size_t i = 1; i < N; i++) /* insertion sort: small, once */
		for (size_t j = i; j > 0 && d[j - 1] > d[j]; j--) {
			uint64_t x = d[j];

			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	return d[N / 2] ? d[N / 2] : 1;
}

static void ng_nz_selfish(const struct ng_timer *tm, double time_s, uint64_t ovh, struct ng_nz_sum *s)
{
	double us_per_tick = ng_timer_us(tm, 1000000) / 1e6;
	uint64_t thr = (uint64_t)(s->thr_ns * 1e-3 / us_per_tick);
	uint64_t t0 = ng_timer_now(tm), prev = t0;
	uint64_t end = t0 + (uint64_t)(time_s * 1e6 / us_per_tick);
	uint64_t skipped = 0;

	while (prev < end) {
		uint64_t t = ng_timer_now(tm);

		if (t - prev > thr + ovh) { /* the detour, the gap less one loop, above the threshold */
			ng_nz_record(s, ng_timer_us(tm, prev - t0), ng_timer_us(tm, t - prev - ovh));
			/* the bookkeeping's own time is neither detour nor measured */
			uint64_t t2 = ng_timer_now(tm);

			skipped += t2 - t;
			t = t2;
		}
		prev = t;
	}
	s->span_us = ng_timer_us(tm, prev - t0 - skipped);
}

static void ng_nz_fwq(const struct ng_timer *tm, double time_s, struct ng_nz_sum *s)
{
	struct ng_compute cp;
	size_t n = (size_t)(time_s * 1e6 / NG_NZ_QUANTUM), i;
	double *q = calloc(n ? n : 1, sizeof *q), *t = calloc(n ? n : 1, sizeof *t), best = INFINITY;
	uint64_t iters, x = 1, t0;

	ng_compute_calibrate(&cp, tm);
	iters = ng_compute_iters(&cp, NG_NZ_QUANTUM);
	if (!q || !t) {
		free(q);
		free(t);
		return;
	}
	t0 = ng_timer_now(tm);
	for (i = 0; i < n; i++) {
		uint64_t a = ng_timer_now(tm);

		x = ng_compute_kernel(iters, x);
		uint64_t b = ng_timer_now(tm);

		t[i] = ng_timer_us(tm, a - t0);
		q[i] = ng_timer_us(tm, b - a);
		s->span_us += q[i];
		if (q[i] < best)
			best = q[i];
	}
	for (i = 0; i < n; i++)
		if ((q[i] - best) * 1e3 > s->thr_ns)
			ng_nz_record(s, t[i], q[i] - best);
	free(q);
	free(t);
}

static void ng_nz_ftq(const struct ng_timer *tm, double time_s, struct ng_nz_sum *s)
{
	struct ng_compute cp;
	size_t n = (size_t)(time_s * 1e6 / NG_NZ_QUANTUM), i;
	double *w = calloc(n ? n : 1, sizeof *w), best = 0;
	double us_per_tick = ng_timer_us(tm, 1000000) / 1e6;
	uint64_t slice = (uint64_t)(NG_NZ_QUANTUM / us_per_tick), chunk, x = 1, t0;

	ng_compute_calibrate(&cp, tm);
	chunk = ng_compute_iters(&cp, 0.5);
	if (!w)
		return;
	t0 = ng_timer_now(tm);
	for (i = 0; i < n; i++) {
		uint64_t end = t0 + (i + 1) * slice;

		while (ng_timer_now(tm) < end) {
			x = ng_compute_kernel(chunk, x);
			w[i] += 1.0;
		}
		if (w[i] > best)
			best = w[i];
	}
	s->span_us = (double)n * NG_NZ_QUANTUM;
	for (i = 0; best > 0 && i < n; i++) {
		double lack = (best - w[i]) / best * NG_NZ_QUANTUM;

		if (lack * 1e3 > s->thr_ns)
			ng_nz_record(s, (double)i * NG_NZ_QUANTUM, lack);
	}
	(void)x;
	free(w);
}

static json_t *ng_nz_rank_json(int rank, const struct ng_nz_sum *s)
{
	json_t *o = json_object(), *h = json_array(), *top = json_array(), *trace = json_array();

	if (!o || !h || !top || !trace) {
		json_decref(o);
		json_decref(h);
		json_decref(top);
		json_decref(trace);
		return NULL;
	}
	for (size_t i = 0; i < NG_NZ_SLOTS; i++) {
		if (s->trace[i].len_us <= 0)
			continue;
		json_array_append_new(
		    trace, json_pack("{s:f, s:f}", "t_us", s->trace[i].t_us, "len_us", s->trace[i].len_us));
	}
	for (size_t b = 0; b < NG_NZ_BINS; b++) {
		if (s->bins[b] <= 0)
			continue;
		json_t *e = json_object();

		json_object_set_new(e, "lo_us",
		                    json_real(s->thr_ns * 1e-3 * exp2((double)b / NG_NZ_PER_OCT)));
		json_object_set_new(e, "hi_us",
		                    json_real(s->thr_ns * 1e-3 * exp2((double)(b + 1) / NG_NZ_PER_OCT)));
		json_object_set_new(e, "count", json_integer((json_int_t)s->bins[b]));
		json_array_append_new(h, e);
	}
	for (size_t i = (size_t)s->ntop; i > 0; i--) { /* longest first */
		json_t *e = json_object();

		json_object_set_new(e, "t_us", json_real(s->top[i - 1].t_us));
		json_object_set_new(e, "len_us", json_real(s->top[i - 1].len_us));
		json_array_append_new(top, e);
	}
	json_object_set_new(o, "rank", json_integer(rank));
	json_object_set_new(o, "span_us", json_real(s->span_us));
	json_object_set_new(o, "detours", json_integer((json_int_t)s->detours));
	json_object_set_new(o, "lost_fraction", json_real(s->span_us > 0 ? s->lost_us / s->span_us : 0));
	json_object_set_new(o, "threshold_ns", json_real(s->thr_ns));
	json_object_set_new(o, "histogram", h);
	json_object_set_new(o, "longest", top);
	json_object_set_new(o, "trace", trace);
	return o;
}

static ng_status ng_nz_report(struct ng_run *run, const char *method, double time_s,
                              const struct ng_nz_sum *all)
{
	int np = run->boot->size;
	json_t *b = json_object(), *ranks = json_array();
	size_t n = 0;
	double lost = 0, *x;
	struct ng_stats st;
	ng_status status;

	if (!b || !ranks) {
		json_decref(b);
		json_decref(ranks);
		ng_error("noise: out of memory");
		return NG_ERR_NOMEM;
	}
	for (int r = 0; r < np; r++) {
		json_array_append_new(ranks, ng_nz_rank_json(r, &all[r]));
		n += (size_t)all[r].ntop;
		lost += all[r].span_us > 0 ? all[r].lost_us / all[r].span_us : 0;
	}
	json_object_set_new(b, "method", json_string(method));
	json_object_set_new(b, "time_s", json_real(time_s));
	json_object_set_new(b, "ranks", ranks);
	status = ng_results_block(run->results, "noise", b);
	if (status != NG_OK)
		return status;
	/* the row: the longest detours of every rank, pooled */
	x = calloc(n ? n : 1, sizeof *x);
	if (!x) {
		ng_error("noise: out of memory");
		return NG_ERR_NOMEM;
	}
	n = 0;
	for (int r = 0; r < np; r++)
		for (size_t i = 0; i < (size_t)all[r].ntop; i++)
			x[n++] = all[r].top[i].len_us;
	struct ng_row *row = ng_row_begin(run->results, 0, n);

	ng_stats_compute(x, n, &st);
	ng_row_stats(row, "detour_us", &st);
	ng_row_number(row, "lost_fraction", lost / np);
	free(x);
	return ng_row_commit(run->results, row);
}

/* Counts that another rank sent index top[] (ntop) and become integers of
 * the result (detours, bins): whole numbers in range, or the rank is
 * dropped (base/peer.h). */
static ng_status ng_nz_gathered(const struct ng_nz_sum *all, int np)
{
	for (int r = 0; r < np; r++) {
		const struct ng_nz_sum *s = &all[r];
		bool ok = s->ntop >= 0 && s->ntop <= NG_NZ_TOP && s->ntop == floor(s->ntop) &&
		          s->detours >= 0 && s->detours <= NG_NZ_COUNT_MAX;

		for (size_t b = 0; ok && b < NG_NZ_BINS; b++)
			ok = s->bins[b] >= 0 && s->bins[b] <= NG_NZ_COUNT_MAX;
		if (!ok)
			return ng_peer_bad("noise summary", r, "a count out of range");
	}
	return NG_OK;
}

/* noise's options; --noise-method's index among its choices, in order. */
static const char *const ng_nz_methods[] = {"selfish", "fwq", "ftq"};
struct ng_nz_config {
	int method;    /* --noise-method */
	double time_s; /* --noise-time */
	long long thr; /* --noise-threshold */
};

/* Everything one run needs: the session's state block (session.h). */
struct ng_nz {
	struct ng_nz_config cfg;
	const char *method; /* --noise-method's name */
	double time_s;      /* --noise-time */
	uint64_t ovh;       /* the timer's overhead, ticks (selfish) */
	size_t size;        /* 0: the one measurement's size, the session's list */
	struct ng_nz_sum mine;
	struct ng_nz_sum *all; /* [ranks]: every rank's summary */
};

/* The session's steps (session.h).  One measurement at size 0 whatever -s
 * says (setup's own list of sizes), nothing sent, so no size to check
 * (NG_SESSION_OWN_CHECK); its common start is the session's ng_sizes_sync,
 * a barrier. */
static ng_status ng_nz_setup(struct ng_session *s, void *state)
{
	struct ng_nz *n = state;
	struct ng_run *run = s->run;
	long long thr = n->cfg.thr;

	n->method = ng_nz_methods[n->cfg.method];
	n->time_s = n->cfg.time_s;
	if (!(n->time_s > 0 && n->time_s <= 3600) || thr < 0) {
		if (s->me == 0)
			ng_error("noise: --noise-time must be in (0, 3600] s and --noise-threshold >= 0");
		return NG_ERR_USAGE;
	}
	n->ovh = ng_nz_overhead(run->timer);
	n->mine.slot_us = n->time_s * 1e6 / NG_NZ_SLOTS;
	n->mine.thr_ns = thr > 0 ? (double)thr : fmax(4.0 * ng_timer_ns(run->timer, n->ovh), 50.0);
	n->all = calloc((size_t)s->nranks, sizeof *n->all);
	if (!n->all) {
		ng_error("noise: out of memory");
		return NG_ERR_NOMEM;
	}
	s->sizes = &n->size;
	s->nsizes = 1;
	return NG_OK;
}

static ng_status ng_nz_measure(struct ng_session *s, void *state, size_t size)
{
	struct ng_nz *n = state;
	const struct ng_timer *tm = s->run->timer;

	(void)size;
	if (strcmp(n->method, "fwq") == 0)
		ng_nz_fwq(tm, n->time_s, &n->mine);
	else if (strcmp(n->method, "ftq") == 0)
		ng_nz_ftq(tm, n->time_s, &n->mine);
	else
		ng_nz_selfish(tm, n->time_s, n->ovh, &n->mine);
	return NG_OK;
}

/* Every rank's summary to every rank; rank 0 writes the block and row. */
static ng_status ng_nz_gather(struct ng_session *s, void *state, size_t size)
{
	struct ng_nz *n = state;
	struct ng_run *run = s->run;
	ng_status st;

	(void)size;
	st = ng_boot_allgather(run->boot, &n->mine, sizeof n->mine, n->all);
	if (st == NG_OK)
		st = ng_nz_gathered(n->all, s->nranks);
	if (st == NG_OK && ng_results_active(run->results))
		st = ng_nz_report(run, n->method, n->time_s, n->all);
	return st;
}

static void ng_nz_teardown(struct ng_session *s, void *state)
{
	struct ng_nz *n = state;

	(void)s;
	free(n->all);
}

static const struct ng_session_ops ng_nz_session = {
    .state = sizeof(struct ng_nz),
    .flags = NG_SESSION_OWN_CHECK,
    .config = NG_SESSION_CONFIG(struct ng_nz, cfg),
    .setup = ng_nz_setup,
    .measure = ng_nz_measure,
    .report = ng_nz_gather,
    .teardown = ng_nz_teardown,
};

static ng_status ng_nz_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_nz_session);
}

/* clang-format off */
static const struct ng_option ng_nz_options[] = {
	{ .name = "noise-method", NG_CHOICE_AT(struct ng_nz_config, method), .choices = "selfish|fwq|ftq", .def = "selfish",
	  .metavar = "M", .help = "selfish detour, fixed work quantum or fixed time quantum" },
	{ .name = "noise-time", NG_DOUBLE_AT(struct ng_nz_config, time_s), .def = "2", .metavar = "SEC",
	  .help = "measured time per rank in seconds" },
	{ .name = "noise-threshold", NG_INT_AT(struct ng_nz_config, thr), .def = "0", .metavar = "NS",
	  .help = "shortest detour in ns (0: four timer overheads, at least 50 ns)" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_pattern ng_pattern_noise = {
    .name = "noise",
    .desc = "OS noise on every rank: detours (selfish, fwq, ftq), lost time, longest detours",
    .options = ng_nz_options,
    .needs = 0,
    .min_ranks = 1,
    .default_sizes = "0",
    .run = ng_nz_run,
};
