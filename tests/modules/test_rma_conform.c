/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance of a one-sided module (struct ng_rma_ops) on three ranks:
 *
 *   test_rma_conform rma DESIGN SCHED BACKEND [PROVIDER]   e.g. rma direct none shm
 *       the rma module on three local ranks, one design/scheduling/backend
 *   mpiexec -n 3 test_rma_conform mpirma
 *       the MPI library's own one-sided operations (module mpirma)
 *   mpiexec -n 2 test_rma_conform mpirma start-timeout
 *       rank 0 starts an access epoch to rank 1, which never posts: the
 *       mpirma watchdog must end the run (exit 1, one line naming
 *       MPI_Win_start and rank 1) after --timeout (2 s); checked by
 *       tests/mpi/mpirma.sh
 *
 * Every synchronisation mode carries content checks:
 *   pscw     rank 0 puts 1 B .. 1 MiB at odd offsets into ranks 1 and 2 and
 *            gets back what they wrote themselves; the targets check their
 *            window after wait, the origin its buffers after complete
 *   fence    every rank puts into the next and gets from the previous
 *   gets     rank 0 gets 22 pieces of 1 B .. 4093 B (around --rma-aggregate,
 *            256 B) from each of ranks 1 and 2 in one PSCW epoch and checks
 *            every byte right after complete; where gets are answered by
 *            the target inside its wait (rma sendrecv; rma direct with
 *            aggregate|all up to 256 B), the targets rewrite the get area
 *            after the origin's get calls and before their wait (out of
 *            MPI's rules, on purpose), and the origin must hold the
 *            rewritten bytes: the answer came from the wait, and complete
 *            waited for it.  Then small gets in fence and lock epochs,
 *            checked right after the fence and the unlock.
 *   acc      ranks 0..2 accumulate int64 and double sums (and a max) into
 *            rank 0's window 500 times each: exact totals
 *   lock     each rank increments a counter in rank 0's window 200 times by
 *            get/put under an exclusive lock of a second window (a
 *            non-atomic read-modify-write): exactly 600; two ranks hold
 *            shared locks at once (they meet at a fence inside)
 *   errors   a range outside the window, a rank outside the run and one
 *            outside the access epoch's group, an operation outside an
 *            epoch, unlock without lock, complete without start, wait
 *            without post: NG_ERR_USAGE; start without a post:
 *            NG_ERR_TIMEOUT after the (short) timeout, 2 s or
 *            $NGAUGE_RMA_TEST_TIMEOUT (rma; mpirma cannot return from
 *            MPI_Win_start: the start-timeout run)
 * Some targets serve passive-target requests only inside one-sided calls
 * (the rma sendrecv design, a backend whose atomics need the target, and
 * mpirma: MPICH progresses lock epochs only while the target is inside
 * MPI), so the ranks meet in fences of a second window, never in a
 * computation outside the module, while lock epochs may be pending.
 * Exit 77 when the backend cannot be opened, or mpirma is not launched by
 * mpiexec (or the build has no MPI).
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/args.h"
#include "core/bootstrap.h"
#include "core/launch.h"
#include "core/module.h"
#include "core/plugin.h"

#include "../check.h"

extern const struct ng_module ng_module_rma;
#if NG_HAVE_MPI
extern const struct ng_module ng_module_mpirma;
extern const struct ng_option ng_mpi_options[];
#endif

#define WLEN ((size_t)(2 << 20) + 4096)

struct t {
	struct ng_comm *c;
	const struct ng_rma_ops *o;
	struct ng_boot *b;
	struct ng_win *w;
	unsigned char *win;
	unsigned char *buf; /* origin memory: ordinary heap */
	int me, n;
	bool sendrecv;        /* rma sendrecv: rank 0 serves the lockers */
	bool timeout_returns; /* start without a post returns NG_ERR_TIMEOUT */
	size_t answered;      /* PSCW gets up to this size are answered in the target's wait */
};

static unsigned char pat(size_t i, size_t size, int from)
{
	return (unsigned char)(i * 31u + size * 3u + (unsigned)from * 101u + 7u);
}

static void barrier(struct t *t)
{
	CHECK(ng_boot_barrier(t->b) == NG_OK, "barrier");
}

#define OK(call) CHECK((st = (call)) == NG_OK, "%s: %s", #call, ng_status_name(st))

static void t_pscw(struct t *t)
{
	static const size_t sizes[] = {1, 7, 8, 63, 4093, 65537, (1u << 20) + 5};
	ng_status st;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t s = sizes[k], off = 3 + 2 * k;

		memset(t->win, 0, WLEN);
		/* Targets put their own pattern at WLEN/2 for the origin's get. */
		for (size_t i = 0; i < s; i++)
			t->win[WLEN / 2 + i] = pat(i, s, t->me + 10);
		barrier(t);
		if (t->me == 0) {
			int grp[2] = {1, 2};
			unsigned char *got = t->buf + WLEN;

			for (size_t i = 0; i < s; i++)
				t->buf[i] = pat(i, s, 0);
			memset(got, 0, 2 * s);
			OK(t->o->start(t->c, t->w, grp, 2));
			for (int g = 0; g < 2; g++) {
				OK(t->o->put(t->c, t->w, grp[g], off, t->buf, s));
				OK(t->o->get(t->c, t->w, grp[g], WLEN / 2, got + (size_t)g * s, s));
			}
			OK(t->o->complete(t->c, t->w));
			for (int g = 0; g < 2; g++)
				for (size_t i = 0; i < s; i++)
					if (got[(size_t)g * s + i] != pat(i, s, grp[g] + 10)) {
						CHECK(0, "pscw get of %zu bytes from rank %d: byte %zu wrong",
						      s, grp[g], i);
						break;
					}
		} else {
			int grp[1] = {0};

			OK(t->o->post(t->c, t->w, grp, 1));
			OK(t->o->wait(t->c, t->w));
			for (size_t i = 0; i < WLEN / 2; i++) {
				unsigned char want = (i >= off && i < off + s) ? pat(i - off, s, 0) : 0;
				if (t->win[i] != want) {
					CHECK(0, "pscw put of %zu bytes: window byte %zu is %u, expected %u",
					      s, i, t->win[i], want);
					break;
				}
			}
		}
		barrier(t);
	}
}

static void t_fence(struct t *t)
{
	int next = (t->me + 1) % t->n, prev = (t->me + t->n - 1) % t->n;
	size_t s = 100001;
	unsigned char *got = t->buf + WLEN;
	ng_status st;

	memset(t->win, 0, WLEN);
	for (size_t i = 0; i < s; i++) {
		t->buf[i] = pat(i, s, t->me);
		t->win[WLEN / 2 + i] = pat(i, s, t->me + 20);
	}
	barrier(t);
	OK(t->o->fence(t->c, t->w));
	OK(t->o->put(t->c, t->w, next, 5, t->buf, s));
	OK(t->o->get(t->c, t->w, prev, WLEN / 2, got, s));
	OK(t->o->fence(t->c, t->w));
	for (size_t i = 0; i < s; i++) {
		if (t->win[5 + i] != pat(i, s, prev)) {
			CHECK(0, "fence put: byte %zu from rank %d wrong", i, prev);
			break;
		}
		if (got[i] != pat(i, s, prev + 20)) {
			CHECK(0, "fence get: byte %zu from rank %d wrong", i, prev);
			break;
		}
	}
	barrier(t);
}

/* The get sizes of t_gets: around --rma-aggregate (256), then 16 x 24. */
#define GET_N 22
static size_t get_size(int k)
{
	static const size_t sz[] = {1, 8, 255, 256, 257, 4093};

	return k < 6 ? sz[k] : 24;
}

/* Where get @k reads in a target's window (odd offsets, 5000 B apart) and
 * lands in the origin's buffer (per target @g). */
static size_t get_off(int k)
{
	return WLEN / 2 + 1 + (size_t)k * 5000;
}

static unsigned char *get_dst(struct t *t, int g, int k)
{
	return t->buf + WLEN + (size_t)g * GET_N * 5000 + (size_t)k * 5000;
}

/* Fills this rank's get area with its pattern @gen (0: before the epoch,
 * 1: rewritten). */
static void get_fill(struct t *t, int gen)
{
	for (int k = 0; k < GET_N; k++)
		for (size_t i = 0; i < get_size(k); i++)
			t->win[get_off(k) + i] = pat(get_off(k) + i, get_size(k), t->me + 10 + 30 * gen);
}

/* Spoils get @k's destination @got with the complement of what rank @from
 * holds there after get_fill(@gen). */
static void get_spoil(unsigned char *got, int k, int from, int gen)
{
	for (size_t i = 0; i < get_size(k); i++)
		got[i] = (unsigned char)~pat(get_off(k) + i, get_size(k), from + 10 + 30 * gen);
}

/* Checks get @k from @from in @got: what get_fill(@gen) wrote there when
 * @strict, else that or what get_fill(0) wrote; "@what" in the message. */
static void get_check(const unsigned char *got, int k, int from, int gen, bool strict, const char *what)
{
	size_t s = get_size(k);

	for (size_t i = 0; i < s; i++) {
		unsigned char a = pat(get_off(k) + i, s, from + 10),
		              b = pat(get_off(k) + i, s, from + 10 + 30 * gen);

		if (got[i] != b && (strict || got[i] != a)) {
			CHECK(0, "%s: get %d (%zu B) from rank %d: byte %zu is %u, expected %u", what, k, s,
			      from, i, got[i], b);
			return;
		}
	}
}

static void t_gets(struct t *t)
{
	int grp[2] = {1, 2}, me0[1] = {0};
	ng_status st;

	memset(t->win, 0, WLEN);
	get_fill(t, 0);
	barrier(t);
	if (t->me == 0) {
		for (int g = 0; g < 2; g++)
			for (int k = 0; k < GET_N; k++)
				get_spoil(get_dst(t, g, k), k, grp[g], 1);
		OK(t->o->start(t->c, t->w, grp, 2));
		for (int g = 0; g < 2; g++)
			for (int k = 0; k < GET_N; k++)
				OK(t->o->get(t->c, t->w, grp[g], get_off(k), get_dst(t, g, k), get_size(k)));
		barrier(t); /* the targets rewrite their get areas */
		barrier(t);
		OK(t->o->complete(t->c, t->w));
		/* Right after complete: every byte there. */
		for (int g = 0; g < 2; g++)
			for (int k = 0; k < GET_N; k++)
				get_check(get_dst(t, g, k), k, grp[g], 1, get_size(k) <= t->answered,
				          "pscw (strict: the bytes at the target's wait)");
	} else {
		OK(t->o->post(t->c, t->w, me0, 1));
		barrier(t);
		get_fill(t, 1);
		barrier(t);
		OK(t->o->wait(t->c, t->w));
	}
	barrier(t);
	/* Fence: every rank gets the small pieces of the previous rank. */
	{
		int prev = (t->me + t->n - 1) % t->n, gen = prev != 0;

		for (int k = 0; k < 6; k++)
			get_spoil(get_dst(t, 0, k), k, prev, gen);
		OK(t->o->fence(t->c, t->w));
		for (int k = 0; k < 6; k++)
			OK(t->o->get(t->c, t->w, prev, get_off(k), get_dst(t, 0, k), get_size(k)));
		OK(t->o->fence(t->c, t->w));
		for (int k = 0; k < 6; k++)
			get_check(get_dst(t, 0, k), k, prev, gen, true, "fence");
		OK(t->o->fence(t->c, t->w));
	}
	/* Lock: rank 1 reads rank 2's small pieces, checked right after unlock;
	 * rank 2 waits in a fence (a target that serves only inside calls). */
	if (t->me == 1) {
		for (int k = 0; k < 6; k++)
			get_spoil(get_dst(t, 0, k), k, 2, 1);
		OK(t->o->lock(t->c, t->w, 2, false));
		for (int k = 0; k < 6; k++)
			OK(t->o->get(t->c, t->w, 2, get_off(k), get_dst(t, 0, k), get_size(k)));
		OK(t->o->unlock(t->c, t->w, 2));
		for (int k = 0; k < 6; k++)
			get_check(get_dst(t, 0, k), k, 2, 1, true, "lock");
	}
	OK(t->o->fence(t->c, t->w));
	barrier(t);
}

static void t_acc(struct t *t)
{
	const int N = 500;
	int64_t iv = t->me + 1;
	double dv = 0.25 * (t->me + 1);
	int64_t mx = 100 + t->me;
	ng_status st;

	memset(t->win, 0, 64);
	barrier(t);
	OK(t->o->fence(t->c, t->w));
	for (int i = 0; i < N; i++) {
		OK(t->o->accumulate(t->c, t->w, 0, 8, &iv, 1, NG_RMA_INT64, NG_RMA_SUM));
		OK(t->o->accumulate(t->c, t->w, 0, 16, &dv, 1, NG_RMA_DOUBLE, NG_RMA_SUM));
	}
	OK(t->o->accumulate(t->c, t->w, 0, 24, &mx, 1, NG_RMA_INT64, NG_RMA_MAX));
	OK(t->o->fence(t->c, t->w));
	if (t->me == 0) {
		int64_t isum;
		double dsum;

		memcpy(&isum, t->win + 8, 8);
		memcpy(&dsum, t->win + 16, 8);
		memcpy(&mx, t->win + 24, 8);
		CHECK(isum == (int64_t)N * 6, "int64 sum %lld, expected %d", (long long)isum, N * 6);
		CHECK(dsum == N * 1.5, "double sum %.17g, expected %g", dsum, N * 1.5);
		CHECK(mx == 100 + t->n - 1, "max %lld", (long long)mx);
	}
	barrier(t);
}

static void t_lock(struct t *t, struct ng_win *mutex)
{
	const int N = 200;
	bool locker = !(t->sendrecv && t->me == 0);
	uint64_t v;
	ng_status st;

	memset(t->win, 0, 64);
	barrier(t);
	for (int i = 0; locker && i < N; i++) {
		OK(t->o->lock(t->c, mutex, 0, true));
		OK(t->o->lock(t->c, t->w, 0, false));
		OK(t->o->get(t->c, t->w, 0, 32, &v, 8));
		OK(t->o->unlock(t->c, t->w, 0));
		v++;
		OK(t->o->lock(t->c, t->w, 0, false));
		OK(t->o->put(t->c, t->w, 0, 32, &v, 8));
		OK(t->o->unlock(t->c, t->w, 0));
		OK(t->o->unlock(t->c, mutex, 0));
		if (st != NG_OK)
			break;
	}
	/* A barrier inside the module: the target keeps serving (the sendrecv
	 * design, and backends whose atomics need the target). */
	OK(t->o->fence(t->c, mutex));
	if (t->me == 0) {
		int lockers = t->sendrecv ? t->n - 1 : t->n;

		memcpy(&v, t->win + 32, 8);
		CHECK(v == (uint64_t)(N * lockers), "counter %llu under an exclusive lock, expected %d",
		      (unsigned long long)v, N * lockers);
	}
	/* Shared locks overlap: both holders meet at the fence inside their
	 * epochs (were they exclusive, the second would wait for ever). */
	if (t->me != 0)
		OK(t->o->lock(t->c, t->w, 0, false));
	OK(t->o->fence(t->c, mutex));
	if (t->me != 0)
		OK(t->o->unlock(t->c, t->w, 0));
	OK(t->o->fence(t->c, mutex));
	barrier(t);
}

static void t_errors(struct t *t, struct ng_win *fresh)
{
	ng_status st;
	int grp[1] = {(t->me + 1) % t->n};
	int bad[1] = {t->n};
	char c = 0;

	/* (A fence opens an epoch: @fresh has seen none.) */
	st = t->o->put(t->c, fresh, grp[0], 0, &c, 1);
	CHECK(st == NG_ERR_USAGE, "a put outside an epoch gave %s", ng_status_name(st));
	st = t->o->unlock(t->c, t->w, grp[0]);
	CHECK(st == NG_ERR_USAGE, "unlock without lock gave %s", ng_status_name(st));
	st = t->o->complete(t->c, t->w);
	CHECK(st == NG_ERR_USAGE, "complete without start gave %s", ng_status_name(st));
	st = t->o->wait(t->c, t->w);
	CHECK(st == NG_ERR_USAGE, "wait without post gave %s", ng_status_name(st));
	st = t->o->start(t->c, t->w, bad, 1);
	CHECK(st == NG_ERR_USAGE, "a group with rank %d gave %s", t->n, ng_status_name(st));
	OK(t->o->fence(t->c, t->w));
	st = t->o->put(t->c, t->w, grp[0], WLEN - 1, &c, 2);
	CHECK(st == NG_ERR_USAGE, "a put past the window gave %s", ng_status_name(st));
	st = t->o->put(t->c, t->w, t->n + 3, 0, &c, 1);
	CHECK(st == NG_ERR_USAGE, "a put to rank %d gave %s", t->n + 3, ng_status_name(st));
	OK(t->o->fence(t->c, t->w));
	/* A rank outside the access epoch's group (the previous rank exposes
	 * its window to this one, but this one accesses only the next). */
	{
		int to[1] = {(t->me + 1) % t->n}, from[1] = {(t->me + t->n - 1) % t->n};

		OK(t->o->post(t->c, t->w, from, 1));
		OK(t->o->start(t->c, t->w, to, 1));
		st = t->o->put(t->c, t->w, from[0], 0, &c, 1);
		CHECK(st == NG_ERR_USAGE, "a put to rank %d outside the group gave %s", from[0],
		      ng_status_name(st));
		OK(t->o->put(t->c, t->w, to[0], 0, &c, 1));
		OK(t->o->complete(t->c, t->w));
		OK(t->o->wait(t->c, t->w));
	}
	barrier(t);
	/* Start without any post: the origin gives up after the timeout. */
	if (t->me == 0 && t->timeout_returns) {
		int g[1] = {1};

		OK(t->o->start(t->c, t->w, g, 1));
		st = t->o->complete(t->c, t->w);
		CHECK(st == NG_ERR_TIMEOUT, "start without a post gave %s", ng_status_name(st));
	}
}

static int usage(const char *prog)
{
	fprintf(stderr,
	        "usage: %s rma direct|sendrecv none|reorder|aggregate|all shm|ofi|verbs [PROVIDER]\n"
	        "       mpiexec -n 3 %s mpirma\n"
	        "       mpiexec -n 2 %s mpirma start-timeout\n",
	        prog, prog, prog);
	return 2;
}

/* The rma module on three local ranks.  0, or the exit status. */
static int t_open_rma(int argc, char **argv, struct ng_args *args, struct ng_module_env *env, struct t *t)
{
	const char *tmo;
	char err[200];
	ng_status st;

	if (argc != 5 && argc != 6)
		return usage(argv[0]);
	ng_module_declare(args, &ng_module_rma);
	ng_args_set(args, ng_args_find(args, "rma-design"), argv[2], err, sizeof(err));
	ng_args_set(args, ng_args_find(args, "rma-sched"), argv[3], err, sizeof(err));
	ng_args_set(args, ng_args_find(args, "rdma-backend"), argv[4], err, sizeof(err));
	ng_args_set(args, ng_args_find(args, "rdma-poll"), "yield", err, sizeof(err));
	if (argc == 6)
		ng_args_set(args, ng_args_find(args, "ofi-provider"), argv[5], err, sizeof(err));
	if (ng_boot_local(3, 5.0, &t->b) != NG_OK)
		return 1;
	t->me = t->b->rank;
	t->n = t->b->size;
	t->sendrecv = strcmp(argv[2], "sendrecv") == 0;
	/* Answered in the target's wait: every get of sendrecv, and with
	 * aggregation those up to --rma-aggregate (the default, 256). */
	if (t->sendrecv)
		t->answered = SIZE_MAX;
	else if (strcmp(argv[3], "aggregate") == 0 || strcmp(argv[3], "all") == 0)
		t->answered = 256;
	t->timeout_returns = true;
	ng_log_set_rank(t->me);
	env->boot = t->b;
	/* 2 s, or $NGAUGE_RMA_TEST_TIMEOUT (an emulated device on a busy host
	 * starves ranks for longer than 2 s). */
	tmo = getenv("NGAUGE_RMA_TEST_TIMEOUT");
	env->timeout_s = tmo && atof(tmo) > 0 ? atof(tmo) : 2;
	st = ng_module_rma.ops->open(&ng_module_rma, env, &t->c);
	if (st != NG_OK)
		return st == NG_ERR_USAGE ? 2 : 77;
	if (t->me == 0)
		printf("rma %s %s over %s: %s\n", argv[2], argv[3], argv[4], t->c->device);
	return 0;
}

/* The mpirma module under mpiexec: 3 ranks, or 2 for the start-timeout
 * run (*@timeout_run_p).  0, or the exit status. */
static int t_open_mpirma(int argc, char **argv, struct ng_args *args, struct ng_module_env *env, struct t *t,
                         bool *timeout_run_p)
{
#if NG_HAVE_MPI
	ng_status st;

	if (argc > 3 || (argc == 3 && strcmp(argv[2], "start-timeout") != 0))
		return usage(argv[0]);
	*timeout_run_p = argc == 3;
	if (!ng_launched_by_mpi()) {
		fprintf(stderr, "%s mpirma: not launched by mpiexec, skipped\n", argv[0]);
		return 77;
	}
	ng_args_declare(args, ng_mpi_options, "mpi");
	/* ngauge-mpi.so, as ngauge loads it (core/plugin.h). */
	const void *entry;
	const struct ng_module *mr = &ng_module_mpirma;
	const struct ng_module_ops *mr_ops;
	if (ng_plugin_entry("mpi", "launch:mpi", argv[0], false, &entry) != NG_OK ||
	    ng_module_impl(mr, &mr_ops) != NG_OK)
		return 1;
	if (((const struct ng_mpi_launch *)entry)->boot(&argc, &argv, mr->threads, &t->b) != NG_OK)
		return 1;
	t->me = t->b->rank;
	t->n = t->b->size;
	ng_log_set_rank(t->me);
	if (t->n != (*timeout_run_p ? 2 : 3)) {
		if (t->me == 0)
			fprintf(stderr, "%s mpirma: run it with mpiexec -n %d\n", argv[0],
			        *timeout_run_p ? 2 : 3);
		t->b->ops->fini(t->b);
		return 1;
	}
	env->boot = t->b;
	/* Watchdog: generous for the checks (a busy machine), short where it
	 * is what is checked. */
	env->timeout_s = *timeout_run_p ? 2 : 60;
	st = mr_ops->open(mr, env, &t->c);
	if (st != NG_OK) {
		t->b->ops->fini(t->b);
		return 1;
	}
	if (t->me == 0)
		printf("mpirma: %s\n", t->c->device);
	return 0;
#else
	(void)argc, (void)args, (void)env, (void)t, (void)timeout_run_p;
	fprintf(stderr, "%s mpirma: built without MPI, skipped\n", argv[0]);
	return 77;
#endif
}

/* Rank 0 starts an access epoch to rank 1, which waits in a barrier and
 * never posts.  The watchdog must end the job; returning is a failure. */
static int t_start_timeout(struct t *t)
{
	ng_status st;

	if (t->me == 0) {
		int g[1] = {1};

		st = t->o->start(t->c, t->w, g, 1);
		fprintf(stderr, "start without a post returned (%s)\n", ng_status_name(st));
		if (st == NG_OK) {
			st = t->o->complete(t->c, t->w);
			fprintf(stderr, "complete without a post returned (%s)\n", ng_status_name(st));
		}
	}
	barrier(t);
	return 1;
}

int main(int argc, char **argv)
{
	struct ng_args args = {0};
	struct t t = {0};
	struct ng_win *mutex = NULL, *fresh = NULL;
	void *mbase;
	volatile sig_atomic_t cancel = 0;
	struct ng_module_env env = {.args = &args, .cancel = &cancel};
	bool timeout_run = false;
	int code;
	ng_status st;

	if (argc >= 2 && strcmp(argv[1], "rma") == 0)
		code = t_open_rma(argc, argv, &args, &env, &t);
	else if (argc >= 2 && strcmp(argv[1], "mpirma") == 0)
		code = t_open_mpirma(argc, argv, &args, &env, &t, &timeout_run);
	else
		code = usage(argv[0]);
	if (code)
		return code;
	t.o = ng_rma(t.c);
	t.buf = malloc(2 * WLEN);
	OK(t.o->win_allocate(t.c, WLEN, (void **)&t.win, &t.w));
	if (timeout_run)
		return t_start_timeout(&t);
	OK(t.o->win_allocate(t.c, 64, &mbase, &mutex));
	OK(t.o->win_allocate(t.c, 64, &mbase, &fresh));
	if (!t.buf || !t.w || !mutex || !fresh)
		return 1;
	t_pscw(&t);
	t_fence(&t);
	t_gets(&t);
	t_acc(&t);
	t_lock(&t, mutex);
	t_errors(&t, fresh);
	barrier(&t);
	/* @fresh is left for close() to release (mpirma: MPI_Win_free there;
	 * MPICH aborts in MPI_Finalize over a window never freed). */
	t.o->win_free(t.c, mutex);
	t.o->win_free(t.c, t.w);
	t.c->ops->close(t.c);
	free(t.buf);
	ng_args_release(&args);
	if (t.me == 0)
		printf("pscw, fence, gets, acc, lock, errors: %d check(s) failed on rank 0\n", failures);
	t.b->ops->fini(t.b);
	return check_exit();
}
