/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plogp: the parameterised LogP model of Kielmann, Bal and Verstoep (2000):
 * L and, for every message size m, g(m), o_s(m), o_r(m), each with a 95%
 * confidence interval.
 *
 * Two ranks: rank 0 is the client (sender), rank 1 the server.  Per size m
 * the client times rounds of four kinds, each ending with the server's reply
 * of m bytes (from its own send buffer, as pingpong's default; assess.h):
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
 * so the smallest measured size stands in for it).  Every size also reports
 * L(m) = RTT(m) / 2 - g(m), which the model holds constant: how far it moves
 * with m shows how well pLogP describes the network (L(m0) is L).
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
 * --plogp-budget is spent.  Values are medians, ci95 the order-statistic
 * intervals of the median (analysis/stats.h); g's interval also carries
 * RTT's.  ci95_total adds the systematic bounds (ng_loggp_sys_apply: a single timed
 * call is known to a tick and a read at best, and over emu to its
 * overshoot); the table prints it.  Negative or non-finite values are flagged, never reported
 * (analysis/loggp.h, ng_param_set).
 *
 * The rounds, batches, sampling decisions and the session's steps are
 * shared with loggp (assess.h); here are the OS and OR measurements, the
 * figures and the report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/assess.h"

/* Samples: the stream NG_AS_SINGLE holds RTT rounds, NG_AS_TRAIN GAP rounds,
 * NG_AS_OS and NG_AS_OR one sample per call. */
struct ng_pl {
	struct ng_as as; /* first: the machinery shared with loggp */
	/* results, rank 0 */
	struct ng_param L0; /* L(m) at the smallest size: the model's L */
	bool have0;
};

static struct ng_pl *ng_pl_of(struct ng_as *as)
{
	return ng_container_of(as, struct ng_pl, as);
}

/* ---- timed rounds ------------------------------------------------------ */

/* OS: n messages, each after a busy-wait of D; every send call is timed. */
static ng_status ng_pl_client_os(struct ng_as *as, size_t size, uint64_t d_ticks, bool timed)
{
	const struct ng_timer *tm = as->tm;
	struct ng_comm *c = as->c;
	void *sbuf = as->bufs.send;
	size_t nmsg = as->n;
	ng_status st = NG_OK;

	for (size_t k = 0; k < nmsg && st == NG_OK; k++) {
		uint64_t a, b;

		ng_as_spin(tm, d_ticks);
		a = ng_timer_now(tm);
		st = ng_send(c, as->peer, sbuf, size);
		b = ng_timer_now(tm);
		if (timed)
			ng_sampler_push(&as->smp, NG_AS_OS, ng_timer_us(tm, b - a) - tm->overhead_ns * 1e-3);
	}
	if (st == NG_OK)
		st = ng_recv(c, as->peer, as->bufs.recv, size);
	return st;
}

/* OR: n messages, each received after a busy-wait of D; every receive call
 * is timed. */
static ng_status ng_pl_server_or(struct ng_as *as, size_t size, uint64_t d_ticks, bool timed)
{
	const struct ng_timer *tm = as->tm;
	struct ng_comm *c = as->c;
	size_t nmsg = as->n;
	unsigned bank = as->bank;
	ng_status st = NG_OK;

	for (size_t k = 0; k < nmsg && st == NG_OK; k++) {
		uint64_t a, b;

		ng_as_spin(tm, d_ticks);
		a = ng_timer_now(tm);
		st = ng_recv(c, as->peer, ng_as_slot(as, bank, k), size);
		b = ng_timer_now(tm);
		if (timed)
			ng_sampler_push(&as->smp, NG_AS_OR, ng_timer_us(tm, b - a) - tm->overhead_ns * 1e-3);
	}
	return st;
}

/* ---- figures ---------------------------------------------------------------- */

struct ng_pl_fig {
	struct ng_stats rtt, gap, os;
	double g, g_lo, g_hi; /* from the GAP rounds and RTT */
};

static void ng_pl_client_figures(struct ng_as *as, struct ng_pl_fig *f)
{
	double k = (double)(as->n - 1);

	ng_sampler_stats(&as->smp, ng_as_x(as, NG_AS_SINGLE), ng_as_n(as, NG_AS_SINGLE), &f->rtt);
	ng_sampler_stats(&as->smp, ng_as_x(as, NG_AS_TRAIN), ng_as_n(as, NG_AS_TRAIN), &f->gap);
	ng_sampler_stats(&as->smp, ng_as_x(as, NG_AS_OS), ng_as_n(as, NG_AS_OS), &f->os);
	f->g = (f->gap.median - f->rtt.median) / k;
	f->g_lo = (f->gap.ci_lo - f->rtt.ci_hi) / k;
	f->g_hi = (f->gap.ci_hi - f->rtt.ci_lo) / k;
}

/* D = max(1.25 RTT(m), 1.5 g(m)); the CI target is relative to RTT(m). */
static void ng_pl_client_ctl(struct ng_as *as, double *delay_p, double *scale_p, double *hw_p)
{
	struct ng_pl_fig f;

	ng_pl_client_figures(as, &f);
	*delay_p = 1.25 * f.rtt.median;
	if (1.5 * f.g > *delay_p)
		*delay_p = 1.5 * f.g;
	*scale_p = f.rtt.median;
	*hw_p = fmax((f.rtt.ci_hi - f.rtt.ci_lo) / 2.0, (f.g_hi - f.g_lo) / 2.0);
	if (ng_as_n(as, NG_AS_OS))
		*hw_p = fmax(*hw_p, (f.os.ci_hi - f.os.ci_lo) / 2.0);
}

static double ng_pl_server_hw(struct ng_as *as)
{
	struct ng_stats so;

	ng_sampler_stats(&as->smp, ng_as_x(as, NG_AS_OR), ng_as_n(as, NG_AS_OR), &so);
	return (so.ci_hi - so.ci_lo) / 2.0;
}

/* ---- report ---------------------------------------------------------------- */

/* "12.3 [12.1, 12.5]" (value [95% CI]), or "n/a" for a flagged value. */
static void ng_pl_cell(char *buf, size_t len, bool ok, double value, double lo, double hi)
{
	if (!ok)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.4g [%.4g, %.4g]", value, lo, hi);
}

static ng_status ng_pl_report(struct ng_as *as, size_t size, double d_us)
{
	struct ng_pl *pl = ng_pl_of(as);
	struct ng_run *run = as->run;
	struct ng_sampler *smp = &as->smp;
	size_t ntrain = ng_as_n(as, NG_AS_TRAIN);
	const double *train = ng_as_x(as, NG_AS_TRAIN);
	double *gx = ng_sampler_work(smp);
	struct ng_pl_fig f;
	struct ng_stats so;
	struct ng_param g, os, orr, lat;
	struct ng_row *row;
	json_t *js;

	ng_pl_client_figures(as, &f);
	/* Per-round g samples for the row's statistics. */
	for (size_t i = 0; i < ntrain; i++)
		gx[i] = (train[i] - f.rtt.median) / (double)(as->n - 1);

	/* The row's count: the GAP rounds. */
	row = ng_sampler_row_n(smp, size, ntrain);
	ng_sampler_row_stats(smp, row, "rtt_us", ng_as_x(as, NG_AS_SINGLE), ng_as_n(as, NG_AS_SINGLE), NULL);
	ng_sampler_row_stats(smp, row, "g_us", gx, ntrain, NULL);
	ng_sampler_row_stats(smp, row, "o_s_us", ng_as_x(as, NG_AS_OS), ng_as_n(as, NG_AS_OS), NULL);
	ng_sampler_row_stats(smp, row, "o_r_us", ng_as_x(as, NG_AS_OR), ng_as_n(as, NG_AS_OR), &so);

	/* ci95: sampling only; a timed call is known to a tick and a read at
	 * best, and over emu to its overshoot: the systematic bounds
	 * (ng_loggp_sys_apply), in ci95_total. */
	ng_param_set(&g, "g", f.g, f.g_lo, f.g_hi);
	ng_param_set(&os, "o_s", f.os.median, f.os.ci_lo, f.os.ci_hi);
	ng_param_set(&orr, "o_r", so.median, so.ci_lo, so.ci_hi);
	ng_plogp_latency(f.rtt.median, f.rtt.ci_lo, f.rtt.ci_hi, f.g, f.g_lo, f.g_hi, &lat);
	{
		struct ng_loggp_sys sys;
		double k = as->n > 1 ? (double)(as->n - 1) : 1.0;

		ng_as_systematic(as, &sys);
		/* o_s, o_r: one timed call each; g = (train - rtt) / k: two
		 * differences over k; L = rtt / 2 - g */
		ng_loggp_sys_apply(&os, &sys, 1.0, 1.0);
		ng_loggp_sys_apply(&orr, &sys, 1.0, 1.0);
		ng_loggp_sys_apply(&g, &sys, 2.0 / k, 2.0 / k);
		ng_loggp_sys_apply(&lat, &sys, 0.5 + 2.0 / k, 2.0 + 2.0 / k);
	}
	if (!pl->have0) {
		pl->have0 = true;
		pl->L0 = lat;
	}

	js = json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:f, s:f}", "size", (json_int_t)size, "count",
	               (json_int_t)ntrain, "g_us", ng_as_param_json(&g), "o_s_us", ng_as_param_json(&os),
	               "o_r_us", ng_as_param_json(&orr), "L_us", ng_as_param_json(&lat), "rtt_us",
	               f.rtt.median, "delay_us", d_us);
	if (!js || json_array_append_new(as->sizes, js)) {
		ng_error("plogp: out of memory building the result");
		return NG_ERR_NOMEM;
	}

	ng_row_number(row, "delay_us", d_us);
	ng_sampler_row_raw(smp, row, "rtt_us", ng_as_x(as, NG_AS_SINGLE), ng_as_n(as, NG_AS_SINGLE));
	ng_sampler_row_raw(smp, row, "o_s_us", ng_as_x(as, NG_AS_OS), ng_as_n(as, NG_AS_OS));
	ng_sampler_row_raw(smp, row, "o_r_us", ng_as_x(as, NG_AS_OR), ng_as_n(as, NG_AS_OR));
	return ng_row_commit(run->results, row);
}

static ng_status ng_pl_finish(struct ng_as *as)
{
	struct ng_pl *pl = ng_pl_of(as);
	const struct ng_param *L = &pl->L0;
	char cell[5][64], sz[32];
	size_t i;
	json_t *blk, *v;

	if (!pl->have0)
		return NG_OK;
	printf("# pLogP parameters, n = %zu, median [95%% CI widened by the systematic bounds, ci95_total]; "
	       "L = RTT(m0)/2 - g(m0) at m0 = %lld B\n",
	       as->n, (long long)json_integer_value(json_object_get(json_array_get(as->sizes, 0), "size")));
	printf("#   L(m) = RTT(m)/2 - g(m), constant where the model holds\n");
	printf("# %-10s %-28s %-28s %-28s %-28s\n", "size", "g(m) [us]", "o_s(m) [us]", "o_r(m) [us]",
	       "L(m) [us]");
	json_array_foreach(as->sizes, i, v)
	{
		static const char *const keys[] = {"g_us", "o_s_us", "o_r_us", "L_us"};

		for (size_t k = 0; k < 4; k++) {
			json_t *p = json_object_get(v, keys[k]), *val = json_object_get(p, "value");
			json_t *ci = json_object_get(p, "ci95_total"), *hi = json_array_get(ci, 1);

			ng_pl_cell(cell[k], sizeof(cell[k]), !json_is_null(val), json_number_value(val),
			           json_number_value(json_array_get(ci, 0)),
			           json_is_null(hi) ? INFINITY : json_number_value(hi));
		}
		ng_as_human_size((size_t)json_integer_value(json_object_get(v, "size")), sz, sizeof(sz));
		printf("  %-10s %-28s %-28s %-28s %-28s\n", sz, cell[0], cell[1], cell[2], cell[3]);
		for (size_t k = 0; k < 4; k++) {
			json_t *p = json_object_get(v, keys[k]);

			if (json_is_string(json_object_get(p, "flag")))
				printf("#   %s: %s\n", sz, json_string_value(json_object_get(p, "flag")));
		}
	}
	ng_pl_cell(cell[4], sizeof(cell[4]), ng_param_ok(L), L->value, L->tlo, L->thi);
	printf("# L = %s us%s%s\n", cell[4], ng_param_ok(L) ? "" : ": ", ng_param_ok(L) ? "" : L->flag);
	fflush(stdout);

	blk = json_pack("{s:I, s:o, s:O}", "n", (json_int_t)as->n, "L_us", ng_as_param_json(L), "sizes",
	                as->sizes);
	if (!blk) {
		ng_error("plogp: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	return ng_results_block(as->run->results, "plogp", blk);
}

/* ---- setup --------------------------------------------------------------- */

static const struct ng_as_ops ng_pl_ops = {
    .name = "plogp",
    .per_call = true,
    .client_os = ng_pl_client_os,
    .server_or = ng_pl_server_or,
    .client_ctl = ng_pl_client_ctl,
    .server_hw = ng_pl_server_hw,
    .report = ng_pl_report,
    .finish = ng_pl_finish,
};

/* The session's steps (session.h): the assessment's (assess.h). */
static ng_status ng_pl_setup_step(struct ng_session *s, void *state)
{
	struct ng_pl *pl = state;

	return ng_as_setup(s, &pl->as, &ng_pl_ops);
}

static const struct ng_session_ops ng_pl_session = {
    .state = sizeof(struct ng_pl),
    .config = NG_SESSION_CONFIG_STATE,
    .setup = ng_pl_setup_step,
    .measure = ng_as_measure,
    .report = ng_as_report,
    .conclude = ng_as_conclude,
    .teardown = ng_as_teardown,
};

static ng_status ng_pl_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_pl_session);
}

/* clang-format off */
static const struct ng_option ng_pl_options[] = {
	{ .name = "plogp-n", NG_INT_AT(struct ng_pl, as.cfg.n), .def = "16", .metavar = "N",
	  .help = "messages per train (g(m) saturation; o_s and o_r samples per round)" },
	{ .name = "plogp-budget", NG_DOUBLE_AT(struct ng_pl, as.cfg.budget_s), .def = "15", .metavar = "SECONDS",
	  .help = "time for all sizes together when sampling adaptively (without -c)" },
	{ .name = "plogp-ci", NG_DOUBLE_AT(struct ng_pl, as.cfg.ci), .def = "0.01", .metavar = "REL",
	  .help = "repeat a size until the 95% CI half-widths of RTT, g, o_s, o_r are <= REL * RTT(m)" },
	{ .name = "plogp-delay", NG_DOUBLE_AT(struct ng_pl, as.cfg.delay_us), .def = "0", .metavar = "US",
	  .help = "delay D before each send (o_s) and each receive (o_r); 0: max(1.25 RTT(m), 1.5 g(m))" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_pattern ng_pattern_plogp = {
    .name = "plogp",
    .desc = "pLogP parameters L and g(m), o_s(m), o_r(m) per message size (Kielmann), with 95% CIs",
    .options = ng_pl_options,
    NG_AS_PATTERN_NEEDS,
    .default_sizes = "1-1M:x1.5",
    .run = ng_pl_run,
};
