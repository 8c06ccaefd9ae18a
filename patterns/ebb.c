/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ebb: effective bisection bandwidth, Netgauge's ebb pattern (Hoefler,
 * Schneider, Lumsdaine, "Multistage switches are not crossbars", 2008).
 *
 * --ebb-rounds N random bisections, seeded with --seed: in each, a
 * Fisher-Yates shuffle of the ranks splits them into two halves (the first
 * and the last n/2 of the permutation) and pairs the i-th rank of the first
 * half, the client (the sender), with the i-th of the second, the server.
 * Every rank derives the same bisections from the seed; nothing is exchanged.
 *
 * A round: a barrier, then every pair streams at once as the bw pattern
 * does: the client posts --bw-window W isends of --ebb-size bytes and the
 * server W irecvs, and the server's 1-byte acknowledgement ends the window;
 * window after window.  A round is timed, not counted: the windows that
 * start before --ebb-time (on the server's clock, since the barrier) are
 * timed, the pair then streams filler windows until twice that, and stops;
 * the acknowledgement byte carries the server's verdict, so both sides
 * agree.  So every pair is measured while all the others still stream: a
 * fast pair never leaves a shared link to a slow one during the slow one's
 * measurement (with a fixed number of bytes per pair it would, and the slow
 * pair's bandwidth and a shared link's sum would be overstated).  A sample
 * is one pair in one round: the bytes of its timed windows over the time
 * from the round's start to the end of the last of them (MB/s, 10^6
 * bytes), timed by the client.  -c and -w do not apply (refused).
 *
 * Result: one row (size: --ebb-size) with the STATS of the bandwidths of
 * every pair and round (median, percentiles, --histogram) and of their
 * times, and the effective bisection bandwidth as Netgauge defines it: the
 * mean bandwidth over all pairs and rounds.  Its 95% interval is Student's
 * over the rounds' means: the pairs of one round share the network, so the
 * rounds, not the pairs, are the independent draws.  The block "ebb" lists
 * every round's pairs with their bandwidths (the pattern cannot know the
 * topology: a reader classifies the pairs by the ranks' hosts or addresses)
 * and the bandwidths' histogram, eight bins per octave, for the figure.
 *
 * --verify: every message of a window gets a slot of its own, with a
 * payload that depends on size, sender, round and message, and the server
 * checks every byte after the window (a --verify run checks; it does not
 * measure).
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sampler.h"
#include "engine/session.h"

#define NG_EBB_WINDOW_MAX (1 << 20)
#define NG_EBB_ROUNDS_MAX 1000000
#define NG_EBB_ACK        1
/* The bisections' own sequence of --seed (common.h's streams are 1 and 2). */
#define NG_EBB_STREAM 26
/* The figure's histogram: analysis/hist.h's buckets merged, 8 per octave. */
#define NG_EBB_MERGE (NG_HIST_SUB / 8)

/* After the samples, what each rank contributes to the gathering. */
enum { NG_EBB_MSGS, NG_EBB_BYTES, NG_EBB_CHECKED, NG_EBB_TAIL };

/* The server's acknowledgement byte: what the window it ends was. */
enum { NG_EBB_TIMED = 't', NG_EBB_FILL = 'f', NG_EBB_STOP = 's' };

/* ebb's options, and bw's --bw-window it reads. */
struct ng_ebb_config {
	long long rounds; /* --ebb-rounds */
	size_t size;      /* --ebb-size */
	double time_s;    /* --ebb-time */
	long long window; /* --bw-window */
};

/* Everything one run needs: the session's state block (session.h). */
struct ng_ebb {
	struct ng_ebb_config cfg;
	struct ng_run *run;
	int me;
	int nranks;
	size_t npairs;
	size_t rounds;
	size_t size;
	size_t window;
	double time_s;         /* --ebb-time: the timed part of a round */
	struct ng_pair *pairs; /* [rounds * npairs]: round r's pairs from r * npairs */
	size_t *sizes;         /* [rounds] the session's sizes: a round is a measurement at --ebb-size */
	int peer;              /* this rank's partner in the current round */
	bool client;           /* ... and whether it sends */
	struct ng_bufs bufs;   /* one message each, or (--verify) window + 1 slots */
	size_t stride;         /* between slots; 0 without --verify */
	void *ack_send, *ack_recv;
	struct ng_req *reqs; /* [window] */
	/* two streams, per round: the client's time of its timed windows (us)
	 * and their bytes, 0 on the server; the tail: the counters */
	struct ng_sampler smp;
	double msgs, bytes, checked; /* received and verified by this rank */
};

/* The bisections: round r's pairs are the r-th shuffle's halves, paired in
 * order (client from the first half).  Depends only on (seed, nranks). */
static void ng_ebb_bisect(uint64_t seed, int nranks, size_t rounds, struct ng_pair *pairs, int *perm)
{
	size_t n = (size_t)nranks, half = n / 2;
	struct ng_rng rng;

	ng_rng_seed(&rng, seed, NG_EBB_STREAM);
	for (size_t r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++)
			perm[i] = (int)i;
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = (size_t)ng_rng_below(&rng, i + 1);
			int t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (size_t i = 0; i < half; i++)
			pairs[r * half + i] = (struct ng_pair){.client = perm[i], .server = perm[half + i]};
	}
}

static void *ng_ebb_sslot(const struct ng_ebb *e, size_t i)
{
	return (char *)e->bufs.send + i * e->stride;
}

static void *ng_ebb_rslot(const struct ng_ebb *e, size_t i)
{
	return (char *)e->bufs.recv + i * e->stride;
}

/* The payload of message @i of window @it of round @r sent by @sender. */
static uint64_t ng_ebb_tag(const struct ng_ebb *e, int sender, size_t r, size_t it, size_t i)
{
	return ng_verify_tag(e->size, sender, (((uint64_t)r << 32) + it) * e->window + i);
}

/* One window: everything between two of the client's timer reads.  The
 * server's acknowledgement carries its verdict on what comes next
 * (NG_EBB_TIMED, NG_EBB_FILL or NG_EBB_STOP), which @ack_p returns on the
 * client and gives on the server. */
static ng_status ng_ebb_window(struct ng_ebb *e, int peer, bool client, unsigned char *ack_p)
{
	struct ng_comm *c = e->run->comm;
	ng_status st;

	for (size_t i = 0; i < e->window; i++) {
		st = client ? ng_isend(c, peer, ng_ebb_sslot(e, i), e->size, &e->reqs[i])
		            : ng_irecv(c, peer, ng_ebb_rslot(e, i), e->size, &e->reqs[i]);
		if (st != NG_OK)
			return st;
	}
	st = ng_waitall(c, e->reqs, e->window);
	if (st != NG_OK)
		return st;
	if (client) {
		st = ng_recv(c, peer, e->ack_recv, NG_EBB_ACK);
		*ack_p = *(const unsigned char *)e->ack_recv;
		return st;
	}
	return ng_send(c, peer, e->ack_send, NG_EBB_ACK);
}

/* The server's verdict after window @it of a round that started at @t0:
 * the first window after the warm-up is timed whatever its length, then
 * windows are timed until --ebb-time, filler until twice that, and then
 * the pair stops. */
static unsigned char ng_ebb_verdict(const struct ng_ebb *e, size_t it, uint64_t t0)
{
	double s = ng_timer_us(e->run->timer, ng_timer_now(e->run->timer) - t0) * 1e-6;

	if (it == 0 || s < e->time_s)
		return NG_EBB_TIMED;
	return s < 2.0 * e->time_s ? NG_EBB_FILL : NG_EBB_STOP;
}

/* This rank's part of round @r, once every rank is there (the session's
 * ng_sizes_sync, a barrier): its pair (e->peer, e->client) streams windows until the
 * server says stop; the client times the windows from the end of the
 * warm-up to the last one the server found inside --ebb-time. */
static ng_status ng_ebb_round(struct ng_ebb *e, size_t r)
{
	const struct ng_timer *tm = e->run->timer;
	bool verify = e->run->verify, client = e->client;
	unsigned char ack = NG_EBB_TIMED;
	uint64_t t0, to = 0;
	double bytes = 0.0;
	int peer = e->peer;
	ng_status st;

	t0 = ng_timer_now(tm);
	for (size_t it = 0; ack != NG_EBB_STOP; it++) {
		uint64_t t1;

		for (size_t i = 0; verify && client && i < e->window; i++)
			ng_verify_fill(ng_ebb_sslot(e, i), e->size, ng_ebb_tag(e, e->me, r, it, i));
		if (!client)
			*(unsigned char *)e->ack_send = ack = ng_ebb_verdict(e, it, t0);
		st = ng_ebb_window(e, peer, client, &ack);
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			return st;
		if (ack == NG_EBB_TIMED) {
			to = t1;
			bytes += (double)e->window * (double)e->size;
		}
		if (client)
			continue;
		e->msgs += (double)e->window;
		e->bytes += (double)e->window * (double)e->size;
		for (size_t i = 0; verify && i < e->window; i++) {
			st =
			    ng_verify_check(ng_ebb_rslot(e, i), e->size, ng_ebb_tag(e, peer, r, it, i), peer);
			if (st != NG_OK)
				return st;
			e->checked += 1.0;
		}
	}
	ng_sampler_add(&e->smp, 0, r, client ? ng_timer_us(tm, to - t0) : 0.0);
	ng_sampler_add(&e->smp, 1, r, client ? bytes : 0.0);
	return NG_OK;
}

/* The effective bisection bandwidth: the mean of @bw[0..rounds * npairs),
 * with Student's 95% interval over the rounds' means. */
static json_t *ng_ebb_param(const struct ng_ebb *e, const double *bw)
{
	size_t R = e->rounds, P = e->npairs;
	double sum = 0.0, ss = 0.0, mean, sd, h;

	for (size_t r = 0; r < R; r++) {
		double m = 0.0;

		for (size_t i = 0; i < P; i++)
			m += bw[r * P + i];
		sum += m / (double)P;
	}
	mean = sum / (double)R;
	if (R < 2)
		return json_pack("{s:f, s:s}", "value", mean, "flag", "one round: no interval");
	for (size_t r = 0; r < R; r++) {
		double m = 0.0;

		for (size_t i = 0; i < P; i++)
			m += bw[r * P + i];
		m = m / (double)P - mean;
		ss += m * m;
	}
	sd = sqrt(ss / (double)(R - 1));
	h = gsl_cdf_tdist_Pinv(0.975, (double)(R - 1)) * sd / sqrt((double)R);
	return json_pack("{s:f, s:[f, f], s:s}", "value", mean, "ci95", mean - h, mean + h, "note",
	                 "mean over pairs and rounds; Student's t over the rounds' means");
}

/* The figure's histogram: the sampler's histogram (of the bandwidths, the
 * last STATS it computed) merged into eight bins per octave. */
static json_t *ng_ebb_hist_json(const struct ng_sampler *s)
{
	const struct ng_hist *h = &s->hist;
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < NG_HIST_BUCKETS; i += NG_EBB_MERGE) {
		uint64_t n = 0;
		double lo, hi, x;

		for (size_t k = i; k < i + NG_EBB_MERGE; k++)
			n += h->counts[k];
		if (!n)
			continue;
		ng_hist_bounds(i, &lo, &x);
		ng_hist_bounds(i + NG_EBB_MERGE - 1, &x, &hi);
		if (json_array_append_new(arr, json_pack("{s:f, s:f, s:I}", "lo_MBps", lo, "hi_MBps", hi,
		                                         "count", (json_int_t)n)) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	if (arr && h->nonpos)
		json_array_insert_new(arr, 0,
		                      json_pack("{s:f, s:f, s:I}", "lo_MBps", 0.0, "hi_MBps", 0.0, "count",
		                                (json_int_t)h->nonpos));
	return arr;
}

/* Every round's pairs with their bandwidths and sum; each round's pairs
 * kept as text by the results (a tree per pair would hold rounds x pairs
 * of them on rank 0: results.h).  NULL on out-of-memory. */
static json_t *ng_ebb_rounds_json(const struct ng_ebb *e, struct ng_results *res, const double *bw)
{
	json_t *arr = json_array();

	for (size_t r = 0; arr && r < e->rounds; r++) {
		struct ng_results_text pairs = {0};
		json_t *o = NULL;
		double sum = 0.0;
		bool ok = true;

		for (size_t i = 0; ok && i < e->npairs; i++) {
			const struct ng_pair *p = &e->pairs[r * e->npairs + i];

			sum += bw[r * e->npairs + i];
			ok = ng_results_text_add(&pairs, json_pack("{s:i, s:i, s:f}", "client", p->client,
			                                           "server", p->server, "bandwidth_MBps",
			                                           bw[r * e->npairs + i])) == NG_OK;
		}
		if (ok)
			o = json_pack("{s:I, s:o, s:f}", "round", (json_int_t)r, "pairs",
			              ng_results_text_value(res, &pairs), "sum_MBps", sum);
		ng_results_text_free(&pairs);
		if (!o || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* Gathers the samples and counters; the reporter writes the row and the
 * block. */
static ng_status ng_ebb_report(struct ng_ebb *e)
{
	struct ng_run *run = e->run;
	struct ng_sampler *smp = &e->smp;
	size_t n = e->rounds * e->npairs;
	double msgs = 0.0, bytes = 0.0, checked = 0.0;
	double *tail = ng_sampler_tail(smp), *us, *bw;
	json_t *hist, *rounds, *blk, *param;
	struct ng_row *row;
	ng_status st;

	tail[NG_EBB_MSGS] = e->msgs;
	tail[NG_EBB_BYTES] = e->bytes;
	tail[NG_EBB_CHECKED] = e->checked;
	st = ng_sampler_gather(smp);
	if (st != NG_OK || !ng_results_active(run->results))
		return st;

	for (int r = 0; r < e->nranks; r++) {
		const double *t = ng_sampler_tail_of(smp, r);

		msgs += t[NG_EBB_MSGS];
		bytes += t[NG_EBB_BYTES];
		checked += t[NG_EBB_CHECKED];
	}
	us = ng_sampler_work(smp);
	bw = calloc(n, sizeof(*bw));
	if (!bw) {
		ng_error("ebb: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	for (size_t r = 0; r < e->rounds; r++)
		for (size_t i = 0; i < e->npairs; i++) {
			size_t k = r * e->npairs + i;

			us[k] = ng_sampler_of(smp, e->pairs[k].client, 0)[r];
			bw[k] = us[k] > 0 ? ng_sampler_of(smp, e->pairs[k].client, 1)[r] / us[k] : 0.0;
		}

	row = ng_sampler_row_n(smp, e->size, n);
	ng_sampler_row_stats(smp, row, "bandwidth_MBps", bw, n, NULL);
	hist = ng_ebb_hist_json(smp); /* before the next STATS refills the histogram */
	ng_sampler_row_stats(smp, row, "time_us", us, n, NULL);
	param = ng_ebb_param(e, bw);
	rounds = ng_ebb_rounds_json(e, run->results, bw);
	blk = hist && rounds ? json_pack("{s:I, s:I, s:I, s:I, s:f, s:o, s:o}", "size", (json_int_t)e->size,
	                                 "window", (json_int_t)e->window, "rounds", (json_int_t)e->rounds,
	                                 "pairs", (json_int_t)e->npairs, "time_s", e->time_s, "histogram",
	                                 hist, "bisections", rounds)
	                     : NULL;
	if (!blk || !param) {
		free(bw);
		if (!blk) {
			json_decref(hist);
			json_decref(rounds);
		}
		json_decref(blk);
		json_decref(param);
		ng_error("ebb: out of memory building the result");
		return NG_ERR_NOMEM;
	}
	ng_row_json(row, "effective_bisection_MBps", param);
	ng_row_int(row, "rounds", (long long)e->rounds);
	ng_row_int(row, "pairs", (long long)e->npairs);
	ng_row_int(row, "window", (long long)e->window);
	ng_row_int(row, "messages", llround(msgs));
	ng_row_int(row, "bytes", llround(bytes));
	ng_row_int(row, "verified", llround(checked));
	ng_sampler_row_raw(smp, row, "bandwidth_MBps", bw, n);
	free(bw);
	st = ng_results_block(run->results, "ebb", blk);
	if (st == NG_OK)
		st = ng_row_commit(run->results, row);
	return st;
}

/* Reads the options (refused alike on every rank) and allocates, once. */
static ng_status ng_ebb_setup(struct ng_ebb *e)
{
	struct ng_run *run = e->run;
	long long w = e->cfg.window;
	struct ng_sampler_spec spec = {
	    .name = "ebb", .streams = 2, .tail = NG_EBB_TAIL, .flags = NG_SAMPLER_GATHER};
	size_t limit = run->comm->max_msg, nslots;
	int *perm;
	ng_status st;

	e->rounds = (size_t)e->cfg.rounds;
	e->size = e->cfg.size;
	e->time_s = e->cfg.time_s;
	if (w < 1 || w > NG_EBB_WINDOW_MAX) {
		if (e->me == 0)
			ng_error("ebb: --bw-window must be 1 to %d messages, got %lld", NG_EBB_WINDOW_MAX, w);
		return NG_ERR_USAGE;
	}
	if (limit && e->size > limit) {
		if (e->me == 0)
			ng_error("ebb: --ebb-size %zu exceeds the largest message %s can send (%zu bytes)",
			         e->size, run->comm->mod->name, limit);
		return NG_ERR_USAGE;
	}
	if (!(e->time_s > 0 && e->time_s <= 3600)) {
		if (e->me == 0)
			ng_error("ebb: --ebb-time must be in (0, 3600] s, got %g", e->time_s);
		return NG_ERR_USAGE;
	}
	if (run->count_given || run->warmup_given) {
		if (e->me == 0)
			ng_error("ebb: every pair of a round starts together and streams for --ebb-time: no "
			         "-c or -w");
		return NG_ERR_USAGE;
	}
	e->window = (size_t)w;
	e->npairs = (size_t)e->nranks / 2;
	spec.cap = e->rounds;
	spec.pool = e->npairs;

	e->pairs = calloc(e->rounds * e->npairs, sizeof(*e->pairs));
	e->sizes = calloc(e->rounds, sizeof(*e->sizes));
	e->reqs = calloc(e->window, sizeof(*e->reqs));
	perm = calloc((size_t)e->nranks, sizeof(*perm));
	if (!e->pairs || !e->sizes || !e->reqs || !perm) {
		free(perm);
		ng_error("ebb: out of memory for %zu rounds of %zu pairs", e->rounds, e->npairs);
		return NG_ERR_NOMEM;
	}
	ng_ebb_bisect(run->seed, e->nranks, e->rounds, e->pairs, perm);
	free(perm);
	for (size_t r = 0; r < e->rounds; r++)
		e->sizes[r] = e->size;
	st = ng_sampler_init(&e->smp, run, &spec);
	if (st != NG_OK)
		return st;

	/* As bw: one message per buffer, or with --verify a slot per message
	 * and one for the acknowledgement. */
	if (run->verify) {
		e->stride = ng_slot_stride(e->size);
		nslots = e->window + 1;
		if (nslots > SIZE_MAX / e->stride) {
			ng_error("ebb: --verify needs %zu slots of %zu bytes, more than memory holds", nslots,
			         e->stride);
			return NG_ERR_NOMEM;
		}
		st = ng_bufs_alloc(run->comm, nslots * e->stride, nslots * e->stride, &e->bufs);
	} else {
		st = ng_bufs_alloc(run->comm, e->size, e->size, &e->bufs);
	}
	e->ack_send = ng_ebb_sslot(e, e->stride ? e->window : 0);
	e->ack_recv = ng_ebb_rslot(e, e->stride ? e->window : 0);
	return st;
}

/* The session's steps (session.h).  The rounds are the session's sizes
 * (s->index is the round), every one at --ebb-size, which setup checks
 * (NG_SESSION_OWN_CHECK: -s plays no part); they are the iterations of one
 * measurement of the sampler, and have no row of their own (no report
 * step): the run's one row is its conclude step, after the last round. */
static ng_status ng_ebb_setup_step(struct ng_session *s, void *state)
{
	struct ng_ebb *e = state;
	ng_status st;

	e->run = s->run;
	e->me = s->me;
	e->nranks = s->nranks;
	st = ng_ebb_setup(e);
	if (st != NG_OK)
		return st;
	s->sizes = e->sizes;
	s->nsizes = e->rounds;
	ng_sampler_start(&e->smp, 0, e->rounds);
	return NG_OK;
}

/* Before the ranks meet: this rank's pair in the round. */
static ng_status ng_ebb_begin(struct ng_session *s, void *state, size_t size)
{
	struct ng_ebb *e = state;

	(void)size;
	ng_pairs_find(&e->pairs[s->index * e->npairs], e->npairs, e->me, &e->peer, &e->client);
	return NG_OK;
}

static ng_status ng_ebb_measure(struct ng_session *s, void *state, size_t size)
{
	(void)size;
	return ng_ebb_round(state, s->index);
}

static ng_status ng_ebb_conclude(struct ng_session *s, void *state)
{
	(void)s;
	return ng_ebb_report(state);
}

static void ng_ebb_teardown(struct ng_session *s, void *state)
{
	struct ng_ebb *e = state;

	(void)s;
	ng_bufs_free(e->run->comm, &e->bufs);
	ng_sampler_free(&e->smp);
	free(e->reqs);
	free(e->sizes);
	free(e->pairs);
}

static const struct ng_session_ops ng_ebb_session = {
    .state = sizeof(struct ng_ebb),
    .config = NG_SESSION_CONFIG(struct ng_ebb, cfg),
    .flags = NG_SESSION_OWN_CHECK,
    .setup = ng_ebb_setup_step,
    .begin = ng_ebb_begin,
    .measure = ng_ebb_measure,
    .conclude = ng_ebb_conclude,
    .teardown = ng_ebb_teardown,
};

static ng_status ng_ebb_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_ebb_session);
}

/* clang-format off */
static const struct ng_option ng_ebb_options[] = {
	{ .name = "ebb-rounds", NG_INT_AT(struct ng_ebb_config, rounds), .def = "20", .metavar = "N", .min = 1,
	  .max = NG_EBB_ROUNDS_MAX, .help = "random bisections (seeded with --seed), all pairs streaming at once in each" },
	{ .name = "ebb-size", NG_SIZE_AT(struct ng_ebb_config, size), .def = "64K", .metavar = "BYTES",
	  .help = "bytes per message of the pairs' windows (--bw-window messages each)" },
	{ .name = "ebb-time", NG_DOUBLE_AT(struct ng_ebb_config, time_s), .def = "0.2", .metavar = "SEC",
	  .help = "timed part of a round; the pairs go on streaming as long again, so none is measured alone" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_pattern ng_pattern_ebb = {
    .name = "ebb",
    .desc = "effective bisection bandwidth: random bisections, every pair streaming at once (Netgauge ebb)",
    .options = ng_ebb_options,
    .reads = (const struct ng_option[]){{.name = "bw-window", NG_INT_AT(struct ng_ebb_config, window)},
                                        {.name = NULL}},
    .needs = NG_CAP_CHANNEL | NG_CAP_NONBLOCK,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = true,
    .default_sizes = "0",
    .run = ng_ebb_run,
};
