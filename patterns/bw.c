/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bw and bibw: streaming bandwidth, as osu_bw / osu_bibw and perftest's
 * ib_send_bw measure it: many messages in flight, one acknowledgement per
 * window.
 *
 * Two ranks: rank 0 is the client, rank 1 the server.  One repetition (a
 * "window") of a size:
 *
 *   bw    client: posts --bw-window W isends of @size bytes, waits for all of
 *         them, then receives a 1-byte acknowledgement.  server: posts W
 *         irecvs, waits for all, sends the acknowledgement.
 *   bibw  both: post W irecvs, then W isends, wait for the sends, then the
 *         receives; then the server sends the acknowledgement and the client
 *         receives it (so the window ends when both directions are done).
 *
 * The client times each window, from before its first post to the
 * acknowledgement; a sample's bandwidth is directions x W x size / time
 * (MB/s, 10^6 bytes) and its message rate directions x W / time.  The
 * server posts the next window's receives right after its acknowledgement,
 * as osu_bw does.  Rows report the median of the samples with its 95% CI.
 *
 * Buffers, as osu_bw's default: every message of a window goes from one send
 * buffer and into one receive buffer per rank (the acknowledgement too), so
 * a window moves W x size bytes through caches that hold one message.  With
 * --verify every message gets a slot of its own on both sides instead
 * (W x size bytes each), with a payload that depends on size, sender and
 * message number, and every received byte is checked after the window's
 * acknowledgement (so a --verify run checks; it does not measure).
 *
 * Counts: a streaming window is long, so without -c a size up to 8 KiB runs
 * 100 timed windows after 10 untimed ones, a larger size 20 after 2 (the
 * counts of osu_bw); -c and -w set them for every size.  The receivers count
 * the messages and bytes they completed and the messages they checked; each
 * row carries the totals (warm-up windows included).
 *
 * More ranks (an even count): random pairs as in pingpong (seeded with
 * --seed), all pairs at once after a barrier; the row pools every pair's
 * samples, "pairs" lists each pair's own bandwidth, and the aggregate is the
 * sum over pairs of their median bandwidth and message rate.  With a common
 * clock (--sync auto or force) the pairs then begin each size at a time
 * agreed on the global clock (patterns/engine/gclock.h: one window start per
 * size, whose windows run back to back), and the row records how far apart
 * the ranks started (start_spread_us, start_late, start_bound_us); with two
 * ranks, or --sync off, nothing changes.
 *
 * --rate MSGS/S or --load FRACTION (bw only; patterns/engine/offered.h,
 * doc/bandwidth.md "Offered load"): open loop, one way.  After the warm-up
 * windows (closed loop, as above; with --load one more, whose message rate
 * is the peak) the client sends message i at t0 + i / rate from its send
 * buffer whatever has completed (at most NG_BW_RING sends in flight: a
 * client that runs out of requests falls behind its schedule, which then
 * shows), and the server, with receives posted NG_OFFERED_POSTED ahead,
 * notes each message's arrival.  Both readings go onto the global clock
 * (patterns/engine/gclock.h: the ranks need a common clock), and a sample
 * is message i's arrival less its scheduled departure: a one-way latency
 * that counts a late departure as waiting.  A size sends the messages of
 * its count of windows (-c x --bw-window).  The row gives latency_us and
 * the offered load's verdict (offered.h) in place of the windows'
 * bandwidth.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gclock.h"
#include "engine/offered.h"
#include "engine/sampler.h"
#include "engine/session.h"

/* osu_bw's counts: up to 8 KiB, 100 windows after 10; above, 20 after 2. */
#define NG_BW_LARGE        8192
#define NG_BW_COUNT_SMALL  100
#define NG_BW_WARMUP_SMALL 10
#define NG_BW_COUNT_LARGE  20
#define NG_BW_WARMUP_LARGE 2
#define NG_BW_WINDOW_MAX   (1 << 20)

/* The acknowledgement that ends a window. */
#define NG_BW_ACK 1

/* After the samples, what each rank contributes to the gathering (the
 * open loop's client: its schedule's start on the global clock, us, its
 * rate and --load's peak, messages per second). */
enum { NG_BW_MSGS, NG_BW_BYTES, NG_BW_CHECKED, NG_BW_T0, NG_BW_RATE, NG_BW_PEAK, NG_BW_TAIL };

/* Open loop: the client's sends in flight at most. */
#define NG_BW_RING 256

/* Everything one run needs: the session's state block (session.h). */
/* The options bw declares and bibw reads. */
struct ng_bw_config {
	long long window; /* --bw-window */
	double rate;      /* --rate (pingpong's option): open loop, messages per second; 0: windows */
	double load;      /* --load: the rate as a fraction of the measured peak */
};

struct ng_bw {
	struct ng_bw_config cfg;
	struct ng_run *run;
	const char *name; /* "bw" or "bibw" */
	bool bidir;
	int me;
	int nranks;
	struct ng_pair *pairs;
	size_t npairs;
	int peer;
	bool client;
	size_t window;
	size_t cap;          /* largest count of any size */
	struct ng_bufs bufs; /* one message each, or (--verify) window + 1 slots */
	size_t stride;       /* between slots; 0 without --verify */
	void *ack_send;      /* where the acknowledgement goes from ... */
	void *ack_recv;      /* ... and arrives (--verify: the last slot) */
	struct ng_req *reqs; /* [2 * window]: receives, then sends */
	int *clients;        /* [npairs] the client of every pair, whose samples pool */
	/* one stream, the client's window times (us); the tail: the counters */
	struct ng_sampler smp;
	/* the session's: more than 2 ranks, each size's window start (patterns/engine/gclock.h) */
	struct ng_gclock *gc;
	double msgs, bytes; /* data messages and bytes this rank received (size) */
	double checked;     /* messages it verified (size) */
	/* --rate, --load: open loop */
	bool open;
	size_t nmsg;         /* messages of the current size */
	struct ng_req *oreq; /* [NG_BW_RING] the client's sends, the server's receives */
	double *quarter;     /* reporter: [cap / 4 + 1] the growth's scratch */
};

/* Timed windows and untimed ones before them at @size. */
static void ng_bw_counts(const struct ng_bw *b, size_t size, size_t *count_p, size_t *warmup_p)
{
	const struct ng_run *run = b->run;
	bool large = size > NG_BW_LARGE;

	*count_p = run->count_given ? run->count : large ? NG_BW_COUNT_LARGE : NG_BW_COUNT_SMALL;
	*warmup_p = run->warmup_given ? run->warmup : large ? NG_BW_WARMUP_LARGE : NG_BW_WARMUP_SMALL;
}

static void *ng_bw_sslot(const struct ng_bw *b, size_t i)
{
	return (char *)b->bufs.send + i * b->stride;
}

static void *ng_bw_rslot(const struct ng_bw *b, size_t i)
{
	return (char *)b->bufs.recv + i * b->stride;
}

/* The payload of message @i of window @it sent by @sender. */
static uint64_t ng_bw_tag(const struct ng_bw *b, size_t size, int sender, size_t it, size_t i)
{
	return ng_verify_tag(size, sender, (uint64_t)it * b->window + i);
}

/* One window: everything between the client's two timer reads. */
static ng_status ng_bw_window(struct ng_bw *b, size_t size)
{
	struct ng_comm *c = b->run->comm;
	size_t w = b->window;
	struct ng_req *rr = b->reqs, *sr = b->reqs + w;
	bool recv = b->bidir || !b->client, send = b->bidir || b->client;
	ng_status st;

	for (size_t i = 0; recv && i < w; i++) {
		st = ng_irecv(c, b->peer, ng_bw_rslot(b, i), size, &rr[i]);
		if (st != NG_OK)
			return st;
	}
	for (size_t i = 0; send && i < w; i++) {
		st = ng_isend(c, b->peer, ng_bw_sslot(b, i), size, &sr[i]);
		if (st != NG_OK)
			return st;
	}
	if (send) {
		st = ng_waitall(c, sr, w);
		if (st != NG_OK)
			return st;
	}
	if (recv) {
		st = ng_waitall(c, rr, w);
		if (st != NG_OK)
			return st;
	}
	if (b->client)
		return ng_recv(c, b->peer, b->ack_recv, NG_BW_ACK);
	return ng_send(c, b->peer, b->ack_send, NG_BW_ACK);
}

/* Open loop, the client: --load's peak window, then every message at its
 * scheduled time; the schedule's start, rate and peak into the tail. */
static ng_status ng_bw_client_open(struct ng_bw *b, size_t size)
{
	const struct ng_timer *tm = b->run->timer;
	struct ng_comm *c = b->run->comm;
	size_t n = b->nmsg, sent = 0, done = 0;
	double rate = b->cfg.rate, peak = 0.0, period;
	uint64_t t0;
	ng_status st;

	if (b->cfg.load > 0.0) {
		uint64_t a = ng_timer_now(tm);

		st = ng_bw_window(b, size);
		if (st != NG_OK)
			return st;
		peak = (double)b->window / (ng_timer_us(tm, ng_timer_now(tm) - a) * 1e-6);
		rate = b->cfg.load * peak;
	}
	if (!(rate > 0.0))
		return NG_ERR_USAGE;
	period = 1e9 / rate / tm->ns_per_tick; /* ticks between messages */
	t0 = ng_timer_now(tm) + (uint64_t)period;
	while (done < n) {
		bool ok = false;

		if (sent < n && sent - done < NG_BW_RING &&
		    ng_timer_now(tm) >= t0 + (uint64_t)((double)sent * period)) {
			st = ng_isend(c, b->peer, b->bufs.send, size, &b->oreq[sent % NG_BW_RING]);
			if (st != NG_OK)
				return st;
			sent++;
		} else if (done < sent) {
			st = ng_test(c, &b->oreq[done % NG_BW_RING], &ok);
			if (st != NG_OK)
				return st;
			done += ok;
		}
	}
	ng_sampler_tail(&b->smp)[NG_BW_T0] = ng_gclock_us(b->gc, t0);
	ng_sampler_tail(&b->smp)[NG_BW_RATE] = rate;
	ng_sampler_tail(&b->smp)[NG_BW_PEAK] = peak;
	return NG_OK;
}

/* Open loop, the server: --load's peak window, then every message's
 * arrival, put on the global clock after the last one. */
static ng_status ng_bw_server_open(struct ng_bw *b, size_t size)
{
	const struct ng_timer *tm = b->run->timer;
	struct ng_comm *c = b->run->comm;
	size_t n = b->nmsg, ahead = n < NG_OFFERED_POSTED ? n : NG_OFFERED_POSTED;
	uint64_t base;
	ng_status st;

	if (b->cfg.load > 0.0) {
		st = ng_bw_window(b, size);
		if (st != NG_OK)
			return st;
	}
	for (size_t i = 0; i < ahead; i++) {
		st = ng_irecv(c, b->peer, b->bufs.recv, size, &b->oreq[i]);
		if (st != NG_OK)
			return st;
	}
	base = ng_timer_now(tm);
	for (size_t k = 0; k < n; k++) {
		st = ng_wait(c, &b->oreq[k % NG_OFFERED_POSTED]);
		if (st != NG_OK)
			return st;
		ng_sampler_add(&b->smp, 0, k, (double)(ng_timer_now(tm) - base));
		if (k + NG_OFFERED_POSTED < n) {
			st = ng_irecv(c, b->peer, b->bufs.recv, size, &b->oreq[k % NG_OFFERED_POSTED]);
			if (st != NG_OK)
				return st;
		}
	}
	ng_gclock_us_all(b->gc, base, ng_sampler_mine(&b->smp, 0), ng_sampler_n(&b->smp, 0));
	b->msgs += (double)n;
	b->bytes += (double)n * (double)size;
	return NG_OK;
}

/* Open loop: the warm-up windows, then the client's schedule. */
static ng_status ng_bw_measure_open(struct ng_bw *b, size_t size)
{
	size_t count, warmup;
	ng_status st = NG_OK;

	ng_bw_counts(b, size, &count, &warmup);
	b->nmsg = count * b->window;
	ng_sampler_start(&b->smp, 0, b->nmsg);
	b->msgs = b->bytes = b->checked = 0.0;
	for (size_t it = 0; it < warmup && st == NG_OK; it++)
		st = ng_bw_window(b, size);
	if (st != NG_OK)
		return st;
	if (!b->client) { /* the totals count the closed windows too */
		size_t windows = warmup + (b->cfg.load > 0.0);

		b->msgs = (double)(windows * b->window);
		b->bytes = b->msgs * (double)size;
	}
	return b->client ? ng_bw_client_open(b, size) : ng_bw_server_open(b, size);
}

/* This rank's part of one size. */
static ng_status ng_bw_measure(struct ng_bw *b, size_t size)
{
	const struct ng_run *run = b->run;
	const struct ng_timer *tm = run->timer;
	bool verify = run->verify;
	bool recv = b->bidir || !b->client, send = b->bidir || b->client;
	size_t count, warmup;
	ng_status st;

	if (b->open)
		return ng_bw_measure_open(b, size);
	ng_bw_counts(b, size, &count, &warmup);
	ng_sampler_start(&b->smp, warmup, count);
	b->msgs = b->bytes = b->checked = 0.0;
	for (uint64_t it = 0; ng_sampler_more(&b->smp, it); it++) {
		uint64_t t0, t1;

		if (verify && send)
			for (size_t i = 0; i < b->window; i++)
				ng_verify_fill(ng_bw_sslot(b, i), size, ng_bw_tag(b, size, b->me, it, i));
		t0 = ng_timer_now(tm);
		st = ng_bw_window(b, size);
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			return st;
		if (b->client)
			ng_sampler_add(&b->smp, 0, it, ng_timer_us(tm, t1 - t0));
		if (!recv)
			continue;
		b->msgs += (double)b->window;
		b->bytes += (double)b->window * (double)size;
		for (size_t i = 0; verify && i < b->window; i++) {
			st = ng_verify_check(ng_bw_rslot(b, i), size, ng_bw_tag(b, size, b->peer, it, i),
			                     b->peer);
			if (st != NG_OK)
				return st;
			b->checked += 1.0;
		}
	}
	return NG_OK;
}

/* The "pairs" array of a row, kept as text by the results (a tree per pair
 * would hold several kilobytes each on rank 0: results.h), and the sums of
 * the pairs' medians; NULL on out-of-memory (reported). */
static json_t *ng_bw_pairs_json(struct ng_bw *b, struct ng_results *res, size_t count, double per_window,
                                double *agg_bw_p, double *agg_rate_p)
{
	double win_msgs = (b->bidir ? 2.0 : 1.0) * (double)b->window * 1e6;
	struct ng_results_text text = {0};

	*agg_bw_p = *agg_rate_p = 0.0;
	for (size_t i = 0; i < b->npairs; i++) {
		const struct ng_pair *pr = &b->pairs[i];
		const double *x = ng_sampler_of(&b->smp, pr->client, 0);
		struct ng_stats bw, rate;

		ng_sampler_bw(&b->smp, x, count, per_window, &bw);
		ng_sampler_bw(&b->smp, x, count, win_msgs, &rate);
		*agg_bw_p += bw.median;
		*agg_rate_p += rate.median;
		if (ng_results_text_add(&text,
		                        json_pack("{s:i, s:i, s:o, s:o}", "client", pr->client, "server",
		                                  pr->server, "bandwidth_MBps", ng_stats_json(&bw),
		                                  "messages_per_s", ng_stats_json(&rate)))) {
			ng_results_text_free(&text);
			return NULL;
		}
	}
	return ng_results_text_value(res, &text);
}

/* Open loop, the reporter: every pair's latencies (arrival less scheduled
 * departure, on the global clock) pooled, and the offered load's verdict
 * over the pairs (the least achieved fraction of its own offer). */
static ng_status ng_bw_report_open(struct ng_bw *b, size_t size, size_t warmup, double msgs, double bytes)
{
	struct ng_sampler *smp = &b->smp;
	size_t n = ng_sampler_count(smp);
	double *w = ng_sampler_work(smp);
	struct ng_offered o = {0};
	struct ng_row *row;

	for (size_t i = 0; i < b->npairs; i++) {
		const double *t = ng_sampler_tail_of(smp, b->pairs[i].client);
		const double *arr = ng_sampler_of(smp, b->pairs[i].server, 0);
		double *lat = w + i * n, period_us = 1e6 / t[NG_BW_RATE], growth;

		for (size_t k = 0; k < n; k++)
			lat[k] = arr[k] - (t[NG_BW_T0] + (double)k * period_us);
		growth = ng_offered_growth(b->quarter, lat, n);
		ng_offered_add(&o, &(struct ng_offered){
		                       .offered = t[NG_BW_RATE],
		                       .achieved = n && arr[n - 1] > t[NG_BW_T0]
		                                       ? (double)n / ((arr[n - 1] - t[NG_BW_T0]) * 1e-6)
		                                       : t[NG_BW_RATE],
		                       .peak = t[NG_BW_PEAK],
		                       .growth = growth,
		                       /* one way: a period's queue adds a period */
		                       .periods = growth / period_us,
		                   });
	}
	row = ng_sampler_row(smp, size);
	ng_sampler_row_stats(smp, row, "latency_us", w, b->npairs * n, NULL);
	ng_row_int(row, "window", (long long)b->window);
	ng_row_int(row, "warmup", (long long)warmup);
	ng_row_int(row, "messages", llround(msgs));
	ng_row_int(row, "bytes", llround(bytes));
	ng_row_int(row, "verified", 0);
	ng_row_number(row, "achieved_MBps", o.achieved * (double)size * 1e-6);
	ng_offered_row(row, b->name, size, &o, b->cfg.load > 0.0);
	ng_gclock_row(b->gc, row);
	ng_sampler_row_raw(smp, row, "latency_us", w, b->npairs * n);
	return ng_row_commit(b->run->results, row);
}

/* Gathers one size's samples and counters and commits its row. */
static ng_status ng_bw_report(struct ng_bw *b, size_t size)
{
	struct ng_run *run = b->run;
	struct ng_sampler *smp = &b->smp;
	size_t count, warmup, n;
	double dirs = b->bidir ? 2.0 : 1.0;
	double per_window = dirs * (double)b->window * (double)size;
	double msgs = 0.0, bytes = 0.0, checked = 0.0, agg_bw = 0.0, agg_rate = 0.0;
	double *tail = ng_sampler_tail(smp);
	const double *pool;
	json_t *pairs = NULL;
	struct ng_row *row;
	ng_status st;

	ng_bw_counts(b, size, &count, &warmup);
	count = ng_sampler_count(smp); /* by --time: the windows kept */
	tail[NG_BW_MSGS] = b->msgs;
	tail[NG_BW_BYTES] = b->bytes;
	tail[NG_BW_CHECKED] = b->checked;
	st = ng_gclock_end(b->gc);
	if (st == NG_OK)
		st = ng_sampler_gather(smp);
	if (st != NG_OK || !ng_results_active(run->results))
		return st;

	for (int r = 0; r < b->nranks; r++) {
		const double *t = ng_sampler_tail_of(smp, r);

		msgs += t[NG_BW_MSGS];
		bytes += t[NG_BW_BYTES];
		checked += t[NG_BW_CHECKED];
	}
	if (b->open)
		return ng_bw_report_open(b, size, warmup, msgs, bytes);
	pool = ng_sampler_pool(smp, 0, b->clients, b->npairs, &n);
	if (b->npairs > 1) {
		pairs = ng_bw_pairs_json(b, run->results, count, per_window, &agg_bw, &agg_rate);
		if (!pairs)
			return NG_ERR_NOMEM;
	}

	row = ng_sampler_row(smp, size);
	ng_sampler_row_bw(smp, row, "bandwidth_MBps", pool, n, per_window, NULL);
	ng_sampler_row_bw(smp, row, "messages_per_s", pool, n, dirs * (double)b->window * 1e6, NULL);
	ng_sampler_row_stats(smp, row, "time_us", pool, n, NULL);
	ng_row_int(row, "window", (long long)b->window);
	ng_row_int(row, "warmup", (long long)warmup);
	ng_row_int(row, "messages", llround(msgs));
	ng_row_int(row, "bytes", llround(bytes));
	ng_row_int(row, "verified", llround(checked));
	if (pairs) {
		ng_row_json(row, "pairs", pairs);
		ng_row_number(row, "aggregate_bandwidth_MBps", agg_bw);
		ng_row_number(row, "aggregate_messages_per_s", agg_rate);
	}
	ng_gclock_row(b->gc, row);
	ng_sampler_row_raw(smp, row, "time_us", pool, n);
	return ng_row_commit(run->results, row);
}

/* The "bw" block: how the windows were run. */
static ng_status ng_bw_block(const struct ng_bw *b)
{
	json_t *blk;

	if (!ng_results_active(b->run->results))
		return NG_OK;
	blk = json_pack("{s:s, s:I, s:i, s:i, s:s}", "direction", b->bidir ? "bi" : "uni", "window",
	                (json_int_t)b->window, "ack_bytes", NG_BW_ACK, "pairs", (int)b->npairs, "buffers",
	                b->stride ? "per-message" : "single");
	if (!blk) {
		ng_error("%s: out of memory building the result block", b->name);
		return NG_ERR_NOMEM;
	}
	return ng_results_block(b->run->results, "bw", blk);
}

/* Allocates what the size loop needs, once. */
static ng_status ng_bw_setup(struct ng_bw *b)
{
	struct ng_run *run = b->run;
	long long w = b->cfg.window;
	size_t max = ng_sizes_max(run), nslots, count, warmup;
	struct ng_sampler_spec spec = {
	    .name = b->name,
	    .tail = NG_BW_TAIL,
	    .pool = (size_t)b->nranks / 2,
	    .flags = NG_SAMPLER_GATHER,
	};
	ng_status st;

	if (w < 1 || w > NG_BW_WINDOW_MAX) {
		if (b->me == 0)
			ng_error("%s: --bw-window must be 1 to %d messages, got %lld", b->name,
			         NG_BW_WINDOW_MAX, w);
		return NG_ERR_USAGE;
	}
	b->window = (size_t)w;
	st = ng_offered_check(b->name, run, b->me, b->cfg.rate, b->cfg.load, &b->open);
	if (st != NG_OK)
		return st;
	for (size_t i = 0; i < run->nsizes; i++) {
		ng_bw_counts(b, run->sizes[i], &count, &warmup);
		if (count > b->cap)
			b->cap = count;
	}
	/* open loop: a sample per message */
	if (b->open && b->cap > SIZE_MAX / b->window / 2) {
		if (b->me == 0)
			ng_error("%s: -c %zu windows of %zu messages are too many samples", b->name, b->cap,
			         b->window);
		return NG_ERR_USAGE;
	}
	spec.cap = b->open ? b->cap * b->window : b->cap;

	b->npairs = (size_t)b->nranks / 2;
	b->pairs = calloc(b->npairs, sizeof(*b->pairs));
	b->clients = calloc(b->npairs, sizeof(*b->clients));
	b->reqs = calloc(2 * b->window, sizeof(*b->reqs));
	if (b->open) {
		b->oreq = calloc(NG_BW_RING, sizeof(*b->oreq));
		b->quarter = calloc(spec.cap / 4 + 1, sizeof(*b->quarter));
	}
	if (!b->pairs || !b->clients || !b->reqs || (b->open && (!b->oreq || !b->quarter))) {
		ng_error("%s: out of memory for %zu samples", b->name, b->cap);
		return NG_ERR_NOMEM;
	}
	st = ng_sampler_init(&b->smp, run, &spec);
	if (st != NG_OK)
		return st;

	ng_pairs_choose(run->seed, b->nranks, b->pairs);
	ng_pairs_find(b->pairs, b->npairs, b->me, &b->peer, &b->client);
	for (size_t i = 0; i < b->npairs; i++)
		b->clients[i] = b->pairs[i].client;

	/* One message per buffer (the acknowledgement shares it, as in
	 * osu_bw), or a slot per message of the window and one for the
	 * acknowledgement, which must not land on a message still unchecked. */
	if (run->verify) {
		b->stride = ng_slot_stride(max);
		nslots = b->window + 1;
		if (nslots > SIZE_MAX / b->stride) {
			ng_error("%s: --verify needs %zu slots of %zu bytes, more than memory holds", b->name,
			         nslots, b->stride);
			return NG_ERR_NOMEM;
		}
		st = ng_bufs_alloc(run->comm, nslots * b->stride, nslots * b->stride, &b->bufs);
	} else {
		st = ng_bufs_alloc(run->comm, max, max, &b->bufs);
	}
	b->ack_send = ng_bw_sslot(b, b->stride ? b->window : 0);
	b->ack_recv = ng_bw_rslot(b, b->stride ? b->window : 0);
	return st;
}

/* Frees what ng_bw_setup allocated; safe after a partial setup. */
static void ng_bw_teardown(struct ng_bw *b)
{
	ng_bufs_free(b->run->comm, &b->bufs);
	ng_sampler_free(&b->smp);
	free(b->clients);
	free(b->reqs);
	free(b->pairs);
	free(b->oreq);
	free(b->quarter);
}

/* The session's steps (session.h): with more than two ranks the pairs start
 * each size together (NG_SESSION_WINDOWS_MANY, gclock.h). */
static ng_status ng_bw_session_setup(struct ng_session *s, void *state)
{
	struct ng_bw *b = state;
	ng_status st;

	b->run = s->run;
	b->name = s->pattern->name;
	b->bidir = strcmp(s->pattern->name, "bibw") == 0;
	b->me = s->me;
	b->nranks = s->nranks;
	b->gc = &s->gc;
	st = ng_bw_setup(b);
	/* the open loop times on the global clock: windows with two ranks too
	 * (the session sets them up with more) */
	if (st == NG_OK && b->open && b->nranks == 2)
		st = ng_gclock_setup(&s->gc, s->run, NG_GCLOCK_WINDOWS);
	return st;
}

static ng_status ng_bw_session_ready(struct ng_session *s, void *state)
{
	struct ng_bw *b = state;

	if (b->open && !s->gc.on) {
		if (b->me == 0)
			ng_error(
			    "%s: --rate and --load time each message from its scheduled departure to its "
			    "arrival on the global clock, and the ranks have no common clock (%s; "
			    "doc/clock.md)",
			    b->name, s->gc.why ? s->gc.why : "--sync off");
		return NG_ERR_USAGE;
	}
	return ng_bw_block(b);
}

static ng_status ng_bw_session_measure(struct ng_session *s, void *state, size_t size)
{
	(void)s;
	return ng_bw_measure(state, size);
}

static ng_status ng_bw_session_report(struct ng_session *s, void *state, size_t size)
{
	(void)s;
	return ng_bw_report(state, size);
}

static void ng_bw_session_teardown(struct ng_session *s, void *state)
{
	(void)s;
	ng_bw_teardown(state);
}

static const struct ng_session_ops ng_bw_session = {
    .state = sizeof(struct ng_bw),
    .flags = NG_SESSION_WINDOWS_MANY,
    .config = NG_SESSION_CONFIG(struct ng_bw, cfg),
    .setup = ng_bw_session_setup,
    .ready = ng_bw_session_ready,
    .measure = ng_bw_session_measure,
    .report = ng_bw_session_report,
    .teardown = ng_bw_session_teardown,
};

static ng_status ng_bw_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_bw_session);
}

/* Declared by bw, read by bibw too (an option name is declared once). */
static const struct ng_option ng_bw_options[] = {
    {.name = "bw-window",
     NG_INT_AT(struct ng_bw_config, window),
     .def = "64",
     .help = "bw, bibw: messages in flight per window (each way), one acknowledgement per window",
     .metavar = "W"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_bw = {
    .by_time = true,
    .name = "bw",
    .desc = "streaming bandwidth and message rate: windows of non-blocking messages, one ack each (osu_bw)",
    .options = ng_bw_options,
    /* pingpong declares them */
    .reads = (const struct ng_option[]){{.name = "rate", NG_DOUBLE_AT(struct ng_bw_config, rate)},
                                        {.name = "load", NG_DOUBLE_AT(struct ng_bw_config, load)},
                                        {.name = NULL}},
    .needs = NG_CAP_CHANNEL | NG_CAP_NONBLOCK,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = true,
    .default_sizes = "1-1M",
    .run = ng_bw_run,
};

const struct ng_pattern ng_pattern_bibw = {
    .by_time = true,
    .name = "bibw",
    .desc = "bw in both directions at once (osu_bibw); --bw-window each way",
    .options = NULL,
    .reads = (const struct ng_option[]){{.name = "bw-window", NG_INT_AT(struct ng_bw_config, window)},
                                        {.name = NULL}},
    .needs = NG_CAP_CHANNEL | NG_CAP_NONBLOCK,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = true,
    .default_sizes = "1-1M",
    .run = ng_bw_run,
};
