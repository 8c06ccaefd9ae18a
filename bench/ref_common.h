/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the two reference ping-pong programs share: argument parsing, the
 * clock, the median, and placement.  Deliberately independent of ngauge's
 * own code, so that the references measure the transport and nothing of ours.
 */
#ifndef NG_REF_COMMON_H
#define NG_REF_COMMON_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "4096", "64K", "1M", "1G" (binary) up to @max; 0 on success. */
static int ref_parse_size(const char *s, size_t max, size_t *out_p)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end || v > max)
		return -1;
	*out_p = (size_t)v;
	return 0;
}

static int ref_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts @x and returns its median (mean of the two middle values for an
 * even count, as GSL defines it). */
static double ref_median(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), ref_cmp);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* CLOCK_MONOTONIC_RAW, the clock of ngauge's "clock" timer. */
static inline uint64_t ref_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Which buffers the references use, as ngauge's --pp-echo: both processes
 * send from a send buffer and receive into a separate receive buffer
 * (REF_ECHO unset or "separate"), or the echoing process answers from the
 * buffer it has just received into (REF_ECHO=same).  Returns 1 for "same",
 * 0 for "separate", -1 (reported) for anything else. */
static int ref_echo_same(void)
{
	const char *s = getenv("REF_ECHO");

	if (!s || !*s || strcmp(s, "separate") == 0)
		return 0;
	if (strcmp(s, "same") == 0)
		return 1;
	fprintf(stderr, "REF_ECHO must be 'separate' or 'same', got '%s'\n", s);
	return -1;
}

/* REF_PIN="A,B": the process of role r (0: timing side, 1: echo side) runs
 * on CPU number r of the list only, as `ngauge --pin A,B` places rank r. */
static void ref_pin(int role)
{
	const char *s = getenv("REF_PIN");
	cpu_set_t set;
	int cpu = -1;

	for (int r = 0; s && *s; r++) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s)
			return;
		if (r == role)
			cpu = (int)v;
		s = *end == ',' ? end + 1 : end;
	}
	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("REF_PIN");
}

#endif
