/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sampler (patterns/engine/sampler.h) in one process: the loop's bookkeeping
 * (untimed iterations dropped, one value per stream and timed iteration,
 * zeros on a rank that times nothing), the gathering's layout, pools, the
 * per-iteration maximum, sharing one rank's stream, growing the streams,
 * and statistics and rows that are those of the samples.
 *
 * The bootstrap is a stand-in of NRANKS ranks in which this process is rank
 * 0: its all-gather gives rank r the values of rank 0 times (r + 1) plus r
 * (a known answer for every combination), and its tail plus r.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/results_priv.h"
#include "patterns/engine/sampler.h"
#include "tests/check.h"
#include "timers/timer.h"

#define NRANKS 3

static ng_status fake_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	const double *m = mine;
	double *a = all;
	size_t n = len / sizeof(double);

	for (int r = 0; r < b->size; r++)
		for (size_t i = 0; i < n; i++)
			a[(size_t)r * n + i] = m[i] * (double)(r + 1) + (double)r;
	return NG_OK;
}

static ng_status fake_barrier(struct ng_boot *b)
{
	(void)b;
	return NG_OK;
}

static const struct ng_boot_ops fake_ops = {
    .name = "fake",
    .barrier = fake_barrier,
    .allgather = fake_allgather,
};

/* What rank @r holds in a gathering of rank 0's value @v. */
static double as_rank(double v, int r)
{
	return v * (double)(r + 1) + (double)r;
}

static bool same_stats(const struct ng_stats *a, const struct ng_stats *b)
{
	return a->n == b->n && a->min == b->min && a->median == b->median && a->mean == b->mean &&
	       a->stddev == b->stddev && a->p99 == b->p99 && a->max == b->max && a->ci_lo == b->ci_lo &&
	       a->ci_hi == b->ci_hi && a->ci_exact == b->ci_exact;
}

/* Warm-up dropped, one value per timed iteration, the loop's length. */
static void test_loop(struct ng_run *run)
{
	struct ng_sampler_spec spec = {
	    .name = "t", .streams = 2, .cap = 8, .tail = 2, .flags = NG_SAMPLER_GATHER};
	struct ng_sampler s;
	uint64_t it, iters = 0;

	CHECK(ng_sampler_init(&s, run, &spec) == NG_OK, "init");
	ng_sampler_start(&s, 3, 5);
	for (it = 0; ng_sampler_more(&s, it); it++) {
		iters++;
		CHECK(ng_sampler_timed(&s, it) == (it >= 3), "iteration %llu timed", (unsigned long long)it);
		ng_sampler_add(&s, 0, it, (double)it);
		ng_sampler_add(&s, 1, it, 100.0 + (double)it);
	}
	CHECK(iters == 8, "%llu iterations, want 3 untimed + 5 timed", (unsigned long long)iters);
	CHECK(ng_sampler_count(&s) == 5, "count %zu", ng_sampler_count(&s));
	CHECK(ng_sampler_n(&s, 0) == 5 && ng_sampler_n(&s, 1) == 5, "fills %zu %zu", ng_sampler_n(&s, 0),
	      ng_sampler_n(&s, 1));
	for (size_t i = 0; i < 5; i++) {
		CHECK(ng_sampler_mine(&s, 0)[i] == (double)(i + 3), "stream 0 [%zu] = %g", i,
		      ng_sampler_mine(&s, 0)[i]);
		CHECK(ng_sampler_mine(&s, 1)[i] == 103.0 + (double)i, "stream 1 [%zu] = %g", i,
		      ng_sampler_mine(&s, 1)[i]);
	}

	/* A new measurement starts empty and zeroed: a rank that times
	 * nothing contributes zeros. */
	ng_sampler_tail(&s)[0] = 7.0;
	ng_sampler_start(&s, 1, 4);
	CHECK(ng_sampler_n(&s, 0) == 0, "fill after start %zu", ng_sampler_n(&s, 0));
	for (size_t i = 0; i < 8; i++)
		CHECK(ng_sampler_mine(&s, 0)[i] == 0.0 && ng_sampler_mine(&s, 1)[i] == 0.0,
		      "not zeroed at %zu", i);
	CHECK(ng_sampler_tail(&s)[0] == 0.0 && ng_sampler_tail(&s)[1] == 0.0, "tail not zeroed");

	/* The gathering: every rank's streams, then its tail. */
	for (it = 0; ng_sampler_more(&s, it); it++)
		ng_sampler_add(&s, 1, it, 10.0 * (double)it);
	ng_sampler_tail(&s)[1] = 5.0;
	CHECK(ng_sampler_gather(&s) == NG_OK, "gather");
	for (int r = 0; r < NRANKS; r++) {
		for (size_t i = 0; i < 3; i++)
			CHECK(ng_sampler_of(&s, r, 1)[i] == as_rank(10.0 * (double)(i + 1), r),
			      "rank %d stream 1 [%zu] = %g", r, i, ng_sampler_of(&s, r, 1)[i]);
		CHECK(ng_sampler_of(&s, r, 0)[0] == as_rank(0.0, r), "rank %d stream 0 not zero", r);
		CHECK(ng_sampler_tail_of(&s, r)[1] == as_rank(5.0, r), "rank %d tail %g", r,
		      ng_sampler_tail_of(&s, r)[1]);
	}
	ng_sampler_free(&s);
	ng_sampler_free(&s); /* safe twice */
}

/* Pools, maxima, statistics and the row. */
static void test_combine(struct ng_run *run)
{
	struct ng_sampler_spec spec = {.name = "t", .cap = 6, .pool = 2, .flags = NG_SAMPLER_GATHER};
	const double x[6] = {4.0, 1.0, 5.0, 2.0, 0.0, 3.0};
	double copy[12], scratch[12];
	const int ranks[2] = {2, 0};
	struct ng_stats st, want;
	struct ng_sampler s;
	const double *p;
	size_t n;

	CHECK(ng_sampler_init(&s, run, &spec) == NG_OK, "init");
	ng_sampler_start(&s, 0, 6);
	for (uint64_t it = 0; ng_sampler_more(&s, it); it++)
		ng_sampler_add(&s, 0, it, x[it]);
	CHECK(ng_sampler_gather(&s) == NG_OK, "gather");

	p = ng_sampler_pool(&s, 0, ranks, 2, &n);
	CHECK(n == 12, "pool of %zu", n);
	for (size_t i = 0; i < 6; i++)
		CHECK(p[i] == as_rank(x[i], 2) && p[6 + i] == x[i], "pool [%zu]", i);
	memcpy(copy, p, sizeof(copy));
	ng_sampler_stats(&s, p, n, &st);
	ng_samples_stats(copy, 12, scratch, &want);
	CHECK(same_stats(&st, &want), "pooled statistics differ from ng_samples_stats");
	CHECK(memcmp(p, copy, sizeof(copy)) == 0, "statistics reordered the pool");

	/* Rank 2 has the largest value of every iteration here. */
	p = ng_sampler_max(&s, 0);
	for (size_t i = 0; i < 6; i++)
		CHECK(p[i] == as_rank(x[i], NRANKS - 1), "max [%zu] = %g", i, p[i]);

	ng_sampler_bw(&s, x, 6, 100.0, &st);
	ng_samples_bw(x, 6, 100.0, scratch, &want);
	CHECK(same_stats(&st, &want), "bandwidth statistics differ from ng_samples_bw");
	CHECK(st.min == 0.0, "a zero time's bandwidth is %g", st.min);

	/* The row: "count" the timed iterations, the STATS of the samples. */
	{
		struct ng_row *row = ng_sampler_row(&s, 64);
		struct ng_stats got;

		CHECK(row != NULL, "no row on the reporting rank");
		ng_sampler_row_stats(&s, row, "time_us", x, 6, &got);
		ng_samples_stats(x, 6, scratch, &want);
		CHECK(same_stats(&got, &want), "row statistics differ");
		ng_sampler_row_bw(&s, row, "bandwidth_MBps", x, 6, 64.0, NULL);
		ng_sampler_row_raw(&s, row, "time_us", x, 6);
		CHECK(ng_row_commit(run->results, row) == NG_OK, "commit");
	}
	ng_sampler_free(&s);
}

/* Appending, sharing a rank's stream, growing. */
static void test_push_share(struct ng_run *run)
{
	struct ng_sampler_spec spec = {.name = "t", .streams = 2, .cap = 10, .flags = NG_SAMPLER_SHARE};
	struct ng_sampler s;

	CHECK(ng_sampler_init(&s, run, &spec) == NG_OK, "init");
	ng_sampler_start(&s, 0, 0);
	for (int i = 0; i < 7; i++)
		ng_sampler_push(&s, 1, 1.5 * i);
	CHECK(ng_sampler_n(&s, 1) == 7 && ng_sampler_n(&s, 0) == 0, "fills %zu %zu", ng_sampler_n(&s, 1),
	      ng_sampler_n(&s, 0));
	CHECK(ng_sampler_share(&s, 1, 2) == NG_OK, "share");
	for (int i = 0; i < 7; i++)
		CHECK(ng_sampler_mine(&s, 1)[i] == as_rank(1.5 * i, 2), "shared [%d] = %g", i,
		      ng_sampler_mine(&s, 1)[i]);
	CHECK(ng_sampler_n(&s, 1) == 7, "shared fill %zu", ng_sampler_n(&s, 1));
	ng_sampler_free(&s);

	spec.flags = NG_SAMPLER_GATHER;
	spec.streams = 1;
	CHECK(ng_sampler_init(&s, run, &spec) == NG_OK, "init");
	CHECK(ng_sampler_reserve(&s, 6) == NG_OK && s.streams == 6, "reserve to 6 streams");
	CHECK(ng_sampler_reserve(&s, 2) == NG_OK && s.streams == 6, "reserve never shrinks");
	ng_sampler_start(&s, 0, 10);
	for (uint64_t it = 0; ng_sampler_more(&s, it); it++)
		ng_sampler_add(&s, 5, it, 1.0);
	CHECK(ng_sampler_gather(&s) == NG_OK, "gather after reserve");
	CHECK(ng_sampler_of(&s, 1, 5)[9] == as_rank(1.0, 1), "last stream of rank 1 after reserve");
	ng_sampler_free(&s);
}

/* By time: every rank keeps the same iterations in a stream of
 * NG_TIME_SAMPLES values, compacting when full (pairs 2, 4, 8, ...
 * iterations apart), and stops when rank 0 says so (here: a stop request). */
static void test_by_time(struct ng_run *run)
{
	struct ng_sampler_spec spec = {.name = "t", .cap = 8, .flags = NG_SAMPLER_GATHER};
	volatile sig_atomic_t stop = 0;
	struct ng_run r = *run;
	struct ng_sampler s;
	uint64_t it, n, stride, want, timed = 3 * (uint64_t)NG_TIME_SAMPLES + 5;
	bool ok = true;

	struct ng_timer tm;

	CHECK(ng_timer_init(&tm, "clock", NULL) == NG_OK, "timer");
	r.timer = &tm;
	r.time_s = 3600;
	r.cancel = &stop;
	CHECK(ng_sampler_init(&s, &r, &spec) == NG_OK, "init by time");
	ng_sampler_start(&s, 2, 8);
	for (it = 0; ng_sampler_more(&s, it); it++) {
		ng_sampler_add(&s, 0, it, it < 2 ? -1.0 : (double)(it - 2));
		if (it + 1 == 2 + timed)
			stop = 1;
	}
	/* the stop is seen at the next question, some iterations later */
	n = s.iters;
	CHECK(it == 2 + n && n >= timed, "stopped after %llu iterations, %llu timed", (unsigned long long)it,
	      (unsigned long long)n);
	/* compacted each time the kept values reached 65536: at 65536, 131072,
	 * 262144, ... timed iterations, the stride doubling each time */
	for (stride = 1; n > (uint64_t)NG_TIME_SAMPLES * stride; stride *= 2)
		;
	CHECK(s.stride == stride && stride >= 4, "stride %llu, want %llu", (unsigned long long)s.stride,
	      (unsigned long long)stride);
	want = n / (2 * stride) * 2 + (n % (2 * stride) < 2 ? n % (2 * stride) : 2);
	CHECK(ng_sampler_count(&s) == want, "kept %zu, want %llu", ng_sampler_count(&s),
	      (unsigned long long)want);
	for (size_t k = 0; k < ng_sampler_count(&s) && ok; k++)
		ok = ng_sampler_mine(&s, 0)[k] == (double)(k / 2 * 2 * stride + k % 2);
	CHECK(ok, "the kept values are iterations 0, 1, 2S, 2S + 1, 4S, ... in order");
	CHECK(ng_sampler_gather(&s) == NG_OK, "gather by time");
	CHECK(ng_sampler_of(&s, 1, 0)[3] == as_rank((double)(2 * stride + 1), 1), "rank 1's kept value");
	ng_sampler_free(&s);
}

/* Runs one measurement of --ci-target @target, --max-time @max_s and floor
 * @floor over values from @gen(it) (@run's settings changed to them);
 * returns the stop, the STATS of the kept values in *@st_p. */
static const char *ci_run(struct ng_run *run, double target, double max_s, size_t floor,
                          double (*gen)(uint64_t), struct ng_sampler *s, struct ng_stats *st_p)
{
	struct ng_sampler_spec spec = {.name = "t", .cap = 8, .flags = NG_SAMPLER_GATHER};
	uint64_t it;

	run->ci_target = target;
	run->max_time_s = max_s;
	CHECK(ng_sampler_init(s, run, &spec) == NG_OK, "init with --ci-target");
	ng_sampler_start(s, 3, floor);
	for (it = 0; ng_sampler_more(s, it); it++)
		ng_sampler_add(s, 0, it, gen(it));
	CHECK(it == 3 + s->iters, "%llu iterations, %llu timed", (unsigned long long)it,
	      (unsigned long long)s->iters);
	ng_sampler_stats(s, ng_sampler_mine(s, 0), ng_sampler_count(s), st_p);
	return s->stop;
}

static double gen_const(uint64_t it)
{
	(void)it;
	return 5.0;
}

/* uniform on [1, 2), a fixed sequence (splitmix64 of the iteration) */
static double gen_uniform(uint64_t it)
{
	uint64_t z = it + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return 1.0 + (double)(z >> 11) / 9007199254740992.0;
}

/* --ci-target: a constant stops at exactly the floor ("count"); a uniform
 * spread stops once its median's interval is within 1% ("ci"), past the
 * floor, with the STATS's own interval within it; an unreachable target
 * stops at --max-time ("time"). */
static void test_ci_target(struct ng_run *run)
{
	struct ng_timer tm;
	struct ng_run r = *run;
	struct ng_sampler s;
	struct ng_stats st;
	const char *stop;

	CHECK(ng_timer_init(&tm, "clock", NULL) == NG_OK, "timer");
	r.timer = &tm;
	stop = ci_run(&r, 0.01, 10, 100, gen_const, &s, &st);
	CHECK(!strcmp(stop, "count") && s.iters == 100 && ng_sampler_count(&s) == 100,
	      "constant: stop %s after %llu", stop, (unsigned long long)s.iters);
	ng_sampler_free(&s);

	stop = ci_run(&r, 0.01, 10, 100, gen_uniform, &s, &st);
	CHECK(!strcmp(stop, "ci") && s.iters > 1000 && s.iters < 100000, "uniform: stop %s after %llu", stop,
	      (unsigned long long)s.iters);
	CHECK(st.median - st.ci_lo <= 0.01 * st.median && st.ci_hi - st.median <= 0.01 * st.median,
	      "uniform: interval [%g, %g] of %g within 1%%", st.ci_lo, st.ci_hi, st.median);
	CHECK(s.elapsed_s > 0 && s.elapsed_s < 10, "uniform: %g s", s.elapsed_s);
	ng_sampler_free(&s);

	stop = ci_run(&r, 1e-9, 0.05, 100, gen_uniform, &s, &st);
	CHECK(!strcmp(stop, "time") && s.elapsed_s >= 0.05 && s.elapsed_s < 0.5,
	      "unreachable: stop %s after %g s", stop, s.elapsed_s);
	ng_sampler_free(&s);
}

int main(void)
{
	struct ng_boot boot = {.ops = &fake_ops, .rank = 0, .size = NRANKS};
	struct ng_results *res = ng_results_new(json_object(), NULL, true, "test");
	struct ng_run run = {.boot = &boot, .results = res, .count = 6};

	test_loop(&run);
	test_combine(&run);
	test_push_share(&run);
	test_by_time(&run);
	test_ci_target(&run);
	CHECK(ng_results_rows(res) == 1, "%zu rows committed", ng_results_rows(res));
	ng_results_free(res);
	return check_exit();
}
