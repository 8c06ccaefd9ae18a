/* SPDX-License-Identifier: BSD-3-Clause */
/* Latency at an offered load, open loop; the contract is in offered.h. */
#include "offered.h"

#include <math.h>
#include <string.h>

#include "cells.h"
#include "core/module.h"

ng_status ng_offered_check(const char *pattern, const struct ng_run *run, int me, double rate, double load,
                           bool *open_p)
{
	const char *why = NULL;

	*open_p = rate != 0.0 || load != 0.0;
	if (!*open_p)
		return NG_OK;
	if (rate != 0.0 && load != 0.0)
		why = "--rate and --load are two ways to say one thing: give one";
	else if (!(rate >= 0.0 && rate <= 1e9))
		why = "--rate must be 0 to 1e9 messages per second";
	else if (!(load >= 0.0 && load <= 100.0))
		why = "--load must be a fraction of the peak between 0 and 100";
	else if (!(run->comm->caps & NG_CAP_NONBLOCK))
		why = "--rate and --load send on a schedule: the module has no isend/irecv";
	else if (run->time_s > 0 || run->ci_target > 0)
		why = "--rate and --load send -c messages per size: not with --time or --ci";
	else if (run->verify)
		why = "--rate and --load keep many messages in flight from one buffer: not with --verify";
	if (!why)
		return NG_OK;
	if (me == 0)
		ng_error("%s: %s", pattern, why);
	return NG_ERR_USAGE;
}

/* The median of @n values from @x, sorted in @scratch. */
static double ng_offered_median(double *scratch, const double *x, size_t n)
{
	memcpy(scratch, x, n * sizeof(*x));
	return ng_cells_median(scratch, n);
}

double ng_offered_growth(double *scratch, const double *x, size_t n)
{
	size_t q = n / 4;

	if (q < 2)
		return 0.0;
	return ng_offered_median(scratch, x + n - q, q) - ng_offered_median(scratch, x, q);
}

void ng_offered_add(struct ng_offered *o, const struct ng_offered *one)
{
	o->growth = fmax(o->growth, one->growth);
	o->periods = fmax(o->periods, one->periods);
	/* the first sender (no offer yet), or one further behind its own */
	if (!(o->offered > 0.0) || one->achieved / one->offered < o->achieved / o->offered) {
		o->offered = one->offered;
		o->achieved = one->achieved;
		o->peak = one->peak;
	}
}

void ng_offered_row(struct ng_row *row, const char *pattern, size_t size, const struct ng_offered *o,
                    bool load)
{
	double f = o->offered > 0.0 ? o->achieved / o->offered : 0.0;
	bool held = f >= 0.95 && o->periods <= 2.0;

	ng_row_number(row, "offered_rate_per_s", o->offered);
	ng_row_number(row, "achieved_rate_per_s", o->achieved);
	if (load)
		ng_row_number(row, "peak_rate_per_s", o->peak);
	ng_row_number(row, "latency_growth_us", o->growth);
	ng_row_json(row, "sustained", json_boolean(held));
	if (!held)
		ng_warn(
		    "%s: size %zu: the offered load was not sustained: %.0f messages/s offered, %.0f came "
		    "back (%.0f%%), the latency grew by %.3g us over the run (%.3g messages queued): the "
		    "latencies grow with the queue and are no steady figure (\"sustained\": false)",
		    pattern, size, o->offered, o->achieved, 100.0 * f, o->growth, o->periods);
}
