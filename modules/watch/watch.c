/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <time.h>

#include "modules/watch/watch.h"

uint64_t ng_watch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ng_watch_init(struct ng_watch *w, const volatile sig_atomic_t *cancel, double timeout_s, bool yield)
{
	memset(w, 0, sizeof(*w));
	w->cancel = cancel;
	w->yield = yield;
	w->timeout_ns = timeout_s > 0 ? (timeout_s > 1e9 ? (uint64_t)1e18 : (uint64_t)(timeout_s * 1e9)) : 0;
	w->gap_ns = 1000000000u;
	if (w->timeout_ns && w->gap_ns > w->timeout_ns / 2)
		w->gap_ns = w->timeout_ns / 2;
	w->since_ns = w->last_ns = ng_watch_now_ns();
}
