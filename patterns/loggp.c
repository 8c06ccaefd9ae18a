/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loggp: LogGP parameters L, o_s, o_r, g, G per protocol regime, with 95%
 * confidence intervals (Hoefler, Lichei, Rehm 2007; Netgauge paper 3.3).
 *
 * Two ranks: rank 0 is the client (it sends), rank 1 the server.  For each
 * message size s the client times rounds of four kinds; a round ends with
 * the server's reply (s bytes from its own send buffer, never from the slot a
 * message arrived in: the buffer decision of assess.h), so rounds never
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
 * blocking; where the module is non-blocking the server posts the receives
 * of every R1/RN/RND round right after its reply to the previous one, out
 * of that round's time (two banks of n slots alternate, so a posted receive
 * never lands on a message still to be checked), and a batch starts only
 * after the server said so with a 1-byte "go" message, sent once its first
 * receives are posted.
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
 * Sizes measured again (the conclude step, before the fit): a size whose
 * samples look disturbed, because a STATS of it drifted or alternated, its
 * widest CI half-width exceeds 10 times the CI target and 3 times the
 * median size's, both relative to the smallest PRTT(1,0,s) of the size and
 * its neighbours (a size whose rounds all waited for a CPU has a round trip
 * of milliseconds), or the fit of all sizes rejects it as an outlier of a
 * line, is measured again as in the loop, and so are the two sizes beside
 * each breakpoint of that fit (where one disturbed size moves or makes a
 * breakpoint); up to twice (two passes, the fit redone between them, at
 * most a third of the sizes each, the sizes off T's line and beside
 * breakpoints first), each pass within a quarter of --loggp-budget.  The new
 * measurement replaces the size's figures and its row (ng_row_replace)
 * unless it is more disturbed; the block's entry of the size lists every
 * attempt under "remeasured" (why, whether it was used, the medians set
 * aside).  So a burst of system noise costs a size a second measurement,
 * not its place in the fit.
 *
 * Analysis (analysis/loggp.h): the per-size medians with standard errors
 * from their CIs go to ng_loggp_fit(), which segments T(s) by BIC and fits
 * every parameter per segment with its 95% CI.  Report: one row per size
 * (STATS prtt1_us, prttn_us, prttnd_us, o_r_us; numbers T_us, o_s_us,
 * delay_us), a parameter table on stdout, and the "loggp" block.  Flagged
 * parameters (negative, or not estimable) are printed as "n/a" with the
 * reason below the table and written as {"value": null, "flag": ...}.
 *
 * The rounds, batches, sampling decisions and the session's steps are
 * shared with plogp (assess.h); here are the RND and ROR measurements, the
 * figures and the report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "engine/assess.h"

/* The stream of the RND round times (NG_AS_OS holds them less the waits). */
#define NG_LG_PND NG_AS_NKINDS

/* Measurements of a size taken again at most (NG_LG_REDO passes). */
#define NG_LG_REDO 2
/* A size's interval is wide beyond this many times the CI target and
 * NG_LG_WIDE_MED times the median size's, relative to the round trip around
 * it (with -c N the target is not pursued: what N samples give is no
 * disturbance). */
#define NG_LG_WIDE     10.0
#define NG_LG_WIDE_MED 3.0

/* How disturbed the samples of a size look (rank 0). */
struct ng_lg_q {
	bool flagged;    /* a STATS of the size drifted or alternated */
	double hw;       /* the widest 95% CI half-width (us) */
	unsigned redone; /* measurements taken again */
	char why[160];   /* why the size is measured again */
};

struct ng_lg {
	struct ng_as as; /* first: the machinery shared with plogp */
	/* results, rank 0 */
	struct ng_loggp_point *pts;
	struct ng_lg_q *q;
	size_t npts;
	double wide; /* half-width over ng_lg_ref beyond which it is wide (ng_lg_pick) */
};

static struct ng_lg *ng_lg_of(struct ng_as *as)
{
	return ng_container_of(as, struct ng_lg, as);
}

/* ---- timed rounds ------------------------------------------------------ */

/* RND: n messages with a busy-wait of d between sends; the waits are timed
 * and subtracted (as->os). */
static ng_status ng_lg_client_os(struct ng_as *as, size_t size, uint64_t d_ticks, bool timed)
{
	const struct ng_timer *tm = as->tm;
	struct ng_comm *c = as->c;
	size_t nmsg = as->n;
	void *sbuf = as->bufs.send;
	uint64_t t0, t1, dsum = 0;
	ng_status st;

	t0 = ng_timer_now(tm);
	st = ng_send(c, as->peer, sbuf, size);
	for (size_t k = 1; k < nmsg && st == NG_OK; k++) {
		dsum += ng_as_spin(tm, d_ticks);
		st = ng_send(c, as->peer, sbuf, size);
	}
	if (st == NG_OK)
		st = ng_recv(c, as->peer, as->bufs.recv, size);
	t1 = ng_timer_now(tm);
	if (st != NG_OK || !timed)
		return st;

	ng_sampler_push(&as->smp, NG_LG_PND, ng_timer_us(tm, t1 - t0));
	ng_sampler_push(&as->smp, NG_AS_OS, ng_timer_us(tm, t1 - t0 - dsum));
	return NG_OK;
}

/* ROR: the first receive, then a busy-wait of d before each further one;
 * o_r = (t - waits) / (n - 1) over the phase after the first receive. */
static ng_status ng_lg_server_or(struct ng_as *as, size_t size, uint64_t d_ticks, bool timed)
{
	const struct ng_timer *tm = as->tm;
	struct ng_comm *c = as->c;
	size_t nmsg = as->n;
	unsigned bank = as->bank;
	uint64_t t1, t2, dsum = 0;
	ng_status st;

	st = ng_recv(c, as->peer, ng_as_slot(as, bank, 0), size);
	t1 = ng_timer_now(tm);
	for (size_t k = 1; k < nmsg && st == NG_OK; k++) {
		dsum += ng_as_spin(tm, d_ticks);
		st = ng_recv(c, as->peer, ng_as_slot(as, bank, k), size);
	}
	t2 = ng_timer_now(tm);
	if (st != NG_OK || !timed)
		return st;

	/* Each measured wait leaves one timer read outside it. */
	ng_sampler_push(&as->smp, NG_AS_OR,
	                ng_timer_us(tm, t2 - t1 - dsum) / (double)(nmsg - 1) - tm->overhead_ns * 1e-3);
	return NG_OK;
}

/* ---- sampling control -------------------------------------------------- */

/* Median and standard error of the samples of @stream. */
static void ng_lg_median(struct ng_as *as, size_t stream, double *med_p, double *se_p)
{
	struct ng_stats st;

	ng_sampler_stats(&as->smp, ng_as_x(as, stream), ng_as_n(as, stream), &st);
	*med_p = st.median;
	*se_p = ng_se_from_ci95(st.ci_lo, st.ci_hi);
}

/* The client's figures for the size so far. */
struct ng_lg_fig {
	double p1, se_p1, pn, se_pn, pnd_net, se_pnd, T, se_T, os, se_os;
};

static void ng_lg_client_figures(struct ng_as *as, struct ng_lg_fig *f)
{
	double k = (double)(as->n - 1), ovh = as->tm->overhead_ns * 1e-3;

	ng_lg_median(as, NG_AS_SINGLE, &f->p1, &f->se_p1);
	ng_lg_median(as, NG_AS_TRAIN, &f->pn, &f->se_pn);
	f->T = (f->pn - f->p1) / k;
	f->se_T = sqrt(f->se_pn * f->se_pn + f->se_p1 * f->se_p1) / k;
	if (ng_as_n(as, NG_AS_OS)) {
		ng_lg_median(as, NG_AS_OS, &f->pnd_net, &f->se_pnd);
		/* Each measured wait leaves one timer read outside it. */
		f->os = (f->pnd_net - f->p1) / k - ovh;
		f->se_os = sqrt(f->se_pnd * f->se_pnd + f->se_p1 * f->se_p1) / k;
	} else {
		f->pnd_net = f->se_pnd = f->os = f->se_os = 0.0;
	}
}

/* d = max(PRTT(1,0,s), 1.5 T(s)); the CI target is relative to PRTT(1,0,s). */
static void ng_lg_client_ctl(struct ng_as *as, double *delay_p, double *scale_p, double *hw_p)
{
	struct ng_lg_fig f;

	ng_lg_client_figures(as, &f);
	*delay_p = f.p1;
	if (1.5 * f.T > *delay_p)
		*delay_p = 1.5 * f.T;
	*scale_p = f.p1;
	*hw_p = 1.96 * fmax(fmax(f.se_p1, f.se_T), f.se_os);
}

static double ng_lg_server_hw(struct ng_as *as)
{
	double med, se;

	ng_lg_median(as, NG_AS_OR, &med, &se);
	return 1.96 * se;
}

/* ---- report ---------------------------------------------------------------- */

/*
 * The round trip that a half-width of size @i is measured against: the
 * smallest PRTT(1,0,s) of the size (@p1) and its neighbours.  A size whose
 * rounds all ran while the ranks waited for a CPU has a round trip of
 * milliseconds, against which even a wild interval looks narrow; its
 * neighbours say what the round trip is here.
 */
static double ng_lg_ref(const struct ng_lg *lg, size_t i, double p1)
{
	double r = p1;

	if (i > 0 && lg->pts[i - 1].prtt1 < r)
		r = lg->pts[i - 1].prtt1;
	if (i + 1 < lg->npts && lg->pts[i + 1].prtt1 < r)
		r = lg->pts[i + 1].prtt1;
	return r > 0.0 ? r : INFINITY;
}

/* Whether measurement @n of size @i is no more disturbed than @o: not
 * flagged or wide where @o was not, and not wider when both are. */
static bool ng_lg_no_worse(const struct ng_lg *lg, size_t i, const struct ng_lg_q *n, double np1,
                           const struct ng_lg_q *o)
{
	double ref = ng_lg_ref(lg, i, fmin(np1, lg->pts[i].prtt1));
	bool nbad = n->flagged || n->hw > lg->wide * ref, obad = o->flagged || o->hw > lg->wide * ref;

	if (nbad != obad)
		return !nbad;
	if (n->flagged != o->flagged)
		return !n->flagged;
	return !nbad || n->hw <= o->hw;
}

/* The medians of a measurement that the fit does not use. */
static json_t *ng_lg_set_aside(const json_t *e)
{
	return json_pack("{s:O, s:O, s:O, s:O, s:O}", "count", json_object_get(e, "count"), "prtt1_us",
	                 json_object_get(e, "prtt1_us"), "T_us", json_object_get(e, "T_us"), "o_s_us",
	                 json_object_get(e, "o_s_us"), "o_r_us", json_object_get(e, "o_r_us"));
}

/* A size measured again (as->redo): its figures replace those of the
 * earlier measurement unless they are more disturbed (ng_lg_no_worse); the
 * block's entry of the size records the attempt either way, with the
 * medians of the measurement set aside. */
static ng_status ng_lg_redo(struct ng_lg *lg, size_t idx, const struct ng_loggp_point *pt,
                            const struct ng_lg_q *q, json_t *js, struct ng_row *row)
{
	struct ng_as *as = &lg->as;
	struct ng_lg_q *old = &lg->q[idx];
	json_t *prev = json_array_get(as->sizes, idx), *tries = json_object_get(prev, "remeasured");
	bool use = ng_lg_no_worse(lg, idx, q, pt->prtt1, old);
	char sz[32];

	json_incref(tries);
	if (!tries)
		tries = json_array();
	json_array_append_new(tries, json_pack("{s:s, s:b, s:o}", "why", old->why, "used", use, "set_aside",
	                                       ng_lg_set_aside(use ? prev : js)));
	old->redone++;
	ng_as_human_size((size_t)pt->size, sz, sizeof(sz));
	printf("# %s measured again (%s): %s\n", sz, old->why,
	       use ? "the new measurement replaces the earlier one"
	           : "the earlier measurement stays, the new one was more disturbed");
	if (!use) {
		json_object_set_new(prev, "remeasured", tries);
		json_decref(js);
		return NG_OK;
	}
	json_object_set_new(js, "remeasured", tries);
	if (json_array_set_new(as->sizes, idx, js)) {
		ng_error("loggp: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	lg->pts[idx] = *pt;
	old->flagged = q->flagged;
	old->hw = q->hw;
	return ng_row_replace(as->run->results, idx, row);
}

static ng_status ng_lg_report(struct ng_as *as, size_t size, double d_us)
{
	struct ng_lg *lg = ng_lg_of(as);
	struct ng_run *run = as->run;
	struct ng_sampler *smp = &as->smp;
	size_t nos = ng_as_n(as, NG_AS_OS);
	struct ng_loggp_point pt;
	struct ng_stats s1, sn, snd, sor;
	struct ng_lg_q q = {0};
	struct ng_lg_fig f;
	double orr, se_or;
	struct ng_row *row;
	json_t *js;

	ng_lg_client_figures(as, &f);
	/* The row's count: the RND rounds, one sample each. */
	row = ng_sampler_row_n(smp, size, nos);
	/* The note after the table counts sizes by their first measurement. */
	if (as->redo)
		smp->noted = true;
	ng_sampler_row_stats(smp, row, "prtt1_us", ng_as_x(as, NG_AS_SINGLE), ng_as_n(as, NG_AS_SINGLE), &s1);
	ng_sampler_row_stats(smp, row, "prttn_us", ng_as_x(as, NG_AS_TRAIN), ng_as_n(as, NG_AS_TRAIN), &sn);
	ng_sampler_row_stats(smp, row, "prttnd_us", ng_as_x(as, NG_LG_PND), nos, &snd);
	ng_sampler_row_stats(smp, row, "o_r_us", ng_as_x(as, NG_AS_OR), ng_as_n(as, NG_AS_OR), &sor);
	orr = sor.median;
	se_or = ng_se_from_ci95(sor.ci_lo, sor.ci_hi);

	pt = (struct ng_loggp_point){
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
	q.flagged = s1.unstable || s1.alternating || sn.unstable || sn.alternating || snd.unstable ||
	            snd.alternating || sor.unstable || sor.alternating;
	q.hw = 1.96 * fmax(fmax(f.se_p1, f.se_T), fmax(f.se_os, se_or));

	js = json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "size", (json_int_t)size, "count",
	               (json_int_t)nos, "prtt1_us", s1.median, "prttn_us", sn.median, "prttnd_us", snd.median,
	               "T_us", f.T, "o_s_us", f.os, "o_r_us", orr, "delay_us", d_us);
	if (!js) {
		ng_error("loggp: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	ng_row_number(row, "T_us", f.T);
	ng_row_number(row, "o_s_us", f.os);
	ng_row_number(row, "delay_us", d_us);
	ng_sampler_row_raw(smp, row, "prtt1_us", ng_as_x(as, NG_AS_SINGLE), ng_as_n(as, NG_AS_SINGLE));
	ng_sampler_row_raw(smp, row, "prttn_us", ng_as_x(as, NG_AS_TRAIN), ng_as_n(as, NG_AS_TRAIN));
	ng_sampler_row_raw(smp, row, "prttnd_us", ng_as_x(as, NG_LG_PND), nos);
	ng_sampler_row_raw(smp, row, "o_r_us", ng_as_x(as, NG_AS_OR), ng_as_n(as, NG_AS_OR));
	if (as->redo)
		return ng_lg_redo(lg, as->redo - 1, &pt, &q, js, row);

	if (json_array_append_new(as->sizes, js)) {
		ng_error("loggp: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	lg->pts[lg->npts] = pt;
	lg->q[lg->npts] = q;
	lg->npts++;
	return ng_row_commit(run->results, row);
}

/* The quantities of the NG_LOGGP_OUT_* bits, in bit order. */
static const char *const ng_lg_outlier_names[] = {"T", "o_s", "o_r", "L"};

/* "12.31 ± 0.05", or "0 [0, 0.3]" when the interval is lopsided, or "n/a (k)"
 * for a flagged value (k: its footnote). */
static void ng_lg_cell(const struct ng_param *p, char *buf, size_t len, int *nflag)
{
	double lo, hi;

	if (!ng_param_ok(p)) {
		snprintf(buf, len, "n/a (%d)", ++*nflag);
		return;
	}
	/* the total interval: sampling and systematic bounds */
	ng_unc_widen(p->lo, p->hi, &p->unc, &lo, &hi);
	lo = p->value - fmax(lo, 0.0);
	hi = hi - p->value;
	if (isfinite(hi) && fabs(hi - lo) <= 0.01 * fmax(hi, lo))
		snprintf(buf, len, "%.4g ± %.2g", p->value, hi);
	else
		snprintf(buf, len, "%.4g [%.3g, %.3g]", p->value, p->value - lo, p->value + hi);
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
	char notes[16][256];
	int nflag = 0, nnote = 0;

	printf("# LogGP parameters, n = %zu, 95%% confidence intervals widened by the systematic bounds "
	       "(ci95_total); per segment of message sizes:\n",
	       lg->as.n);
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
		ng_as_human_size((size_t)s->from, from, sizeof(from));
		ng_as_human_size((size_t)s->to, to, sizeof(to));
		snprintf(range, sizeof(range), "%s - %s", from, to);
		printf("  %-20s %-22s %-22s %-22s %-22s %-26s %s\n", range, cell[0], cell[1], cell[2],
		       cell[3], cell[4], gb);
	}
	if (m->nseg > 1) {
		printf("# breakpoints (first size of a new regime):");
		for (size_t k = 1; k < m->nseg; k++) {
			ng_as_human_size((size_t)m->seg[k].from, from, sizeof(from));
			ng_as_human_size((size_t)m->seg[k - 1].to, to, sizeof(to));
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
		ng_as_human_size((size_t)lg->pts[i].size, from, sizeof(from));
		{
			char which[32] = "";

			for (unsigned b = 0; b < 4; b++) {
				if (outl[i] & (1u << b))
					snprintf(which + strlen(which), sizeof(which) - strlen(which), "%s%s",
					         which[0] ? " " : "", ng_lg_outlier_names[b]);
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
		              "L_us", ng_as_param_json(&s->L), "o_s_us", ng_as_param_json(&s->o_s), "o_r_us",
		              ng_as_param_json(&s->o_r), "g_us", ng_as_param_json(&s->g), "G_us_per_byte",
		              ng_as_param_json(&s->G), "O_s_us_per_byte", ng_as_param_json(&s->O_s),
		              "O_r_us_per_byte", ng_as_param_json(&s->O_r)));
		if (k > 0)
			json_array_append_new(brk, json_integer((json_int_t)s->from));
	}
	for (size_t k = 1; k <= NG_SEG_MAX; k++) {
		if (isfinite(m->bic[k]))
			json_array_append_new(bic, json_real(m->bic[k]));
	}
	blk = json_pack("{s:I, s:o, s:o, s:O, s:{s:s, s:o}}", "n", (json_int_t)lg->as.n, "segments", segs,
	                "breakpoints", brk, "sizes", lg->as.sizes, "model_selection", "criterion",
	                "BIC, breakpoint charged as 4 parameters", "bic", bic);
	if (blk) {
		if (lgs)
			json_object_set_new(blk, "loggopsim", json_string(lgs));
		if (lgs_why && lgs_why[0])
			json_object_set_new(blk, "loggopsim_note", json_string(lgs_why));
	}
	return blk;
}

/* The fit's options for this run: the timer's resolution as the least
 * standard error believed. */
static struct ng_loggp_opts ng_lg_opts(const struct ng_as *as)
{
	struct ng_loggp_opts o = NG_LOGGP_OPTS_DEFAULT;

	o.se_floor_us = as->tm->resolution_ns > 0.0 ? as->tm->resolution_ns * 1e-3 : 1e-3;
	return o;
}

/* A size beside a breakpoint of the fit (ng_lg_disturbed's @outl). */
#define NG_LG_AT_BREAK 0x100u

/* Why size @i is measured again ("" when it is not), and how urgently:
 * 0 off the fitted T, 1 beside a breakpoint (both move breakpoints), 2
 * off another fitted line, 3 drifting or alternating samples, 4 a wide
 * interval; 5: not at all.  @outl: its NG_LOGGP_OUT_* bits and
 * NG_LG_AT_BREAK. */
static unsigned ng_lg_disturbed(const struct ng_lg *lg, size_t i, unsigned outl, char *why, size_t len)
{
	const struct ng_lg_q *q = &lg->q[i];
	double ref = ng_lg_ref(lg, i, lg->pts[i].prtt1);
	unsigned prio = 5;
	size_t w = 0;

	why[0] = '\0';
	if (outl & NG_LG_AT_BREAK) {
		w += (size_t)snprintf(why + w, len - w, "beside a breakpoint");
		prio = 1;
	}
	if ((outl & 0xfu) && w < len) {
		w += (size_t)snprintf(why + w, len - w, "%soff the fitted line of", w ? "; " : "");
		for (unsigned b = 0; b < 4 && w < len; b++) {
			if (outl & (1u << b))
				w += (size_t)snprintf(why + w, len - w, " %s", ng_lg_outlier_names[b]);
		}
		prio = outl & NG_LOGGP_OUT_T ? 0 : prio < 2 ? prio : 2;
	}
	if (q->flagged && w < len) {
		w += (size_t)snprintf(why + w, len - w, "%sdrifting or alternating samples", w ? "; " : "");
		prio = prio < 3 ? prio : 3;
	}
	if (q->hw > lg->wide * ref && w < len) {
		snprintf(why + w, len - w, "%s95%% interval +-%.3g us, %.0f%% of the round trip here",
		         w ? "; " : "", q->hw, 100.0 * q->hw / ref);
		prio = prio < 4 ? prio : 4;
	}
	return prio;
}

/*
 * The sizes to measure again (rank 0 with results): those whose samples
 * drifted or alternated, whose interval is wide (NG_LG_WIDE times the CI
 * target and NG_LG_WIDE_MED times the median size's, over ng_lg_ref), that
 * the fit of what is measured so far rejects as outliers, and the two
 * sizes beside each of its breakpoints (one disturbed size there moves or
 * makes a breakpoint); each at most NG_LG_REDO times, at most @cap, the
 * most urgent first (ng_lg_disturbed), then in size order.  Their reasons
 * go to lg->q[].why.
 */
static size_t ng_lg_pick(struct ng_lg *lg, size_t *list, size_t cap)
{
	struct ng_loggp_opts o = ng_lg_opts(&lg->as);
	unsigned *outl = calloc(lg->npts + 1, sizeof(*outl));
	struct ng_loggp_model m;
	size_t n = 0;

	if (!outl)
		return 0;
	{
		double *hw = calloc(lg->npts + 1, sizeof(*hw)), med = 0.0;

		for (size_t i = 0; hw && i < lg->npts; i++)
			hw[i] = lg->q[i].hw / ng_lg_ref(lg, i, lg->pts[i].prtt1);
		if (hw && lg->npts) {
			gsl_sort(hw, 1, lg->npts);
			med = gsl_stats_median_from_sorted_data(hw, 1, lg->npts);
		}
		free(hw);
		lg->wide = fmax(NG_LG_WIDE * lg->as.ci_rel, NG_LG_WIDE_MED * med);
	}
	if (ng_loggp_fit(lg->pts, lg->npts, &o, &m, outl)) {
		memset(outl, 0, (lg->npts + 1) * sizeof(*outl));
		m.nseg = 0;
	}
	for (size_t k = 1; k < m.nseg; k++) {
		outl[m.seg[k].first - 1] |= NG_LG_AT_BREAK;
		outl[m.seg[k].first] |= NG_LG_AT_BREAK;
	}
	for (unsigned prio = 0; prio < 5 && n < cap; prio++) {
		for (size_t i = 0; i < lg->npts && n < cap; i++) {
			char why[sizeof(lg->q[0].why)];

			if (lg->q[i].redone >= NG_LG_REDO ||
			    ng_lg_disturbed(lg, i, outl[i], why, sizeof(why)) != prio)
				continue;
			snprintf(lg->q[i].why, sizeof(lg->q[i].why), "%s", why);
			list[n++] = i;
		}
	}
	free(outl);
	return n;
}

/*
 * The session's conclude: up to NG_LG_REDO passes over the disturbed sizes
 * (ng_lg_pick, the client's choice for both ranks), each measured again
 * within a quarter of the budget per pass (a size at most its share of the
 * first pass), then the fit (ng_as_conclude).
 */
static ng_status ng_lg_conclude(struct ng_session *s, void *state)
{
	struct ng_lg *lg = state;
	struct ng_as *as = &lg->as;
	size_t nsizes = as->run->nsizes, cap = nsizes / 3 > 0 ? nsizes / 3 : 1;
	size_t *list = calloc(cap, sizeof(*list));
	ng_status st = NG_OK;

	if (!list) {
		ng_error("loggp: out of memory");
		return NG_ERR_NOMEM;
	}
	for (unsigned pass = 0; pass < NG_LG_REDO && st == NG_OK; pass++) {
		size_t n = lg->pts && lg->q ? ng_lg_pick(lg, list, cap) : 0;
		double share = as->budget_us / (double)nsizes, each;

		st = ng_as_agree(as, list, &n, cap);
		if (st != NG_OK || n == 0)
			break;
		each = as->budget_us / 4.0 / (double)n;
		if (each > share)
			each = share;
		if (as->max_size_us > 0.0 && each > as->max_size_us)
			each = as->max_size_us;
		for (size_t i = 0; i < n && st == NG_OK; i++)
			st = ng_as_remeasure(s, as, list[i], each);
	}
	free(list);
	if (st != NG_OK)
		return st;
	return ng_as_conclude(s, state);
}

static ng_status ng_lg_finish(struct ng_as *as)
{
	struct ng_lg *lg = ng_lg_of(as);
	struct ng_loggp_model m;
	struct ng_loggp_opts o = ng_lg_opts(as);
	char lgs[160], why[512];
	bool have_lgs;
	json_t *blk;

	unsigned *outl = calloc(lg->npts + 1, sizeof(*outl));

	if (!outl || ng_loggp_fit(lg->pts, lg->npts, &o, &m, outl) || !m.nseg) {
		free(outl);
		ng_warn("loggp: no parameters from %zu measured size%s", lg->npts, lg->npts == 1 ? "" : "s");
		return NG_OK;
	}
	/* Sizes a fit rejected are marked in the block's per-size list. */
	for (size_t i = 0; i < lg->npts; i++) {
		json_t *arr;

		if (!outl[i])
			continue;
		arr = json_array();
		for (unsigned b = 0; b < 4; b++) {
			if (outl[i] & (1u << b))
				json_array_append_new(arr, json_string(ng_lg_outlier_names[b]));
		}
		json_object_set_new(json_array_get(as->sizes, i), "outlier_in", arr);
	}
	{
		struct ng_loggp_sys sys;

		ng_as_systematic(as, &sys);
		ng_loggp_systematic(&m, &sys);
	}
	have_lgs = ng_loggp_loggopsim(&m, lgs, sizeof(lgs), why, sizeof(why)) > 0;
	ng_lg_print(lg, &m, outl, have_lgs ? lgs : NULL);
	free(outl);
	blk = ng_lg_block(lg, &m, have_lgs ? lgs : NULL, why);
	if (!blk) {
		ng_error("loggp: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	return ng_results_block(as->run->results, "loggp", blk);
}

/* ---- setup --------------------------------------------------------------- */

static ng_status ng_lg_setup(struct ng_as *as)
{
	struct ng_lg *lg = ng_lg_of(as);

	if (ng_results_active(as->run->results)) {
		lg->pts = calloc(as->run->nsizes + 1, sizeof(*lg->pts));
		lg->q = calloc(as->run->nsizes + 1, sizeof(*lg->q));
		if (!lg->pts || !lg->q) {
			ng_error("loggp: out of memory");
			return NG_ERR_NOMEM;
		}
	}
	return NG_OK;
}

static void ng_lg_teardown(struct ng_as *as)
{
	struct ng_lg *lg = ng_lg_of(as);

	free(lg->q);
	free(lg->pts);
}

static const struct ng_as_ops ng_lg_ops = {
    .name = "loggp",
    .per_call = false,
    .streams = 1, /* NG_LG_PND */
    .client_os = ng_lg_client_os,
    .server_or = ng_lg_server_or,
    .client_ctl = ng_lg_client_ctl,
    .server_hw = ng_lg_server_hw,
    .setup = ng_lg_setup,
    .teardown = ng_lg_teardown,
    .report = ng_lg_report,
    .finish = ng_lg_finish,
};

/* The session's steps (session.h): the assessment's (assess.h). */
static ng_status ng_lg_setup_step(struct ng_session *s, void *state)
{
	struct ng_lg *lg = state;

	return ng_as_setup(s, &lg->as, &ng_lg_ops);
}

static const struct ng_session_ops ng_lg_session = {
    .state = sizeof(struct ng_lg),
    .config = NG_SESSION_CONFIG_STATE,
    .setup = ng_lg_setup_step,
    .measure = ng_as_measure,
    .report = ng_as_report,
    .conclude = ng_lg_conclude,
    .teardown = ng_as_teardown,
};

static ng_status ng_lg_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_lg_session);
}

/* clang-format off */
static const struct ng_option ng_lg_options[] = {
	{ .name = "loggp-n", NG_INT_AT(struct ng_lg, as.cfg.n), .def = "16", .metavar = "N",
	  .help = "messages per train: PRTT(n,0,s), PRTT(n,d,s) and the o_r phase" },
	{ .name = "loggp-budget", NG_DOUBLE_AT(struct ng_lg, as.cfg.budget_s), .def = "15", .metavar = "SECONDS",
	  .help = "time for all sizes together when sampling adaptively (without -c)" },
	{ .name = "loggp-ci", NG_DOUBLE_AT(struct ng_lg, as.cfg.ci), .def = "0.01", .metavar = "REL",
	  .help = "repeat a size until the 95% CI half-widths of PRTT(1,0,s), T, o_s, o_r are <= REL * PRTT(1,0,s)" },
	{ .name = "loggp-delay", NG_DOUBLE_AT(struct ng_lg, as.cfg.delay_us), .def = "0", .metavar = "US",
	  .help = "delay d between sends of PRTT(n,d,s) and before receives of the o_r phase; 0: max(PRTT(1,0,s), 1.5 T(s))" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_pattern ng_pattern_loggp = {
    .name = "loggp",
    .desc = "LogGP parameters L, o_s, o_r, g, G per protocol regime, with 95% confidence intervals",
    .options = ng_lg_options,
    NG_AS_PATTERN_NEEDS,
    .default_sizes = "1-1M:x1.5",
    .run = ng_lg_run,
};
