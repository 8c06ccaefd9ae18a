/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine of the overlap and skew patterns; the contract is in progress.h. */
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#define NG_PG_BURST_MAX 1024

unsigned ng_pg_lacking(unsigned caps, bool rma)
{
	unsigned need = rma ? NG_CAP_ONESIDED : NG_CAP_CHANNEL | NG_CAP_NONBLOCK;
	unsigned lack = need & ~caps;

	return lack & -lack;
}

/* The name of option NAME-@what, for messages. */
static const char *ng_pg_opt(const struct ng_pg *pg, const char *what, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%s", pg->ops->name, what);
	return buf;
}

/*
 * A usage error every rank found (and one rank reported): all ranks leave
 * together, after the report is out, so that a launcher that aborts the run
 * on a failing rank (MPI) cannot cut the report short.
 */
static ng_status ng_pg_usage(struct ng_pg *pg)
{
	(void)ng_boot_barrier(pg->run->boot);
	return NG_ERR_USAGE;
}

/*
 * Every rank decides the same way from its own instance; the ranks agree, and
 * the lowest rank that refuses says why (one line).  NG_ERR_USAGE when any
 * rank refuses.
 */
static ng_status ng_pg_agree(struct ng_pg *pg, const char *why)
{
	struct ng_boot *b = pg->run->boot;
	double first = why ? (double)(b->size - b->rank) : 0.0;
	ng_status st = ng_boot_max(b, &first, 1);

	if (st != NG_OK)
		return st;
	if (first == 0.0)
		return NG_OK;
	if (why && (double)(b->size - b->rank) == first)
		ng_error("%s", why);
	return ng_pg_usage(pg);
}

/* Options and capabilities, before anything is allocated. */
static ng_status ng_pg_settings(struct ng_pg *pg)
{
	const char *name = pg->ops->name;
	char opt[64], why[320] = "";
	unsigned lack;
	ng_status st;

	pg->rma = pg->cfg.rma;
	lack = ng_pg_lacking(pg->c->caps, pg->rma);
	if (lack && pg->rma)
		snprintf(why, sizeof(why),
		         "pattern '%s' with --%s-rma needs %s, which module '%s' does not offer here", name,
		         name, ng_cap_name(lack), pg->c->mod->name);
	else if (lack && (pg->c->caps & NG_CAP_ONESIDED))
		snprintf(
		    why, sizeof(why),
		    "pattern '%s' needs %s, which module '%s' does not offer here (for one-sided epochs add "
		    "--%s-rma)",
		    name, ng_cap_name(lack), pg->c->mod->name, name);
	else if (lack)
		snprintf(why, sizeof(why), "pattern '%s' needs %s, which module '%s' does not offer here",
		         name, ng_cap_name(lack), pg->c->mod->name);
	st = ng_pg_agree(pg, why[0] ? why : NULL);
	if (st != NG_OK)
		return st;

	/* Every rank reads the same options: rank 0 reports. */
	ng_pg_opt(pg, "burst", opt, sizeof(opt));
	if (pg->cfg.burst_given) {
		long long b = pg->cfg.burst;

		if (b < 1 || b > NG_PG_BURST_MAX) {
			if (pg->run->boot->rank == 0)
				ng_error("--%s must be between 1 and %d, got %lld", opt, NG_PG_BURST_MAX, b);
			return ng_pg_usage(pg);
		}
		pg->burst = (size_t)b;
	} else {
		pg->burst = pg->rma ? 16 : 1;
	}
	pg->spec_text = pg->cfg.compute;
	ng_pg_opt(pg, "compute", opt, sizeof(opt));
	if (ng_xspec_parse(pg->spec_text, &pg->spec, why, sizeof(why))) {
		if (pg->run->boot->rank == 0)
			ng_error("--%s: %s", opt, why);
		return ng_pg_usage(pg);
	}
	st = ng_sizes_check(pg->run);
	return st == NG_ERR_USAGE ? ng_pg_usage(pg) : st;
}

/* Buffers (or the window), requests, calibration. */
static ng_status ng_pg_alloc(struct ng_pg *pg)
{
	struct ng_run *run = pg->run;
	struct ng_comm *c = pg->c;
	size_t max = ng_sizes_max(run);
	struct ng_sampler_spec spec = {
	    .name = pg->ops->name,
	    .streams = 2,
	    .cap = run->count,
	    .flags = NG_SAMPLER_GATHER,
	};
	double mine[3];
	ng_status st;

	pg->stride = ng_slot_stride(max);
	if (pg->stride > ((size_t)1 << 40) / pg->burst) {
		if (run->boot->rank == 0)
			ng_error("%s: %zu slots of %zu bytes are too many", pg->ops->name, pg->burst, max);
		return ng_pg_usage(pg);
	}
	if (pg->rma) {
		const struct ng_rma_ops *rma = ng_rma(c);

		st = rma->win_allocate(c, pg->role == NG_PG_PASSIVE ? pg->burst * pg->stride : 0,
		                       &pg->win_base, &pg->win);
		if (st != NG_OK) {
			pg->win = NULL;
			return st;
		}
		if (pg->role == NG_PG_ACTIVE) {
			st = ng_buf_alloc(c, max, &pg->src);
			if (st != NG_OK)
				return st;
		}
	} else {
		size_t slots = pg->burst * pg->stride;

		st = ng_bufs_alloc(c, pg->role == NG_PG_ACTIVE ? slots : 0,
		                   pg->role == NG_PG_PASSIVE ? slots : 0, &pg->bufs);
		if (st == NG_OK)
			st = ng_buf_alloc(c, 0, &pg->ctl);
		if (st != NG_OK)
			return st;
		pg->reqs = calloc(pg->burst, sizeof(*pg->reqs));
		if (!pg->reqs) {
			ng_error("%s: out of memory", pg->ops->name);
			return NG_ERR_NOMEM;
		}
	}
	st = ng_sampler_init(&pg->smp, run, &spec);
	if (st != NG_OK)
		return st;
	/* The ranks calibrate one after the other, each once every rank is set
	 * up: another rank's start-up (a sanitizer build's shadow memory, a
	 * window's registration) or its own calibration on a sibling
	 * hardware thread made the kernel run up to a third slower than it
	 * then ran during the measurement, so that every computation came out
	 * short. */
	for (int r = 0; r <= run->boot->size && st == NG_OK; r++) {
		st = ng_boot_barrier(run->boot);
		if (st == NG_OK && r == run->boot->rank)
			ng_compute_calibrate(&pg->cp, pg->tm);
	}
	if (st != NG_OK)
		return st;
	mine[0] = pg->cp.iters_per_us;
	mine[1] = 0.0;
	mine[2] = pg->cp.spread;
	return ng_samples_gather(run->boot, mine, 3, &pg->cal[0][0]);
}

void ng_pg_teardown(struct ng_session *s, void *state)
{
	struct ng_pg *pg = state;
	struct ng_comm *c = pg->c;

	/* The window is freed collectively only after a run every rank
	 * finished; after an error a peer may be gone, and closing the
	 * instance frees it. */
	(void)s;
	if (pg->win && pg->ended)
		ng_rma(c)->win_free(c, pg->win);
	ng_free(c, pg->src);
	ng_free(c, pg->ctl);
	ng_bufs_free(c, &pg->bufs);
	free(pg->reqs);
	ng_sampler_free(&pg->smp);
}

/* ---- one iteration ----------------------------------------------------- */

/* The computation of @iters iterations between two timer reads; the ticks it
 * took. */
static inline uint64_t ng_pg_compute(const struct ng_pg *pg, uint64_t iters)
{
	uint64_t c0 = ng_timer_now(pg->tm);

	(void)ng_compute_kernel(iters, c0);
	return ng_timer_now(pg->tm) - c0;
}

static inline void *ng_pg_slot(void *base, const struct ng_pg *pg, size_t b)
{
	return (char *)base + b * pg->stride;
}

/* Two-sided sender: one iteration; its time and computation in ticks. */
static ng_status ng_pg_send_it(struct ng_pg *pg, size_t size, uint64_t iters, uint64_t *t_p, uint64_t *x_p)
{
	struct ng_comm *c = pg->c;
	size_t B = pg->burst;
	uint64_t t0, t1, x = 0;
	ng_status st;

	st = ng_recv(c, pg->peer, pg->ctl, 0);
	if (st != NG_OK)
		return st;
	if (pg->run->verify)
		for (size_t b = 0; b < B; b++)
			ng_verify_fill(ng_pg_slot(pg->bufs.send, pg, b), size,
			               ng_verify_tag(size, pg->c->rank, pg->iter * B + b));
	t0 = ng_timer_now(pg->tm);
	for (size_t b = 0; b < B; b++) {
		st = ng_isend(c, pg->peer, ng_pg_slot(pg->bufs.send, pg, b), size, &pg->reqs[b]);
		if (st != NG_OK)
			return st;
	}
	if (pg->place[NG_PG_ACTIVE] != NG_PG_NONE)
		x = ng_pg_compute(pg, iters);
	st = ng_waitall(c, pg->reqs, B);
	t1 = ng_timer_now(pg->tm);
	*t_p = t1 - t0;
	*x_p = x;
	return st;
}

/* Two-sided receiver: one iteration. */
static ng_status ng_pg_recv_it(struct ng_pg *pg, size_t size, uint64_t iters, uint64_t *t_p, uint64_t *x_p)
{
	struct ng_comm *c = pg->c;
	enum ng_pg_place place = pg->place[NG_PG_PASSIVE];
	size_t B = pg->burst;
	uint64_t t0, t1, x = 0;
	ng_status st;

	t0 = ng_timer_now(pg->tm);
	if (place == NG_PG_BEFORE_POST) {
		st = ng_send(c, pg->peer, pg->ctl, 0);
		if (st != NG_OK)
			return st;
		x = ng_pg_compute(pg, iters);
	}
	for (size_t b = 0; b < B; b++) {
		st = ng_irecv(c, pg->peer, ng_pg_slot(pg->bufs.recv, pg, b), size, &pg->reqs[b]);
		if (st != NG_OK)
			return st;
	}
	if (place != NG_PG_BEFORE_POST) {
		st = ng_send(c, pg->peer, pg->ctl, 0);
		if (st != NG_OK)
			return st;
		if (place == NG_PG_AFTER_POST)
			x = ng_pg_compute(pg, iters);
	}
	st = ng_waitall(c, pg->reqs, B);
	t1 = ng_timer_now(pg->tm);
	*t_p = t1 - t0;
	*x_p = x;
	for (size_t b = 0; st == NG_OK && pg->run->verify && b < B; b++)
		st = ng_verify_check(ng_pg_slot(pg->bufs.recv, pg, b), size,
		                     ng_verify_tag(size, pg->peer, pg->iter * B + b), pg->peer);
	return st;
}

/* One-sided origin: one iteration. */
static ng_status ng_pg_origin_it(struct ng_pg *pg, size_t size, uint64_t iters, uint64_t *t_p, uint64_t *x_p)
{
	struct ng_comm *c = pg->c;
	const struct ng_rma_ops *rma = ng_rma(c);
	struct ng_win *w = pg->win;
	size_t B = pg->burst;
	uint64_t t0, t1, x = 0;
	ng_status st;

	st = rma->post(c, w, &pg->peer, 1);
	if (st == NG_OK)
		st = rma->wait(c, w);
	if (st != NG_OK)
		return st;
	if (pg->run->verify)
		ng_verify_fill(pg->src, size, ng_verify_tag(size, c->rank, pg->iter));
	t0 = ng_timer_now(pg->tm);
	st = rma->start(c, w, &pg->peer, 1);
	for (size_t b = 0; st == NG_OK && b < B; b++)
		st = rma->put(c, w, pg->peer, b * pg->stride, pg->src, size);
	if (st != NG_OK)
		return st;
	if (pg->place[NG_PG_ACTIVE] != NG_PG_NONE)
		x = ng_pg_compute(pg, iters);
	st = rma->complete(c, w);
	t1 = ng_timer_now(pg->tm);
	*t_p = t1 - t0;
	*x_p = x;
	return st;
}

/* One-sided target: one iteration. */
static ng_status ng_pg_target_it(struct ng_pg *pg, size_t size, uint64_t iters, uint64_t *t_p, uint64_t *x_p)
{
	struct ng_comm *c = pg->c;
	const struct ng_rma_ops *rma = ng_rma(c);
	enum ng_pg_place place = pg->place[NG_PG_PASSIVE];
	struct ng_win *w = pg->win;
	uint64_t t0, t1, x = 0;
	ng_status st;

	st = rma->start(c, w, &pg->peer, 1);
	if (st == NG_OK)
		st = rma->complete(c, w);
	if (st != NG_OK)
		return st;
	t0 = ng_timer_now(pg->tm);
	if (place == NG_PG_BEFORE_POST)
		x = ng_pg_compute(pg, iters);
	st = rma->post(c, w, &pg->peer, 1);
	if (st != NG_OK)
		return st;
	if (place == NG_PG_AFTER_POST)
		x = ng_pg_compute(pg, iters);
	st = rma->wait(c, w);
	t1 = ng_timer_now(pg->tm);
	*t_p = t1 - t0;
	*x_p = x;
	for (size_t b = 0; st == NG_OK && pg->run->verify && b < pg->burst; b++)
		st = ng_verify_check(ng_pg_slot(pg->win_base, pg, b), size,
		                     ng_verify_tag(size, pg->peer, pg->iter), pg->peer);
	return st;
}

/* One iteration of this rank with @iters of computation; @t_us / @x_us
 * receive its time and its computation's (NULL: untimed). */
static ng_status ng_pg_iteration(struct ng_pg *pg, size_t size, uint64_t iters, double *t_us, double *x_us)
{
	uint64_t t = 0, x = 0;
	ng_status st;

	if (pg->rma)
		st = pg->role == NG_PG_ACTIVE ? ng_pg_origin_it(pg, size, iters, &t, &x)
		                              : ng_pg_target_it(pg, size, iters, &t, &x);
	else
		st = pg->role == NG_PG_ACTIVE ? ng_pg_send_it(pg, size, iters, &t, &x)
		                              : ng_pg_recv_it(pg, size, iters, &t, &x);
	pg->iter++;
	if (t_us) {
		*t_us = ng_timer_us(pg->tm, t);
		*x_us = ng_timer_us(pg->tm, x);
	}
	return st;
}

/* ---- one size ---------------------------------------------------------- */

/* Warm-up and probe: each rank's T(0); the lengths of this size. */
static ng_status ng_pg_lengths(struct ng_pg *pg, size_t size)
{
	struct ng_run *run = pg->run;
	double probe[NG_PG_PROBE], xdummy, mine;
	char why[256];
	ng_status st = NG_OK;

	for (size_t i = 0; i < run->warmup && st == NG_OK; i++)
		st = ng_pg_iteration(pg, size, 0, NULL, NULL);
	for (size_t i = 0; i < NG_PG_PROBE && st == NG_OK; i++)
		st = ng_pg_iteration(pg, size, 0, &probe[i], &xdummy);
	if (st != NG_OK)
		return st;
	mine = gsl_stats_median(probe, 1, NG_PG_PROBE);
	st = ng_samples_gather(run->boot, &mine, 1, pg->probe);
	if (st != NG_OK)
		return st;
	pg->t_ref = 0.0;
	for (int r = 0; r < 2; r++)
		if (pg->ref_roles & (1u << r) && pg->probe[r] > pg->t_ref)
			pg->t_ref = pg->probe[r];
	/* Every rank has the same figures: the same lengths, or the same error. */
	pg->npts = ng_xspec_values(&pg->spec, pg->t_ref, pg->xs, why, sizeof(why));
	if (!pg->npts) {
		if (run->boot->rank == 0)
			ng_error("--%s-compute '%s' at %zu bytes (T(0) = %.4g us): %s", pg->ops->name,
			         pg->spec_text, size, pg->t_ref, why);
		return ng_pg_usage(pg);
	}
	for (size_t k = 0; k < pg->npts; k++)
		pg->iters[k] = ng_compute_iters(&pg->cp, pg->xs[k]);
	return NG_OK;
}

ng_status ng_pg_measure(struct ng_session *s, void *state, size_t size)
{
	struct ng_pg *pg = state;
	struct ng_run *run = pg->run;
	struct ng_sampler *smp = &pg->smp;
	size_t npts;
	ng_status st;

	(void)s;
	st = ng_pg_lengths(pg, size);
	if (st == NG_OK)
		st = ng_sampler_reserve(smp, 2 * pg->npts);
	if (st != NG_OK)
		return st;
	npts = pg->npts;
	/* A round is one iteration per length; the first is untimed. */
	ng_sampler_start(smp, 1, run->count);
	for (uint64_t r = 0; ng_sampler_more(smp, r) && st == NG_OK; r++) {
		for (size_t k = 0; k < npts && st == NG_OK; k++) {
			double t, x;

			st = ng_pg_iteration(pg, size, pg->iters[k], &t, &x);
			ng_sampler_add(smp, k, r, t);
			ng_sampler_add(smp, npts + k, r, x);
		}
	}
	return st;
}

ng_status ng_pg_report(struct ng_session *s, void *state, size_t size)
{
	struct ng_pg *pg = state;
	ng_status st;

	(void)s;
	/* Both ranks' streams (ng_pg_t, ng_pg_x). */
	st = ng_sampler_gather(&pg->smp);
	if (st != NG_OK)
		return st;
	if (!ng_results_active(pg->run->results))
		return NG_OK;
	return pg->ops->report(pg, size);
}

static json_t *ng_pg_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *ng_pg_param_json(double v, double lo, double hi)
{
	return json_pack("{s:o, s:[o,o]}", "value", ng_pg_num(v), "ci95", ng_pg_num(lo), ng_pg_num(hi));
}

json_t *ng_pg_compute_json(const struct ng_pg *pg)
{
	json_t *ranks = json_array(), *o;

	if (!ranks)
		return NULL;
	for (int r = 0; r < 2; r++) {
		const double *cal = pg->cal[r];

		o = json_pack("{s:i, s:f, s:f}", "rank", r, "iters_per_us", cal[0], "spread", cal[2]);
		if (o && cal[1] > 0.0) {
			json_object_set_new(o, "iters_per_us_end", json_real(cal[1]));
			json_object_set_new(o, "change", json_real((cal[1] - cal[0]) / cal[0]));
		}
		if (!o || json_array_append_new(ranks, o)) {
			json_decref(ranks);
			return NULL;
		}
	}
	return json_pack("{s:s, s:i, s:f, s:o}", "kernel", "dependent 64-bit multiply-add chain, no memory",
	                 "windows", NG_COMPUTE_WINDOWS, "window_us", NG_COMPUTE_WINDOW_US, "ranks", ranks);
}

ng_status ng_pg_setup(struct ng_session *s, struct ng_pg *pg, const struct ng_pg_ops *ops)
{
	ng_status st;

	pg->ops = ops;
	pg->run = s->run;
	pg->c = s->run->comm;
	pg->tm = s->run->timer;
	pg->role = s->me == 0 ? NG_PG_ACTIVE : NG_PG_PASSIVE;
	pg->peer = 1 - s->me;

	st = ng_pg_settings(pg);
	if (st != NG_OK)
		return st;
	return ng_pg_alloc(pg);
}

ng_status ng_pg_conclude(struct ng_session *s, void *state)
{
	struct ng_pg *pg = state;
	struct ng_run *run = pg->run;
	double mine[3];
	ng_status st;

	(void)s;
	ng_compute_recheck(&pg->cp, pg->tm);
	mine[0] = pg->cp.iters_per_us;
	mine[1] = pg->cp.iters_per_us_end;
	mine[2] = pg->cp.spread;
	st = ng_samples_gather(run->boot, mine, 3, &pg->cal[0][0]);
	if (st == NG_OK && ng_results_active(run->results) && pg->ops->finish)
		st = pg->ops->finish(pg);
	pg->ended = st == NG_OK;
	return st;
}
