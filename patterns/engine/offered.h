/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency at an offered load, open loop (--rate MSGS/S, --load FRACTION):
 * what pingpong and bw share (doc/pingpong.md and doc/bandwidth.md,
 * "Offered load").  Messages leave on a schedule, t0 + i / rate, whatever
 * has come back, and a sample counts from message i's *scheduled*
 * departure, so a message that leaves late because the sender was held up
 * counts as waiting, not as a shorter time (the coordinated-omission
 * correction of HdrHistogram and wrk2).  The pattern runs its loop; this
 * file checks the options and judges the result.
 *
 * The verdict of a size (ng_offered_row): the offer held ("sustained") when
 * what came back reached 95% of what was offered, and the latency grew by
 * at most two messages queued over the run: the growth is the last
 * quarter's median latency less the first quarter's, and a queue of q
 * messages adds q periods to a message's time, so the growth is judged in
 * periods, not against the latency (a host that slows a 4 us round trip to
 * 25 us for a while queues nothing at 2,000 messages/s).  A size that did
 * not hold gets a warning instead of a quiet figure: its latencies grow
 * with the queue and depend on the run's length.
 *
 * Nothing here runs inside a timed loop.
 */
#ifndef NG_PATTERNS_OFFERED_H
#define NG_PATTERNS_OFFERED_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

/* Messages whose receives are posted ahead of their arrival. */
#define NG_OFFERED_POSTED 64

/* One size's figures, over the senders (the worst one's where they differ). */
struct ng_offered {
	double offered;  /* messages per second the schedule sent at */
	double achieved; /* messages over the time from the first scheduled departure to the last arrival */
	double peak;     /* --load: the measured peak the rate is a fraction of; 0 otherwise */
	double growth;   /* us: the last quarter's median latency less the first quarter's */
	double periods;  /* the growth in periods of the schedule: messages queued */
};

/*
 * Folds one sender's figures @one into @o (zeroed before the first): the
 * largest growth and queue over the senders, and the offer, the achieved
 * rate and the peak of the sender that fell furthest behind its own offer.
 */
void ng_offered_add(struct ng_offered *o, const struct ng_offered *one);

/*
 * Checks --rate @rate and --load @load of @pattern for this run (one of
 * them, in range, a module with isend/irecv, -c messages: not by time or
 * with --ci-target, not with --verify); rank @me 0 says what is wrong.
 * Returns NG_OK with *open_p whether the loop is open, or NG_ERR_USAGE.
 */
ng_status ng_offered_check(const char *pattern, const struct ng_run *run, int me, double rate, double load,
                           bool *open_p);

/*
 * The growth of @x[0..n) (the latencies in the order sent): the median of
 * its last quarter less that of its first, in @scratch (n / 4 + 1
 * doubles); 0 with fewer than 8 values.
 */
double ng_offered_growth(double *scratch, const double *x, size_t n);

/*
 * Adds @o to @row: offered_rate_per_s, achieved_rate_per_s, peak_rate_per_s
 * (with @load), latency_growth_us and "sustained"; a size that did not hold
 * gets one warning line from @pattern.
 */
void ng_offered_row(struct ng_row *row, const char *pattern, size_t size, const struct ng_offered *o,
                    bool load);

#endif
