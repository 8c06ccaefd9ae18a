/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pingpong: round-trip latency and bandwidth between pairs of ranks.
 *
 * Two ranks: the classic ping-pong.  Rank 0 is the client: it sends @size
 * bytes, receives the echo, and times each round trip with ng_timer_now();
 * a sample is half the round trip.  Rank 1 echoes every message.
 *
 * Buffers (--pp-echo): both ranks send from a send buffer and receive into a
 * separate receive buffer (`separate`, the default), as osu_latency, IMB
 * PingPong and perftest do; with `same` the server echoes from the buffer it
 * has just received into, as Netgauge does.  Which one costs more depends on
 * the transport and on where the two cores sit: a single-copy shared-memory
 * path reads the sender's buffer from the other core's cache, and a buffer
 * the echoing rank has just written is dirty there (on a 2-core virtual
 * machine, MPICH's 64 KiB round trip is 5-45% longer that way).  The choice
 * is recorded in the result's parameters ("pp-echo").
 *
 * More ranks (an even count): the ranks are paired at random (seeded with
 * --seed, so every rank computes the same pairing) and all pairs run at the
 * same time after a barrier, which measures the network under bisection
 * load.  The row's "latency_us" and "bandwidth_MBps" then pool the samples
 * of all pairs; "pairs" lists every pair's own latency and
 * "aggregate_bandwidth_MBps" is the sum over pairs of size / median.
 *
 * Each size runs --warmup untimed round trips, then --count timed ones, back
 * to back (no sleeping).  With --verify every sender fills its send buffer
 * with a payload that depends on size, rank and iteration outside the
 * client's timed region (the client before its timer starts, the server
 * after its echo, for the next iteration); the server checks what it
 * received after it has echoed it, and the client checks the echo (the
 * server's payload, or with `same` its own) after its timer stopped.
 *
 * --one-way (doc/clock.md): besides the round trip, the time of each
 * direction.  The client keeps the clock's reading before its send (t0)
 * and after its receive (t1), the server one reading between its receive
 * and its send (ts), each into its sampler stream as ticks after a base
 * read before the first size (one subtraction: nothing is allocated,
 * converted to time or exchanged inside the loop; the server's reading is
 * the one cost --one-way adds to the round trip).  After the loop every
 * rank puts its readings on rank 0's
 * clock: with a shared clock the ticks after rank 0's base on rank 0's
 * calibration, with a fitted model through ng_timer_global_of() and the
 * model (core/clocksync.h; both in patterns/engine/gclock.h); the sampler's gather brings them together and
 * the reporter computes client to server = ts - t0, server to client =
 * t1 - ts, whose sum is the round trip.  The row adds the bound of the
 * clocks' offset (the timer's resolution on a shared clock), which widens
 * the uncertainty of both directions; a fitted model assumes symmetric
 * paths, and the row says whether the directions' difference lies within
 * what that assumption can hide.
 *
 * --rate MSGS/S or --load FRACTION (doc/pingpong.md, "Offered load"): open
 * loop.  After the warm-up (closed loop) the client sends ping i at its
 * scheduled time t0 + i / rate whatever has come back, every pong's receive
 * posted before, and a sample is half the time from ping i's scheduled
 * departure to pong i's arrival: a ping that leaves late because the
 * client was held up counts as waiting, not as a shorter round trip (the
 * coordinated-omission correction of HdrHistogram and wrk2).  The server
 * echoes as in the closed loop, so what queues is its service.  --load
 * takes the rate as a fraction of the peak measured just before, per size:
 * a burst of pings sent back to back, the pongs' rate.  The row says what
 * was offered, what came back (the pings' count over the time from the
 * first one's scheduled departure to the last pong)
 * and whether that held the offered rate within 5% ("sustained"); a run
 * that did not gets a warning instead of a quiet figure, its latencies
 * growing with the queue.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clocksync.h"
#include "engine/gclock.h"
#include "engine/offered.h"
#include "engine/sampler.h"
#include "engine/session.h"

/* --one-way: the sampler's streams of the readings (stream 0: half round
 * trips) */
#define NG_PP_T0 1 /* client: before its send; server: between receive and send */
#define NG_PP_T1 2 /* client: after its receive */

/* Everything one run needs: the session's state block (session.h). */
/* pingpong's options; --pp-echo's index among its choices. */
enum { NG_PP_ECHO_SEPARATE, NG_PP_ECHO_SAME };
struct ng_pp_config {
	int echo;    /* --pp-echo */
	bool oneway; /* --one-way */
	double rate; /* --rate: messages per second, open loop; 0: closed loop */
	double load; /* --load: the rate as a fraction of the measured peak; 0: none */
};

/* Open loop: the sampler's tail (per client) */
#define NG_PP_TAIL_OFFERED  0
#define NG_PP_TAIL_ACHIEVED 1
#define NG_PP_TAIL_PEAK     2
#define NG_PP_TAIL_GROWTH   3  /* the last quarter's median latency less the first quarter's, us */
#define NG_PP_BURST         64 /* pings of --load's peak burst */

struct ng_pp {
	struct ng_pp_config cfg;
	struct ng_run *run;
	int me;
	int nranks;
	struct ng_pair *pairs;
	size_t npairs;
	int peer;
	bool client;
	bool echo_same; /* --pp-echo same: the server echoes from its receive buffer */
	struct ng_bufs bufs;
	int *clients;          /* [npairs] the client of every pair, whose samples pool */
	struct ng_sampler smp; /* the client's half round trips; with --one-way the readings */
	/* --one-way */
	bool oneway;
	bool model;          /* the readings go through the fitted clock model */
	uint64_t base;       /* ticks the readings count from (gc.base) */
	struct ng_gclock gc; /* the global clock the readings go onto */
	bool sym_noted;      /* the note on the symmetry assumption is given */
	/* --rate, --load: open loop */
	bool open;
	struct ng_req *sreq, *rreq; /* [count] the pings' sends and the pongs' receives */
	double *quarter;            /* [count / 4 + 1] the growth's scratch */
};

/* Client side of one size: times every round trip. */
static ng_status ng_pp_client(struct ng_pp *pp, size_t size)
{
	const struct ng_run *run = pp->run;
	const struct ng_timer *tm = run->timer;
	struct ng_comm *c = run->comm;
	struct ng_sampler *smp = &pp->smp;
	void *sbuf = pp->bufs.send, *rbuf = pp->bufs.recv;
	bool verify = run->verify;
	int peer = pp->peer;
	ng_status st;

	if (verify)
		ng_verify_fill(sbuf, size, ng_verify_tag(size, pp->me, 0));

	for (uint64_t it = 0; ng_sampler_more(smp, it); it++) {
		uint64_t t0, t1;

		t0 = ng_timer_now(tm);
		st = ng_send(c, peer, sbuf, size);
		if (st != NG_OK)
			return st;
		st = ng_recv(c, peer, rbuf, size);
		if (st != NG_OK)
			return st;
		t1 = ng_timer_now(tm);

		ng_sampler_add(smp, 0, it, ng_timer_us(tm, t1 - t0) / 2.0);
		if (pp->oneway) {
			ng_sampler_add(smp, NG_PP_T0, it, (double)(int64_t)(t0 - pp->base));
			ng_sampler_add(smp, NG_PP_T1, it, (double)(int64_t)(t1 - pp->base));
		}
		if (verify) {
			int from = pp->echo_same ? pp->me : peer;

			st = ng_verify_check(rbuf, size, ng_verify_tag(size, from, it), peer);
			if (st != NG_OK)
				return st;
			if (ng_sampler_more(smp, it + 1))
				ng_verify_fill(sbuf, size, ng_verify_tag(size, pp->me, it + 1));
		}
	}
	return NG_OK;
}

/* The pings of --load's burst. */
static size_t ng_pp_burst(const struct ng_run *run)
{
	return run->count < NG_PP_BURST ? run->count : NG_PP_BURST;
}

/* --load: the peak rate of @size, measured: a burst of pings sent back to
 * back, the pongs' rate from the first send to the last pong.  Untimed
 * (before the timed messages); 0 on failure of the module (returned). */
static ng_status ng_pp_peak(struct ng_pp *pp, size_t size, size_t n, double *peak_p)
{
	const struct ng_timer *tm = pp->run->timer;
	struct ng_comm *c = pp->run->comm;
	uint64_t t0, t1;
	ng_status st = NG_OK;

	for (size_t i = 0; i < n && st == NG_OK; i++)
		st = ng_irecv(c, pp->peer, pp->bufs.recv, size, &pp->rreq[i]);
	t0 = ng_timer_now(tm);
	for (size_t i = 0; i < n && st == NG_OK; i++)
		st = ng_isend(c, pp->peer, pp->bufs.send, size, &pp->sreq[i]);
	if (st == NG_OK)
		st = ng_waitall(c, pp->rreq, n);
	t1 = ng_timer_now(tm);
	if (st == NG_OK)
		st = ng_waitall(c, pp->sreq, n);
	*peak_p = t1 > t0 ? (double)n / (ng_timer_us(tm, t1 - t0) * 1e-6) : 0.0;
	return st;
}

/* Client side of one size, open loop (--rate, --load): every ping leaves at
 * its scheduled time; a sample is half the time from that time to its
 * pong.  Warm-up round trips first, closed loop. */
static ng_status ng_pp_client_open(struct ng_pp *pp, size_t size)
{
	const struct ng_run *run = pp->run;
	const struct ng_timer *tm = run->timer;
	struct ng_comm *c = run->comm;
	struct ng_sampler *smp = &pp->smp;
	size_t n = run->count, sent = 0, back = 0;
	double rate = pp->cfg.rate, peak = 0.0, period;
	uint64_t t0, last = 0;
	ng_status st = NG_OK;

	for (uint64_t it = 0; it < run->warmup && st == NG_OK; it++) {
		st = ng_send(c, pp->peer, pp->bufs.send, size);
		if (st == NG_OK)
			st = ng_recv(c, pp->peer, pp->bufs.recv, size);
	}
	if (st == NG_OK && pp->cfg.load > 0.0) {
		st = ng_pp_peak(pp, size, ng_pp_burst(run), &peak);
		rate = pp->cfg.load * peak;
	}
	if (st != NG_OK || !(rate > 0.0))
		return st != NG_OK ? st : NG_ERR_USAGE;
	period = 1e3 / rate / tm->ns_per_tick * 1e6; /* ticks between pings */
	for (size_t i = 0; i < n && i < NG_OFFERED_POSTED && st == NG_OK; i++)
		st = ng_irecv(c, pp->peer, pp->bufs.recv, size, &pp->rreq[i]);
	/* the schedule starts after the first receives are posted */
	t0 = ng_timer_now(tm) + (uint64_t)period;
	while (st == NG_OK && back < n) {
		uint64_t now = ng_timer_now(tm);
		bool done = false;

		/* a ping that is due leaves; then one look for the next pong, also
		 * when the client is behind its schedule (else the pongs would
		 * wait until every ping has left) */
		if (sent < n && now >= t0 + (uint64_t)((double)sent * period)) {
			st = ng_isend(c, pp->peer, pp->bufs.send, size, &pp->sreq[sent]);
			sent++;
			if (st != NG_OK)
				break;
		}
		if (back < sent) {
			st = ng_test(c, &pp->rreq[back], &done);
			if (st == NG_OK && done) {
				now = ng_timer_now(tm);
				last = now;
				ng_sampler_add(smp, 0, run->warmup + back,
				               ng_timer_us(tm, now - t0 - (uint64_t)((double)back * period)) /
				                   2.0);
				/* a receive posted for every pong NG_OFFERED_POSTED ahead */
				if (back + NG_OFFERED_POSTED < n)
					st = ng_irecv(c, pp->peer, pp->bufs.recv, size,
					              &pp->rreq[back + NG_OFFERED_POSTED]);
				back++;
			}
		}
	}
	if (st == NG_OK)
		st = ng_waitall(c, pp->sreq, sent);
	ng_sampler_tail(smp)[NG_PP_TAIL_OFFERED] = rate;
	/* from the first ping's scheduled departure to the last pong: a client
	 * behind its schedule and pongs that bunch up both show */
	ng_sampler_tail(smp)[NG_PP_TAIL_ACHIEVED] =
	    n > 0 && last > t0 ? (double)n / (ng_timer_us(tm, last - t0) * 1e-6) : rate;
	ng_sampler_tail(smp)[NG_PP_TAIL_PEAK] = peak;
	ng_sampler_tail(smp)[NG_PP_TAIL_GROWTH] =
	    ng_offered_growth(pp->quarter, ng_sampler_mine(smp, 0), back);
	return st;
}

/* Server side of one size: answers every message, from its send buffer or
 * (--pp-echo same) from the receive buffer the message arrived in. */
static ng_status ng_pp_server(struct ng_pp *pp, size_t size)
{
	const struct ng_run *run = pp->run;
	const struct ng_timer *tm = run->timer;
	struct ng_comm *c = run->comm;
	struct ng_sampler *smp = &pp->smp;
	void *rbuf = pp->bufs.recv;
	void *sbuf = pp->echo_same ? rbuf : pp->bufs.send;
	bool verify = run->verify, fill = verify && !pp->echo_same;
	int peer = pp->peer;
	ng_status st;

	if (fill)
		ng_verify_fill(sbuf, size, ng_verify_tag(size, pp->me, 0));
	for (uint64_t it = 0; ng_sampler_more(smp, it); it++) {
		/* --load: after the warm-up, the client's burst, echoed like any ping */
		for (size_t i = 0;
		     it == run->warmup && pp->open && pp->cfg.load > 0.0 && i < ng_pp_burst(run); i++) {
			st = ng_recv(c, peer, rbuf, size);
			if (st == NG_OK)
				st = ng_send(c, peer, sbuf, size);
			if (st != NG_OK)
				return st;
		}
		st = ng_recv(c, peer, rbuf, size);
		if (st != NG_OK)
			return st;
		if (pp->oneway)
			ng_sampler_add(smp, NG_PP_T0, it, (double)(int64_t)(ng_timer_now(tm) - pp->base));
		st = ng_send(c, peer, sbuf, size);
		if (st != NG_OK)
			return st;
		/* After the echo: off the client's critical path. */
		if (verify) {
			st = ng_verify_check(rbuf, size, ng_verify_tag(size, peer, it), peer);
			if (st != NG_OK)
				return st;
		}
		if (fill && ng_sampler_more(smp, it + 1))
			ng_verify_fill(sbuf, size, ng_verify_tag(size, pp->me, it + 1));
	}
	return NG_OK;
}

/* The "pairs" array of a row, kept as text by the results (a tree per pair
 * would hold about two kilobytes each on rank 0: results.h); NULL on
 * out-of-memory (reported). */
static json_t *ng_pp_pairs_json(struct ng_pp *pp, struct ng_results *res, double size, double *agg_p)
{
	size_t count = ng_sampler_count(&pp->smp);
	struct ng_results_text text = {0};
	double agg = 0.0;

	for (size_t i = 0; i < pp->npairs; i++) {
		const struct ng_pair *pr = &pp->pairs[i];
		struct ng_stats lat;

		ng_sampler_stats(&pp->smp, ng_sampler_of(&pp->smp, pr->client, 0), count, &lat);
		if (lat.median > 0.0)
			agg += size / lat.median;
		if (ng_results_text_add(&text, json_pack("{s:i, s:i, s:o}", "client", pr->client, "server",
		                                         pr->server, "latency_us", ng_stats_json(&lat)))) {
			ng_results_text_free(&text);
			return NULL;
		}
	}
	*agg_p = agg;
	return ng_results_text_value(res, &text);
}

/* --one-way, after the loop: this rank's readings on rank 0's clock, µs
 * after rank 0's base (shared clock) or after the model's epoch
 * (patterns/engine/gclock.h). */
static void ng_pp_oneway_convert(struct ng_pp *pp)
{
	size_t streams = pp->client ? 2 : 1;

	for (size_t j = 0; j < streams; j++)
		ng_gclock_us_all(&pp->gc, pp->base, ng_sampler_mine(&pp->smp, NG_PP_T0 + j),
		                 ng_sampler_n(&pp->smp, NG_PP_T0 + j));
}

/* --one-way, the reporter: both directions of every pair pooled, their
 * STATS, the clocks' bound, and on a fitted model whether the directions'
 * difference lies within what the symmetry assumption can hide. */
static void ng_pp_oneway_row(struct ng_pp *pp, struct ng_row *row)
{
	static const char *const keys[2] = {"client_to_server_us", "server_to_client_us"};
	const struct ng_run *run = pp->run;
	struct ng_sampler *smp = &pp->smp;
	size_t count = ng_sampler_count(smp);
	double *w = ng_sampler_work(smp), bound = 0.0, last = 0.0, med[2];

	for (int dir = 0; dir < 2; dir++) {
		struct ng_stats st;

		for (size_t i = 0; i < pp->npairs; i++) {
			const double *t0 = ng_sampler_of(smp, pp->pairs[i].client, NG_PP_T0);
			const double *t1 = ng_sampler_of(smp, pp->pairs[i].client, NG_PP_T1);
			const double *ts = ng_sampler_of(smp, pp->pairs[i].server, NG_PP_T0);

			for (size_t k = 0; k < count; k++) {
				w[i * count + k] = dir == 0 ? ts[k] - t0[k] : t1[k] - ts[k];
				last = fmax(last, t1[k]);
			}
		}
		ng_sampler_row_stats(smp, row, keys[dir], w, pp->npairs * count, &st);
		ng_sampler_row_raw(smp, row, keys[dir], w, pp->npairs * count);
		med[dir] = st.median;
	}
	for (size_t i = 0; i < pp->npairs; i++) {
		double b = run->timer->resolution_ns * 1e-3;

		if (pp->model)
			b = ng_clock_pair_bound_us(run->clock, pp->pairs[i].client, pp->pairs[i].server,
			                           (long double)run->clock->epoch_ns +
			                               (long double)last * 1e3L);
		bound = fmax(bound, b);
	}
	ng_row_number(row, "one_way_bound_us", bound);
	/* the two ends' clocks may be that far apart: each direction's
	 * systematic bound (result-format.md) */
	for (int dir = 0; dir < 2; dir++)
		ng_row_widen(row, keys[dir], "clock_offset", bound);
	if (!pp->model)
		return;
	/* An offset error e moves the two directions by -e and +e: a
	 * difference within twice the bound may be an asymmetric path that
	 * the two-way synchronisation took for an offset (doc/clock.md). */
	bool hidden = !(fabs(med[0] - med[1]) > 2.0 * bound);
	ng_row_json(row, "symmetry_assumed", json_boolean(hidden));
	if (hidden && !pp->sym_noted) {
		pp->sym_noted = true;
		ng_warn("pingpong: size %zu: the directions differ by %.3g us, within twice the clock "
		        "model's bound (%.3g us): two-way synchronisation cannot tell an asymmetric path "
		        "from a clock offset, so the one-way times assume symmetric paths (flagged "
		        "\"symmetry_assumed\" in the rows; doc/clock.md)",
		        smp->size, fabs(med[0] - med[1]), bound);
	}
}

/* Open loop, the reporter: what was offered and what came back, over the
 * clients (offered: their least; achieved: their least as a fraction of
 * their own offer), and whether it held (offered.h). */
static void ng_pp_open_row(struct ng_pp *pp, struct ng_row *row)
{
	const struct ng_sampler *smp = &pp->smp;
	struct ng_offered o = {0};

	for (size_t i = 0; i < pp->npairs; i++) {
		const double *t =
		    pp->nranks > 2 ? ng_sampler_tail_of(smp, pp->pairs[i].client) : ng_sampler_tail(smp);

		ng_offered_add(&o, &(struct ng_offered){
		                       .offered = t[NG_PP_TAIL_OFFERED],
		                       .achieved = t[NG_PP_TAIL_ACHIEVED],
		                       .peak = t[NG_PP_TAIL_PEAK],
		                       .growth = t[NG_PP_TAIL_GROWTH],
		                       /* half round trips: a period's queue adds half a period */
		                       .periods = t[NG_PP_TAIL_GROWTH] * 2.0 * t[NG_PP_TAIL_OFFERED] * 1e-6,
		                   });
	}
	ng_offered_row(row, "pingpong", smp->size, &o, pp->cfg.load > 0.0);
}

/* Gathers the samples of one size to the reporting rank and commits a row. */
static ng_status ng_pp_report(struct ng_pp *pp, size_t size)
{
	struct ng_run *run = pp->run;
	struct ng_sampler *smp = &pp->smp;
	const double *lat_x = ng_sampler_mine(smp, 0);
	size_t lat_n = ng_sampler_count(smp);
	json_t *pairs = NULL;
	double agg = 0.0;
	struct ng_row *row;
	ng_status st;

	if (pp->oneway)
		ng_pp_oneway_convert(pp);
	if (pp->nranks > 2 || pp->oneway) {
		st = ng_sampler_gather(smp);
		if (st != NG_OK)
			return st;
	}
	if (!ng_results_active(run->results))
		return NG_OK;

	if (pp->nranks > 2) {
		lat_x = ng_sampler_pool(smp, 0, pp->clients, pp->npairs, &lat_n);
		pairs = ng_pp_pairs_json(pp, run->results, (double)size, &agg);
		if (!pairs)
			return NG_ERR_NOMEM;
	}

	row = ng_sampler_row(smp, size);
	ng_sampler_row_stats(smp, row, "latency_us", lat_x, lat_n, NULL);
	ng_sampler_row_bw(smp, row, "bandwidth_MBps", lat_x, lat_n, (double)size, NULL);
	if (pairs) {
		ng_row_json(row, "pairs", pairs);
		ng_row_number(row, "aggregate_bandwidth_MBps", agg);
	}
	ng_sampler_row_raw(smp, row, "latency_us", lat_x, lat_n);
	if (pp->oneway)
		ng_pp_oneway_row(pp, row);
	if (pp->open)
		ng_pp_open_row(pp, row);
	return ng_row_commit(run->results, row);
}

/*
 * --one-way: which clock the readings go through, and the base they count
 * from.  Collective (bootstrap only).  NG_ERR_USAGE on every rank (said by
 * rank 0) where the ranks have no common clock: --sync off on ranks that
 * do not share one, or no model.
 */
static ng_status ng_pp_oneway_setup(struct ng_pp *pp)
{
	struct ng_run *run = pp->run;
	const struct ng_clock *clk = run->clock;
	ng_status st;

	st = ng_gclock_setup(&pp->gc, run, NG_GCLOCK_OFF_SHARED);
	if (st != NG_OK)
		return st;
	if (!pp->gc.on) {
		if (pp->me == 0)
			ng_error("pingpong: --one-way: the ranks do not share a clock (%s) and %s",
			         pp->gc.why ? pp->gc.why : "no reason known",
			         clk && clk->mode != NG_SYNC_OFF
			             ? "no clock model was fitted"
			             : "--sync off fits no model: use --sync auto or force");
		return NG_ERR_USAGE;
	}
	pp->model = pp->gc.model;
	pp->base = pp->gc.base;
	return NG_OK;
}

/* Allocates what the size loop needs, once. */
static ng_status ng_pp_setup(struct ng_pp *pp)
{
	struct ng_run *run = pp->run;
	size_t max = ng_sizes_max(run);
	struct ng_sampler_spec spec = {
	    .name = "pingpong",
	    .streams = pp->oneway ? 3 : 1,
	    .cap = run->count,
	    .pool = (size_t)pp->nranks / 2,
	    .flags = pp->nranks > 2 || pp->oneway ? NG_SAMPLER_GATHER : 0,
	    .tail = pp->open ? 4 : 0,
	};
	ng_status st;

	pp->npairs = (size_t)pp->nranks / 2;
	pp->pairs = calloc(pp->npairs, sizeof(*pp->pairs));
	if (!pp->pairs) {
		ng_error("pingpong: out of memory for %zu samples", run->count);
		return NG_ERR_NOMEM;
	}
	ng_pairs_choose(run->seed, pp->nranks, pp->pairs);
	ng_pairs_find(pp->pairs, pp->npairs, pp->me, &pp->peer, &pp->client);

	/* With --pp-echo same the server never sends from its send buffer. */
	pp->echo_same = pp->cfg.echo == NG_PP_ECHO_SAME;
	/* The buffers come right after the pairs and before everything else
	 * on the heap: with the sampler's small blocks in between, a 1-byte
	 * MPICH shared-memory round trip (360 ns) measured 10-20 ns longer. */
	st = ng_bufs_alloc(run->comm, pp->client || !pp->echo_same ? max : 0, max, &pp->bufs);
	if (st != NG_OK)
		return st;
	pp->clients = calloc(pp->npairs, sizeof(*pp->clients));
	if (!pp->clients) {
		ng_error("pingpong: out of memory for %zu samples", run->count);
		return NG_ERR_NOMEM;
	}
	for (size_t i = 0; i < pp->npairs; i++)
		pp->clients[i] = pp->pairs[i].client;
	if (pp->open && pp->client) {
		pp->sreq = calloc(run->count ? run->count : 1, sizeof(*pp->sreq));
		pp->rreq = calloc(run->count ? run->count : 1, sizeof(*pp->rreq));
		pp->quarter = calloc(run->count / 4 + 1, sizeof(*pp->quarter));
		if (!pp->sreq || !pp->rreq || !pp->quarter) {
			ng_error("pingpong: out of memory for %zu requests", run->count);
			return NG_ERR_NOMEM;
		}
	}
	return ng_sampler_init(&pp->smp, run, &spec);
}

/* Frees what ng_pp_setup allocated; safe after a partial setup. */
static void ng_pp_teardown(struct ng_pp *pp)
{
	ng_bufs_free(pp->run->comm, &pp->bufs);
	ng_sampler_free(&pp->smp);
	free(pp->clients);
	free(pp->pairs);
	free(pp->sreq);
	free(pp->rreq);
	free(pp->quarter);
	ng_gclock_free(&pp->gc);
}

/* --rate, --load: checks them (NG_ERR_USAGE, said by rank 0; offered.h). */
static ng_status ng_pp_open_setup(struct ng_pp *pp)
{
	ng_status st = ng_offered_check("pingpong", pp->run, pp->me, pp->cfg.rate, pp->cfg.load, &pp->open);

	if (st != NG_OK || !pp->open || !pp->cfg.oneway)
		return st;
	if (pp->me == 0)
		ng_error("pingpong: --rate and --load are not yet combined with --one-way");
	return NG_ERR_USAGE;
}

/* The session's steps (session.h). */
static ng_status ng_pp_session_setup(struct ng_session *s, void *state)
{
	struct ng_pp *pp = state;
	ng_status st;

	pp->run = s->run;
	pp->me = s->me;
	pp->nranks = s->nranks;
	pp->oneway = pp->cfg.oneway;
	st = ng_pp_open_setup(pp);
	if (st != NG_OK)
		return st;
	if (pp->oneway) {
		st = ng_pp_oneway_setup(pp);
		if (st != NG_OK)
			return st;
	}
	return ng_pp_setup(pp);
}

static ng_status ng_pp_measure(struct ng_session *s, void *state, size_t size)
{
	struct ng_pp *pp = state;

	ng_sampler_start(&pp->smp, s->run->warmup, s->run->count);
	if (pp->open && pp->client)
		return ng_pp_client_open(pp, size);
	return pp->client ? ng_pp_client(pp, size) : ng_pp_server(pp, size);
}

static ng_status ng_pp_session_report(struct ng_session *s, void *state, size_t size)
{
	(void)s;
	return ng_pp_report(state, size);
}

static void ng_pp_session_teardown(struct ng_session *s, void *state)
{
	(void)s;
	ng_pp_teardown(state);
}

static const struct ng_session_ops ng_pp_session = {
    .state = sizeof(struct ng_pp),
    .config = NG_SESSION_CONFIG(struct ng_pp, cfg),
    .setup = ng_pp_session_setup,
    .measure = ng_pp_measure,
    .report = ng_pp_session_report,
    .teardown = ng_pp_session_teardown,
};

static ng_status ng_pp_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_pp_session);
}

static const struct ng_option ng_pp_options[] = {
    {.name = "pp-echo",
     NG_CHOICE_AT(struct ng_pp_config, echo),
     .def = "separate",
     .help = "server answers from its own send buffer (as OSU, IMB, perftest) or from the receive buffer "
             "(as Netgauge)",
     .choices = "separate|same"},
    {.name = "rate",
     NG_DOUBLE_AT(struct ng_pp_config, rate),
     .def = "0",
     .metavar = "MSGS/S",
     .help = "open loop: messages leave on a schedule at this rate, latency from the scheduled "
             "departure (0: closed loop; pingpong, bw)"},
    {.name = "load",
     NG_DOUBLE_AT(struct ng_pp_config, load),
     .def = "0",
     .metavar = "FRACTION",
     .help = "open loop at this fraction of the peak rate measured per size (pingpong: a burst of "
             "pings; bw: one window)"},
    {.name = "one-way",
     NG_FLAG_AT(struct ng_pp_config, oneway),
     .help = "also the one-way time of each direction, from both ends' clocks on the global clock "
             "(--sync; doc/clock.md)"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_pingpong = {
    .by_time = true,
    .name = "pingpong",
    .desc = "round-trip latency and bandwidth; random pairs at once with more than 2 ranks",
    .options = ng_pp_options,
    .needs = NG_CAP_CHANNEL,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = true,
    .default_sizes = "1-1M",
    .run = ng_pp_run,
};
