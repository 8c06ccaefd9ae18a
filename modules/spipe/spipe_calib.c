/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The spipe module's start-up calibration (spipe.h): the measurements of
 * registration, memcpy and the network that fit the model of
 * spipe_model.h, and what the result file gets of the model.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loggp.h"
#include "analysis/stats.h"
#include "module.h"
#include "modules/rdmalayer/rdma.h"
#include "modules/spipe/spipe.h"
#include "modules/spipe/spipe_model.h"
#include "peer.h"
#include "results.h"

/* ---- the model: start-up measurements ----------------------------------- */

static double sp_us_since(uint64_t t0)
{
	return (double)(ng_watch_now_ns() - t0) / 1e3;
}

/* The median of @x[0..n) (sorted in place; analysis/stats.h). */
static double sp_median(double *x, size_t n)
{
	struct ng_stats st;

	ng_stats_compute(x, n, &st);
	return st.median;
}

/* A line through the samples: intercept (>= 0) and slope (>= 0). */
static void sp_line(const double *x, const double *y, size_t n, double *a_p, double *b_p)
{
	struct ng_fit f;

	*a_p = *b_p = 0.0;
	if (ng_fit_line(x, y, NULL, n, 0.0, &f) != 0)
		return;
	*a_p = f.a > 0 ? f.a : 0.0;
	*b_p = f.b > 0 ? f.b : 0.0;
}

/* Rank 0: memcpy and registration, on memory it has touched. */
static ng_status sp_measure_local(struct spipe *sp)
{
	static const size_t copy_sizes[] = {4096, 16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20};
	static const size_t reg_sizes[] = {4096, 65536, 1 << 20, 4 << 20};
	struct ng_spipe_model *m = &sp->model;
	struct sp_samples *sa = &sp->samples;
	size_t max = (size_t)16 << 20;
	unsigned char *a = malloc(2 * max);
	double t[64];
	ng_status st = NG_OK;

	if (!a) {
		ng_error("spipe: out of memory for the start-up measurements");
		return NG_ERR_NOMEM;
	}
	memset(a, 1, 2 * max);
	m->ncopy = sizeof(copy_sizes) / sizeof(copy_sizes[0]);
	for (size_t i = 0; i < m->ncopy; i++) {
		size_t L = copy_sizes[i], reps = (size_t)(4 << 20) / L;

		reps = reps < 3 ? 3 : reps > 32 ? 32 : reps;
		memcpy(a + max, a, L); /* warm */
		for (size_t k = 0; k < reps; k++) {
			uint64_t t0 = ng_watch_now_ns();

			memcpy(a + max, a, L);
			__asm__ volatile("" ::: "memory");
			t[k] = sp_us_since(t0);
		}
		m->copy_size[i] = (double)L;
		m->copy_MBps[i] = (double)L / sp_median(t, reps);
	}
	for (size_t i = 0; i < 4 && st == NG_OK; i++) {
		double td[16];

		for (size_t k = 0; k < 11 && st == NG_OK; k++) {
			struct ng_rdma_mr *mr;
			uint64_t t0 = ng_watch_now_ns();

			st = ng_rdma_reg(sp->cm.r, a + 4096 * k, reg_sizes[i], &mr);
			if (st != NG_OK)
				break;
			t[k] = sp_us_since(t0);
			t0 = ng_watch_now_ns();
			ng_rdma_dereg(sp->cm.r, mr);
			td[k] = sp_us_since(t0);
		}
		if (st != NG_OK)
			break;
		/* the first registration of a range may fault pages in: left out */
		sa->reg_size[i] = (double)reg_sizes[i];
		sa->reg_us[i] = sp_median(t + 1, 10);
		sa->dereg_us[i] = sp_median(td + 1, 10);
	}
	free(a);
	if (st != NG_OK)
		return st;
	sp_line(sa->reg_size, sa->reg_us, 4, &m->lambda_reg_us, &m->reg_us_per_byte);
	sp_line(sa->reg_size, sa->dereg_us, 4, &m->lambda_dereg_us, &m->dereg_us_per_byte);
	return NG_OK;
}

/*
 * The network between ranks 0 and 1: a ping-pong of notified writes.  Rank 0
 * decides how long each size runs (a time budget, at least 3 timed rounds)
 * and tells rank 1 in band: the word of a size's last round carries
 * SP_LAST, and before every size a control word says whether it runs at
 * all (sizes whose one-way time would exceed what the budget allows are
 * left out: an emulated device moves a few MB/s).
 */
struct sp_net {
	struct spipe *sp;
	struct ng_rdma_mr *mr; /* [0, NET_MAX) arrivals, [NET_MAX, 2 NET_MAX) sources, then control */
	struct ng_rdma_rmr peer_rm;
	int peer;
	uint64_t seq, cseq;
};

#define NET_MAX      ((size_t)1 << 20)
#define NET_CTL      (2 * NET_MAX)
#define SP_LAST      ((uint64_t)1 << 62)
#define NET_BUDGET   0.1 /* seconds of timed rounds per size */
#define NET_TOO_MUCH 2e4 /* us one way: larger sizes are not measured */

/* One round trip (rank 0, timed into *@us_p) or echo (rank 1) of @n writes
 * of @len bytes, the last notified; *@last_p: rank 0 says it is the last. */
static ng_status sp_net_round(struct sp_net *nt, size_t len, size_t n, bool *last_p, double *us_p)
{
	struct ng_rdma *r = nt->sp->cm.r;
	unsigned char *in = nt->mr->base, *out = in + NET_MAX;
	const volatile uint64_t *w = (const volatile uint64_t *)(void *)(in + len * n - 8);
	uint64_t seq = ++nt->seq, word = seq, t0 = 0, tk;
	bool first = r->rank == 0;
	ng_status st;

	if (!first) {
		st = ng_rdma_wait_word(r, w, seq, nt->peer);
		if (st != NG_OK)
			return st;
		*last_p = (ng_rdma_load64(w) & SP_LAST) != 0;
	} else {
		word |= *last_p ? SP_LAST : 0;
		t0 = ng_watch_now_ns();
	}
	memcpy(out + len * n - 8, &word, 8);
	for (size_t i = 0; i < n; i++) {
		st = ng_rdma_write(r, nt->peer, out + i * len, nt->mr, len, &nt->peer_rm, i * len,
		                   i + 1 == n ? NG_RDMA_NOTIFY : 0, &tk);
		if (st != NG_OK)
			return st;
	}
	if (first) {
		st = ng_rdma_wait_word(r, w, seq, nt->peer);
		if (st != NG_OK)
			return st;
		*us_p = sp_us_since(t0) / 2.0;
	}
	return ng_rdma_wait_all(r, nt->peer);
}

/* Whether the next size runs: rank 0 says (@go), rank 1 learns it. */
static ng_status sp_net_go(struct sp_net *nt, bool *go_p)
{
	struct ng_rdma *r = nt->sp->cm.r;
	const volatile uint64_t *w =
	    (const volatile uint64_t *)(void *)((unsigned char *)nt->mr->base + NET_CTL);
	uint64_t v = ++nt->cseq * 2, tk;
	ng_status st;

	if (r->rank != 0) {
		st = ng_rdma_wait_word(r, w, v, nt->peer);
		*go_p = ng_rdma_load64(w) & 1;
		return st;
	}
	v |= *go_p;
	st = ng_rdma_write(r, nt->peer, &v, NULL, 8, &nt->peer_rm, NET_CTL, NG_RDMA_NOTIFY, &tk);
	return st == NG_OK ? ng_rdma_wait_all(r, nt->peer) : st;
}

/* One untimed round, then timed ones for NET_BUDGET seconds (3 to 64);
 * rank 0 gets their first quartile. */
static ng_status sp_net_median(struct sp_net *nt, size_t len, size_t n, double *us_p)
{
	double t[64], dummy;
	uint64_t t0 = 0;
	size_t k = 0;
	bool last = false;
	ng_status st = sp_net_round(nt, len, n, &last, &dummy);

	while (st == NG_OK && !(nt->sp->cm.base.rank != 0 && last)) {
		if (nt->sp->cm.base.rank == 0) {
			if (!k)
				t0 = ng_watch_now_ns();
			last = k + 1 == 64 ||
			       (k + 1 >= 3 && (double)(ng_watch_now_ns() - t0) / 1e9 > NET_BUDGET);
		}
		st = sp_net_round(nt, len, n, &last, &t[k < 64 ? k : 63]);
		k++;
		if (nt->sp->cm.base.rank == 0 && last)
			break;
	}
	/* the first quartile: a busy host adds milliseconds to some rounds */
	if (st == NG_OK && nt->sp->cm.base.rank == 0) {
		k = k < 64 ? k : 64;
		(void)sp_median(t, k); /* sorts */
		*us_p = t[(k - 1) / 4];
	}
	return st;
}

static ng_status sp_measure_net(struct spipe *sp, struct ng_boot *b)
{
	static const size_t sizes[] = {8, 65536, 262144, 1 << 20};
	struct ng_spipe_model *m = &sp->model;
	struct sp_samples *sa = &sp->samples;
	struct sp_net nt = {.sp = sp, .peer = b->rank == 0 ? 1 : 0};
	struct ng_rdma_rmr *all = calloc((size_t)b->size, sizeof(*all));
	size_t nsz = 0;
	ng_status st;

	if (!all) {
		ng_error("spipe: out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_rdma_mem_alloc(sp->cm.r, 2 * NET_MAX + 64, &nt.mr);
	if (st == NG_OK)
		st = ng_boot_allgather(b, &nt.mr->remote, sizeof(nt.mr->remote), all);
	if (st == NG_OK && b->rank < 2) {
		nt.peer_rm = all[nt.peer];
		for (size_t i = 0; i < 4 && st == NG_OK; i++) {
			/* the next size would take four times as long */
			bool go = i < 2 ||
			          sa->net_us[i - 1] * (double)sizes[i] / (double)sizes[i - 1] < NET_TOO_MUCH;

			st = sp_net_go(&nt, &go);
			if (st != NG_OK || !go)
				break;
			sa->net_size[i] = (double)sizes[i];
			st = sp_net_median(&nt, sizes[i], 1, &sa->net_us[i]);
			nsz = i + 1;
		}
		if (st == NG_OK)
			st = sp_net_median(&nt, 64, 1, &sa->train1_us);
		if (st == NG_OK)
			st = sp_net_median(&nt, 64, 16, &sa->train16_us);
	}
	if (st == NG_OK)
		st = ng_boot_barrier(b);
	ng_rdma_mem_free(sp->cm.r, nt.mr);
	free(all);
	if (st != NG_OK || b->rank != 0)
		return st;
	m->lambda_net_us = sa->net_us[0];
	/* the median of the slopes between pairs of sizes (Theil-Sen): one size
	 * that a busy host slowed does not tilt it */
	{
		double sl[10];
		size_t ns = 0;

		for (size_t i = 1; i < nsz; i++)
			for (size_t j = i + 1; j < nsz; j++)
				sl[ns++] =
				    (sa->net_us[j] - sa->net_us[i]) / (sa->net_size[j] - sa->net_size[i]);
		m->net_us_per_byte = ns ? sp_median(sl, ns) : 0.0;
	}
	/* A noisy host can flatten the slope: then the largest write alone. */
	if (!(m->net_us_per_byte > 0))
		m->net_us_per_byte = fmax(sa->net_us[nsz - 1] - sa->net_us[0], sa->net_us[nsz - 1] / 2) /
		                     sa->net_size[nsz - 1];
	m->g_us = (sa->train16_us - sa->train1_us) / 15.0;
	if (!(m->g_us > 0))
		m->g_us = 0;
	return NG_OK;
}

ng_status ng_spipe_measure(struct spipe *sp, struct ng_boot *b)
{
	uint64_t t0 = ng_watch_now_ns();
	ng_status st = NG_OK;
	double failed;

	if (b->rank == 0)
		st = sp_measure_local(sp);
	/* rank 0 failed (and said why): all leave */
	failed = st == NG_OK ? 0.0 : 1.0;
	if (ng_boot_max(b, &failed, 1) != NG_OK)
		return NG_ERR_PEER_LOST;
	if (failed != 0.0)
		return st != NG_OK ? st : NG_ERR_IO;
	sp->samples.seconds_local = (double)(ng_watch_now_ns() - t0) / 1e9;
	if (b->size > 1)
		st = sp_measure_net(sp, b);
	if (st != NG_OK)
		return st;
	sp->samples.seconds = (double)(ng_watch_now_ns() - t0) / 1e9;
	st = ng_boot_bcast(b, 0, &sp->model, sizeof(sp->model));
	if (st == NG_OK)
		st = ng_boot_bcast(b, 0, &sp->samples, sizeof(sp->samples));
	/* Rank 0's model: its table length indexes the B_copy table (peer.h);
	 * its numbers only size chunks, which the plan clamps to the buffers
	 * (spipe_model.c: a number that is not finite and positive is a
	 * sub-block). */
	if (st == NG_OK && b->rank != 0 &&
	    ng_peer_len("spipe B_copy table length", 0, sp->model.ncopy, 0, NG_SPIPE_NCOPY,
	                &sp->model.ncopy) != NG_OK)
		st = NG_ERR_PROTO;
	return st;
}

/* ---- the result file ------------------------------------------------------ */

static json_t *sp_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A bandwidth in MB/s from a cost per byte (null: no measurable cost). */
static json_t *sp_bw(double us_per_byte)
{
	return us_per_byte > 0 ? json_real(1.0 / us_per_byte) : json_null();
}

static const char *const sp_equations[] = {
    "reg: T_reg(L) + T_dereg(L) + lambda_net + L/B_net",
    "rcache: lambda_net + L/B_net (a hit; with --spipe-fresh as reg)",
    "copy: 2 L/B_copy(L) + lambda_net + L/B_net",
    "pipeline: eq. 1, 2 C/B_copy(L) + n g + lambda_net + L/B_net, C = C_opt(L) (eq. 3) within the buffer",
    "super: eq. 9 + C_0/B_copy(L), eq. 9 = b/B_copy(L) + n g + lambda_net + L/B_net (the CTS of a receive "
    "posted first leaves no round trip to hide the first chunk's copy); without sub-blocks eq. 8, "
    "(C_0 + C_n)/B_copy(L) + n g + lambda_net + L/B_net",
};

json_t *ng_spipe_report(struct ng_comm *c)
{
	struct spipe *sp = sp_of(c);
	const struct ng_spipe_model *m = &sp->model;
	const struct sp_samples *sa = &sp->samples;
	json_t *copy = json_array(), *reg = json_array(), *net = json_array(), *eqs = json_object();

	for (size_t i = 0; i < m->ncopy; i++)
		json_array_append_new(copy, json_pack("{s:I,s:o}", "size", (json_int_t)m->copy_size[i],
		                                      "MBps", sp_num(m->copy_MBps[i])));
	for (size_t i = 0; i < 4; i++)
		json_array_append_new(reg, json_pack("{s:I,s:o,s:o}", "size", (json_int_t)sa->reg_size[i],
		                                     "reg_us", sp_num(sa->reg_us[i]), "dereg_us",
		                                     sp_num(sa->dereg_us[i])));
	for (size_t i = 0; c->size > 1 && i < 4 && sa->net_size[i] > 0; i++)
		json_array_append_new(net, json_pack("{s:I,s:o}", "size", (json_int_t)sa->net_size[i], "T_us",
		                                     sp_num(sa->net_us[i])));
	for (unsigned i = 0; i < NG_SPIPE_NMODES; i++)
		json_object_set_new(eqs, ng_spipe_mode_name((enum ng_spipe_mode)i),
		                    json_string(sp_equations[i]));
	return json_pack(
	    "{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:b,s:o,s:o,"
	    "s:{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:f,s:f,s:s},"
	    "s:o,s:{s:I,s:I,s:I,s:I,s:I}}",
	    "mode", ng_spipe_mode_name(sp->proto.mode), "memory", sp->fresh ? "fresh" : "reused",
	    "memory_note",
	    sp->fresh
	        ? "every message on memory the protocol has never seen: registrations of the buffers are "
	          "dropped before and after each message, as when they are freed and allocated anew "
	          "(first use; the registration cache misses every time)"
	        : "the same buffers again and again (steady state: a registration cache hits)",
	    "eager_bytes", (json_int_t)sp->S, "buffers", (json_int_t)sp->proto.nbuf, "buffer_bytes",
	    (json_int_t)sp->proto.slot, "block_bytes", (json_int_t)sp->proto.block, "sub_blocks",
	    sp->proto.subblocks, "c0_bytes",
	    sp->c0_given ? json_integer((json_int_t)sp->proto.c0)
	                 : json_string("model: B_copy(L) 2 lambda_net"),
	    "q", sp->q_given ? json_real(sp->proto.q) : json_string("model: B_copy(L) / B_net, at least 1.5"),
	    "model", "lambda_reg_us", sp_num(m->lambda_reg_us), "B_reg_MBps", sp_bw(m->reg_us_per_byte),
	    "lambda_dereg_us", sp_num(m->lambda_dereg_us), "B_dereg_MBps", sp_bw(m->dereg_us_per_byte),
	    "B_copy_MBps", copy, "lambda_net_us", c->size > 1 ? sp_num(m->lambda_net_us) : json_null(),
	    "B_net_MBps", c->size > 1 ? sp_bw(m->net_us_per_byte) : json_null(), "g_us",
	    c->size > 1 ? sp_num(m->g_us) : json_null(), "reg_samples", reg, "net_samples", net,
	    "train_64B_us", json_pack("{s:o,s:o}", "1", sp_num(sa->train1_us), "16", sp_num(sa->train16_us)),
	    "equations", eqs, "registration_samples_note",
	    json_string(
	        "touched memory, median of 10 after one untimed; net: half round trip of notified writes "
	        "between ranks 0 and 1"),
	    "seconds", sa->seconds, "seconds_local", sa->seconds_local, "measured_on",
	    "rank 0 (network: ranks 0 and 1)", "backend", json_string(sp->cm.r->desc), "rcache", "hits",
	    (json_int_t)sp->rc.hits, "misses", (json_int_t)sp->rc.misses, "evictions",
	    (json_int_t)sp->rc.evictions, "invalidations", (json_int_t)sp->rc.invalidations, "uncached",
	    (json_int_t)sp->uncached);
}

void ng_spipe_report_row(struct ng_comm *c, size_t size, struct ng_row *row)
{
	struct spipe *sp = sp_of(c);
	struct ng_spipe_pred pr;
	struct ng_spipe_shape sh;
	json_t *by = json_object();

	if (c->size < 2 || !by)
		return;
	ng_spipe_predict(&sp->model, &sp->proto, size, sp->fresh, &pr);
	if (size <= sp->S) {
		ng_row_number(row, "predicted_us", pr.eager);
		json_object_set_new(by, "eager", sp_num(pr.eager));
	} else {
		ng_row_number(row, "predicted_us", pr.mode[sp->proto.mode]);
		for (unsigned i = 0; i < NG_SPIPE_NMODES; i++)
			json_object_set_new(by, ng_spipe_mode_name((enum ng_spipe_mode)i),
			                    sp_num(pr.mode[i]));
		json_object_set_new(by, "super_eq8", sp_num(pr.super_eq8));
		json_object_set_new(by, "super_eq9", sp_num(pr.super_eq9));
		if (sp->proto.mode >= NG_SPIPE_COPY) {
			ng_spipe_plan_shape(&sp->model, &sp->proto, size, &sh);
			json_object_set_new(by, "chunks", json_integer((json_int_t)sh.n));
			json_object_set_new(by, "first_chunk_bytes", json_integer((json_int_t)sh.c0));
			json_object_set_new(by, "largest_chunk_bytes", json_integer((json_int_t)sh.largest));
			if (sp->proto.mode == NG_SPIPE_SUPER)
				json_object_set_new(by, "q", sp_num(sh.q));
		}
	}
	ng_row_json(row, "predicted_us_by_mode", by);
}
