/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The machinery the two parameter assessments (loggp, plogp) share.
 *
 * Two ranks: rank 0 is the client (it sends and decides), rank 1 the server.
 * Per message size the client times rounds of four kinds, each ending with
 * the server's reply (a message of the same size), so rounds never overlap:
 *
 *   NG_AS_SINGLE  one message and the reply (loggp R1, plogp RTT);
 *   NG_AS_TRAIN   n messages back to back and the reply (RN, GAP);
 *   NG_AS_OS      n messages with busy-waits of d on the client's side
 *                 (RND, OS): the send overhead;
 *   NG_AS_OR      n messages back to back; the server busy-waits d before
 *                 its receives (ROR, OR): the receive overhead.
 *
 * Buffers, decided as for pingpong's default (--pp-echo separate): the
 * server replies from a send buffer of its own, never from the slot it has
 * just received into, so PRTT(1,0,s) and RTT(m) are the round trip that
 * pingpong, osu_latency and perftest measure.  Every kind of round ends
 * with the same reply, so the choice moves only the single round trip and
 * with it L; T, g, o_s and o_r are differences in which it cancels.  The
 * client sends from one buffer and receives into another.  With --verify
 * the reply carries the server's own payload.
 *
 * Shared here: settings (the options NAME-n, NAME-budget, NAME-ci,
 * NAME-delay, -c, -w), buffers (two banks of n receive slots on the server,
 * pre-posted where the module is non-blocking, a batch starting after the
 * server's 1-byte "go"), the SINGLE and TRAIN rounds, the server's side of
 * every round but its OR receives, batches of interleaved rounds, the probe
 * and the adaptive sampling until the 95% CI half-widths are at most
 * NAME-ci times the scale, or 1000 rounds, or the size's share of the
 * budget is spent, and the steps of the measurement session (session.h)
 * that runs them over the sizes.  The run's --ci-target and
 * --max-time (patterns/engine/sampler.h, adaptive stopping) map onto this
 * machinery: --ci-target REL replaces NAME-ci, -c becomes the floor of
 * rounds, and --max-time SEC bounds the size's share of the budget; the
 * question between batches is this file's (ng_as_decide), not the
 * sampler's, since its rounds interleave four kinds with counts of their own.
 *
 * A pattern embeds struct ng_as as its first member and gives an
 * ng_as_ops: its timed OS round (client) and OR receives (server), which
 * measure differently, its figures for the sampling decision and its report.
 * The ops are called between rounds, never inside a timed region.  Its
 * session's state is its state, its setup step calls ng_as_setup with its
 * ops, and the other steps are the ones below:
 *
 *   static ng_status ng_lg_setup_step(struct ng_session *s, void *state)
 *   {
 *       return ng_as_setup(s, state, &ng_lg_ops);
 *   }
 *   static const struct ng_session_ops ng_lg_session = {
 *       .state = sizeof(struct ng_lg),
 *       .setup = ng_lg_setup_step,
 *       .measure = ng_as_measure,
 *       .report = ng_as_report,
 *       .conclude = ng_as_conclude,
 *       .teardown = ng_as_teardown,
 *   };
 *
 * The samples live in a sampler (patterns/engine/sampler.h), one stream per kind of
 * round (enum ng_as_kind) and the pattern's own after them; its statistics
 * and rows come from there too.  The loop is not the sampler's: a size is
 * sampled in batches of four kinds of rounds, interleaved, with a decision
 * of both ranks between batches, and each kind has its own number of
 * samples, so the rounds append to their streams (ng_sampler_push) and the
 * batches are counted here.
 */
#ifndef NG_PATTERNS_ASSESS_H
#define NG_PATTERNS_ASSESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/loggp.h"
#include "sampler.h"
#include "session.h"

/* What an assessment asks of the driver (initializers of struct ng_pattern):
 * one client and one server, reliable two-sided messages. */
#define NG_AS_PATTERN_NEEDS                                                                                  \
	.needs = NG_CAP_CHANNEL | NG_CAP_RELIABLE, .min_ranks = 2, .max_ranks = 2, .even_ranks = true,       \
	.adaptive = true

/* The kinds of rounds, which are also the streams of their samples. */
enum ng_as_kind {
	NG_AS_SINGLE,
	NG_AS_TRAIN,
	NG_AS_OS,
	NG_AS_OR,
	NG_AS_NKINDS /* the pattern's own streams follow */
};

struct ng_as;

struct ng_as_ops {
	const char *name; /* the pattern: messages and the option prefix "NAME-" */
	bool per_call;    /* OS and OR rounds give n samples (one per call), else one */
	size_t streams;   /* streams of its own after the kinds' (NG_AS_NKINDS, ...) */
	/*
	 * The client's OS round, from its first timer read to its last: the n
	 * sends of @size bytes from as->bufs.send with busy-waits of @d_ticks,
	 * then the reply into as->bufs.recv.  When @timed, appends its samples
	 * to the stream NG_AS_OS.  The caller fills and checks the payloads.
	 */
	ng_status (*client_os)(struct ng_as *as, size_t size, uint64_t d_ticks, bool timed);
	/*
	 * The server's receives of an OR round: n messages of @size bytes into
	 * the slots of bank as->bank, with busy-waits of @d_ticks.  When @timed,
	 * appends its samples to the stream NG_AS_OR.  The caller replies.
	 */
	ng_status (*server_or)(struct ng_as *as, size_t size, uint64_t d_ticks, bool timed);
	/* The client's figures for the size so far: the delay d to use without
	 * --NAME-delay, the scale of the CI target and the largest CI half-width
	 * it measured (us). */
	void (*client_ctl)(struct ng_as *as, double *delay_p, double *scale_p, double *hw_p);
	/* The server's largest CI half-width (us); called when it holds o_r
	 * samples. */
	double (*server_hw)(struct ng_as *as);
	/* Optional: allocates the pattern's own state after the shared one
	 * (errors reported); teardown frees it, also after a partial setup. */
	ng_status (*setup)(struct ng_as *as);
	void (*teardown)(struct ng_as *as);
	/* Rank 0 with results: one size's row and block entry (every sample of
	 * the size is here, the server's o_r ones too); @d_us the delay used. */
	ng_status (*report)(struct ng_as *as, size_t size, double d_us);
	/* Rank 0 with results, after the last size: the parameters. */
	ng_status (*finish)(struct ng_as *as);
};

/* The options every pattern on this engine declares as NAME-n,
 * NAME-budget, NAME-ci and NAME-delay, read into its state's as.cfg by
 * the session (its table: NG_INT_AT(struct ng_lg, as.cfg.n), ...). */
struct ng_as_config {
	long long n;     /* messages per train */
	double budget_s; /* time for all sizes when adaptive */
	double ci;       /* the relative CI target */
	double delay_us; /* the delay d; 0: derived */
};

struct ng_as {
	struct ng_as_config cfg; /* read by the session (NG_SESSION_CONFIG_STATE) */
	const struct ng_as_ops *ops;
	struct ng_run *run;
	struct ng_comm *c;
	const struct ng_timer *tm;
	int me, peer;
	bool client;
	bool prepost;
	/* settings */
	size_t n;     /* messages per train */
	size_t fixed; /* -c: rounds per kind, 0 = adaptive */
	size_t warmup;
	size_t cap; /* rounds per kind the sample arrays hold */
	double budget_us, ci_rel, delay_opt_us;
	/* --ci-target (run->ci_target > 0): it replaces --NAME-ci, -c is the
	 * floor of rounds per kind instead of a fixed count, and --max-time
	 * bounds each size's share of the budget */
	size_t floor;
	double max_size_us; /* 0: no bound but the share */
	/* buffers */
	struct ng_bufs bufs;
	size_t stride;       /* between receive slots */
	struct ng_req *reqs; /* [n] */
	unsigned bank;       /* receive bank of the next round (0/1) */
	uint64_t round;      /* rounds so far: the --verify iteration */
	double delay_us;     /* the delay d the current size used */
	/* samples of the current size (us), a stream per kind: SINGLE and TRAIN
	 * round times, the OS and OR samples (the client holds zeros for the
	 * server's OR samples until the size ends, then the server's) */
	struct ng_sampler smp;
	/* results, rank 0 */
	json_t *sizes;   /* the block's "sizes" array */
	uint64_t t_run0; /* start of the run (ticks) */
	/* the size being measured again (ng_as_remeasure): its index in
	 * run->sizes + 1; 0 in the loop over the sizes */
	size_t redo;
};

/* ---- the session's steps (session.h) --------------------------------------- */

/*
 * Setup: @as, the first member of the pattern's state (the session's zeroed
 * block), is set up with @ops: the settings (NG_ERR_USAGE said by rank 0),
 * the samples, the buffers, ops->setup; the budget counts from its end.
 * Errors reported; ng_as_teardown frees what it allocated.
 */
ng_status ng_as_setup(struct ng_session *s, struct ng_as *as, const struct ng_as_ops *ops);

/* Measure: one size, the probe and the batches of rounds until the client's
 * decision stops them (budget, CI target, rounds). */
ng_status ng_as_measure(struct ng_session *s, void *state, size_t size);

/* Report: the server's o_r samples to the client, then ops->report on the
 * reporting rank (collective: both ranks call it). */
ng_status ng_as_report(struct ng_session *s, void *state, size_t size);

/* Conclude, after every size: ops->finish on the reporting rank. */
ng_status ng_as_conclude(struct ng_session *s, void *state);

/*
 * Measuring sizes again, from a pattern's conclude step before it calls
 * ng_as_conclude (collective: both ranks call both, alike).
 * ng_as_agree: the client's @list[0..*n_p) of indices into run->sizes (at
 * most @cap; the server's input is ignored) becomes every rank's, in @list
 * and *n_p; NG_ERR_PROTO when what arrives names no measured size.
 * ng_as_remeasure: the size run->sizes[@index] measured again as in the
 * loop (probe, batches), the client spending at most @budget_us on it
 * beyond its first batch, and reported with as->redo = @index + 1, so that
 * ops->report knows the size was measured before (and may replace its row,
 * core/results.h ng_row_replace).
 */
ng_status ng_as_agree(struct ng_as *as, size_t *list, size_t *n_p, size_t cap);
ng_status ng_as_remeasure(struct ng_session *s, struct ng_as *as, size_t index, double budget_us);

/* Teardown: ops->teardown, then what ng_as_setup allocated; safe after a
 * partial setup. */
void ng_as_teardown(struct ng_session *s, void *state);

/* Busy-waits @ticks; returns the ticks that really passed. */
static inline uint64_t ng_as_spin(const struct ng_timer *tm, uint64_t ticks)
{
	uint64_t t0 = ng_timer_now(tm), t1;

	do {
		t1 = ng_timer_now(tm);
	} while (t1 - t0 < ticks);
	return t1 - t0;
}

/* The samples of @stream (enum ng_as_kind, or the pattern's own) so far. */
static inline double *ng_as_x(const struct ng_as *as, size_t stream)
{
	return ng_sampler_mine(&as->smp, stream);
}
static inline size_t ng_as_n(const struct ng_as *as, size_t stream)
{
	return ng_sampler_n(&as->smp, stream);
}

/* Receive slot @k of @bank (server). */
static inline void *ng_as_slot(const struct ng_as *as, unsigned bank, size_t k)
{
	return (char *)as->bufs.recv + (bank * as->n + k) * as->stride;
}

/* ---- reporting ----------------------------------------------------------- */

/* One parameter of the result format: {"value", "ci95": [lo, hi|null],
 * "note"}, or {"value": null, "flag"}. */
json_t *ng_as_param_json(const struct ng_param *p);

/* The systematic bounds of this run's figures (analysis/loggp.h): the
 * timer's resolution, read overhead and drift as known now (the drift of
 * the start calibration; its end-of-run recheck widens the rows' STATS,
 * not the parameters), and the bound the module's report() gives (its
 * descriptor's bound_key: emu's overshoot; called here, after the last
 * timed round), messages per train as->n. */
void ng_as_systematic(struct ng_as *as, struct ng_loggp_sys *sys);

/* "12", "4K", "1M": the table's form of a size (ng_fmt_size). */
void ng_as_human_size(size_t v, char *buf, size_t len);

#endif
