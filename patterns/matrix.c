/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * matrix: latency and bandwidth between every ordered pair of ranks, the
 * pair-by-pair view that finds the slow link or the slow node (Netgauge's
 * one_one_all, LLNL mpiGraph).
 *
 * For every size and every ordered pair (i, j), i != j, rank i is the client:
 *   latency    a ping-pong of @size bytes, --warmup untimed and --count timed
 *              round trips, a sample being half a round trip (the pingpong
 *              pattern's measurement);
 *   bandwidth  then windows of --bw-window messages of @size bytes from i to j,
 *              each ended by a 1-byte acknowledgement from j, timed by i (the
 *              bw pattern's measurement and counts: without -c/-w, 100 windows
 *              after 10 up to 8 KiB, 20 after 2 above).
 * Each cell of the two matrices is the STATS of its pair's samples.
 *
 * The order of the pairs (--matrix-order):
 *   pair   (default) one ordered pair at a time, client by client: nothing
 *          else on the network, and no other rank busy, during a
 *          measurement; N (N - 1) rounds.  A round's end passes around the
 *          ring of ranks through the module (ng_mx_baton), so the ranks
 *          waiting for their turn wait where the module waits (the tcp
 *          module sleeps), not in a busy barrier of the launcher, there is
 *          no collective step per round, and a rank talks only to its ring
 *          neighbours and the ranks it measures with.
 *   shift  mpiGraph's ring offsets: for k = 1 .. N-1, every rank r measures
 *          towards r + k (mod N).  An offset's N pairs form cycles, in which a
 *          rank is the client of one pair and the server of another; they
 *          run in two rounds (three for a cycle of odd length) of pairs that
 *          share no rank, all pairs of a round at once.  So no rank takes part
 *          in two measurements at a time and no rank receives from two
 *          senders, while the fabric carries up to N/2 pairs at once (what
 *          mpiGraph measures); about 2N rounds, each phase (latency,
 *          bandwidth) after a barrier.  For many ranks, where N (N - 1)
 *          measurements one after the other take too long; ranks that share
 *          a host's cores disturb each other's latency (on 2 cores, 4 local
 *          tcp ranks: 7 us one pair at a time, 13-15 us in shifts).
 * Sampling (--matrix-pairs N): whole ring offsets, all N - 1 (every pair)
 * or k = ceil(N / ranks) drawn with --seed: every rank is the client of k
 * pairs and the server of k, near and far.  Default: every pair up to
 * NG_MX_ALL_MAX ranks, NG_MX_AUTO_OFFSETS offsets above.  Each client keeps
 * the STATS of its k cells, gathered once per size.
 *
 * Outliers (--matrix-outlier F): a cell whose median latency is more than F
 * times the median of all cells' medians, or whose median bandwidth is below
 * that median divided by F: the slow cells only (a fast cell is no fault).
 * Each one is named on stdout after the size's row ("rank 3 -> rank 7:
 * latency 2.4x the median") and kept in the result.
 *
 * The result: one row per size (the distribution over the pairs of each
 * pair's median, the number of outliers) and the block "matrix": every
 * rank's host, address and device, the order, the offsets, and per size the
 * summary by rank (the median of its cells as client and as server) and by
 * node (host: pairs inside it, pairs leaving it), the outliers, and the two
 * matrices of STATS (null on the diagonal and where a pair was not measured)
 * when every pair was measured of up to NG_MX_ALL_MAX ranks, or with
 * --matrix-cells: a file of 1,024 ranks stays small.  With up to 16 ranks
 * the matrices of medians are printed on stdout too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cells.h"
#include "engine/nodes.h"
#include "engine/sampler.h"
#include "engine/session.h"
#include "peer.h"

/* bw's counts: up to 8 KiB, 100 windows after 10; above, 20 after 2. */
#define NG_MX_LARGE        8192
#define NG_MX_COUNT_SMALL  100
#define NG_MX_WARMUP_SMALL 10
#define NG_MX_COUNT_LARGE  20
#define NG_MX_WARMUP_LARGE 2
#define NG_MX_WINDOW_MAX   (1 << 20)
#define NG_MX_ACK          1
#define NG_MX_PRINT_MAX    16 /* ranks up to which the matrices are printed */
#define NG_MX_NAMED_MAX    32 /* outliers named on stdout per size and metric */
#define NG_MX_SHIFT_ROUNDS 3  /* rounds an offset needs at most */
#define NG_MX_ALL_MAX      64 /* ranks up to which every pair is measured and kept by default */
#define NG_MX_AUTO_OFFSETS 2  /* ring offsets measured by default above NG_MX_ALL_MAX ranks */

enum { NG_MX_ORDER_PAIR, NG_MX_ORDER_SHIFT };
static const char *const ng_mx_orders[] = {"pair", "shift"};

/* A rank's identity as the block records it. */
struct ng_mx_id {
	char host[64];
	char addr[64];
	char device[96];
};

/* Everything one run needs: the session's state block (session.h). */
/* matrix's options, and bw's --bw-window it reads. */
struct ng_mx_config {
	int order;        /* --matrix-order */
	double outlier;   /* --matrix-outlier */
	long long window; /* --bw-window */
	long long pairs;  /* --matrix-pairs, 0: the default */
	bool cells;       /* --matrix-cells */
};

struct ng_mx {
	struct ng_mx_config cfg;
	struct ng_run *run;
	int me;
	int n;
	int order;     /* NG_MX_ORDER_* */
	double factor; /* --matrix-outlier */
	size_t window;
	/* the pairs: (i, i + offs[x] mod n) for every rank i and x < k */
	int *offs;   /* [k], ascending */
	int *offidx; /* [n]: x of offset d, -1 when d is not measured */
	size_t k;    /* offsets measured */
	bool every;  /* k = n - 1: every pair */
	bool keep;   /* the matrices are written (every pair of few ranks, or --matrix-cells) */
	/* the schedule: the ordered pairs round after round */
	struct ng_pair *sched; /* [n k] */
	size_t *round_at;      /* [nrounds + 1] round r is sched[round_at[r] .. round_at[r + 1]) */
	size_t nrounds;
	/* buffers: one message each, or (--verify) window + 1 slots */
	struct ng_bufs bufs;
	size_t stride;
	struct ng_req *reqs; /* [2 * window] */
	struct ng_sampler smp;
	double checked;        /* messages this rank verified at the current size */
	struct ng_stats *mine; /* [2 k] the cells of this rank as the client: latency, bandwidth */
	struct ng_stats *all;  /* [2 k n] every rank's, gathered */
	/* the reporter's cells and the run's block */
	struct ng_stats *lat, *bw; /* [n * n] when m->keep, else NULL */
	double *med, *scratch;     /* [n * k] */
	struct ng_nodes nodes;     /* the ranks of each host */
	struct ng_mx_id *ids;      /* [n] */
	double verified;           /* messages verified at the current size, all ranks */
	json_t *sizes;             /* the block's "sizes" (reporter) */
};

static void ng_mx_counts(const struct ng_mx *m, size_t size, size_t *count_p, size_t *warmup_p)
{
	const struct ng_run *run = m->run;
	bool large = size > NG_MX_LARGE;

	*count_p = run->count_given ? run->count : large ? NG_MX_COUNT_LARGE : NG_MX_COUNT_SMALL;
	*warmup_p = run->warmup_given ? run->warmup : large ? NG_MX_WARMUP_LARGE : NG_MX_WARMUP_SMALL;
}

static void *ng_mx_sslot(const struct ng_mx *m, size_t i)
{
	return (char *)m->bufs.send + i * m->stride;
}

static void *ng_mx_rslot(const struct ng_mx *m, size_t i)
{
	return (char *)m->bufs.recv + i * m->stride;
}

/* ---- the schedule ------------------------------------------------------- */

/* The cell of client @i towards offset index @x, latency or bandwidth. */
static const struct ng_stats *ng_mx_cellx(const struct ng_mx *m, int i, size_t x, bool lat)
{
	return &m->all[(size_t)i * 2 * m->k + (lat ? 0 : m->k) + x];
}

static int ng_mx_peer(const struct ng_mx *m, int i, size_t x)
{
	return (i + m->offs[x]) % m->n;
}

/* Ring offsets: each offset's pairs (r, r + d), in order of r, each into the
 * first of the offset's rounds where neither rank is busy yet (a greedy
 * colouring of cycles: at most three rounds); @busy holds 3 n flags, @rnd n
 * round numbers. */
static void ng_mx_sched_shift(struct ng_mx *m, unsigned char *busy, int *rnd)
{
	int n = m->n;
	size_t at = 0;

	m->nrounds = 0;
	for (size_t x = 0; x < m->k; x++) {
		int d = m->offs[x];

		memset(busy, 0, (size_t)NG_MX_SHIFT_ROUNDS * (size_t)n);
		for (int r = 0; r < n; r++) {
			int s = (r + d) % n, t = 0;

			while (t < NG_MX_SHIFT_ROUNDS - 1 && (busy[t * n + r] || busy[t * n + s]))
				t++;
			busy[t * n + r] = busy[t * n + s] = 1;
			rnd[r] = t;
		}
		for (int t = 0; t < NG_MX_SHIFT_ROUNDS; t++) {
			size_t first = at;

			for (int r = 0; r < n; r++)
				if (rnd[r] == t)
					m->sched[at++] = (struct ng_pair){.client = r, .server = (r + d) % n};
			if (at > first)
				m->round_at[++m->nrounds] = at;
		}
	}
}

/* One ordered pair a round, client by client, each client's servers in
 * ascending order. */
static void ng_mx_sched_pair(struct ng_mx *m)
{
	size_t at = 0;

	m->nrounds = 0;
	for (int i = 0; i < m->n; i++)
		for (int j = 0; j < m->n; j++)
			if (i != j && m->offidx[(j - i + m->n) % m->n] >= 0) {
				m->sched[at++] = (struct ng_pair){.client = i, .server = j};
				m->round_at[++m->nrounds] = at;
			}
}

/* The offsets measured: every one, or k of them drawn with --seed (the same
 * on every rank: nothing is exchanged). */
static void ng_mx_offsets(struct ng_mx *m, int *pool)
{
	int n = m->n, k = (int)m->k;
	struct ng_rng rng;

	for (int d = 0; d < n; d++)
		m->offidx[d] = -1;
	for (int d = 1; d < n; d++)
		pool[d - 1] = d;
	if (!m->every) {
		ng_rng_seed(&rng, m->run->seed, NG_RNG_STREAM_MATRIX);
		for (int x = 0; x < k; x++) {
			int y = x + (int)ng_rng_below(&rng, (uint64_t)(n - 1 - x)), v = pool[x];

			pool[x] = pool[y];
			pool[y] = v;
		}
	}
	for (int x = 0; x < k; x++)
		m->offidx[pool[x]] = 1;
	k = 0;
	for (int d = 1; d < n; d++)
		if (m->offidx[d] >= 0) {
			m->offs[k] = d;
			m->offidx[d] = k++;
		}
}

/* This rank's pair in round @r: its peer and role; false when it waits. */
static bool ng_mx_role(const struct ng_mx *m, size_t r, int *peer_p, bool *client_p)
{
	for (size_t i = m->round_at[r]; i < m->round_at[r + 1]; i++) {
		const struct ng_pair *p = &m->sched[i];

		if (p->client == m->me || p->server == m->me) {
			*client_p = p->client == m->me;
			*peer_p = *client_p ? p->server : p->client;
			return true;
		}
	}
	return false;
}

/* ---- one pair's measurements ---------------------------------------------- */

/* The ping-pong: the client times every round trip (half of it a sample). */
static ng_status ng_mx_pingpong(struct ng_mx *m, size_t size, int peer, bool client)
{
	const struct ng_run *run = m->run;
	const struct ng_timer *tm = run->timer;
	struct ng_comm *c = run->comm;
	struct ng_sampler *smp = &m->smp;
	void *sbuf = m->bufs.send, *rbuf = m->bufs.recv;
	bool verify = run->verify;
	ng_status st;

	for (uint64_t it = 0; ng_sampler_more(smp, it); it++) {
		uint64_t t0, t1;

		if (verify)
			ng_verify_fill(sbuf, size, ng_verify_tag(size, m->me, it));
		if (client) {
			t0 = ng_timer_now(tm);
			st = ng_send(c, peer, sbuf, size);
			if (st == NG_OK)
				st = ng_recv(c, peer, rbuf, size);
			t1 = ng_timer_now(tm);
			ng_sampler_add(smp, 0, it, ng_timer_us(tm, t1 - t0) / 2.0);
		} else {
			st = ng_recv(c, peer, rbuf, size);
			if (st == NG_OK)
				st = ng_send(c, peer, sbuf, size);
		}
		if (st != NG_OK)
			return st;
		if (verify) {
			st = ng_verify_check(rbuf, size, ng_verify_tag(size, peer, it), peer);
			if (st != NG_OK)
				return st;
			m->checked += 1.0;
		}
	}
	return NG_OK;
}

/* One window from the client to the server, as the bw pattern's. */
static ng_status ng_mx_window(struct ng_mx *m, size_t size, int peer, bool client)
{
	struct ng_comm *c = m->run->comm;
	size_t w = m->window;
	struct ng_req *rq = m->reqs;
	ng_status st;

	for (size_t i = 0; i < w; i++) {
		st = client ? ng_isend(c, peer, ng_mx_sslot(m, i), size, &rq[i])
		            : ng_irecv(c, peer, ng_mx_rslot(m, i), size, &rq[i]);
		if (st != NG_OK)
			return st;
	}
	st = ng_waitall(c, rq, w);
	if (st != NG_OK)
		return st;
	if (client)
		return ng_recv(c, peer, ng_mx_rslot(m, m->stride ? w : 0), NG_MX_ACK);
	return ng_send(c, peer, ng_mx_sslot(m, m->stride ? w : 0), NG_MX_ACK);
}

/* The stream of windows: the client times each one. */
static ng_status ng_mx_stream(struct ng_mx *m, size_t size, int peer, bool client)
{
	const struct ng_timer *tm = m->run->timer;
	bool verify = m->run->verify;
	ng_status st;

	for (uint64_t it = 0; ng_sampler_more(&m->smp, it); it++) {
		uint64_t t0, t1;

		if (verify && client)
			for (size_t i = 0; i < m->window; i++)
				ng_verify_fill(ng_mx_sslot(m, i), size,
				               ng_verify_tag(size, m->me, it * m->window + i));
		t0 = ng_timer_now(tm);
		st = ng_mx_window(m, size, peer, client);
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			return st;
		if (client)
			ng_sampler_add(&m->smp, 0, it, ng_timer_us(tm, t1 - t0));
		for (size_t i = 0; verify && !client && i < m->window; i++) {
			st = ng_verify_check(ng_mx_rslot(m, i), size,
			                     ng_verify_tag(size, peer, it * m->window + i), peer);
			if (st != NG_OK)
				return st;
			m->checked += 1.0;
		}
	}
	return NG_OK;
}

/* Pair order: round @r starts once the client of round @r - 1 is done (its
 * last message is the server's acknowledgement to it).  It says so to its
 * successor in the ring of ranks, and the word passes around the ring
 * (each rank waits for it from its predecessor, passes it on, then takes
 * part in round @r or waits for the next).  So every rank hears once a
 * round (a wait lasts one pair's measurement and one pass of the ring; the
 * timeout applies), waits where the module waits (tcp sleeps), not in a
 * busy barrier of the launcher, and talks only to its two neighbours and
 * the ranks it measures with (few connections on first use).  @before: the
 * waiting side. */
static ng_status ng_mx_baton(struct ng_mx *m, size_t r, bool before)
{
	struct ng_comm *c = m->run->comm;
	void *rslot = ng_mx_rslot(m, m->stride ? m->window : 0);
	void *sslot = ng_mx_sslot(m, m->stride ? m->window : 0);
	int from, succ = (m->me + 1) % m->n, pred = (m->me + m->n - 1) % m->n;
	ng_status st;

	if (r == 0 || r >= m->nrounds)
		return NG_OK;
	from = m->sched[m->round_at[r - 1]].client;
	if (!before)
		return from == m->me ? ng_send(c, succ, sslot, NG_MX_ACK) : NG_OK;
	if (from == m->me)
		return NG_OK;
	st = ng_recv(c, pred, rslot, NG_MX_ACK);
	return st == NG_OK && succ != from ? ng_send(c, succ, sslot, NG_MX_ACK) : st;
}

/* Round @r of one size: the latency of its pairs, then their bandwidth; the
 * clients keep their cells' STATS (gathered after the last round).  Shift
 * order: every rank takes part, each phase after a barrier; pair order: the
 * pair of the round after the previous one's baton. */
static ng_status ng_mx_round(struct ng_mx *m, size_t size, size_t r)
{
	const struct ng_run *run = m->run;
	bool shift = m->order == NG_MX_ORDER_SHIFT, in, client = false;
	struct ng_sampler *smp = &m->smp;
	size_t count, warmup;
	int peer = -1;
	ng_status st;

	in = ng_mx_role(m, r, &peer, &client);
	st = shift ? ng_sizes_sync(run) : ng_mx_baton(m, r, true);
	ng_sampler_start(smp, run->warmup, run->count);
	if (st == NG_OK && in)
		st = ng_mx_pingpong(m, size, peer, client);
	if (st == NG_OK && in && client)
		ng_sampler_stats(smp, ng_sampler_mine(smp, 0), ng_sampler_count(smp),
		                 &m->mine[m->offidx[(peer - m->me + m->n) % m->n]]);
	if (st == NG_OK && shift)
		st = ng_sizes_sync(run);
	if (st != NG_OK)
		return st;

	ng_mx_counts(m, size, &count, &warmup);
	ng_sampler_start(smp, warmup, count);
	if (in)
		st = ng_mx_stream(m, size, peer, client);
	if (st == NG_OK && in && client)
		ng_sampler_bw(smp, ng_sampler_mine(smp, 0), count, (double)m->window * (double)size,
		              &m->mine[m->k + (size_t)m->offidx[(peer - m->me + m->n) % m->n]]);
	if (st == NG_OK && !shift)
		st = ng_mx_baton(m, r + 1, false);
	return st;
}

/* After the last round of a size: every client's cells and every rank's
 * count of verified messages to the reporter. */
static ng_status ng_mx_gather(struct ng_mx *m)
{
	struct ng_boot *b = m->run->boot;
	size_t n = (size_t)m->n;
	ng_status st;

	st = ng_sizes_sync(m->run);
	if (st == NG_OK)
		st = ng_stats_gather(b, m->mine, 2 * m->k, m->all);
	if (st == NG_OK)
		st = ng_samples_gather(b, &m->checked, 1, m->med);
	if (st != NG_OK)
		return st;
	m->verified = 0.0;
	for (size_t i = 0; i < n; i++)
		m->verified += m->med[i];
	for (size_t i = 0; m->keep && i < n; i++)
		for (size_t x = 0; x < m->k; x++) {
			size_t c = i * n + (size_t)ng_mx_peer(m, (int)i, x);

			m->lat[c] = *ng_mx_cellx(m, (int)i, x, true);
			m->bw[c] = *ng_mx_cellx(m, (int)i, x, false);
		}
	return NG_OK;
}

/* ---- the report --------------------------------------------------------- */

static size_t ng_mx_cell(const struct ng_mx *m, int i, int j)
{
	return (size_t)i * (size_t)m->n + (size_t)j;
}

/* The medians of every measured cell of a metric into m->med, their STATS
 * in *@st_p; their number. */
static size_t ng_mx_medians(struct ng_mx *m, bool lat, struct ng_stats *st_p)
{
	size_t c = 0;

	for (int i = 0; i < m->n; i++)
		for (size_t x = 0; x < m->k; x++)
			m->med[c++] = ng_mx_cellx(m, i, x, lat)->median;
	ng_samples_stats(m->med, c, m->scratch, st_p);
	return c;
}

/* A matrix of STATS as rows of the result (null on the diagonal and where a
 * pair was not measured). */
static json_t *ng_mx_matrix_json(const struct ng_mx *m, const struct ng_stats *cells)
{
	json_t *rows = json_array();

	for (int i = 0; rows && i < m->n; i++) {
		json_t *row = json_array();

		if (!row || json_array_append_new(rows, row) != 0)
			goto err_free;
		for (int j = 0; j < m->n; j++) {
			const struct ng_stats *c = &cells[ng_mx_cell(m, i, j)];
			json_t *v = i == j || !c->n ? json_null() : ng_stats_json(c);

			if (!v || json_array_append_new(row, v) != 0)
				goto err_free;
		}
	}
	return rows;

err_free:
	json_decref(rows);
	return NULL;
}

/* Whether cell (i, offset x) of @metric is an outlier against @median; its
 * ratio. */
static bool ng_mx_outlier(const struct ng_mx *m, bool lat, int i, size_t x, double median, double *ratio_p)
{
	double v = ng_mx_cellx(m, i, x, lat)->median;

	*ratio_p = median > 0.0 ? v / median : NAN;
	if (!(median > 0.0) || !isfinite(v))
		return false;
	return lat ? v > m->factor * median : v < median / m->factor;
}

/* The outliers of both matrices: named on stdout and listed in @arr;
 * returns their number. */
static size_t ng_mx_outliers(const struct ng_mx *m, double lat_med, double bw_med, json_t *arr)
{
	static const char *const keys[2] = {"latency_us", "bandwidth_MBps"};
	static const char *const units[2] = {"us", "MB/s"};
	size_t total = 0;

	for (int k = 0; k < 2; k++) {
		double median = k == 0 ? lat_med : bw_med;
		size_t named = 0;

		for (int i = 0; i < m->n; i++) {
			for (size_t x = 0; x < m->k; x++) {
				double ratio, v = ng_mx_cellx(m, i, x, k == 0)->median;
				int j = ng_mx_peer(m, i, x);
				char vs[32], ms[32];

				if (!ng_mx_outlier(m, k == 0, i, x, median, &ratio))
					continue;
				total++;
				if (arr)
					json_array_append_new(
					    arr, json_pack("{s:i, s:i, s:s, s:f, s:f}", "from", i, "to", j,
					                   "metric", keys[k], "value", v, "ratio", ratio));
				if (named++ == NG_MX_NAMED_MAX) {
					printf("# matrix: ... more %s outliers in the result file\n",
					       k == 0 ? "latency" : "bandwidth");
					continue;
				}
				if (named > NG_MX_NAMED_MAX)
					continue;
				ng_fmt_real(v, vs, sizeof(vs));
				ng_fmt_real(median, ms, sizeof(ms));
				printf("# matrix: rank %d -> rank %d: %.2gx the median %s (%s %s, median %s "
				       "%s)\n",
				       i, j, ratio, k == 0 ? "latency" : "bandwidth", vs, units[k], ms,
				       units[k]);
			}
		}
	}
	return total;
}

/* The matrix of medians on stdout (up to NG_MX_PRINT_MAX ranks). */
static void ng_mx_print(const struct ng_mx *m, const struct ng_stats *cells, const char *what)
{
	char v[32];

	if (m->n > NG_MX_PRINT_MAX || !cells)
		return;
	printf("# matrix: median %s, from the row's rank to the column's\n#%7s", what, "");
	for (int j = 0; j < m->n; j++)
		printf(" %9d", j);
	putchar('\n');
	for (int i = 0; i < m->n; i++) {
		printf("#%7d", i);
		for (int j = 0; j < m->n; j++) {
			if (i == j)
				snprintf(v, sizeof(v), "-");
			else if (!cells[ng_mx_cell(m, i, j)].n)
				snprintf(v, sizeof(v), ".");
			else
				ng_fmt_real(cells[ng_mx_cell(m, i, j)].median, v, sizeof(v));
			printf(" %9s", v);
		}
		putchar('\n');
	}
}

static const char *ng_mx_host(const void *ctx, int rank)
{
	return ((const struct ng_mx *)ctx)->ids[rank].host;
}

/* The summaries by rank and by node of one size into @entry (cells.h). */
static int ng_mx_summaries(struct ng_mx *m, json_t *entry)
{
	size_t nk = (size_t)m->n * m->k;
	struct ng_cells c = {
	    .n = m->n, .k = m->k, .offs = m->offs, .lat = m->med, .bw = m->med + nk, .scratch = m->scratch};

	for (int i = 0; i < m->n; i++)
		for (size_t x = 0; x < m->k; x++) {
			m->med[(size_t)i * m->k + x] = ng_mx_cellx(m, i, x, true)->median;
			m->med[nk + (size_t)i * m->k + x] = ng_mx_cellx(m, i, x, false)->median;
		}
	return json_object_set_new(entry, "by_rank", ng_cells_by_rank(&c)) ||
	       json_object_set_new(entry, "by_node", ng_cells_by_node(&c, &m->nodes, ng_mx_host, m));
}

/* The row of one size, its entry in the block, the table on stdout. */
static ng_status ng_mx_report(struct ng_mx *m, size_t size)
{
	struct ng_run *run = m->run;
	struct ng_stats lat = {0}, bw = {0};
	size_t count, warmup, npairs, nout;
	json_t *entry, *outl;
	struct ng_row *row;
	ng_status st;
	char sz[32];

	if (!ng_results_active(run->results))
		return NG_OK;
	ng_mx_counts(m, size, &count, &warmup);
	npairs = ng_mx_medians(m, true, &lat);
	ng_mx_medians(m, false, &bw);

	row = ng_sampler_row_n(&m->smp, size, run->count);
	ng_row_stats(row, "latency_us", &lat);
	ng_row_stats(row, "bandwidth_MBps", &bw);
	ng_row_int(row, "pairs", (long long)npairs);
	ng_row_int(row, "rounds", (long long)m->nrounds);
	ng_row_int(row, "window", (long long)m->window);
	ng_row_int(row, "bw_count", (long long)count);
	ng_row_int(row, "verified", llround(m->verified));

	outl = json_array();
	entry = json_object();
	if (!outl || !entry)
		goto err_nomem;
	ng_fmt_size(size, sz, sizeof(sz));
	fflush(stdout);
	nout = 0;
	/* the outliers are counted before the row is committed, named after */
	for (int i = 0; i < m->n; i++)
		for (size_t x = 0; x < m->k; x++) {
			double r;

			nout += ng_mx_outlier(m, true, i, x, lat.median, &r);
			nout += ng_mx_outlier(m, false, i, x, bw.median, &r);
		}
	ng_row_int(row, "outliers", (long long)nout);
	st = ng_row_commit(run->results, row);
	if (st != NG_OK)
		goto err_free;

	printf("# matrix: size %s, %d ranks, %zu pairs in %zu rounds (%s%s)\n", sz, m->n, npairs, m->nrounds,
	       ng_mx_orders[m->order], m->every ? "" : ", sampled: --matrix-pairs");
	ng_mx_print(m, m->lat, "latency [us]");
	ng_mx_print(m, m->bw, "bandwidth [MB/s]");
	if (ng_mx_outliers(m, lat.median, bw.median, outl) == 0)
		printf("# matrix: no outlier (latency above %gx the median, bandwidth below 1/%g of it)\n",
		       m->factor, m->factor);
	fflush(stdout);

	if (json_object_set_new(entry, "size", json_integer((json_int_t)size)) ||
	    json_object_set_new(entry, "latency_median_us", json_real(lat.median)) ||
	    json_object_set_new(entry, "bandwidth_median_MBps", json_real(bw.median)) ||
	    json_object_set_new(entry, "pairs", json_integer((json_int_t)npairs)) ||
	    ng_mx_summaries(m, entry) ||
	    (m->keep && (json_object_set_new(entry, "latency_us", ng_mx_matrix_json(m, m->lat)) ||
	                 json_object_set_new(entry, "bandwidth_MBps", ng_mx_matrix_json(m, m->bw)))) ||
	    json_object_set(entry, "outliers", outl) || json_array_append(m->sizes, entry))
		goto err_nomem;
	json_decref(outl);
	json_decref(entry);
	return NG_OK;

err_nomem:
	ng_error("matrix: out of memory building the result");
	st = NG_ERR_NOMEM;
err_free:
	json_decref(outl);
	json_decref(entry);
	return st;
}

/* The block "matrix" (rewritten after every size, so a partial run keeps
 * the sizes measured). */
static ng_status ng_mx_block(struct ng_mx *m)
{
	json_t *blk, *ranks, *offs;

	if (!ng_results_active(m->run->results))
		return NG_OK;
	ranks = json_array();
	for (int i = 0; ranks && i < m->n; i++) {
		const struct ng_mx_id *id = &m->ids[i];

		if (json_array_append_new(ranks,
		                          json_pack("{s:i, s:s, s:s, s:s}", "rank", i, "host", id->host,
		                                    "addr", id->addr, "device", id->device)) != 0) {
			json_decref(ranks);
			ranks = NULL;
		}
	}
	offs = json_array();
	for (size_t x = 0; offs && x < m->k; x++)
		if (json_array_append_new(offs, json_integer(m->offs[x])) != 0) {
			json_decref(offs);
			offs = NULL;
		}
	if (!ranks || !offs) {
		json_decref(ranks);
		json_decref(offs);
		blk = NULL;
	} else {
		blk = json_pack("{s:s, s:I, s:f, s:i, s:b, s:b, s:o, s:o, s:O}", "order",
		                ng_mx_orders[m->order], "window", (json_int_t)m->window, "outlier_factor",
		                m->factor, "rounds", (int)m->nrounds, "sampled", !m->every, "cells", m->keep,
		                "offsets", offs, "ranks", ranks, "sizes", m->sizes);
	}
	if (!blk) {
		ng_error("matrix: out of memory building the result block");
		return NG_ERR_NOMEM;
	}
	return ng_results_block(m->run->results, "matrix", blk);
}

/* ---- setup -------------------------------------------------------------- */

/* Every rank's host, address and device, on every rank. */
static ng_status ng_mx_ids(struct ng_mx *m)
{
	struct ng_mx_id mine = {0};
	ng_status st;

	snprintf(mine.host, sizeof(mine.host), "%.63s", m->run->boot->host);
	snprintf(mine.addr, sizeof(mine.addr), "%.63s", m->run->boot->addr);
	snprintf(mine.device, sizeof(mine.device), "%.95s", m->run->comm->device);
	st = ng_boot_allgather(m->run->boot, &mine, sizeof(mine), m->ids);
	/* Strings of the result: each must end in its field (base/peer.h). */
	for (int i = 0; st == NG_OK && i < m->n; i++) {
		struct ng_mx_id *id = &m->ids[i];

		if (!ng_peer_str(id->host, sizeof(id->host)) || !ng_peer_str(id->addr, sizeof(id->addr)) ||
		    !ng_peer_str(id->device, sizeof(id->device)))
			st =
			    ng_peer_bad("host, address or device name", i, "not terminated within its field");
	}
	/* The nodes: the ranks of one host (nodes.h). */
	if (st == NG_OK)
		st = ng_nodes_build(m->run, 0, &m->nodes);
	return st;
}

/* Reads the options (refused alike on every rank: nothing has been sent). */
static ng_status ng_mx_options(struct ng_mx *m)
{
	long long w = m->cfg.window;

	m->order = m->cfg.order;
	m->factor = m->cfg.outlier;
	if (w < 1 || w > NG_MX_WINDOW_MAX) {
		if (m->me == 0)
			ng_error("matrix: --bw-window must be 1 to %d messages, got %lld", NG_MX_WINDOW_MAX,
			         w);
		return NG_ERR_USAGE;
	}
	if (!(m->factor > 1.0) || !(m->factor <= 1000.0)) {
		if (m->me == 0)
			ng_error("matrix: --matrix-outlier must be above 1 and at most 1000, got %g",
			         m->factor);
		return NG_ERR_USAGE;
	}
	m->window = (size_t)w;
	if (m->cfg.pairs < 0) {
		if (m->me == 0)
			ng_error(
			    "matrix: --matrix-pairs must be 0 (the default) or a number of pairs, got %lld",
			    m->cfg.pairs);
		return NG_ERR_USAGE;
	}
	/* Whole offsets: k pairs per rank as the client. */
	if (m->cfg.pairs == 0)
		m->k = m->n <= NG_MX_ALL_MAX ? (size_t)(m->n - 1) : NG_MX_AUTO_OFFSETS;
	else
		m->k = (size_t)((m->cfg.pairs + m->n - 1) / m->n);
	if (m->k > (size_t)(m->n - 1))
		m->k = (size_t)(m->n - 1);
	m->every = m->k == (size_t)(m->n - 1);
	m->keep = m->cfg.cells || (m->every && m->n <= NG_MX_ALL_MAX);
	return NG_OK;
}

static ng_status ng_mx_setup(struct ng_mx *m)
{
	struct ng_run *run = m->run;
	size_t n = (size_t)m->n, max = ng_sizes_max(run), cap = run->count, count, warmup, nslots;
	struct ng_sampler_spec spec = {.name = "matrix"};
	unsigned char *busy;
	int *rnd;
	ng_status st;
	size_t k;

	st = ng_mx_options(m);
	if (st != NG_OK)
		return st;
	for (size_t i = 0; i < run->nsizes; i++) {
		ng_mx_counts(m, run->sizes[i], &count, &warmup);
		cap = count > cap ? count : cap;
	}
	spec.cap = cap;
	k = m->k;
	/* O(n k) on every rank; the matrices, O(n^2), only where they are kept. */
	m->offs = calloc(k ? k : 1, sizeof(*m->offs));
	m->offidx = calloc(n, sizeof(*m->offidx));
	m->sched = calloc(n * k + 1, sizeof(*m->sched));
	m->round_at = calloc(n * k + 1, sizeof(*m->round_at));
	m->reqs = calloc(m->window, sizeof(*m->reqs));
	m->mine = calloc(2 * k + 1, sizeof(*m->mine));
	m->all = calloc(2 * k * n + 1, sizeof(*m->all));
	m->lat = m->keep ? calloc(n * n, sizeof(*m->lat)) : NULL;
	m->bw = m->keep ? calloc(n * n, sizeof(*m->bw)) : NULL;
	m->med = calloc(2 * n * k + n, sizeof(*m->med));
	m->scratch = calloc(n * k + n, sizeof(*m->scratch));
	m->ids = calloc(n, sizeof(*m->ids));
	busy = calloc(NG_MX_SHIFT_ROUNDS * n, 1);
	rnd = calloc(n, sizeof(*rnd));
	if (!m->offs || !m->offidx || !m->sched || !m->round_at || !m->mine || !m->all || !m->reqs ||
	    (m->keep && (!m->lat || !m->bw)) || !m->med || !m->scratch || !m->ids || !busy || !rnd) {
		free(busy);
		free(rnd);
		ng_error("matrix: out of memory for %d ranks", m->n);
		return NG_ERR_NOMEM;
	}
	ng_mx_offsets(m, rnd);
	if (m->order == NG_MX_ORDER_SHIFT)
		ng_mx_sched_shift(m, busy, rnd);
	else
		ng_mx_sched_pair(m);
	free(busy);
	free(rnd);
	if (ng_results_active(run->results) && !(m->sizes = json_array())) {
		ng_error("matrix: out of memory building the result block");
		return NG_ERR_NOMEM;
	}
	st = ng_sampler_init(&m->smp, run, &spec);
	if (st == NG_OK)
		st = ng_mx_ids(m);
	if (st != NG_OK)
		return st;

	/* One message per buffer (the acknowledgement shares it, as in the bw
	 * pattern), or a slot per message of a window and one for the
	 * acknowledgement. */
	if (run->verify) {
		m->stride = ng_slot_stride(max);
		nslots = m->window + 1;
		if (nslots > SIZE_MAX / m->stride) {
			ng_error("matrix: --verify needs %zu slots of %zu bytes, more than memory holds",
			         nslots, m->stride);
			return NG_ERR_NOMEM;
		}
		return ng_bufs_alloc(run->comm, nslots * m->stride, nslots * m->stride, &m->bufs);
	}
	return ng_bufs_alloc(run->comm, max, max, &m->bufs);
}

/* Frees what ng_mx_setup allocated; safe after a partial setup. */
static void ng_mx_teardown(struct ng_mx *m)
{
	ng_bufs_free(m->run->comm, &m->bufs);
	ng_sampler_free(&m->smp);
	json_decref(m->sizes);
	ng_nodes_free(&m->nodes);
	free(m->ids);
	free(m->scratch);
	free(m->med);
	free(m->bw);
	free(m->lat);
	free(m->all);
	free(m->mine);
	free(m->reqs);
	free(m->round_at);
	free(m->sched);
	free(m->offidx);
	free(m->offs);
}

/* The session's steps (session.h).  Each size: the rounds, then the
 * gather, the row and the block. */
static ng_status ng_mx_session_setup(struct ng_session *s, void *state)
{
	struct ng_mx *m = state;

	m->run = s->run;
	m->me = s->me;
	m->n = s->nranks;
	return ng_mx_setup(m);
}

static ng_status ng_mx_begin(struct ng_session *s, void *state, size_t size)
{
	struct ng_mx *m = state;

	(void)s;
	(void)size;
	m->checked = 0.0;
	return NG_OK;
}

static ng_status ng_mx_measure(struct ng_session *s, void *state, size_t size)
{
	struct ng_mx *m = state;
	ng_status st = NG_OK;

	(void)s;
	for (size_t r = 0; st == NG_OK && r < m->nrounds; r++)
		st = ng_mx_round(m, size, r);
	return st;
}

static ng_status ng_mx_session_report(struct ng_session *s, void *state, size_t size)
{
	struct ng_mx *m = state;
	ng_status st;

	(void)s;
	st = ng_mx_gather(m);
	if (st == NG_OK)
		st = ng_mx_report(m, size);
	if (st == NG_OK)
		st = ng_mx_block(m);
	return st;
}

static void ng_mx_session_teardown(struct ng_session *s, void *state)
{
	(void)s;
	ng_mx_teardown(state);
}

static const struct ng_session_ops ng_mx_session = {
    .state = sizeof(struct ng_mx),
    .config = NG_SESSION_CONFIG(struct ng_mx, cfg),
    .setup = ng_mx_session_setup,
    .begin = ng_mx_begin,
    .measure = ng_mx_measure,
    .report = ng_mx_session_report,
    .teardown = ng_mx_session_teardown,
};

static ng_status ng_mx_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_mx_session);
}

static const struct ng_option ng_mx_options_table[] = {
    {.name = "matrix-order",
     NG_CHOICE_AT(struct ng_mx_config, order),
     .def = "pair",
     .choices = "pair|shift",
     .help =
         "matrix: the pairs in mpiGraph's ring offsets, rounds of pairs that share no rank (shift), or one "
         "pair at a time (pair)"},
    {.name = "matrix-pairs",
     NG_INT_AT(struct ng_mx_config, pairs),
     .def = "0",
     .metavar = "N",
     .help =
         "matrix: measure at least N ordered pairs, whole ring offsets drawn with --seed (0: every pair up "
         "to 64 ranks, 2 offsets above)"},
    {.name = "matrix-cells",
     NG_FLAG_AT(struct ng_mx_config, cells),
     .help = "matrix: keep every measured pair's STATS in the result (the matrices), whatever the ranks"},
    {.name = "matrix-outlier",
     NG_DOUBLE_AT(struct ng_mx_config, outlier),
     .def = "1.5",
     .help = "matrix: a pair is an outlier when its latency is above F times the median of all pairs, or its "
             "bandwidth below the median / F",
     .metavar = "F"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_matrix = {
    .name = "matrix",
    .desc = "latency and bandwidth between every ordered pair, the slow ones named (Netgauge's one_one_all, "
            "mpiGraph)",
    .options = ng_mx_options_table,
    .reads = (const struct ng_option[]){{.name = "bw-window", NG_INT_AT(struct ng_mx_config, window)},
                                        {.name = NULL}},
    .needs = NG_CAP_CHANNEL | NG_CAP_NONBLOCK,
    .min_ranks = 2,
    .max_ranks = 0,
    .default_sizes = "1,256K",
    .run = ng_mx_run,
};
