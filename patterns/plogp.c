/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plogp: the parameterised LogP model of Kielmann, Bal and Verstoep (2000):
 * L and, for every message size m, g(m), o_s(m), o_r(m), each with a 95%
 * confidence interval.
 *
 * Two ranks: rank 0 is the client (sender), rank 1 the server.  Per size m
 * the client times rounds of four kinds, each ending with the server's reply
 * of m bytes (the echo of the last message):
 *   RTT  one message and the reply: RTT(m);
 *   GAP  n messages back to back and the reply (saturation): a sample of
 *        g(m) is (t - RTT(m)) / (n - 1), RTT(m) the median of the RTTs;
 *   OS   n messages, each after a busy-wait of D (> RTT(m), so nothing
 *        queues); the client times every send call: n samples of o_s(m);
 *   OR   n messages back to back; the server busy-waits D before every
 *        receive (the message is surely there) and times every receive
 *        call: n samples of o_r(m).
 * A call timed between two timer reads is measured one read too long: the
 * timer's overhead is subtracted from every o_s and o_r sample.
 * L = RTT(m0) / 2 - g(m0) at the smallest size m0 (Kielmann uses an empty
 * message; modules without a per-message header cannot time an empty one,
 * so the smallest measured size stands in for it).
 *
 * D (--plogp-delay): by default max(1.25 RTT(m), 1.5 g(m)) from a probe of
 * RTT and GAP rounds at the start of every size; a positive value fixes it.
 * Receives of RTT/GAP/OS rounds are pre-posted where the module is
 * non-blocking (two banks of n slots, as in loggp), OR receives are the
 * timed blocking calls themselves.
 *
 * Repetitions: with -c N every kind runs N rounds per size after the probe;
 * otherwise batches of all four kinds, interleaved, doubling, until the 95%
 * CI half-widths of RTT(m), g(m), o_s(m) and o_r(m) are all at most
 * --plogp-ci times RTT(m), or 1000 rounds, or the size's share of
 * --plogp-budget is spent.  Values are medians, intervals the order-statistic
 * intervals of the median (analysis/stats.h), widened by the timer's
 * resolution on each side (a single timed call is not known better); g's
 * interval also carries RTT's.  Negative or non-finite values are flagged, never reported
 * (analysis/loggp.h, ng_param_set).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loggp.h"
#include "common.h"

#define NG_PL_MIN_REPS 8
#define NG_PL_MAX_REPS 1000
#define NG_PL_WARMUP   4

enum ng_pl_kind { NG_PL_RTT, NG_PL_GAP, NG_PL_OS, NG_PL_OR };

enum { NG_PL_C_GO, NG_PL_C_BATCH, NG_PL_C_DELAY, NG_PL_C_SCALE, NG_PL_C_HW, NG_PL_C_N };

struct ng_pl {
	struct ng_run *run;
	struct ng_comm *c;
	const struct ng_timer *tm;
	int me, peer;
	bool client, prepost;
	size_t n, fixed, warmup, cap;
	double budget_us, ci_rel, delay_opt_us;
	struct ng_bufs bufs;
	size_t stride;
	struct ng_req *reqs;
	unsigned bank;
	uint64_t round;
	/* samples of the current size: rtt, gap rounds; o_s, o_r per call */
	double *rtt, *gap, *os, *orr, *scratch, *all;
	size_t nrtt, ngap, nos, nor;
	/* results, rank 0 */
	json_t *sizes;
	double rtt0, rtt0_lo, rtt0_hi, g0, g0_lo, g0_hi; /* at the smallest size */
	bool have0;
	uint64_t t_run0;
};

static inline uint64_t ng_pl_spin(const struct ng_timer *tm, uint64_t ticks)
{
	uint64_t t0 = ng_timer_now(tm), t1;

	do {
		t1 = ng_timer_now(tm);
	} while (t1 - t0 < ticks);
	return t1 - t0;
}

static inline void *ng_pl_slot(const struct ng_pl *pl, unsigned bank, size_t k)
{
	return (char *)pl->bufs.recv + (bank * pl->n + k) * pl->stride;
}

static size_t ng_pl_msgs(const struct ng_pl *pl, enum ng_pl_kind kind)
{
	return kind == NG_PL_RTT ? 1 : pl->n;
}

static ng_status ng_pl_client_round(struct ng_pl *pl, enum ng_pl_kind kind, size_t size, uint64_t d_ticks,
                                    bool timed)
{
	const struct ng_timer *tm = pl->tm;
	struct ng_comm *c = pl->c;
	size_t nmsg = ng_pl_msgs(pl, kind), nos = pl->nos;
	void *sbuf = pl->bufs.send, *rbuf = pl->bufs.recv;
	uint64_t tag = ng_verify_tag(size, pl->me, pl->round), t0, t1;
	ng_status st = NG_OK;

	if (pl->run->verify)
		ng_verify_fill(sbuf, size, tag);

	t0 = ng_timer_now(tm);
	if (kind == NG_PL_OS) {
		for (size_t k = 0; k < nmsg && st == NG_OK; k++) {
			uint64_t a, b;

			ng_pl_spin(tm, d_ticks);
			a = ng_timer_now(tm);
			st = ng_send(c, pl->peer, sbuf, size);
			b = ng_timer_now(tm);
			if (timed)
				pl->os[nos++] = ng_timer_us(tm, b - a) - tm->overhead_ns * 1e-3;
		}
	} else {
		for (size_t k = 0; k < nmsg && st == NG_OK; k++)
			st = ng_send(c, pl->peer, sbuf, size);
	}
	if (st == NG_OK)
		st = ng_recv(c, pl->peer, rbuf, size);
	t1 = ng_timer_now(tm);
	if (st != NG_OK)
		return st;

	pl->round++;
	if (pl->run->verify) {
		st = ng_verify_check(rbuf, size, tag, pl->peer);
		if (st != NG_OK)
			return st;
	}
	if (!timed)
		return NG_OK;
	switch (kind) {
	case NG_PL_RTT:
		pl->rtt[pl->nrtt++] = ng_timer_us(tm, t1 - t0);
		break;
	case NG_PL_GAP:
		pl->gap[pl->ngap++] = ng_timer_us(tm, t1 - t0);
		break;
	case NG_PL_OS:
		pl->nos = nos;
		break;
	case NG_PL_OR:
		for (size_t k = 0; k < nmsg; k++)
			pl->orr[pl->nor++] = 0.0; /* the server's figures */
		break;
	}
	return NG_OK;
}

static ng_status ng_pl_post(struct ng_pl *pl, enum ng_pl_kind kind, size_t size)
{
	size_t nmsg = ng_pl_msgs(pl, kind);
	ng_status st;

	for (size_t k = 0; k < nmsg; k++) {
		st = ng_irecv(pl->c, pl->peer, ng_pl_slot(pl, pl->bank, k), size, &pl->reqs[k]);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

static ng_status ng_pl_server_round(struct ng_pl *pl, enum ng_pl_kind kind, int next, size_t size,
                                    uint64_t d_ticks, bool timed)
{
	const struct ng_timer *tm = pl->tm;
	struct ng_comm *c = pl->c;
	size_t nmsg = ng_pl_msgs(pl, kind), nor = pl->nor;
	unsigned bank = pl->bank;
	ng_status st = NG_OK;

	if (kind == NG_PL_OR) {
		for (size_t k = 0; k < nmsg && st == NG_OK; k++) {
			uint64_t a, b;

			ng_pl_spin(tm, d_ticks);
			a = ng_timer_now(tm);
			st = ng_recv(c, pl->peer, ng_pl_slot(pl, bank, k), size);
			b = ng_timer_now(tm);
			if (timed)
				pl->orr[nor++] = ng_timer_us(tm, b - a) - tm->overhead_ns * 1e-3;
		}
	} else if (pl->prepost) {
		st = ng_waitall(c, pl->reqs, nmsg);
	} else {
		for (size_t k = 0; k < nmsg && st == NG_OK; k++)
			st = ng_recv(c, pl->peer, ng_pl_slot(pl, bank, k), size);
	}
	if (st != NG_OK)
		return st;

	pl->bank ^= 1u;
	if (pl->prepost && next >= 0 && next != NG_PL_OR) {
		st = ng_pl_post(pl, (enum ng_pl_kind)next, size);
		if (st != NG_OK)
			return st;
	}
	st = ng_send(c, pl->peer, ng_pl_slot(pl, bank, nmsg - 1), size);
	if (st != NG_OK)
		return st;
	if (pl->run->verify) {
		uint64_t tag = ng_verify_tag(size, pl->peer, pl->round);

		for (size_t k = 0; k < nmsg; k++) {
			st = ng_verify_check(ng_pl_slot(pl, bank, k), size, tag, pl->peer);
			if (st != NG_OK)
				return st;
		}
	}
	pl->round++;
	pl->nor = nor;
	return NG_OK;
}

static ng_status ng_pl_batch(struct ng_pl *pl, const enum ng_pl_kind *kinds, size_t nkinds, size_t reps,
                             size_t untimed, size_t size, double d_us)
{
	uint64_t d_ticks = (uint64_t)(d_us * 1e3 / pl->tm->ns_per_tick + 0.5);
	size_t total = reps * nkinds;
	ng_status st;

	if (pl->prepost) {
		if (!pl->client) {
			st = ng_pl_post(pl, kinds[0], size);
			if (st == NG_OK)
				st = ng_send(pl->c, pl->peer, pl->bufs.send, 1);
		} else {
			st = ng_recv(pl->c, pl->peer, pl->bufs.recv, 1);
		}
		if (st != NG_OK)
			return st;
	}
	for (size_t i = 0; i < total; i++) {
		enum ng_pl_kind kind = kinds[i % nkinds];
		bool timed = i / nkinds >= untimed;

		if (pl->client) {
			st = ng_pl_client_round(pl, kind, size, d_ticks, timed);
		} else {
			int next = i + 1 < total ? (int)kinds[(i + 1) % nkinds] : -1;

			st = ng_pl_server_round(pl, kind, next, size, d_ticks, timed);
		}
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* ---- figures ---------------------------------------------------------------- */

struct ng_pl_fig {
	struct ng_stats rtt, gap, os;
	double g, g_lo, g_hi; /* from the GAP rounds and RTT */
};

static void ng_pl_client_figures(struct ng_pl *pl, struct ng_pl_fig *f)
{
	double k = (double)(pl->n - 1);

	ng_samples_stats(pl->rtt, pl->nrtt, pl->scratch, &f->rtt);
	ng_samples_stats(pl->gap, pl->ngap, pl->scratch, &f->gap);
	ng_samples_stats(pl->os, pl->nos, pl->scratch, &f->os);
	f->g = (f->gap.median - f->rtt.median) / k;
	f->g_lo = (f->gap.ci_lo - f->rtt.ci_hi) / k;
	f->g_hi = (f->gap.ci_hi - f->rtt.ci_lo) / k;
}

static ng_status ng_pl_decide(struct ng_pl *pl, bool probe, size_t done, uint64_t t_size0,
                              double size_budget_us, double per_round_us, double *ctl, bool *more_p)
{
	double mine[NG_PL_C_N] = {0}, all[2 * NG_PL_C_N];
	const double *cl, *sv;
	ng_status st;

	if (pl->client) {
		struct ng_pl_fig f;
		double elapsed = ng_timer_us(pl->tm, ng_timer_now(pl->tm) - t_size0), batch;

		ng_pl_client_figures(pl, &f);
		if (probe) {
			double d = pl->delay_opt_us;

			if (!(d > 0.0)) {
				d = 1.25 * f.rtt.median;
				if (1.5 * f.g > d)
					d = 1.5 * f.g;
			}
			mine[NG_PL_C_DELAY] = d;
		} else {
			mine[NG_PL_C_DELAY] = ctl[NG_PL_C_DELAY];
		}
		mine[NG_PL_C_SCALE] = f.rtt.median;
		mine[NG_PL_C_HW] = fmax((f.rtt.ci_hi - f.rtt.ci_lo) / 2.0, (f.g_hi - f.g_lo) / 2.0);
		if (pl->nos)
			mine[NG_PL_C_HW] = fmax(mine[NG_PL_C_HW], (f.os.ci_hi - f.os.ci_lo) / 2.0);
		if (probe) {
			batch = (double)(pl->fixed ? pl->fixed : NG_PL_MIN_REPS);
			mine[NG_PL_C_GO] = 1.0;
		} else if (pl->fixed) {
			batch = 0.0;
		} else {
			double left = size_budget_us - elapsed, cap = (double)(NG_PL_MAX_REPS - done);

			batch = (double)done;
			if (batch > cap)
				batch = cap;
			if (per_round_us > 0.0 && batch * per_round_us > left)
				batch = floor(left / per_round_us);
			mine[NG_PL_C_GO] = batch >= 1.0 ? 1.0 : 0.0;
		}
		mine[NG_PL_C_BATCH] = batch;
	} else if (pl->nor) {
		struct ng_stats so;

		ng_samples_stats(pl->orr, pl->nor, pl->scratch, &so);
		mine[NG_PL_C_HW] = (so.ci_hi - so.ci_lo) / 2.0;
	}

	st = ng_boot_allgather(pl->run->boot, mine, sizeof(mine), all);
	if (st != NG_OK)
		return st;
	cl = all + (size_t)(pl->client ? pl->me : pl->peer) * NG_PL_C_N;
	sv = all + (size_t)(pl->client ? pl->peer : pl->me) * NG_PL_C_N;
	memcpy(ctl, cl, sizeof(mine));
	if (probe || pl->fixed)
		*more_p = cl[NG_PL_C_GO] > 0.0;
	else
		*more_p = cl[NG_PL_C_GO] > 0.0 &&
		          fmax(cl[NG_PL_C_HW], sv[NG_PL_C_HW]) > pl->ci_rel * cl[NG_PL_C_SCALE];
	return NG_OK;
}

/* ---- report ---------------------------------------------------------------- */

static json_t *ng_pl_param_json(const struct ng_param *p)
{
	json_t *o;

	if (!ng_param_ok(p))
		return json_pack("{s:n, s:s}", "value", "flag", p->flag);
	o = json_pack("{s:f, s:[f, o]}", "value", p->value, "ci95", p->lo,
	              isfinite(p->hi) ? json_real(p->hi) : json_null());
	if (o && p->note[0])
		json_object_set_new(o, "note", json_string(p->note));
	return o;
}

static void ng_pl_human_size(size_t v, char *buf, size_t len)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, len, "%zu MiB", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, len, "%zu KiB", v >> 10);
	else
		snprintf(buf, len, "%zu B", v);
}

static void ng_pl_cell(const struct ng_param *p, char *buf, size_t len)
{
	if (!ng_param_ok(p))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.4g [%.4g, %.4g]", p->value, p->lo, p->hi);
}

static ng_status ng_pl_report(struct ng_pl *pl, size_t size, double d_us)
{
	struct ng_run *run = pl->run;
	struct ng_pl_fig f;
	struct ng_stats so, gs;
	struct ng_param g, os, orr;
	double res = pl->tm->resolution_ns * 1e-3;
	struct ng_row *row;
	json_t *js;

	ng_pl_client_figures(pl, &f);
	ng_samples_stats(pl->orr, pl->nor, pl->scratch, &so);
	/* A timed call is known to the timer's resolution at best: the
	 * intervals carry it on top of the statistical one. */
	ng_param_set(&g, "g", f.g, f.g_lo - res, f.g_hi + res);
	ng_param_set(&os, "o_s", f.os.median, f.os.ci_lo - res, f.os.ci_hi + res);
	ng_param_set(&orr, "o_r", so.median, so.ci_lo - res, so.ci_hi + res);
	if (!pl->have0) {
		pl->have0 = true;
		pl->rtt0 = f.rtt.median;
		pl->rtt0_lo = f.rtt.ci_lo;
		pl->rtt0_hi = f.rtt.ci_hi;
		pl->g0 = f.g;
		pl->g0_lo = f.g_lo;
		pl->g0_hi = f.g_hi;
	}

	js = json_pack("{s:I, s:I, s:o, s:o, s:o, s:f, s:f}", "size", (json_int_t)size, "count",
	               (json_int_t)pl->ngap, "g_us", ng_pl_param_json(&g), "o_s_us", ng_pl_param_json(&os),
	               "o_r_us", ng_pl_param_json(&orr), "rtt_us", f.rtt.median, "delay_us", d_us);
	if (!js || json_array_append_new(pl->sizes, js)) {
		ng_error("plogp: out of memory building the result");
		return NG_ERR_NOMEM;
	}

	/* Per-round g samples for the row's statistics. */
	for (size_t i = 0; i < pl->ngap; i++)
		pl->all[i] = (pl->gap[i] - f.rtt.median) / (double)(pl->n - 1);
	ng_samples_stats(pl->all, pl->ngap, pl->scratch, &gs);

	row = ng_row_begin(run->results, size, pl->ngap);
	ng_row_stats(row, "rtt_us", &f.rtt);
	ng_row_stats(row, "g_us", &gs);
	ng_row_stats(row, "o_s_us", &f.os);
	ng_row_stats(row, "o_r_us", &so);
	ng_row_number(row, "delay_us", d_us);
	ng_row_raw(row, "rtt_us", pl->rtt, pl->nrtt);
	ng_row_raw(row, "o_s_us", pl->os, pl->nos);
	ng_row_raw(row, "o_r_us", pl->orr, pl->nor);
	return ng_row_commit(run->results, row);
}

static ng_status ng_pl_finish(struct ng_pl *pl)
{
	struct ng_param L;
	char cell[4][64], sz[32];
	size_t i;
	json_t *blk, *v;

	if (!pl->have0)
		return NG_OK;
	ng_plogp_latency(pl->rtt0, pl->rtt0_lo, pl->rtt0_hi, pl->g0, pl->g0_lo, pl->g0_hi, &L);

	printf("# pLogP parameters, n = %zu, median [95%% CI]; L = RTT(m0)/2 - g(m0) at m0 = %lld B\n", pl->n,
	       (long long)json_integer_value(json_object_get(json_array_get(pl->sizes, 0), "size")));
	printf("# %-10s %-28s %-28s %-28s\n", "size", "g(m) [us]", "o_s(m) [us]", "o_r(m) [us]");
	json_array_foreach(pl->sizes, i, v)
	{
		static const char *const keys[] = {"g_us", "o_s_us", "o_r_us"};

		for (size_t k = 0; k < 3; k++) {
			json_t *p = json_object_get(v, keys[k]), *ci = json_object_get(p, "ci95");

			if (json_is_null(json_object_get(p, "value")))
				snprintf(cell[k], sizeof(cell[k]), "n/a");
			else
				snprintf(cell[k], sizeof(cell[k]), "%.4g [%.4g, %.4g]",
				         json_number_value(json_object_get(p, "value")),
				         json_number_value(json_array_get(ci, 0)),
				         json_is_null(json_array_get(ci, 1))
				             ? INFINITY
				             : json_number_value(json_array_get(ci, 1)));
		}
		ng_pl_human_size((size_t)json_integer_value(json_object_get(v, "size")), sz, sizeof(sz));
		printf("  %-10s %-28s %-28s %-28s\n", sz, cell[0], cell[1], cell[2]);
		for (size_t k = 0; k < 3; k++) {
			json_t *p = json_object_get(v, keys[k]);

			if (json_is_string(json_object_get(p, "flag")))
				printf("#   %s: %s\n", sz, json_string_value(json_object_get(p, "flag")));
		}
	}
	ng_pl_cell(&L, cell[3], sizeof(cell[3]));
	printf("# L = %s us%s%s\n", cell[3], ng_param_ok(&L) ? "" : ": ", ng_param_ok(&L) ? "" : L.flag);
	fflush(stdout);

	blk = json_pack("{s:I, s:o, s:O}", "n", (json_int_t)pl->n, "L_us", ng_pl_param_json(&L), "sizes",
	                pl->sizes);
	if (!blk) {
		ng_error("plogp: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	return ng_results_block(pl->run->results, "plogp", blk);
}

/* ---- one size ------------------------------------------------------------- */

static ng_status ng_pl_size(struct ng_pl *pl, size_t idx, size_t size)
{
	static const enum ng_pl_kind probe_kinds[] = {NG_PL_RTT, NG_PL_GAP};
	static const enum ng_pl_kind all_kinds[] = {NG_PL_RTT, NG_PL_GAP, NG_PL_OS, NG_PL_OR};
	struct ng_run *run = pl->run;
	uint64_t t_size0 = ng_timer_now(pl->tm), t_b0;
	double ctl[NG_PL_C_N] = {0}, size_budget = 0.0, per_round;
	size_t done = 0, probe_reps = pl->fixed && pl->fixed < NG_PL_MIN_REPS ? pl->fixed : NG_PL_MIN_REPS;
	bool more;
	ng_status st;

	pl->nrtt = pl->ngap = pl->nos = pl->nor = 0;
	if (pl->client)
		size_budget =
		    (pl->budget_us - ng_timer_us(pl->tm, t_size0 - pl->t_run0)) / (double)(run->nsizes - idx);

	st = ng_pl_batch(pl, probe_kinds, 2, pl->warmup + probe_reps, pl->warmup, size, 0.0);
	if (st != NG_OK)
		return st;
	st = ng_pl_decide(pl, true, 0, t_size0, size_budget, 0.0, ctl, &more);
	if (st != NG_OK)
		return st;
	while (more) {
		size_t b = (size_t)ctl[NG_PL_C_BATCH];

		t_b0 = ng_timer_now(pl->tm);
		st = ng_pl_batch(pl, all_kinds, 4, b, 0, size, ctl[NG_PL_C_DELAY]);
		if (st != NG_OK)
			return st;
		done += b;
		if (ng_cancelled(run))
			return NG_ERR_CANCELLED;
		per_round = ng_timer_us(pl->tm, ng_timer_now(pl->tm) - t_b0) / (double)b;
		st = ng_pl_decide(pl, false, done, t_size0, size_budget, per_round, ctl, &more);
		if (st != NG_OK)
			return st;
	}

	st = ng_samples_gather(run->boot, pl->orr, pl->nor, pl->all);
	if (st != NG_OK)
		return st;
	if (pl->client)
		memcpy(pl->orr, pl->all + (size_t)pl->peer * pl->nor, pl->nor * sizeof(*pl->orr));
	if (!ng_results_active(run->results))
		return NG_OK;
	return ng_pl_report(pl, size, ctl[NG_PL_C_DELAY]);
}

/* ---- setup --------------------------------------------------------------- */

static ng_status ng_pl_setup(struct ng_pl *pl)
{
	struct ng_run *run = pl->run;
	const struct ng_args *a = run->args;
	long long n = ng_args_int(a, "plogp-n");
	size_t max = ng_sizes_max(run), nslots, per;
	ng_status st;

	if (n < 2 || n > 100000) {
		if (pl->me == 0)
			ng_error("plogp: --plogp-n must be between 2 and 100000, got %lld", n);
		return NG_ERR_USAGE;
	}
	pl->n = (size_t)n;
	pl->budget_us = ng_args_double(a, "plogp-budget") * 1e6;
	pl->ci_rel = ng_args_double(a, "plogp-ci");
	pl->delay_opt_us = ng_args_double(a, "plogp-delay");
	if (!(pl->budget_us >= 0.0) || !(pl->ci_rel >= 0.0) || !(pl->delay_opt_us >= 0.0)) {
		if (pl->me == 0)
			ng_error("plogp: --plogp-budget, --plogp-ci and --plogp-delay must not be negative");
		return NG_ERR_USAGE;
	}
	pl->fixed = ng_args_given(a, "count") ? run->count : 0;
	pl->warmup = ng_args_given(a, "warmup") ? run->warmup : NG_PL_WARMUP;
	pl->cap = NG_PL_MIN_REPS + (pl->fixed > NG_PL_MAX_REPS ? pl->fixed : NG_PL_MAX_REPS);
	pl->stride = ng_slot_stride(max);
	pl->client = pl->me == 0;
	pl->peer = 1 - pl->me;
	pl->prepost = (run->comm->caps & NG_CAP_NONBLOCK) != 0;

	/* o_s and o_r give n samples per round. */
	if (pl->cap > SIZE_MAX / sizeof(double) / pl->n / 2) {
		ng_error("plogp: -c %zu with --plogp-n %zu is too many samples", pl->fixed, pl->n);
		return NG_ERR_USAGE;
	}
	per = pl->cap * pl->n;
	pl->rtt = calloc(pl->cap, sizeof(double));
	pl->gap = calloc(pl->cap, sizeof(double));
	pl->os = calloc(per, sizeof(double));
	pl->orr = calloc(per, sizeof(double));
	pl->scratch = calloc(per, sizeof(double));
	pl->all = calloc(2 * per, sizeof(double));
	pl->reqs = calloc(pl->n, sizeof(*pl->reqs));
	if (!pl->rtt || !pl->gap || !pl->os || !pl->orr || !pl->scratch || !pl->all || !pl->reqs)
		goto err_nomem;
	if (ng_results_active(run->results)) {
		pl->sizes = json_array();
		if (!pl->sizes)
			goto err_nomem;
	}
	nslots = pl->client ? 1 : 2 * pl->n;
	if (!pl->client && nslots > SIZE_MAX / pl->stride) {
		ng_error("plogp: %zu slots of %zu bytes do not fit in memory", nslots, pl->stride);
		return NG_ERR_NOMEM;
	}
	st =
	    ng_bufs_alloc(run->comm, pl->client ? max : 0, pl->client ? max : nslots * pl->stride, &pl->bufs);
	if (st != NG_OK)
		return st;
	return NG_OK;

err_nomem:
	ng_error("plogp: out of memory");
	return NG_ERR_NOMEM;
}

static void ng_pl_teardown(struct ng_pl *pl)
{
	ng_bufs_free(pl->run->comm, &pl->bufs);
	json_decref(pl->sizes);
	free(pl->reqs);
	free(pl->all);
	free(pl->scratch);
	free(pl->orr);
	free(pl->os);
	free(pl->gap);
	free(pl->rtt);
}

static ng_status ng_pl_run(const struct ng_pattern *p, struct ng_run *run)
{
	struct ng_pl pl = {
	    .run = run,
	    .c = run->comm,
	    .tm = run->timer,
	    .me = run->boot->rank,
	};
	ng_status st;

	(void)p;
	st = ng_sizes_check(run);
	if (st != NG_OK)
		return st;
	st = ng_pl_setup(&pl);
	if (st != NG_OK)
		goto out_teardown;
	pl.t_run0 = ng_timer_now(pl.tm);

	for (size_t i = 0; i < run->nsizes; i++) {
		st = ng_sizes_sync(run);
		if (st != NG_OK)
			break;
		st = ng_pl_size(&pl, i, run->sizes[i]);
		if (st != NG_OK)
			break;
		if (pl.me == 0)
			ng_progress(run, i + 1, run->nsizes, run->sizes[i]);
	}
	if (st == NG_OK && ng_results_active(run->results))
		st = ng_pl_finish(&pl);

out_teardown:
	ng_pl_teardown(&pl);
	return st;
}

/* clang-format off */
static const struct ng_option ng_pl_options[] = {
	{ .name = "plogp-n", .type = NG_OPT_INT, .def = "16", .metavar = "N",
	  .help = "messages per train (g(m) saturation; o_s and o_r samples per round)" },
	{ .name = "plogp-budget", .type = NG_OPT_DOUBLE, .def = "15", .metavar = "SECONDS",
	  .help = "time for all sizes together when sampling adaptively (without -c)" },
	{ .name = "plogp-ci", .type = NG_OPT_DOUBLE, .def = "0.01", .metavar = "REL",
	  .help = "repeat a size until the 95% CI half-widths of RTT, g, o_s, o_r are <= REL * RTT(m)" },
	{ .name = "plogp-delay", .type = NG_OPT_DOUBLE, .def = "0", .metavar = "US",
	  .help = "delay D before each send (o_s) and each receive (o_r); 0: max(1.25 RTT(m), 1.5 g(m))" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_pattern ng_pattern_plogp = {
    .name = "plogp",
    .desc = "pLogP parameters L and g(m), o_s(m), o_r(m) per message size (Kielmann), with 95% CIs",
    .options = ng_pl_options,
    .needs = NG_CAP_CHANNEL | NG_CAP_RELIABLE,
    .min_ranks = 2,
    .max_ranks = 2,
    .even_ranks = true,
    .default_sizes = "1-1M:x1.5",
    .run = ng_pl_run,
};
