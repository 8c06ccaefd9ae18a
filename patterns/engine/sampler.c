/* SPDX-License-Identifier: BSD-3-Clause */
/* The sampler every measuring pattern shares; the contract is in sampler.h. */
#include "sampler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Doubles of one rank's contribution to a gathering. */
static size_t ng_sampler_block(const struct ng_sampler *s)
{
	return s->streams * s->cap + s->tail;
}

static size_t ng_sampler_ranks(const struct ng_sampler *s)
{
	return (size_t)s->run->boot->size;
}

/* The per-stream memory: mine, fill and the gathering area. */
static ng_status ng_sampler_alloc_streams(struct ng_sampler *s)
{
	size_t block = ng_sampler_block(s), nranks = ng_sampler_ranks(s);

	s->fill = calloc(s->streams, sizeof(*s->fill));
	s->mine = calloc(block + 1, sizeof(*s->mine));
	if (!s->fill || !s->mine)
		return NG_ERR_NOMEM;
	if (s->flags & NG_SAMPLER_GATHER) {
		if (block > SIZE_MAX / sizeof(double) / nranks)
			return NG_ERR_NOMEM;
		s->all = calloc(nranks * block + 1, sizeof(*s->all));
	} else if (s->flags & NG_SAMPLER_SHARE) {
		s->all = calloc(nranks * s->cap + 1, sizeof(*s->all));
	}
	if ((s->flags & (NG_SAMPLER_GATHER | NG_SAMPLER_SHARE)) && !s->all)
		return NG_ERR_NOMEM;
	return NG_OK;
}

static void ng_sampler_free_streams(struct ng_sampler *s)
{
	free(s->fill);
	free(s->mine);
	free(s->all);
	s->fill = NULL;
	s->mine = NULL;
	s->all = NULL;
}

ng_status ng_sampler_init(struct ng_sampler *s, struct ng_run *run, const struct ng_sampler_spec *spec)
{
	size_t pool = spec->pool > 1 ? spec->pool : 1;

	memset(s, 0, sizeof(*s));
	s->run = run;
	s->name = spec->name;
	s->streams = spec->streams ? spec->streams : 1;
	s->cap = spec->cap;
	s->tail = spec->tail;
	s->pool = pool;
	s->flags = spec->flags;
	s->reporter = ng_results_active(run->results);
	if (!(spec->flags & NG_SAMPLER_OWN) && (run->time_s > 0 || run->ci_target > 0)) {
		/* by time: the streams hold what a run by time keeps, whatever the
		 * pattern's own count; the exchanges of ng_sampler_extend need a
		 * place of their own */
		s->by_time = true;
		s->ci = run->ci_target > 0;
		s->tty = s->reporter && run->boot->rank == 0 && isatty(STDERR_FILENO);
		s->cap = NG_TIME_SAMPLES;
		s->ask = calloc((size_t)run->boot->size * NG_SAMPLER_ASK, sizeof(*s->ask));
		if (!s->ask)
			goto err_nomem;
	}

	if (s->cap > SIZE_MAX / sizeof(double) / pool / s->streams)
		goto err_nomem;
	if (ng_sampler_alloc_streams(s) != NG_OK || !ng_hist_init(&s->hist))
		goto err_nomem;
	/* Statistics need a copy to sort: of a pool on the reporter, of one
	 * stream elsewhere. */
	s->scratch = calloc((s->reporter ? pool : 1) * s->cap + 1, sizeof(*s->scratch));
	if (!s->scratch)
		goto err_nomem;
	if (s->reporter) {
		s->work = calloc(pool * s->cap + 1, sizeof(*s->work));
		if (!s->work)
			goto err_nomem;
	}
	return NG_OK;

err_nomem:
	ng_error("%s: out of memory for %zu samples", s->name, s->cap);
	ng_sampler_free(s);
	return NG_ERR_NOMEM;
}

ng_status ng_sampler_reserve(struct ng_sampler *s, size_t streams)
{
	if (streams <= s->streams)
		return NG_OK;
	ng_sampler_free_streams(s);
	s->streams = streams;
	if (s->cap > SIZE_MAX / sizeof(double) / streams || ng_sampler_alloc_streams(s) != NG_OK) {
		ng_sampler_free_streams(s);
		s->streams = 0;
		ng_error("%s: out of memory for %zu samples", s->name, streams * s->cap);
		return NG_ERR_NOMEM;
	}
	return NG_OK;
}

void ng_sampler_free(struct ng_sampler *s)
{
	ng_sampler_free_streams(s);
	ng_hist_free(&s->hist);
	free(s->work);
	free(s->scratch);
	free(s->ask);
	s->work = NULL;
	s->scratch = NULL;
	s->ask = NULL;
}

void ng_sampler_start(struct ng_sampler *s, size_t skip, size_t count)
{
	s->skip = skip;
	s->count = count;
	s->end = skip + count;
	s->own_stop = false;
	if (s->by_time) {
		/* the first question comes at the first timed iteration */
		s->count = 0;
		s->end = skip;
		s->stopped = false;
		s->stride = 1;
		s->iters = 0;
		s->line_due = false;
		s->next_line = s->run->interval_s;
		s->line_from = 0;
		s->floor = count;
		s->checked = 0;
		s->stop = "time";
		s->elapsed_s = 0.0;
		s->shown = 0.0;
		/* --max-time and elapsed_s count the warm-up */
		s->t_start = ng_timer_now(s->run->timer);
	}
	memset(s->fill, 0, s->streams * sizeof(*s->fill));
	memset(s->mine, 0, ng_sampler_block(s) * sizeof(*s->mine));
}

/* ---- runs by time ------------------------------------------------------- */

/* Values kept of the first @n timed iterations at stride @stride. */
static size_t ng_sampler_kept(const struct ng_sampler *s, uint64_t n)
{
	uint64_t m = n % (2 * s->stride), k = n / (2 * s->stride) * 2 + (m < 2 ? m : 2);

	return k < s->cap ? (size_t)k : s->cap;
}

/* The streams are full: keep every other pair of values (the first of each
 * four), so that iterations 4 * stride apart are kept from now on. */
static void ng_sampler_compact(struct ng_sampler *s)
{
	for (size_t i = 0; i < s->streams; i++) {
		double *x = ng_sampler_mine(s, i);

		for (size_t k = 0; k < s->cap; k++)
			if ((k / 2) % 2 == 0)
				x[k / 4 * 2 + k % 2] = x[k];
		memset(x + s->cap / 2, 0, s->cap / 2 * sizeof(*x));
		if (s->fill[i] > s->cap / 2)
			s->fill[i] = s->cap / 2;
	}
	s->stride *= 2;
}

static int ng_sampler_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median and p99 of @x[0..n) (n > 0), sorted in the scratch. */
static void ng_sampler_quick(struct ng_sampler *s, const double *x, size_t n, double *med, double *p99)
{
	memcpy(s->scratch, x, n * sizeof(*x));
	qsort(s->scratch, n, sizeof(*s->scratch), ng_sampler_cmp);
	*med = n % 2 ? s->scratch[n / 2] : (s->scratch[n / 2 - 1] + s->scratch[n / 2]) / 2.0;
	*p99 = s->scratch[(size_t)ceil(0.99 * (double)n) - 1];
}

/* The exchange of one question: [0] go on, [1] iterations until the next
 * question, [2] an --interval line is due at the next question; and for
 * the line due now, from every rank: [3] values kept in its first stream,
 * [4] their median, [5] their p99, [6] the median since the last line;
 * with --ci-target, from every rank: [7] 1 when the intervals of its
 * streams are within the target (checked at this question), else 0. */
enum { ASK_GO, ASK_BATCH, ASK_LINE, ASK_N, ASK_MED, ASK_P99, ASK_IMED, ASK_CI };

/* --ci-target: whether the 95% interval of the median of each of this
 * rank's streams that holds values (the order statistics of the row's
 * ci95, over the values kept) lies within ci_target of its median on both
 * sides; true when none holds any.  Sorts in the scratch. */
static bool ng_sampler_ci_met(struct ng_sampler *s)
{
	for (size_t i = 0; i < s->streams; i++) {
		size_t n = s->fill[i], lo, hi;
		double *x = s->scratch, med, tol;

		if (!n)
			continue;
		if (!ng_stats_median_ci_ranks(n, &lo, &hi))
			return false;
		memcpy(x, ng_sampler_mine(s, i), n * sizeof(*x));
		qsort(x, n, sizeof(*x), ng_sampler_cmp);
		med = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
		tol = s->run->ci_target * fabs(med);
		if (!(med - x[lo] <= tol && x[hi] - med <= tol))
			return false;
	}
	return true;
}

/* --ci-target: whether the question at timed iteration @j checks the
 * intervals: past the floor, when the iterations have grown by a tenth
 * since the last check.  The same j on every rank: all check alike. */
static bool ng_sampler_ci_due(const struct ng_sampler *s, uint64_t j)
{
	return s->ci && j >= s->floor && j > 0 && (s->checked == 0 || (double)j >= 1.1 * (double)s->checked);
}

/* Rank 0: the --interval line of the question at timed iteration @j. */
static void ng_sampler_line(const struct ng_sampler *s, uint64_t j, double el)
{
	if (s->tty) /* over the progress line */
		fputs("\r\033[K", stderr);
	for (int r = 0; r < s->run->boot->size; r++) {
		const double *a = s->ask + (size_t)r * NG_SAMPLER_ASK;

		if (a[ASK_N] > 0) {
			fprintf(
			    stderr,
			    "%s: %.1f s: %llu iterations (%.0f kept), median %.4g, p99 %.4g; since the last "
			    "line: median %.4g\n",
			    s->name, el, (unsigned long long)j, a[ASK_N], a[ASK_MED], a[ASK_P99],
			    a[ASK_IMED]);
			return;
		}
	}
	fprintf(stderr, "%s: %.1f s: %llu iterations\n", s->name, el, (unsigned long long)j);
}

bool ng_sampler_extend(struct ng_sampler *s, uint64_t it)
{
	const struct ng_run *run = s->run;
	uint64_t j = it - s->skip;
	double *mine = s->ask + (size_t)run->boot->rank * NG_SAMPLER_ASK, el = 0.0;

	if (s->stopped)
		return false;
	memset(mine, 0, NG_SAMPLER_ASK * sizeof(*mine));
	if (s->line_due && s->fill[0] > 0) {
		size_t n = ng_sampler_kept(s, j), from = ng_sampler_kept(s, s->line_from);
		const double *x = ng_sampler_mine(s, 0);
		double p99;

		mine[ASK_N] = (double)n;
		ng_sampler_quick(s, x, n, &mine[ASK_MED], &mine[ASK_P99]);
		if (from < n)
			ng_sampler_quick(s, x + from, n - from, &mine[ASK_IMED], &p99);
	}
	if (ng_sampler_ci_due(s, j))
		mine[ASK_CI] = ng_sampler_ci_met(s);
	if (run->boot->rank == 0) {
		uint64_t now = ng_timer_now(run->timer);
		double left, target, rate;

		if (j == 0)
			s->t0 = now;
		el = ng_timer_us(run->timer, now - s->t0) / 1e6;
		left = run->time_s - el;
		if (s->ci) /* --max-time counts from the start, warm-up included */
			left = run->max_time_s - ng_timer_us(run->timer, now - s->t_start) / 1e6;
		rate = j > 0 && el > 0 ? (double)j / el : 0.0;
		if (s->line_due) { /* the line of this question: the next one after it */
			s->next_line += run->interval_s;
			while (s->next_line <= el)
				s->next_line += run->interval_s;
		}
		/* about 20 ms between questions, the next line or the end first */
		target = left < 0.02 ? left : 0.02;
		mine[ASK_LINE] = 0;
		if (run->interval_s > 0 && s->next_line - el <= target) {
			target = s->next_line - el;
			mine[ASK_LINE] = 1;
		}
		mine[ASK_GO] = left > 0 && !(run->cancel && *run->cancel);
		mine[ASK_BATCH] = rate > 0 && target > 0 ? ceil(rate * target) : 1;
		/* the time ran out with a line due (its moment passed since the
		 * last question, as the last line's does when a batch ends late):
		 * one more iteration, whose question prints it */
		if (mine[ASK_LINE] > 0 && !(left > 0) && !(run->cancel && *run->cancel)) {
			mine[ASK_GO] = 1;
			mine[ASK_BATCH] = 1;
		}
		if (mine[ASK_BATCH] > 1 << 24)
			mine[ASK_BATCH] = 1 << 24;
	}
	if (ng_boot_allgather(run->boot, mine, NG_SAMPLER_ASK * sizeof(*mine), s->ask) != NG_OK) {
		s->ask[ASK_GO] = 0; /* reported; the gathering after the loop fails alike */
		s->ask[ASK_LINE] = 0;
	}
	if (s->line_due) {
		if (run->boot->rank == 0)
			ng_sampler_line(s, j, el);
		s->line_from = j;
	}
	s->line_due = s->ask[ASK_LINE] > 0;
	if (ng_sampler_ci_due(s, j)) { /* every rank's intervals within: stop */
		bool met = true;

		for (int r = 0; r < run->boot->size; r++)
			met = met && s->ask[(size_t)r * NG_SAMPLER_ASK + ASK_CI] > 0;
		if (met) {
			s->stop = s->checked == 0 ? "count" : "ci";
			s->ask[ASK_GO] = 0;
		}
		s->checked = j;
	}
	if (!(s->ask[ASK_GO] > 0)) {
		s->stopped = true;
		s->iters = j;
		s->count = ng_sampler_kept(s, j);
		s->end = it;
		if (run->boot->rank == 0)
			s->elapsed_s = ng_timer_us(run->timer, ng_timer_now(run->timer) - s->t_start) / 1e6;
		return false;
	}
	if (s->tty) {
		double at = s->ci ? ng_timer_us(run->timer, ng_timer_now(run->timer) - s->t_start) / 1e6 : el;

		if (at - s->shown >= 0.25) {
			s->shown = at;
			ng_progress_size(run, at, s->ci ? run->max_time_s : run->time_s, s->ci, j);
		}
	}
	/* full: make room for what follows (not when stopping: nothing does) */
	if (j > 0 && j == (uint64_t)s->cap * s->stride)
		ng_sampler_compact(s);
	/* Rank 0's batch, 1 .. 2^24 as it sends it; clamped so that the
	 * conversion is defined and the batch bounded whatever arrived. */
	if (!(s->ask[ASK_BATCH] >= 1))
		s->ask[ASK_BATCH] = 1;
	if (s->ask[ASK_BATCH] > 1 << 24)
		s->ask[ASK_BATCH] = 1 << 24;
	s->end = it + (uint64_t)s->ask[ASK_BATCH];
	/* --ci-target: a batch ends at the floor, where the first check is */
	if (s->ci && j < s->floor && s->end > s->skip + s->floor)
		s->end = s->skip + s->floor;
	/* the next question no later than the streams fill */
	if (s->end > s->skip + (uint64_t)s->cap * s->stride)
		s->end = s->skip + (uint64_t)s->cap * s->stride;
	return true;
}

/* ---- bringing the samples together ------------------------------------- */

ng_status ng_sampler_gather(struct ng_sampler *s)
{
	return ng_samples_gather(s->run->boot, s->mine, ng_sampler_block(s), s->all);
}

ng_status ng_sampler_share(struct ng_sampler *s, size_t stream, int root)
{
	size_t n = s->fill[stream];
	ng_status st;

	st = ng_samples_gather(s->run->boot, ng_sampler_mine(s, stream), n, s->all);
	if (st == NG_OK)
		memcpy(ng_sampler_mine(s, stream), s->all + (size_t)root * n, n * sizeof(*s->all));
	return st;
}

const double *ng_sampler_of(const struct ng_sampler *s, int rank, size_t stream)
{
	return s->all + (size_t)rank * ng_sampler_block(s) + stream * s->cap;
}

const double *ng_sampler_tail_of(const struct ng_sampler *s, int rank)
{
	return ng_sampler_of(s, rank, s->streams);
}

/* ---- combining ----------------------------------------------------------- */

const double *ng_sampler_pool(struct ng_sampler *s, size_t stream, const int *ranks, size_t n, size_t *len_p)
{
	size_t count = s->count;

	for (size_t i = 0; i < n; i++)
		memcpy(s->work + i * count, ng_sampler_of(s, ranks[i], stream), count * sizeof(*s->work));
	*len_p = n * count;
	return s->work;
}

const double *ng_sampler_max(struct ng_sampler *s, size_t stream)
{
	int nranks = s->run->boot->size;

	for (size_t i = 0; i < s->count; i++) {
		double m = ng_sampler_of(s, 0, stream)[i];

		for (int r = 1; r < nranks; r++) {
			double v = ng_sampler_of(s, r, stream)[i];

			if (v > m)
				m = v;
		}
		s->work[i] = m;
	}
	return s->work;
}

/* ---- statistics and the row ---------------------------------------------- */

size_t ng_sampler_fold(double *x, size_t n, size_t k)
{
	if (k < 2)
		return n;
	for (size_t i = 0; i < n / k; i++) {
		double sum = 0.0;

		for (size_t j = 0; j < k; j++)
			sum += x[i * k + j];
		x[i] = sum / (double)k;
	}
	return n / k;
}

/* After a STATS of the sorted values in the scratch: the run's percentiles,
 * and the histogram of the values. */
static void ng_sampler_dist(struct ng_sampler *s, size_t n, struct ng_stats *st)
{
	ng_stats_percentiles(s->scratch, n, s->run->pct, s->run->npct, st);
	ng_hist_reset(&s->hist);
	for (size_t i = 0; i < n; i++)
		ng_hist_add(&s->hist, s->scratch[i]);
}

/* The rank test of the first half of the values in the scratch (in the
 * order measured) against the second: s->halves_p, s->halves_shift. */
static void ng_sampler_halves(struct ng_sampler *s, size_t n)
{
	s->halves_p = ng_stats_halves(s->scratch, n, &s->halves_shift);
}

/* A shift of the halves' medians the timer cannot tell from none: two
 * resolutions, in microseconds (samples are times in us). */
static double ng_sampler_floor(const struct ng_sampler *s)
{
	return s->run && s->run->timer ? 2.0 * s->run->timer->resolution_ns / 1000.0 : 0.0;
}

void ng_sampler_stats(struct ng_sampler *s, const double *x, size_t n, struct ng_stats *st_p)
{
	if (n)
		memcpy(s->scratch, x, n * sizeof(*x));
	ng_sampler_halves(s, n);
	ng_samples_stats(x, n, s->scratch, st_p);
	ng_sampler_dist(s, n, st_p);
	st_p->alternating = ng_stats_alternating(ng_stats_sign_r1(x, n, st_p->median), n);
	st_p->unstable = ng_stats_unstable(s->halves_p, s->halves_shift, st_p->median, ng_sampler_floor(s));
}

void ng_sampler_bw(struct ng_sampler *s, const double *x, size_t n, double bytes, struct ng_stats *st_p)
{
	for (size_t i = 0; i < n; i++)
		s->scratch[i] = x[i] > 0.0 ? bytes / x[i] : 0.0;
	ng_sampler_halves(s, n);
	ng_samples_bw(x, n, bytes, s->scratch, st_p);
	ng_sampler_dist(s, n, st_p);
	/* the halves' shift is one of rates: the timer's floor as a rate
	 * near the median (d(bytes/t) = rate^2 / bytes dt) */
	st_p->unstable =
	    ng_stats_unstable(s->halves_p, s->halves_shift, st_p->median,
	                      bytes > 0.0 ? st_p->median * st_p->median / bytes * ng_sampler_floor(s) : 0.0);
	/* bytes / x[i] lies above the median where x[i] lies below bytes / median:
	 * the signs flip together, their products not at all */
	st_p->alternating =
	    st_p->median > 0.0 && ng_stats_alternating(ng_stats_sign_r1(x, n, bytes / st_p->median), n);
}

/* One note per row whose samples alternate (ng_stats_alternating) or
 * drift (ng_stats_unstable). */
static void ng_sampler_note(struct ng_sampler *s, struct ng_row *row, const char *key,
                            const struct ng_stats *st)
{
	if (!row || !(st->alternating || st->unstable) || s->noted)
		return;
	s->noted = true;
	if (st->unstable) {
		double pct = st->median != 0.0 ? fabs(s->halves_shift / st->median) * 100.0 : 0.0;

		ng_results_note(
		    s->run->results, "unstable",
		    "drifted between the halves of their samples (by up to %s of the median; flagged "
		    "\"unstable\" in their rows): the host was busy or the path changed; see "
		    "doc/validation.md",
		    pct,
		    "%s: size %zu: the second half of the samples of %s differs from the first (rank test "
		    "p = %.2g, the second half's median %+.4g from the first's, the row's median %.4g): "
		    "the measurement drifted (flagged \"unstable\" in the row's statistics)",
		    s->name, s->size, key, s->halves_p, s->halves_shift, st->median);
		return;
	}
	ng_results_note(
	    s->run->results, "alternating",
	    "alternate between two levels (flagged \"alternating\" in their rows): a median may lie "
	    "between them; see doc/validation.md",
	    0.0,
	    "%s: size %zu: the samples of %s alternate between two levels, so their median may lie "
	    "between them (flagged \"alternating\" in the row's statistics)",
	    s->name, s->size, key);
}

void ng_sampler_stopped(struct ng_sampler *s, uint64_t iters, const char *stop, double elapsed_s)
{
	s->own_stop = true;
	s->iters = iters;
	s->stop = stop;
	s->elapsed_s = elapsed_s;
}

struct ng_row *ng_sampler_row_n(struct ng_sampler *s, size_t size, size_t count)
{
	struct ng_row *row = ng_row_begin(s->run->results, size, count);

	s->noted = false;
	s->size = size;
	s->row_hist = NULL;
	if (row && (s->by_time || s->own_stop)) {
		ng_row_json(row, "iterations", json_integer((json_int_t)s->iters));
		ng_row_json(row, "stop", json_string(s->stop));
		ng_row_json(row, "elapsed_s", json_real(s->elapsed_s));
	}
	if (row && s->run->histogram) {
		s->row_hist = json_object();
		ng_row_json(row, "histogram", s->row_hist);
	}
	return row;
}

/* --histogram: the sampler's histogram as the row's "histogram" of @key:
 * {"buckets_per_octave", "nonpositive", "buckets": [[lo, hi, count], ...]}
 * of the buckets that hold a value. */
static void ng_sampler_row_hist(struct ng_sampler *s, struct ng_row *row, const char *key)
{
	json_t *h, *b;

	if (!row || !s->row_hist)
		return;
	h = json_object();
	b = json_array();
	if (!h || !b) {
		json_decref(h);
		json_decref(b);
		return;
	}
	for (size_t i = 0; i < NG_HIST_BUCKETS; i++) {
		double lo, hi;

		if (!s->hist.counts[i])
			continue;
		ng_hist_bounds(i, &lo, &hi);
		json_array_append_new(b, json_pack("[f,f,I]", lo, hi, (json_int_t)s->hist.counts[i]));
	}
	json_object_set_new(h, "buckets_per_octave", json_integer(NG_HIST_SUB));
	json_object_set_new(h, "nonpositive", json_integer((json_int_t)s->hist.nonpos));
	json_object_set_new(h, "buckets", b);
	json_object_set_new(s->row_hist, key, h);
}

struct ng_row *ng_sampler_row(struct ng_sampler *s, size_t size)
{
	return ng_sampler_row_n(s, size, s->count);
}

void ng_sampler_row_stats(struct ng_sampler *s, struct ng_row *row, const char *key, const double *x,
                          size_t n, struct ng_stats *st_p)
{
	struct ng_stats st;

	ng_sampler_stats(s, x, n, &st);
	ng_sampler_note(s, row, key, &st);
	ng_sampler_row_hist(s, row, key);
	ng_row_stats(row, key, &st);
	if (st_p)
		*st_p = st;
}

void ng_sampler_row_bw(struct ng_sampler *s, struct ng_row *row, const char *key, const double *x, size_t n,
                       double bytes, struct ng_stats *st_p)
{
	struct ng_stats st;

	ng_sampler_bw(s, x, n, bytes, &st);
	ng_sampler_note(s, row, key, &st);
	ng_sampler_row_hist(s, row, key);
	ng_row_stats(row, key, &st);
	if (st_p)
		*st_p = st;
}

void ng_sampler_row_raw(const struct ng_sampler *s, struct ng_row *row, const char *key, const double *x,
                        size_t n)
{
	(void)s;
	ng_row_raw(row, key, x, n);
}
