/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpbibw: multi-pair bidirectional bandwidth between two nodes, with 1..K
 * pairs communicating at once (Figs. 2-4 of the multi-core alltoall study:
 * does the network deliver more when several cores of a node drive it?).
 *
 * The two nodes are the first two of patterns/engine/nodes.h (host names, or
 * --ranks-per-node K virtual nodes).  When every rank is on one host and no
 * --ranks-per-node is given, the lower half of the ranks forms one virtual
 * node and the upper half the other.  Pair i joins local index i of both
 * nodes, for i below the smaller node's size (capped by --mpbibw-pairs);
 * other ranks only take part in the barriers.
 *
 * For k = 1..K and each size: a barrier, then the ranks of pairs 0..k-1
 * each run iterations of one window: post --mpbibw-window receives from the
 * partner, post as many sends to it, wait for all (both directions at once,
 * like osu_bibw; the window's messages share one send and one receive
 * buffer).  Each active rank times each window; the sample of an iteration
 * is the longest window any active rank measured, and the aggregate
 * bandwidth is k * 2 * window * size / that time.  With a common clock
 * (--sync auto or force) the barrier is followed by a window start
 * (patterns/engine/gclock.h): the ranks of the k pairs spin until a time agreed on
 * the global clock, one start per measurement (its windows run back to
 * back), and the row records how far apart they started (start_spread_us
 * over the k pairs' ranks, start_late, start_bound_us); --sync off adds
 * nothing.  The first, untimed
 * iteration is always checked; with --verify every iteration is.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gclock.h"
#include "engine/nodes.h"
#include "engine/sampler.h"
#include "engine/session.h"
#include "payload.h"

/* Everything one run needs: the session's state block (session.h). */
/* mpbibw's options, and alltoall's --ranks-per-node it reads. */
struct ng_mpb_config {
	long long window;   /* --mpbibw-window */
	long long pairs;    /* --mpbibw-pairs */
	long long per_node; /* --ranks-per-node */
};

struct ng_mpb {
	struct ng_mpb_config cfg;
	struct ng_run *run;
	struct ng_comm *c;
	int me, P;
	int *side[2]; /* the two nodes' ranks by local index */
	int nside[2];
	const char *membership;
	int kmax; /* pairs */
	int pair; /* this rank's pair, -1 when idle */
	int partner;
	size_t window;
	struct ng_bufs bufs;
	struct ng_req *reqs;   /* [2 * window] */
	struct ng_sampler smp; /* one stream, the window times; the tail: the verify flag */
	struct ng_gclock *gc;  /* the session's: each measurement's window start (patterns/engine/gclock.h) */
	double *medians;       /* [kmax * nsizes] bandwidth, for the summary (reporter) */
	size_t checked;
};

/* The two nodes: the first two of the table, or the two halves of one. */
static ng_status ng_mpb_sides(struct ng_mpb *m)
{
	struct ng_nodes n;
	long long per = m->cfg.per_node;
	ng_status st;

	st = ng_nodes_build(m->run, per, &n);
	if (st != NG_OK)
		return st;
	m->side[0] = calloc((size_t)m->P, sizeof(int));
	m->side[1] = calloc((size_t)m->P, sizeof(int));
	if (!m->side[0] || !m->side[1]) {
		ng_nodes_free(&n);
		ng_error("mpbibw: out of memory");
		return NG_ERR_NOMEM;
	}
	if (n.nnodes == 1) {
		m->membership = "halves";
		m->nside[0] = m->nside[1] = m->P / 2;
		for (int i = 0; i < m->P / 2; i++) {
			m->side[0][i] = i;
			m->side[1][i] = m->P / 2 + i;
		}
	} else {
		m->membership = n.per_node ? "virtual" : "host";
		for (int s = 0; s < 2; s++) {
			m->nside[s] = ng_nodes_size(&n, s);
			for (int i = 0; i < m->nside[s]; i++)
				m->side[s][i] = ng_nodes_rank(&n, s, i);
		}
	}
	ng_nodes_free(&n);
	return NG_OK;
}

static ng_status ng_mpb_setup(struct ng_mpb *m)
{
	struct ng_run *run = m->run;
	size_t count = run->count, max = ng_sizes_max(run);
	struct ng_sampler_spec spec = {.name = "mpbibw", .cap = count, .tail = 1, .flags = NG_SAMPLER_GATHER};
	long long want = m->cfg.pairs;
	long long win = m->cfg.window;
	ng_status st;

	if (win < 1 || win > 1 << 20 || want < 0) {
		if (m->me == 0)
			ng_error(
			    "mpbibw: --mpbibw-window must be 1 to 1048576 and --mpbibw-pairs at least 0");
		return NG_ERR_USAGE;
	}
	m->window = (size_t)win;
	st = ng_mpb_sides(m);
	if (st != NG_OK)
		return st;
	m->kmax = m->nside[0] < m->nside[1] ? m->nside[0] : m->nside[1];
	if (want > 0 && want < m->kmax)
		m->kmax = (int)want;
	m->pair = -1;
	for (int i = 0; i < m->kmax; i++) {
		if (m->side[0][i] == m->me || m->side[1][i] == m->me) {
			m->pair = i;
			m->partner = m->side[0][i] == m->me ? m->side[1][i] : m->side[0][i];
		}
	}

	m->reqs = calloc(2 * m->window, sizeof(*m->reqs));
	if (!m->reqs)
		goto err_nomem;
	st = ng_sampler_init(&m->smp, run, &spec);
	if (st != NG_OK)
		return st;
	if (ng_results_active(run->results)) {
		m->medians = calloc((size_t)m->kmax * run->nsizes + 1, sizeof(*m->medians));
		if (!m->medians)
			goto err_nomem;
	}
	if (m->pair >= 0)
		return ng_bufs_alloc(m->c, max, max, &m->bufs);
	return NG_OK;

err_nomem:
	ng_error("mpbibw: out of memory for %zu samples", count);
	return NG_ERR_NOMEM;
}

static void ng_mpb_teardown(struct ng_mpb *m)
{
	ng_bufs_free(m->c, &m->bufs);
	free(m->side[0]);
	free(m->side[1]);
	free(m->reqs);
	ng_sampler_free(&m->smp);
	free(m->medians);
}

/* One window: both directions at once. */
static ng_status ng_mpb_window(struct ng_mpb *m, size_t s)
{
	struct ng_comm *c = m->c;
	size_t w = m->window;
	ng_status st;

	for (size_t i = 0; i < w; i++) {
		st = ng_irecv(c, m->partner, m->bufs.recv, s, &m->reqs[i]);
		if (st != NG_OK)
			return st;
	}
	for (size_t i = 0; i < w; i++) {
		st = ng_isend(c, m->partner, m->bufs.send, s, &m->reqs[w + i]);
		if (st != NG_OK)
			return st;
	}
	return ng_waitall(c, m->reqs, 2 * w);
}

/* This rank's part of one measurement (pairs 0..k-1 active). */
static ng_status ng_mpb_measure(struct ng_mpb *m, int k, size_t s)
{
	const struct ng_run *run = m->run;
	const struct ng_timer *tm = run->timer;
	struct ng_sampler *smp = &m->smp;
	bool bad = false;
	ng_status st;

	m->checked = 0;
	/* The first iteration, checked, and the warm-up are untimed; ranks
	 * outside the k pairs contribute zeros. */
	ng_sampler_start(smp, 1 + run->warmup, run->count);
	if (m->pair < 0 || m->pair >= k)
		return NG_OK;
	for (uint64_t it = 0; ng_sampler_more(smp, it); it++) {
		bool check = it == 0 || run->verify;
		uint64_t t0, t1, want = ng_verify_tag(s, m->partner, it);

		if (check) {
			unsigned char *r = m->bufs.recv;

			ng_verify_fill(m->bufs.send, s, ng_verify_tag(s, m->me, it));
			ng_verify_fill(r, s, want);
			for (size_t i = 0; i < s; i++)
				r[i] = (unsigned char)~r[i];
		}
		t0 = ng_timer_now(tm);
		st = ng_mpb_window(m, s);
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			return st;
		ng_sampler_add(smp, 0, it, ng_timer_us(tm, t1 - t0));
		if (check) {
			if (!bad && ng_verify_check(m->bufs.recv, s, want, m->partner) != NG_OK)
				bad = true;
			m->checked++;
		}
	}
	ng_sampler_tail(smp)[0] = bad ? 1.0 : 0.0;
	return NG_OK;
}

static ng_status ng_mpb_report(struct ng_mpb *m, int k, size_t isize, size_t s)
{
	struct ng_run *run = m->run;
	struct ng_sampler *smp = &m->smp;
	size_t count = ng_sampler_count(smp);
	double bytes = (double)k * 2.0 * (double)m->window * (double)s;
	const double *iter;
	struct ng_stats bw;
	struct ng_row *row;
	ng_status st;

	st = ng_gclock_end(m->gc);
	if (st == NG_OK)
		st = ng_sampler_gather(smp);
	if (st != NG_OK)
		return st;
	for (int r = 0; r < m->P; r++)
		if (ng_sampler_tail_of(smp, r)[0] != 0.0)
			return NG_ERR_VERIFY; /* reported by the rank that saw it */
	if (!ng_results_active(run->results))
		return NG_OK;

	/* Idle ranks contributed zeros, which never win the maximum. */
	iter = ng_sampler_max(smp, 0);
	row = ng_sampler_row(smp, s);
	ng_sampler_row_bw(smp, row, "bandwidth_MBps", iter, count, bytes, &bw);
	ng_sampler_row_stats(smp, row, "time_us", iter, count, NULL);
	m->medians[(size_t)(k - 1) * run->nsizes + isize] = bw.median;
	ng_row_int(row, "pairs", k);
	/* Rank 0 is in pair 0, active at every k. */
	ng_row_int(row, "verified", (long long)m->checked);
	ng_gclock_row(m->gc, row);
	ng_sampler_row_raw(smp, row, "time_us", iter, count);
	return ng_row_commit(run->results, row);
}

static ng_status ng_mpb_block(struct ng_mpb *m)
{
	json_t *blk, *nodes;

	if (!ng_results_active(m->run->results))
		return NG_OK;
	blk = json_object();
	nodes = json_array();
	if (!blk || !nodes)
		goto err_nomem;
	for (int s = 0; s < 2; s++) {
		json_t *side = json_array();

		if (!side)
			goto err_nomem;
		for (int i = 0; i < m->nside[s]; i++)
			json_array_append_new(side, json_integer(m->side[s][i]));
		json_array_append_new(nodes, side);
	}
	json_object_set_new(blk, "nodes", nodes);
	json_object_set_new(blk, "membership", json_string(m->membership));
	json_object_set_new(blk, "window", json_integer((json_int_t)m->window));
	json_object_set_new(blk, "max_pairs", json_integer(m->kmax));
	return ng_results_block(m->run->results, "mpbibw", blk);

err_nomem:
	json_decref(blk);
	json_decref(nodes);
	ng_error("mpbibw: out of memory building the result block");
	return NG_ERR_NOMEM;
}

/* Side by side on stdout: median aggregate bandwidth per size and pair count. */
static void ng_mpb_summary(const struct ng_mpb *m)
{
	const struct ng_run *run = m->run;
	char sz[32];

	if (!ng_results_active(run->results) || m->kmax < 2)
		return;
	printf("# mpbibw: median aggregate bidirectional bandwidth [MB/s] by pairs\n#%9s", "size");
	for (int k = 1; k <= m->kmax; k++)
		printf(" %9dp", k);
	putchar('\n');
	for (size_t i = 0; i < run->nsizes; i++) {
		ng_fmt_size(run->sizes[i], sz, sizeof(sz));
		printf("%10s", sz);
		for (int k = 1; k <= m->kmax; k++)
			printf(" %10.1f", m->medians[(size_t)(k - 1) * run->nsizes + i]);
		putchar('\n');
	}
	fflush(stdout);
}

/* The session's steps (session.h): the pair counts k = 1..kmax are its
 * variants, each over every size; every measurement starts in a window
 * (NG_SESSION_WINDOWS) that the ranks outside the k pairs sit out. */
static ng_status ng_mpb_session_setup(struct ng_session *s, void *state)
{
	struct ng_mpb *m = state;
	ng_status st;

	m->run = s->run;
	m->c = s->run->comm;
	m->me = s->me;
	m->P = s->nranks;
	m->gc = &s->gc;
	st = ng_mpb_setup(m);
	if (st == NG_OK)
		s->variants = (size_t)m->kmax;
	return st;
}

static ng_status ng_mpb_session_ready(struct ng_session *s, void *state)
{
	(void)s;
	return ng_mpb_block(state);
}

static ng_status ng_mpb_begin(struct ng_session *s, void *state, size_t size)
{
	struct ng_mpb *m = state;
	int k = (int)s->variant + 1;

	(void)size;
	/* with a common clock the k pairs start together (gclock.h) */
	s->gc.idle = m->pair < 0 || m->pair >= k;
	return NG_OK;
}

static ng_status ng_mpb_session_measure(struct ng_session *s, void *state, size_t size)
{
	return ng_mpb_measure(state, (int)s->variant + 1, size);
}

static ng_status ng_mpb_session_report(struct ng_session *s, void *state, size_t size)
{
	return ng_mpb_report(state, (int)s->variant + 1, s->index, size);
}

static void ng_mpb_finish(struct ng_session *s, void *state, bool all)
{
	(void)s;
	if (all)
		ng_mpb_summary(state);
}

static void ng_mpb_session_teardown(struct ng_session *s, void *state)
{
	(void)s;
	ng_mpb_teardown(state);
}

static const struct ng_session_ops ng_mpb_session = {
    .state = sizeof(struct ng_mpb),
    .flags = NG_SESSION_WINDOWS | NG_SESSION_ANNOUNCE,
    .config = NG_SESSION_CONFIG(struct ng_mpb, cfg),
    .setup = ng_mpb_session_setup,
    .ready = ng_mpb_session_ready,
    .begin = ng_mpb_begin,
    .measure = ng_mpb_session_measure,
    .report = ng_mpb_session_report,
    .finish = ng_mpb_finish,
    .teardown = ng_mpb_session_teardown,
};

static ng_status ng_mpb_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_mpb_session);
}

static const struct ng_option ng_mpb_options[] = {
    {.name = "mpbibw-window",
     NG_INT_AT(struct ng_mpb_config, window),
     .def = "64",
     .help = "messages in flight each way per pair and iteration",
     .metavar = "N"},
    {.name = "mpbibw-pairs",
     NG_INT_AT(struct ng_mpb_config, pairs),
     .def = "0",
     .help = "largest number of concurrent pairs (0: as many as the smaller node has ranks)",
     .metavar = "K"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_mpbibw = {
    .name = "mpbibw",
    .desc = "multi-pair bidirectional bandwidth between two nodes, 1..K pairs at once (--ranks-per-node)",
    .options = ng_mpb_options,
    .reads = (const struct ng_option[]){{.name = "ranks-per-node", NG_INT_AT(struct ng_mpb_config, per_node)},
                                        {.name = NULL}},
    .needs = NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_RELIABLE,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = false,
    .default_sizes = "1-1M",
    .run = ng_mpb_run,
};
