/* SPDX-License-Identifier: BSD-3-Clause */
/* Calibrated computation and lists of lengths; the contract is in compute.h. */
#include "compute.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

/* Kept out of line: every caller runs the same code that was calibrated. */
__attribute__((noinline)) uint64_t ng_compute_kernel(uint64_t iters, uint64_t x)
{
	for (uint64_t i = 0; i < iters; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		/* x must be in a register after every step: no vectorising,
		 * no reassociation into independent chains, no closed form. */
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

double ng_compute_rate(const uint64_t *iters, const double *us, size_t n, double *scratch)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = (double)iters[i] / us[i];
	gsl_sort(scratch, 1, n);
	return gsl_stats_median_from_sorted_data(scratch, 1, n);
}

/* CPU time of this thread (us): it does not advance while the thread is
 * preempted. */
static double ng_compute_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* One run of @iters iterations: its time on @tm, and whether it ran
 * undisturbed (the thread's CPU time kept up with it). */
static bool ng_compute_window(const struct ng_timer *tm, uint64_t iters, double *us_p)
{
	double c0 = ng_compute_cpu_us(), c1;
	uint64_t t0 = ng_timer_now(tm), t1;

	(void)ng_compute_kernel(iters, t0);
	t1 = ng_timer_now(tm);
	c1 = ng_compute_cpu_us();
	*us_p = ng_timer_us(tm, t1 - t0);
	return c1 - c0 >= NG_COMPUTE_CPU_SHARE * *us_p;
}

/* The median rate over the undisturbed windows and their relative spread. */
static double ng_compute_measure(const struct ng_timer *tm, double *spread_p)
{
	uint64_t iters[NG_COMPUTE_WINDOWS], n = 1024;
	double us[NG_COMPUTE_WINDOWS], scratch[NG_COMPUTE_WINDOWS], t = 0.0, rate;
	size_t good = 0, tries;

	/* Long enough to dwarf the timer's resolution and read cost. */
	for (tries = 0; tries < NG_COMPUTE_TRIES && n < (1ull << 40); tries++) {
		if (!ng_compute_window(tm, n, &t))
			continue;
		if (t >= NG_COMPUTE_WINDOW_US / 2)
			break;
		n *= 2;
	}
	n = (uint64_t)((double)n * NG_COMPUTE_WINDOW_US / (t > 0.0 ? t : 1.0)) + 1;
	for (tries = 0; tries < NG_COMPUTE_TRIES && good < NG_COMPUTE_WINDOWS; tries++) {
		double w;

		/* On a host that never leaves the thread alone, the last
		 * windows count whatever they are. */
		if (!ng_compute_window(tm, n, &w) && NG_COMPUTE_TRIES - tries > NG_COMPUTE_WINDOWS - good)
			continue;
		iters[good] = n;
		us[good++] = w > 0.0 ? w : 1e-3;
	}
	rate = ng_compute_rate(iters, us, good, scratch);
	/* scratch is sorted, slowest first: the interdecile range */
	*spread_p = rate > 0.0 ? (scratch[good * 9 / 10] - scratch[good / 10]) / rate : 0.0;
	return rate;
}

void ng_compute_calibrate(struct ng_compute *cp, const struct ng_timer *tm)
{
	memset(cp, 0, sizeof(*cp));
	cp->iters_per_us = ng_compute_measure(tm, &cp->spread);
}

void ng_compute_recheck(struct ng_compute *cp, const struct ng_timer *tm)
{
	double spread;

	cp->iters_per_us_end = ng_compute_measure(tm, &spread);
}

uint64_t ng_compute_iters(const struct ng_compute *cp, double us)
{
	double n;

	if (!(us > 0.0))
		return 0;
	n = us * cp->iters_per_us + 0.5;
	return n >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)n;
}

/* ---- lists of lengths ------------------------------------------------- */

/* A value at *@p: a non-negative decimal number, optionally followed by 't'.
 * Advances *@p; -1 (reason in @err) when there is none. */
static int ng_xspec_value(const char **p, struct ng_xspec_val *v, const char *spec, char *err, size_t errlen)
{
	const char *s = *p;
	char *end;

	if (*s == '-') {
		snprintf(err, errlen, "computation lengths must not be negative in '%s'", spec);
		return -1;
	}
	if (!isdigit((unsigned char)*s) && *s != '.') {
		snprintf(err, errlen, "expected a number of microseconds at '%s' in '%s'", s, spec);
		return -1;
	}
	v->v = strtod(s, &end);
	if (end == s || !isfinite(v->v)) {
		snprintf(err, errlen, "expected a number of microseconds at '%s' in '%s'", s, spec);
		return -1;
	}
	v->t = *end == 't';
	if (v->t)
		end++;
	if (!v->t && v->v > NG_XSPEC_MAX_US) {
		snprintf(err, errlen, "computation length %g us in '%s' is above the limit of %g us", v->v,
		         spec, NG_XSPEC_MAX_US);
		return -1;
	}
	*p = end;
	return 0;
}

int ng_xspec_parse(const char *s, struct ng_xspec *sp, char *err, size_t errlen)
{
	const char *p = s;

	memset(sp, 0, sizeof(*sp));
	if (!s || !*s) {
		snprintf(err, errlen, "empty list of computation lengths");
		return -1;
	}
	for (;;) {
		struct ng_xspec_item *it;

		if (sp->nit == NG_XSPEC_ITEMS) {
			snprintf(err, errlen, "more than %d items in '%s'", NG_XSPEC_ITEMS, s);
			return -1;
		}
		it = &sp->it[sp->nit++];
		if (ng_xspec_value(&p, &it->lo, s, err, errlen))
			return -1;
		it->hi = it->lo;
		it->n = 1;
		if (*p == '-') {
			p++;
			if (ng_xspec_value(&p, &it->hi, s, err, errlen))
				return -1;
			it->n = 12;
			if (*p == '/') {
				char *end;
				long n;

				p++;
				n = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
				if (n < 2 || n > NG_XSPEC_MAX) {
					snprintf(err, errlen,
					         "a range needs 2 to %d lengths after '/' in '%s'",
					         NG_XSPEC_MAX, s);
					return -1;
				}
				it->n = (size_t)n;
				p = end;
			} else if (p[0] == ':' && p[1] == '+') {
				p += 2;
				if (ng_xspec_value(&p, &it->step, s, err, errlen))
					return -1;
				if (!(it->step.v > 0.0)) {
					snprintf(err, errlen, "the step of a range must be positive in '%s'",
					         s);
					return -1;
				}
				it->n = 0;
				if (it->step.t == it->lo.t && it->step.t == it->hi.t &&
				    (it->hi.v - it->lo.v) / it->step.v >= NG_XSPEC_MAX) {
					snprintf(err, errlen,
					         "the range %g-%g:+%g gives more than %d lengths in '%s'",
					         it->lo.v, it->hi.v, it->step.v, NG_XSPEC_MAX, s);
					return -1;
				}
			}
			if (it->lo.t == it->hi.t && it->hi.v < it->lo.v) {
				snprintf(err, errlen, "the range %g-%g ends below its start in '%s'",
				         it->lo.v, it->hi.v, s);
				return -1;
			}
		}
		sp->relative = sp->relative || it->lo.t || it->hi.t || (it->n == 0 && it->step.t);
		if (*p == '\0')
			return 0;
		if (*p != ',') {
			snprintf(err, errlen, "unexpected '%s' in the computation lengths '%s'", p, s);
			return -1;
		}
		p++;
	}
}

static double ng_xspec_us(const struct ng_xspec_val *v, double t_us)
{
	return v->t ? v->v * t_us : v->v;
}

static int ng_xspec_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

size_t ng_xspec_values(const struct ng_xspec *sp, double t_us, double *v, char *err, size_t errlen)
{
	double all[NG_XSPEC_ITEMS * NG_XSPEC_MAX + 1]; /* every item gives at most NG_XSPEC_MAX */
	size_t n = 0, k = 0;

	all[n++] = 0.0;
	for (size_t i = 0; i < sp->nit; i++) {
		const struct ng_xspec_item *it = &sp->it[i];
		double lo = ng_xspec_us(&it->lo, t_us), hi = ng_xspec_us(&it->hi, t_us);
		size_t cnt;

		if (hi < lo) {
			snprintf(err, errlen, "the range %g-%g us ends below its start", lo, hi);
			return 0;
		}
		if (it->n == 0) {
			double step = ng_xspec_us(&it->step, t_us);

			if (!(step > 0.0) || (hi - lo) / step >= NG_XSPEC_MAX) {
				snprintf(err, errlen, "the range %g-%g:+%g us gives more than %d lengths", lo,
				         hi, step, NG_XSPEC_MAX);
				return 0;
			}
			/* A little slack: 0-1:+0.1 ends at 1, not 0.9. */
			cnt = (size_t)floor((hi - lo) / step * (1 + 1e-9)) + 1;
			for (size_t j = 0; j < cnt; j++)
				all[n++] = lo + (double)j * step;
		} else {
			cnt = it->n;
			for (size_t j = 0; j < cnt; j++)
				all[n++] = cnt == 1 ? lo : lo + (hi - lo) * (double)j / (double)(cnt - 1);
		}
	}
	qsort(all, n, sizeof(all[0]), ng_xspec_cmp);
	for (size_t i = 0; i < n; i++) {
		if (all[i] > NG_XSPEC_MAX_US) {
			snprintf(err, errlen, "computation length %.4g us is above the limit of %g us",
			         all[i], NG_XSPEC_MAX_US);
			return 0;
		}
		/* Equal to within a nanosecond: one length. */
		if (k && all[i] - v[k - 1] < 1e-3)
			continue;
		if (k == NG_XSPEC_MAX) {
			snprintf(err, errlen, "more than %d computation lengths", NG_XSPEC_MAX);
			return 0;
		}
		v[k++] = all[i];
	}
	return k;
}
