/* SPDX-License-Identifier: BSD-3-Clause */
/* The machinery of the parameter assessments; the contract is in assess.h. */
#include "assess.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"
#include "results.h"

#define NG_AS_MIN_REPS 8    /* probe rounds and first batch (CI needs >= 6) */
#define NG_AS_MAX_REPS 1000 /* adaptive sampling stops here */
#define NG_AS_WARMUP   4    /* default warm-up rounds per kind and size */

/* The control record every rank contributes after a batch. */
enum {
	NG_AS_C_GO,    /* client: 1 when time and round limits allow another batch */
	NG_AS_C_BATCH, /* client: rounds of each kind in the next batch */
	NG_AS_C_DELAY, /* client: d in microseconds */
	NG_AS_C_SCALE, /* client: the CI target's scale */
	NG_AS_C_HW,    /* each: largest CI half-width it measured (us) */
	NG_AS_C_N
};

/* ---- timed rounds ------------------------------------------------------ */

static size_t ng_as_msgs(const struct ng_as *as, enum ng_as_kind kind)
{
	return kind == NG_AS_SINGLE ? 1 : as->n;
}

/* Samples per OS or OR round. */
static size_t ng_as_per_round(const struct ng_as *as)
{
	return as->ops->per_call ? as->n : 1;
}

static ng_status ng_as_client_round(struct ng_as *as, enum ng_as_kind kind, size_t size, uint64_t d_ticks,
                                    bool timed)
{
	const struct ng_timer *tm = as->tm;
	struct ng_comm *c = as->c;
	size_t nmsg = ng_as_msgs(as, kind);
	void *sbuf = as->bufs.send, *rbuf = as->bufs.recv;
	uint64_t tag = ng_verify_tag(size, as->me, as->round), t0 = 0, t1 = 0;
	uint64_t reply = ng_verify_tag(size, as->peer, as->round);
	ng_status st = NG_OK;

	if (as->run->verify)
		ng_verify_fill(sbuf, size, tag);

	if (kind == NG_AS_OS) {
		st = as->ops->client_os(as, size, d_ticks, timed);
	} else {
		t0 = ng_timer_now(tm);
		for (size_t k = 0; k < nmsg && st == NG_OK; k++)
			st = ng_send(c, as->peer, sbuf, size);
		if (st == NG_OK)
			st = ng_recv(c, as->peer, rbuf, size);
		t1 = ng_timer_now(tm);
	}
	if (st != NG_OK)
		return st;

	as->round++;
	if (as->run->verify) {
		st = ng_verify_check(rbuf, size, reply, as->peer);
		if (st != NG_OK)
			return st;
	}
	if (!timed)
		return NG_OK;
	switch (kind) {
	case NG_AS_SINGLE:
	case NG_AS_TRAIN:
		ng_sampler_push(&as->smp, kind, ng_timer_us(tm, t1 - t0));
		break;
	case NG_AS_OS:
		break; /* ops->client_os keeps its samples */
	case NG_AS_OR:
		for (size_t k = 0; k < ng_as_per_round(as); k++)
			ng_sampler_push(&as->smp, NG_AS_OR, 0.0); /* the server's figures */
		break;
	default:
		break;
	}
	return NG_OK;
}

/* Posts the receives of a round of @kind into bank as->bank. */
static ng_status ng_as_post(struct ng_as *as, enum ng_as_kind kind, size_t size)
{
	size_t nmsg = ng_as_msgs(as, kind);
	ng_status st;

	for (size_t k = 0; k < nmsg; k++) {
		st = ng_irecv(as->c, as->peer, ng_as_slot(as, as->bank, k), size, &as->reqs[k]);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/*
 * Server side of one round.  @next: the kind of the following round in this
 * batch, or -1; its receives are posted right after the reply.
 */
static ng_status ng_as_server_round(struct ng_as *as, enum ng_as_kind kind, int next, size_t size,
                                    uint64_t d_ticks, bool timed)
{
	struct ng_comm *c = as->c;
	size_t nmsg = ng_as_msgs(as, kind);
	unsigned bank = as->bank;
	ng_status st = NG_OK;

	/* The reply goes from the send buffer (README: the buffers of the
	 * assessments); --verify gives it the server's own payload. */
	if (as->run->verify)
		ng_verify_fill(as->bufs.send, size, ng_verify_tag(size, as->me, as->round));
	if (kind == NG_AS_OR) {
		st = as->ops->server_or(as, size, d_ticks, timed);
	} else if (as->prepost) {
		st = ng_waitall(c, as->reqs, nmsg);
	} else {
		for (size_t k = 0; k < nmsg && st == NG_OK; k++)
			st = ng_recv(c, as->peer, ng_as_slot(as, bank, k), size);
	}
	if (st != NG_OK)
		return st;

	as->bank ^= 1u;
	st = ng_send(c, as->peer, as->bufs.send, size);
	if (st != NG_OK)
		return st;
	/* The next round's receives, after the reply: posted before it, they
	 * were in this round's time, as many as the next kind has messages (n
	 * before a train, none before an OR round), so rounds of different kinds
	 * carried different costs that the differences did not cancel (over
	 * MPICH: L 0.45 us against 0.27-0.29 us posted after).  They still go
	 * up while the reply travels; a message that comes first waits in the
	 * module as an unexpected one. */
	if (as->prepost && next >= 0 && next != NG_AS_OR) {
		st = ng_as_post(as, (enum ng_as_kind)next, size);
		if (st != NG_OK)
			return st;
	}

	/* Off the client's critical path: after the reply. */
	if (as->run->verify) {
		uint64_t tag = ng_verify_tag(size, as->peer, as->round);

		for (size_t k = 0; k < nmsg; k++) {
			st = ng_verify_check(ng_as_slot(as, bank, k), size, tag, as->peer);
			if (st != NG_OK)
				return st;
		}
	}
	as->round++;
	return NG_OK;
}

/*
 * One batch: @reps rounds of each of the @nkinds kinds, interleaved
 * (kind 0, kind 1, ..., kind 0, ...); the first @untimed rounds of each kind
 * are warm-up.
 */
static ng_status ng_as_batch(struct ng_as *as, const enum ng_as_kind *kinds, size_t nkinds, size_t reps,
                             size_t untimed, size_t size, double d_us)
{
	uint64_t d_ticks = (uint64_t)(d_us * 1e3 / as->tm->ns_per_tick + 0.5);
	size_t total = reps * nkinds;
	ng_status st;

	/* The server posts the first round's receives, then lets the client go
	 * (1 byte from its otherwise unused send buffer). */
	if (as->prepost) {
		if (!as->client) {
			st = ng_as_post(as, kinds[0], size);
			if (st == NG_OK)
				st = ng_send(as->c, as->peer, as->bufs.send, 1);
		} else {
			st = ng_recv(as->c, as->peer, as->bufs.recv, 1);
		}
		if (st != NG_OK)
			return st;
	}
	for (size_t i = 0; i < total; i++) {
		enum ng_as_kind kind = kinds[i % nkinds];
		bool timed = i / nkinds >= untimed;

		if (as->client) {
			st = ng_as_client_round(as, kind, size, d_ticks, timed);
		} else {
			int next = i + 1 < total ? (int)kinds[(i + 1) % nkinds] : -1;

			st = ng_as_server_round(as, kind, next, size, d_ticks, timed);
		}
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* ---- sampling control -------------------------------------------------- */

/*
 * After a batch: every rank contributes its control record, all decide the
 * same.  Returns NG_OK with *more_p, *met_p (the CI half-widths are within
 * the target) and the next batch size / delay in @ctl (the client's
 * record).
 */
static ng_status ng_as_decide(struct ng_as *as, bool probe, size_t done, uint64_t t_size0,
                              double size_budget_us, double per_round_us, double *ctl, bool *more_p,
                              bool *met_p)
{
	double mine[NG_AS_C_N] = {0}, all[2 * NG_AS_C_N];
	const double *cl, *sv;
	ng_status st;

	if (as->client) {
		double elapsed = ng_timer_us(as->tm, ng_timer_now(as->tm) - t_size0), batch, d;

		as->ops->client_ctl(as, &d, &mine[NG_AS_C_SCALE], &mine[NG_AS_C_HW]);
		if (!probe)
			d = ctl[NG_AS_C_DELAY];
		else if (as->delay_opt_us > 0.0)
			d = as->delay_opt_us;
		mine[NG_AS_C_DELAY] = d;
		if (probe) {
			/* The first real batch always runs. */
			batch = (double)(as->fixed ? as->fixed : NG_AS_MIN_REPS);
			mine[NG_AS_C_GO] = 1.0;
		} else if (as->fixed) {
			batch = 0.0;
			mine[NG_AS_C_GO] = 0.0;
		} else {
			double left = size_budget_us - elapsed;
			double cap =
			    (double)((as->floor > NG_AS_MAX_REPS ? as->floor : NG_AS_MAX_REPS) - done);

			batch = (double)done;
			if (batch > cap)
				batch = cap;
			if (per_round_us > 0.0 && batch * per_round_us > left)
				batch = floor(left / per_round_us);
			mine[NG_AS_C_GO] = batch >= 1.0 ? 1.0 : 0.0;
		}
		mine[NG_AS_C_BATCH] = batch;
	} else if (ng_as_n(as, NG_AS_OR)) {
		mine[NG_AS_C_HW] = as->ops->server_hw(as);
	}

	st = ng_boot_allgather(as->run->boot, mine, sizeof(mine), all);
	if (st != NG_OK)
		return st;
	cl = all + (size_t)(as->client ? as->me : as->peer) * NG_AS_C_N;
	sv = all + (size_t)(as->client ? as->peer : as->me) * NG_AS_C_N;
	/* The next batch sizes every rank's arrays: at most what the client
	 * may still take (as it computes it above), or it is dropped. */
	if (cl[NG_AS_C_GO] > 0.0) {
		size_t lim = as->floor > NG_AS_MAX_REPS ? as->floor : NG_AS_MAX_REPS;

		if (as->fixed > lim) /* the probe's batch: --count rounds */
			lim = as->fixed;

		if (!(cl[NG_AS_C_BATCH] >= 1.0 && done <= lim && cl[NG_AS_C_BATCH] <= (double)(lim - done)))
			return ng_peer_bad("batch of rounds", as->client ? as->me : as->peer,
			                   "more rounds than the size has left, or none");
	}
	memcpy(ctl, cl, sizeof(mine));
	*met_p = fmax(cl[NG_AS_C_HW], sv[NG_AS_C_HW]) <= as->ci_rel * cl[NG_AS_C_SCALE];
	if (probe || as->fixed)
		*more_p = cl[NG_AS_C_GO] > 0.0;
	else
		*more_p = cl[NG_AS_C_GO] > 0.0 && (done < as->floor || !*met_p);
	return NG_OK;
}

/* ---- one size ------------------------------------------------------------- */

/* One size: the probe, then batches until the decision stops them
 * (ng_as_decide); @size_budget: the client's time for it (us). */
static ng_status ng_as_measure_size(struct ng_as *as, size_t size, uint64_t t_size0, double size_budget)
{
	static const enum ng_as_kind probe_kinds[] = {NG_AS_SINGLE, NG_AS_TRAIN};
	static const enum ng_as_kind all_kinds[] = {NG_AS_SINGLE, NG_AS_TRAIN, NG_AS_OS, NG_AS_OR};
	struct ng_run *run = as->run;
	uint64_t t_b0;
	double ctl[NG_AS_C_N] = {0}, per_round;
	size_t done = 0, probe_reps = as->fixed && as->fixed < NG_AS_MIN_REPS ? as->fixed : NG_AS_MIN_REPS;
	size_t checks = 0; /* decisions past the floor */
	bool more, met = false;
	ng_status st;

	/* No fixed count: the batches below decide, and each kind appends. */
	ng_sampler_start(&as->smp, 0, 0);
	st = ng_as_batch(as, probe_kinds, 2, as->warmup + probe_reps, as->warmup, size, 0.0);
	if (st != NG_OK)
		return st;
	st = ng_as_decide(as, true, 0, t_size0, size_budget, 0.0, ctl, &more, &met);
	if (st != NG_OK)
		return st;

	while (more) {
		size_t b = (size_t)ctl[NG_AS_C_BATCH];

		t_b0 = ng_timer_now(as->tm);
		st = ng_as_batch(as, all_kinds, 4, b, 0, size, ctl[NG_AS_C_DELAY]);
		if (st != NG_OK)
			return st;
		done += b;
		if (ng_cancelled(run))
			return NG_ERR_CANCELLED;
		per_round = ng_timer_us(as->tm, ng_timer_now(as->tm) - t_b0) / (double)b;
		st = ng_as_decide(as, false, done, t_size0, size_budget, per_round, ctl, &more, &met);
		if (st != NG_OK)
			return st;
		checks += done >= as->floor;
	}
	/* --ci-target: the row says why the size stopped, as the sampler's do:
	 * the target met (at the first decision past the floor: "count"), the
	 * rounds the arrays hold ("count"), or the size's time ("time") */
	if (run->ci_target > 0) {
		const char *why = done + NG_AS_MIN_REPS >= as->cap ? "count" : "time";

		if (met)
			why = checks == 1 ? "count" : "ci";
		ng_sampler_stopped(&as->smp, done, why,
		                   ng_timer_us(as->tm, ng_timer_now(as->tm) - t_size0) / 1e6);
	}
	as->delay_us = ctl[NG_AS_C_DELAY];
	return NG_OK;
}

/* The session's measure: the size's share of what is left of the budget. */
ng_status ng_as_measure(struct ng_session *s, void *state, size_t size)
{
	struct ng_as *as = state;
	uint64_t t_size0 = ng_timer_now(as->tm);
	double size_budget = 0.0;

	if (as->client) {
		double used = ng_timer_us(as->tm, t_size0 - as->t_run0);

		size_budget = (as->budget_us - used) / (double)(as->run->nsizes - s->index);
		if (as->max_size_us > 0.0 && size_budget > as->max_size_us)
			size_budget = as->max_size_us;
	}
	return ng_as_measure_size(as, size, t_size0, size_budget);
}

ng_status ng_as_agree(struct ng_as *as, size_t *list, size_t *n_p, size_t cap)
{
	size_t len = (cap + 1) * sizeof(uint64_t);
	uint64_t *mine = calloc(3 * (cap + 1), sizeof(*mine)), *cl;
	ng_status st;

	if (!mine) {
		ng_error("%s: out of memory", as->ops->name);
		return NG_ERR_NOMEM;
	}
	if (as->client) {
		mine[0] = *n_p < cap ? *n_p : cap;
		for (size_t i = 0; i < mine[0]; i++)
			mine[i + 1] = list[i];
	}
	st = ng_boot_allgather(as->run->boot, mine, len, mine + cap + 1);
	if (st != NG_OK)
		goto out_free;
	cl = mine + (cap + 1) * (size_t)(1 + (as->client ? as->me : as->peer));
	if (cl[0] > cap) {
		st = ng_peer_bad("list of sizes", as->client ? as->me : as->peer, "longer than the sizes");
		goto out_free;
	}
	*n_p = (size_t)cl[0];
	for (size_t i = 0; i < *n_p; i++) {
		if (cl[i + 1] >= as->run->nsizes) {
			st = ng_peer_bad("list of sizes", as->client ? as->me : as->peer,
			                 "a size not measured");
			goto out_free;
		}
		list[i] = (size_t)cl[i + 1];
	}
out_free:
	free(mine);
	return st;
}

ng_status ng_as_remeasure(struct ng_session *s, struct ng_as *as, size_t index, double budget_us)
{
	size_t size = as->run->sizes[index];
	ng_status st;

	as->redo = index + 1;
	st = ng_as_measure_size(as, size, ng_timer_now(as->tm), budget_us);
	if (st == NG_OK)
		st = ng_as_report(s, as, size);
	as->redo = 0;
	return st;
}

/* The session's report: the server's o_r samples to the reporting rank,
 * which reports the size. */
ng_status ng_as_report(struct ng_session *s, void *state, size_t size)
{
	struct ng_as *as = state;
	ng_status st;

	(void)s;
	st = ng_sampler_share(&as->smp, NG_AS_OR, as->client ? as->peer : as->me);
	if (st != NG_OK)
		return st;
	if (!ng_results_active(as->run->results))
		return NG_OK;
	return as->ops->report(as, size, as->delay_us);
}

/* ---- setup --------------------------------------------------------------- */

/* Settings, samples, buffers; the pattern's own state (ops->setup). */
static ng_status ng_as_alloc(struct ng_as *as)
{
	struct ng_run *run = as->run;
	const char *name = as->ops->name;
	long long n = as->cfg.n;
	size_t max = ng_sizes_max(run), nslots;
	struct ng_sampler_spec spec = {.name = name, .flags = NG_SAMPLER_SHARE | NG_SAMPLER_OWN};
	ng_status st;

	if (n < 2 || n > 100000) {
		if (as->me == 0)
			ng_error("%s: --%s-n must be between 2 and 100000, got %lld", name, name, n);
		return NG_ERR_USAGE;
	}
	as->n = (size_t)n;
	as->budget_us = as->cfg.budget_s * 1e6;
	as->ci_rel = as->cfg.ci;
	as->delay_opt_us = as->cfg.delay_us;
	if (!(as->budget_us >= 0.0) || !(as->ci_rel >= 0.0) || !(as->delay_opt_us >= 0.0)) {
		if (as->me == 0)
			ng_error("%s: --%s-budget, --%s-ci and --%s-delay must not be negative", name, name,
			         name, name);
		return NG_ERR_USAGE;
	}
	as->fixed = run->count_given ? run->count : 0;
	if (run->ci_target > 0) {
		as->ci_rel = run->ci_target;
		as->floor = as->fixed;
		as->fixed = 0;
		as->max_size_us = run->max_time_s * 1e6;
	}
	as->warmup = run->warmup_given ? run->warmup : NG_AS_WARMUP;
	as->cap = NG_AS_MIN_REPS + (as->fixed > NG_AS_MAX_REPS ? as->fixed : NG_AS_MAX_REPS);
	if (as->floor > as->cap - NG_AS_MIN_REPS)
		as->cap = NG_AS_MIN_REPS + as->floor;
	as->stride = ng_slot_stride(max);
	as->client = as->me == 0;
	as->peer = 1 - as->me;
	as->prepost = (run->comm->caps & NG_CAP_NONBLOCK) != 0;

	/* OS and OR rounds may give n samples each. */
	if (as->cap > SIZE_MAX / sizeof(double) / ng_as_per_round(as) / 2) {
		ng_error("%s: -c %zu with --%s-n %zu is too many samples", name, as->fixed, name, as->n);
		return NG_ERR_USAGE;
	}
	/* Every stream holds as many as the OS and OR streams need. */
	spec.streams = NG_AS_NKINDS + as->ops->streams;
	spec.cap = as->cap * ng_as_per_round(as);
	st = ng_sampler_init(&as->smp, run, &spec);
	if (st != NG_OK)
		return st;
	as->reqs = calloc(as->n, sizeof(*as->reqs));
	if (!as->reqs)
		goto err_nomem;
	if (ng_results_active(run->results)) {
		as->sizes = json_array();
		if (!as->sizes)
			goto err_nomem;
	}
	if (as->ops->setup) {
		st = as->ops->setup(as);
		if (st != NG_OK)
			return st;
	}

	/* Client: one send buffer and the reply.  Server: two banks of n slots
	 * and the send buffer it replies from. */
	nslots = as->client ? 1 : 2 * as->n;
	if (!as->client && nslots > SIZE_MAX / as->stride) {
		ng_error("%s: %zu slots of %zu bytes do not fit in memory", name, nslots, as->stride);
		return NG_ERR_NOMEM;
	}
	return ng_bufs_alloc(run->comm, max, as->client ? max : nslots * as->stride, &as->bufs);

err_nomem:
	ng_error("%s: out of memory", name);
	return NG_ERR_NOMEM;
}

ng_status ng_as_setup(struct ng_session *s, struct ng_as *as, const struct ng_as_ops *ops)
{
	ng_status st;

	as->ops = ops;
	as->run = s->run;
	as->c = s->run->comm;
	as->tm = s->run->timer;
	as->me = s->me;
	st = ng_as_alloc(as);
	if (st != NG_OK)
		return st;
	/* the budget counts from here */
	as->t_run0 = ng_timer_now(as->tm);
	return NG_OK;
}

ng_status ng_as_conclude(struct ng_session *s, void *state)
{
	struct ng_as *as = state;

	(void)s;
	if (!ng_results_active(as->run->results))
		return NG_OK;
	return as->ops->finish(as);
}

void ng_as_teardown(struct ng_session *s, void *state)
{
	struct ng_as *as = state;

	(void)s;
	if (as->ops->teardown)
		as->ops->teardown(as);
	ng_bufs_free(as->run->comm, &as->bufs);
	json_decref(as->sizes);
	free(as->reqs);
	ng_sampler_free(&as->smp);
}

/* ---- reporting ----------------------------------------------------------- */

json_t *ng_as_param_json(const struct ng_param *p)
{
	json_t *o;

	if (!ng_param_ok(p))
		return json_pack("{s:n, s:s}", "value", "flag", p->flag);
	double tlo, thi;

	/* ci95_total: ci95 widened by the systematic bounds (stats.h), cut at 0 */
	ng_unc_widen(p->lo, p->hi, &p->unc, &tlo, &thi);
	o = json_pack("{s:f, s:[f, o], s:o, s:[f, o]}", "value", p->value, "ci95", p->lo,
	              isfinite(p->hi) ? json_real(p->hi) : json_null(), "uncertainty", ng_unc_json(&p->unc),
	              "ci95_total", tlo > 0.0 ? tlo : 0.0, isfinite(thi) ? json_real(thi) : json_null());
	if (o && p->note[0])
		json_object_set_new(o, "note", json_string(p->note));
	return o;
}

void ng_as_human_size(size_t v, char *buf, size_t len)
{
	ng_fmt_size(v, buf, len); /* the form of the rows above the summary */
}

void ng_as_systematic(struct ng_as *as, struct ng_loggp_sys *sys)
{
	const char *key = as->c->mod->bound_key;
	json_t *rep = key && as->c->ops->report ? as->c->ops->report(as->c) : NULL;

	*sys = (struct ng_loggp_sys){
	    .res_us = as->tm->resolution_ns * 1e-3,
	    .read_us = as->tm->overhead_ns * 1e-3,
	    .drift_ppm = fabs(as->tm->drift_ppm),
	    .emu_us = rep ? json_number_value(json_object_get(rep, key)) : 0.0,
	    .n = as->n,
	};
	json_decref(rep);
}
