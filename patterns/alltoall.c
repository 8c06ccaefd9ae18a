/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall: personalised all-to-all exchange, one algorithm after another.
 *
 * Every rank r holds P blocks of @size bytes in its send buffer, block j
 * meant for rank j; afterwards block j of r's receive buffer is what rank j
 * sent for r (the layout of MPI_Alltoall with a contiguous datatype).  The
 * algorithms (--a2a-algo NAME[,NAME...], or "all"):
 *
 *   bruck     Bruck et al.: local rotation, ceil(log2 P) steps in which the
 *             blocks whose index has bit k set travel to rank r + 2^k, then
 *             the inverse rotation.  Few messages, each block moves several
 *             times: for small sizes.
 *   isend     Irecv-Isend: all P-1 receives posted, then all P-1 sends, then
 *             wait for everything.  Every block moves once, straight between
 *             the user buffers.
 *   pairwise  P-1 steps; step k exchanges with r XOR k when P is a power of
 *             two, else sends to r + k and receives from r - k.
 *   leader    one leader per node (its lowest rank) gathers the node's send
 *             buffers through shared memory, the leaders exchange one
 *             aggregated message per pair of nodes, and each leader scatters
 *             what it received through shared memory.
 *   sa        the paper's two-step scheme (send-side aggregation): step 1,
 *             in shared memory, the rank with local index a collects from
 *             every rank of its node the blocks for local index a of every
 *             other node; step 2, an alltoall among the ranks with the same
 *             local index, one message per node, received straight into the
 *             receive buffer.
 *   rd        receive-side distribution: the inter-node step first (each rank
 *             sends its blocks for node B in one message to the rank of B with
 *             its own local index), then the receivers distribute through
 *             shared memory.
 *   mpi       the module's own alltoall (ng_alltoall, NG_CAP_ALLTOALL; the
 *             mpi module's is MPI_Alltoall), the reference line.
 *
 * Nodes with different rank counts are allowed: local index x of node B is
 * served by local index x mod |A| of node A (sa, rd).  Node membership comes
 * from patterns/engine/nodes.h (host names, or --ranks-per-node K virtual nodes).
 * How the algorithms move the blocks (the order of blocking calls, the
 * node's shared memory) is described in alltoall_algos.c; this file is the
 * driver: selection, buffers, measurement and report.
 *
 * Measurement, per algorithm and size: one untimed iteration whose every
 * block is checked (always), --warmup untimed iterations, then --count timed
 * ones, back to back.  With a common clock (--sync auto or force) the ranks
 * begin each measurement at a time agreed on the global clock
 * (patterns/engine/gclock.h: after the step that agrees to go on, a window start
 * per measurement, not per iteration, whose iterations run back to back)
 * and the row records how far apart they started (start_spread_us,
 * start_late, start_bound_us); --sync off adds nothing.  Each rank times each of its iterations; the row's
 * "time_us" sample of an iteration is the largest time any rank measured
 * (gathered after the size, never during it).  "algbw_MBps" is
 * size * (P - 1) / time.  With --verify every iteration is checked, after
 * its timer stopped: payloads depend on size, sender, receiver and
 * iteration, and the receive buffer is filled with the complement of the
 * expected bytes before, so a block nobody wrote cannot pass.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/registry.h"
#include "engine/alltoall_algos.h"
#include "engine/gclock.h"
#include "engine/session.h"
#include "payload.h"

/* The algorithms' names, as --a2a-algo takes them. */
static const char *const ng_a2a_names[NG_A2A_NALGOS] = {
    "bruck", "isend", "pairwise", "leader", "sa", "rd", "mpi",
};

/* ---- selection --------------------------------------------------------- */

/* Why @algo cannot run here, or NULL. */
static const char *ng_a2a_unavailable(struct ng_a2a *a, int algo)
{
	char offered[128];

	size_t lim = a->c->max_msg;

	switch (algo) {
	case NG_A2A_ISEND:
	case NG_A2A_LEADER:
	case NG_A2A_SA:
	case NG_A2A_RD:
		if (!a->nb)
			return "needs non-blocking operations (isend/irecv), which the module lacks";
		break;
	case NG_A2A_MPI:
		if (a->c->caps & NG_CAP_ALLTOALL)
			break;
		ng_modules_offering(NG_CAP_ALLTOALL, offered, sizeof(offered));
		snprintf(a->native_why, sizeof(a->native_why),
		         "needs %s, which module '%s' does not offer (%s%s)", ng_cap_name(NG_CAP_ALLTOALL),
		         a->c->mod->name, offered[0] ? "modules that do: " : "no module of this build does",
		         offered);
		return a->native_why;
	default:
		break;
	}
	if (lim && a->smax && ng_a2a_max_blocks(a, algo) > lim / a->smax)
		return "its aggregated messages exceed the module's largest message";
	return NULL;
}

/* Appends @algo to the run order unless it is there already. */
static void ng_a2a_add(struct ng_a2a *a, int algo)
{
	for (size_t i = 0; i < a->nalgos; i++)
		if (a->order[i] == algo)
			return;
	a->order[a->nalgos++] = algo;
}

/*
 * Parses --a2a-algo into a->order, in the order given ("all" adds, in its
 * place, every algorithm that can run here and notes why the others
 * cannot).  NG_ERR_USAGE (reported by rank 0) for an unknown name, or a
 * named algorithm that cannot run here.  Every rank decides alike.
 */
static ng_status ng_a2a_select(struct ng_a2a *a)
{
	const char *p = a->cfg.algos;
	bool loud = a->me == 0;

	if (!p)
		p = "all";
	a->nalgos = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		bool all = len == 3 && strncmp(p, "all", 3) == 0;
		int found = -1;

		for (int k = 0; k < NG_A2A_NALGOS; k++)
			if (strlen(ng_a2a_names[k]) == len && strncmp(p, ng_a2a_names[k], len) == 0)
				found = k;
		if (!all && found < 0) {
			if (loud)
				ng_error("--a2a-algo: unknown algorithm '%.*s' (bruck, isend, pairwise, "
				         "leader, sa, rd, mpi, all)",
				         (int)len, p);
			return NG_ERR_USAGE;
		}
		for (int k = all ? 0 : found; k < (all ? NG_A2A_NALGOS : found + 1); k++) {
			const char *why = ng_a2a_unavailable(a, k);

			if (why && !all) {
				if (loud)
					ng_error("--a2a-algo %s: %s", ng_a2a_names[k], why);
				return NG_ERR_USAGE;
			}
			if (why)
				a->skipped[k] = why;
			else
				ng_a2a_add(a, k);
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (a->nalgos == 0) {
		if (loud)
			ng_error("--a2a-algo: no algorithm selected");
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

static bool ng_a2a_selected(const struct ng_a2a *a, int algo)
{
	for (size_t i = 0; i < a->nalgos; i++)
		if (a->order[i] == algo)
			return true;
	return false;
}

/* ---- setup and teardown ------------------------------------------------- */

static ng_status ng_a2a_plans_alloc(struct ng_a2a *a)
{
	size_t P = (size_t)a->P, nn = (size_t)a->nodes.nnodes;
	struct ng_a2a_plan *plans[] = {&a->sa, &a->rd, &a->ld};

	a->pw = calloc(P, sizeof(*a->pw));
	a->bk = calloc(8 * sizeof(int), sizeof(*a->bk));
	a->sa_wpos = calloc(P, sizeof(*a->sa_wpos));
	a->rd_fromd = calloc(P, sizeof(*a->rd_fromd));
	if (!a->pw || !a->bk || !a->sa_wpos || !a->rd_fromd)
		return NG_ERR_NOMEM;
	/* At most one message per rank each way, and per node for leader. */
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		plans[i]->send = calloc(P + nn, sizeof(struct ng_a2a_msg));
		plans[i]->recv = calloc(P + nn, sizeof(struct ng_a2a_msg));
		if (!plans[i]->send || !plans[i]->recv)
			return NG_ERR_NOMEM;
	}
	return NG_OK;
}

static size_t ng_a2a_max(size_t x, size_t y)
{
	return x > y ? x : y;
}

/* This rank's buffers, schedules and sample arrays, once per run (not
 * collective). */
static ng_status ng_a2a_setup(struct ng_a2a *a)
{
	struct ng_run *run = a->run;
	size_t P = (size_t)a->P, count = run->count, s = a->smax, bk_max = 0;
	size_t stage_s = 0, stage_r = 0, nreqs = 2 * P;
	struct ng_a2a_plan *plans[] = {&a->sa, &a->rd, &a->ld};
	const int plan_algo[] = {NG_A2A_SA, NG_A2A_RD, NG_A2A_LEADER};
	struct ng_sampler_spec spec = {
	    .name = "alltoall", .cap = count, .tail = 1, .flags = NG_SAMPLER_GATHER};
	ng_status st;

	st = ng_a2a_plans_alloc(a);
	if (st != NG_OK)
		goto err_nomem;
	ng_a2a_pairwise_plan(a);
	bk_max = ng_a2a_bruck_plan(a);
	ng_a2a_sa_plan(a);
	ng_a2a_rd_plan(a);
	ng_a2a_leader_plan(a);

	if (ng_a2a_selected(a, NG_A2A_BRUCK)) {
		stage_s = stage_r = bk_max;
		st = ng_buf_alloc(a->c, P * s, (void **)&a->tmp);
		if (st != NG_OK)
			return st;
	}
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		if (!ng_a2a_selected(a, plan_algo[i]))
			continue;
		stage_s = ng_a2a_max(stage_s, plans[i]->stage_s);
		stage_r = ng_a2a_max(stage_r, plans[i]->stage_r);
		nreqs = ng_a2a_max(nreqs, plans[i]->nsend + plans[i]->nrecv);
	}
	st = ng_buf_alloc(a->c, P * s, (void **)&a->sbuf);
	if (st == NG_OK)
		st = ng_buf_alloc(a->c, P * s, (void **)&a->rbuf);
	if (st == NG_OK)
		st = ng_buf_alloc(a->c, stage_s * s, (void **)&a->stage_s);
	if (st == NG_OK)
		st = ng_buf_alloc(a->c, stage_r * s, (void **)&a->stage_r);
	if (st != NG_OK)
		return st;

	a->nreqs = nreqs;
	a->reqs = calloc(nreqs, sizeof(*a->reqs));
	if (!a->reqs)
		goto err_nomem;
	st = ng_sampler_init(&a->smp, run, &spec);
	if (st != NG_OK)
		return st;
	if (ng_results_active(run->results)) {
		a->medians = calloc(NG_A2A_NALGOS * (run->nsizes + 1), sizeof(*a->medians));
		if (!a->medians)
			goto err_nomem;
	}
	return NG_OK;

err_nomem:
	ng_error("alltoall: out of memory setting up %d ranks", a->P);
	return NG_ERR_NOMEM;
}

/* Collective: the node segments, once every rank has set up its own part. */
static ng_status ng_a2a_setup_shared(struct ng_a2a *a)
{
	ng_status st;

	a->shm_g = ng_a2a_selected(a, NG_A2A_SA) || ng_a2a_selected(a, NG_A2A_LEADER);
	a->shm_d = ng_a2a_selected(a, NG_A2A_RD) || ng_a2a_selected(a, NG_A2A_LEADER);
	if (a->shm_g || a->shm_d) {
		st = ng_a2a_shm_setup(a);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* Frees what ng_a2a_setup made; safe after a partial setup. */
static void ng_a2a_teardown(struct ng_a2a *a)
{
	struct ng_a2a_plan *plans[] = {&a->sa, &a->rd, &a->ld};

	ng_a2a_shm_unmap(&a->shm);
	ng_free(a->c, a->sbuf);
	ng_free(a->c, a->rbuf);
	ng_free(a->c, a->tmp);
	ng_free(a->c, a->stage_s);
	ng_free(a->c, a->stage_r);
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		free(plans[i]->send);
		free(plans[i]->recv);
	}
	free(a->pw);
	free(a->bk);
	free(a->sa_wpos);
	free(a->rd_fromd);
	free(a->reqs);
	ng_sampler_free(&a->smp);
	free(a->medians);
	ng_nodes_free(&a->nodes);
}

/* ---- measurement ------------------------------------------------------- */

/* Payload of the block rank @from sends rank @to in iteration @it. */
static uint64_t ng_a2a_tag(const struct ng_a2a *a, size_t s, int from, int to, uint64_t it)
{
	return ng_verify_tag(s, from, it * (uint64_t)a->P + (uint64_t)to);
}

/* Before a checked iteration: the send payloads, and the complement of
 * the expected bytes in the receive buffer. */
static void ng_a2a_fill(struct ng_a2a *a, size_t s, uint64_t it)
{
	for (int j = 0; j < a->P; j++) {
		unsigned char *r = ng_a2a_blk(a->rbuf, (size_t)j, s);

		ng_verify_fill(ng_a2a_blk(a->sbuf, (size_t)j, s), s, ng_a2a_tag(a, s, a->me, j, it));
		ng_verify_fill(r, s, ng_a2a_tag(a, s, j, a->me, it));
		for (size_t i = 0; i < s; i++)
			r[i] = (unsigned char)~r[i];
	}
}

/* After a checked iteration: every block; reports the first bad one. */
static bool ng_a2a_check(const struct ng_a2a *a, int algo, size_t s, uint64_t it)
{
	for (int j = 0; j < a->P; j++) {
		const unsigned char *r = ng_a2a_blk(a->rbuf, (size_t)j, s);
		uint64_t tag = ng_a2a_tag(a, s, j, a->me, it);
		size_t off;

		if (ng_payload_check(r, s, tag, &off))
			continue;
		ng_error("alltoall %s: verify: size %zu, iteration %" PRIu64
		         ": block from rank %d, byte %zu is 0x%02x, expected 0x%02x",
		         ng_a2a_names[algo], s, it, j, off, r[off], ng_payload_byte(tag, off));
		return false;
	}
	return true;
}

/*
 * One algorithm at one size on this rank: the checked iteration, the
 * warm-up, the timed iterations.  Leaves the times in the sampler's stream
 * and the verify outcome in its tail (1: a block was wrong).
 */
static ng_status ng_a2a_measure(struct ng_a2a *a, int algo, size_t s)
{
	const struct ng_run *run = a->run;
	const struct ng_timer *tm = run->timer;
	struct ng_sampler *smp = &a->smp;
	ng_status (*fn)(struct ng_a2a *, size_t) = ng_a2a_fns[algo];
	bool bad = false;
	ng_status st;

	a->checked = 0;
	ng_sampler_start(smp, 1 + run->warmup, run->count);
	for (uint64_t it = 0; ng_sampler_more(smp, it); it++) {
		bool check = it == 0 || run->verify;
		uint64_t t0, t1;

		if (check)
			ng_a2a_fill(a, s, it);
		t0 = ng_timer_now(tm);
		st = fn(a, s);
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			return st;
		ng_sampler_add(smp, 0, it, ng_timer_us(tm, t1 - t0));
		if (check) {
			/* Report the first wrong block only; finish the size so
			 * every rank reaches the gather. */
			if (!bad && !ng_a2a_check(a, algo, s, it))
				bad = true;
			a->checked++;
		}
	}
	ng_sampler_tail(smp)[0] = bad ? 1.0 : 0.0;
	return NG_OK;
}

/* Gathers one measurement to the reporter and commits its row; @gc: the
 * session's windows. */
static ng_status ng_a2a_report(struct ng_a2a *a, struct ng_gclock *gc, int algo, size_t isize, size_t s)
{
	struct ng_run *run = a->run;
	struct ng_sampler *smp = &a->smp;
	size_t count = ng_sampler_count(smp);
	const double *iter;
	struct ng_stats t;
	struct ng_row *row;
	ng_status st;

	st = ng_gclock_end(gc);
	if (st == NG_OK)
		st = ng_sampler_gather(smp);
	if (st != NG_OK)
		return st;
	for (int r = 0; r < a->P; r++)
		if (ng_sampler_tail_of(smp, r)[0] != 0.0)
			return NG_ERR_VERIFY; /* reported by the rank that saw it */
	if (!ng_results_active(run->results))
		return NG_OK;

	/* An iteration takes as long as its slowest rank. */
	iter = ng_sampler_max(smp, 0);
	row = ng_sampler_row(smp, s);
	ng_row_json(row, "algorithm", json_string(ng_a2a_names[algo]));
	ng_sampler_row_stats(smp, row, "time_us", iter, count, &t);
	ng_sampler_row_bw(smp, row, "algbw_MBps", iter, count, (double)s * (double)(a->P - 1), NULL);
	a->medians[(size_t)algo * run->nsizes + isize] = t.median;
	ng_row_int(row, "verified", (long long)a->checked);
	ng_gclock_row(gc, row);
	ng_sampler_row_raw(smp, row, "time_us", iter, count);
	return ng_row_commit(run->results, row);
}

/* The top-level "alltoall" block. */
static ng_status ng_a2a_block(struct ng_a2a *a)
{
	const struct ng_nodes *n = &a->nodes;
	json_t *blk, *algos, *sizes, *skipped;

	if (!ng_results_active(a->run->results))
		return NG_OK;
	blk = json_object();
	algos = json_array();
	sizes = json_array();
	skipped = json_object();
	if (!blk || !algos || !sizes || !skipped)
		goto err_nomem;
	for (size_t i = 0; i < a->nalgos; i++)
		json_array_append_new(algos, json_string(ng_a2a_names[a->order[i]]));
	for (int k = 0; k < n->nnodes; k++)
		json_array_append_new(sizes, json_integer(ng_nodes_size(n, k)));
	for (int k = 0; k < NG_A2A_NALGOS; k++)
		if (a->skipped[k])
			json_object_set_new(skipped, ng_a2a_names[k], json_string(a->skipped[k]));
	json_object_set_new(blk, "algorithms", algos);
	json_object_set_new(blk, "ranks_per_node",
	                    json_integer(n->per_node ? n->per_node : ng_nodes_max_size(n)));
	json_object_set_new(blk, "nodes", json_integer(n->nnodes));
	json_object_set_new(blk, "membership", json_string(n->per_node ? "virtual" : "host"));
	json_object_set_new(blk, "node_sizes", sizes);
	json_object_set_new(blk, "skipped", skipped);
	json_object_set_new(blk, "blocking_steps", json_boolean(!a->nb_steps));
	return ng_results_block(a->run->results, "alltoall", blk);

err_nomem:
	json_decref(blk);
	json_decref(algos);
	json_decref(sizes);
	json_decref(skipped);
	ng_error("alltoall: out of memory building the result block");
	return NG_ERR_NOMEM;
}

/* Side by side on stdout, after the rows: median time per size and algorithm. */
static void ng_a2a_summary(const struct ng_a2a *a, size_t nsizes_done)
{
	const struct ng_run *run = a->run;
	int best_algo;
	char sz[32];

	if (!ng_results_active(run->results))
		return;
	/* The algorithms "all" left out, and why (also in the alltoall block). */
	for (int k = 0; k < NG_A2A_NALGOS; k++)
		if (a->skipped[k])
			printf("# alltoall %s: skipped: %s\n", ng_a2a_names[k], a->skipped[k]);
	if (nsizes_done == 0 || a->nalgos < 2) {
		fflush(stdout);
		return;
	}
	printf("# alltoall: median time per alltoall [us], %d ranks on %d node%s\n", a->P, a->nodes.nnodes,
	       a->nodes.nnodes == 1 ? "" : "s");
	printf("#%9s", "size");
	for (size_t i = 0; i < a->nalgos; i++)
		printf(" %10s", ng_a2a_names[a->order[i]]);
	printf(" %10s\n", "best");
	for (size_t k = 0; k < nsizes_done; k++) {
		double best = 0.0;

		best_algo = -1;
		ng_fmt_size(run->sizes[k], sz, sizeof(sz));
		printf("%10s", sz);
		for (size_t i = 0; i < a->nalgos; i++) {
			int algo = a->order[i];
			double m = a->medians[(size_t)algo * run->nsizes + k];

			printf(" %10.2f", m);
			if (best_algo < 0 || m < best) {
				best = m;
				best_algo = algo;
			}
		}
		printf(" %10s\n", ng_a2a_names[best_algo]);
	}
	fflush(stdout);
}

/* ---- the session's steps (session.h) ------------------------------------ */

/* The algorithms are the session's variants, each over every size; every
 * measurement starts in a window (NG_SESSION_WINDOWS).  Setup: the node
 * table, the selection, this rank's part, then the agreement and the shared
 * part. */
static ng_status ng_a2a_session_setup(struct ng_session *s, void *state)
{
	struct ng_a2a *a = state;
	struct ng_run *run = s->run;
	ng_status st;

	a->run = run;
	a->c = run->comm;
	a->me = s->me;
	a->P = s->nranks;
	a->nb = (run->comm->caps & NG_CAP_NONBLOCK) != 0;
	a->nb_steps = a->nb && !a->cfg.blocking;
	a->smax = ng_sizes_max(run);
	st = ng_nodes_build(run, a->cfg.per_node, &a->nodes);
	if (st != NG_OK)
		return st;
	a->node = a->nodes.node_of[a->me];
	a->local = a->nodes.local_of[a->me];
	a->ln = ng_nodes_size(&a->nodes, a->node);

	st = ng_a2a_select(a);
	if (st != NG_OK)
		return st;
	s->variants = a->nalgos;
	st = ng_a2a_setup(a);
	/* Local failures differ between ranks: agree before the collective
	 * part, so that no rank waits in it for one that gave up. */
	if (ng_a2a_agree(a, st != NG_OK) != NG_OK && st == NG_OK)
		st = NG_ERR_SYS;
	if (st == NG_OK)
		st = ng_a2a_setup_shared(a);
	return st;
}

static ng_status ng_a2a_session_ready(struct ng_session *s, void *state)
{
	(void)s;
	return ng_a2a_block(state);
}

static ng_status ng_a2a_session_measure(struct ng_session *s, void *state, size_t size)
{
	struct ng_a2a *a = state;

	return ng_a2a_measure(a, a->order[s->variant], size);
}

static ng_status ng_a2a_session_report(struct ng_session *s, void *state, size_t size)
{
	struct ng_a2a *a = state;

	return ng_a2a_report(a, &s->gc, a->order[s->variant], s->index, size);
}

/* The summary, after the rows; after an error only the skipped algorithms. */
static void ng_a2a_finish(struct ng_session *s, void *state, bool all)
{
	ng_a2a_summary(state, all ? s->run->nsizes : 0);
}

static void ng_a2a_session_teardown(struct ng_session *s, void *state)
{
	(void)s;
	ng_a2a_teardown(state);
}

static const struct ng_session_ops ng_a2a_session = {
    .state = sizeof(struct ng_a2a),
    .flags = NG_SESSION_WINDOWS | NG_SESSION_ANNOUNCE,
    .config = NG_SESSION_CONFIG(struct ng_a2a, cfg),
    .setup = ng_a2a_session_setup,
    .ready = ng_a2a_session_ready,
    .measure = ng_a2a_session_measure,
    .report = ng_a2a_session_report,
    .finish = ng_a2a_finish,
    .teardown = ng_a2a_session_teardown,
};

static ng_status ng_a2a_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_a2a_session);
}

static const struct ng_option ng_a2a_options[] = {
    {.name = "a2a-algo",
     NG_STRING_AT(struct ng_a2a_config, algos),
     .def = "all",
     .help =
         "alltoall algorithms, comma-separated: bruck, isend, pairwise, leader, sa, rd, mpi (the module's "
         "own alltoall, MPI_Alltoall with -x mpi), or all",
     .metavar = "NAME[,NAME...]",
     .list = true},
    {.name = "a2a-blocking",
     NG_FLAG_AT(struct ng_a2a_config, blocking),
     .help = "alltoall: bruck and pairwise use blocking send/recv even where isend/irecv exist"},
    {.name = "ranks-per-node",
     NG_INT_AT(struct ng_a2a_config, per_node),
     .def = "0",
     .help = "alltoall, mpbibw: group K consecutive ranks into a virtual node (0: by host name)",
     .metavar = "K"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_alltoall = {
    .by_time = true,
    .name = "alltoall",
    .desc =
        "personalised all-to-all: bruck, isend, pairwise, leader, sa, rd and the module's own (MPI_Alltoall) "
        "side by side",
    .options = ng_a2a_options,
    .needs = NG_CAP_CHANNEL | NG_CAP_RELIABLE,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = false,
    .default_sizes = "8-64K",
    .run = ng_a2a_run,
};
