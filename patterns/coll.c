/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll: the collectives (allreduce, bcast, reduce, allgather, reduce_scatter,
 * barrier, gather, scatter), ngauge's algorithms beside the module's own,
 * timed on the global clock (the method: doc/coll.md).
 *
 * The variants of the session are the (operation, algorithm) pairs that
 * --coll-op and --coll-algo select, in that order; each runs over every
 * size (barrier, which moves no data, once, as size 0).  A size is the
 * bytes of one block: the vector of allreduce, bcast and reduce, each
 * rank's block of allgather, gather and scatter, each of the P blocks of
 * reduce_scatter's input; sizes are multiples of the element size of
 * --coll-type.  Rooted operations have root 0.  The algorithms are in
 * patterns/engine/coll_algos.c.
 *
 * Measurement, per variant and size: the untimed iterations (one checked
 * one, then --warmup), back to back, then --count timed repetitions:
 *
 *   window (--coll-timing window, the default): every repetition starts at
 *       a time agreed on the global clock (gclock.h).  One window start
 *       (ng_gclock_begin) opens the series; repetition i starts at T0 + i W
 *       on every rank, W being 1.5 times the slowest rank's median untimed
 *       iteration (with its fill and check under --verify; the untimed
 *       iterations each follow a barrier) plus 50 us.  A rank waits for its
 *       start by reading its timer (no system call); its sample is its end
 *       minus the common start, and the repetition's time the latest rank's
 *       end minus it.  A repetition in which some rank began later than
 *       the clock's bound after the start (beyond the last read of its
 *       spin: it arrived late, or lost its CPU while it waited) is counted
 *       ("late") and left out of the statistics (unless every one was).  A rank that arrives after
 *       its window's start takes the next window not yet begun; the ranks
 *       that finished a late repetition together agree on it, and a
 *       repetition whose ranks took different windows is late too.
 *       Without a common clock (--sync off, hosts without a model) the
 *       rows are timed as under barrier and say so ("timing").
 *   barrier (--coll-timing barrier): the OSU/IMB way, a barrier of
 *       ngauge's own (dissemination over the module) before each
 *       repetition, each rank timing its call; the repetition's time is the
 *       largest of the ranks' (OSU averages them).
 *
 * Verification: the first untimed iteration always, every repetition with
 * --verify (after the timer stopped): element i of rank r's block is
 * v(r, i) = (7 (r + 1) + 3 i) mod 251, a small integer that every type holds
 * exactly, and every rank's result buffer is compared with what the
 * operation must leave there (sums of these), filled beforehand with a
 * pattern no result has.  Integers must match exactly; floating point
 * within P * epsilon of the type relative to the expected value (sums of
 * small integers are exact in any order, so this tolerance is what the
 * method allows, not what it needs).
 *
 * Test hook: NGAUGE_TEST_COLL_LATE=RANK:US[:EVERY] delays rank RANK by US
 * microseconds at the start of every EVERY-th timed repetition (1: each;
 * after its window's start, or after the barrier), the planted late starter
 * of the tests.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/registry.h"
#include "engine/coll_algos.h"
#include "engine/coll_model.h"
#include "engine/sampler.h"
#include "engine/session.h"

enum { NG_COLL_WINDOW, NG_COLL_BARRIER_TIMING };

struct ng_coll_config {
	const char *ops;   /* --coll-op */
	const char *algos; /* --coll-algo */
	int timing;        /* --coll-timing */
	int type;          /* --coll-type */
	const char *model; /* --coll-model: a loggp result file */
};

struct ng_coll_variant {
	enum ng_coll_op op;
	int algo;
};

struct ng_coll_state {
	struct ng_coll_config cfg;
	struct ng_run *run;
	struct ng_coll_exec x;
	int me, P;
	size_t smax;
	struct ng_coll_variant var[NG_COLL_NOPS * NG_CA_NALGOS];
	size_t nvar;
	bool op_on[NG_COLL_NOPS];
	const char *skipped[NG_COLL_NOPS][NG_CA_NALGOS]; /* why a pair of "all" did not run */
	char native_why[320];
	int late_rank;       /* the test hook's rank, -1 */
	double late_us;      /* ... its delay */
	uint64_t late_every; /* ... at every late_every-th timed repetition */
	double *warm;        /* [1 + warmup] this rank's untimed iterations */
	double *warm_all;    /* [P] their medians, every rank's */
	double t0_us;        /* the first window's start on the global clock */
	struct ng_sampler smp;
	double *times;   /* [count] the repetitions the statistics take (reporter) */
	double *medians; /* [nvar * nsizes] for the summary (reporter) */
	double *busbw;   /* [nvar * nsizes] median busbw (reporter) */
	size_t checked;  /* iterations verified in the current measurement */
	double window_us;
	bool windowed; /* the current measurement ran in windows */
	double late_bound_us;
	struct ng_coll_model model; /* --coll-model's parameters (reporter; nseg 0: none) */
	double *predicted;          /* [nvar * nsizes] the model's time, -1 none (reporter) */
};

/* ---- selection ------------------------------------------------------------ */

static int ng_coll_lookup(const char *const *names, int n, const char *p, size_t len)
{
	for (int k = 0; k < n; k++)
		if (strlen(names[k]) == len && strncmp(p, names[k], len) == 0)
			return k;
	return -1;
}

static bool ng_coll_is_all(const char *p, size_t len)
{
	return len == 3 && strncmp(p, "all", 3) == 0;
}

/* --coll-op into cs->op_on.  NG_ERR_USAGE (reported by rank 0). */
static ng_status ng_coll_select_ops(struct ng_coll_state *cs)
{
	const char *p = cs->cfg.ops ? cs->cfg.ops : "all";
	bool any = false;

	while (*p) {
		size_t len = strcspn(p, ",");
		int k = ng_coll_lookup(ng_coll_op_names, NG_COLL_NOPS, p, len);

		if (ng_coll_is_all(p, len)) {
			for (int i = 0; i < NG_COLL_NOPS; i++)
				cs->op_on[i] = true;
		} else if (k < 0) {
			if (cs->me == 0)
				ng_error("--coll-op: unknown operation '%.*s' (allreduce, bcast, reduce, "
				         "allgather, "
				         "reduce_scatter, barrier, gather, scatter, all)",
				         (int)len, p);
			return NG_ERR_USAGE;
		} else {
			cs->op_on[k] = true;
		}
		any = true;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!any) {
		if (cs->me == 0)
			ng_error("--coll-op: no operation selected");
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

/* Why @algo cannot run over this module, or NULL. */
static const char *ng_coll_unavailable(struct ng_coll_state *cs, int algo)
{
	char offered[128];
	const struct ng_comm *c = cs->run->comm;

	if (algo != NG_CA_NATIVE || (c->caps & NG_CAP_COLL))
		return NULL;
	ng_modules_offering(NG_CAP_COLL, offered, sizeof(offered));
	snprintf(cs->native_why, sizeof(cs->native_why), "needs %s, which module '%s' does not offer (%s%s)",
	         ng_cap_name(NG_CAP_COLL), c->mod->name,
	         offered[0] ? "modules that do: " : "no module of this build does", offered);
	return cs->native_why;
}

static void ng_coll_add(struct ng_coll_state *cs, enum ng_coll_op op, int algo)
{
	for (size_t i = 0; i < cs->nvar; i++)
		if (cs->var[i].op == op && cs->var[i].algo == algo)
			return;
	cs->var[cs->nvar].op = op;
	cs->var[cs->nvar++].algo = algo;
}

/*
 * --coll-algo over the selected operations into cs->var, operation by
 * operation in --coll-op's order of the table, algorithms in the order
 * given.  "all": every algorithm of each operation that can run here (the
 * others recorded in cs->skipped).  A named algorithm must belong to at
 * least one selected operation and be able to run; else NG_ERR_USAGE.
 */
static ng_status ng_coll_select(struct ng_coll_state *cs)
{
	int named[NG_CA_NALGOS + 1];
	size_t nnamed = 0;
	const char *p = cs->cfg.algos ? cs->cfg.algos : "all";
	bool all = false, loud = cs->me == 0;

	while (*p) {
		size_t len = strcspn(p, ",");
		int k = ng_coll_lookup(ng_coll_algo_names, NG_CA_NALGOS, p, len);

		if (ng_coll_is_all(p, len)) {
			all = true;
		} else if (k < 0) {
			if (loud)
				ng_error("--coll-algo: unknown algorithm '%.*s' (ring, rd, binomial, "
				         "rabenseifner, "
				         "scatter_allgather, dissemination, linear, native, all)",
				         (int)len, p);
			return NG_ERR_USAGE;
		} else if (nnamed < NG_CA_NALGOS) {
			named[nnamed++] = k;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	for (size_t i = 0; i < nnamed; i++) {
		const char *why = ng_coll_unavailable(cs, named[i]);
		bool fits = false;

		for (int op = 0; op < NG_COLL_NOPS; op++)
			fits = fits || (cs->op_on[op] && ng_coll_applies((enum ng_coll_op)op, named[i]));
		if (why || !fits) {
			if (loud)
				ng_error("--coll-algo %s: %s", ng_coll_algo_names[named[i]],
				         why ? why
				             : "is an algorithm of none of the operations --coll-op selects");
			return NG_ERR_USAGE;
		}
	}
	for (int op = 0; op < NG_COLL_NOPS; op++) {
		if (!cs->op_on[op])
			continue;
		for (size_t i = 0; i < nnamed; i++)
			if (ng_coll_applies((enum ng_coll_op)op, named[i]))
				ng_coll_add(cs, (enum ng_coll_op)op, named[i]);
		for (int k = 0; all && k < NG_CA_NALGOS; k++) {
			const char *why;

			if (!ng_coll_applies((enum ng_coll_op)op, k))
				continue;
			why = ng_coll_unavailable(cs, k);
			if (why)
				cs->skipped[op][k] = why;
			else
				ng_coll_add(cs, (enum ng_coll_op)op, k);
		}
	}
	if (cs->nvar == 0) {
		if (loud)
			ng_error("--coll-algo: no algorithm selected");
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

/* The test hook (file comment): NGAUGE_TEST_COLL_LATE=RANK:US[:EVERY]. */
static ng_status ng_coll_test_hook(struct ng_coll_state *cs)
{
	const char *v = getenv("NGAUGE_TEST_COLL_LATE");
	char *end = NULL;
	long r, every = 1;

	cs->late_rank = -1;
	cs->late_every = 1;
	if (!v || !*v)
		return NG_OK;
	r = strtol(v, &end, 10);
	if (end != v && *end == ':') {
		cs->late_us = strtod(end + 1, &end);
		if (*end == ':')
			every = strtol(end + 1, &end, 10);
		if (*end == '\0' && r >= 0 && r < cs->P && cs->late_us >= 0.0 && every >= 1) {
			cs->late_rank = (int)r;
			cs->late_every = (uint64_t)every;
			return NG_OK;
		}
	}
	if (cs->me == 0)
		ng_error("NGAUGE_TEST_COLL_LATE='%s': expected RANK:US[:EVERY], RANK below %d", v, cs->P);
	return NG_ERR_USAGE;
}

/* ---- values and checks ----------------------------------------------------- */

static double ng_coll_v(int r, size_t i)
{
	return (double)(((size_t)(r + 1) * 7 + (i % 251) * 3) % 251);
}

static void ng_coll_put(enum ng_coll_type t, void *buf, size_t i, double v)
{
	switch (t) {
	case NG_COLL_INT32:
		((int32_t *)buf)[i] = (int32_t)v;
		break;
	case NG_COLL_INT64:
		((int64_t *)buf)[i] = (int64_t)v;
		break;
	case NG_COLL_FLOAT:
		((float *)buf)[i] = (float)v;
		break;
	default:
		((double *)buf)[i] = v;
		break;
	}
}

static double ng_coll_get(enum ng_coll_type t, const void *buf, size_t i)
{
	switch (t) {
	case NG_COLL_INT32:
		return (double)((const int32_t *)buf)[i];
	case NG_COLL_INT64:
		return (double)((const int64_t *)buf)[i];
	case NG_COLL_FLOAT:
		return (double)((const float *)buf)[i];
	default:
		return ((const double *)buf)[i];
	}
}

/* The send side of @op's input, once per measurement: every rank's sbuf,
 * the root's data for bcast in its rbuf. */
static void ng_coll_fill(struct ng_coll_state *cs, enum ng_coll_op op, size_t n)
{
	struct ng_coll_exec *x = &cs->x;
	size_t total = op == NG_COLL_REDUCE_SCATTER || op == NG_COLL_SCATTER ? (size_t)cs->P * n : n;

	for (size_t i = 0; i < total; i++) {
		double v = op == NG_COLL_SCATTER ? ng_coll_v((int)(i / n), i % n) : ng_coll_v(cs->me, i);

		ng_coll_put(x->type, x->sbuf, i, v);
	}
}

/* Before a checked iteration: the result buffer holds no result. */
static void ng_coll_poison(struct ng_coll_state *cs, enum ng_coll_op op, size_t n)
{
	struct ng_coll_exec *x = &cs->x;

	memset(x->rbuf, 0xa5, (size_t)cs->P * n * x->esize);
	if (op == NG_COLL_BCAST && cs->me == 0)
		for (size_t i = 0; i < n; i++)
			ng_coll_put(x->type, x->rbuf, i, ng_coll_v(0, i));
}

static double ng_coll_sum_v(int P, size_t i)
{
	double s = 0.0;

	for (int r = 0; r < P; r++)
		s += ng_coll_v(r, i);
	return s;
}

/* After a checked iteration: this rank's result; reports the first bad
 * element. */
static bool ng_coll_check(struct ng_coll_state *cs, const struct ng_coll_variant *v, size_t n, uint64_t it)
{
	struct ng_coll_exec *x = &cs->x;
	enum ng_coll_op op = v->op;
	size_t total = n;
	double eps = x->type == NG_COLL_FLOAT ? FLT_EPSILON : x->type == NG_COLL_DOUBLE ? DBL_EPSILON : 0.0;
	bool root_only = op == NG_COLL_REDUCE || op == NG_COLL_GATHER;

	if (op == NG_COLL_BARRIER || (root_only && cs->me != 0))
		return true;
	if (op == NG_COLL_ALLGATHER || op == NG_COLL_GATHER)
		total = (size_t)cs->P * n;
	for (size_t i = 0; i < total; i++) {
		double want, got = ng_coll_get(x->type, x->rbuf, i);

		switch (op) {
		case NG_COLL_ALLREDUCE:
		case NG_COLL_REDUCE:
			want = ng_coll_sum_v(cs->P, i);
			break;
		case NG_COLL_REDUCE_SCATTER:
			want = ng_coll_sum_v(cs->P, (size_t)cs->me * n + i);
			break;
		case NG_COLL_BCAST:
			want = ng_coll_v(0, i);
			break;
		case NG_COLL_SCATTER:
			want = ng_coll_v(cs->me, i);
			break;
		default: /* allgather, gather */
			want = ng_coll_v((int)(i / n), i % n);
			break;
		}
		if (fabs(got - want) <= eps * cs->P * fabs(want) && got == got)
			continue;
		ng_error("coll %s %s: verify: %s, %zu elements, iteration %" PRIu64
		         ": rank %d element %zu is %.17g, expected %.17g",
		         ng_coll_op_names[op], ng_coll_algo_names[v->algo], ng_coll_type_names[x->type], n,
		         it, cs->me, i, got, want);
		return false;
	}
	return true;
}

/* ---- measurement ------------------------------------------------------------- */

/* NCCL's bus bandwidth factor of @op over @P ranks (doc/coll.md). */
static double ng_coll_busbw_factor(enum ng_coll_op op, int P)
{
	switch (op) {
	case NG_COLL_ALLREDUCE:
		return 2.0 * (P - 1) / P;
	case NG_COLL_BCAST:
	case NG_COLL_REDUCE:
		return 1.0;
	case NG_COLL_BARRIER:
		return 0.0;
	default: /* allgather, reduce_scatter, gather, scatter */
		return (double)(P - 1) / P;
	}
}

/* The bytes algbw counts: the vector, or all P blocks (NCCL's sizes). */
static double ng_coll_bytes(enum ng_coll_op op, int P, size_t size)
{
	if (op == NG_COLL_ALLREDUCE || op == NG_COLL_BCAST || op == NG_COLL_REDUCE)
		return (double)size;
	return op == NG_COLL_BARRIER ? 0.0 : (double)size * P;
}

static uint64_t ng_coll_ticks(const struct ng_timer *tm, double us)
{
	return (uint64_t)llround(us * 1e3 / tm->ns_per_tick);
}

static int ng_coll_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The window of the next repetition (index *@w_p, the one after the
 * last): its start in ticks of this rank's timer.  A rank that arrives
 * after that start takes the first window that has not begun instead; the
 * ranks that finished a late repetition together agree on it, and a
 * repetition whose ranks took different windows is counted late (stream 2).
 */
static uint64_t ng_coll_window(struct ng_coll_state *cs, const struct ng_gclock *gc, uint64_t now,
                               double *w_p)
{
	double w = *w_p;
	uint64_t tgt = ng_gclock_local(gc, cs->t0_us + w * cs->window_us);

	if ((int64_t)(now - tgt) > 0) {
		w = floor((ng_gclock_us(gc, now) - cs->t0_us) / cs->window_us) + 1.0;
		tgt = ng_gclock_local(gc, cs->t0_us + w * cs->window_us);
	}
	*w_p = w;
	return tgt;
}

/*
 * One variant at one size on this rank: the untimed iterations, then the
 * timed ones in windows or after barriers.  Stream 0: this rank's end after
 * the repetition's start (window) or its call's time (barrier); stream 1:
 * how late after the start it began (window; 0 otherwise); stream 2:
 * the repetition's window.  Tail: the verify flag.
 */
static ng_status ng_coll_measure(struct ng_coll_state *cs, struct ng_gclock *gc,
                                 const struct ng_coll_variant *v, size_t size)
{
	const struct ng_run *run = cs->run;
	const struct ng_timer *tm = run->timer;
	struct ng_sampler *smp = &cs->smp;
	struct ng_coll_exec *x = &cs->x;
	size_t n = size / x->esize, skip = 1 + run->warmup;
	uint64_t late = cs->me == cs->late_rank ? ng_coll_ticks(tm, cs->late_us) : 0, delay;
	uint64_t spin = ng_coll_ticks(tm, 2e-3 * tm->overhead_ns);
	double warm, w = 0.0;
	bool bad = false;
	uint64_t it = 0;
	ng_status st;

	cs->checked = 0;
	cs->windowed = cs->cfg.timing == NG_COLL_WINDOW && gc->windows;
	ng_coll_fill(cs, v->op, n);
	ng_sampler_start(smp, skip, run->count);
	for (; it < skip; it++) {
		uint64_t t0, t1;
		bool check = it == 0 || run->verify;

		/* apart, so that no iteration finds its messages waiting (a
		 * bcast's receivers would, back to back) */
		st = ng_coll_barrier(x);
		if (st != NG_OK)
			return st;
		t0 = ng_timer_now(tm);
		if (check)
			ng_coll_poison(cs, v->op, n);
		st = ng_coll_exec(x, v->op, v->algo, n);
		if (st != NG_OK)
			return st;
		if (check) {
			bad = bad || !ng_coll_check(cs, v, n, it);
			cs->checked++;
		}
		t1 = ng_timer_now(tm);
		cs->warm[it] = ng_timer_us(tm, t1 - t0);
	}
	if (cs->windowed) {
		/* the window: 1.5 times the slowest rank's median untimed
		 * iteration (its fill and check under --verify), plus 50 us */
		qsort(cs->warm, skip, sizeof(double), ng_coll_cmp);
		warm = cs->warm[skip / 2];
		st = ng_boot_allgather(run->boot, &warm, sizeof(warm), cs->warm_all);
		for (int r = 0; st == NG_OK && r < cs->P; r++)
			warm = fmax(warm, cs->warm_all[r]);
		cs->window_us = 1.5 * (warm + (cs->late_rank >= 0 ? cs->late_us : 0.0)) + 50.0;
		if (st == NG_OK)
			st = ng_gclock_begin(gc);
		if (st != NG_OK)
			return st;
		cs->t0_us = gc->target_us;
	}
	for (; ng_sampler_more(smp, it); it++) {
		bool check = run->verify;
		uint64_t t0, t1, tgt, ready;

		delay = (it - skip) % cs->late_every ? 0 : late;
		if (check)
			ng_coll_poison(cs, v->op, n);
		if (cs->windowed) {
			ready = ng_timer_now(tm);
			tgt = ng_coll_window(cs, gc, ready, &w);
			if (delay && (int64_t)(ready - (tgt + delay)) < 0)
				ready = tgt + delay;
			t0 = ng_timer_now(tm);
			while ((int64_t)(t0 - ready) < 0 || (int64_t)(t0 - tgt) < 0)
				t0 = ng_timer_now(tm);
		} else {
			/* the planted delay: this rank leaves the barrier late.  The
			 * module's own collective is separated by the module's own
			 * barrier, as OSU and IMB separate MPI's (the barrier's exit
			 * skew is in the figure: like with like); ngauge's algorithms
			 * by ngauge's dissemination barrier. */
			st = v->algo == NG_CA_NATIVE ? ng_coll_exec(x, NG_COLL_BARRIER, NG_CA_NATIVE, 0)
			                             : ng_coll_barrier(x);
			if (st != NG_OK)
				return st;
			ready = ng_timer_now(tm) + delay;
			t0 = ng_timer_now(tm);
			while ((int64_t)(t0 - ready) < 0)
				t0 = ng_timer_now(tm);
			tgt = ready = t0;
		}
		st = ng_coll_exec(x, v->op, v->algo, n);
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			return st;
		ng_sampler_add(smp, 0, it, ng_timer_us(tm, t1 - tgt));
		/* how late it began: arrival, planted delay, or the CPU taken away
		 * while it waited; a spin's last read (two reads' cost) does not
		 * count */
		ng_sampler_add(smp, 1, it,
		               (int64_t)(t0 - tgt) > (int64_t)spin ? ng_timer_us(tm, t0 - tgt) : 0.0);
		ng_sampler_add(smp, 2, it, w);
		w += 1.0;
		if (check) {
			bad = bad || !ng_coll_check(cs, v, n, it);
			cs->checked++;
		}
	}
	ng_sampler_tail(smp)[0] = bad ? 1.0 : 0.0;
	return NG_OK;
}

/* Gathers one measurement to the reporter and commits its row. */
static ng_status ng_coll_report(struct ng_coll_state *cs, struct ng_gclock *gc, size_t ivar, size_t isize,
                                size_t size)
{
	const struct ng_coll_variant *v = &cs->var[ivar];
	struct ng_run *run = cs->run;
	struct ng_sampler *smp = &cs->smp;
	size_t count = ng_sampler_count(smp), kept = 0, late = 0;
	double bytes = ng_coll_bytes(v->op, cs->P, size), factor = ng_coll_busbw_factor(v->op, cs->P);
	const double *iter;
	double *times = cs->times;
	struct ng_stats t, bw;
	struct ng_row *row;
	ng_status st;

	st = ng_gclock_end(gc);
	if (st == NG_OK)
		st = ng_sampler_gather(smp);
	if (st != NG_OK)
		return st;
	for (int r = 0; r < cs->P; r++)
		if (ng_sampler_tail_of(smp, r)[0] != 0.0)
			return NG_ERR_VERIFY; /* reported by the rank that saw it */
	if (!ng_results_active(run->results))
		return NG_OK;

	/* A repetition ends with its latest rank; one in which a rank was
	 * ready only after the start (beyond the clock's bound) is late. */
	cs->late_bound_us = cs->windowed ? ng_gclock_bound_us(gc, gc->target_us) : 0.0;
	iter = ng_sampler_max(smp, 0);
	for (size_t i = 0; i < count; i++) {
		double lat = 0.0;

		bool apart = false;

		for (int r = 0; r < cs->P; r++) {
			lat = fmax(lat, ng_sampler_of(smp, r, 1)[i]);
			apart = apart || ng_sampler_of(smp, r, 2)[i] != ng_sampler_of(smp, 0, 2)[i];
		}
		if (cs->windowed && (lat > cs->late_bound_us || apart))
			late++;
		else
			times[kept++] = iter[i];
	}
	if (kept == 0) {
		memcpy(times, iter, count * sizeof(*times));
		kept = count;
	}
	row = ng_sampler_row(smp, v->op == NG_COLL_BARRIER ? 0 : size);
	ng_row_json(row, "op", json_string(ng_coll_op_names[v->op]));
	ng_row_json(row, "algorithm", json_string(ng_coll_algo_names[v->algo]));
	ng_row_json(row, "timing", json_string(cs->windowed ? "window" : "barrier"));
	ng_row_int(row, "elements", v->op == NG_COLL_BARRIER ? 0 : (long long)(size / cs->x.esize));
	ng_sampler_row_stats(smp, row, "time_us", times, kept, &t);
	if (bytes > 0.0) {
		ng_sampler_row_bw(smp, row, "algbw_MBps", times, kept, bytes, NULL);
		ng_sampler_row_bw(smp, row, "busbw_MBps", times, kept, bytes * factor, &bw);
		cs->busbw[ivar * run->nsizes + isize] = bw.median;
	}
	cs->medians[ivar * run->nsizes + isize] = t.median;
	if (cs->model.nseg) {
		double us = ng_coll_model_us(&cs->model, v->op, v->algo, cs->P, cs->x.nb, cs->x.type,
		                             v->op == NG_COLL_BARRIER ? 0 : size / cs->x.esize);

		cs->predicted[ivar * run->nsizes + isize] = us;
		if (us >= 0.0)
			ng_row_number(row, "model_us", us);
	}
	ng_row_int(row, "late", (long long)late);
	ng_row_int(row, "timed", (long long)kept);
	if (cs->windowed) {
		ng_row_number(row, "window_us", cs->window_us);
		ng_row_number(row, "late_bound_us", cs->late_bound_us);
	} else {
		/* OSU's figure beside ours: the average over the ranks of each
		 * rank's mean call time (osu_allreduce's "Avg Latency") */
		double sum = 0.0;

		for (int r = 0; r < cs->P; r++)
			for (size_t i = 0; i < count; i++)
				sum += ng_sampler_of(smp, r, 0)[i];
		ng_row_number(row, "rank_mean_us", sum / ((double)cs->P * (double)count));
	}
	ng_row_int(row, "verified", (long long)cs->checked);
	ng_gclock_row(gc, row);
	ng_sampler_row_raw(smp, row, "time_us", iter, count);
	return ng_row_commit(run->results, row);
}

/* The top-level "coll" block. */
static ng_status ng_coll_block(struct ng_coll_state *cs, const struct ng_gclock *gc)
{
	json_t *blk, *vars, *skipped, *factors, *ops;

	if (!ng_results_active(cs->run->results))
		return NG_OK;
	blk = json_object();
	vars = json_array();
	skipped = json_object();
	factors = json_object();
	ops = json_array();
	if (!blk || !vars || !skipped || !factors || !ops)
		goto err_nomem;
	for (size_t i = 0; i < cs->nvar; i++)
		json_array_append_new(vars, json_pack("{s:s, s:s}", "op", ng_coll_op_names[cs->var[i].op],
		                                      "algorithm", ng_coll_algo_names[cs->var[i].algo]));
	for (int op = 0; op < NG_COLL_NOPS; op++) {
		json_t *why = NULL;

		if (!cs->op_on[op])
			continue;
		json_array_append_new(ops, json_string(ng_coll_op_names[op]));
		json_object_set_new(factors, ng_coll_op_names[op],
		                    json_real(ng_coll_busbw_factor((enum ng_coll_op)op, cs->P)));
		for (int k = 0; k < NG_CA_NALGOS; k++) {
			if (!cs->skipped[op][k])
				continue;
			if (!why)
				why = json_object();
			json_object_set_new(why, ng_coll_algo_names[k], json_string(cs->skipped[op][k]));
		}
		if (why)
			json_object_set_new(skipped, ng_coll_op_names[op], why);
	}
	json_object_set_new(blk, "operations", ops);
	json_object_set_new(blk, "variants", vars);
	json_object_set_new(blk, "skipped", skipped);
	json_object_set_new(blk, "busbw_factor", factors);
	json_object_set_new(blk, "type", json_string(ng_coll_type_names[cs->cfg.type]));
	json_object_set_new(blk, "root", json_integer(0));
	json_object_set_new(blk, "timing",
	                    json_string(cs->cfg.timing == NG_COLL_WINDOW ? "window" : "barrier"));
	if (cs->cfg.timing == NG_COLL_WINDOW && !gc->windows)
		json_object_set_new(blk, "timing_fallback",
		                    json_string(gc->why ? gc->why : "the ranks have no common clock"));
	if (cs->model.nseg)
		json_object_set_new(
		    blk, "model",
		    json_pack("{s:s, s:I}", "file", cs->cfg.model, "segments", (json_int_t)cs->model.nseg));
	if (cs->late_rank >= 0)
		json_object_set_new(blk, "planted_late",
		                    json_pack("{s:i, s:f, s:I}", "rank", cs->late_rank, "us", cs->late_us,
		                              "every", (json_int_t)cs->late_every));
	return ng_results_block(cs->run->results, "coll", blk);

err_nomem:
	json_decref(blk);
	json_decref(vars);
	json_decref(skipped);
	json_decref(factors);
	json_decref(ops);
	ng_error("coll: out of memory building the result block");
	return NG_ERR_NOMEM;
}

/* With --coll-model: per size, each algorithm's median beside the model's
 * time ("-" where there is none: native). */
static void ng_coll_model_table(const struct ng_coll_state *cs, int op, size_t nsizes)
{
	const struct ng_run *run = cs->run;
	char sz[32];

	printf("# coll %s: median time / LogGP model [us] (--coll-model %s)\n", ng_coll_op_names[op],
	       cs->cfg.model);
	for (size_t k = 0; k < nsizes; k++) {
		ng_fmt_size(op == NG_COLL_BARRIER ? 0 : run->sizes[k], sz, sizeof(sz));
		printf("%10s", sz);
		for (size_t i = 0; i < cs->nvar; i++) {
			double m = cs->predicted[i * run->nsizes + k];

			if ((int)cs->var[i].op != op)
				continue;
			if (m >= 0.0)
				printf(" %10.2f/%10.2f", cs->medians[i * run->nsizes + k], m);
			else
				printf(" %10.2f/%10s", cs->medians[i * run->nsizes + k], "-");
		}
		printf("\n");
	}
}

/* Side by side on stdout, after the rows: per operation, the median time
 * and busbw of every algorithm per size. */
static void ng_coll_summary(const struct ng_coll_state *cs, size_t nsizes_done)
{
	const struct ng_run *run = cs->run;
	char sz[32];

	if (!ng_results_active(run->results))
		return;
	for (int op = 0; op < NG_COLL_NOPS; op++)
		for (int k = 0; k < NG_CA_NALGOS; k++)
			if (cs->skipped[op][k])
				printf("# coll %s %s: skipped: %s\n", ng_coll_op_names[op],
				       ng_coll_algo_names[k], cs->skipped[op][k]);
	for (int op = 0; nsizes_done && op < NG_COLL_NOPS; op++) {
		bool bar = op == NG_COLL_BARRIER, any = false;

		for (size_t i = 0; i < cs->nvar; i++)
			any = any || (int)cs->var[i].op == op;
		if (!any)
			continue;
		printf("# coll %s: median time [us]%s, %d ranks\n", ng_coll_op_names[op],
		       bar ? "" : " / busbw [MB/s]", cs->P);
		printf("#%9s", "size");
		for (size_t i = 0; i < cs->nvar; i++)
			if ((int)cs->var[i].op == op)
				printf(" %21s", ng_coll_algo_names[cs->var[i].algo]);
		printf("\n");
		for (size_t k = 0; k < (bar ? 1 : nsizes_done); k++) {
			ng_fmt_size(bar ? 0 : run->sizes[k], sz, sizeof(sz));
			printf("%10s", sz);
			for (size_t i = 0; i < cs->nvar; i++) {
				if ((int)cs->var[i].op != op)
					continue;
				if (bar)
					printf(" %21.2f", cs->medians[i * run->nsizes + k]);
				else
					printf(" %10.2f/%10.1f", cs->medians[i * run->nsizes + k],
					       cs->busbw[i * run->nsizes + k]);
			}
			printf("\n");
		}
		if (cs->model.nseg)
			ng_coll_model_table(cs, op, bar ? 1 : nsizes_done);
	}
	fflush(stdout);
}

/* ---- the session's steps (session.h) ------------------------------------------ */

static ng_status ng_coll_setup(struct ng_session *s, void *state)
{
	struct ng_coll_state *cs = state;
	struct ng_run *run = s->run;
	const struct ng_sampler_spec spec = {
	    .name = "coll", .streams = 3, .cap = run->count, .tail = 1, .flags = NG_SAMPLER_GATHER};
	size_t es, len;
	ng_status st;

	cs->run = run;
	cs->me = s->me;
	cs->P = s->nranks;
	cs->smax = ng_sizes_max(run);
	ng_coll_exec_init(&cs->x, run->comm, (enum ng_coll_type)cs->cfg.type);
	es = cs->x.esize;
	if (cs->P > 4096) {
		if (cs->me == 0)
			ng_error("coll: at most 4096 ranks (%d given)", cs->P);
		return NG_ERR_USAGE;
	}
	for (size_t i = 0; i < run->nsizes; i++) {
		if (run->sizes[i] && run->sizes[i] % es == 0)
			continue;
		if (cs->me == 0)
			ng_error("coll: size %zu is not a multiple of %zu bytes, the size of --coll-type %s",
			         run->sizes[i], es, ng_coll_type_names[cs->cfg.type]);
		return NG_ERR_USAGE;
	}
	/* rd's unfold of allgather sends all P blocks in one message */
	if (run->comm->max_msg && (size_t)cs->P * cs->smax > run->comm->max_msg) {
		if (cs->me == 0)
			ng_error("coll: messages of up to %d x %zu bytes exceed the largest message of "
			         "module '%s', %zu bytes",
			         cs->P, cs->smax, run->comm->mod->name, run->comm->max_msg);
		return NG_ERR_USAGE;
	}
	st = ng_coll_test_hook(cs);
	/* every rank reads the file: a bad one is everybody's usage error */
	if (st == NG_OK && cs->cfg.model)
		st = ng_coll_model_load(cs->cfg.model, &cs->model, cs->me == 0);
	if (st == NG_OK)
		st = ng_coll_select_ops(cs);
	if (st == NG_OK)
		st = ng_coll_select(cs);
	if (st != NG_OK)
		return st;
	s->variants = cs->nvar;

	len = (size_t)cs->P * cs->smax;
	len = len < 128 ? 128 : len;
	st = ng_buf_alloc(run->comm, len, (void **)&cs->x.sbuf);
	if (st == NG_OK)
		st = ng_buf_alloc(run->comm, len, (void **)&cs->x.rbuf);
	if (st == NG_OK)
		st = ng_buf_alloc(run->comm, len, (void **)&cs->x.tmp);
	if (st == NG_OK)
		st = ng_sampler_init(&cs->smp, run, &spec);
	if (st != NG_OK)
		return st;
	cs->warm = calloc(1 + run->warmup, sizeof(double));
	cs->warm_all = calloc((size_t)cs->P, sizeof(double));
	cs->times = calloc(run->count ? run->count : 1, sizeof(double));
	cs->medians = calloc(cs->nvar * run->nsizes, sizeof(double));
	cs->busbw = calloc(cs->nvar * run->nsizes, sizeof(double));
	cs->predicted = calloc(cs->nvar * run->nsizes, sizeof(double));
	if (!cs->warm || !cs->warm_all || !cs->times || !cs->medians || !cs->busbw || !cs->predicted) {
		ng_error("coll: out of memory setting up %d ranks", cs->P);
		return NG_ERR_NOMEM;
	}
	return NG_OK;
}

static ng_status ng_coll_ready(struct ng_session *s, void *state)
{
	return ng_coll_block(state, &s->gc);
}

/* barrier moves no data: measured once, at the first size */
static bool ng_coll_once_done(const struct ng_session *s, const struct ng_coll_state *cs)
{
	return cs->var[s->variant].op == NG_COLL_BARRIER && s->index > 0;
}

static ng_status ng_coll_session_measure(struct ng_session *s, void *state, size_t size)
{
	struct ng_coll_state *cs = state;

	if (ng_coll_once_done(s, cs))
		return NG_OK;
	return ng_coll_measure(cs, &s->gc, &cs->var[s->variant], size);
}

static ng_status ng_coll_session_report(struct ng_session *s, void *state, size_t size)
{
	struct ng_coll_state *cs = state;

	if (ng_coll_once_done(s, cs))
		return ng_gclock_end(&s->gc);
	return ng_coll_report(cs, &s->gc, s->variant, s->index, size);
}

static void ng_coll_finish(struct ng_session *s, void *state, bool all)
{
	ng_coll_summary(state, all ? s->run->nsizes : 0);
}

static void ng_coll_teardown(struct ng_session *s, void *state)
{
	struct ng_coll_state *cs = state;
	struct ng_comm *c = s->run->comm;

	ng_free(c, cs->x.sbuf);
	ng_free(c, cs->x.rbuf);
	ng_free(c, cs->x.tmp);
	ng_sampler_free(&cs->smp);
	free(cs->warm);
	free(cs->warm_all);
	free(cs->times);
	free(cs->medians);
	free(cs->busbw);
	free(cs->predicted);
}

static const struct ng_session_ops ng_coll_session = {
    .state = sizeof(struct ng_coll_state),
    .flags = NG_SESSION_WINDOWS | NG_SESSION_ANNOUNCE,
    .config = NG_SESSION_CONFIG(struct ng_coll_state, cfg),
    .setup = ng_coll_setup,
    .ready = ng_coll_ready,
    .measure = ng_coll_session_measure,
    .report = ng_coll_session_report,
    .finish = ng_coll_finish,
    .teardown = ng_coll_teardown,
};

static ng_status ng_coll_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_coll_session);
}

static const struct ng_option ng_coll_options[] = {
    {.name = "coll-op",
     NG_STRING_AT(struct ng_coll_config, ops),
     .def = "all",
     .help = "collectives, comma-separated: allreduce, bcast, reduce, allgather, reduce_scatter, barrier, "
             "gather, scatter, or all",
     .metavar = "OP[,OP...]",
     .list = true},
    {.name = "coll-algo",
     NG_STRING_AT(struct ng_coll_config, algos),
     .def = "all",
     .help = "coll algorithms, comma-separated: ring, rd, binomial, rabenseifner, scatter_allgather, "
             "dissemination, linear, native (the module's own, MPI's with -x mpi), or all (every one of each "
             "operation that can run)",
     .metavar = "NAME[,NAME...]",
     .list = true},
    {.name = "coll-timing",
     NG_CHOICE_AT(struct ng_coll_config, timing),
     .choices = "window|barrier",
     .def = "window",
     .help = "coll: start every repetition at one time on the global clock (window), or after a barrier "
             "(barrier, the OSU/IMB way)"},
    {.name = "coll-type",
     NG_CHOICE_AT(struct ng_coll_config, type),
     .choices = "int32|int64|float|double",
     .def = "int32",
     .help = "coll: element type of the data (reductions are sums)"},
    {.name = "coll-model",
     NG_STRING_AT(struct ng_coll_config, model),
     .metavar = "FILE",
     .help = "coll: a loggp result file; each ngauge algorithm's LogGP time from its parameters, printed "
             "beside the measurement (model_us)"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_coll = {
    .name = "coll",
    .desc = "collectives (allreduce, bcast, reduce, allgather, reduce_scatter, barrier, gather, scatter): "
            "ngauge's algorithms and the module's own side by side, on the global clock",
    .options = ng_coll_options,
    .needs = NG_CAP_CHANNEL | NG_CAP_RELIABLE,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = false,
    .default_sizes = "8-64K",
    .run = ng_coll_run,
};
