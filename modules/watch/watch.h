/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress watchdog of a module's poll loop: timeout and cancellation for
 * modules that busy-poll in user space (the verbs modules, the RDMA layer
 * and the modules on it).  Internal to modules/.
 *
 * The loop bumps @events whenever it sees anything happen (a completion, a
 * counter change) and calls ng_watch_idle() after every round that saw
 * nothing.  Every NG_WATCH_SPIN idle rounds that reads the clock (vDSO, no
 * system call), checks the cancel flag, and says whether nothing has
 * happened for the timeout.  Time during which the module was not polled at
 * all (the caller was busy elsewhere, a gap of over a second between clock
 * reads) does not count as silence.  With @yield (--ib-poll yield,
 * --rdma-poll yield) every idle round gives the CPU away with sched_yield():
 * for more ranks than cores, where spinning ranks would starve each other
 * and a software device (Soft-RoCE does its work in the kernel); the one
 * system call in a poll loop, made only on request.
 */
#ifndef NG_WATCH_H
#define NG_WATCH_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#define NG_WATCH_SPIN 256u

struct ng_watch {
	const volatile sig_atomic_t *cancel;
	uint64_t timeout_ns; /* 0: none */
	uint64_t gap_ns;     /* longer between clock reads: not polled */
	uint64_t events;     /* bumped by the poll loop */
	uint64_t seen;       /* events at the last clock read */
	uint64_t since_ns;   /* start of the current silence */
	uint64_t last_ns;    /* last clock read */
	unsigned spin;
	bool yield; /* sched_yield() when idle */
};

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ng_watch_now_ns(void);

void ng_watch_init(struct ng_watch *w, const volatile sig_atomic_t *cancel, double timeout_s, bool yield);

/* The cancel flag (SIGINT/SIGTERM), read once per poll round. */
static inline bool ng_watch_cancelled(const struct ng_watch *w)
{
	return w->cancel && *w->cancel;
}

/* Call once per idle poll round.  NG_OK, NG_ERR_CANCELLED or NG_ERR_TIMEOUT
 * (nothing reported: the caller knows whom it waits for). */
static inline ng_status ng_watch_idle(struct ng_watch *w)
{
	uint64_t now;

	if (w->yield)
		sched_yield();
	if (++w->spin < NG_WATCH_SPIN)
		return NG_OK;
	w->spin = 0;
	if (w->cancel && *w->cancel)
		return NG_ERR_CANCELLED;
	now = ng_watch_now_ns();
	if (w->events != w->seen || now - w->last_ns > w->gap_ns) {
		w->seen = w->events;
		w->since_ns = now;
	}
	w->last_ns = now;
	if (w->timeout_ns && now - w->since_ns > w->timeout_ns)
		return NG_ERR_TIMEOUT;
	return NG_OK;
}

#endif
