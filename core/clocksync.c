/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The global clock: offset and drift of every rank's clock against rank 0's
 * from minimum-round-trip ping-pong exchanges (Netgauge, ReproMPI), fitted
 * by least squares over points spread in time.  Contract in clocksync.h.
 */
#include "clocksync.h"

#include "analysis/clockfit.h"
#include "peer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The start's fit: points spread over about NG_SYNC_SPAN_US, each the least
 * round trip of a burst.  The check: one short burst series. */
#define NG_SYNC_POINTS  24
#define NG_SYNC_BURST   20
#define NG_SYNC_SPAN_US 300000.0
#define NG_CHECK_POINTS 8
#define NG_MSG          8

/* Time of @ticks in ns of the timer, as an integer (long double keeps the
 * nanosecond of a TSC read long after boot). */
static int64_t ng_sync_ns(const struct ng_timer *t, uint64_t ticks)
{
	return (int64_t)((long double)ticks * (long double)t->ns_per_tick);
}

static void ng_sync_sleep_us(double us)
{
	struct timespec ts = {.tv_sec = (time_t)(us * 1e-6), .tv_nsec = (long)(fmod(us, 1e6) * 1e3)};

	if (us > 0.0)
		nanosleep(&ts, NULL);
}

/* Rank @r's parent in the binomial tree: @r with its highest bit cleared. */
static int ng_sync_parent(int r)
{
	int h = 1;

	while (h <= r / 2)
		h *= 2;
	return r - h;
}

/*
 * @points fit points of @burst exchanges along a binomial tree, @gap_us
 * apart.  Each point is ceil(log2 p) rounds; in the round of step h, rank
 * r < h answers rank r + h (its child), every pair at once: a parent answers
 * each 8-byte ping with its time, and every rank but 0 fills @pts (its
 * points against its parent) from the exchange of least round trip of each
 * burst.
 */
static ng_status ng_sync_phase(struct ng_comm *c, struct ng_boot *b, const struct ng_timer *t, void *buf,
                               int points, int burst, double gap_us, int64_t epoch,
                               struct ng_clockfit_pt *pts)
{
	ng_status st = NG_OK;
	int r = b->rank;

	for (int k = 0; st == NG_OK && k < points; k++) {
		for (int h = 1; st == NG_OK && h < b->size; h *= 2) {
			if (r < h && r + h < b->size) {
				for (int m = 0; st == NG_OK && m < burst; m++) {
					st = ng_recv(c, r + h, buf, NG_MSG);
					int64_t t2 = ng_sync_ns(t, ng_timer_global(t));
					memcpy(buf, &t2, sizeof(t2));
					if (st == NG_OK)
						st = ng_send(c, r + h, buf, NG_MSG);
				}
			} else if (r >= h && r < 2 * h) {
				struct ng_clockfit_pt best = {.rtt = INFINITY};

				for (int m = 0; st == NG_OK && m < burst; m++) {
					int64_t t1, t2, t3;

					t1 = ng_sync_ns(t, ng_timer_global(t));
					st = ng_send(c, r - h, buf, NG_MSG);
					if (st == NG_OK)
						st = ng_recv(c, r - h, buf, NG_MSG);
					t3 = ng_sync_ns(t, ng_timer_global(t));
					memcpy(&t2, buf, sizeof(t2));
					if (st == NG_OK && (double)(t3 - t1) < best.rtt * 1e3) {
						best.rtt = (double)(t3 - t1) * 1e-3;
						best.x = (double)(t2 - epoch) * 1e-3;
						best.y = ((double)(t1 - t2) + (double)(t3 - t1) / 2.0) * 1e-3;
					}
				}
				pts[k] = best;
			}
		}
		if (st == NG_OK && r == 0 && k + 1 < points)
			ng_sync_sleep_us(gap_us);
	}
	return st;
}

/*
 * The gathered models index each other (a rank's parent) and go into the
 * result as integers (the points kept): a rank whose parent is not its
 * parent in the tree, or whose count of points is not one, is dropped
 * (base/peer.h) before anything uses them.
 */
static ng_status ng_sync_gathered(const struct ng_clock *clk)
{
	for (int i = 1; i < clk->size; i++) {
		const struct ng_clock_rank *e = &clk->ranks[i];

		if (e->parent != ng_sync_parent(i))
			return ng_peer_bad("clock model", i, "its parent is not its parent in the tree");
		if (!(e->points_used >= 0 && e->points_used <= NG_SYNC_POINTS)) {
			char why[64];

			snprintf(why, sizeof(why), "its count of fit points is not 0 .. %d", NG_SYNC_POINTS);
			return ng_peer_bad("clock model", i, why);
		}
	}
	return NG_OK;
}

/*
 * Composes every rank's model against its parent (pair_*, as gathered) into
 * its model against rank 0, in rank order (a parent's rank is less than its
 * child's).  With the parent's local_p(T) = T + O_p + D_p (T - epoch) and the
 * pair's local_i = local_p + a + s (local_p - epoch):
 * O_i = O_p (1 + s) + a and D_i = D_p + s + s D_p; the bounds add along the
 * path (each scaled by what multiplies its error).
 */
static void ng_sync_compose(struct ng_clock *clk)
{
	for (int i = 1; i < clk->size; i++) {
		struct ng_clock_rank *e = &clk->ranks[i];
		const struct ng_clock_rank *p = &clk->ranks[e->parent];
		double s = e->pair_drift_ppm * 1e-6, dp = p->drift_ppm * 1e-6;

		e->offset_us = p->offset_us * (1.0 + s) + e->pair_offset_us;
		e->drift_ppm = (dp + s + s * dp) * 1e6;
		e->bound_us = p->bound_us * (1.0 + fabs(s)) + e->pair_bound_us;
		e->drift_bound_ppm =
		    p->drift_bound_ppm * (1.0 + fabs(s)) + e->pair_drift_bound_ppm * (1.0 + fabs(dp));
		e->depth = p->depth + 1;
	}
}

/* Whether the ranks read one clock: one host, a timer that is the same
 * counter on every CPU of it, and no test-only skew anywhere. */
static ng_status ng_sync_shared(struct ng_boot *b, const struct ng_timer *t, bool *shared_p,
                                const char **why_p)
{
	struct {
		char host[256];
		int skewed;
	} mine = {.skewed = t->skewed}, *all;
	ng_status st;

	all = calloc((size_t)b->size, sizeof(*all));
	if (!all) {
		ng_error("out of memory");
		return NG_ERR_NOMEM;
	}
	memcpy(mine.host, b->host, sizeof(mine.host));
	st = ng_boot_allgather(b, &mine, sizeof(mine), all);
	*shared_p = false;
	if (st == NG_OK) {
		bool one_host = true, skew = false;

		for (int i = 0; i < b->size; i++) {
			one_host = one_host && strncmp(all[i].host, all[0].host, sizeof(mine.host)) == 0;
			skew = skew || all[i].skewed;
		}
		if (!one_host)
			*why_p = "ranks on several hosts";
		else if (skew)
			*why_p = "a test-only clock skew is set";
		else if (t->kind == NG_TIMER_MPI)
			*why_p = "timer mpi: MPI_Wtime need not be one clock";
		else {
			*shared_p = true;
			*why_p = t->kind == NG_TIMER_TSC ? "one host, invariant TSC"
			                                 : "one host, timer clock (CLOCK_MONOTONIC_RAW)";
		}
	}
	free(all);
	return st;
}

ng_status ng_clock_sync(struct ng_clock *clk, enum ng_sync_mode mode, struct ng_comm *c, struct ng_boot *b,
                        const struct ng_timer *t)
{
	struct ng_clockfit_pt pts[NG_SYNC_POINTS];
	struct ng_clock_rank me = {0};
	void *buf = NULL;
	ng_status st;
	uint64_t start;

	memset(clk, 0, sizeof(*clk));
	clk->mode = mode;
	clk->size = b->size;
	if (mode == NG_SYNC_OFF)
		return NG_OK;
	st = ng_sync_shared(b, t, &clk->shared, &clk->why);
	if (st != NG_OK || b->size < 2)
		return st;
	if (mode == NG_SYNC_AUTO && clk->shared)
		return NG_OK;
	if (!(c->caps & NG_CAP_CHANNEL)) {
		clk->why = "the module has no two-sided operations";
		return NG_OK;
	}
	clk->ranks = calloc((size_t)b->size, sizeof(*clk->ranks));
	if (!clk->ranks) {
		ng_error("out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_alloc(c, 64, &buf);
	if (st != NG_OK)
		return st;
	memset(buf, 0, 64);
	clk->points = NG_SYNC_POINTS;
	clk->burst = NG_SYNC_BURST;
	start = ng_timer_now(t);
	int64_t epoch = ng_sync_ns(t, start);
	st = ng_boot_bcast(b, 0, &epoch, sizeof(epoch));
	clk->epoch_ns = (uint64_t)epoch;
	if (st == NG_OK)
		st = ng_sync_phase(c, b, t, buf, NG_SYNC_POINTS, NG_SYNC_BURST,
		                   NG_SYNC_SPAN_US / (NG_SYNC_POINTS - 1), epoch, pts);
	if (st == NG_OK && b->rank != 0) {
		double a, s, res, se, rtt, rmax = 0;
		int n = ng_clockfit_keep(pts, NG_SYNC_POINTS);

		ng_clockfit_line(pts, n, &a, &s, &res, &se);
		/* three standard errors, and what the points' asymmetry can tilt */
		me.drift_bound_ppm = (3.0 * se + ng_clockfit_slope_sys(pts, n)) * 1e6;
		me.points_used = n;
		rtt = pts[0].rtt;
		for (int k = 0; k < n; k++) {
			rtt = fmin(rtt, pts[k].rtt);
			rmax = fmax(rmax, pts[k].rtt);
		}
		me.parent = ng_sync_parent(b->rank);
		me.pair_offset_us = a;
		me.pair_drift_ppm = s * 1e6;
		me.min_rtt_us = rtt;
		me.resid_us = res;
		me.pair_bound_us = rmax / 2.0 + res + t->resolution_ns * 1e-3;
		me.pair_drift_bound_ppm = me.drift_bound_ppm;
		if (t->skewed) {
			me.inj = 1;
			me.inj_ppm = t->skew_drift_ppm;
			me.inj_off_us =
			    ng_timer_skew_at_us(t, (uint64_t)((long double)epoch / t->ns_per_tick));
		}
	}
	if (st == NG_OK)
		st = ng_boot_allgather(b, &me, sizeof(me), clk->ranks);
	if (st == NG_OK)
		st = ng_sync_gathered(clk);
	if (st == NG_OK)
		ng_sync_compose(clk);
	clk->sync_s = ng_timer_us(t, ng_timer_now(t) - start) * 1e-6;
	if (st == NG_OK)
		st = ng_boot_bcast(b, 0, &clk->sync_s, sizeof(clk->sync_s));
	ng_free(c, buf);
	clk->fitted = st == NG_OK;
	if (!clk->fitted) {
		free(clk->ranks);
		clk->ranks = NULL;
	}
	return st;
}

ng_status ng_clock_check(struct ng_clock *clk, struct ng_comm *c, struct ng_boot *b, const struct ng_timer *t)
{
	struct ng_clockfit_pt pts[NG_CHECK_POINTS];
	struct ng_clock_rank me;
	void *buf = NULL;
	ng_status st;

	if (!clk->fitted)
		return NG_OK;
	me = clk->ranks[b->rank];
	st = ng_alloc(c, 64, &buf);
	if (st != NG_OK)
		return st;
	memset(buf, 0, 64);
	st = ng_sync_phase(c, b, t, buf, NG_CHECK_POINTS, NG_SYNC_BURST, 1000.0, (int64_t)clk->epoch_ns, pts);
	if (st == NG_OK && b->rank != 0) {
		struct ng_clockfit_pt best = pts[0];

		for (int k = 1; k < NG_CHECK_POINTS; k++)
			if (pts[k].rtt < best.rtt)
				best = pts[k];
		/* against the parent here; composed along the path below */
		double pred = me.pair_offset_us + me.pair_drift_ppm * 1e-6 * best.x;
		me.chk_error_us = best.y - pred;
		me.chk_bound_us = best.rtt / 2.0 + t->resolution_ns * 1e-3;
		me.chk_at_s = best.x * 1e-6;
		if (t->skewed)
			me.chk_inj_off_us = ng_timer_skew_at_us(
			    t, (uint64_t)((long double)(clk->epoch_ns + (uint64_t)(best.x * 1e3)) /
			                  t->ns_per_tick));
	}
	if (st == NG_OK)
		st = ng_boot_allgather(b, &me, sizeof(me), clk->ranks);
	if (st == NG_OK) {
		st = ng_sync_gathered(clk);
		/* the model now holds what the rank sent: not to be used */
		if (st != NG_OK)
			clk->fitted = false;
	}
	/* the offset measured against rank 0 is the sum of those along the path,
	 * so are the errors and the bounds */
	for (int i = 1; st == NG_OK && i < clk->size; i++) {
		struct ng_clock_rank *e = &clk->ranks[i];
		const struct ng_clock_rank *p = &clk->ranks[e->parent];

		if (e->parent != 0) {
			e->chk_error_us += p->chk_error_us;
			e->chk_bound_us += p->chk_bound_us;
		}
		e->chk_drift_ppm = e->chk_at_s > 0 ? e->drift_ppm + e->chk_error_us / e->chk_at_s : 0.0;
	}
	ng_free(c, buf);
	clk->checked = st == NG_OK;
	return st;
}

static const char *const ng_sync_names[] = {"auto", "off", "force"};

json_t *ng_clock_json(const struct ng_clock *clk)
{
	json_t *o = json_pack("{s:s, s:s}", "sync", ng_sync_names[clk->mode], "model",
	                      clk->fitted   ? "fitted"
	                      : clk->shared ? "shared"
	                                    : "none");

	if (clk->why)
		json_object_set_new(o, "reason", json_string(clk->why));
	if (!clk->fitted)
		return o;
	json_object_set_new(o, "sync_s", json_real(clk->sync_s));
	json_object_set_new(o, "points", json_integer(clk->points));
	json_object_set_new(o, "burst", json_integer(clk->burst));
	json_t *ranks = json_array();
	for (int i = 0; i < clk->size; i++) {
		const struct ng_clock_rank *r = &clk->ranks[i];
		json_t *e =
		    json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f}", "rank", i, "offset_us", r->offset_us,
		              "drift_ppm", r->drift_ppm, "bound_us", r->bound_us, "drift_bound_ppm",
		              r->drift_bound_ppm, "min_rtt_us", r->min_rtt_us, "residual_us", r->resid_us);

		if (i > 0) {
			json_object_set_new(e, "points_used", json_integer((json_int_t)r->points_used));
			json_object_set_new(e, "parent", json_integer(r->parent));
			json_object_set_new(e, "depth", json_integer(r->depth));
		}
		if (r->inj)
			json_object_set_new(
			    e, "injected",
			    json_pack("{s:f, s:f}", "offset_us", r->inj_off_us, "drift_ppm", r->inj_ppm));
		if (clk->checked && i > 0) {
			json_t *ck = json_pack("{s:f, s:f, s:f, s:f}", "at_s", r->chk_at_s, "error_us",
			                       r->chk_error_us, "bound_us", r->chk_bound_us, "drift_ppm",
			                       r->chk_drift_ppm);
			if (r->inj)
				json_object_set_new(ck, "injected_offset_us", json_real(r->chk_inj_off_us));
			json_object_set_new(e, "check", ck);
		}
		json_array_append_new(ranks, e);
	}
	json_object_set_new(o, "bound_us", json_real(ng_clock_bound_us(clk)));
	json_object_set_new(o, "ranks", ranks);
	return o;
}

double ng_clock_bound_us(const struct ng_clock *clk)
{
	double worst = 0.0;

	for (int i = 0; clk->fitted && i < clk->size; i++)
		worst = fmax(worst, clk->ranks[i].bound_us);
	return worst;
}

void ng_clock_free(struct ng_clock *clk)
{
	free(clk->ranks);
	clk->ranks = NULL;
}

ng_status ng_clock_shared(struct ng_boot *b, const struct ng_timer *t, bool *shared_p, const char **why_p)
{
	return ng_sync_shared(b, t, shared_p, why_p);
}

long double ng_clock_to_ref_ns(const struct ng_clock *clk, int rank, long double local_ns)
{
	const struct ng_clock_rank *r;
	long double epoch = (long double)clk->epoch_ns;

	if (!clk->fitted || rank <= 0 || rank >= clk->size)
		return local_ns;
	r = &clk->ranks[rank];
	return epoch + (local_ns - epoch - (long double)r->offset_us * 1e3L) /
	                   (1.0L + (long double)r->drift_ppm * 1e-6L);
}

long double ng_clock_from_ref_ns(const struct ng_clock *clk, int rank, long double ref_ns)
{
	const struct ng_clock_rank *r;
	long double epoch = (long double)clk->epoch_ns;

	if (!clk->fitted || rank <= 0 || rank >= clk->size)
		return ref_ns;
	r = &clk->ranks[rank];
	return ref_ns + (long double)r->offset_us * 1e3L +
	       (long double)r->drift_ppm * 1e-6L * (ref_ns - epoch);
}

double ng_clock_pair_bound_us(const struct ng_clock *clk, int a, int b, long double at_ns)
{
	double since_us = (double)((at_ns - (long double)clk->epoch_ns) * 1e-3L), sum = 0.0;
	int rk[2] = {a, b};

	if (!clk->fitted)
		return 0.0;
	for (int i = 0; i < 2; i++) {
		const struct ng_clock_rank *r;

		if (rk[i] <= 0 || rk[i] >= clk->size)
			continue;
		r = &clk->ranks[rk[i]];
		sum += r->bound_us + r->drift_bound_ppm * 1e-6 * fabs(since_us);
	}
	return sum;
}
