/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma: the micro-benchmarks of the MPI-2 one-sided papers ("MPI-2 one-sided
 * over InfiniBand" §5.2-5.7, "Scheduling of MPI-2 one sided operations"
 * §5.2-5.3) as one suite over any module with one-sided operations
 * (NG_CAP_ONESIDED, struct ng_rma_ops): the rma module in each of its
 * designs, and mpirma (the MPI library's own).
 *
 * Tests (--rma-test NAME[,NAME...]|all), synchronisation (--rma-sync
 * auto|pscw|fence|lock[,...]: each test runs with every listed mode it
 * allows; auto: its default, marked *):
 *
 *   put-pingpong  ranks 0 and 1, two epochs per iteration: 0 puts into 1,
 *   get-pingpong  then 1 into 0 (get: reads; acc: accumulates int64 sums);
 *   acc-pingpong  time per epoch = half the iteration.  pscw*, fence
 *   bidir         0 and 1 put into each other in one epoch; time per epoch.
 *                 fence*, pscw; and, where the module has non-blocking
 *                 two-sided operations, isend/irecv/waitall ("two-sided")
 *   put-bw        rank 0 issues --rma-burst W puts (gets) into 1 per access
 *   get-bw        epoch; time per epoch at 0, bandwidth W x size / time.
 *                 pscw*, fence, lock
 *   sync          synchronisation calls only: one target (rank 0) with
 *                 n = 1..N origins, timed at the target (post..wait), and
 *                 one origin (rank 0) with n = 2..N targets, timed at the
 *                 origin (start..complete).  pscw*, lock (lock/unlock of
 *                 every target; with n origins each times its own)
 *   multi-origin  n = 1..N origins (ranks 1..n) put W x 64 KiB (or the -s
 *                 sizes, when given) each into rank 0 per epoch; time per
 *                 epoch at the target, aggregate bandwidth n x W x size /
 *                 time.  Needs 3 ranks.  pscw*, fence
 *   sched-1       rank 0 issues W puts and W gets to rank 1 per access
 *                 epoch (scheduling paper, pattern 1); throughput 2 x W x
 *                 size / time.  pscw*, fence, lock
 *   sched-2       each iteration: 0 opens an access epoch to 1 with one put
 *                 and one get, then an exposure epoch for 1, which does the
 *                 reverse (pattern 2); time per iteration.  pscw*, fence
 *   lock          passive target: rank 0 locks 1, puts, unlocks: latency
 *                 per size, exclusive and shared; and n = 2..N origins
 *                 (ranks 1..n) each locking rank 0 and putting the smallest
 *                 size: throughput (every origin times its own epochs; the
 *                 samples are pooled).  lock only (both lock types)
 *
 * N is --rma-origins (default: every rank but one).  Passive-target epochs
 * need the target inside a one-sided call on modules that are not truly
 * one-sided (the rma module's sendrecv design, MPICH; core/module.h): in
 * the lock modes every rank meets the others after each iteration in a
 * fence of a second, small window, where the targets wait (and serve)
 * while the origins hold their epochs.
 *
 * Memory.  Each test allocates one window (win_allocate, every rank the
 * same length) laid out as [puts, iterations of even number | puts, odd |
 * gets | origin data | origin destinations]: a put of iteration k lands in
 * the half of parity k, so a target can check iteration k while k + 1 is
 * already under way (fence epochs follow one another without a gap); gets
 * read the get area; slots are the test's largest size apart (64-byte
 * aligned).  Origin buffers lie in the origin's own window, in a part no
 * other rank touches: registered memory on every module, as applications
 * that work in window memory have, so no test measures a module's
 * registration cache.  All W puts of an epoch read one origin buffer.
 *
 * Timing.  The timed loops contain only ng_timer_now() and module calls;
 * every iteration runs back to back after a barrier per measurement.
 * Under fence, rank 0 times from one fence's return to the next.
 *
 * --verify: every epoch's content is checked, outside the timed region, by
 * the rank that holds it afterwards: a target checks the puts (and
 * accumulates) it received after the epoch closed at it (wait, fence), an
 * origin its gets after complete/fence/unlock; passive-target puts are read
 * back by the origin in an untimed lock/get/unlock epoch after each timed
 * one.  Puts carry the payload of (test, size, origin, iteration), get
 * areas that of (test, size, target, slot), and every destination holds the
 * complement of what is expected before its epoch (a target spoils a put
 * slot for the iteration after next once it has checked it; a passive
 * origin does so with one more untimed epoch), so stale or missing data
 * cannot pass; accumulate targets are reset to a known base after each
 * check and must hold base + contribution per int64 element.  The checks
 * are outside the timer of the rank doing them, but a peer may wait for
 * them (a module whose target serves requests only inside its calls waits
 * in any case): runs with --verify are for correctness, figures are taken
 * without.  The row's "verified" counts the epochs checked (all ranks).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma_check.h"
#include "sampler.h"

enum rp_test {
	RP_PUT_PP,
	RP_GET_PP,
	RP_ACC_PP,
	RP_BIDIR,
	RP_PUT_BW,
	RP_GET_BW,
	RP_SYNC,
	RP_MULTI,
	RP_SCHED1,
	RP_SCHED2,
	RP_LOCK,
	RP_NTESTS
};

enum rp_sync { RP_PSCW, RP_FENCE, RP_LOCK_EXCL, RP_LOCK_SHARED, RP_TWOSIDED, RP_NSYNCS };

#define RP_BIT(s) (1u << (s))

static const char *const rp_sync_names[RP_NSYNCS] = {"pscw", "fence", "lock-exclusive", "lock-shared",
                                                     "two-sided"};

/* How a test's epochs run. */
enum rp_shape {
	RP_ALTERNATE, /* 0 -> 1, then 1 -> 0, per iteration */
	RP_BOTH,      /* 0 <-> 1 in one epoch */
	RP_FAN,       /* origins -> targets: one to one, one to n, n to one */
};

struct rp_desc {
	const char *name;
	enum rp_shape shape;
	unsigned syncs;   /* choosable: RP_BIT(RP_PSCW | RP_FENCE | RP_LOCK_EXCL) */
	enum rp_sync def; /* --rma-sync auto */
	bool burst;       /* W operations per epoch, else one */
	bool put, get, acc;
	int min_ranks;
};

#define PF  (RP_BIT(RP_PSCW) | RP_BIT(RP_FENCE))
#define PFL (PF | RP_BIT(RP_LOCK_EXCL))

/* clang-format off */
static const struct rp_desc rp_tests[RP_NTESTS] = {
    [RP_PUT_PP] = {"put-pingpong", RP_ALTERNATE, PF, RP_PSCW, false, true, false, false, 2},
    [RP_GET_PP] = {"get-pingpong", RP_ALTERNATE, PF, RP_PSCW, false, false, true, false, 2},
    [RP_ACC_PP] = {"acc-pingpong", RP_ALTERNATE, PF, RP_PSCW, false, true, false, true, 2},
    [RP_BIDIR] = {"bidir", RP_BOTH, PF, RP_FENCE, false, true, false, false, 2},
    [RP_PUT_BW] = {"put-bw", RP_FAN, PFL, RP_PSCW, true, true, false, false, 2},
    [RP_GET_BW] = {"get-bw", RP_FAN, PFL, RP_PSCW, true, false, true, false, 2},
    [RP_SYNC] = {"sync", RP_FAN, RP_BIT(RP_PSCW) | RP_BIT(RP_LOCK_EXCL), RP_PSCW, false, false, false, false, 2},
    [RP_MULTI] = {"multi-origin", RP_FAN, PF, RP_PSCW, true, true, false, false, 3},
    [RP_SCHED1] = {"sched-1", RP_FAN, PFL, RP_PSCW, true, true, true, false, 2},
    [RP_SCHED2] = {"sched-2", RP_ALTERNATE, PF, RP_PSCW, false, true, true, false, 2},
    [RP_LOCK] = {"lock", RP_FAN, RP_BIT(RP_LOCK_EXCL), RP_LOCK_EXCL, false, true, false, false, 2},
};
/* clang-format on */

/* The slot of a get area's content in its tag (puts use slot 0). */
#define RP_GET_SLOT 1000
/* The iteration number of contents that do not change between iterations. */
#define RP_FIXED UINT64_MAX
/* multi-origin's size without -s (the paper's 64 KiB). */
#define RP_MULTI_SIZE ((size_t)64 << 10)

/* The sampler's streams: the time of a sample, and when it began
 * (microseconds of the timer: how the lock modes' origins overlapped). */
enum { RP_S_TIME, RP_S_START, RP_NSTREAMS };

/* One measurement: one row. */
struct rp_meas {
	enum rp_test test;
	enum rp_sync sync;
	size_t size;
	bool fan_in; /* RP_FAN: origins 1..n into target 0, else origin 0 into targets 1..n */
	int n;       /* RP_FAN: origins (fan_in) or targets */
	int origins, targets;
	size_t nput, nget; /* operations per access epoch and target */
	size_t burst;      /* operations per access epoch */
	double bytes;      /* moved per timed unit */
	double epochs;     /* access epochs per timed unit */
	bool half;         /* RP_ALTERNATE: the sample is half an iteration */
};

struct rp {
	struct ng_run *run;
	struct ng_comm *c;
	const struct ng_rma_ops *o;
	const struct ng_timer *tm;
	int me, P;
	size_t W; /* --rma-burst */
	int nmax; /* --rma-origins */
	bool twoside;
	bool one_host; /* every rank on one host: one clock */
	struct rp_meas *plan;
	size_t nplan;
	json_t *skipped; /* reporter: test -> why */
	/* the current test's window */
	struct ng_win *w;
	struct ng_win *meet; /* lock modes: the window the ranks meet in (fence) */
	unsigned char *base;
	size_t stride; /* between slots */
	size_t half;   /* bytes of one parity half of the put area */
	size_t get_off, src_off, dst_off;
	struct ng_bufs bufs; /* bidir two-sided */
	struct ng_req reqs[2];
	int *ogrp, *tgrp; /* [P] groups of the current measurement */
	/* the streams RP_S_TIME and RP_S_START, gathered and pooled over the
	 * origins in the lock modes */
	struct ng_sampler smp;
	uint64_t first, last; /* start of the first timed sample, end of the last */
	double *med;          /* [nplan] reporter: the median of each measurement's main figure */
	/* --verify of the current measurement */
	bool bad;  /* this rank saw wrong content */
	bool told; /* ... and reported it */
	size_t checked;
};

/* ---- options ------------------------------------------------------------ */

static const struct ng_option rp_options[] = {
    {.name = "rma-test",
     .type = NG_OPT_STRING,
     .def = "all",
     .help = "tests: put-pingpong, get-pingpong, acc-pingpong, bidir, put-bw, get-bw, sync, multi-origin, "
             "sched-1, sched-2, lock (comma-separated), or all",
     .metavar = "NAME[,NAME...]"},
    {.name = "rma-sync",
     .type = NG_OPT_STRING,
     .def = "auto",
     .help = "synchronisation: pscw, fence, lock (comma-separated; each test runs with those it allows), or "
             "auto (each test's own)",
     .metavar = "MODE[,MODE...]"},
    {.name = "rma-burst",
     .type = NG_OPT_INT,
     .def = "16",
     .help =
         "operations per access epoch of put-bw, get-bw, multi-origin and sched-1 (each of puts and gets)",
     .metavar = "W"},
    {.name = "rma-origins",
     .type = NG_OPT_INT,
     .def = "0",
     .help = "largest number of origins (targets) of sync, multi-origin and lock (0: every rank but one)",
     .metavar = "N"},
    {.name = NULL},
};

/* Finds @word (of @len bytes) among @names[0..n); -1 when absent. */
static int rp_lookup(const char *const *names, size_t n, const char *word, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) == len && strncmp(names[i], word, len) == 0)
			return (int)i;
	return -1;
}

/* --rma-test: a bit per test, in *order_p the order given. */
static ng_status rp_parse_tests(struct rp *rp, bool *all_p, int *order, int *n_p)
{
	const char *s = ng_args_str(rp->run->args, "rma-test");
	const char *names[RP_NTESTS];
	int n = 0;

	for (int t = 0; t < RP_NTESTS; t++)
		names[t] = rp_tests[t].name;
	*all_p = strcmp(s, "all") == 0;
	if (*all_p) {
		for (int t = 0; t < RP_NTESTS; t++)
			order[n++] = t;
		*n_p = n;
		return NG_OK;
	}
	while (*s) {
		size_t len = strcspn(s, ",");
		int t = rp_lookup(names, RP_NTESTS, s, len), k;

		if (t < 0) {
			if (rp->me == 0)
				ng_error(
				    "rma: unknown test '%.*s' in --rma-test (put-pingpong, get-pingpong, "
				    "acc-pingpong, bidir, put-bw, get-bw, sync, multi-origin, sched-1, "
				    "sched-2, lock, all)",
				    (int)len, s);
			return NG_ERR_USAGE;
		}
		for (k = 0; k < n && order[k] != t; k++)
			;
		if (k == n)
			order[n++] = t;
		s += len;
		s += *s == ',';
	}
	if (n == 0) {
		if (rp->me == 0)
			ng_error("rma: --rma-test names no test");
		return NG_ERR_USAGE;
	}
	*n_p = n;
	return NG_OK;
}

/* --rma-sync: 0 for auto, else the bits of the modes given. */
static ng_status rp_parse_syncs(struct rp *rp, unsigned *mask_p)
{
	static const char *const words[] = {"pscw", "fence", "lock"};
	static const enum rp_sync modes[] = {RP_PSCW, RP_FENCE, RP_LOCK_EXCL};
	const char *s = ng_args_str(rp->run->args, "rma-sync");
	unsigned mask = 0;

	*mask_p = 0;
	if (strcmp(s, "auto") == 0)
		return NG_OK;
	while (*s) {
		size_t len = strcspn(s, ",");
		int k = rp_lookup(words, 3, s, len);

		if (k < 0) {
			if (rp->me == 0)
				ng_error("rma: unknown mode '%.*s' in --rma-sync (pscw, fence, lock, auto)",
				         (int)len, s);
			return NG_ERR_USAGE;
		}
		mask |= RP_BIT(modes[k]);
		s += len;
		s += *s == ',';
	}
	if (!mask) {
		if (rp->me == 0)
			ng_error("rma: --rma-sync names no mode");
		return NG_ERR_USAGE;
	}
	*mask_p = mask;
	return NG_OK;
}

/* ---- the plan ----------------------------------------------------------- */

/* Appends one measurement; NG_ERR_NOMEM (reported). */
static ng_status rp_plan_add(struct rp *rp, size_t *cap, const struct rp_meas *m)
{
	if (rp->nplan == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct rp_meas *p = realloc(rp->plan, ncap * sizeof(*p));

		if (!p) {
			ng_error("rma: out of memory planning the measurements");
			return NG_ERR_NOMEM;
		}
		rp->plan = p;
		*cap = ncap;
	}
	rp->plan[rp->nplan++] = *m;
	return NG_OK;
}

/* Fills in the derived fields of @m (test, sync, size, fan_in, n set). */
static void rp_meas_derive(const struct rp *rp, struct rp_meas *m)
{
	const struct rp_desc *d = &rp_tests[m->test];
	size_t k = d->burst ? rp->W : 1;
	double s = (double)m->size;

	m->nput = d->put && m->test != RP_SYNC ? k : 0;
	m->nget = d->get ? k : 0;
	m->burst = m->nput + m->nget;
	m->half = false;
	switch (d->shape) {
	case RP_ALTERNATE:
		m->origins = m->targets = 2;
		m->half = m->test != RP_SCHED2;
		/* a sample: one epoch (ping-pongs), or one iteration of two (sched-2) */
		m->epochs = m->half ? 1.0 : 2.0;
		m->bytes = m->epochs * (double)m->burst * s;
		break;
	case RP_BOTH:
		m->origins = m->targets = 2;
		m->epochs = 2.0;
		m->bytes = 2.0 * s;
		break;
	case RP_FAN:
		m->origins = m->fan_in ? m->n : 1;
		m->targets = m->fan_in ? 1 : m->n;
		m->epochs = (double)m->origins;
		m->bytes = (double)m->origins * (double)m->targets * (double)m->burst * s;
		break;
	}
}

static ng_status rp_plan_one(struct rp *rp, size_t *cap, enum rp_test t, enum rp_sync sync, size_t size,
                             bool fan_in, int n)
{
	struct rp_meas m = {.test = t, .sync = sync, .size = size, .fan_in = fan_in, .n = n};

	rp_meas_derive(rp, &m);
	return rp_plan_add(rp, cap, &m);
}

/* Records why test @t does not run (a skipped test of "all"). */
static void rp_skip(struct rp *rp, enum rp_test t, const char *why)
{
	if (rp->skipped)
		json_object_set_new(rp->skipped, rp_tests[t].name, json_string(why));
}

/* acc-pingpong: the sizes that are not a multiple of 8 bytes, left out. */
static void rp_skip_sizes(struct rp *rp, enum rp_test t)
{
	const struct ng_run *run = rp->run;
	char why[200] = "sizes left out (not a multiple of 8 bytes, the int64 element):";
	size_t len = strlen(why), left = 0;

	for (size_t i = 0; i < run->nsizes; i++) {
		if (run->sizes[i] % 8 == 0)
			continue;
		left++;
		if (len + 24 < sizeof(why))
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s %zu", left > 1 ? "," : "",
			                        run->sizes[i]);
	}
	if (left)
		rp_skip(rp, t, why);
}

/* The measurements of test @t with the modes @syncs. */
static ng_status rp_plan_test(struct rp *rp, size_t *cap, enum rp_test t, unsigned syncs)
{
	const struct ng_run *run = rp->run;
	bool given = ng_args_given(run->args, "sizes");
	ng_status st = NG_OK;

	for (int s = 0; s < RP_NSYNCS && st == NG_OK; s++) {
		if (!(syncs & RP_BIT(s)))
			continue;
		switch (t) {
		case RP_SYNC:
			for (int n = 1; n <= rp->nmax && st == NG_OK; n++)
				st = rp_plan_one(rp, cap, t, (enum rp_sync)s, 0, true, n);
			for (int n = 2; n <= rp->nmax && st == NG_OK; n++)
				st = rp_plan_one(rp, cap, t, (enum rp_sync)s, 0, false, n);
			break;
		case RP_MULTI:
			for (size_t i = 0; i < (given ? run->nsizes : 1); i++)
				for (int n = 1; n <= rp->nmax && st == NG_OK; n++)
					st = rp_plan_one(rp, cap, t, (enum rp_sync)s,
					                 given ? run->sizes[i] : RP_MULTI_SIZE, true, n);
			break;
		case RP_LOCK:
			for (int type = RP_LOCK_EXCL; type <= RP_LOCK_SHARED; type++) {
				for (size_t i = 0; i < run->nsizes && st == NG_OK; i++)
					st = rp_plan_one(rp, cap, t, (enum rp_sync)type, run->sizes[i], false,
					                 1);
				for (int n = 2; n <= rp->nmax && st == NG_OK; n++)
					st = rp_plan_one(rp, cap, t, (enum rp_sync)type, run->sizes[0], true,
					                 n);
			}
			break;
		default:
			for (size_t i = 0; i < run->nsizes && st == NG_OK; i++)
				if (t != RP_ACC_PP || run->sizes[i] % 8 == 0)
					st =
					    rp_plan_one(rp, cap, t, (enum rp_sync)s, run->sizes[i], false, 1);
			break;
		}
	}
	if (t == RP_ACC_PP)
		rp_skip_sizes(rp, t);
	/* bidir: the same exchange with two-sided operations beside it */
	for (size_t i = 0; t == RP_BIDIR && rp->twoside && i < run->nsizes && st == NG_OK; i++)
		st = rp_plan_one(rp, cap, t, RP_TWOSIDED, run->sizes[i], false, 1);
	return st;
}

/* Why test @t cannot run here with the modes @mask (0: auto), or NULL. */
static const char *rp_cannot(const struct rp *rp, enum rp_test t, unsigned mask, unsigned *syncs_p, char *buf,
                             size_t len)
{
	const struct rp_desc *d = &rp_tests[t];
	const struct ng_run *run = rp->run;
	size_t i;

	*syncs_p = mask ? mask & d->syncs : RP_BIT(d->def);
	if (rp->P < d->min_ranks) {
		snprintf(buf, len, "needs at least %d ranks (a target and %d origins), the run has %d",
		         d->min_ranks, d->min_ranks - 1, rp->P);
		return buf;
	}
	if (!*syncs_p) {
		static const char *const modes[] = {"pscw", "fence", "lock"};
		size_t at = (size_t)snprintf(buf, len, "runs with");

		for (int k = 0, n = 0; k < 3 && at < len; k++)
			if (d->syncs & RP_BIT(k == 2 ? RP_LOCK_EXCL : k))
				at += (size_t)snprintf(buf + at, len - at, "%s %s", n++ ? "," : "", modes[k]);
		if (at < len)
			snprintf(buf + at, len - at, " only, not with the --rma-sync given");
		return buf;
	}
	for (i = 0; t == RP_ACC_PP && i < run->nsizes && run->sizes[i] % 8; i++)
		;
	if (t == RP_ACC_PP && i == run->nsizes) {
		snprintf(buf, len, "accumulates int64 elements and no size is a multiple of 8 bytes");
		return buf;
	}
	return NULL;
}

/* Checks the options and plans every measurement (the same on every rank). */
static ng_status rp_plan_all(struct rp *rp)
{
	const struct ng_run *run = rp->run;
	long long w = ng_args_int(run->args, "rma-burst"), n = ng_args_int(run->args, "rma-origins");
	int order[RP_NTESTS], ntests;
	unsigned mask;
	size_t cap = 0;
	bool all;
	ng_status st;

	if (w < 1 || w > 1024) {
		if (rp->me == 0)
			ng_error("rma: --rma-burst must be 1 to 1024, got %lld", w);
		return NG_ERR_USAGE;
	}
	if (n < 0 || n > rp->P - 1) {
		if (rp->me == 0)
			ng_error("rma: --rma-origins %lld needs %lld ranks, the run has %d", n, n + 1, rp->P);
		return NG_ERR_USAGE;
	}
	rp->W = (size_t)w;
	rp->nmax = n ? (int)n : rp->P - 1;
	st = rp_parse_tests(rp, &all, order, &ntests);
	if (st == NG_OK)
		st = rp_parse_syncs(rp, &mask);
	for (int k = 0; k < ntests && st == NG_OK; k++) {
		enum rp_test t = (enum rp_test)order[k];
		unsigned syncs;
		char why[160];
		const char *no = rp_cannot(rp, t, mask, &syncs, why, sizeof(why));

		if (no && !all) {
			if (rp->me == 0)
				ng_error("rma: test %s %s", rp_tests[t].name, no);
			return NG_ERR_USAGE;
		}
		if (no) {
			rp_skip(rp, t, no);
			continue;
		}
		st = rp_plan_test(rp, &cap, t, syncs);
	}
	if (st == NG_OK && rp->nplan == 0) {
		if (rp->me == 0)
			ng_error("rma: no test can run with these options");
		st = NG_ERR_USAGE;
	}
	return st;
}

/* ---- windows ------------------------------------------------------------ */

/* Allocates the window for the measurements plan[first..last) of one test. */
static ng_status rp_win_open(struct rp *rp, size_t first, size_t last)
{
	size_t smax = 0, nput = 0, nget = 0, ndst = 0, len;
	bool twoside = false;
	void *meet;
	ng_status st;

	for (size_t i = first; i < last; i++) {
		const struct rp_meas *m = &rp->plan[i];
		size_t puts = m->nput * (size_t)(m->fan_in ? m->n : 1);

		smax = m->size > smax ? m->size : smax;
		nput = puts > nput ? puts : nput;
		nget = m->nget > nget ? m->nget : nget;
		ndst = m->nget > ndst ? m->nget : ndst;
		ndst = m->nput > ndst ? m->nput : ndst; /* passive puts are read back */
		twoside = twoside || m->sync == RP_TWOSIDED;
	}
	rp->stride = ng_slot_stride(smax);
	rp->half = nput * rp->stride;
	rp->get_off = 2 * rp->half;
	rp->src_off = rp->get_off + nget * rp->stride;
	rp->dst_off = rp->src_off + rp->stride;
	len = rp->dst_off + ndst * rp->stride;
	st = rp->o->win_allocate(rp->c, len, (void **)&rp->base, &rp->w);
	if (st == NG_OK)
		st = rp->o->win_allocate(rp->c, 64, &meet, &rp->meet);
	if (st != NG_OK)
		return st;
	if (twoside)
		st = ng_bufs_alloc(rp->c, smax, smax, &rp->bufs);
	return st;
}

static void rp_win_close(struct rp *rp)
{
	ng_bufs_free(rp->c, &rp->bufs);
	if (rp->meet)
		rp->o->win_free(rp->c, rp->meet);
	if (rp->w)
		rp->o->win_free(rp->c, rp->w);
	rp->w = rp->meet = NULL;
	rp->base = NULL;
}

/* Offset of origin @k's first put slot in the put area of parity @par. */
static size_t rp_put_off(const struct rp *rp, const struct rp_meas *m, size_t par, int k)
{
	return par * rp->half + (size_t)k * m->nput * rp->stride;
}

/* ---- --verify ----------------------------------------------------------- */

/* Reports the first wrong byte of this rank (once per run) and marks the
 * measurement failed; the ranks agree on it afterwards. */
static void rp_fail(struct rp *rp, const struct rp_meas *m, const char *what, int from, uint64_t it,
                    const unsigned char *got, size_t off, unsigned char want)
{
	if (!rp->told)
		ng_error("verify: rma %s (%s) size %zu, %s from rank %d, iteration %" PRIu64
		         ": byte at offset %zu is 0x%02x, expected 0x%02x",
		         rp_tests[m->test].name, rp_sync_names[m->sync], m->size, what, from, it, off,
		         got[off], want);
	rp->told = true;
	rp->bad = true;
}

/* Checks @len bytes at @buf against @tag; counts the check. */
static void rp_check(struct rp *rp, const struct rp_meas *m, const char *what, int from, uint64_t it,
                     const unsigned char *buf, uint64_t tag, bool acc)
{
	size_t off;
	unsigned char want;

	if (!rp->bad && !ng_rma_check(buf, m->size, tag, acc, &off, &want))
		rp_fail(rp, m, what, from, it, buf, off, want);
}

static uint64_t rp_put_tag(const struct rp_meas *m, int origin, uint64_t it)
{
	return ng_rma_tag(m->test, m->size, origin, 0, it);
}

static uint64_t rp_get_tag(const struct rp_meas *m, int target, size_t slot)
{
	return ng_rma_tag(m->test, m->size, target, RP_GET_SLOT + slot, RP_FIXED);
}

/* The base an accumulate target is reset to. */
static uint64_t rp_acc_base(const struct rp_meas *m, int target)
{
	return ng_rma_tag(m->test, m->size, target, RP_GET_SLOT - 1, RP_FIXED);
}

/* Before a measurement, outside every epoch: the get area's content and
 * the accumulate base of this rank as a target. */
/* The put slots of origin @from (its @k-th) for iteration @it, at this
 * rank: the complement of what that iteration will bring. */
static void rp_spoil_puts(struct rp *rp, const struct rp_meas *m, uint64_t it, int from, int k)
{
	size_t at = rp_put_off(rp, m, it & 1, k);

	for (size_t j = 0; j < m->nput; j++)
		ng_rma_spoil(rp->base + at + j * rp->stride, m->size, rp_put_tag(m, from, it), false);
}

/* Before a measurement, outside every epoch, on this rank as a target: the
 * get area's content, the accumulate base, the put slots spoiled for the
 * first two iterations (each check spoils them for the iteration after
 * next). */
static void rp_verify_setup(struct rp *rp, const struct rp_meas *m)
{
	int me = rp->me;

	if (!rp->run->verify)
		return;
	for (size_t j = 0; j < m->nget; j++)
		ng_rma_fill(rp->base + rp->get_off + j * rp->stride, m->size, rp_get_tag(m, me, j), false);
	if (rp_tests[m->test].acc)
		for (size_t par = 0; par < 2; par++)
			ng_rma_fill(rp->base + rp_put_off(rp, m, par, 0), m->size, rp_acc_base(m, me), true);
	if (rp_tests[m->test].acc || !m->nput)
		return;
	for (uint64_t it = 0; it < 2; it++) {
		if (rp_tests[m->test].shape != RP_FAN && me < 2)
			rp_spoil_puts(rp, m, it, me == 0 ? 1 : 0, 0);
		else if (rp_tests[m->test].shape == RP_FAN && m->fan_in && me == 0)
			for (int o = 1; o <= m->n; o++)
				rp_spoil_puts(rp, m, it, o, o - 1);
		else if (rp_tests[m->test].shape == RP_FAN && !m->fan_in && me >= 1 && me <= m->n)
			rp_spoil_puts(rp, m, it, 0, 0);
	}
}

/* Origin side before iteration @it: the data its puts carry, and its get
 * destinations spoiled for the targets' content. */
static void rp_verify_prep(struct rp *rp, const struct rp_meas *m, uint64_t it, int target)
{
	if (!rp->run->verify)
		return;
	if (m->nput)
		ng_rma_fill(rp->base + rp->src_off, m->size, rp_put_tag(m, rp->me, it),
		            rp_tests[m->test].acc);
	for (size_t j = 0; j < m->nget; j++)
		ng_rma_spoil(rp->base + rp->dst_off + j * rp->stride, m->size, rp_get_tag(m, target, j),
		             false);
}

/* Target side after iteration @it closed here: the puts (accumulates) of
 * origin @from, its @k-th, in the half of parity @it. */
static void rp_verify_puts(struct rp *rp, const struct rp_meas *m, uint64_t it, int from, int k)
{
	size_t at = rp_put_off(rp, m, it & 1, k);
	uint64_t tag = rp_put_tag(m, from, it);

	if (!rp->run->verify || !m->nput)
		return;
	if (rp_tests[m->test].acc) {
		size_t off;
		unsigned char want;

		/* one accumulate per epoch onto the base */
		if (!rp->bad &&
		    !ng_rma_check_sum(rp->base + at, m->size, rp_acc_base(m, rp->me), tag, &off, &want))
			rp_fail(rp, m, "accumulate", from, it, rp->base + at, off, want);
		ng_rma_fill(rp->base + at, m->size, rp_acc_base(m, rp->me), true);
	} else {
		for (size_t j = 0; j < m->nput; j++)
			rp_check(rp, m, "put", from, it, rp->base + at + j * rp->stride, tag, false);
		rp_spoil_puts(rp, m, it + 2, from, k);
	}
	rp->checked++;
}

/* Origin side after its epoch to @target closed: the gets. */
static void rp_verify_gets(struct rp *rp, const struct rp_meas *m, uint64_t it, int target)
{
	if (!rp->run->verify || !m->nget)
		return;
	for (size_t j = 0; j < m->nget; j++)
		rp_check(rp, m, "get", target, it, rp->base + rp->dst_off + j * rp->stride,
		         rp_get_tag(m, target, j), false);
	if (!m->nput)
		rp->checked++; /* an epoch with puts is counted by their check */
}

/* Passive target: the origin reads its puts of iteration @it back in an
 * untimed epoch of the same lock type. */
static ng_status rp_verify_readback(struct rp *rp, const struct rp_meas *m, uint64_t it, int target, int k)
{
	size_t at = rp_put_off(rp, m, it & 1, k);
	unsigned char *dst = rp->base + rp->dst_off;
	uint64_t tag = rp_put_tag(m, rp->me, it);
	ng_status st;

	if (!rp->run->verify || !m->nput)
		return NG_OK;
	for (size_t j = 0; j < m->nput; j++)
		ng_rma_spoil(dst + j * rp->stride, m->size, tag, false);
	st = rp->o->lock(rp->c, rp->w, target, m->sync == RP_LOCK_EXCL);
	for (size_t j = 0; j < m->nput && st == NG_OK; j++)
		st = rp->o->get(rp->c, rp->w, target, at + j * rp->stride, dst + j * rp->stride, m->size);
	if (st == NG_OK)
		st = rp->o->unlock(rp->c, rp->w, target);
	for (size_t j = 0; j < m->nput && st == NG_OK; j++)
		rp_check(rp, m, "put (read back)", rp->me, it, dst + j * rp->stride, tag, false);
	/* the slots spoiled for the iteration after next, in one more epoch */
	for (size_t j = 0; j < m->nput; j++)
		ng_rma_spoil(dst + j * rp->stride, m->size, rp_put_tag(m, rp->me, it + 2), false);
	if (st == NG_OK)
		st = rp->o->lock(rp->c, rp->w, target, m->sync == RP_LOCK_EXCL);
	for (size_t j = 0; j < m->nput && st == NG_OK; j++)
		st = rp->o->put(rp->c, rp->w, target, at + j * rp->stride, dst + j * rp->stride, m->size);
	if (st == NG_OK)
		st = rp->o->unlock(rp->c, rp->w, target);
	rp->checked++;
	return st;
}

/* ---- the timed loops ---------------------------------------------------- */

/* The operations of one access epoch to @t: puts (accumulates) at @put_off,
 * gets of the get area.  Module calls only. */
static ng_status rp_ops(struct rp *rp, const struct rp_meas *m, int t, size_t put_off)
{
	const struct ng_rma_ops *o = rp->o;
	const unsigned char *src = rp->base + rp->src_off;
	unsigned char *dst = rp->base + rp->dst_off;
	size_t S = rp->stride;
	ng_status st = NG_OK;

	for (size_t j = 0; j < m->nput && st == NG_OK; j++) {
		if (rp_tests[m->test].acc)
			st = o->accumulate(rp->c, rp->w, t, put_off + j * S, src, m->size / 8, NG_RMA_INT64,
			                   NG_RMA_SUM);
		else
			st = o->put(rp->c, rp->w, t, put_off + j * S, src, m->size);
	}
	for (size_t j = 0; j < m->nget && st == NG_OK; j++)
		st = o->get(rp->c, rp->w, t, rp->get_off + j * S, dst + j * S, m->size);
	return st;
}

/* One PSCW access epoch: start(@tg), the operations to each target,
 * complete.  Module calls only. */
static ng_status rp_access(struct rp *rp, const struct rp_meas *m, const int *tg, int ntg, size_t put_off)
{
	ng_status st = rp->o->start(rp->c, rp->w, tg, ntg);

	for (int i = 0; i < ntg && st == NG_OK; i++)
		st = rp_ops(rp, m, tg[i], put_off);
	return st == NG_OK ? rp->o->complete(rp->c, rp->w) : st;
}

static void rp_sample(struct rp *rp, const struct rp_meas *m, uint64_t it, uint64_t t0, uint64_t t1)
{
	double us = ng_timer_us(rp->tm, t1 - t0);

	if (!ng_sampler_timed(&rp->smp, it))
		return;
	if (it == rp->run->warmup)
		rp->first = t0;
	rp->last = t1;
	ng_sampler_add(&rp->smp, RP_S_TIME, it, m->half ? us / 2.0 : us);
	ng_sampler_add(&rp->smp, RP_S_START, it, ng_timer_us(rp->tm, t0));
}

/*
 * put/get/acc-pingpong, sched-2: rank 0 accesses 1, then 1 accesses 0.
 *   pscw   0: start, ops, complete, post, wait    1: post, wait, start, ops, complete
 *   fence  0's ops, fence, 1's ops, fence (after one fence that opens the first epoch)
 */
static ng_status rp_alternate(struct rp *rp, const struct rp_meas *m)
{
	const struct ng_rma_ops *o = rp->o;
	const struct ng_timer *tm = rp->tm;
	struct ng_comm *c = rp->c;
	struct ng_win *w = rp->w;
	bool a = rp->me == 0, b = rp->me == 1, fence = m->sync == RP_FENCE;
	int peer = a ? 1 : 0;
	uint64_t t0 = 0, t1 = 0;
	ng_status st = NG_OK;

	if (!a && !b && !fence)
		return NG_OK;
	if (fence)
		st = o->fence(c, w);
	if (b && !fence)
		rp_verify_prep(rp, m, 0, peer);
	for (uint64_t it = 0; ng_sampler_more(&rp->smp, it) && st == NG_OK; it++) {
		size_t off = rp_put_off(rp, m, it & 1, 0);

		if (fence) {
			if (a || b)
				rp_verify_prep(rp, m, it, peer);
			t0 = ng_timer_now(tm);
			if (a)
				st = rp_ops(rp, m, peer, off);
			if (st == NG_OK)
				st = o->fence(c, w);
			if (st == NG_OK && b)
				st = rp_ops(rp, m, peer, off);
			if (st == NG_OK)
				st = o->fence(c, w);
			t1 = ng_timer_now(tm);
		} else if (a) {
			rp_verify_prep(rp, m, it, peer);
			t0 = ng_timer_now(tm);
			st = rp_access(rp, m, &peer, 1, off);
			if (st == NG_OK)
				st = o->post(c, w, &peer, 1);
			if (st == NG_OK)
				st = o->wait(c, w);
			t1 = ng_timer_now(tm);
		} else {
			st = o->post(c, w, &peer, 1);
			if (st == NG_OK)
				st = o->wait(c, w);
			if (st == NG_OK)
				st = rp_access(rp, m, &peer, 1, off);
		}
		if (st != NG_OK)
			break;
		if (a)
			rp_sample(rp, m, it, t0, t1);
		if (a || b) {
			rp_verify_puts(rp, m, it, peer, 0);
			rp_verify_gets(rp, m, it, peer);
		}
		if (b && !fence)
			rp_verify_prep(rp, m, it + 1, peer);
	}
	return st;
}

/* bidir: ranks 0 and 1 put into each other in one epoch (fence, pscw), or
 * exchange messages (isend/irecv/waitall). */
static ng_status rp_both(struct rp *rp, const struct rp_meas *m)
{
	const struct ng_rma_ops *o = rp->o;
	const struct ng_timer *tm = rp->tm;
	struct ng_comm *c = rp->c;
	struct ng_win *w = rp->w;
	bool active = rp->me < 2, verify = rp->run->verify;
	int peer = rp->me == 0 ? 1 : 0;
	unsigned char *sbuf = rp->bufs.send, *rbuf = rp->bufs.recv;
	uint64_t t0 = 0, t1 = 0;
	ng_status st = NG_OK;

	if (!active && m->sync != RP_FENCE)
		return NG_OK;
	if (m->sync == RP_FENCE)
		st = o->fence(c, w);
	for (uint64_t it = 0; ng_sampler_more(&rp->smp, it) && st == NG_OK; it++) {
		size_t off = rp_put_off(rp, m, it & 1, 0);

		if (active)
			rp_verify_prep(rp, m, it, peer);
		if (verify && active && m->sync == RP_TWOSIDED) {
			ng_rma_fill(sbuf, m->size, rp_put_tag(m, rp->me, it), false);
			ng_rma_spoil(rbuf, m->size, rp_put_tag(m, peer, it), false);
		}
		t0 = ng_timer_now(tm);
		switch (m->sync) {
		case RP_FENCE:
			if (active)
				st = rp_ops(rp, m, peer, off);
			if (st == NG_OK)
				st = o->fence(c, w);
			break;
		case RP_PSCW:
			st = o->post(c, w, &peer, 1);
			if (st == NG_OK)
				st = rp_access(rp, m, &peer, 1, off);
			if (st == NG_OK)
				st = o->wait(c, w);
			break;
		default:
			st = ng_irecv(c, peer, rbuf, m->size, &rp->reqs[0]);
			if (st == NG_OK)
				st = ng_isend(c, peer, sbuf, m->size, &rp->reqs[1]);
			if (st == NG_OK)
				st = ng_waitall(c, rp->reqs, 2);
			break;
		}
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			break;
		if (rp->me == 0)
			rp_sample(rp, m, it, t0, t1);
		if (active && m->sync != RP_TWOSIDED)
			rp_verify_puts(rp, m, it, peer, 0);
		if (verify && active && m->sync == RP_TWOSIDED) {
			rp_check(rp, m, "message", peer, it, rbuf, rp_put_tag(m, peer, it), false);
			rp->checked++;
		}
	}
	return st;
}

/*
 * The fan tests: origins 1..n into target 0 (fan_in), or origin 0 into
 * targets 1..n (one to one: n = 1).  Per iteration:
 *   pscw   targets: post(origins), wait; origins: start(targets), ops to
 *          each, complete.  Timed at rank 0 (the target of a fan-in, else
 *          the origin).
 *   fence  origins' ops, fence; rank 0 times fence to fence.
 *   lock   origins: lock every target, ops to each, unlock each; every
 *          origin times its own epochs.  Then every rank meets in a fence of
 *          the second window, in which the others wait meanwhile (and serve,
 *          where the module needs them to): one iteration at a time, so no
 *          rank waits there longer than an iteration takes (a module may
 *          end a call that waits beyond --timeout).
 */
static ng_status rp_fan(struct rp *rp, const struct rp_meas *m)
{
	const struct ng_rma_ops *o = rp->o;
	const struct ng_timer *tm = rp->tm;
	struct ng_comm *c = rp->c;
	struct ng_win *w = rp->w;
	int me = rp->me, n = m->n, *og = rp->ogrp, *tg = rp->tgrp, nog, ntg;
	bool origin, target, lock = m->sync == RP_LOCK_EXCL || m->sync == RP_LOCK_SHARED;
	bool excl = m->sync == RP_LOCK_EXCL, timer;
	int k = m->fan_in ? me - 1 : 0; /* this origin's index among the origins */
	uint64_t t0 = 0, t1 = 0;
	ng_status st = NG_OK;

	nog = m->fan_in ? n : 1;
	ntg = m->fan_in ? 1 : n;
	for (int i = 0; i < nog; i++)
		og[i] = m->fan_in ? i + 1 : 0;
	for (int i = 0; i < ntg; i++)
		tg[i] = m->fan_in ? 0 : i + 1;
	origin = m->fan_in ? me >= 1 && me <= n : me == 0;
	target = m->fan_in ? me == 0 : me >= 1 && me <= n;
	timer = lock ? origin : me == 0;

	/* fence: opens the first epoch; lock: the origins start together, in a
	 * fence of the other window (no active-target epoch on the locked one) */
	if (m->sync == RP_FENCE || lock)
		st = o->fence(c, lock ? rp->meet : w);
	for (uint64_t it = 0; ng_sampler_more(&rp->smp, it) && st == NG_OK &&
	                      (origin || target || m->sync == RP_FENCE || lock);
	     it++) {
		size_t off = rp_put_off(rp, m, it & 1, k);

		if (origin)
			rp_verify_prep(rp, m, it, tg[0]);
		switch (m->sync) {
		case RP_PSCW:
			t0 = ng_timer_now(tm);
			if (target)
				st = o->post(c, w, og, nog);
			if (origin && st == NG_OK)
				st = rp_access(rp, m, tg, ntg, off);
			if (target && st == NG_OK)
				st = o->wait(c, w);
			t1 = ng_timer_now(tm);
			break;
		case RP_FENCE:
			t0 = ng_timer_now(tm);
			for (int i = 0; origin && i < ntg && st == NG_OK; i++)
				st = rp_ops(rp, m, tg[i], off);
			if (st == NG_OK)
				st = o->fence(c, w);
			t1 = ng_timer_now(tm);
			break;
		default:
			if (!origin)
				break; /* to the meeting (a target serves there) */
			t0 = ng_timer_now(tm);
			for (int i = 0; i < ntg && st == NG_OK; i++)
				st = o->lock(c, w, tg[i], excl);
			for (int i = 0; i < ntg && st == NG_OK; i++)
				st = rp_ops(rp, m, tg[i], off);
			for (int i = 0; i < ntg && st == NG_OK; i++)
				st = o->unlock(c, w, tg[i]);
			t1 = ng_timer_now(tm);
			break;
		}
		if (st != NG_OK)
			break;
		if (timer)
			rp_sample(rp, m, it, t0, t1);
		if (target && !lock)
			for (int i = 0; i < nog; i++)
				rp_verify_puts(rp, m, it, og[i], m->fan_in ? i : 0);
		if (origin) {
			rp_verify_gets(rp, m, it, tg[0]);
			for (int i = 0; lock && i < ntg && st == NG_OK; i++)
				st = rp_verify_readback(rp, m, it, tg[i], k);
		}
		/* every rank meets the others after each lock iteration (the
		 * read-back included), never waiting longer than one of them */
		if (lock && st == NG_OK)
			st = o->fence(c, rp->meet);
	}
	return st;
}

/* ---- reporting ---------------------------------------------------------- */

/* The time in which the origins of a lock measurement held epochs: the
 * ranks meet between iterations, so per iteration from the first start to
 * the last end (one host: one clock), else the longest epoch; summed. */
static double rp_lock_span(const struct rp *rp, const struct rp_meas *m, int first)
{
	size_t count = ng_sampler_count(&rp->smp);
	double span = 0.0;

	for (size_t i = 0; i < count; i++) {
		double lo = 1e300, hi = -1e300, longest = 0.0;

		for (int r = first; r < first + m->origins; r++) {
			double s = ng_sampler_of(&rp->smp, r, RP_S_START)[i];
			double d = ng_sampler_of(&rp->smp, r, RP_S_TIME)[i];

			lo = s < lo ? s : lo;
			hi = s + d > hi ? s + d : hi;
			longest = d > longest ? d : longest;
		}
		span += rp->one_host ? hi - lo : longest;
	}
	return span;
}

/* After a measurement, collective: agrees on --verify, gathers pooled
 * samples, and commits the row. */
static ng_status rp_report(struct rp *rp, const struct rp_meas *m)
{
	struct ng_run *run = rp->run;
	struct ng_sampler *smp = &rp->smp;
	size_t count = ng_sampler_count(smp), n = count;
	bool pooled = m->sync == RP_LOCK_EXCL || m->sync == RP_LOCK_SHARED;
	double agree[2] = {rp->bad ? 1.0 : 0.0, (double)rp->checked};
	double span[3] = {-1e300, -1e300, 0.0}; /* latest end, -earliest start, longest own span */
	const double *x = ng_sampler_mine(smp, RP_S_TIME);
	struct ng_stats t, bw;
	struct ng_row *row;
	ng_status st;

	st = ng_boot_sum(run->boot, agree, 2);
	if (st != NG_OK)
		return st;
	if (agree[0] > 0.0)
		return NG_ERR_VERIFY; /* reported by the rank that saw it */
	if (rp->last > rp->first) {
		span[0] = ng_timer_us(rp->tm, rp->last);
		span[1] = -ng_timer_us(rp->tm, rp->first);
		span[2] = ng_timer_us(rp->tm, rp->last - rp->first);
	}
	st = ng_boot_max(run->boot, span, 3);
	if (st != NG_OK)
		return st;
	/* ranks on one host share the clock: from the first start to the last end */
	if (rp->one_host && span[0] + span[1] > 0.0)
		span[2] = span[0] + span[1];
	if (pooled) {
		st = ng_sampler_gather(smp);
		if (st != NG_OK)
			return st;
	}
	if (!ng_results_active(run->results))
		return NG_OK;
	if (pooled) {
		/* the origins' samples: rank 0 (one to one) or ranks 1..n */
		int first = m->fan_in ? 1 : 0;

		for (int r = 0; r < m->origins; r++)
			rp->ogrp[r] = first + r;
		x = ng_sampler_pool(smp, RP_S_TIME, rp->ogrp, (size_t)m->origins, &n);
		span[2] = rp_lock_span(rp, m, first);
	}

	row = ng_sampler_row(smp, m->size);
	ng_row_json(row, "test", json_string(rp_tests[m->test].name));
	ng_row_json(row, "sync", json_string(rp_sync_names[m->sync]));
	ng_sampler_row_stats(smp, row, "time_us", x, n, &t);
	ng_sampler_row_bw(smp, row, "bandwidth_MBps", x, n, m->bytes, &bw);
	ng_sampler_row_bw(smp, row, "epochs_per_s", x, n, m->epochs * 1e6, NULL);
	ng_row_number(row, "origins", m->origins);
	ng_row_number(row, "targets", m->targets);
	ng_row_number(row, "burst", (double)m->burst);
	ng_row_number(row, "verified", agree[1]);
	/* every access epoch of the timed iterations over their span: on one
	 * host from the first start to the last end of any timing rank, else
	 * the longest of their own spans; lock: per iteration (rp_lock_span) */
	ng_row_number(row, "aggregate_epochs_per_s",
	              span[2] > 0.0 ? m->epochs * (m->half ? 2.0 : 1.0) * (double)count * 1e6 / span[2]
	                            : 0.0);
	ng_sampler_row_raw(smp, row, "time_us", x, n);
	rp->med[m - rp->plan] = rp_tests[m->test].burst ? bw.median : t.median;
	return ng_row_commit(run->results, row);
}

/* The "rma" block: what ran and what was left out. */
static ng_status rp_block(struct rp *rp)
{
	const struct ng_run *run = rp->run;
	json_t *blk, *tests, *msizes;
	bool given = ng_args_given(run->args, "sizes");

	if (!ng_results_active(run->results))
		return NG_OK;
	blk = json_object();
	tests = json_array();
	msizes = json_array();
	if (!blk || !tests || !msizes) {
		json_decref(blk);
		json_decref(tests);
		json_decref(msizes);
		ng_error("rma: out of memory building the result block");
		return NG_ERR_NOMEM;
	}
	for (size_t i = 0; i < rp->nplan; i++) {
		const char *name = rp_tests[rp->plan[i].test].name;

		if (i == 0 || rp->plan[i - 1].test != rp->plan[i].test)
			json_array_append_new(tests, json_string(name));
	}
	for (size_t i = 0; i < (given ? run->nsizes : 1); i++)
		json_array_append_new(msizes,
		                      json_integer((json_int_t)(given ? run->sizes[i] : RP_MULTI_SIZE)));
	json_object_set_new(blk, "tests", tests);
	json_object_set_new(blk, "burst", json_integer((json_int_t)rp->W));
	json_object_set_new(blk, "max_origins", json_integer(rp->nmax));
	json_object_set_new(blk, "multi_origin_sizes", msizes);
	json_object_set_new(blk, "lock_throughput_size", json_integer((json_int_t)run->sizes[0]));
	json_object_set(blk, "skipped", rp->skipped);
	return ng_results_block(run->results, "rma", blk);
}

/* Side by side on stdout: per test, size and origins/targets, the median
 * of its main figure for each synchronisation mode. */
static void rp_summary(const struct rp *rp)
{
	const char *unit = NULL;

	if (!ng_results_active(rp->run->results))
		return;
	for (size_t i = 0; i < rp->nplan; i++) {
		const struct rp_meas *m = &rp->plan[i];
		bool dup = false;

		for (size_t k = 0; k < i && !dup; k++)
			dup = rp->plan[k].test == m->test && rp->plan[k].size == m->size &&
			      rp->plan[k].origins == m->origins && rp->plan[k].targets == m->targets;
		if (dup)
			continue;
		if (i == 0 || rp->plan[i - 1].test != m->test) {
			unit = rp_tests[m->test].burst ? "bandwidth_MBps" : "time_us";
			printf("# rma %s: median %s by synchronisation\n#%9s %7s %7s", rp_tests[m->test].name,
			       unit, "size", "origins", "targets");
			for (int s = 0; s < RP_NSYNCS; s++)
				printf(" %14s", rp_sync_names[s]);
			putchar('\n');
		}
		printf("%10zu %7d %7d", m->size, m->origins, m->targets);
		for (int s = 0; s < RP_NSYNCS; s++) {
			size_t k;

			for (k = i; k < rp->nplan; k++) {
				const struct rp_meas *x = &rp->plan[k];

				if (x->test == m->test && x->size == m->size && x->origins == m->origins &&
				    x->targets == m->targets && x->sync == (enum rp_sync)s)
					break;
			}
			if (k < rp->nplan)
				printf(" %14.4g", rp->med[k]);
			else
				printf(" %14s", "-");
		}
		putchar('\n');
	}
	fflush(stdout);
}

/* ---- run ---------------------------------------------------------------- */

/* Whether every rank runs on this rank's host. */
static ng_status rp_one_host(struct rp *rp)
{
	struct ng_boot *b = rp->run->boot;
	size_t len = sizeof(b->host);
	char *all = calloc((size_t)rp->P, len);
	ng_status st;

	if (!all) {
		ng_error("rma: out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_boot_allgather(b, b->host, len, all);
	rp->one_host = st == NG_OK;
	for (int r = 0; r < rp->P && st == NG_OK; r++)
		rp->one_host = rp->one_host && strncmp(all + (size_t)r * len, b->host, len) == 0;
	free(all);
	return st;
}

static ng_status rp_setup(struct rp *rp)
{
	size_t count = rp->run->count, P = (size_t)rp->P;
	struct ng_sampler_spec spec = {
	    .name = "rma",
	    .streams = RP_NSTREAMS,
	    .cap = count,
	    .pool = P,
	    .flags = NG_SAMPLER_GATHER,
	};
	ng_status st;

	rp->ogrp = calloc(P, sizeof(*rp->ogrp));
	rp->tgrp = calloc(P, sizeof(*rp->tgrp));
	if (!rp->ogrp || !rp->tgrp)
		goto err_nomem;
	st = ng_sampler_init(&rp->smp, rp->run, &spec);
	if (st != NG_OK)
		return st;
	if (ng_results_active(rp->run->results)) {
		rp->skipped = json_object();
		if (!rp->skipped)
			goto err_nomem;
	}
	return rp_one_host(rp);

err_nomem:
	ng_error("rma: out of memory for %zu samples", count);
	return NG_ERR_NOMEM;
}

/* Frees what the run allocated.  The window is freed (collectively) only
 * when every rank ends the same way; after another error the module's close
 * releases it. */
static void rp_teardown(struct rp *rp, ng_status st)
{
	if (st == NG_OK || st == NG_ERR_VERIFY)
		rp_win_close(rp);
	else
		ng_bufs_free(rp->c, &rp->bufs);
	free(rp->plan);
	free(rp->ogrp);
	free(rp->tgrp);
	ng_sampler_free(&rp->smp);
	free(rp->med);
	json_decref(rp->skipped);
}

static ng_status rp_measure(struct rp *rp, const struct rp_meas *m)
{
	ng_status st;

	rp->bad = false;
	rp->checked = 0;
	rp->first = rp->last = 0;
	ng_sampler_start(&rp->smp, rp->run->warmup, rp->run->count);
	rp_verify_setup(rp, m);
	st = ng_sizes_sync(rp->run);
	if (st != NG_OK)
		return st;
	switch (rp_tests[m->test].shape) {
	case RP_ALTERNATE:
		st = rp_alternate(rp, m);
		break;
	case RP_BOTH:
		st = rp_both(rp, m);
		break;
	case RP_FAN:
		st = rp_fan(rp, m);
		break;
	}
	if (st == NG_OK)
		st = rp_report(rp, m);
	return st;
}

static ng_status rp_run(const struct ng_pattern *p, struct ng_run *run)
{
	struct rp rp = {
	    .run = run,
	    .c = run->comm,
	    .o = ng_rma(run->comm),
	    .tm = run->timer,
	    .me = run->boot->rank,
	    .P = run->boot->size,
	    .twoside =
	        (run->comm->caps & (NG_CAP_CHANNEL | NG_CAP_NONBLOCK)) == (NG_CAP_CHANNEL | NG_CAP_NONBLOCK),
	};
	ng_status st;

	(void)p;
	st = ng_sizes_check(run);
	if (st == NG_OK)
		st = rp_setup(&rp);
	if (st == NG_OK)
		st = rp_plan_all(&rp);
	if (st == NG_OK && ng_results_active(run->results)) {
		rp.med = calloc(rp.nplan, sizeof(*rp.med));
		if (!rp.med) {
			ng_error("rma: out of memory");
			st = NG_ERR_NOMEM;
		}
	}
	if (st == NG_OK)
		st = rp_block(&rp);
	for (size_t i = 0; i < rp.nplan && st == NG_OK; i++) {
		const struct rp_meas *m = &rp.plan[i];

		if (i == 0 || rp.plan[i - 1].test != m->test) {
			size_t last = i;

			rp_win_close(&rp);
			while (last < rp.nplan && rp.plan[last].test == m->test)
				last++;
			st = rp_win_open(&rp, i, last);
			if (st != NG_OK)
				break;
		}
		st = rp_measure(&rp, m);
		if (st == NG_OK && rp.me == 0)
			ng_progress(run, i + 1, rp.nplan, m->size);
	}
	if (st == NG_OK)
		rp_summary(&rp);
	rp_teardown(&rp, st);
	return st;
}

const struct ng_pattern ng_pattern_rma = {
    .name = "rma",
    .desc = "MPI-2 one-sided micro-benchmarks: put/get/acc ping-pong, bidir, put/get bandwidth, sync, "
            "multi-origin, scheduling patterns, passive locks (--rma-test)",
    .options = rp_options,
    .needs = NG_CAP_ONESIDED,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = false,
    .default_sizes = "1-1M",
    .run = rp_run,
};
