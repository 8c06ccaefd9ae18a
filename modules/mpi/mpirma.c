/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "mpirma" module: the MPI library's own one-sided operations behind
 * struct ng_rma_ops (core/module.h), the baseline the rma module (over
 * ngauge's RDMA layer) is compared against.  Its two-sided operations are
 * the mpi module's (modules/mpi/mpi_int.h: the instance embeds struct ng_mpi
 * first and the descriptor names the mpi module's functions), so one run
 * compares one-sided against two-sided MPI, and --mpi-ssend applies.
 *
 * Mapping, one MPI call per operation, assert arguments 0, no info keys
 * (what an application writes by default):
 *   win_allocate  MPI_Win_allocate (disp_unit 1) on the instance's duplicate
 *                 of MPI_COMM_WORLD, zeroed, then an MPI_Allgather of every
 *                 rank's length for the range checks; errors return
 *                 (MPI_ERRORS_RETURN on the window)
 *   win_free      MPI_Win_free
 *   put/get       MPI_Put/MPI_Get of MPI_BYTE (pieces of 1 GiB: int counts)
 *   accumulate    MPI_Accumulate of MPI_INT32_T/MPI_INT64_T/MPI_DOUBLE with
 *                 MPI_SUM/MPI_REPLACE/MPI_MAX/MPI_MIN
 *   fence         MPI_Win_fence
 *   post/start    MPI_Win_post/MPI_Win_start with an MPI group of the ranks
 *   complete/wait MPI_Win_complete/MPI_Win_wait
 *   lock/unlock   MPI_Win_lock (MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED) and
 *                 MPI_Win_unlock
 *
 * Groups.  MPI wants an MPI_Group where ng_rma_ops passes a list of ranks.
 * Groups are built with MPI_Group_incl on the first use of a list and kept
 * (up to 64 distinct lists per instance, until close): post/start look the
 * list up (same ranks in the same order) and allocate nothing when it is
 * known; they also skip the group checks then, which the list passed when
 * it was built.  Past 64 lists, a group is built for the call and freed
 * after it (MPI keeps its own reference for the epoch).  MPICH itself may
 * allocate inside its calls (it translates a group's ranks at each post);
 * that is part of what this module measures.
 *
 * Errors, checked here before MPI is called and reported in one line
 * (NG_ERR_USAGE), as the rma module does: a range outside the target's
 * window, a rank outside 0..size-1 or outside the access epoch's group, an
 * operation outside an epoch, unlock without lock, lock twice, complete
 * without start, wait without post, start/post inside such an epoch, fence
 * inside a post/start epoch or while holding a lock of the window, a group
 * with the caller or a rank twice.  A failing MPI call is reported with
 * MPI's message (NG_ERR_IO, or NG_ERR_PEER_LOST for a failed process).
 *
 * Bounds.  MPI offers no timed or cancellable form of MPI_Win_start,
 * MPI_Win_complete, MPI_Win_fence, MPI_Win_lock or MPI_Win_unlock:
 * MPI_Win_start "is allowed to block until the corresponding MPI_Win_post
 * calls are executed" (MPICH 4.0.2 does: it waits there for every post of
 * the group), MPI_Win_complete and MPI_Win_unlock block until the target
 * has taken part, MPI_Win_lock until it is granted (MPICH blocks at the
 * call), and no MPI call is interruptible.  Only the exposure side has a
 * non-blocking test (MPI_Win_test for MPI_Win_wait); it is not used, so
 * that wait is MPICH's own MPI_Win_wait as for the other calls.  Instead of
 * polling in the measured path, every synchronisation and window call arms
 * a watchdog (three relaxed stores into the instance, no system call): a
 * thread of the instance that sleeps, looks every timeout/4 (at most 1 s)
 * and, when one call has not returned for --timeout seconds, prints one
 * line naming the call, its group or target and the likely cause
 * ("MPI_Win_start to rank 1 has not returned within 8 s: no matching post
 * ...") and ends the process with exit status 1 (the launcher then ends the
 * others; result files keep what was measured).  A call is ended between
 * --timeout and --timeout plus a quarter of it (at most 1 s more) after it
 * began.  The thread never calls MPI: the MPI bootstrap asks for
 * MPI_THREAD_FUNNELED; with less the watchdog is off (a warning says so).
 * Cancellation (SIGINT) is the driver's: it ends the process 3 s after the
 * signal.
 *
 * Progress.  MPICH 4.0.2 (ch4, intra-node through its active-message path)
 * has no passive-target progress: a lock, put or unlock to a target makes
 * headway only while the target is inside an MPI call (of any kind, on any
 * communicator or window).  A target computing outside MPI delays its
 * origins for as long (and past --timeout, the watchdog ends them).  Patterns
 * and tests keep targets of lock epochs inside a call of this module (a
 * fence, a wait) meanwhile.  MPIR_CVAR_ASYNC_PROGRESS=1 in the environment
 * gives MPICH a progress thread that lifts this, at the cost of stalls of
 * several milliseconds on few cores (RDMA-NOTES.md).
 *
 * Memory: window memory is MPI's (MPI_Win_allocate); alloc() is the mpi
 * module's.  Windows left at close() are freed there with MPI_Win_free,
 * which is collective: with windows left, close() is collective too (the
 * driver closes on every rank after a run; after a failure it aborts the
 * job instead), where core/module.h promises it is not; leaving them to
 * MPI_Finalize is worse (MPICH over UCX aborts there over a window never
 * freed).
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "module.h"
#include "modules/mpi/mpi_int.h"
#include "status.h"

#define MR_NGROUPS 64
#define MR_PIECE   ((size_t)1 << 30) /* bytes per MPI call (int counts) */

/* The calls the watchdog bounds; MR_IDLE: none in progress. */
enum mr_call {
	MR_IDLE,
	MR_ALLOCATE,
	MR_FREE,
	MR_FENCE,
	MR_POST,
	MR_START,
	MR_COMPLETE,
	MR_WAIT,
	MR_LOCK,
	MR_UNLOCK,
};

/* A group built once: immutable until close (the watchdog reads it). */
struct mr_group {
	MPI_Group g;
	int n;
	int *ranks;    /* [n] in the caller's order */
	char desc[64]; /* "ranks 1, 2" */
};

struct mr_watch {
	/* Written by the main thread around every bounded call, read by the
	 * watchdog: state = call number << 8 | enum mr_call (MR_IDLE between
	 * calls); grp and arg (the target of lock/unlock, the size of a group
	 * built for one call) describe the call. */
	_Atomic uint64_t state;
	_Atomic(const struct mr_group *) grp;
	atomic_int arg;
	uint64_t calls; /* main thread only */
	double timeout_s;
	bool running;
	bool stop; /* under mu */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct mpirma {
	struct ng_mpi mpi; /* first: the two-sided operations are the mpi module's */
	MPI_Group world;
	struct mr_group grps[MR_NGROUPS];
	int ngrps;
	struct ng_win *wins;
	struct mr_watch wd;
};

struct ng_win {
	MPI_Win win;
	uint64_t *wlen; /* [size] every rank's window length */
	bool in_fence, in_access, in_expose;
	bool *ingrp;     /* [size] in the access epoch's group */
	int *acc;        /* [size] the access epoch's group */
	int nacc;        /* its size */
	uint8_t *locked; /* [size] 0, 1 shared, 2 exclusive */
	int nlocked;
	const struct mr_group *acc_grp, *exp_grp; /* NULL: built for the call */
	int nexp;
	struct ng_win *next;
};

static inline struct mpirma *mr_of(struct ng_comm *c)
{
	return ng_container_of(c, struct mpirma, mpi.base);
}

static ng_status __attribute__((noinline, cold)) mr_fail(const char *call, int peer, int rc)
{
	return ng_mpi_report("mpirma", call, peer, rc);
}

/* ---- the watchdog ---------------------------------------------------- */

static const char *const mr_call_name[] = {
    [MR_ALLOCATE] = "MPI_Win_allocate", [MR_FREE] = "MPI_Win_free",   [MR_FENCE] = "MPI_Win_fence",
    [MR_POST] = "MPI_Win_post",         [MR_START] = "MPI_Win_start", [MR_COMPLETE] = "MPI_Win_complete",
    [MR_WAIT] = "MPI_Win_wait",         [MR_LOCK] = "MPI_Win_lock",   [MR_UNLOCK] = "MPI_Win_unlock",
};

static const char *const mr_call_why[] = {
    [MR_ALLOCATE] = "not every rank joined the window's creation",
    [MR_FREE] = "not every rank joined the window's release",
    [MR_FENCE] = "not every rank reached the fence",
    [MR_POST] = "the origins did not take the post",
    [MR_START] = "no matching post (a target opened no exposure epoch)",
    [MR_COMPLETE] = "a target did not post, or stays outside MPI",
    [MR_WAIT] = "an origin did not complete its access epoch (start/complete)",
    [MR_LOCK] = "not granted: another origin holds the lock, or the target stays outside MPI (MPICH "
                "progresses lock epochs only inside MPI calls of the target)",
    [MR_UNLOCK] = "the target stays outside MPI (MPICH progresses lock epochs only inside MPI calls of the "
                  "target)",
};

/* Marks the start of a bounded call (a seqlock write: the description
 * first, then the state that names it). */
static inline void mr_arm(struct mpirma *m, enum mr_call call, const struct mr_group *g, int arg)
{
	struct mr_watch *wd = &m->wd;

	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&wd->grp, g, memory_order_relaxed);
	atomic_store_explicit(&wd->arg, arg, memory_order_relaxed);
	atomic_store_explicit(&wd->state, (++wd->calls << 8) | call, memory_order_release);
}

static inline void mr_disarm(struct mpirma *m)
{
	atomic_store_explicit(&m->wd.state, m->wd.calls << 8, memory_order_relaxed);
}

/* The call @state has not returned for the timeout: one line, then exit. */
static void __attribute__((noreturn))
mr_watch_fire(struct mr_watch *wd, uint64_t state, const struct mr_group *g, int arg)
{
	enum mr_call call = (enum mr_call)(state & 0xff);
	const char *dir = call == MR_WAIT ? "from" : "to";
	char who[96] = "";

	if (call == MR_LOCK || call == MR_UNLOCK)
		snprintf(who, sizeof(who), " of rank %d", arg);
	else if ((call == MR_POST || call == MR_START || call == MR_COMPLETE || call == MR_WAIT) && g)
		snprintf(who, sizeof(who), " %s %s", dir, g->desc);
	else if (call == MR_POST || call == MR_START || call == MR_COMPLETE || call == MR_WAIT)
		snprintf(who, sizeof(who), " %s a group of %d ranks", dir, arg);
	ng_error("mpirma: %s%s has not returned within %.3g s: %s; MPI cannot time out or cancel it, so this "
	         "rank ends",
	         mr_call_name[call], who, wd->timeout_s, mr_call_why[call]);
	fflush(stdout);
	_exit(1);
}

static double mr_elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void *mr_watch_main(void *arg)
{
	struct mr_watch *wd = arg;
	double period = wd->timeout_s / 4 < 1.0 ? wd->timeout_s / 4 : 1.0;
	uint64_t seen = 0;
	struct timespec since = {0}, now, until;

	if (period < 0.01)
		period = 0.01;

	pthread_mutex_lock(&wd->mu);
	while (!wd->stop) {
		uint64_t s = atomic_load_explicit(&wd->state, memory_order_acquire);

		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((s & 0xff) == MR_IDLE || s != seen) {
			seen = s;
			since = now;
		} else if (mr_elapsed(&since, &now) >= wd->timeout_s) {
			const struct mr_group *g = atomic_load_explicit(&wd->grp, memory_order_relaxed);
			int a = atomic_load_explicit(&wd->arg, memory_order_relaxed);

			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&wd->state, memory_order_relaxed) == s)
				mr_watch_fire(wd, s, g, a);
		}
		until = now;
		until.tv_sec += (time_t)period;
		until.tv_nsec += (long)((period - (double)(time_t)period) * 1e9);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&wd->cv, &wd->mu, &until);
	}
	pthread_mutex_unlock(&wd->mu);
	return NULL;
}

static ng_status mr_watch_start(struct mpirma *m, double timeout_s)
{
	struct mr_watch *wd = &m->wd;
	pthread_condattr_t ca;
	int provided = MPI_THREAD_SINGLE, rc;

	atomic_init(&wd->state, 0);
	atomic_init(&wd->grp, NULL);
	atomic_init(&wd->arg, 0);
	wd->timeout_s = timeout_s;
	if (!(timeout_s > 0))
		return NG_OK;
	MPI_Query_thread(&provided);
	if (provided < MPI_THREAD_FUNNELED) {
		if (m->mpi.base.rank == 0)
			ng_warn("mpirma: MPI provides MPI_THREAD_SINGLE only: no watchdog, a synchronisation "
			        "call that never returns is not ended after --timeout");
		return NG_OK;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wd->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&wd->mu, NULL);
	rc = pthread_create(&wd->thread, NULL, mr_watch_main, wd);
	if (rc != 0) {
		ng_error("mpirma: cannot start the watchdog thread: %s", strerror(rc));
		pthread_cond_destroy(&wd->cv);
		pthread_mutex_destroy(&wd->mu);
		return NG_ERR_SYS;
	}
	wd->running = true;
	return NG_OK;
}

static void mr_watch_stop(struct mr_watch *wd)
{
	if (!wd->running)
		return;
	pthread_mutex_lock(&wd->mu);
	wd->stop = true;
	pthread_cond_signal(&wd->cv);
	pthread_mutex_unlock(&wd->mu);
	pthread_join(wd->thread, NULL);
	pthread_cond_destroy(&wd->cv);
	pthread_mutex_destroy(&wd->mu);
	wd->running = false;
}

/* ---- groups ---------------------------------------------------------- */

static ng_status __attribute__((noinline, cold))
mr_group_check(struct mpirma *m, const int *group, int n, const char *call)
{
	int size = m->mpi.base.size, me = m->mpi.base.rank;

	if (n < 0 || n >= size) {
		ng_error("mpirma: %s: a group of %d ranks (0-%d, not the caller)", call, n, size - 1);
		return NG_ERR_USAGE;
	}
	for (int i = 0; i < n; i++) {
		if (group[i] < 0 || group[i] >= size || group[i] == me) {
			ng_error("mpirma: %s: rank %d cannot be in the group (ranks 0-%d, not the caller)",
			         call, group[i], size - 1);
			return NG_ERR_USAGE;
		}
		for (int k = 0; k < i; k++)
			if (group[k] == group[i]) {
				ng_error("mpirma: %s: rank %d is twice in the group", call, group[i]);
				return NG_ERR_USAGE;
			}
	}
	return NG_OK;
}

/* "ranks 1, 2, 3" ("... (N in all)" when it is long). */
static void mr_group_desc(char *buf, size_t len, const int *group, int n)
{
	size_t o = (size_t)snprintf(buf, len, n == 1 ? "rank" : "ranks");

	for (int i = 0; i < n; i++) {
		char one[16], more[32];
		size_t k = (size_t)snprintf(one, sizeof(one), "%s %d", i ? "," : "", group[i]);
		size_t km = (size_t)snprintf(more, sizeof(more), " ... (%d in all)", n);

		if (o + k + km >= len) {
			if (o + km < len)
				memcpy(buf + o, more, km + 1);
			return;
		}
		memcpy(buf + o, one, k + 1);
		o += k;
	}
}

/* A new group for @group: kept in the cache while it has room (*@grp_p),
 * else built for one call (*@grp_p NULL: the caller frees *@g_p). */
static ng_status __attribute__((noinline))
mr_group_build(struct mpirma *m, const int *group, int n, const char *call, const struct mr_group **grp_p,
               MPI_Group *g_p)
{
	struct mr_group *e;
	ng_status st = mr_group_check(m, group, n, call);
	int rc;

	if (st != NG_OK)
		return st;
	rc = MPI_Group_incl(m->world, n, group, g_p);
	if (rc != MPI_SUCCESS)
		return mr_fail("MPI_Group_incl", -1, rc);
	*grp_p = NULL;
	if (m->ngrps == MR_NGROUPS)
		return NG_OK;
	e = &m->grps[m->ngrps];
	e->ranks = malloc((size_t)(n ? n : 1) * sizeof(int));
	if (!e->ranks)
		return NG_OK; /* used once, like a group past the cache's room */
	if (n)
		memcpy(e->ranks, group, (size_t)n * sizeof(int));
	e->n = n;
	e->g = *g_p;
	mr_group_desc(e->desc, sizeof(e->desc), group, n);
	m->ngrps++;
	*grp_p = e;
	return NG_OK;
}

/* The MPI group of the ranks @group[0..n): a kept one (no allocation, no
 * checks: it passed them when it was built), or a new one. */
static inline ng_status mr_group(struct mpirma *m, const int *group, int n, const char *call,
                                 const struct mr_group **grp_p, MPI_Group *g_p)
{
	for (int i = 0; i < m->ngrps; i++) {
		const struct mr_group *e = &m->grps[i];

		if (e->n == n && (n == 0 || memcmp(e->ranks, group, (size_t)n * sizeof(int)) == 0)) {
			*grp_p = e;
			*g_p = e->g;
			return NG_OK;
		}
	}
	return mr_group_build(m, group, n, call, grp_p, g_p);
}

/* Frees a group built for one call. */
static void mr_group_done(const struct mr_group *grp, MPI_Group *g)
{
	if (!grp && *g != MPI_GROUP_EMPTY)
		MPI_Group_free(g);
}

/* ---- checks ---------------------------------------------------------- */

static ng_status __attribute__((noinline, cold))
mr_bad_op(struct mpirma *m, struct ng_win *w, int target, size_t off, size_t len)
{
	int size = m->mpi.base.size;

	if (target < 0 || target >= size)
		ng_error("mpirma: rank %d is not a rank of this run (0-%d)", target, size - 1);
	else if (!w->in_fence && !w->locked[target] && !(w->in_access && w->ingrp[target]))
		ng_error(
		    "mpirma: an operation to rank %d outside an access epoch to it (start, fence or lock)",
		    target);
	else
		ng_error("mpirma: bytes %zu..%zu are outside the %llu-byte window of rank %d", off, off + len,
		         (unsigned long long)w->wlen[target], target);
	return NG_ERR_USAGE;
}

/* A put/get/accumulate of [off, off + len) at @target is legal now. */
static inline ng_status mr_check(struct mpirma *m, struct ng_win *w, int target, size_t off, size_t len)
{
	if (__builtin_expect(target < 0 || target >= m->mpi.base.size, 0) ||
	    __builtin_expect(!w->in_fence && !w->locked[target] && !(w->in_access && w->ingrp[target]), 0) ||
	    __builtin_expect(off > w->wlen[target] || len > w->wlen[target] - off, 0))
		return mr_bad_op(m, w, target, off, len);
	return NG_OK;
}

static ng_status __attribute__((noinline, cold, format(printf, 1, 2))) mr_usage(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ng_error("mpirma: %s", line);
	return NG_ERR_USAGE;
}

/* ---- operations ------------------------------------------------------ */

static ng_status mr_put(struct ng_comm *c, struct ng_win *w, int target, size_t off, const void *origin,
                        size_t len)
{
	struct mpirma *m = mr_of(c);
	ng_status st = mr_check(m, w, target, off, len);

	for (size_t at = 0; st == NG_OK && at < len; at += MR_PIECE) {
		int n = (int)(len - at < MR_PIECE ? len - at : MR_PIECE);
		int rc = MPI_Put((const char *)origin + at, n, MPI_BYTE, target, (MPI_Aint)(off + at), n,
		                 MPI_BYTE, w->win);

		if (rc != MPI_SUCCESS)
			st = mr_fail("MPI_Put", target, rc);
	}
	return st;
}

static ng_status mr_get(struct ng_comm *c, struct ng_win *w, int target, size_t off, void *origin, size_t len)
{
	struct mpirma *m = mr_of(c);
	ng_status st = mr_check(m, w, target, off, len);

	for (size_t at = 0; st == NG_OK && at < len; at += MR_PIECE) {
		int n = (int)(len - at < MR_PIECE ? len - at : MR_PIECE);
		int rc = MPI_Get((char *)origin + at, n, MPI_BYTE, target, (MPI_Aint)(off + at), n, MPI_BYTE,
		                 w->win);

		if (rc != MPI_SUCCESS)
			st = mr_fail("MPI_Get", target, rc);
	}
	return st;
}

static ng_status mr_accumulate(struct ng_comm *c, struct ng_win *w, int target, size_t off,
                               const void *origin, size_t count, enum ng_rma_type type, enum ng_rma_op op)
{
	struct mpirma *m = mr_of(c);
	MPI_Datatype dt;
	MPI_Op mop;
	size_t es;
	ng_status st;

	switch (type) {
	case NG_RMA_INT32:
		dt = MPI_INT32_T, es = 4;
		break;
	case NG_RMA_INT64:
		dt = MPI_INT64_T, es = 8;
		break;
	case NG_RMA_DOUBLE:
		dt = MPI_DOUBLE, es = 8;
		break;
	default:
		return mr_usage("accumulate of an unknown element type");
	}
	switch (op) {
	case NG_RMA_SUM:
		mop = MPI_SUM;
		break;
	case NG_RMA_REPLACE:
		mop = MPI_REPLACE;
		break;
	case NG_RMA_MAX:
		mop = MPI_MAX;
		break;
	case NG_RMA_MIN:
		mop = MPI_MIN;
		break;
	default:
		return mr_usage("accumulate with an unknown operation");
	}
	if (count > SIZE_MAX / es)
		return mr_usage("accumulate of more elements than memory holds");
	st = mr_check(m, w, target, off, count * es);
	for (size_t at = 0; st == NG_OK && at < count; at += MR_PIECE / es) {
		int n = (int)(count - at < MR_PIECE / es ? count - at : MR_PIECE / es);
		int rc = MPI_Accumulate((const char *)origin + at * es, n, dt, target,
		                        (MPI_Aint)(off + at * es), n, dt, mop, w->win);

		if (rc != MPI_SUCCESS)
			st = mr_fail("MPI_Accumulate", target, rc);
	}
	return st;
}

/* ---- synchronisation ------------------------------------------------- */

static ng_status mr_fence(struct ng_comm *c, struct ng_win *w)
{
	struct mpirma *m = mr_of(c);
	int rc;

	if (w->in_access || w->in_expose)
		return mr_usage("fence inside a post/start epoch");
	if (w->nlocked)
		return mr_usage("fence while holding a lock of the window (unlock first)");
	mr_arm(m, MR_FENCE, NULL, 0);
	rc = MPI_Win_fence(0, w->win);
	mr_disarm(m);
	w->in_fence = rc == MPI_SUCCESS;
	return rc == MPI_SUCCESS ? NG_OK : mr_fail("MPI_Win_fence", -1, rc);
}

static ng_status mr_post(struct ng_comm *c, struct ng_win *w, const int *group, int n)
{
	struct mpirma *m = mr_of(c);
	const struct mr_group *grp;
	MPI_Group g;
	ng_status st;
	int rc;

	if (w->in_expose)
		return mr_usage("post inside an exposure epoch (wait first)");
	st = mr_group(m, group, n, "post", &grp, &g);
	if (st != NG_OK)
		return st;
	mr_arm(m, MR_POST, grp, n);
	rc = MPI_Win_post(g, 0, w->win);
	mr_disarm(m);
	mr_group_done(grp, &g);
	if (rc != MPI_SUCCESS)
		return mr_fail("MPI_Win_post", -1, rc);
	w->exp_grp = grp;
	w->nexp = n;
	w->in_expose = true;
	w->in_fence = false;
	return NG_OK;
}

static ng_status mr_start(struct ng_comm *c, struct ng_win *w, const int *group, int n)
{
	struct mpirma *m = mr_of(c);
	const struct mr_group *grp;
	MPI_Group g;
	ng_status st;
	int rc;

	if (w->in_access)
		return mr_usage("start inside an access epoch (complete first)");
	if (w->nlocked)
		return mr_usage("start while holding a lock of the window (unlock first)");
	st = mr_group(m, group, n, "start", &grp, &g);
	if (st != NG_OK)
		return st;
	mr_arm(m, MR_START, grp, n);
	rc = MPI_Win_start(g, 0, w->win);
	mr_disarm(m);
	mr_group_done(grp, &g);
	if (rc != MPI_SUCCESS)
		return mr_fail("MPI_Win_start", -1, rc);
	for (int i = 0; i < n; i++)
		w->ingrp[group[i]] = true;
	if (n)
		memcpy(w->acc, group, (size_t)n * sizeof(*group));
	w->nacc = n;
	w->acc_grp = grp;
	w->in_access = true;
	w->in_fence = false;
	return NG_OK;
}

static ng_status mr_complete(struct ng_comm *c, struct ng_win *w)
{
	struct mpirma *m = mr_of(c);
	int rc;

	if (!w->in_access)
		return mr_usage("complete without start");
	mr_arm(m, MR_COMPLETE, w->acc_grp, w->nacc);
	rc = MPI_Win_complete(w->win);
	mr_disarm(m);
	for (int i = 0; i < w->nacc; i++)
		w->ingrp[w->acc[i]] = false;
	w->in_access = false;
	return rc == MPI_SUCCESS ? NG_OK : mr_fail("MPI_Win_complete", -1, rc);
}

static ng_status mr_wait(struct ng_comm *c, struct ng_win *w)
{
	struct mpirma *m = mr_of(c);
	int rc;

	if (!w->in_expose)
		return mr_usage("wait without post");
	mr_arm(m, MR_WAIT, w->exp_grp, w->nexp);
	rc = MPI_Win_wait(w->win);
	mr_disarm(m);
	w->in_expose = false;
	return rc == MPI_SUCCESS ? NG_OK : mr_fail("MPI_Win_wait", -1, rc);
}

static ng_status mr_lock(struct ng_comm *c, struct ng_win *w, int target, bool exclusive)
{
	struct mpirma *m = mr_of(c);
	int rc;

	if (target < 0 || target >= c->size)
		return mr_usage("lock of rank %d, not a rank of this run (0-%d)", target, c->size - 1);
	if (w->locked[target])
		return mr_usage("lock of rank %d, which this rank holds already", target);
	if (w->in_access)
		return mr_usage("lock of rank %d inside a start/complete access epoch of the window", target);
	mr_arm(m, MR_LOCK, NULL, target);
	rc = MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, target, 0, w->win);
	mr_disarm(m);
	if (rc != MPI_SUCCESS)
		return mr_fail("MPI_Win_lock", target, rc);
	w->locked[target] = exclusive ? 2 : 1;
	w->nlocked++;
	/* A lock ends MPI's fence epoch: operations need it (or a new fence). */
	w->in_fence = false;
	return NG_OK;
}

static ng_status mr_unlock(struct ng_comm *c, struct ng_win *w, int target)
{
	struct mpirma *m = mr_of(c);
	int rc;

	if (target < 0 || target >= c->size || !w->locked[target])
		return mr_usage("unlock of rank %d without a lock", target);
	mr_arm(m, MR_UNLOCK, NULL, target);
	rc = MPI_Win_unlock(target, w->win);
	mr_disarm(m);
	w->locked[target] = 0;
	w->nlocked--;
	return rc == MPI_SUCCESS ? NG_OK : mr_fail("MPI_Win_unlock", target, rc);
}

/* ---- windows --------------------------------------------------------- */

static void mr_win_release(struct ng_win *w)
{
	free(w->wlen);
	free(w->ingrp);
	free(w->acc);
	free(w->locked);
	free(w);
}

static ng_status mr_win_allocate(struct ng_comm *c, size_t len, void **base_p, struct ng_win **win_p)
{
	struct mpirma *m = mr_of(c);
	size_t n = (size_t)c->size;
	struct ng_win *w = calloc(1, sizeof(*w));
	uint64_t mine = len;
	void *base = NULL;
	ng_status st;
	int rc;

	*win_p = NULL;
	if (w) {
		w->wlen = calloc(n, sizeof(*w->wlen));
		w->ingrp = calloc(n, sizeof(*w->ingrp));
		w->acc = calloc(n, sizeof(*w->acc));
		w->locked = calloc(n, sizeof(*w->locked));
	}
	if (!w || !w->wlen || !w->ingrp || !w->acc || !w->locked) {
		/* Collective: the others are told by MPI_Win_allocate's failure
		 * elsewhere, or wait for this rank until the watchdog ends them. */
		ng_error("mpirma: out of memory for a window");
		if (w)
			mr_win_release(w);
		return NG_ERR_NOMEM;
	}
	mr_arm(m, MR_ALLOCATE, NULL, 0);
	/* A window of at least 8 bytes (for 0 bytes too: the base is a real
	 * address), in whole multiples of 64 bytes: MPICH 4.0.2 (ch4:ucx, ranks
	 * on one host) misplaces puts to a rank whose lower ranks' windows are
	 * not multiples of 16 bytes (they land short of the target's base by
	 * the missing padding; the last bytes of a put never arrive).  The
	 * length offered and checked stays @len. */
	rc = MPI_Win_allocate((MPI_Aint)(((len ? len : 8) + 63) & ~(size_t)63), 1, MPI_INFO_NULL, m->mpi.comm,
	                      &base, &w->win);
	if (rc != MPI_SUCCESS) {
		mr_disarm(m);
		mr_win_release(w);
		return mr_fail("MPI_Win_allocate", -1, rc);
	}
	MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
	memset(base, 0, len);
	/* Every rank zeroes its memory before it contributes its length, so
	 * nobody leaves the all-gather before all windows are zero. */
	rc = MPI_Allgather(&mine, 1, MPI_UINT64_T, w->wlen, 1, MPI_UINT64_T, m->mpi.comm);
	mr_disarm(m);
	if (rc != MPI_SUCCESS) {
		st = mr_fail("MPI_Allgather", -1, rc);
		MPI_Win_free(&w->win);
		mr_win_release(w);
		return st;
	}
	w->next = m->wins;
	m->wins = w;
	*base_p = base;
	*win_p = w;
	return NG_OK;
}

static void mr_win_free(struct ng_comm *c, struct ng_win *w)
{
	struct mpirma *m = mr_of(c);
	struct ng_win **pp = &m->wins;
	int rc;

	if (!w)
		return;
	mr_arm(m, MR_FREE, NULL, 0);
	rc = MPI_Win_free(&w->win);
	mr_disarm(m);
	if (rc != MPI_SUCCESS)
		mr_fail("MPI_Win_free", -1, rc);
	while (*pp && *pp != w)
		pp = &(*pp)->next;
	if (*pp)
		*pp = w->next;
	mr_win_release(w);
}

/* ---- the module ------------------------------------------------------ */

static void mr_close(struct ng_comm *c)
{
	struct mpirma *m = mr_of(c);
	int finalized = 0;

	MPI_Finalized(&finalized);
	while (m->wins) {
		struct ng_win *w = m->wins;

		if (!finalized) {
			mr_win_free(c, w);
			continue;
		}
		m->wins = w->next;
		mr_win_release(w);
	}
	mr_watch_stop(&m->wd);
	for (int i = 0; i < m->ngrps; i++) {
		if (!finalized && m->grps[i].g != MPI_GROUP_EMPTY)
			MPI_Group_free(&m->grps[i].g);
		free(m->grps[i].ranks);
	}
	if (!finalized && m->world != MPI_GROUP_NULL)
		MPI_Group_free(&m->world);
	ng_mpi_fini(&m->mpi);
	free(m);
}

static ng_status mr_open(const struct ng_module *mod, const struct ng_module_env *env,
                         struct ng_comm **comm_p)
{
	struct mpirma *m = calloc(1, sizeof(*m));
	ng_status st;
	int rc;

	*comm_p = NULL;
	if (!m) {
		ng_error("mpirma: out of memory");
		return NG_ERR_NOMEM;
	}
	m->world = MPI_GROUP_NULL;
	st = ng_mpi_init(&m->mpi, mod, &ng_module_ops_mpirma, env);
	if (st != NG_OK) {
		free(m);
		return st;
	}
	rc = MPI_Comm_group(m->mpi.comm, &m->world);
	if (rc != MPI_SUCCESS) {
		m->world = MPI_GROUP_NULL;
		st = mr_fail("MPI_Comm_group", -1, rc);
		goto err;
	}
	st = mr_watch_start(m, env->timeout_s);
	if (st != NG_OK)
		goto err;
	*comm_p = &m->mpi.base;
	return NG_OK;

err:
	mr_close(&m->mpi.base);
	return st;
}

static const struct ng_rma_ops mr_ops = {
    .win_allocate = mr_win_allocate,
    .win_free = mr_win_free,
    .put = mr_put,
    .get = mr_get,
    .accumulate = mr_accumulate,
    .fence = mr_fence,
    .post = mr_post,
    .start = mr_start,
    .complete = mr_complete,
    .wait = mr_wait,
    .lock = mr_lock,
    .unlock = mr_unlock,
};

/* The operations of the executable's descriptor ng_module_mpirma
 * (mpi_desc.c), ngauge-mpi.so's entry "module:mpirma". */
const struct ng_module_ops ng_module_ops_mpirma = {
    .open = mr_open,
    .close = mr_close,
    .alloc = ng_mpi_alloc,
    .free = ng_mpi_free,
    .msg = &ng_mpi_msg_ops,
    .alltoall = ng_mpi_alltoall,
    .coll = ng_mpi_coll,
    .rma = &mr_ops,
};