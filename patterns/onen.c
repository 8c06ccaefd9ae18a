/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 1n and n1: one server rank against all the others (the clients).
 *
 * The server is chosen at random, seeded with --seed (ng_server_pick), so
 * every rank agrees on it without talking.  One iteration is one round:
 *
 *   n1: every client sends one message of @size bytes to the server; the
 *       server receives them all, then replies 1 byte to each client.  Each
 *       client times its round, from just before its send to its reply.
 *   1n: the server sends @size bytes to every client; each client replies
 *       1 byte once it has the message.  The server times the round, from
 *       just before its first send to the last reply, and notes when each
 *       client's reply arrived.
 *
 * Both are one loop seen from two sides: the *active* side sends @size
 * bytes to its peers and times until every peer's 1-byte reply is in (n1:
 * each client, its peer being the server; 1n: the server, its peers all
 * clients); the *passive* side receives @size bytes from each peer and
 * replies.  With NG_CAP_NONBLOCK the active side posts its sends with isend
 * and, with several peers, polls them and the pre-posted reply receives with
 * test, recording each reply's arrival (with one peer it simply waits); the
 * passive side pre-posts its receives (one slot per peer) and replies with
 * isend.  Without it, everything is blocking and goes in rank order.
 *
 * Buffers: every side sends from its send buffer and receives into slots of
 * its receive buffer (one per peer); a reply never goes out of a receive
 * slot.  This is pingpong's default (--pp-echo separate), the buffer use of
 * osu_latency and perftest, and needed no change when pingpong's became it.
 *
 * Reported per size (see doc/result-format.md):
 *   time_us                   the round: per iteration, the longest time any
 *                             active rank measured (n1: the slowest client's
 *                             round; 1n: the server's round)
 *   bandwidth_per_client_MBps size / time, per iteration
 *   aggregate_bandwidth_MBps  clients * size / time, per iteration
 *   per_client                each client's time from the start of its
 *                             round to its reply, and size / that time
 *
 * Each size begins together (after the first receives are pre-posted): with
 * a common clock (--sync auto or force, patterns/engine/gclock.h) at a start time
 * rank 0 sets a margin ahead on the global clock, every rank spinning until
 * then on its own clock; the row then says how far apart the ranks actually
 * started (start_spread_us: max - min over all ranks of their starts on
 * the global clock; the true spread lies within start_spread_us +
 * start_bound_us), and whether any rank arrived after the start time
 * (start_late).  One window per size, not per iteration: the iterations of
 * a size run back to back (a round's end is the next one's start, as
 * before), and a window per iteration would put a spin of the margin and a
 * bootstrap broadcast between rounds, measuring a rested network instead
 * of the back-to-back traffic.  Without a common clock (--sync off) a
 * barrier precedes each size, as before, and the row has no start keys.
 *
 * --verify: payloads depend on size, sender and iteration; senders fill
 * before their timer starts, and receivers check after their reply is out
 * (passive side) or after the timer stopped (active side).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/gclock.h"
#include "engine/sampler.h"
#include "engine/session.h"

/* The 1-byte reply that closes a round. */
#define NG_ONEN_REPLY 1

enum ng_onen_dir {
	NG_ONEN_1N, /* the server sends, the clients reply */
	NG_ONEN_N1, /* the clients send, the server replies */
};

/* Everything one run needs: the session's state block (session.h). */
struct ng_onen {
	struct ng_run *run;
	enum ng_onen_dir dir;
	const char *name; /* pattern name, for messages */
	int me;
	int nranks;
	int server;
	bool active; /* sends @size and times the round */
	bool nb;     /* the module has NG_CAP_NONBLOCK */
	int *peers;  /* server: all clients ascending; client: the server */
	size_t npeers;
	size_t nclients;
	struct ng_bufs bufs;  /* send: one message; recv: one slot per peer */
	size_t stride;        /* between receive slots */
	struct ng_req *rreqs; /* [npeers] */
	struct ng_req *sreqs; /* [npeers] */
	bool *rdone;          /* [npeers] active, non-blocking */
	bool *sdone;          /* [npeers] active, non-blocking */
	uint64_t *tdone;      /* [npeers] reply arrival, ticks */
	/* The round times (active ranks; the passive ones hold zeros), gathered
	 * for their maximum per iteration; and, apart since their number differs
	 * between ranks, each peer's reply arrival (us), whose statistics are
	 * computed where they are measured. */
	struct ng_sampler rounds;  /* one stream */
	struct ng_sampler arrival; /* [npeers] streams, active ranks */
	double *packed;            /* [nranks * 2 * NG_STATS_PACKED] per-client stats */
	struct ng_gclock *gc;      /* the session's: each size's window start */
};

static void *ng_onen_slot(const struct ng_onen *o, size_t j)
{
	return (unsigned char *)o->bufs.recv + j * o->stride;
}

/* The client rank the figures of peer @j are about. */
static int ng_onen_client_of(const struct ng_onen *o, size_t j)
{
	return o->me == o->server ? o->peers[j] : o->me;
}

/* Pre-posts one receive of @len bytes from every peer (non-blocking only). */
static ng_status ng_onen_post(struct ng_onen *o, size_t len)
{
	struct ng_comm *c = o->run->comm;
	ng_status st;

	for (size_t j = 0; j < o->npeers; j++) {
		st = ng_irecv(c, o->peers[j], ng_onen_slot(o, j), len, &o->rreqs[j]);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* Sends @len bytes from @buf to every peer and waits until all are sent. */
static ng_status ng_onen_send_all(struct ng_onen *o, const void *buf, size_t len)
{
	struct ng_comm *c = o->run->comm;
	ng_status st;

	for (size_t j = 0; j < o->npeers; j++) {
		if (o->nb)
			st = ng_isend(c, o->peers[j], buf, len, &o->sreqs[j]);
		else
			st = ng_send(c, o->peers[j], buf, len);
		if (st != NG_OK)
			return st;
	}
	return o->nb ? ng_waitall(c, o->sreqs, o->npeers) : NG_OK;
}

/* Checks the message of @len bytes every peer sent in iteration @it. */
static ng_status ng_onen_check(const struct ng_onen *o, size_t len, size_t it)
{
	ng_status st;

	for (size_t j = 0; j < o->npeers; j++) {
		int peer = o->peers[j];

		st = ng_verify_check(ng_onen_slot(o, j), len, ng_verify_tag(len, peer, it), peer);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/*
 * The timed part of one active round: sends @size bytes to every peer and
 * waits for all replies, noting in o->tdone when each arrived.  Non-blocking:
 * polls every outstanding send and reply with test, so each makes progress
 * and each reply's arrival is seen when it happens.
 */
static ng_status ng_onen_active_round(struct ng_onen *o, size_t size)
{
	const struct ng_timer *tm = o->run->timer;
	struct ng_comm *c = o->run->comm;
	const void *sbuf = o->bufs.send;
	size_t pending = 2 * o->npeers;
	ng_status st;

	if (!o->nb) {
		for (size_t j = 0; j < o->npeers; j++) {
			st = ng_send(c, o->peers[j], sbuf, size);
			if (st != NG_OK)
				return st;
		}
		for (size_t j = 0; j < o->npeers; j++) {
			st = ng_recv(c, o->peers[j], ng_onen_slot(o, j), NG_ONEN_REPLY);
			if (st != NG_OK)
				return st;
			o->tdone[j] = ng_timer_now(tm);
		}
		return NG_OK;
	}

	for (size_t j = 0; j < o->npeers; j++) {
		st = ng_isend(c, o->peers[j], sbuf, size, &o->sreqs[j]);
		if (st != NG_OK)
			return st;
	}
	/* One peer (an n1 client): nothing to tell apart, so block in wait
	 * and leave the CPU to others where the module can sleep. */
	if (o->npeers == 1) {
		st = ng_wait(c, &o->sreqs[0]);
		if (st != NG_OK)
			return st;
		st = ng_wait(c, &o->rreqs[0]);
		o->tdone[0] = ng_timer_now(tm);
		return st;
	}
	while (pending) {
		for (size_t j = 0; j < o->npeers; j++) {
			bool done;

			if (!o->sdone[j]) {
				st = ng_test(c, &o->sreqs[j], &done);
				if (st != NG_OK)
					return st;
				if (done) {
					o->sdone[j] = true;
					pending--;
				}
			}
			if (!o->rdone[j]) {
				st = ng_test(c, &o->rreqs[j], &done);
				if (st != NG_OK)
					return st;
				if (done) {
					o->tdone[j] = ng_timer_now(tm);
					o->rdone[j] = true;
					pending--;
				}
			}
		}
	}
	return NG_OK;
}

/* The active side of one size: --warmup + --count timed rounds. */
static ng_status ng_onen_active(struct ng_onen *o, size_t size)
{
	const struct ng_run *run = o->run;
	const struct ng_timer *tm = run->timer;
	ng_status st;

	for (uint64_t it = 0; ng_sampler_more(&o->rounds, it); it++) {
		uint64_t t0, t1;

		if (run->verify)
			ng_verify_fill(o->bufs.send, size, ng_verify_tag(size, o->me, it));
		if (o->nb) {
			memset(o->sdone, 0, o->npeers * sizeof(*o->sdone));
			memset(o->rdone, 0, o->npeers * sizeof(*o->rdone));
		}

		t0 = ng_timer_now(tm);
		st = ng_onen_active_round(o, size);
		if (st != NG_OK)
			return st;
		t1 = ng_timer_now(tm);

		ng_sampler_add(&o->rounds, 0, it, ng_timer_us(tm, t1 - t0));
		for (size_t j = 0; j < o->npeers; j++)
			ng_sampler_add(&o->arrival, j, it, ng_timer_us(tm, o->tdone[j] - t0));
		if (run->verify) {
			st = ng_onen_check(o, NG_ONEN_REPLY, it);
			if (st != NG_OK)
				return st;
		}
		if (o->nb && ng_sampler_more(&o->rounds, it + 1)) {
			st = ng_onen_post(o, NG_ONEN_REPLY);
			if (st != NG_OK)
				return st;
		}
	}
	return NG_OK;
}

/* The passive side of one size: receives @size bytes from every peer and
 * replies 1 byte to each, --warmup + --count times. */
static ng_status ng_onen_passive(struct ng_onen *o, size_t size)
{
	const struct ng_run *run = o->run;
	struct ng_comm *c = run->comm;
	bool verify = run->verify;
	ng_status st;

	for (uint64_t it = 0; ng_sampler_more(&o->rounds, it); it++) {
		bool more = ng_sampler_more(&o->rounds, it + 1);

		/* The reply is ours: fill it while the data is on its way. */
		if (verify)
			ng_verify_fill(o->bufs.send, NG_ONEN_REPLY, ng_verify_tag(NG_ONEN_REPLY, o->me, it));

		if (o->nb) {
			st = ng_waitall(c, o->rreqs, o->npeers);
		} else {
			st = NG_OK;
			for (size_t j = 0; j < o->npeers && st == NG_OK; j++)
				st = ng_recv(c, o->peers[j], ng_onen_slot(o, j), size);
		}
		if (st != NG_OK)
			return st;
		/* Without --verify the slots are free at once: have the next
		 * receives posted before the peers can send again. */
		if (o->nb && more && !verify) {
			st = ng_onen_post(o, size);
			if (st != NG_OK)
				return st;
		}

		st = ng_onen_send_all(o, o->bufs.send, NG_ONEN_REPLY);
		if (st != NG_OK)
			return st;

		if (verify) {
			st = ng_onen_check(o, size, it);
			if (st != NG_OK)
				return st;
			if (o->nb && more) {
				st = ng_onen_post(o, size);
				if (st != NG_OK)
					return st;
			}
		}
	}
	return NG_OK;
}

/* The per_client array of a row; NULL on out-of-memory (reported). */
static json_t *ng_onen_clients_json(const struct ng_onen *o, const struct ng_stats *pcs)
{
	json_t *arr = json_array();

	if (!arr)
		goto err_nomem;
	for (int r = 0; r < o->nranks; r++) {
		json_t *e;

		if (r == o->server)
			continue;
		e = json_pack("{s:i, s:o, s:o}", "rank", r, "time_us", ng_stats_json(&pcs[2 * r]),
		              "bandwidth_MBps", ng_stats_json(&pcs[2 * r + 1]));
		if (!e || json_array_append_new(arr, e) != 0)
			goto err_free_arr;
	}
	return arr;

err_free_arr:
	json_decref(arr);
err_nomem:
	ng_error("%s: out of memory building the result row", o->name);
	return NULL;
}

/*
 * Brings one size's figures to the reporting rank and commits its row.
 * Collective.  Per-client statistics are computed where the times are (the
 * active ranks) and merged by a sum over zero-filled slots, since exactly one
 * rank knows each client; the round times are merged by a maximum (passive
 * ranks contribute zeros).
 */
static ng_status ng_onen_report(struct ng_onen *o, size_t size)
{
	struct ng_run *run = o->run;
	size_t count = ng_sampler_count(&o->rounds), npacked = (size_t)o->nranks * 2 * NG_STATS_PACKED;
	struct ng_sampler *smp = &o->rounds;
	struct ng_stats *pcs = NULL;
	const double *round;
	json_t *clients;
	struct ng_row *row;
	ng_status st;

	memset(o->packed, 0, npacked * sizeof(*o->packed));
	for (size_t j = 0; o->active && j < o->npeers; j++) {
		double *dst = o->packed + (size_t)ng_onen_client_of(o, j) * 2 * NG_STATS_PACKED;
		const double *x = ng_sampler_mine(&o->arrival, j);
		struct ng_stats ct_st, cbw_st;

		ng_sampler_stats(&o->arrival, x, count, &ct_st);
		ng_sampler_bw(&o->arrival, x, count, (double)size, &cbw_st);
		ng_stats_pack(&ct_st, dst);
		ng_stats_pack(&cbw_st, dst + NG_STATS_PACKED);
	}
	st = ng_gclock_end(o->gc);
	if (st != NG_OK)
		return st;
	st = ng_boot_sum(run->boot, o->packed, npacked);
	if (st != NG_OK)
		return st;
	st = ng_sampler_gather(smp);
	if (st != NG_OK)
		return st;
	if (!ng_results_active(run->results))
		return NG_OK;

	pcs = calloc((size_t)o->nranks * 2, sizeof(*pcs));
	if (!pcs) {
		ng_error("%s: out of memory building the result row", o->name);
		return NG_ERR_NOMEM;
	}
	ng_stats_unpack_n(o->packed, (size_t)o->nranks * 2, pcs);
	clients = ng_onen_clients_json(o, pcs);
	free(pcs);
	if (!clients)
		return NG_ERR_NOMEM;

	round = ng_sampler_max(smp, 0);
	row = ng_sampler_row(smp, size);
	ng_sampler_row_stats(smp, row, "time_us", round, count, NULL);
	ng_sampler_row_bw(smp, row, "bandwidth_per_client_MBps", round, count, (double)size, NULL);
	ng_sampler_row_bw(smp, row, "aggregate_bandwidth_MBps", round, count,
	                  (double)o->nclients * (double)size, NULL);
	/* Ranks and counts as JSON integers, not reals. */
	ng_row_json(row, "clients", json_integer((json_int_t)o->nclients));
	ng_row_json(row, "server", json_integer(o->server));
	ng_row_json(row, "per_client", clients);
	ng_gclock_row(o->gc, row);
	ng_sampler_row_raw(smp, row, "time_us", round, count);
	return ng_row_commit(run->results, row);
}

/* Allocates what the size loop needs, once. */
static ng_status ng_onen_setup(struct ng_onen *o)
{
	struct ng_run *run = o->run;
	size_t count = run->count, max = ng_sizes_max(run);
	size_t send_len, slot_len;
	struct ng_sampler_spec rounds = {.name = o->name, .cap = count, .flags = NG_SAMPLER_GATHER};
	struct ng_sampler_spec arrival = {.name = o->name, .cap = count};
	ng_status st;

	o->server = ng_server_pick(run->seed, o->nranks);
	o->nclients = (size_t)o->nranks - 1;
	o->active = (o->dir == NG_ONEN_N1) == (o->me != o->server);
	o->nb = (run->comm->caps & NG_CAP_NONBLOCK) != 0;
	o->npeers = o->me == o->server ? o->nclients : 1;

	o->peers = calloc(o->npeers, sizeof(*o->peers));
	o->rreqs = calloc(o->npeers, sizeof(*o->rreqs));
	o->sreqs = calloc(o->npeers, sizeof(*o->sreqs));
	o->rdone = calloc(o->npeers, sizeof(*o->rdone));
	o->sdone = calloc(o->npeers, sizeof(*o->sdone));
	o->tdone = calloc(o->npeers, sizeof(*o->tdone));
	o->packed = calloc((size_t)o->nranks * 2 * NG_STATS_PACKED, sizeof(*o->packed));
	if (!o->peers || !o->rreqs || !o->sreqs || !o->rdone || !o->sdone || !o->tdone || !o->packed) {
		ng_error("%s: out of memory for %zu peers and %zu samples", o->name, o->npeers, count);
		return NG_ERR_NOMEM;
	}
	arrival.streams = o->active ? o->npeers : 1;
	st = ng_sampler_init(&o->rounds, run, &rounds);
	if (st == NG_OK)
		st = ng_sampler_init(&o->arrival, run, &arrival);
	if (st != NG_OK)
		return st;

	if (o->me == o->server) {
		size_t j = 0;

		for (int r = 0; r < o->nranks; r++)
			if (r != o->server)
				o->peers[j++] = r;
	} else {
		o->peers[0] = o->server;
	}

	/* Active: one message out, a reply slot per peer.  Passive: a slot of
	 * the largest size per peer, one reply out. */
	send_len = o->active ? max : NG_ONEN_REPLY;
	slot_len = o->active ? NG_ONEN_REPLY : max;
	o->stride = ng_slot_stride(slot_len);
	return ng_bufs_alloc(run->comm, send_len, o->npeers * o->stride, &o->bufs);
}

/* Frees what ng_onen_setup allocated; safe after a partial setup. */
static void ng_onen_teardown(struct ng_onen *o)
{
	ng_bufs_free(o->run->comm, &o->bufs);
	ng_sampler_free(&o->arrival);
	ng_sampler_free(&o->rounds);
	free(o->packed);
	free(o->tdone);
	free(o->sdone);
	free(o->rdone);
	free(o->sreqs);
	free(o->rreqs);
	free(o->peers);
}

/* The session's steps (session.h).  Each size: every rank agrees to go on
 * (the session), arms (the samplers' start, the first receives pre-posted),
 * starts together (a window, or without a common clock a barrier:
 * NG_SESSION_BARRIER), measures. */
static ng_status ng_onen_session_setup(struct ng_session *s, void *state, enum ng_onen_dir dir)
{
	struct ng_onen *o = state;

	o->run = s->run;
	o->dir = dir;
	o->name = s->pattern->name;
	o->me = s->me;
	o->nranks = s->nranks;
	o->gc = &s->gc;
	return ng_onen_setup(o);
}

static ng_status ng_onen_setup_1n(struct ng_session *s, void *state)
{
	return ng_onen_session_setup(s, state, NG_ONEN_1N);
}

static ng_status ng_onen_setup_n1(struct ng_session *s, void *state)
{
	return ng_onen_session_setup(s, state, NG_ONEN_N1);
}

/* After the agreement to go on, before the start: every first receive is
 * posted before anyone sends (unless a rank arrives after the start time:
 * then the row says so). */
static ng_status ng_onen_arm(struct ng_session *s, void *state, size_t size)
{
	struct ng_onen *o = state;

	ng_sampler_start(&o->rounds, s->run->warmup, s->run->count);
	ng_sampler_start(&o->arrival, s->run->warmup, s->run->count);
	if (o->nb)
		return ng_onen_post(o, o->active ? NG_ONEN_REPLY : size);
	return NG_OK;
}

static ng_status ng_onen_measure(struct ng_session *s, void *state, size_t size)
{
	struct ng_onen *o = state;

	(void)s;
	return o->active ? ng_onen_active(o, size) : ng_onen_passive(o, size);
}

static ng_status ng_onen_session_report(struct ng_session *s, void *state, size_t size)
{
	(void)s;
	return ng_onen_report(state, size);
}

static void ng_onen_session_teardown(struct ng_session *s, void *state)
{
	(void)s;
	ng_onen_teardown(state);
}

/* What the two sessions share (initializers of struct ng_session_ops). */
#define NG_ONEN_SESSION_COMMON                                                                               \
	.state = sizeof(struct ng_onen), .flags = NG_SESSION_WINDOWS | NG_SESSION_BARRIER,                   \
	.arm = ng_onen_arm, .measure = ng_onen_measure, .report = ng_onen_session_report,                    \
	.teardown = ng_onen_session_teardown

static const struct ng_session_ops ng_onen_session_1n = {
    .setup = ng_onen_setup_1n,
    NG_ONEN_SESSION_COMMON,
};

static const struct ng_session_ops ng_onen_session_n1 = {
    .setup = ng_onen_setup_n1,
    NG_ONEN_SESSION_COMMON,
};

static ng_status ng_onen_run_1n(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_onen_session_1n);
}

static ng_status ng_onen_run_n1(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_onen_session_n1);
}

/* What 1n and n1 share: the same loop seen from two sides, so the same needs
 * and defaults (initializers of struct ng_pattern). */
#define NG_ONEN_PATTERN_COMMON                                                                               \
	.options = NULL, .needs = NG_CAP_CHANNEL, .min_ranks = 2, .max_ranks = 0, .even_ranks = false,       \
	.default_sizes = "1-1M"

const struct ng_pattern ng_pattern_1n = {
    .name = "1n",
    .desc = "one random server sends to all other ranks, each replies; round time and bandwidth",
    NG_ONEN_PATTERN_COMMON,
    .run = ng_onen_run_1n,
};

const struct ng_pattern ng_pattern_n1 = {
    .name = "n1",
    .desc = "all ranks send to one random server, which replies to each; round time and bandwidth",
    NG_ONEN_PATTERN_COMMON,
    .run = ng_onen_run_n1,
};
