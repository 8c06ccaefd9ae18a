/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * congestion: GPCNeT's congestion impact factor (Chunduri et al., SC19),
 * with intervals.
 *
 * The ranks are shuffled with --seed (--cong-placement random; "ranks"
 * keeps them in rank order, for a placement the launcher fixes); the first
 * --cong-victims of the permutation are the victims (a fraction "20%" or "0.2", rounded to an even
 * count of at least 2, or a count N; 0: congestors only), the others the
 * congestors, split in that order into one group per --cong-congestors kind.
 * Victims are paired along their random ring (positions 2i and 2i+1; the
 * first of a pair leads): a latency victim ("lat") ping-pongs 8 bytes, the
 * sample being half the round trip; a bandwidth victim ("bw") sends a window
 * of --cong-window messages of --cong-bw-size bytes and waits for a 1-byte
 * acknowledgement, the sample being the window's time.
 *
 * Congestor groups (the group's first rank is its root):
 *   incast    every member sends --cong-window messages of --cong-size
 *             bytes to the root per iteration;
 *   bcast     the root sends as many to every member;
 *   alltoall  every member sends as many to every other member.
 * After each iteration the root sends each member one control byte: go on
 * or stop.  In a congested phase a root sends every victim one byte after
 * its group's CG_RAMP-th iteration, and the victims start once every root's
 * has come; a root stops after the iteration in which every victim's 1-byte
 * "done" message (sent after its last sample) has arrived, so the
 * congestion covers every victim sample; without victims
 * a phase is -c iterations of the congestors.  A group's rate is the bytes
 * its members sent over the root's time from the phase's start to its stop.
 *
 * The measurements are phases, --cong-rounds rounds of, for every victim
 * kind, an isolated phase (victims alone; congestors sit the phase out and
 * send nothing, which the row's congestor_messages counts) and a congested
 * one (both), each started together on the global clock (gclock.h).  Per
 * victim kind, the samples of all isolated phases and of all congested ones
 * (every pair's) are pooled; the impact factor of the median and of the
 * 99th percentile is congested / isolated of the sample (the latency, the
 * window time: for bw the inverse of the bandwidth ratio), with the 95%
 * percentile bootstrap interval of analysis/stats.h (ng_stats_ratio_ci,
 * the one `ngauge compare` uses).
 */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "engine/gclock.h"
#include "engine/sampler.h"
#include "engine/session.h"

enum { CG_INCAST, CG_BCAST, CG_ALLTOALL, CG_KINDS };
enum { VK_LAT, VK_BW, VK_KINDS };
enum { TAIL_BAD, TAIL_CHECKED, TAIL_BYTES, TAIL_MSGS, TAIL_SECS, TAIL_N };

static const char *const cg_names[CG_KINDS] = {"incast", "bcast", "alltoall"};
static const char *const vk_names[VK_KINDS] = {"lat", "bw"};

#define CG_LAT_SIZE 8
#define CG_STRIDE   64 /* bytes between control slots */
/* congestor iterations before a root lets the victims of a congested phase
 * start (the connections made and past TCP's slow start) */
#define CG_RAMP 2

struct cg_config {
	const char *victims;    /* --cong-victims */
	const char *congestors; /* --cong-congestors */
	const char *victim;     /* --cong-victim */
	long long rounds;       /* --cong-rounds */
	size_t size;            /* --cong-size */
	size_t bw_size;         /* --cong-bw-size */
	long long window;       /* --cong-window */
	int placement;          /* --cong-placement: 0 random, 1 ranks */
};

struct cg_group {
	int kind;
	const int *ranks; /* into ->perm; ranks[0] is the root */
	int n;
};

struct cg_phase {
	int vk;    /* victim kind, -1: congestors only */
	bool cong; /* congested */
	int round;
};

struct cg {
	struct cg_config cfg;
	struct ng_run *run;
	struct ng_comm *c;
	struct ng_gclock *gc;
	int me, P;
	int vk[VK_KINDS], nvk;
	struct cg_group grp[CG_KINDS];
	int ngrp;
	int *perm; /* [P] victims first, then the groups */
	int nv, npairs;
	bool victim, leader; /* this rank's role; leads its pair */
	int partner;
	int mygrp; /* congestors: its group; -1 */
	int mypos; /* its index in the group */
	size_t window;
	struct cg_phase *phases;
	size_t *sizes, nphases;
	void *send, *recv;
	unsigned char *ctl; /* [(nv + 2) * CG_STRIDE]: done slots, a control in, a control out */
	size_t recv_stride;
	struct ng_req *reqs; /* [2 * window * P + nv] */
	struct ng_sampler smp;
	int *leaders;   /* [npairs] */
	double *acc;    /* reporter: [nvk][2][rounds * npairs * count] */
	size_t *accn;   /* [nvk * 2] */
	bool *vdone;    /* [nv] a root: the victims' "done" arrived */
	size_t *next;   /* [P] the incast root: each member's receives completed */
	uint64_t *iter; /* [P] the incast root: each member's windows */
	double *rates;  /* reporter: [ngrp][nphases] MB/s of each congested phase */
	size_t *nrates;
};

/* ---- roles ---- */

static ng_status cg_usage(const struct cg *g, const char *msg, const char *what)
{
	if (g->me == 0)
		ng_error("congestion: %s%s", msg, what ? what : "");
	return NG_ERR_USAGE;
}

static ng_status cg_parse(struct cg *g)
{
	char buf[256], *save = NULL, *end;
	const char *v = g->cfg.victims;
	double f;
	long long n;

	snprintf(buf, sizeof(buf), "%s", g->cfg.victim);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k = strcmp(t, "lat") == 0 ? VK_LAT : strcmp(t, "bw") == 0 ? VK_BW : -1;

		if (strcmp(t, "allreduce") == 0)
			return cg_usage(g, "--cong-victim allreduce is not supported yet (lat, bw)", NULL);
		if (k < 0)
			return cg_usage(g, "--cong-victim: unknown victim (lat, bw): ", t);
		for (int i = 0; i < g->nvk; i++)
			if (g->vk[i] == k)
				return cg_usage(g, "--cong-victim: named twice: ", t);
		g->vk[g->nvk++] = k;
	}
	snprintf(buf, sizeof(buf), "%s", g->cfg.congestors);
	save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k = -1;

		for (int i = 0; i < CG_KINDS; i++)
			if (strcmp(t, cg_names[i]) == 0)
				k = i;
		if (strcmp(t, "rma-incast") == 0)
			return cg_usage(
			    g, "--cong-congestors rma-incast is not supported (incast, bcast, alltoall)",
			    NULL);
		if (k < 0)
			return cg_usage(
			    g, "--cong-congestors: unknown congestor (incast, bcast, alltoall): ", t);
		for (int i = 0; i < g->ngrp; i++)
			if (g->grp[i].kind == k)
				return cg_usage(g, "--cong-congestors: named twice: ", t);
		g->grp[g->ngrp++].kind = k;
	}
	/* --cong-victims: "20%", "0.2" or a count */
	f = strtod(v, &end);
	if (end == v || f < 0 || (*end && strcmp(end, "%") != 0))
		return cg_usage(g, "--cong-victims: a fraction (0.2, 20%) or a count: ", v);
	if (*end == '%' || strchr(v, '.')) {
		f = *end == '%' ? f / 100.0 : f;
		if (f >= 1.0)
			return cg_usage(g, "--cong-victims: a fraction below 1: ", v);
		n = llround(f * g->P);
		if (f > 0 && n < 2)
			n = 2;
		n &= ~1LL;
	} else {
		n = (long long)f;
		if (n % 2)
			return cg_usage(g, "--cong-victims: an even count (victims are paired): ", v);
	}
	if (n > g->P - 2 * g->ngrp)
		return cg_usage(g, "too few ranks: every congestor group needs 2 after the victims", NULL);
	g->nv = (int)n;
	g->npairs = g->nv / 2;
	return NG_OK;
}

static ng_status cg_roles(struct cg *g)
{
	struct ng_rng rng;
	int C, off;

	g->perm = malloc((size_t)g->P * sizeof(*g->perm));
	g->leaders = malloc(((size_t)g->npairs + 1) * sizeof(*g->leaders));
	if (!g->perm || !g->leaders)
		return NG_ERR_NOMEM;
	for (int i = 0; i < g->P; i++)
		g->perm[i] = i;
	ng_rng_seed(&rng, g->run->seed, 4);
	for (int i = g->P - 1; g->cfg.placement == 0 && i > 0; i--) {
		int j = (int)ng_rng_below(&rng, (uint64_t)i + 1), t = g->perm[i];

		g->perm[i] = g->perm[j];
		g->perm[j] = t;
	}
	g->mygrp = -1;
	for (int i = 0; i < g->nv; i++) {
		if (i % 2 == 0)
			g->leaders[i / 2] = g->perm[i];
		if (g->perm[i] == g->me) {
			g->victim = true;
			g->leader = i % 2 == 0;
			g->partner = g->perm[i ^ 1];
		}
	}
	C = g->P - g->nv;
	off = g->nv;
	for (int k = 0; k < g->ngrp; k++) {
		struct cg_group *gr = &g->grp[k];

		gr->ranks = g->perm + off;
		gr->n = k == g->ngrp - 1 ? g->P - off : C / g->ngrp;
		for (int i = 0; i < gr->n; i++)
			if (gr->ranks[i] == g->me) {
				g->mygrp = k;
				g->mypos = i;
			}
		off += gr->n;
	}
	return NG_OK;
}

static ng_status cg_plan(struct cg *g)
{
	size_t n = g->nv ? (size_t)g->cfg.rounds * (size_t)g->nvk * 2 : (size_t)g->cfg.rounds, i = 0;

	g->phases = calloc(n, sizeof(*g->phases));
	g->sizes = calloc(n, sizeof(*g->sizes));
	if (!g->phases || !g->sizes)
		return NG_ERR_NOMEM;
	for (int r = 0; r < g->cfg.rounds; r++) {
		if (!g->nv) {
			g->phases[i] = (struct cg_phase){.vk = -1, .cong = true, .round = r};
			g->sizes[i++] = g->cfg.size;
			continue;
		}
		for (int k = 0; k < g->nvk; k++)
			for (int c = 0; c < 2; c++) {
				g->phases[i] = (struct cg_phase){.vk = g->vk[k], .cong = c == 1, .round = r};
				g->sizes[i++] = g->vk[k] == VK_LAT ? CG_LAT_SIZE : g->cfg.bw_size;
			}
	}
	g->nphases = n;
	return NG_OK;
}

static ng_status cg_setup(struct ng_session *s, void *state)
{
	struct cg *g = state;
	struct ng_run *run = s->run;
	size_t count = run->count, vmax, cap;
	ng_status st;

	g->run = run;
	g->c = run->comm;
	g->gc = &s->gc;
	g->me = s->me;
	g->P = s->nranks;
	g->window = (size_t)g->cfg.window;
	if (run->nsizes != 1 || run->sizes[0] != CG_LAT_SIZE)
		return cg_usage(
		    g, "-s does not apply (the sizes are --cong-size and --cong-bw-size; lat sends 8 bytes)",
		    NULL);
	st = cg_parse(g);
	if (st != NG_OK)
		return st;
	if (!g->nvk && g->nv)
		return cg_usage(g, "--cong-victim names no victim", NULL);
	if (cg_roles(g) != NG_OK || cg_plan(g) != NG_OK)
		goto err_nomem;
	s->sizes = g->sizes;
	s->nsizes = g->nphases;
	if (g->c->max_msg && (g->cfg.size > g->c->max_msg || g->cfg.bw_size > g->c->max_msg))
		return cg_usage(g, "--cong-size or --cong-bw-size exceeds the module's largest message",
		                NULL);

	vmax = g->cfg.bw_size > CG_LAT_SIZE ? g->cfg.bw_size : CG_LAT_SIZE;
	g->recv_stride = ng_slot_stride(g->cfg.size > vmax ? g->cfg.size : vmax);
	st = ng_buf_alloc(g->c, g->recv_stride, &g->send);
	if (st == NG_OK)
		st = ng_buf_alloc(g->c, g->recv_stride * (size_t)g->P, &g->recv);
	if (st == NG_OK)
		st = ng_buf_alloc(g->c, ((size_t)g->nv + 2) * CG_STRIDE, (void **)&g->ctl);
	if (st != NG_OK)
		return st;
	g->reqs = calloc(2 * g->window * (size_t)g->P + (size_t)g->nv + 1, sizeof(*g->reqs));
	g->vdone = calloc((size_t)g->nv + 1, sizeof(*g->vdone));
	g->next = calloc((size_t)g->P, sizeof(*g->next));
	g->iter = calloc((size_t)g->P, sizeof(*g->iter));
	if (!g->reqs || !g->vdone || !g->next || !g->iter)
		goto err_nomem;
	{
		const struct ng_sampler_spec spec = {.name = "congestion",
		                                     .cap = count,
		                                     .tail = TAIL_N,
		                                     .pool = (size_t)g->npairs,
		                                     .flags = NG_SAMPLER_GATHER};

		st = ng_sampler_init(&g->smp, run, &spec);
		if (st != NG_OK)
			return st;
	}
	if (ng_results_active(run->results)) {
		cap = (size_t)g->cfg.rounds * (size_t)g->npairs * count;
		g->acc = calloc((size_t)g->nvk * 2 * cap + 1, sizeof(*g->acc));
		g->accn = calloc((size_t)g->nvk * 2 + 1, sizeof(*g->accn));
		g->rates = calloc((size_t)g->ngrp * g->nphases + 1, sizeof(*g->rates));
		g->nrates = calloc((size_t)g->ngrp + 1, sizeof(*g->nrates));
		if (!g->acc || !g->accn || !g->rates || !g->nrates)
			goto err_nomem;
	}
	return NG_OK;

err_nomem:
	ng_error("congestion: out of memory");
	return NG_ERR_NOMEM;
}

static void cg_teardown(struct ng_session *s, void *state)
{
	struct cg *g = state;

	(void)s;
	if (g->send)
		ng_free(g->c, g->send);
	if (g->recv)
		ng_free(g->c, g->recv);
	if (g->ctl)
		ng_free(g->c, g->ctl);
	ng_sampler_free(&g->smp);
	free(g->perm);
	free(g->leaders);
	free(g->phases);
	free(g->sizes);
	free(g->reqs);
	free(g->vdone);
	free(g->next);
	free(g->iter);
	free(g->acc);
	free(g->accn);
	free(g->rates);
	free(g->nrates);
}

static ng_status cg_begin(struct ng_session *s, void *state, size_t size)
{
	struct cg *g = state;
	const struct cg_phase *ph = &g->phases[s->index];

	(void)size;
	s->gc.idle = g->victim ? ph->vk < 0 : (g->mygrp < 0 || !ph->cong);
	return NG_OK;
}

/* ---- the victims ---- */

static void cg_check_prep(struct cg *g, size_t len, uint64_t it)
{
	unsigned char *r = g->recv;

	ng_verify_fill(g->send, len, ng_verify_tag(len, g->me, it));
	ng_verify_fill(r, len, ng_verify_tag(len, g->partner, it));
	for (size_t i = 0; i < len; i++)
		r[i] = (unsigned char)~r[i];
}

static ng_status cg_bw_window(struct cg *g, size_t len)
{
	struct ng_comm *c = g->c;
	ng_status st;

	for (size_t i = 0; i < g->window; i++) {
		st = g->leader ? ng_isend(c, g->partner, g->send, len, &g->reqs[i])
		               : ng_irecv(c, g->partner, g->recv, len, &g->reqs[i]);
		if (st != NG_OK)
			return st;
	}
	st = ng_waitall(c, g->reqs, g->window);
	if (st != NG_OK)
		return st;
	return g->leader ? ng_recv(c, g->partner, g->ctl + (size_t)g->nv * CG_STRIDE, 1)
	                 : ng_send(c, g->partner, g->ctl + ((size_t)g->nv + 1) * CG_STRIDE, 1);
}

static ng_status cg_lat_round(struct cg *g)
{
	struct ng_comm *c = g->c;
	ng_status st;

	if (g->leader) {
		st = ng_send(c, g->partner, g->send, CG_LAT_SIZE);
		return st != NG_OK ? st : ng_recv(c, g->partner, g->recv, CG_LAT_SIZE);
	}
	st = ng_recv(c, g->partner, g->recv, CG_LAT_SIZE);
	return st != NG_OK ? st : ng_send(c, g->partner, g->send, CG_LAT_SIZE);
}

static ng_status cg_victim(struct cg *g, const struct cg_phase *ph, size_t len)
{
	const struct ng_timer *tm = g->run->timer;
	struct ng_sampler *smp = &g->smp;
	bool bad = false, bw = ph->vk == VK_BW;
	double checked = 0;
	ng_status st = NG_OK;

	/* congested: every group's root says when its congestion is under way */
	for (int k = 0; st == NG_OK && ph->cong && k < g->ngrp; k++)
		st = ng_recv(g->c, g->grp[k].ranks[0], g->ctl + (size_t)g->nv * CG_STRIDE, 1);
	for (uint64_t it = 0; st == NG_OK && ng_sampler_more(smp, it); it++) {
		bool check = it == 0 || g->run->verify, receives = !bw || !g->leader;
		uint64_t t0, t1;

		if (check)
			cg_check_prep(g, len, it);
		t0 = ng_timer_now(tm);
		st = bw ? cg_bw_window(g, len) : cg_lat_round(g);
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			break;
		if (g->leader)
			ng_sampler_add(smp, 0, it, ng_timer_us(tm, t1 - t0) / (bw ? 1.0 : 2.0));
		if (check && receives) {
			if (!bad && ng_verify_check(g->recv, len, ng_verify_tag(len, g->partner, it),
			                            g->partner) != NG_OK)
				bad = true;
			checked++;
		}
	}
	ng_sampler_tail(smp)[TAIL_BAD] = bad ? 1.0 : 0.0;
	ng_sampler_tail(smp)[TAIL_CHECKED] = checked;
	/* the congestors' roots stop once every victim is done */
	for (int k = 0; st == NG_OK && ph->cong && k < g->ngrp; k++)
		st = ng_send(g->c, g->grp[k].ranks[0], g->ctl + ((size_t)g->nv + 1) * CG_STRIDE, 1);
	return st;
}

/* ---- the congestors ---- */

/* One iteration's data of this rank's group; *@sent_p: messages sent. */
static ng_status cg_congest(struct cg *g, const struct cg_group *gr, uint64_t *sent_p)
{
	struct ng_comm *c = g->c;
	size_t len = g->cfg.size, w = g->window, nr = 0;
	bool root = g->mypos == 0;
	ng_status st = NG_OK;

	for (int j = 0; j < gr->n && st == NG_OK; j++) {
		int peer = gr->ranks[j];
		unsigned char *slot = (unsigned char *)g->recv + (size_t)j * g->recv_stride;
		bool to = false, from = false;

		if (j == g->mypos)
			continue;
		if (gr->kind == CG_ALLTOALL)
			to = from = true;
		else if (gr->kind == CG_INCAST)
			to = j == 0, from = root;
		else
			to = root, from = j == 0;
		for (size_t i = 0; from && st == NG_OK && i < w; i++)
			st = ng_irecv(c, peer, slot, len, &g->reqs[nr++]);
		for (size_t i = 0; to && st == NG_OK && i < w; i++) {
			st = ng_isend(c, peer, g->send, len, &g->reqs[nr++]);
			(*sent_p)++;
		}
	}
	return st != NG_OK ? st : ng_waitall(c, g->reqs, nr);
}

/* Whether every victim's "done" has arrived (the root's pre-posted
 * receives at reqs[2 * window * P ...]). */
static ng_status cg_victims_done(struct cg *g, bool *done_p)
{
	struct ng_req *d = g->reqs + 2 * g->window * (size_t)g->P;
	ng_status st = NG_OK;

	*done_p = true;
	for (int v = 0; v < g->nv && st == NG_OK; v++) {
		if (!g->vdone[v])
			st = ng_test(g->c, &d[v], &g->vdone[v]);
		*done_p = *done_p && g->vdone[v];
	}
	return st;
}

/* --verify: the payloads this rank received in iteration @it of its group. */
static void cg_check_group(struct cg *g, const struct cg_group *gr, uint64_t it, bool *bad_p,
                           double *checked_p)
{
	bool root = g->mypos == 0;

	for (int j = 0; j < gr->n; j++) {
		bool from = j != g->mypos && (gr->kind == CG_ALLTOALL || (gr->kind == CG_INCAST && root) ||
		                              (gr->kind == CG_BCAST && j == 0));
		const void *slot = (unsigned char *)g->recv + (size_t)j * g->recv_stride;

		if (from && !*bad_p &&
		    ng_verify_check(slot, g->cfg.size, ng_verify_tag(g->cfg.size, gr->ranks[j], it),
		                    gr->ranks[j]) != NG_OK)
			*bad_p = true;
		*checked_p += from;
	}
}

/* One data iteration @it: fill (--verify), move, check. */
static ng_status cg_step(struct cg *g, const struct cg_group *gr, uint64_t it, uint64_t *sent_p, bool *bad_p,
                         double *checked_p)
{
	ng_status st;

	if (g->run->verify)
		ng_verify_fill(g->send, g->cfg.size, ng_verify_tag(g->cfg.size, g->me, it));
	st = cg_congest(g, gr, sent_p);
	if (st == NG_OK && g->run->verify)
		cg_check_group(g, gr, it, bad_p, checked_p);
	return st;
}

/* Whether a root's congestion goes on after @done iterations (of the
 * group, or of one incast member): till every victim is done, or -c
 * iterations without victims. */
static ng_status cg_go(struct cg *g, uint64_t done, bool *go_p)
{
	bool all = false;
	ng_status st = NG_OK;

	if (!g->nv) {
		*go_p = done < g->run->count;
		return NG_OK;
	}
	st = cg_victims_done(g, &all);
	*go_p = !all || done < CG_RAMP;
	return st;
}

/*
 * The incast root: every member on its own, so a member that finished its
 * window is told at once whether to go on and sends its next one, never
 * waiting for the slowest member (each member's flow behaves as a
 * bandwidth victim's: a window, then a 1-byte answer).  It polls its
 * members' windows in turn (the receives of a window complete in order).
 * The victims are let go once CG_RAMP windows of every member arrived.
 */
static ng_status cg_incast_root(struct cg *g, const struct cg_group *gr, bool *bad_p, double *checked_p)
{
	struct ng_comm *c = g->c;
	size_t w = g->window, len = g->cfg.size, *next = g->next;
	uint64_t *iter = g->iter, total = 0;
	unsigned char *out = g->ctl + ((size_t)g->nv + 1) * CG_STRIDE;
	int active = gr->n - 1;
	bool told = g->nv == 0;
	ng_status st = NG_OK;

	for (int j = 1; j < gr->n && st == NG_OK; j++) {
		next[j] = 0;
		iter[j] = 0;
		for (size_t i = 0; i < w && st == NG_OK; i++)
			st = ng_irecv(c, gr->ranks[j], (unsigned char *)g->recv + (size_t)j * g->recv_stride,
			              len, &g->reqs[(size_t)j * w + i]);
	}
	while (active > 0 && st == NG_OK) {
		for (int j = 1; j < gr->n && st == NG_OK; j++) {
			struct ng_req *r = &g->reqs[(size_t)j * w];
			const void *slot = (unsigned char *)g->recv + (size_t)j * g->recv_stride;
			bool one = true, go = false;

			if (next[j] > w)
				continue; /* stopped */
			while (one && next[j] < w && st == NG_OK) {
				st = ng_test(c, &r[next[j]], &one);
				next[j] += one;
			}
			if (st != NG_OK || next[j] < w)
				continue;
			if (g->run->verify && !*bad_p &&
			    ng_verify_check(slot, len, ng_verify_tag(len, gr->ranks[j], iter[j]),
			                    gr->ranks[j]) != NG_OK)
				*bad_p = true;
			*checked_p += g->run->verify;
			iter[j]++;
			total++;
			if (!told && total >= CG_RAMP * (uint64_t)(gr->n - 1)) {
				told = true;
				for (int v = 0; v < g->nv && st == NG_OK; v++)
					st = ng_send(c, g->perm[v], out, 1);
			}
			if (st == NG_OK)
				st = cg_go(g, told ? iter[j] : 0, &go);
			out[0] = go ? 1 : 0;
			if (st == NG_OK)
				st = ng_send(c, gr->ranks[j], out, 1);
			next[j] = go ? 0 : w + 1;
			active -= !go;
			for (size_t i = 0; go && i < w && st == NG_OK; i++)
				st = ng_irecv(c, gr->ranks[j],
				              (unsigned char *)g->recv + (size_t)j * g->recv_stride, len,
				              &r[i]);
		}
	}
	return st;
}

/* A congestor's phase. */
static ng_status cg_congestor(struct cg *g)
{
	const struct cg_group *gr = &g->grp[g->mygrp];
	const struct ng_timer *tm = g->run->timer;
	struct ng_comm *c = g->c;
	unsigned char *in = g->ctl + (size_t)g->nv * CG_STRIDE, *out = in + CG_STRIDE;
	struct ng_req *d = g->reqs + 2 * g->window * (size_t)g->P;
	bool root = g->mypos == 0, bad = false, go = true;
	uint64_t sent = 0, t0, it;
	double checked = 0;
	ng_status st = NG_OK;

	for (int v = 0; root && v < g->nv && st == NG_OK; v++) {
		g->vdone[v] = false;
		st = ng_irecv(c, g->perm[v], g->ctl + (size_t)v * CG_STRIDE, 1, &d[v]);
	}
	t0 = ng_timer_now(tm);
	if (root && gr->kind == CG_INCAST && st == NG_OK) {
		st = cg_incast_root(g, gr, &bad, &checked);
		go = false;
	}
	for (it = 0; go && st == NG_OK; it++) {
		st = cg_step(g, gr, it, &sent, &bad, &checked);
		if (st != NG_OK)
			break;
		if (root && it + 1 == CG_RAMP)
			for (int v = 0; v < g->nv && st == NG_OK; v++)
				st = ng_send(c, g->perm[v], out, 1);
		if (root && st == NG_OK) {
			st = cg_go(g, it + 1, &go);
			out[0] = go ? 1 : 0;
			for (int j = 1; j < gr->n && st == NG_OK; j++)
				st = ng_send(c, gr->ranks[j], out, 1);
		} else if (!root && st == NG_OK) {
			st = ng_recv(c, gr->ranks[0], in, 1);
			go = in[0] != 0;
		}
	}
	ng_sampler_tail(&g->smp)[TAIL_BAD] = bad ? 1.0 : 0.0;
	ng_sampler_tail(&g->smp)[TAIL_CHECKED] = checked;
	ng_sampler_tail(&g->smp)[TAIL_MSGS] = (double)sent;
	ng_sampler_tail(&g->smp)[TAIL_BYTES] = (double)sent * (double)g->cfg.size;
	if (root)
		ng_sampler_tail(&g->smp)[TAIL_SECS] = ng_timer_us(tm, ng_timer_now(tm) - t0) * 1e-6;
	return st;
}

static ng_status cg_measure(struct ng_session *s, void *state, size_t size)
{
	struct cg *g = state;
	const struct cg_phase *ph = &g->phases[s->index];

	/* the first iteration, checked, and the warm-up are untimed */
	ng_sampler_start(&g->smp, 1 + g->run->warmup, g->run->count);
	if (g->victim && ph->vk >= 0)
		return cg_victim(g, ph, size);
	if (g->mygrp >= 0 && ph->cong)
		return cg_congestor(g);
	return NG_OK;
}

/* ---- rows, the block, the table ---- */

/* The congestor groups' figures of this phase, from the gathered tails. */
static json_t *cg_groups_json(struct cg *g, const struct cg_phase *ph, double *msgs_p)
{
	json_t *arr = json_array();

	*msgs_p = 0;
	for (int k = 0; arr && k < g->ngrp; k++) {
		const struct cg_group *gr = &g->grp[k];
		double bytes = 0, msgs = 0, secs = ng_sampler_tail_of(&g->smp, gr->ranks[0])[TAIL_SECS];
		double rate;

		for (int i = 0; i < gr->n; i++) {
			bytes += ng_sampler_tail_of(&g->smp, gr->ranks[i])[TAIL_BYTES];
			msgs += ng_sampler_tail_of(&g->smp, gr->ranks[i])[TAIL_MSGS];
		}
		*msgs_p += msgs;
		rate = secs > 0 ? bytes / secs * 1e-6 : 0.0;
		if (ph->cong && g->rates)
			g->rates[(size_t)k * (size_t)g->nphases + g->nrates[k]++] = rate;
		json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:f, s:f, s:f}", "type",
		                                     cg_names[gr->kind], "ranks", gr->n, "root", gr->ranks[0],
		                                     "rate_MBps", rate, "messages", msgs, "seconds", secs));
	}
	return arr;
}

static ng_status cg_report(struct ng_session *s, void *state, size_t size)
{
	struct cg *g = state;
	const struct cg_phase *ph = &g->phases[s->index];
	struct ng_sampler *smp = &g->smp;
	size_t n = 0;
	double checked = 0, msgs;
	const double *x = NULL;
	struct ng_row *row;
	json_t *groups;
	ng_status st;

	st = ng_gclock_end(g->gc);
	if (st == NG_OK)
		st = ng_sampler_gather(smp);
	if (st != NG_OK)
		return st;
	for (int r = 0; r < g->P; r++) {
		if (ng_sampler_tail_of(smp, r)[TAIL_BAD] != 0.0)
			return NG_ERR_VERIFY; /* reported by the rank that saw it */
		checked += ng_sampler_tail_of(smp, r)[TAIL_CHECKED];
	}
	if (!ng_results_active(g->run->results))
		return NG_OK;
	row = ng_sampler_row(smp, size);
	ng_row_json(row, "victim", json_string(ph->vk < 0 ? "none" : vk_names[ph->vk]));
	ng_row_json(row, "phase",
	            json_string(ph->vk < 0 ? "congestors"
	                        : ph->cong ? "congested"
	                                   : "isolated"));
	ng_row_int(row, "round", ph->round);
	if (ph->vk >= 0) {
		size_t k = 0, a;

		while (g->vk[k] != ph->vk)
			k++;
		a = k * 2 + (ph->cong ? 1 : 0);
		x = ng_sampler_pool(smp, 0, g->leaders, (size_t)g->npairs, &n);
		memcpy(g->acc + a * (size_t)g->cfg.rounds * (size_t)g->npairs * g->run->count + g->accn[a], x,
		       n * sizeof(*x));
		g->accn[a] += n;
		ng_row_int(row, "pairs", g->npairs);
		if (ph->vk == VK_LAT) {
			ng_sampler_row_stats(smp, row, "latency_us", x, n, NULL);
		} else {
			ng_sampler_row_stats(smp, row, "time_us", x, n, NULL);
			x = ng_sampler_pool(smp, 0, g->leaders, (size_t)g->npairs, &n);
			ng_sampler_row_bw(smp, row, "bandwidth_MBps", x, n, (double)g->window * (double)size,
			                  NULL);
		}
		x = ng_sampler_pool(smp, 0, g->leaders, (size_t)g->npairs, &n);
	}
	groups = cg_groups_json(g, ph, &msgs);
	ng_row_json(row, "congestors", groups);
	ng_row_int(row, "congestor_messages", (long long)msgs);
	ng_row_int(row, "verified", (long long)checked);
	ng_gclock_row(g->gc, row);
	if (x)
		ng_sampler_row_raw(smp, row, ph->vk == VK_LAT ? "latency_us" : "time_us", x, n);
	return ng_row_commit(g->run->results, row);
}

static double cg_quantile(const double *sorted, size_t n, double q)
{
	return n ? gsl_stats_quantile_from_sorted_data(sorted, 1, n, q) : NAN;
}

static json_t *cg_dist_json(const double *sorted, size_t n)
{
	static const double qs[] = {0.01, 0.1, 0.5, 0.9, 0.99};
	static const char *const ks[] = {"p1", "p10", "p50", "p90", "p99"};
	json_t *o = json_pack("{s:I, s:f, s:f}", "count", (json_int_t)n, "min", n ? sorted[0] : 0.0, "max",
	                      n ? sorted[n - 1] : 0.0);

	for (size_t i = 0; o && i < sizeof(qs) / sizeof(qs[0]); i++)
		json_object_set_new(o, ks[i], json_real(cg_quantile(sorted, n, qs[i])));
	return o;
}

static json_t *cg_factor_json(double f, double lo, double hi)
{
	return json_pack("{s:f, s:[f, f]}", "factor", isfinite(f) ? f : 0.0, "ci95", isfinite(lo) ? lo : 0.0,
	                 isfinite(hi) ? hi : 0.0);
}

/* The impact factors per victim kind, the congestors' rates: the block
 * and the table on stdout. */
static ng_status cg_conclude(struct ng_session *s, void *state)
{
	struct cg *g = state;
	json_t *blk, *imp, *rates, *vic = json_array(), *grp = json_array();
	size_t cap = (size_t)g->cfg.rounds * (size_t)g->npairs * g->run->count;

	(void)s;
	if (!ng_results_active(g->run->results)) {
		json_decref(vic);
		json_decref(grp);
		return NG_OK;
	}
	imp = json_array();
	rates = json_array();
	for (int i = 0; i < g->nv; i++)
		json_array_append_new(vic, json_integer(g->perm[i]));
	for (int k = 0; k < g->ngrp; k++) {
		json_t *r = json_array();

		for (int i = 0; i < g->grp[k].n; i++)
			json_array_append_new(r, json_integer(g->grp[k].ranks[i]));
		json_array_append_new(grp,
		                      json_pack("{s:s, s:o}", "type", cg_names[g->grp[k].kind], "ranks", r));
	}
	printf("# congestion: %d victims (%d pairs), %d congestor groups, %lld rounds\n", g->nv, g->npairs,
	       g->ngrp, g->cfg.rounds);
	if (g->nv)
		printf("# %-6s %12s %12s %22s %12s %12s %22s\n", "victim", "iso median", "cong median",
		       "impact median [ci95]", "iso p99", "cong p99", "impact p99 [ci95]");
	for (int k = 0; g->nv && k < g->nvk; k++) {
		double *a = g->acc + (size_t)k * 2 * cap, *b = a + cap;
		size_t na = g->accn[k * 2], nb = g->accn[k * 2 + 1];
		double ma, mb, pa, pb, lo1, hi1, lo2, hi2;

		gsl_sort(a, 1, na);
		gsl_sort(b, 1, nb);
		ma = cg_quantile(a, na, 0.5);
		mb = cg_quantile(b, nb, 0.5);
		pa = cg_quantile(a, na, 0.99);
		pb = cg_quantile(b, nb, 0.99);
		ng_stats_ratio_ci(a, na, b, nb, 0.5, &lo1, &hi1);
		ng_stats_ratio_ci(a, na, b, nb, 0.99, &lo2, &hi2);
		json_array_append_new(
		    imp,
		    json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "victim", vk_names[g->vk[k]], "unit",
		              g->vk[k] == VK_LAT ? "latency_us" : "time_us", "isolated", cg_dist_json(a, na),
		              "congested", cg_dist_json(b, nb), "median", cg_factor_json(mb / ma, lo1, hi1),
		              "p99", cg_factor_json(pb / pa, lo2, hi2)));
		printf("  %-6s %12.2f %12.2f %6.3f [%6.3f, %6.3f] %12.2f %12.2f %6.3f [%6.3f, %6.3f]\n",
		       vk_names[g->vk[k]], ma, mb, mb / ma, lo1, hi1, pa, pb, pb / pa, lo2, hi2);
	}
	printf("# %-10s %6s %16s\n", "congestor", "ranks", "median rate MB/s");
	for (int k = 0; k < g->ngrp; k++) {
		double *r = g->rates + (size_t)k * g->nphases, med;

		gsl_sort(r, 1, g->nrates[k]);
		med = cg_quantile(r, g->nrates[k], 0.5);
		json_array_append_new(
		    rates, json_pack("{s:s, s:i, s:f, s:f, s:f, s:I}", "type", cg_names[g->grp[k].kind],
		                     "ranks", g->grp[k].n, "median_MBps", med, "min_MBps", r[0], "max_MBps",
		                     r[g->nrates[k] - 1], "phases", (json_int_t)g->nrates[k]));
		printf("  %-10s %6d %16.1f\n", cg_names[g->grp[k].kind], g->grp[k].n, med);
	}
	fflush(stdout);
	blk = json_pack("{s:o, s:o, s:I, s:I, s:I, s:I, s:o, s:o}", "victims", vic, "groups", grp, "rounds",
	                (json_int_t)g->cfg.rounds, "window", (json_int_t)g->window, "size",
	                (json_int_t)g->cfg.size, "bw_size", (json_int_t)g->cfg.bw_size, "impact", imp,
	                "congestor_rates", rates);
	if (!blk) {
		ng_error("congestion: out of memory building the result block");
		return NG_ERR_NOMEM;
	}
	return ng_results_block(g->run->results, "congestion", blk);
}

static const struct ng_session_ops cg_session = {
    .state = sizeof(struct cg),
    .flags = NG_SESSION_WINDOWS | NG_SESSION_BARRIER | NG_SESSION_OWN_CHECK | NG_SESSION_ANNOUNCE,
    .config = NG_SESSION_CONFIG(struct cg, cfg),
    .setup = cg_setup,
    .begin = cg_begin,
    .measure = cg_measure,
    .report = cg_report,
    .conclude = cg_conclude,
    .teardown = cg_teardown,
};

static ng_status cg_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &cg_session);
}

static const struct ng_option cg_options[] = {
    {.name = "cong-victims",
     NG_STRING_AT(struct cg_config, victims),
     .def = "20%",
     .help = "victim ranks: a fraction (20%, 0.2; rounded to an even count, at least 2) or an even count; "
             "0: congestors only",
     .metavar = "FRACTION|N"},
    {.name = "cong-congestors",
     NG_STRING_AT(struct cg_config, congestors),
     .def = "incast",
     .list = true,
     .help = "congestor kinds, one group of ranks each: incast, bcast, alltoall",
     .metavar = "LIST"},
    {.name = "cong-victim",
     NG_STRING_AT(struct cg_config, victim),
     .def = "lat,bw",
     .list = true,
     .help = "victim kinds, measured one after the other: lat (8-byte ping-pong), bw (a window of sends)",
     .metavar = "LIST"},
    {.name = "cong-rounds",
     NG_INT_AT(struct cg_config, rounds),
     .def = "5",
     .min = 1,
     .max = 1000,
     .help = "rounds of an isolated and a congested phase per victim kind",
     .metavar = "N"},
    {.name = "cong-size",
     NG_SIZE_AT(struct cg_config, size),
     .def = "64K",
     .min = 1,
     .max = 1 << 26,
     .help = "bytes of a congestor's message",
     .metavar = "BYTES"},
    {.name = "cong-bw-size",
     NG_SIZE_AT(struct cg_config, bw_size),
     .def = "64K",
     .min = 1,
     .max = 1 << 26,
     .help = "bytes of a bandwidth victim's message",
     .metavar = "BYTES"},
    {.name = "cong-window",
     NG_INT_AT(struct cg_config, window),
     .def = "8",
     .min = 1,
     .max = 1024,
     .help = "messages in flight per peer: a bandwidth victim's window, a congestor's per iteration",
     .metavar = "N"},
    {.name = "cong-placement",
     NG_CHOICE_AT(struct cg_config, placement),
     .def = "random",
     .choices = "random|ranks",
     .help = "roles: random (a shuffle by --seed) or ranks (victims first in rank order, then the groups)"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_congestion = {
    .name = "congestion",
    .desc = "GPCNeT's congestion impact factor: victims (latency, bandwidth) alone and beside congestors "
            "(incast, bcast, alltoall), with bootstrap intervals",
    .options = cg_options,
    .needs = NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_RELIABLE,
    .min_ranks = 4,
    .max_ranks = 0,
    .default_sizes = "8",
    .run = cg_run,
};
