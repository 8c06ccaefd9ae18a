/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * overlap: how much of a transfer hides behind computation.
 *
 * Per iteration a rank posts its communication, computes X microseconds
 * (patterns/engine/compute.h) and completes it (the protocol of each side is in
 * progress.h): the sender after its isends, the receiver after its irecvs
 * (two-sided), or the origin after its puts, the target after its post
 * (one-sided, --overlap-rma).  --overlap-side says who computes: sender
 * (default; the paper's test), receiver, or both.  Each computing side
 * reports its own time per iteration T(X) against X (--overlap-compute, by
 * default 12 lengths from 0 to 4 T(0), T(0) the computing side's transfer
 * time), and the overlap ratio (T(0) + X - T(X)) / T(0), clipped to [0, 1],
 * with the 95% CI of a bootstrap (analysis/overlap.h): 0 when the
 * computation adds to the transfer, 1 when the transfer is hidden.  No
 * transfer can hide more than X of itself: the bound min(1, X / T(0)) is
 * reported beside each ratio, and the ratio of a size is the one at the
 * largest X.
 *
 * Rows (one per size, computing side and length): "side", "compute_us" (the
 * X asked for), "time_us" (T(X)), "compute_measured_us" (the computation as
 * timed), "exposed_us" (time - computation per iteration), "overlap_ratio"
 * with "_lo"/"_hi", "overlap_bound".  Block "overlap": the settings, the
 * calibration of the computation, and per size and side T(0) and the ratio
 * at the largest X.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/overlap.h"
#include "engine/progress.h"

/* --overlap-side's index among its choices */
enum { NG_OV_SENDER, NG_OV_RECEIVER, NG_OV_BOTH };

struct ng_ov {
	struct ng_pg pg; /* first */
	int side;        /* --overlap-side */
	json_t *sizes;   /* the block's "sizes" */
};

static const char *const ng_ov_side_names[2] = {"sender", "receiver"};

/* Seed of the bootstrap of one sample: the run's seed and where it was taken. */
static uint64_t ng_ov_seed(const struct ng_pg *pg, size_t size, int role, size_t k)
{
	struct ng_rng rng;

	ng_rng_seed(&rng, pg->run->seed, ((uint64_t)size << 16) ^ ((uint64_t)role << 8) ^ (uint64_t)k);
	return ng_rng_next(&rng);
}

/* The block as it stands (after every size, and at the end). */
static ng_status ng_ov_block(struct ng_ov *ov)
{
	struct ng_pg *pg = &ov->pg;
	const char *side = pg->place[0] && pg->place[1] ? "both" : pg->place[0] ? "sender" : "receiver";
	json_t *b =
	    json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:o, s:O}", "mode", ng_pg_mode(pg), "side", side,
	              "burst", (json_int_t)pg->burst, "compute_spec", pg->spec_text, "ratio",
	              "(T(0) + X - T(X)) / T(0) = 1 - median(time - computation) / median(T(0)), clipped "
	              "to [0, 1]; at the largest X for each size",
	              "ci95", "percentile bootstrap: 2000 resamples of T(0) and of time - computation",
	              "compute", ng_pg_compute_json(pg), "sizes", ov->sizes);

	if (!b) {
		ng_error("overlap: out of memory");
		return NG_ERR_NOMEM;
	}
	return ng_results_block(pg->run->results, "overlap", b);
}

/* The rows and the summary of one computing side. */
static ng_status ng_ov_side(struct ng_ov *ov, size_t size, int role, double *scratch, double *e, double *boot)
{
	struct ng_pg *pg = &ov->pg;
	struct ng_sampler *smp = &pg->smp;
	struct ng_run *run = pg->run;
	size_t n = ng_sampler_count(smp), B = NG_BOOT_B;
	const double *t = ng_pg_t(pg, role), *x = ng_pg_x(pg, role);
	double *t0_boot = boot, *e_boot = boot + B, *rscratch = boot + 2 * B;
	struct ng_stats st0, st, sx, se;
	struct ng_ratio ratio = {0};
	double bound = NAN;
	ng_status st_ = NG_OK;
	json_t *sum;

	ng_sampler_stats(smp, t, n, &st0);
	ng_boot_medians(t, n, B, ng_ov_seed(pg, size, role, 0), scratch, t0_boot);
	for (size_t k = 0; k < pg->npts && st_ == NG_OK; k++) {
		const double *tk = t + k * n, *xk = x + k * n;
		struct ng_row *row;

		for (size_t i = 0; i < n; i++)
			e[i] = tk[i] - xk[i];
		row = ng_sampler_row(smp, size);
		ng_row_json(row, "side", json_string(ng_ov_side_names[role]));
		ng_row_number(row, "compute_us", pg->xs[k]);
		ng_sampler_row_stats(smp, row, "time_us", tk, n, &st);
		ng_sampler_row_stats(smp, row, "compute_measured_us", xk, n, &sx);
		ng_sampler_row_stats(smp, row, "exposed_us", e, n, &se);
		ng_boot_medians(e, n, B, ng_ov_seed(pg, size, role, k + 1), scratch, e_boot);
		ng_overlap_ratio(st0.median, t0_boot, se.median, e_boot, B, rscratch, &ratio);
		bound = ng_overlap_bound(sx.median, st0.median);
		ng_row_number(row, "overlap_ratio", ratio.value);
		ng_row_number(row, "overlap_ratio_lo", ratio.lo);
		ng_row_number(row, "overlap_ratio_hi", ratio.hi);
		ng_row_number(row, "overlap_bound", bound);
		ng_sampler_row_raw(smp, row, "time_us", tk, n);
		ng_sampler_row_raw(smp, row, "compute_measured_us", xk, n);
		st_ = ng_row_commit(run->results, row);
	}
	if (st_ != NG_OK)
		return st_;

	/* The size's ratio: at the largest X (the last row). */
	sum = json_pack("{s:I, s:s, s:o, s:f, s:f, s:o, s:f, s:f, s:f}", "size", (json_int_t)size, "side",
	                ng_ov_side_names[role], "transfer_us",
	                ng_pg_param_json(st0.median, st0.ci_lo, st0.ci_hi), "compute_us",
	                pg->xs[pg->npts - 1], "compute_measured_us", sx.median, "overlap_ratio",
	                ng_pg_param_json(ratio.value, ratio.lo, ratio.hi), "overlap_ratio_unclipped",
	                ratio.raw, "overlap_bound", bound, "probe_transfer_us", pg->probe[role]);
	if (!sum || json_array_append_new(ov->sizes, sum)) {
		ng_error("overlap: out of memory");
		return NG_ERR_NOMEM;
	}
	printf("# overlap %zu B, %s computes: T(0) %.4g us; at X = %.4g us T(X) %.4g us, overlap ratio %.3f "
	       "[%.3f, %.3f] (perfect overlap: %.3f)\n",
	       size, ng_ov_side_names[role], st0.median, sx.median, st.median, ratio.value, ratio.lo,
	       ratio.hi, bound);
	fflush(stdout);
	return NG_OK;
}

static ng_status ng_ov_report(struct ng_pg *pg, size_t size)
{
	struct ng_ov *ov = (struct ng_ov *)pg;
	size_t n = pg->run->count;
	double *mem = malloc((2 * n + 3 * NG_BOOT_B) * sizeof(*mem));
	ng_status st = NG_OK;

	if (!mem) {
		ng_error("overlap: out of memory");
		return NG_ERR_NOMEM;
	}
	for (int role = 0; role < 2 && st == NG_OK; role++)
		if (pg->place[role] != NG_PG_NONE)
			st = ng_ov_side(ov, size, role, mem, mem + n, mem + 2 * n);
	free(mem);
	return st == NG_OK ? ng_ov_block(ov) : st;
}

static ng_status ng_ov_finish(struct ng_pg *pg)
{
	return ng_ov_block((struct ng_ov *)pg);
}

static const struct ng_pg_ops ng_ov_ops = {
    .name = "overlap",
    .report = ng_ov_report,
    .finish = ng_ov_finish,
};

/* The session's steps (session.h): the engine's (progress.h). */
static ng_status ng_ov_setup(struct ng_session *s, void *state)
{
	struct ng_ov *ov = state;
	bool sender = ov->side != NG_OV_RECEIVER, receiver = ov->side != NG_OV_SENDER;

	ov->pg.place[NG_PG_ACTIVE] = sender ? NG_PG_AFTER_POST : NG_PG_NONE;
	ov->pg.place[NG_PG_PASSIVE] = receiver ? NG_PG_AFTER_POST : NG_PG_NONE;
	ov->pg.ref_roles = (sender ? 1u << NG_PG_ACTIVE : 0u) | (receiver ? 1u << NG_PG_PASSIVE : 0u);
	ov->sizes = json_array();
	if (!ov->sizes) {
		ng_error("overlap: out of memory");
		return NG_ERR_NOMEM;
	}
	return ng_pg_setup(s, &ov->pg, &ng_ov_ops);
}

static void ng_ov_teardown(struct ng_session *s, void *state)
{
	struct ng_ov *ov = state;

	ng_pg_teardown(s, &ov->pg);
	json_decref(ov->sizes);
}

static const struct ng_session_ops ng_ov_session = {
    .state = sizeof(struct ng_ov),
    .flags = NG_SESSION_OWN_CHECK,
    .config = NG_SESSION_CONFIG_STATE,
    .setup = ng_ov_setup,
    .measure = ng_pg_measure,
    .report = ng_pg_report,
    .conclude = ng_pg_conclude,
    .teardown = ng_ov_teardown,
};

static ng_status ng_ov_run(const struct ng_pattern *p, struct ng_run *run)
{
	return ng_session_run(p, run, &ng_ov_session);
}

/* clang-format off */
static const struct ng_option ng_ov_options[] = {
	{ .name = "overlap-compute", NG_STRING_AT(struct ng_ov, pg.cfg.compute), .def = "0-4t/12", .metavar = "SPEC", .list = true,
	  .help = "computation lengths in us, e.g. 0,50,100 or 0-400/9 or 0-400:+50; Nt = N times T(0)" },
	{ .name = "overlap-side", NG_CHOICE_AT(struct ng_ov, side), .def = "sender", .choices = "sender|receiver|both",
	  .help = "who computes: the sender (origin), the receiver (target), or both" },
	{ .name = "overlap-rma", NG_FLAG_AT(struct ng_ov, pg.cfg.rma),
	  .help = "one-sided epochs (start, puts, complete / post, wait) instead of isend/irecv" },
	{ .name = "overlap-burst", NG_INT_AT(struct ng_ov, pg.cfg.burst), NG_GIVEN_AT(struct ng_ov, pg.cfg.burst_given),
	  .metavar = "N",
	  .help = "messages (puts) per iteration (default 16 with --overlap-rma, else 1)" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_pattern ng_pattern_overlap = {
    .name = "overlap",
    .desc = "communication/computation overlap: time per iteration and overlap ratio against computation",
    .options = ng_ov_options,
    NG_PG_PATTERN_NEEDS,
    .default_sizes = "64K",
    .run = ng_ov_run,
};
