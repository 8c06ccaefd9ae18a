/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * skew: does the transfer progress while the target is busy elsewhere?
 *
 * The target computes X microseconds (patterns/engine/compute.h) before it takes
 * part: two-sided, after telling the sender to start and before posting its
 * receives; one-sided (--skew-rma), between its post and its wait, as in the
 * MPI-2 one-sided paper's process-skew test (§5.6).  The origin (rank 0)
 * times its whole operation: the isends and their completion, or start, the
 * puts and complete (the protocol is in progress.h).  Reported per size: the
 * origin's time against X (--skew-compute, by default 12 lengths from 0 to 4
 * T(0), T(0) the origin's time without skew) and the slope of that line with
 * its 95% CI: microseconds of origin time per microsecond of skew, 0 when the transfer
 * progresses without the target (RDMA writes, eager messages into buffers),
 * 1 when the origin waits for the target to come back (a rendezvous, or
 * operations the target applies in its own calls).
 *
 * The slope is an ordinary least-squares line (ng_fit_line, GSL) through the
 * origin's median times against the target's median computations, its CI
 * t(0.975, K - 2) standard errors with the covariance scaled by the
 * residuals: a line that does not describe the points (a dependence that
 * sets in only once the skew exceeds what the transport buffers) widens the
 * interval.  Unweighted on purpose: the medians' own CIs are asymmetric on a
 * busy host (a few long iterations widen the upper side only), and weighting
 * by them would let the shortest skews decide the slope alone.
 *
 * Rows (one per size and length): "skew_us" (the X asked for), "time_us"
 * (the origin's operation), "skew_measured_us" (the target's computation as
 * timed).  Block "skew": the settings, the calibration, and per size T(0),
 * the slope and the intercept.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loggp.h"
#include "engine/progress.h"

struct ng_sk {
	struct ng_pg pg; /* first */
	json_t *sizes;   /* the block's "sizes" */
};

static ng_status ng_sk_block(struct ng_sk *sk)
{
	struct ng_pg *pg = &sk->pg;
	json_t *b =
	    json_pack("{s:s, s:I, s:s, s:s, s:s, s:o, s:O}", "mode", ng_pg_mode(pg), "burst",
	              (json_int_t)pg->burst, "compute_spec", pg->spec_text, "target_computes",
	              pg->rma ? "between its post and its wait" : "before it posts its receives", "slope",
	              "least squares of the origin's median time against the target's median computation; "
	              "us of origin time per us of skew (0: independent progress, 1: fully dependent)",
	              "compute", ng_pg_compute_json(pg), "sizes", sk->sizes);

	if (!b) {
		ng_error("skew: out of memory");
		return NG_ERR_NOMEM;
	}
	return ng_results_block(pg->run->results, "skew", b);
}

static ng_status ng_sk_report(struct ng_pg *pg, size_t size)
{
	struct ng_sk *sk = (struct ng_sk *)pg;
	struct ng_sampler *smp = &pg->smp;
	size_t n = ng_sampler_count(smp), K = pg->npts;
	const double *t = ng_pg_t(pg, NG_PG_ACTIVE), *x = ng_pg_x(pg, NG_PG_PASSIVE);
	double *mem = malloc(2 * K * sizeof(*mem));
	double *fx = mem, *fy = fx + K;
	struct ng_stats st, sx, st0 = {0};
	struct ng_fit fit = {0};
	ng_status rc = NG_OK;
	bool fitted;
	json_t *sum;

	if (!mem) {
		ng_error("skew: out of memory");
		return NG_ERR_NOMEM;
	}
	for (size_t k = 0; k < K && rc == NG_OK; k++) {
		struct ng_row *row;

		row = ng_sampler_row(smp, size);
		ng_row_number(row, "skew_us", pg->xs[k]);
		ng_sampler_row_stats(smp, row, "time_us", t + k * n, n, &st);
		ng_sampler_row_stats(smp, row, "skew_measured_us", x + k * n, n, &sx);
		ng_sampler_row_raw(smp, row, "time_us", t + k * n, n);
		ng_sampler_row_raw(smp, row, "skew_measured_us", x + k * n, n);
		if (k == 0)
			st0 = st;
		fx[k] = sx.median;
		fy[k] = st.median;
		rc = ng_row_commit(pg->run->results, row);
	}
	fitted = rc == NG_OK && ng_fit_line(fx, fy, NULL, K, 0.0, &fit) == 0;
	free(mem);
	if (rc != NG_OK)
		return rc;
	if (!fitted)
		fit.b = fit.b_lo = fit.b_hi = fit.a = fit.a_lo = fit.a_hi = NAN;
	sum = json_pack("{s:I, s:o, s:o, s:o, s:I}", "size", (json_int_t)size, "transfer_us",
	                ng_pg_param_json(st0.median, st0.ci_lo, st0.ci_hi), "slope",
	                ng_pg_param_json(fit.b, fit.b_lo, fit.b_hi), "intercept_us",
	                ng_pg_param_json(fit.a, fit.a_lo, fit.a_hi), "points", (json_int_t)K);
	if (!sum || json_array_append_new(sk->sizes, sum)) {
		ng_error("skew: out of memory");
		return NG_ERR_NOMEM;
	}
	printf("# skew %zu B: T(0) %.4g us; slope %.3f [%.3f, %.3f] us of origin time per us of skew "
	       "(0: independent progress, 1: fully dependent)\n",
	       size, st0.median, fit.b, fit.b_lo, fit.b_hi);
	fflush(stdout);
	return ng_sk_block(sk);
}

static ng_status ng_sk_finish(struct ng_pg *pg)
{
	return ng_sk_block((struct ng_sk *)pg);
}

static const struct ng_pg_ops ng_sk_ops = {
    .name = "skew",
    .report = ng_sk_report,
    .finish = ng_sk_finish,
};

/* The session's steps (session.h): the engine's (progress.h). */
static ng_status ng_sk_setup(struct ng_session *s, void *state)
{
	struct ng_sk *sk = state;

	/* The target takes part after its computation: two-sided, its
	 * receives are posted after it; one-sided, its exposure epoch is open
	 * during it (post, compute, wait). */
	sk->pg.place[NG_PG_ACTIVE] = NG_PG_NONE;
	sk->pg.place[NG_PG_PASSIVE] = sk->pg.cfg.rma ? NG_PG_AFTER_POST : NG_PG_BEFORE_POST;
	sk->pg.ref_roles = 1u << NG_PG_ACTIVE;
	sk->sizes = json_array();
	if (!sk->sizes) {
		ng_error("skew: out of memory");
		return NG_ERR_NOMEM;
	}
	return ng_pg_setup(s, &sk->pg, &ng_sk_ops);
}

static void ng_sk_teardown(struct ng_session *s, void *state)
{
	struct ng_sk *sk = state;

	ng_pg_teardown(s, &sk->pg);
	json_decref(sk->sizes);
}

static const struct ng_session_ops ng_sk_session = {
    .state = sizeof(struct ng_sk),
    .flags = NG_SESSION_OWN_CHECK,
    .config = NG_SESSION_CONFIG_STATE,
    .setup = ng_sk_setup,
    .measure = ng_pg_measure,
    .report = ng_pg_report,
    .conclude = ng_pg_conclude,
    .teardown = ng_sk_teardown,
};

static ng_status ng_sk_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_sk_session);
}

/* clang-format off */
static const struct ng_option ng_sk_options[] = {
	{ .name = "skew-compute", NG_STRING_AT(struct ng_sk, pg.cfg.compute), .def = "0-4t/12", .metavar = "SPEC", .list = true,
	  .help = "the target's computation lengths in us (as --overlap-compute); Nt = N times T(0)" },
	{ .name = "skew-rma", NG_FLAG_AT(struct ng_sk, pg.cfg.rma),
	  .help = "one-sided epochs: the target computes between post and wait" },
	{ .name = "skew-burst", NG_INT_AT(struct ng_sk, pg.cfg.burst), NG_GIVEN_AT(struct ng_sk, pg.cfg.burst_given),
	  .metavar = "N",
	  .help = "messages (puts) per operation (default 16 with --skew-rma, else 1)" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_pattern ng_pattern_skew = {
    .name = "skew",
    .desc = "process skew: the origin's time against computation at the target, and its slope",
    .options = ng_sk_options,
    NG_PG_PATTERN_NEEDS,
    .default_sizes = "64K",
    .run = ng_sk_run,
};
