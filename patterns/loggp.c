/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loggp: LogGP parameters L, o_s, o_r, g, G per protocol regime, with 95%
 * confidence intervals (Hoefler, Lichei, Rehm 2007; Netgauge paper 3.3).
 *
 * Two ranks: rank 0 is the client (it sends), rank 1 the server.  For each
 * message size s the client times rounds of four kinds; a round ends with
 * the server's reply (s bytes, the echo of the last message), so rounds never
 * overlap:
 *   R1   PRTT(1,0,s): one message and the reply (a ping-pong);
 *   RN   PRTT(n,0,s): n messages back to back;
 *   RND  PRTT(n,d,s): n messages with a busy-wait of d between sends; the
 *        client times each wait and subtracts what it really took;
 *   ROR  n messages back to back; the server receives the first, then
 *        before each further receive busy-waits d (so the message is surely
 *        there) and times the whole phase: o_r = (t - waits) / (n - 1).
 * From their medians: T(s) = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1) and
 * o_s(s) = (PRTT(n,d,s) - PRTT(1,0,s)) / (n - 1) - d, where d is what the
 * waits really took and the one timer read that each wait leaves outside
 * its measurement (the timer's overhead) is subtracted too.  All sends are
 * blocking; where the module is non-blocking the server pre-posts the
 * receives of every R1/RN/RND round before it replies to the previous one
 * (two banks of n slots alternate, so a posted receive never lands on the
 * message being echoed), and a batch starts only after the server said so
 * with a 1-byte "go" message, sent once its receives are posted.
 *
 * Delay policy (--loggp-delay): d must exceed g + (s-1)G so that nothing
 * queues; by default d = max(PRTT(1,0,s), 1.5 T(s)), both from a probe of
 * R1 and RN rounds at the start of every size; a positive value fixes d.
 *
 * Repetitions: with -c N every kind runs N timed rounds per size (plus the
 * probe).  Without -c the pattern samples adaptively: after the probe,
 * batches of all four kinds, interleaved round by round (drift hits all
 * alike), doubling in size, until the 95% CI half-widths of PRTT(1,0,s),
 * T(s), o_s(s) and o_r(s) are all at most --loggp-ci times PRTT(1,0,s), or
 * 1000 rounds, or the size's share of --loggp-budget is spent (the share is
 * what is left of the budget divided by the sizes left, so fast small sizes
 * leave time to the large ones).  The client decides for both ranks; the
 * server contributes its o_r interval.  Warm-up: -w rounds of R1 and RN if
 * given, else 4, untimed, at the start of every size.
 *
 * Analysis (analysis/loggp.h): the per-size medians with standard errors
 * from their CIs go to ng_loggp_fit(), which segments T(s) by BIC and fits
 * every parameter per segment with its 95% CI.  Report: one row per size
 * (STATS prtt1_us, prttn_us, prttnd_us, o_r_us; numbers T_us, o_s_us,
 * delay_us), a parameter table on stdout, and the "loggp" block.  Flagged
 * parameters (impossible or not estimable) are printed as "n/a" with the
 * reason below the table and written as {"value": null, "flag": ...}.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loggp.h"
#include "common.h"

#define NG_LG_MIN_REPS 8    /* probe rounds and first batch (CI needs >= 6) */
#define NG_LG_MAX_REPS 1000 /* adaptive sampling stops here */
#define NG_LG_WARMUP   4    /* default warm-up rounds per kind and size */

enum ng_lg_kind { NG_LG_R1, NG_LG_RN, NG_LG_RND, NG_LG_ROR };

/* The control record every rank contributes after a batch. */
enum {
	NG_LG_C_GO,    /* client: 1 when time and round limits allow another batch */
	NG_LG_C_BATCH, /* client: rounds of each kind in the next batch */
	NG_LG_C_DELAY, /* client: d in microseconds */
	NG_LG_C_SCALE, /* client: PRTT(1,0,s) median, the CI target's scale */
	NG_LG_C_HW,    /* each: largest CI half-width it measured (us) */
	NG_LG_C_N
};

struct ng_lg {
	struct ng_run *run;
	struct ng_comm *c;
	const struct ng_timer *tm;
	int me, peer;
	bool client;
	bool prepost;
	/* settings */
	size_t n;     /* messages per train */
	size_t fixed; /* -c: rounds per kind, 0 = adaptive */
	size_t warmup;
	size_t cap; /* sample capacity per kind */
	double budget_us, ci_rel, delay_opt_us;
	/* buffers */
	struct ng_bufs bufs;
	size_t stride;       /* between receive slots */
	struct ng_req *reqs; /* [n] */
	unsigned bank;       /* receive bank of the next round (0/1) */
	uint64_t round;      /* rounds so far: the --verify iteration */
	/* samples of the current size */
	double *p1, *pn, *pnd, *pnd_net, *orr, *scratch, *all;
	size_t n1, nn, nnd, nor;
	/* results, rank 0 */
	struct ng_loggp_point *pts;
	size_t npts;
	json_t *sizes;   /* the block's "sizes" array */
	uint64_t t_run0; /* start of the run (ticks) */
};

/* ---- timed rounds ------------------------------------------------------ */

/* Busy-waits @ticks; returns the ticks that really passed. */
static inline uint64_t ng_lg_spin(const struct ng_timer *tm, uint64_t ticks)
{
	uint64_t t0 = ng_timer_now(tm), t1;

	do {
		t1 = ng_timer_now(tm);
	} while (t1 - t0 < ticks);
	return t1 - t0;
}

static inline void *ng_lg_slot(const struct ng_lg *lg, unsigned bank, size_t k)
{
	return (char *)lg->bufs.recv + (bank * lg->n + k) * lg->stride;
}

static size_t ng_lg_msgs(const struct ng_lg *lg, enum ng_lg_kind kind)
{
	return kind == NG_LG_R1 ? 1 : lg->n;
}

static ng_status ng_lg_client_round(struct ng_lg *lg, enum ng_lg_kind kind, size_t size, uint64_t d_ticks,
                                    bool timed)
{
	const struct ng_timer *tm = lg->tm;
	struct ng_comm *c = lg->c;
	size_t nmsg = ng_lg_msgs(lg, kind);
	void *sbuf = lg->bufs.send, *rbuf = lg->bufs.recv;
	uint64_t tag = ng_verify_tag(size, lg->me, lg->round), t0, t1, dsum = 0;
	ng_status st;

	if (lg->run->verify)
		ng_verify_fill(sbuf, size, tag);

	t0 = ng_timer_now(tm);
	st = ng_send(c, lg->peer, sbuf, size);
	for (size_t k = 1; k < nmsg && st == NG_OK; k++) {
		if (kind == NG_LG_RND)
			dsum += ng_lg_spin(tm, d_ticks);
		st = ng_send(c, lg->peer, sbuf, size);
	}
	if (st == NG_OK)
		st = ng_recv(c, lg->peer, rbuf, size);
	t1 = ng_timer_now(tm);
	if (st != NG_OK)
		return st;

	lg->round++;
	if (lg->run->verify) {
		st = ng_verify_check(rbuf, size, tag, lg->peer);
		if (st != NG_OK)
			return st;
	}
	if (!timed)
		return NG_OK;
	switch (kind) {
	case NG_LG_R1:
		lg->p1[lg->n1++] = ng_timer_us(tm, t1 - t0);
		break;
	case NG_LG_RN:
		lg->pn[lg->nn++] = ng_timer_us(tm, t1 - t0);
		break;
	case NG_LG_RND:
		lg->pnd[lg->nnd] = ng_timer_us(tm, t1 - t0);
		lg->pnd_net[lg->nnd++] = ng_timer_us(tm, t1 - t0 - dsum);
		break;
	case NG_LG_ROR:
		lg->orr[lg->nor++] = 0.0; /* the server's figure */
		break;
	}
	return NG_OK;
}

/* Posts the receives of a round of @kind into bank lg->bank. */
static ng_status ng_lg_post(struct ng_lg *lg, enum ng_lg_kind kind, size_t size)
{
	size_t nmsg = ng_lg_msgs(lg, kind);
	ng_status st;

	for (size_t k = 0; k < nmsg; k++) {
		st = ng_irecv(lg->c, lg->peer, ng_lg_slot(lg, lg->bank, k), size, &lg->reqs[k]);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/*
 * Server side of one round.  @next: the kind of the following round in this
 * batch, or -1; its receives are posted before the reply.
 */
static ng_status ng_lg_server_round(struct ng_lg *lg, enum ng_lg_kind kind, int next, size_t size,
                                    uint64_t d_ticks, bool timed)
{
	const struct ng_timer *tm = lg->tm;
	struct ng_comm *c = lg->c;
	size_t nmsg = ng_lg_msgs(lg, kind);
	unsigned bank = lg->bank;
	uint64_t t1 = 0, t2 = 0, dsum = 0;
	ng_status st;

	if (kind == NG_LG_ROR) {
		st = ng_recv(c, lg->peer, ng_lg_slot(lg, bank, 0), size);
		t1 = ng_timer_now(tm);
		for (size_t k = 1; k < nmsg && st == NG_OK; k++) {
			dsum += ng_lg_spin(tm, d_ticks);
			st = ng_recv(c, lg->peer, ng_lg_slot(lg, bank, k), size);
		}
		t2 = ng_timer_now(tm);
	} else if (lg->prepost) {
		st = ng_waitall(c, lg->reqs, nmsg);
	} else {
		st = NG_OK;
		for (size_t k = 0; k < nmsg && st == NG_OK; k++)
			st = ng_recv(c, lg->peer, ng_lg_slot(lg, bank, k), size);
	}
	if (st != NG_OK)
		return st;

	lg->bank ^= 1u;
	if (lg->prepost && next >= 0 && next != NG_LG_ROR) {
		st = ng_lg_post(lg, (enum ng_lg_kind)next, size);
		if (st != NG_OK)
			return st;
	}
	st = ng_send(c, lg->peer, ng_lg_slot(lg, bank, nmsg - 1), size);
	if (st != NG_OK)
		return st;

	/* Off the client's critical path: after the reply. */
	if (lg->run->verify) {
		uint64_t tag = ng_verify_tag(size, lg->peer, lg->round);

		for (size_t k = 0; k < nmsg; k++) {
			st = ng_verify_check(ng_lg_slot(lg, bank, k), size, tag, lg->peer);
			if (st != NG_OK)
				return st;
		}
	}
	lg->round++;
	/* Each measured wait leaves one timer read outside it. */
	if (timed && kind == NG_LG_ROR)
		lg->orr[lg->nor++] =
		    ng_timer_us(tm, t2 - t1 - dsum) / (double)(nmsg - 1) - tm->overhead_ns * 1e-3;
	return NG_OK;
}

/*
 * One batch: @reps rounds of each of the @nkinds kinds, interleaved
 * (kind 0, kind 1, ..., kind 0, ...); the first @untimed rounds of each kind
 * are warm-up.
 */
static ng_status ng_lg_batch(struct ng_lg *lg, const enum ng_lg_kind *kinds, size_t nkinds, size_t reps,
                             size_t untimed, size_t size, double d_us)
{
	uint64_t d_ticks = (uint64_t)(d_us * 1e3 / lg->tm->ns_per_tick + 0.5);
	size_t total = reps * nkinds;
	ng_status st;

	/* The server posts the first round's receives, then lets the client go
	 * (1 byte from its otherwise unused send buffer). */
	if (lg->prepost) {
		if (!lg->client) {
			st = ng_lg_post(lg, kinds[0], size);
			if (st == NG_OK)
				st = ng_send(lg->c, lg->peer, lg->bufs.send, 1);
		} else {
			st = ng_recv(lg->c, lg->peer, lg->bufs.recv, 1);
		}
		if (st != NG_OK)
			return st;
	}
	for (size_t i = 0; i < total; i++) {
		enum ng_lg_kind kind = kinds[i % nkinds];
		bool timed = i / nkinds >= untimed;

		if (lg->client) {
			st = ng_lg_client_round(lg, kind, size, d_ticks, timed);
		} else {
			int next = i + 1 < total ? (int)kinds[(i + 1) % nkinds] : -1;

			st = ng_lg_server_round(lg, kind, next, size, d_ticks, timed);
		}
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* ---- sampling control -------------------------------------------------- */

/* Median and standard error of @x[0..n) (scratch: lg->scratch). */
static void ng_lg_median(struct ng_lg *lg, const double *x, size_t n, double *med_p, double *se_p,
                         struct ng_stats *st_p)
{
	struct ng_stats st;

	ng_samples_stats(x, n, lg->scratch, &st);
	*med_p = st.median;
	*se_p = ng_se_from_ci95(st.ci_lo, st.ci_hi);
	if (st_p)
		*st_p = st;
}

/* The client's figures for the size so far. */
struct ng_lg_fig {
	double p1, se_p1, pn, se_pn, pnd_net, se_pnd, T, se_T, os, se_os;
};

static void ng_lg_client_figures(struct ng_lg *lg, struct ng_lg_fig *f)
{
	double k = (double)(lg->n - 1), ovh = lg->tm->overhead_ns * 1e-3;

	ng_lg_median(lg, lg->p1, lg->n1, &f->p1, &f->se_p1, NULL);
	ng_lg_median(lg, lg->pn, lg->nn, &f->pn, &f->se_pn, NULL);
	f->T = (f->pn - f->p1) / k;
	f->se_T = sqrt(f->se_pn * f->se_pn + f->se_p1 * f->se_p1) / k;
	if (lg->nnd) {
		ng_lg_median(lg, lg->pnd_net, lg->nnd, &f->pnd_net, &f->se_pnd, NULL);
		/* Each measured wait leaves one timer read outside it. */
		f->os = (f->pnd_net - f->p1) / k - ovh;
		f->se_os = sqrt(f->se_pnd * f->se_pnd + f->se_p1 * f->se_p1) / k;
	} else {
		f->pnd_net = f->se_pnd = f->os = f->se_os = 0.0;
	}
}

/*
 * After a batch: every rank contributes its control record, all decide the
 * same.  Returns NG_OK with *more_p and the next batch size / delay in @ctl
 * (the client's record).
 */
static ng_status ng_lg_decide(struct ng_lg *lg, bool probe, size_t done, uint64_t t_size0,
                              double size_budget_us, double per_round_us, double *ctl, bool *more_p)
{
	double mine[NG_LG_C_N] = {0}, all[2 * NG_LG_C_N];
	const double *cl, *sv;
	ng_status st;

	if (lg->client) {
		struct ng_lg_fig f;
		double elapsed = ng_timer_us(lg->tm, ng_timer_now(lg->tm) - t_size0), batch;

		ng_lg_client_figures(lg, &f);
		if (probe) {
			double d = lg->delay_opt_us;

			if (!(d > 0.0)) {
				d = f.p1;
				if (1.5 * f.T > d)
					d = 1.5 * f.T;
			}
			mine[NG_LG_C_DELAY] = d;
		} else {
			mine[NG_LG_C_DELAY] = ctl[NG_LG_C_DELAY];
		}
		mine[NG_LG_C_SCALE] = f.p1;
		mine[NG_LG_C_HW] = 1.96 * fmax(fmax(f.se_p1, f.se_T), f.se_os);
		if (probe) {
			/* The first real batch always runs. */
			batch = (double)(lg->fixed ? lg->fixed : NG_LG_MIN_REPS);
			mine[NG_LG_C_GO] = 1.0;
		} else if (lg->fixed) {
			batch = 0.0;
			mine[NG_LG_C_GO] = 0.0;
		} else {
			double left = size_budget_us - elapsed;
			double cap = (double)(NG_LG_MAX_REPS - done);

			batch = (double)done;
			if (batch > cap)
				batch = cap;
			if (per_round_us > 0.0 && batch * per_round_us > left)
				batch = floor(left / per_round_us);
			mine[NG_LG_C_GO] = batch >= 1.0 ? 1.0 : 0.0;
		}
		mine[NG_LG_C_BATCH] = batch;
	} else {
		double med, se;

		if (lg->nor) {
			ng_lg_median(lg, lg->orr, lg->nor, &med, &se, NULL);
			mine[NG_LG_C_HW] = 1.96 * se;
		}
	}

	st = ng_boot_allgather(lg->run->boot, mine, sizeof(mine), all);
	if (st != NG_OK)
		return st;
	cl = all + (size_t)(lg->client ? lg->me : lg->peer) * NG_LG_C_N;
	sv = all + (size_t)(lg->client ? lg->peer : lg->me) * NG_LG_C_N;
	memcpy(ctl, cl, sizeof(mine));
	if (probe || lg->fixed)
		*more_p = cl[NG_LG_C_GO] > 0.0;
	else
		*more_p = cl[NG_LG_C_GO] > 0.0 &&
		          fmax(cl[NG_LG_C_HW], sv[NG_LG_C_HW]) > lg->ci_rel * cl[NG_LG_C_SCALE];
	return NG_OK;
}

/* ---- one size ------------------------------------------------------------- */

static ng_status ng_lg_report(struct ng_lg *lg, size_t size, double d_us);

static ng_status ng_lg_size(struct ng_lg *lg, size_t idx, size_t size)
{
	static const enum ng_lg_kind probe_kinds[] = {NG_LG_R1, NG_LG_RN};
	static const enum ng_lg_kind all_kinds[] = {NG_LG_R1, NG_LG_RN, NG_LG_RND, NG_LG_ROR};
	struct ng_run *run = lg->run;
	uint64_t t_size0 = ng_timer_now(lg->tm), t_b0;
	double ctl[NG_LG_C_N] = {0}, size_budget = 0.0, per_round = 0.0;
	size_t done = 0, probe_reps = lg->fixed && lg->fixed < NG_LG_MIN_REPS ? lg->fixed : NG_LG_MIN_REPS;
	bool more;
	ng_status st;

	lg->n1 = lg->nn = lg->nnd = lg->nor = 0;
	if (lg->client) {
		double used = ng_timer_us(lg->tm, t_size0 - lg->t_run0);

		size_budget = (lg->budget_us - used) / (double)(run->nsizes - idx);
	}

	st = ng_lg_batch(lg, probe_kinds, 2, lg->warmup + probe_reps, lg->warmup, size, 0.0);
	if (st != NG_OK)
		return st;
	st = ng_lg_decide(lg, true, 0, t_size0, size_budget, 0.0, ctl, &more);
	if (st != NG_OK)
		return st;

	while (more) {
		size_t b = (size_t)ctl[NG_LG_C_BATCH];

		t_b0 = ng_timer_now(lg->tm);
		st = ng_lg_batch(lg, all_kinds, 4, b, 0, size, ctl[NG_LG_C_DELAY]);
		if (st != NG_OK)
			return st;
		done += b;
		if (ng_cancelled(run))
			return NG_ERR_CANCELLED;
		per_round = ng_timer_us(lg->tm, ng_timer_now(lg->tm) - t_b0) / (double)b;
		st = ng_lg_decide(lg, false, done, t_size0, size_budget, per_round, ctl, &more);
		if (st != NG_OK)
			return st;
	}

	/* The server's o_r samples to the reporting rank. */
	st = ng_samples_gather(run->boot, lg->orr, lg->nor, lg->all);
	if (st != NG_OK)
		return st;
	if (lg->client)
		memcpy(lg->orr, lg->all + (size_t)lg->peer * lg->nor, lg->nor * sizeof(*lg->orr));
	if (!ng_results_active(run->results))
		return NG_OK;
	return ng_lg_report(lg, size, ctl[NG_LG_C_DELAY]);
}

/* ---- report ---------------------------------------------------------------- */

/* One parameter P of the result format. */
static json_t *ng_lg_param_json(const struct ng_param *p)
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

static ng_status ng_lg_report(struct ng_lg *lg, size_t size, double d_us)
{
	struct ng_run *run = lg->run;
	struct ng_loggp_point *pt = &lg->pts[lg->npts];
	struct ng_stats s1, sn, snd, sor;
	struct ng_lg_fig f;
	double orr, se_or;
	struct ng_row *row;
	json_t *js;

	ng_lg_client_figures(lg, &f);
	ng_lg_median(lg, lg->orr, lg->nor, &orr, &se_or, &sor);
	ng_samples_stats(lg->p1, lg->n1, lg->scratch, &s1);
	ng_samples_stats(lg->pn, lg->nn, lg->scratch, &sn);
	ng_samples_stats(lg->pnd, lg->nnd, lg->scratch, &snd);

	*pt = (struct ng_loggp_point){
	    .size = (double)size,
	    .prtt1 = f.p1,
	    .se_prtt1 = f.se_p1,
	    .T = f.T,
	    .se_T = f.se_T,
	    .os = f.os,
	    .se_os = f.se_os,
	    .orr = orr,
	    .se_or = se_or,
	};
	lg->npts++;

	js = json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "size", (json_int_t)size, "count",
	               (json_int_t)lg->nnd, "prtt1_us", s1.median, "prttn_us", sn.median, "prttnd_us",
	               snd.median, "T_us", f.T, "o_s_us", f.os, "o_r_us", orr, "delay_us", d_us);
	if (!js || json_array_append_new(lg->sizes, js)) {
		ng_error("loggp: out of memory building the result");
		return NG_ERR_NOMEM;
	}

	row = ng_row_begin(run->results, size, lg->nnd);
	ng_row_stats(row, "prtt1_us", &s1);
	ng_row_stats(row, "prttn_us", &sn);
	ng_row_stats(row, "prttnd_us", &snd);
	ng_row_stats(row, "o_r_us", &sor);
	ng_row_number(row, "T_us", f.T);
	ng_row_number(row, "o_s_us", f.os);
	ng_row_number(row, "delay_us", d_us);
	ng_row_raw(row, "prtt1_us", lg->p1, lg->n1);
	ng_row_raw(row, "prttn_us", lg->pn, lg->nn);
	ng_row_raw(row, "prttnd_us", lg->pnd, lg->nnd);
	ng_row_raw(row, "o_r_us", lg->orr, lg->nor);
	return ng_row_commit(run->results, row);
}

static void ng_lg_human_size(double s, char *buf, size_t len)
{
	size_t v = (size_t)s;

	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, len, "%zu MiB", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, len, "%zu KiB", v >> 10);
	else
		snprintf(buf, len, "%zu B", v);
}

/* "12.31 ± 0.05", or "0 [0, 0.3]" when the interval is lopsided, or "n/a (k)"
 * for a flagged value (k: its footnote). */
static void ng_lg_cell(const struct ng_param *p, char *buf, size_t len, int *nflag)
{
	double lo, hi;

	if (!ng_param_ok(p)) {
		snprintf(buf, len, "n/a (%d)", ++*nflag);
		return;
	}
	lo = p->value - p->lo;
	hi = p->hi - p->value;
	if (isfinite(hi) && fabs(hi - lo) <= 0.01 * fmax(hi, lo))
		snprintf(buf, len, "%.4g ± %.2g", p->value, hi);
	else
		snprintf(buf, len, "%.4g [%.3g, %.3g]", p->value, p->lo, p->hi);
}

/* G in GB/s (10^9 bytes per second) from G in microseconds per byte. */
static void ng_lg_gbps_cell(const struct ng_param *G, char *buf, size_t len)
{
	double lo, hi;

	if (!ng_param_ok(G)) {
		snprintf(buf, len, "n/a");
		return;
	}
	lo = isfinite(G->hi) && G->hi > 0.0 ? 1e-3 / G->hi : 0.0;
	hi = G->lo > 0.0 ? 1e-3 / G->lo : INFINITY;
	if (G->value > 0.0)
		snprintf(buf, len, "%.4g [%.3g, %.3g]", 1e-3 / G->value, lo, hi);
	else
		snprintf(buf, len, "> %.3g", lo);
}

/* Prints the parameter table; flags are numbered footnotes. */
static void ng_lg_print(const struct ng_lg *lg, const struct ng_loggp_model *m, const unsigned *outl,
                        const char *lgs)
{
	const struct ng_param *ps[5];
	char from[32], to[32], cell[5][48], gb[48];
	char notes[16][160];
	int nflag = 0, nnote = 0;

	printf("# LogGP parameters, n = %zu, 95%% confidence intervals; per segment of message sizes:\n",
	       lg->n);
	printf("#   T(s) = g + (s - from) G fits the transmission time, o_s(s), o_r(s) are fitted alike "
	       "(values at 'from'),\n"
	       "#   L = PRTT(1,0,from)/2 - o_s - o_r - (from - 1) G\n");
	printf("# %-20s %-22s %-22s %-22s %-22s %-26s %s\n", "sizes", "L [us]", "o_s [us]", "o_r [us]",
	       "g [us]", "G [us/byte]", "G [GB/s]");
	for (size_t k = 0; k < m->nseg; k++) {
		const struct ng_loggp_seg *s = &m->seg[k];
		char range[80];

		ps[0] = &s->L;
		ps[1] = &s->o_s;
		ps[2] = &s->o_r;
		ps[3] = &s->g;
		ps[4] = &s->G;
		for (size_t i = 0; i < 5; i++) {
			int before = nflag;

			ng_lg_cell(ps[i], cell[i], sizeof(cell[i]), &nflag);
			if (nflag != before && nnote < 16)
				snprintf(notes[nnote++], sizeof(notes[0]), "(%d) %s", nflag, ps[i]->flag);
			else if (ps[i]->note[0] && nnote < 16)
				snprintf(notes[nnote++], sizeof(notes[0]), "segment %zu: %s", k + 1,
				         ps[i]->note);
		}
		ng_lg_gbps_cell(&s->G, gb, sizeof(gb));
		ng_lg_human_size(s->from, from, sizeof(from));
		ng_lg_human_size(s->to, to, sizeof(to));
		snprintf(range, sizeof(range), "%s - %s", from, to);
		printf("  %-20s %-22s %-22s %-22s %-22s %-26s %s\n", range, cell[0], cell[1], cell[2],
		       cell[3], cell[4], gb);
	}
	if (m->nseg > 1) {
		printf("# breakpoints (first size of a new regime):");
		for (size_t k = 1; k < m->nseg; k++) {
			ng_lg_human_size(m->seg[k].from, from, sizeof(from));
			ng_lg_human_size(m->seg[k - 1].to, to, sizeof(to));
			printf("%s %s (change after %s)", k > 1 ? "," : "", from, to);
		}
		printf("\n");
	} else {
		printf("# breakpoints: none (one regime)\n");
	}
	for (int i = 0; i < nnote; i++)
		printf("# %s\n", notes[i]);
	for (size_t i = 0, first = 1; i < lg->npts; i++) {
		if (!outl[i])
			continue;
		ng_lg_human_size(lg->pts[i].size, from, sizeof(from));
		{
			static const char *const names[] = {"T", "o_s", "o_r", "L"};
			char which[32] = "";

			for (unsigned b = 0; b < 4; b++) {
				if (outl[i] & (1u << b))
					snprintf(which + strlen(which), sizeof(which) - strlen(which), "%s%s",
					         which[0] ? " " : "", names[b]);
			}
			printf("%s %s (%s)", first ? "# sizes the fits rejected as outliers:" : ",", from,
			       which);
		}
		first = 0;
	}
	for (size_t i = 0; i < lg->npts; i++) {
		if (outl[i]) {
			printf("\n");
			break;
		}
	}
	if (lgs)
		printf("# LogGOPSim: %s\n", lgs);
	fflush(stdout);
}

static json_t *ng_lg_block(const struct ng_lg *lg, const struct ng_loggp_model *m, const char *lgs,
                           const char *lgs_why)
{
	json_t *segs = json_array(), *brk = json_array(), *bic = json_array(), *blk;

	for (size_t k = 0; k < m->nseg; k++) {
		const struct ng_loggp_seg *s = &m->seg[k];

		json_array_append_new(
		    segs,
		    json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "from",
		              (json_int_t)s->from, "to", (json_int_t)s->to, "sizes", (json_int_t)s->count,
		              "L_us", ng_lg_param_json(&s->L), "o_s_us", ng_lg_param_json(&s->o_s), "o_r_us",
		              ng_lg_param_json(&s->o_r), "g_us", ng_lg_param_json(&s->g), "G_us_per_byte",
		              ng_lg_param_json(&s->G), "O_s_us_per_byte", ng_lg_param_json(&s->O_s),
		              "O_r_us_per_byte", ng_lg_param_json(&s->O_r)));
		if (k > 0)
			json_array_append_new(brk, json_integer((json_int_t)s->from));
	}
	for (size_t k = 1; k <= NG_SEG_MAX; k++) {
		if (isfinite(m->bic[k]))
			json_array_append_new(bic, json_real(m->bic[k]));
	}
	blk = json_pack("{s:I, s:o, s:o, s:O, s:{s:s, s:o}}", "n", (json_int_t)lg->n, "segments", segs,
	                "breakpoints", brk, "sizes", lg->sizes, "model_selection", "criterion",
	                "BIC, breakpoint charged as 4 parameters", "bic", bic);
	if (blk) {
		if (lgs)
			json_object_set_new(blk, "loggopsim", json_string(lgs));
		if (lgs_why && lgs_why[0])
			json_object_set_new(blk, "loggopsim_note", json_string(lgs_why));
	}
	return blk;
}

static ng_status ng_lg_finish(struct ng_lg *lg)
{
	struct ng_loggp_model m;
	struct ng_loggp_opts o = NG_LOGGP_OPTS_DEFAULT;
	char lgs[160], why[512];
	bool have_lgs;
	json_t *blk;

	unsigned *outl = calloc(lg->npts + 1, sizeof(*outl));

	o.se_floor_us = lg->tm->resolution_ns > 0.0 ? lg->tm->resolution_ns * 1e-3 : 1e-3;
	if (!outl || ng_loggp_fit(lg->pts, lg->npts, &o, &m, outl) || !m.nseg) {
		free(outl);
		ng_warn("loggp: no parameters from %zu measured size%s", lg->npts, lg->npts == 1 ? "" : "s");
		return NG_OK;
	}
	/* Sizes a fit rejected are marked in the block's per-size list. */
	for (size_t i = 0; i < lg->npts; i++) {
		static const char *const names[] = {"T", "o_s", "o_r", "L"};
		json_t *arr;

		if (!outl[i])
			continue;
		arr = json_array();
		for (unsigned b = 0; b < 4; b++) {
			if (outl[i] & (1u << b))
				json_array_append_new(arr, json_string(names[b]));
		}
		json_object_set_new(json_array_get(lg->sizes, i), "outlier_in", arr);
	}
	have_lgs = ng_loggp_loggopsim(&m, lgs, sizeof(lgs), why, sizeof(why)) > 0;
	ng_lg_print(lg, &m, outl, have_lgs ? lgs : NULL);
	free(outl);
	blk = ng_lg_block(lg, &m, have_lgs ? lgs : NULL, why);
	if (!blk) {
		ng_error("loggp: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	return ng_results_block(lg->run->results, "loggp", blk);
}

/* ---- setup --------------------------------------------------------------- */

static ng_status ng_lg_setup(struct ng_lg *lg)
{
	struct ng_run *run = lg->run;
	const struct ng_args *a = run->args;
	long long n = ng_args_int(a, "loggp-n");
	size_t max = ng_sizes_max(run), nslots;
	ng_status st;

	if (n < 2 || n > 100000) {
		if (lg->me == 0)
			ng_error("loggp: --loggp-n must be between 2 and 100000, got %lld", n);
		return NG_ERR_USAGE;
	}
	lg->n = (size_t)n;
	lg->budget_us = ng_args_double(a, "loggp-budget") * 1e6;
	lg->ci_rel = ng_args_double(a, "loggp-ci");
	lg->delay_opt_us = ng_args_double(a, "loggp-delay");
	if (!(lg->budget_us >= 0.0) || !(lg->ci_rel >= 0.0) || !(lg->delay_opt_us >= 0.0)) {
		if (lg->me == 0)
			ng_error("loggp: --loggp-budget, --loggp-ci and --loggp-delay must not be negative");
		return NG_ERR_USAGE;
	}
	lg->fixed = ng_args_given(a, "count") ? run->count : 0;
	lg->warmup = ng_args_given(a, "warmup") ? run->warmup : NG_LG_WARMUP;
	lg->cap = NG_LG_MIN_REPS + (lg->fixed > NG_LG_MAX_REPS ? lg->fixed : NG_LG_MAX_REPS);
	lg->stride = ng_slot_stride(max);
	lg->client = lg->me == 0;
	lg->peer = 1 - lg->me;
	lg->prepost = (run->comm->caps & NG_CAP_NONBLOCK) != 0;

	lg->p1 = calloc(lg->cap, sizeof(double));
	lg->pn = calloc(lg->cap, sizeof(double));
	lg->pnd = calloc(lg->cap, sizeof(double));
	lg->pnd_net = calloc(lg->cap, sizeof(double));
	lg->orr = calloc(lg->cap, sizeof(double));
	lg->scratch = calloc(lg->cap, sizeof(double));
	lg->all = calloc(2 * lg->cap, sizeof(double));
	lg->reqs = calloc(lg->n, sizeof(*lg->reqs));
	if (!lg->p1 || !lg->pn || !lg->pnd || !lg->pnd_net || !lg->orr || !lg->scratch || !lg->all ||
	    !lg->reqs)
		goto err_nomem;
	if (ng_results_active(run->results)) {
		lg->pts = calloc(run->nsizes + 1, sizeof(*lg->pts));
		lg->sizes = json_array();
		if (!lg->pts || !lg->sizes)
			goto err_nomem;
	}

	/* Client: one send buffer and the reply.  Server: two banks of n slots. */
	nslots = lg->client ? 1 : 2 * lg->n;
	if (!lg->client && nslots > SIZE_MAX / lg->stride) {
		ng_error("loggp: %zu slots of %zu bytes do not fit in memory", nslots, lg->stride);
		return NG_ERR_NOMEM;
	}
	st =
	    ng_bufs_alloc(run->comm, lg->client ? max : 0, lg->client ? max : nslots * lg->stride, &lg->bufs);
	if (st != NG_OK)
		return st;
	return NG_OK;

err_nomem:
	ng_error("loggp: out of memory");
	return NG_ERR_NOMEM;
}

static void ng_lg_teardown(struct ng_lg *lg)
{
	ng_bufs_free(lg->run->comm, &lg->bufs);
	json_decref(lg->sizes);
	free(lg->pts);
	free(lg->reqs);
	free(lg->all);
	free(lg->scratch);
	free(lg->orr);
	free(lg->pnd_net);
	free(lg->pnd);
	free(lg->pn);
	free(lg->p1);
}

static ng_status ng_lg_run(const struct ng_pattern *p, struct ng_run *run)
{
	struct ng_lg lg = {
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
	st = ng_lg_setup(&lg);
	if (st != NG_OK)
		goto out_teardown;
	lg.t_run0 = ng_timer_now(lg.tm);

	for (size_t i = 0; i < run->nsizes; i++) {
		st = ng_sizes_sync(run);
		if (st != NG_OK)
			break;
		st = ng_lg_size(&lg, i, run->sizes[i]);
		if (st != NG_OK)
			break;
		if (lg.me == 0)
			ng_progress(run, i + 1, run->nsizes, run->sizes[i]);
	}
	if (st == NG_OK && ng_results_active(run->results))
		st = ng_lg_finish(&lg);

out_teardown:
	ng_lg_teardown(&lg);
	return st;
}

/* clang-format off */
static const struct ng_option ng_lg_options[] = {
	{ .name = "loggp-n", .type = NG_OPT_INT, .def = "16", .metavar = "N",
	  .help = "messages per train: PRTT(n,0,s), PRTT(n,d,s) and the o_r phase" },
	{ .name = "loggp-budget", .type = NG_OPT_DOUBLE, .def = "15", .metavar = "SECONDS",
	  .help = "time for all sizes together when sampling adaptively (without -c)" },
	{ .name = "loggp-ci", .type = NG_OPT_DOUBLE, .def = "0.01", .metavar = "REL",
	  .help = "repeat a size until the 95% CI half-widths of PRTT(1,0,s), T, o_s, o_r are <= REL * PRTT(1,0,s)" },
	{ .name = "loggp-delay", .type = NG_OPT_DOUBLE, .def = "0", .metavar = "US",
	  .help = "delay d between sends of PRTT(n,d,s) and before receives of the o_r phase; 0: max(PRTT(1,0,s), 1.5 T(s))" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_pattern ng_pattern_loggp = {
    .name = "loggp",
    .desc = "LogGP parameters L, o_s, o_r, g, G per protocol regime, with 95% confidence intervals",
    .options = ng_lg_options,
    .needs = NG_CAP_CHANNEL | NG_CAP_RELIABLE,
    .min_ranks = 2,
    .max_ranks = 2,
    .even_ranks = true,
    .default_sizes = "1-1M:x1.5",
    .run = ng_lg_run,
};
