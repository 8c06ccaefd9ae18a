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
 *
 * mbw: the same pairs, one way, as osu_mbw_mr (multi-pair message rate):
 * the rank of node 0 posts --mbw-window sends to its partner and waits for
 * them, then for a 1-byte acknowledgement; the rank of node 1 posts as many
 * receives, waits, and sends the acknowledgement.  A window's time is the
 * longest any active rank measured; the aggregate message rate is
 * k * window / time and the bandwidth k * window * size / time.  Per pair,
 * the row also has the median of that pair's sender's own windows
 * ("per_pair").  Only receivers check the payload.
 */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
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
	const char *name; /* the pattern: mpbibw, or mbw (one way) */
	bool uni;         /* mbw */
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
		ng_error("%s: out of memory", m->name);
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
	struct ng_sampler_spec spec = {.name = m->name, .cap = count, .tail = 2, .flags = NG_SAMPLER_GATHER};
	long long want = m->cfg.pairs;
	long long win = m->cfg.window;
	ng_status st;

	if (win < 1 || win > 1 << 20 || want < 0) {
		if (m->me == 0)
			ng_error("%s: --%s-window must be 1 to 1048576 and --%s-pairs at least 0", m->name,
			         m->name, m->name);
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
	ng_error("%s: out of memory for %zu samples", m->name, count);
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

/* This rank sends in mbw: it is on node 0. */
static bool ng_mpb_sender(const struct ng_mpb *m)
{
	return m->side[0][m->pair] == m->me;
}

/* One window of mbw: node 0's rank sends, node 1's receives and acknowledges. */
static ng_status ng_mbw_window(struct ng_mpb *m, size_t s)
{
	struct ng_comm *c = m->c;
	size_t w = m->window;
	ng_status st;

	if (ng_mpb_sender(m)) {
		for (size_t i = 0; i < w; i++) {
			st = ng_isend(c, m->partner, m->bufs.send, s, &m->reqs[i]);
			if (st != NG_OK)
				return st;
		}
		st = ng_waitall(c, m->reqs, w);
		return st != NG_OK ? st : ng_recv(c, m->partner, m->bufs.recv, 1);
	}
	for (size_t i = 0; i < w; i++) {
		st = ng_irecv(c, m->partner, m->bufs.recv, s, &m->reqs[i]);
		if (st != NG_OK)
			return st;
	}
	st = ng_waitall(c, m->reqs, w);
	return st != NG_OK ? st : ng_send(c, m->partner, m->bufs.send, 1);
}

/* One window: both directions at once (mbw: one way). */
static ng_status ng_mpb_window(struct ng_mpb *m, size_t s)
{
	struct ng_comm *c = m->c;
	size_t w = m->window;
	ng_status st;

	if (m->uni)
		return ng_mbw_window(m, s);
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
		bool check = it == 0 || run->verify, receives = !(m->uni && ng_mpb_sender(m));
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
		if (check && receives) {
			if (!bad && ng_verify_check(m->bufs.recv, s, want, m->partner) != NG_OK)
				bad = true;
			m->checked++;
		}
	}
	ng_sampler_tail(smp)[0] = bad ? 1.0 : 0.0;
	ng_sampler_tail(smp)[1] = (double)m->checked;
	return NG_OK;
}

/* mbw's "per_pair": each pair's sender's median window, as its message
 * rate and bandwidth. */
static ng_status ng_mbw_per_pair(struct ng_mpb *m, int k, size_t s, size_t count, struct ng_row *row)
{
	json_t *arr = json_array();
	double *t = malloc((count ? count : 1) * sizeof(double));

	if (!arr || !t) {
		json_decref(arr);
		free(t);
		ng_error("mbw: out of memory for the pairs' figures");
		return NG_ERR_NOMEM;
	}
	for (int i = 0; i < k; i++) {
		double med = 0.0;

		memcpy(t, ng_sampler_of(&m->smp, m->side[0][i], 0), count * sizeof(double));
		if (count) {
			gsl_sort(t, 1, count);
			med = gsl_stats_median_from_sorted_data(t, 1, count);
		}
		json_array_append_new(
		    arr, json_pack("{s:i, s:i, s:i, s:f, s:f}", "pair", i, "sender", m->side[0][i],
		                   "receiver", m->side[1][i], "message_rate_per_s",
		                   med > 0.0 ? (double)m->window * 1e6 / med : 0.0, "bandwidth_MBps",
		                   med > 0.0 ? (double)m->window * (double)s / med : 0.0));
	}
	free(t);
	ng_row_json(row, "per_pair", arr);
	return NG_OK;
}

static ng_status ng_mpb_report(struct ng_mpb *m, int k, size_t isize, size_t s)
{
	struct ng_run *run = m->run;
	struct ng_sampler *smp = &m->smp;
	size_t count = ng_sampler_count(smp);
	double msgs = (double)k * (m->uni ? 1.0 : 2.0) * (double)m->window, bytes = msgs * (double)s;
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
	if (m->uni) {
		struct ng_stats mr;

		/* messages per second: a "bandwidth" of msgs x 1e6 "bytes" per us */
		ng_sampler_row_bw(smp, row, "message_rate_per_s", iter, count, msgs * 1e6, &mr);
		m->medians[(size_t)(k - 1) * run->nsizes + isize] = mr.median;
		st = ng_mbw_per_pair(m, k, s, count, row);
		if (st != NG_OK)
			return st;
	}
	ng_row_int(row, "pairs", k);
	/* Pair 0 is active at every k; its receiver checked (rank 0 in
	 * mpbibw, where both sides receive). */
	ng_row_int(row, "verified", (long long)ng_sampler_tail_of(smp, m->uni ? m->side[1][0] : 0)[1]);
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
	if (m->uni)
		json_object_set_new(blk, "ack_bytes", json_integer(1));
	return ng_results_block(m->run->results, m->name, blk);

err_nomem:
	json_decref(blk);
	json_decref(nodes);
	ng_error("%s: out of memory building the result block", m->name);
	return NG_ERR_NOMEM;
}

/* Side by side on stdout: median aggregate bandwidth per size and pair count. */
static void ng_mpb_summary(const struct ng_mpb *m)
{
	const struct ng_run *run = m->run;
	char sz[32];

	if (!ng_results_active(run->results) || m->kmax < 2)
		return;
	if (m->uni)
		printf("# mbw: median aggregate message rate [messages/s] by pairs\n#%9s", "size");
	else
		printf("# mpbibw: median aggregate bidirectional bandwidth [MB/s] by pairs\n#%9s", "size");
	for (int k = 1; k <= m->kmax; k++)
		printf(" %9dp", k);
	putchar('\n');
	for (size_t i = 0; i < run->nsizes; i++) {
		ng_fmt_size(run->sizes[i], sz, sizeof(sz));
		printf("%10s", sz);
		for (int k = 1; k <= m->kmax; k++)
			printf(m->uni ? " %10.0f" : " %10.1f", m->medians[(size_t)(k - 1) * run->nsizes + i]);
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
	m->name = s->pattern->name;
	m->uni = strcmp(m->name, "mbw") == 0;
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

/* alltoall's --ranks-per-node, which both patterns of this file read */
static const struct ng_option ng_mpb_reads[] = {
    {.name = "ranks-per-node", NG_INT_AT(struct ng_mpb_config, per_node)},
    {.name = NULL},
};

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
    .reads = ng_mpb_reads,
    .needs = NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_RELIABLE,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = false,
    .default_sizes = "1-1M",
    .run = ng_mpb_run,
};

static const struct ng_option ng_mbw_options[] = {
    {.name = "mbw-window",
     NG_INT_AT(struct ng_mpb_config, window),
     .def = "64",
     .help = "messages in flight per pair and iteration, one way (osu_mbw_mr's window)",
     .metavar = "N"},
    {.name = "mbw-pairs",
     NG_INT_AT(struct ng_mpb_config, pairs),
     .def = "0",
     .help = "largest number of concurrent pairs (0: as many as the smaller node has ranks)",
     .metavar = "K"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_mbw = {
    .name = "mbw",
    .desc = "multi-pair message rate and bandwidth one way between two nodes, 1..K pairs at once "
            "(osu_mbw_mr)",
    .options = ng_mbw_options,
    .reads = ng_mpb_reads,
    .needs = NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_RELIABLE,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = false,
    .default_sizes = "1-1M",
    .run = ng_mpb_run,
};
