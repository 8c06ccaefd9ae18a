/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma: the micro-benchmarks of the MPI-2 one-sided papers ("MPI-2 one-sided
 * over InfiniBand" §5.2-5.7, "Scheduling of MPI-2 one sided operations"
 * §5.2-5.3) as one suite over any module with one-sided operations
 * (NG_CAP_ONESIDED, struct ng_rma_ops): the rma module in each of its
 * designs, and mpirma (the MPI library's own).
 *
 * Tests (--rma-test NAME[,NAME...]|all), synchronisation (--rma-sync
 * auto|pscw|fence|lock[,...]: each test runs with every listed mode it
 * allows; auto: its default, marked *):
 *
 *   put-pingpong  ranks 0 and 1, two epochs per iteration: 0 puts into 1,
 *   get-pingpong  then 1 into 0 (get: reads; acc: accumulates int64 sums);
 *   acc-pingpong  time per epoch = half the iteration.  pscw*, fence
 *   bidir         0 and 1 put into each other in one epoch; time per epoch.
 *                 fence*, pscw; and, where the module has non-blocking
 *                 two-sided operations, isend/irecv/waitall ("two-sided")
 *   put-bw        rank 0 issues --rma-burst W puts (gets) into 1 per access
 *   get-bw        epoch; time per epoch at 0, bandwidth W x size / time.
 *                 pscw*, fence, lock
 *   sync          synchronisation calls only: one target (rank 0) with
 *                 n = 1..N origins, timed at the target (post..wait), and
 *                 one origin (rank 0) with n = 2..N targets, timed at the
 *                 origin (start..complete).  pscw*, lock (lock/unlock of
 *                 every target; with n origins each times its own)
 *   multi-origin  n = 1..N origins (ranks 1..n) put W x 64 KiB (or the -s
 *                 sizes, when given) each into rank 0 per epoch; time per
 *                 epoch at the target, aggregate bandwidth n x W x size /
 *                 time.  Needs 3 ranks.  pscw*, fence
 *   sched-1       rank 0 issues W puts and W gets to rank 1 per access
 *                 epoch (scheduling paper, pattern 1); throughput 2 x W x
 *                 size / time.  pscw*, fence, lock
 *   sched-2       each iteration: 0 opens an access epoch to 1 with one put
 *                 and one get, then an exposure epoch for 1, which does the
 *                 reverse (pattern 2); time per iteration.  pscw*, fence
 *   lock          passive target: rank 0 locks 1, puts, unlocks: latency
 *                 per size, exclusive and shared; and n = 2..N origins
 *                 (ranks 1..n) each locking rank 0 and putting the smallest
 *                 size: throughput (every origin times its own epochs; the
 *                 samples are pooled).  lock only (both lock types)
 *
 * N is --rma-origins (default: every rank but one).  With a common clock
 * (--sync auto or force) a measurement of sync, multi-origin or lock with
 * n > 1 begins at a time agreed on the global clock instead of at the
 * barrier's return (patterns/engine/gclock.h; one start per measurement, its
 * epochs back to back), and its row records how far apart ranks 0..n
 * started (start_spread_us, start_late, start_bound_us).  Passive-target epochs
 * need the target inside a one-sided call on modules that are not truly
 * one-sided (the rma module's sendrecv design, MPICH; core/module.h): in
 * the lock modes every rank meets the others after each iteration in a
 * fence of a second, small window, where the targets wait (and serve)
 * while the origins hold their epochs.
 *
 * How the tests' epochs run (windows, timed loops, --verify) is in
 * rma_epochs.c (with the tests' descriptors); this file is the driver:
 * options, plan, report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rma_epochs.h"
#include "engine/session.h"

/* ---- options ------------------------------------------------------------ */

static const struct ng_option rp_options[] = {
    {.name = "rma-test",
     NG_STRING_AT(struct rp_config, tests),
     .def = "all",
     .help = "tests: put-pingpong, get-pingpong, acc-pingpong, bidir, put-bw, get-bw, sync, multi-origin, "
             "sched-1, sched-2, lock (comma-separated), or all",
     .metavar = "NAME[,NAME...]",
     .list = true},
    {.name = "rma-sync",
     NG_STRING_AT(struct rp_config, syncs),
     .def = "auto",
     .help = "synchronisation: pscw, fence, lock (comma-separated; each test runs with those it allows), or "
             "auto (each test's own)",
     .metavar = "MODE[,MODE...]",
     .list = true},
    {.name = "rma-burst",
     NG_INT_AT(struct rp_config, burst),
     .def = "16",
     .help =
         "operations per access epoch of put-bw, get-bw, multi-origin and sched-1 (each of puts and gets)",
     .metavar = "W"},
    {.name = "rma-origins",
     NG_INT_AT(struct rp_config, origins),
     .def = "0",
     .help = "largest number of origins (targets) of sync, multi-origin and lock (0: every rank but one)",
     .metavar = "N"},
    {.name = NULL},
};

/* Finds @word (of @len bytes) among @names[0..n); -1 when absent. */
static int rp_lookup(const char *const *names, size_t n, const char *word, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) == len && strncmp(names[i], word, len) == 0)
			return (int)i;
	return -1;
}

/* --rma-test: a bit per test, in *order_p the order given. */
static ng_status rp_parse_tests(struct rp *rp, bool *all_p, int *order, int *n_p)
{
	const char *s = rp->cfg.tests;
	const char *names[RP_NTESTS];
	int n = 0;

	for (int t = 0; t < RP_NTESTS; t++)
		names[t] = ng_rp_tests[t].name;
	/* "all" may stand among names: every test, in its place. */
	*all_p = false;
	while (*s) {
		size_t len = strcspn(s, ",");
		int t = rp_lookup(names, RP_NTESTS, s, len), k;

		if (t < 0 && len == 3 && strncmp(s, "all", 3) == 0) {
			*all_p = true;
			for (t = 0; t < RP_NTESTS; t++) {
				for (k = 0; k < n && order[k] != t; k++)
					;
				if (k == n)
					order[n++] = t;
			}
			s += len;
			s += *s == ',';
			continue;
		}
		if (t < 0) {
			if (rp->me == 0)
				ng_error(
				    "rma: unknown test '%.*s' in --rma-test (put-pingpong, get-pingpong, "
				    "acc-pingpong, bidir, put-bw, get-bw, sync, multi-origin, sched-1, "
				    "sched-2, lock, all)",
				    (int)len, s);
			return NG_ERR_USAGE;
		}
		for (k = 0; k < n && order[k] != t; k++)
			;
		if (k == n)
			order[n++] = t;
		s += len;
		s += *s == ',';
	}
	if (n == 0) {
		if (rp->me == 0)
			ng_error("rma: --rma-test names no test");
		return NG_ERR_USAGE;
	}
	*n_p = n;
	return NG_OK;
}

/* --rma-sync: 0 for auto, else the bits of the modes given. */
static ng_status rp_parse_syncs(struct rp *rp, unsigned *mask_p)
{
	static const char *const words[] = {"pscw", "fence", "lock"};
	static const enum rp_sync modes[] = {RP_PSCW, RP_FENCE, RP_LOCK_EXCL};
	const char *s = rp->cfg.syncs;
	unsigned mask = 0;

	*mask_p = 0;
	if (strcmp(s, "auto") == 0)
		return NG_OK;
	while (*s) {
		size_t len = strcspn(s, ",");
		int k = rp_lookup(words, 3, s, len);

		if (k < 0) {
			if (rp->me == 0)
				ng_error("rma: unknown mode '%.*s' in --rma-sync (pscw, fence, lock, auto)",
				         (int)len, s);
			return NG_ERR_USAGE;
		}
		mask |= RP_BIT(modes[k]);
		s += len;
		s += *s == ',';
	}
	if (!mask) {
		if (rp->me == 0)
			ng_error("rma: --rma-sync names no mode");
		return NG_ERR_USAGE;
	}
	*mask_p = mask;
	return NG_OK;
}

/* ---- the plan ----------------------------------------------------------- */

/* Appends one measurement; NG_ERR_NOMEM (reported). */
static ng_status rp_plan_add(struct rp *rp, size_t *cap, const struct rp_meas *m)
{
	if (rp->nplan == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct rp_meas *p = realloc(rp->plan, ncap * sizeof(*p));

		if (!p) {
			ng_error("rma: out of memory planning the measurements");
			return NG_ERR_NOMEM;
		}
		rp->plan = p;
		*cap = ncap;
	}
	rp->plan[rp->nplan++] = *m;
	return NG_OK;
}

/* Fills in the derived fields of @m (test, sync, size, fan_in, n set). */
static void rp_meas_derive(const struct rp *rp, struct rp_meas *m)
{
	const struct rp_desc *d = &ng_rp_tests[m->test];
	size_t k = d->burst ? rp->W : 1;
	double s = (double)m->size;

	m->nput = d->put && m->test != RP_SYNC ? k : 0;
	m->nget = d->get ? k : 0;
	m->burst = m->nput + m->nget;
	m->half = false;
	switch (d->shape) {
	case RP_ALTERNATE:
		m->origins = m->targets = 2;
		m->half = m->test != RP_SCHED2;
		/* a sample: one epoch (ping-pongs), or one iteration of two (sched-2) */
		m->epochs = m->half ? 1.0 : 2.0;
		m->bytes = m->epochs * (double)m->burst * s;
		break;
	case RP_BOTH:
		m->origins = m->targets = 2;
		m->epochs = 2.0;
		m->bytes = 2.0 * s;
		break;
	case RP_FAN:
		m->origins = m->fan_in ? m->n : 1;
		m->targets = m->fan_in ? 1 : m->n;
		m->epochs = (double)m->origins;
		m->bytes = (double)m->origins * (double)m->targets * (double)m->burst * s;
		break;
	}
	/*
	 * Epochs that end in a fence (or bidir's exchange of messages) are
	 * timed from one's return to the next on rank 0, and the ranks leave
	 * such a meeting in turn: the one that arrived last leaves first, so
	 * the next epoch at rank 0 is long when it arrived last and short
	 * after (0.06 and 0.70 us in turn over shm with yielding ranks).  A
	 * sample is then the mean of two consecutive epochs, the time a
	 * steady stream of them takes; the epochs run and are checked as
	 * before (doc/rma.md).
	 */
	m->pair = 1;
	if (rp->run->count >= 2 &&
	    (m->sync == RP_TWOSIDED || (m->sync == RP_FENCE && d->shape != RP_ALTERNATE)))
		m->pair = 2;
}

static ng_status rp_plan_one(struct rp *rp, size_t *cap, enum rp_test t, enum rp_sync sync, size_t size,
                             bool fan_in, int n)
{
	struct rp_meas m = {.test = t, .sync = sync, .size = size, .fan_in = fan_in, .n = n};

	rp_meas_derive(rp, &m);
	return rp_plan_add(rp, cap, &m);
}

/* Records why test @t does not run (a skipped test of "all"). */
static void rp_skip(struct rp *rp, enum rp_test t, const char *why)
{
	if (rp->skipped)
		json_object_set_new(rp->skipped, ng_rp_tests[t].name, json_string(why));
}

/* acc-pingpong: the sizes that are not a multiple of 8 bytes, left out. */
static void rp_skip_sizes(struct rp *rp, enum rp_test t)
{
	const struct ng_run *run = rp->run;
	char why[200] = "sizes left out (not a multiple of 8 bytes, the int64 element):";
	size_t len = strlen(why), left = 0;

	for (size_t i = 0; i < run->nsizes; i++) {
		if (run->sizes[i] % 8 == 0)
			continue;
		left++;
		if (len + 24 < sizeof(why))
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s %zu", left > 1 ? "," : "",
			                        run->sizes[i]);
	}
	if (left)
		rp_skip(rp, t, why);
}

/* The measurements of test @t with the modes @syncs. */
static ng_status rp_plan_test(struct rp *rp, size_t *cap, enum rp_test t, unsigned syncs)
{
	const struct ng_run *run = rp->run;
	bool given = run->sizes_given;
	ng_status st = NG_OK;

	for (int s = 0; s < RP_NSYNCS && st == NG_OK; s++) {
		if (!(syncs & RP_BIT(s)))
			continue;
		switch (t) {
		case RP_SYNC:
			for (int n = 1; n <= rp->nmax && st == NG_OK; n++)
				st = rp_plan_one(rp, cap, t, (enum rp_sync)s, 0, true, n);
			for (int n = 2; n <= rp->nmax && st == NG_OK; n++)
				st = rp_plan_one(rp, cap, t, (enum rp_sync)s, 0, false, n);
			break;
		case RP_MULTI:
			for (size_t i = 0; i < (given ? run->nsizes : 1); i++)
				for (int n = 1; n <= rp->nmax && st == NG_OK; n++)
					st = rp_plan_one(rp, cap, t, (enum rp_sync)s,
					                 given ? run->sizes[i] : RP_MULTI_SIZE, true, n);
			break;
		case RP_LOCK:
			for (int type = RP_LOCK_EXCL; type <= RP_LOCK_SHARED; type++) {
				for (size_t i = 0; i < run->nsizes && st == NG_OK; i++)
					st = rp_plan_one(rp, cap, t, (enum rp_sync)type, run->sizes[i], false,
					                 1);
				for (int n = 2; n <= rp->nmax && st == NG_OK; n++)
					st = rp_plan_one(rp, cap, t, (enum rp_sync)type, run->sizes[0], true,
					                 n);
			}
			break;
		default:
			for (size_t i = 0; i < run->nsizes && st == NG_OK; i++)
				if (t != RP_ACC_PP || run->sizes[i] % 8 == 0)
					st =
					    rp_plan_one(rp, cap, t, (enum rp_sync)s, run->sizes[i], false, 1);
			break;
		}
	}
	if (t == RP_ACC_PP)
		rp_skip_sizes(rp, t);
	/* bidir: the same exchange with two-sided operations beside it */
	for (size_t i = 0; t == RP_BIDIR && rp->twoside && i < run->nsizes && st == NG_OK; i++)
		st = rp_plan_one(rp, cap, t, RP_TWOSIDED, run->sizes[i], false, 1);
	return st;
}

/* Why test @t cannot run here with the modes @mask (0: auto), or NULL. */
static const char *rp_cannot(const struct rp *rp, enum rp_test t, unsigned mask, unsigned *syncs_p, char *buf,
                             size_t len)
{
	const struct rp_desc *d = &ng_rp_tests[t];
	const struct ng_run *run = rp->run;
	size_t i;

	*syncs_p = mask ? mask & d->syncs : RP_BIT(d->def);
	if (rp->P < d->min_ranks) {
		snprintf(buf, len, "needs at least %d ranks (a target and %d origins), the run has %d",
		         d->min_ranks, d->min_ranks - 1, rp->P);
		return buf;
	}
	if (!*syncs_p) {
		static const char *const modes[] = {"pscw", "fence", "lock"};
		size_t at = (size_t)snprintf(buf, len, "runs with");

		for (int k = 0, n = 0; k < 3 && at < len; k++)
			if (d->syncs & RP_BIT(k == 2 ? RP_LOCK_EXCL : k))
				at += (size_t)snprintf(buf + at, len - at, "%s %s", n++ ? "," : "", modes[k]);
		if (at < len)
			snprintf(buf + at, len - at, " only, not with the --rma-sync given");
		return buf;
	}
	for (i = 0; t == RP_ACC_PP && i < run->nsizes && run->sizes[i] % 8; i++)
		;
	if (t == RP_ACC_PP && i == run->nsizes) {
		snprintf(buf, len, "accumulates int64 elements and no size is a multiple of 8 bytes");
		return buf;
	}
	return NULL;
}

/* Checks the options and plans every measurement (the same on every rank). */
static ng_status rp_plan_all(struct rp *rp)
{
	long long w = rp->cfg.burst, n = rp->cfg.origins;
	int order[RP_NTESTS], ntests;
	unsigned mask;
	size_t cap = 0;
	bool all;
	ng_status st;

	if (w < 1 || w > 1024) {
		if (rp->me == 0)
			ng_error("rma: --rma-burst must be 1 to 1024, got %lld", w);
		return NG_ERR_USAGE;
	}
	if (n < 0 || n > rp->P - 1) {
		if (rp->me == 0)
			ng_error("rma: --rma-origins %lld needs %lld ranks, the run has %d", n, n + 1, rp->P);
		return NG_ERR_USAGE;
	}
	rp->W = (size_t)w;
	rp->nmax = n ? (int)n : rp->P - 1;
	st = rp_parse_tests(rp, &all, order, &ntests);
	if (st == NG_OK)
		st = rp_parse_syncs(rp, &mask);
	for (int k = 0; k < ntests && st == NG_OK; k++) {
		enum rp_test t = (enum rp_test)order[k];
		unsigned syncs;
		char why[160];
		const char *no = rp_cannot(rp, t, mask, &syncs, why, sizeof(why));

		if (no && !all) {
			if (rp->me == 0)
				ng_error("rma: test %s %s", ng_rp_tests[t].name, no);
			return NG_ERR_USAGE;
		}
		if (no) {
			rp_skip(rp, t, no);
			continue;
		}
		st = rp_plan_test(rp, &cap, t, syncs);
	}
	if (st == NG_OK && rp->nplan == 0) {
		if (rp->me == 0)
			ng_error("rma: no test can run with these options");
		st = NG_ERR_USAGE;
	}
	return st;
}

/* ---- reporting ---------------------------------------------------------- */

/* The time in which the origins of a lock measurement held epochs: the
 * ranks meet between iterations, so per iteration from the first start to
 * the last end where their times compare (rp_one_clock), else the longest
 * epoch; summed. */
static double rp_lock_span(const struct rp *rp, const struct rp_meas *m, int first)
{
	size_t count = ng_sampler_count(&rp->smp);
	double span = 0.0;

	for (size_t i = 0; i < count; i++) {
		double lo = 1e300, hi = -1e300, longest = 0.0;

		for (int r = first; r < first + m->origins; r++) {
			double s = ng_sampler_of(&rp->smp, r, RP_S_START)[i];
			double d = ng_sampler_of(&rp->smp, r, RP_S_TIME)[i];

			lo = s < lo ? s : lo;
			hi = s + d > hi ? s + d : hi;
			longest = d > longest ? d : longest;
		}
		span += rp_one_clock(rp) ? hi - lo : longest;
	}
	return span;
}

/* After a measurement, collective: agrees on --verify, gathers pooled
 * samples, and commits the row. */
static ng_status rp_report(struct rp *rp, const struct rp_meas *m)
{
	struct ng_run *run = rp->run;
	struct ng_sampler *smp = &rp->smp;
	size_t count = ng_sampler_count(smp), n = count;
	bool pooled = m->sync == RP_LOCK_EXCL || m->sync == RP_LOCK_SHARED;
	double agree[2] = {rp->bad ? 1.0 : 0.0, (double)rp->checked};
	double span[3] = {-1e300, -1e300, 0.0}; /* latest end, -earliest start, longest own span */
	const double *x = ng_sampler_mine(smp, RP_S_TIME);
	struct ng_stats t, bw;
	struct ng_row *row;
	ng_status st;

	st = ng_gclock_end(&rp->gc);
	if (st == NG_OK)
		st = ng_boot_sum(run->boot, agree, 2);
	if (st != NG_OK)
		return st;
	if (agree[0] > 0.0)
		return NG_ERR_VERIFY; /* reported by the rank that saw it */
	if (rp->last > rp->first) {
		span[0] = rp_time_us(rp, rp->last);
		span[1] = -rp_time_us(rp, rp->first);
		span[2] = ng_timer_us(rp->tm, rp->last - rp->first);
	}
	st = ng_boot_max(run->boot, span, 3);
	if (st != NG_OK)
		return st;
	/* where the ranks' times compare: from the first start to the last end */
	if (rp_one_clock(rp) && span[0] + span[1] > 0.0)
		span[2] = span[0] + span[1];
	if (pooled) {
		st = ng_sampler_gather(smp);
		if (st != NG_OK)
			return st;
	}
	if (!ng_results_active(run->results))
		return NG_OK;
	if (pooled) {
		/* the origins' samples: rank 0 (one to one) or ranks 1..n */
		int first = m->fan_in ? 1 : 0;

		for (int r = 0; r < m->origins; r++)
			rp->ogrp[r] = first + r;
		x = ng_sampler_pool(smp, RP_S_TIME, rp->ogrp, (size_t)m->origins, &n);
		span[2] = rp_lock_span(rp, m, first);
	}

	if (m->pair > 1)
		n = ng_sampler_fold(ng_sampler_mine(smp, RP_S_TIME), n, m->pair);
	row = ng_sampler_row(smp, m->size);
	ng_row_json(row, "test", json_string(ng_rp_tests[m->test].name));
	ng_row_json(row, "sync", json_string(ng_rp_sync_names[m->sync]));
	ng_sampler_row_stats(smp, row, "time_us", x, n, &t);
	ng_sampler_row_bw(smp, row, "bandwidth_MBps", x, n, m->bytes, &bw);
	ng_sampler_row_bw(smp, row, "epochs_per_s", x, n, m->epochs * 1e6, NULL);
	ng_row_int(row, "origins", m->origins);
	ng_row_int(row, "targets", m->targets);
	ng_row_int(row, "burst", (long long)m->burst);
	ng_row_int(row, "verified", llround(agree[1]));
	ng_row_int(row, "epochs_per_sample", (long long)m->pair);
	/* every access epoch of the timed iterations over their span: from the
	 * first start to the last end of any timing rank where their times
	 * compare (the global clock, or one host), else the longest of their
	 * own spans; lock: per iteration (rp_lock_span) */
	ng_row_number(row, "aggregate_epochs_per_s",
	              span[2] > 0.0 ? m->epochs * (m->half ? 2.0 : 1.0) * (double)count * 1e6 / span[2]
	                            : 0.0);
	ng_gclock_row(&rp->gc, row);
	ng_sampler_row_raw(smp, row, "time_us", x, n);
	rp->med[m - rp->plan] = ng_rp_tests[m->test].burst ? bw.median : t.median;
	return ng_row_commit(run->results, row);
}

/* The "rma" block: what ran and what was left out. */
static ng_status rp_block(struct rp *rp)
{
	const struct ng_run *run = rp->run;
	json_t *blk, *tests, *msizes;
	bool given = run->sizes_given;

	if (!ng_results_active(run->results))
		return NG_OK;
	blk = json_object();
	tests = json_array();
	msizes = json_array();
	if (!blk || !tests || !msizes) {
		json_decref(blk);
		json_decref(tests);
		json_decref(msizes);
		ng_error("rma: out of memory building the result block");
		return NG_ERR_NOMEM;
	}
	for (size_t i = 0; i < rp->nplan; i++) {
		const char *name = ng_rp_tests[rp->plan[i].test].name;

		if (i == 0 || rp->plan[i - 1].test != rp->plan[i].test)
			json_array_append_new(tests, json_string(name));
	}
	for (size_t i = 0; i < (given ? run->nsizes : 1); i++)
		json_array_append_new(msizes,
		                      json_integer((json_int_t)(given ? run->sizes[i] : RP_MULTI_SIZE)));
	json_object_set_new(blk, "tests", tests);
	json_object_set_new(blk, "burst", json_integer((json_int_t)rp->W));
	json_object_set_new(blk, "max_origins", json_integer(rp->nmax));
	json_object_set_new(blk, "multi_origin_sizes", msizes);
	json_object_set_new(blk, "lock_throughput_size", json_integer((json_int_t)run->sizes[0]));
	json_object_set(blk, "skipped", rp->skipped);
	return ng_results_block(run->results, "rma", blk);
}

/* Side by side on stdout: per test, size and origins/targets, the median
 * of its main figure for each synchronisation mode. */
static void rp_summary(const struct rp *rp)
{
	const char *unit = NULL, *key;
	char sz[32];
	json_t *why;

	if (!ng_results_active(rp->run->results))
		return;
	for (size_t i = 0; i < rp->nplan; i++) {
		const struct rp_meas *m = &rp->plan[i];
		bool dup = false;

		for (size_t k = 0; k < i && !dup; k++)
			dup = rp->plan[k].test == m->test && rp->plan[k].size == m->size &&
			      rp->plan[k].origins == m->origins && rp->plan[k].targets == m->targets;
		if (dup)
			continue;
		if (i == 0 || rp->plan[i - 1].test != m->test) {
			unit = ng_rp_tests[m->test].burst ? "bandwidth_MBps" : "time_us";
			printf("# rma %s: median %s by synchronisation\n#%9s %7s %7s",
			       ng_rp_tests[m->test].name, unit, "size", "origins", "targets");
			for (int s = 0; s < RP_NSYNCS; s++)
				printf(" %14s", ng_rp_sync_names[s]);
			putchar('\n');
		}
		ng_fmt_size(m->size, sz, sizeof(sz));
		printf("%10s %7d %7d", sz, m->origins, m->targets);
		for (int s = 0; s < RP_NSYNCS; s++) {
			size_t k;

			for (k = i; k < rp->nplan; k++) {
				const struct rp_meas *x = &rp->plan[k];

				if (x->test == m->test && x->size == m->size && x->origins == m->origins &&
				    x->targets == m->targets && x->sync == (enum rp_sync)s)
					break;
			}
			if (k < rp->nplan) {
				ng_fmt_real(rp->med[k], sz, sizeof(sz));
				printf(" %14s", sz);
			} else {
				printf(" %14s", "-");
			}
		}
		putchar('\n');
	}
	/* The tests "all" left out, and why (also in the rma block). */
	json_object_foreach(rp->skipped, key, why)
	{
		printf("# rma %s: skipped: %s\n", key, json_string_value(why));
	}
	fflush(stdout);
}

/* ---- run ---------------------------------------------------------------- */

/* Whether every rank runs on this rank's host. */
static ng_status rp_one_host(struct rp *rp)
{
	struct ng_boot *b = rp->run->boot;
	size_t len = sizeof(b->host);
	char *all = calloc((size_t)rp->P, len);
	ng_status st;

	if (!all) {
		ng_error("rma: out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_boot_allgather(b, b->host, len, all);
	rp->one_host = st == NG_OK;
	for (int r = 0; r < rp->P && st == NG_OK; r++)
		rp->one_host = rp->one_host && strncmp(all + (size_t)r * len, b->host, len) == 0;
	free(all);
	return st;
}

static ng_status rp_setup(struct rp *rp)
{
	size_t count = rp->run->count, P = (size_t)rp->P;
	struct ng_sampler_spec spec = {
	    .name = "rma",
	    .streams = RP_NSTREAMS,
	    .cap = count,
	    .pool = P,
	    .flags = NG_SAMPLER_GATHER,
	};
	ng_status st;

	rp->ogrp = calloc(P, sizeof(*rp->ogrp));
	rp->tgrp = calloc(P, sizeof(*rp->tgrp));
	if (!rp->ogrp || !rp->tgrp)
		goto err_nomem;
	st = ng_sampler_init(&rp->smp, rp->run, &spec);
	if (st != NG_OK)
		return st;
	if (ng_results_active(rp->run->results)) {
		rp->skipped = json_object();
		if (!rp->skipped)
			goto err_nomem;
	}
	st = rp_one_host(rp);
	if (st == NG_OK)
		st = ng_gclock_setup(&rp->gc, rp->run, NG_GCLOCK_WINDOWS);
	if (st == NG_OK && !rp->gc.on) {
		rp->tbase = ng_timer_now(rp->tm);
		st = ng_boot_bcast(rp->run->boot, 0, &rp->tbase, sizeof(rp->tbase));
	}
	return st;

err_nomem:
	ng_error("rma: out of memory for %zu samples", count);
	return NG_ERR_NOMEM;
}

/* Frees what the run allocated.  The window is freed (collectively) only
 * when every rank ends the same way; after another error the module's close
 * releases it. */
static void rp_teardown(struct rp *rp, ng_status st)
{
	if (st == NG_OK || st == NG_ERR_VERIFY)
		ng_rp_win_close(rp);
	else
		ng_bufs_free(rp->c, &rp->bufs);
	free(rp->plan);
	free(rp->ogrp);
	free(rp->tgrp);
	ng_sampler_free(&rp->smp);
	ng_gclock_free(&rp->gc);
	free(rp->med);
	json_decref(rp->skipped);
}

/* The session's state block (session.h): the run (rma_epochs.h) and the
 * plan's sizes, the list the session runs over (s->sizes): measurement i
 * of the plan is the session's size index i. */
struct rp_session {
	struct rp rp;
	size_t *sizes; /* [nplan] */
};

/* Checks the options, sets up, plans, and points the session at the plan. */
static ng_status rp_session_setup(struct ng_session *s, void *state)
{
	struct rp_session *rs = state;
	struct rp *rp = &rs->rp;
	struct ng_run *run = s->run;
	ng_status st;

	rp->run = run;
	rp->c = run->comm;
	rp->o = ng_rma(run->comm);
	rp->tm = run->timer;
	rp->me = s->me;
	rp->P = s->nranks;
	rp->twoside =
	    (run->comm->caps & (NG_CAP_CHANNEL | NG_CAP_NONBLOCK)) == (NG_CAP_CHANNEL | NG_CAP_NONBLOCK);
	st = rp_setup(rp);
	if (st == NG_OK)
		st = rp_plan_all(rp);
	if (st == NG_OK && ng_results_active(run->results)) {
		rp->med = calloc(rp->nplan, sizeof(*rp->med));
		if (!rp->med) {
			ng_error("rma: out of memory");
			st = NG_ERR_NOMEM;
		}
	}
	if (st == NG_OK) {
		rs->sizes = calloc(rp->nplan, sizeof(*rs->sizes));
		if (!rs->sizes) {
			ng_error("rma: out of memory planning the measurements");
			st = NG_ERR_NOMEM;
		}
	}
	if (st != NG_OK)
		return st;
	for (size_t i = 0; i < rp->nplan; i++)
		rs->sizes[i] = rp->plan[i].size;
	s->sizes = rs->sizes;
	s->nsizes = rp->nplan;
	return rp_block(rp);
}

/* Before measurement s->index of the plan: its test's window (the first
 * measurement of a test opens it), its resets, the sampler's start. */
static ng_status rp_begin(struct ng_session *s, void *state, size_t size)
{
	struct rp *rp = &((struct rp_session *)state)->rp;
	size_t i = s->index;
	const struct rp_meas *m = &rp->plan[i];
	ng_status st;

	(void)size;
	if (i == 0 || rp->plan[i - 1].test != m->test) {
		size_t last = i;

		ng_rp_win_close(rp);
		while (last < rp->nplan && rp->plan[last].test == m->test)
			last++;
		st = ng_rp_win_open(rp, i, last);
		if (st != NG_OK)
			return st;
	}
	rp->bad = false;
	rp->checked = 0;
	rp->first = rp->last = 0;
	ng_sampler_start(&rp->smp, rp->run->warmup, rp->run->count);
	ng_rp_verify_setup(rp, m);
	return NG_OK;
}

/* After every rank agreed to go on (the session), the epochs. */
static ng_status rp_measure(struct ng_session *s, void *state, size_t size)
{
	struct rp *rp = &((struct rp_session *)state)->rp;
	const struct rp_meas *m = &rp->plan[s->index];
	ng_status st = NG_OK;

	(void)size;
	/* several origins (targets) with a common clock: they start together,
	 * the ranks beyond the n in use idle (gclock.h) */
	if (rp->gc.windows && ng_rp_tests[m->test].shape == RP_FAN && m->n > 1) {
		rp->gc.idle = rp->me > m->n;
		st = ng_gclock_begin(&rp->gc);
	}
	if (st != NG_OK)
		return st;
	switch (ng_rp_tests[m->test].shape) {
	case RP_ALTERNATE:
		st = ng_rp_alternate(rp, m);
		break;
	case RP_BOTH:
		st = ng_rp_both(rp, m);
		break;
	case RP_FAN:
		st = ng_rp_fan(rp, m);
		break;
	}
	return st;
}

static ng_status rp_session_report(struct ng_session *s, void *state, size_t size)
{
	struct rp *rp = &((struct rp_session *)state)->rp;

	(void)size;
	return rp_report(rp, &rp->plan[s->index]);
}

/* The summary follows a complete run only. */
static void rp_finish(struct ng_session *s, void *state, bool all)
{
	(void)s;
	if (all)
		rp_summary(&((struct rp_session *)state)->rp);
}

static void rp_session_teardown(struct ng_session *s, void *state)
{
	struct rp_session *rs = state;

	rp_teardown(&rs->rp, s->status);
	free(rs->sizes);
}

/*
 * The windows of the global clock are rma's own (rp->gc, which the epochs
 * read; rma_epochs.h), not the session's: only the measurements of several
 * origins or targets start in one.
 */
static const struct ng_session_ops rp_session = {
    .state = sizeof(struct rp_session),
    .config = NG_SESSION_CONFIG(struct rp_session, rp.cfg),
    .setup = rp_session_setup,
    .begin = rp_begin,
    .measure = rp_measure,
    .report = rp_session_report,
    .finish = rp_finish,
    .teardown = rp_session_teardown,
};

static ng_status rp_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &rp_session);
}

const struct ng_pattern ng_pattern_rma = {
    .name = "rma",
    .desc = "MPI-2 one-sided micro-benchmarks: put/get/acc ping-pong, bidir, put/get bandwidth, sync, "
            "multi-origin, scheduling patterns, passive locks (--rma-test)",
    .options = rp_options,
    .needs = NG_CAP_ONESIDED,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = false,
    .default_sizes = "1-1M",
    .run = rp_run,
};
