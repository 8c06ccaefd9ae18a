/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The global clock (doc/clock.md): a model of every rank's clock against
 * rank 0's, fitted from ping-pong exchanges over the opened module's own
 * send/recv, or none where the ranks share one clock.
 *
 * Rank i's clock reads   local_i(T) = T + offset_i + drift_i * (T - epoch)
 * for rank 0's time T (ns of the chosen timer).  Each rank fits its model
 * against its parent in a binomial tree (pairs of one level exchange at once,
 * so the cost grows as log p), and the models and bounds are composed along
 * the path to rank 0: a rank's bound grows with its depth.  Each fit point is the
 * exchange of least round-trip time among a burst; its offset estimate is
 * off by at most half that round trip (rank 0's stamp lies inside it) when
 * the two directions take equally long, which two-way exchanges cannot
 * check.  The bound adds the fit's largest residual.
 *
 * Every call is collective over all ranks and blocking; it uses the
 * module's two-sided operations (NG_CAP_CHANNEL) between runs of a
 * pattern, never inside one.
 */
#ifndef NG_CLOCKSYNC_H
#define NG_CLOCKSYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "../timers/timer.h"
#include "bootstrap.h"
#include "module.h"
#include "status.h"

#include <jansson.h>

enum ng_sync_mode { NG_SYNC_AUTO, NG_SYNC_OFF, NG_SYNC_FORCE };

/* One rank's model (rank 0's is zero), as every rank holds it. */
struct ng_clock_rank {
	double offset_us;       /* local - rank 0's, at the epoch */
	double drift_ppm;       /* rate of the local clock against rank 0's */
	double bound_us;        /* the offset's error bound (symmetric paths) */
	double drift_bound_ppm; /* three standard errors of the drift */
	double min_rtt_us;      /* least round trip of the fit points */
	double resid_us;        /* the fit's largest residual */
	double points_used;     /* fit points kept (round trip near the least) */
	/* against the parent in the binomial tree (rank with its highest bit
	 * cleared), of which the fields above are composed along the path */
	int parent, depth;           /* the parent's rank; edges to rank 0 */
	double pair_offset_us;       /* local - the parent's, at the epoch */
	double pair_drift_ppm;       /* rate against the parent's clock */
	double pair_bound_us;        /* the pair's offset bound */
	double pair_drift_bound_ppm; /* the pair's drift bound */
	double inj_off_us;           /* test-only skew: the injected offset at the epoch */
	double inj_ppm;              /* test-only skew: the injected drift */
	double inj;                  /* 1 when this rank's clock carries a test-only skew */
	/* --sync-check */
	double chk_error_us;   /* measured minus predicted offset at the end */
	double chk_bound_us;   /* half the least round trip of the check */
	double chk_drift_ppm;  /* drift from the start and end phases */
	double chk_inj_off_us; /* test-only: the injected offset at the check */
	double chk_at_s;       /* the check's time after the epoch, s */
};

struct ng_clock {
	enum ng_sync_mode mode;
	bool shared;     /* the ranks share one clock: no model needed */
	bool fitted;     /* a model was fitted */
	bool checked;    /* --sync-check measured */
	const char *why; /* why shared / not fitted, for the result */
	int size;
	uint64_t epoch_ns;           /* rank 0's time (ns) the offsets refer to */
	double sync_s;               /* wall time of the fit, s (rank 0's clock) */
	int points, burst;           /* fit points, exchanges per point */
	struct ng_clock_rank *ranks; /* size entries, every rank; owned */
};

/*
 * Decides whether a model is needed (@mode, the hosts, @t) and fits it:
 * collective.  On success @clk is filled (free with ng_clock_free).  A module
 * without two-sided operations gets no model (said in the result).  Returns
 * NG_OK or the module's/bootstrap's error (reported).
 */
ng_status ng_clock_sync(struct ng_clock *clk, enum ng_sync_mode mode, struct ng_comm *c, struct ng_boot *b,
                        const struct ng_timer *t);

/* --sync-check: re-measures the offsets and stores how far the model drifted;
 * collective, a no-op without a fitted model. */
ng_status ng_clock_check(struct ng_clock *clk, struct ng_comm *c, struct ng_boot *b,
                         const struct ng_timer *t);

/* The result's "clock" block (a new reference), rank 0. */
json_t *ng_clock_json(const struct ng_clock *clk);

/* The largest offset bound over the ranks, µs (0 without a model). */
double ng_clock_bound_us(const struct ng_clock *clk);

/* Whether the ranks read one clock (one host, a timer that is one counter
 * there, no test-only skew), whatever --sync says; *@why_p says why (or
 * why not).  Collective (a bootstrap allgather); for a pattern that needs
 * to know under --sync off.  Returns the bootstrap's status. */
ng_status ng_clock_shared(struct ng_boot *b, const struct ng_timer *t, bool *shared_p, const char **why_p);

/* Rank @rank's time @local_ns (its timer as ng_timer_global() reads it, in
 * ns of its own calibration) as rank 0's time, ns, through the fitted model
 * (the inverse of local = T + offset + drift * (T - epoch)); @local_ns
 * itself without a fitted model. */
long double ng_clock_to_ref_ns(const struct ng_clock *clk, int rank, long double local_ns);

/* Rank 0's time @ref_ns (ns) as rank @rank's timer reads it (ns of its own
 * calibration): local = T + offset + drift * (T - epoch), the inverse of
 * ng_clock_to_ref_ns; @ref_ns itself without a fitted model. */
long double ng_clock_from_ref_ns(const struct ng_clock *clk, int rank, long double ref_ns);

/* The offset bound between ranks @a and @b at rank 0's time @at_ns: the sum
 * of their bounds (rank 0's is zero), each grown by its drift bound since
 * the epoch; 0 without a fitted model.  µs. */
double ng_clock_pair_bound_us(const struct ng_clock *clk, int a, int b, long double at_ns);

void ng_clock_free(struct ng_clock *clk);

#endif
