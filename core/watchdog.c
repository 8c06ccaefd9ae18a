/* SPDX-License-Identifier: BSD-3-Clause */
/* The run's watchdog (watchdog.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "module.h"
#include "results.h"
#include "results_priv.h"
#include "watchdog.h"

struct ng_watchdog {
	struct ng_comm *c;
	struct ng_results *res;
	double timeout_s;
	bool stop; /* under mu */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Where the rank stands, one line into @buf. */
static void describe(const struct ng_watchdog *w, uint64_t call, double waited, char *buf, size_t len)
{
	const struct ng_where *at = &w->c->where;
	const char *pattern = atomic_load_explicit(&at->pattern, memory_order_relaxed);
	const char *phase = atomic_load_explicit(&at->phase, memory_order_relaxed);
	size_t size = atomic_load_explicit(&at->size, memory_order_relaxed);
	size_t index = atomic_load_explicit(&at->index, memory_order_relaxed);
	size_t nsizes = atomic_load_explicit(&at->nsizes, memory_order_relaxed);
	size_t variant = atomic_load_explicit(&at->variant, memory_order_relaxed);
	size_t variants = atomic_load_explicit(&at->variants, memory_order_relaxed);
	uint64_t calls0 = atomic_load_explicit(&at->calls0, memory_order_relaxed);
	int peer = ng_where_peer(call);
	enum ng_at op = ng_where_op(call);
	char where[160] = "", sz[32], whom[48] = "", mod[200] = "";
	size_t n;

	if (pattern && nsizes) {
		ng_fmt_size(size, sz, sizeof(sz));
		n = (size_t)snprintf(where, sizeof(where), "%s, %s %s (measurement %zu of %zu", pattern,
		                     phase ? phase : "at", sz, index + 1, nsizes);
		if (variants > 1 && n < sizeof(where))
			n += (size_t)snprintf(where + n, sizeof(where) - n, ", variant %zu of %zu",
			                      variant + 1, variants);
		if (n < sizeof(where))
			snprintf(where + n, sizeof(where) - n, "), %llu calls completed in it",
			         (unsigned long long)(ng_where_seq(call) - calls0));
	} else {
		snprintf(where, sizeof(where), "%s%s%s", pattern ? pattern : "", pattern ? ", " : "",
		         phase ? phase : "before the measurements");
	}
	if (peer >= 0 && op != NG_AT_BARRIER && op != NG_AT_ALLGATHER && op != NG_AT_ALLTOALL &&
	    op != NG_AT_COLL)
		snprintf(whom, sizeof(whom), " %s rank %d",
		         op == NG_AT_SEND || op == NG_AT_ISEND   ? "to"
		         : op == NG_AT_RECV || op == NG_AT_IRECV ? "from"
		                                                 : "(last posted: rank",
		         peer);
	if ((op == NG_AT_WAIT || op == NG_AT_TEST) && whom[0])
		strncat(whom, ")", sizeof(whom) - strlen(whom) - 1);
	if (w->c->ops->stall) {
		size_t m = (size_t)snprintf(mod, sizeof(mod), "; %s: ", w->c->mod->name);
		if (m < sizeof(mod))
			w->c->ops->stall(w->c, mod + m, sizeof(mod) - m);
		if (mod[m] == '\0')
			mod[0] = '\0';
	}
	snprintf(
	    buf, len,
	    "no progress for %.1f s (--timeout %g s + %g s): %s; waiting in %s%s over %s%s; the rank ends",
	    waited, w->timeout_s, NG_WATCHDOG_SLACK_S, where, ng_at_name(op), whom, w->c->mod->name, mod);
}

static void __attribute__((noreturn)) fire(struct ng_watchdog *w, uint64_t call, double waited)
{
	char line[768];

	describe(w, call, waited, line, sizeof(line));
	ng_error("%s", line);
	if (w->res)
		(void)ng_results_stop(w->res, line);
	fflush(stdout);
	fflush(stderr);
	/* A launcher ends the others once this rank is gone.  The others
	 * likely fire too, about now: the sink's rank leaves them a moment
	 * for their lines, every other rank leaves the sink's a second for
	 * the file. */
	nanosleep(w->res ? &(struct timespec){0, 300000000L} : &(struct timespec){1, 0}, NULL);
	_exit(1);
}

/* The longest a wait may last at the current measurement. */
static double bound_s(const struct ng_watchdog *w)
{
	uint64_t e = atomic_load_explicit(&w->c->where.expect_ns, memory_order_relaxed);

	return w->timeout_s + NG_WATCHDOG_SLACK_S + (double)e * 1e-9;
}

static void *watch_main(void *arg)
{
	struct ng_watchdog *w = arg;
	double period = w->timeout_s / 4 < 0.25 ? w->timeout_s / 4 : 0.25;
	uint64_t seen = 0;
	double since = mono_s(), last = since;

	if (period < 0.01)
		period = 0.01;
	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		uint64_t call = atomic_load_explicit(&w->c->where.call, memory_order_relaxed);
		double now = mono_s();
		struct timespec until;

		if (ng_where_op(call) == NG_AT_IDLE || call != seen || now - last > 1.0 + period) {
			seen = call;
			since = now;
		} else if (now - since >= bound_s(w)) {
			fire(w, call, now - since);
		}
		last = now;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += (long)(period * 1e9);
		while (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cv, &w->mu, &until);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

ng_status ng_watchdog_start(struct ng_watchdog **w_p, struct ng_comm *c, double timeout_s,
                            struct ng_results *res)
{
	struct ng_watchdog *w;
	pthread_condattr_t ca;
	int rc;

	*w_p = NULL;
	if (!(timeout_s > 0))
		return NG_OK;
	w = calloc(1, sizeof(*w));
	if (!w) {
		ng_error("out of memory");
		return NG_ERR_NOMEM;
	}
	w->c = c;
	w->res = res;
	w->timeout_s = timeout_s;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&w->mu, NULL);
	rc = pthread_create(&w->thread, NULL, watch_main, w);
	if (rc != 0) {
		ng_error("cannot start the run's watchdog thread: %s", strerror(rc));
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return NG_ERR_SYS;
	}
	*w_p = w;
	return NG_OK;
}

void ng_watchdog_stop(struct ng_watchdog *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
