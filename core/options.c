/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an option's value may be (core/options.h): the number parsers, the
 * check of a value against its option, the words --help shows.  Nothing
 * here knows the values given: those are core/args.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* Decimal digits at @s into *@v, *@end past them; -2 above ULLONG_MAX, -1
 * when there is no digit. */
static int digits(const char *s, unsigned long long *v, const char **end)
{
	unsigned long long x = 0;
	int rc = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (ULLONG_MAX - d) / 10)
			rc = -2;
		x = x * 10 + d;
	}
	*v = x;
	*end = s;
	return rc;
}

int ng_parse_int(const char *s, long long *out_p)
{
	unsigned long long v;
	const char *end;
	bool neg;
	int rc;

	if (!s)
		return -1;
	neg = *s == '-';
	rc = digits(s + neg, &v, &end);
	if (rc == -1 || *end)
		return -1;
	if (rc == -2 || v > (unsigned long long)LLONG_MAX + neg)
		return -2;
	*out_p = neg ? (long long)(0 - v) : (long long)v;
	return 0;
}

int ng_parse_size(const char *s, size_t *out_p)
{
	unsigned long long v;
	unsigned shift = 0;
	const char *end;
	int rc;

	if (!s)
		return -1;
	rc = digits(s, &v, &end);
	if (rc == -1)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		return -1;
	}
	/* Allow "KiB"/"KB"/"B" spellings after the suffix. */
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0')
		return -1;
	if (rc == -2 || v > (NG_OPT_SIZE_MAX >> shift))
		return -2;
	*out_p = (size_t)(v << shift);
	return 0;
}

void ng_opt_range(const struct ng_option *o, long long *min_p, long long *max_p)
{
	if (o->min || o->max) {
		*min_p = o->min;
		*max_p = o->max;
	} else {
		*min_p = 0;
		*max_p = o->type == NG_OPT_SIZE ? (long long)NG_OPT_SIZE_MAX : NG_OPT_INT_MAX;
	}
}

/* A byte count as text: "65536 (64K)" style suffix when exact. */
static void size_text(long long v, char *buf, size_t len)
{
	static const char *const sfx[] = {"", "K", "M", "G", "T"};
	int k = 0;

	while (k < 4 && v && v % 1024 == 0) {
		v /= 1024;
		k++;
	}
	snprintf(buf, len, "%lld%s", v, sfx[k]);
}

int ng_option_choice(const struct ng_option *o, const char *v)
{
	size_t len = strlen(v);
	int i = 0;

	for (const char *p = o->choices; p && *p; i++) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == len && strncmp(p, v, n) == 0)
			return i;
		p = bar ? bar + 1 : NULL;
	}
	return -1;
}

/* Checks a comma-separated list for empty items. */
static int list_check(const struct ng_option *o, const char *v, char *err, size_t errlen)
{
	size_t n = strlen(v);

	if (n == 0 || v[0] == ',' || v[n - 1] == ',' || strstr(v, ",,")) {
		snprintf(err, errlen, "--%s: empty item in '%s' (items are separated by single commas)",
		         o->name, v);
		return -1;
	}
	return 0;
}

/* Checks integer or byte count @v of @o against its range. */
static int range_check(const struct ng_option *o, const char *v, int rc, long long x, char *err,
                       size_t errlen)
{
	long long lo, hi;
	char los[32], his[32];

	ng_opt_range(o, &lo, &hi);
	if (rc == 0 && x >= lo && x <= hi)
		return 0;
	if (o->type == NG_OPT_SIZE) {
		size_text(lo, los, sizeof(los));
		size_text(hi, his, sizeof(his));
	} else {
		snprintf(los, sizeof(los), "%lld", lo);
		snprintf(his, sizeof(his), "%lld", hi);
	}
	snprintf(err, errlen, "--%s must be between %s and %s, got '%s'", o->name, los, his, v);
	return -1;
}

int ng_opt_check(const struct ng_option *o, const char *v, char *err, size_t errlen)
{
	char *end;
	const char *why;
	size_t sz;
	long long x = 0;
	int rc;

	switch (o->type) {
	case NG_OPT_FLAG:
		return 0;
	case NG_OPT_INT:
		rc = ng_parse_int(v, &x);
		if (rc == -1) {
			why = (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) ? " (decimal only: no 0x)" : "";
			snprintf(err, errlen, "--%s expects an integer, got '%s'%s", o->name, v, why);
			return -1;
		}
		return range_check(o, v, rc, x, err, errlen);
	case NG_OPT_SIZE:
		rc = ng_parse_size(v, &sz);
		if (rc == -1) {
			why = v[0] == '-'                                     ? " (not negative)"
			      : (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) ? " (decimal only: no 0x)"
			                                                      : "";
			snprintf(err, errlen, "--%s expects a byte count like 4096 or 64K, got '%s'%s",
			         o->name, v, why);
			return -1;
		}
		return range_check(o, v, rc, (long long)sz, err, errlen);
	case NG_OPT_DOUBLE: {
		errno = 0;
		double d = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(d)) {
			snprintf(err, errlen, "--%s expects a number, got '%s'", o->name, v);
			return -1;
		}
		return 0;
	}
	case NG_OPT_CHOICE:
		if (ng_option_choice(o, v) < 0) {
			snprintf(err, errlen, "--%s must be one of %s, got '%s'", o->name, o->choices, v);
			return -1;
		}
		return 0;
	case NG_OPT_STRING:
		return o->list ? list_check(o, v, err, errlen) : 0;
	}
	return 0;
}

const char *ng_option_metavar(const struct ng_option *o)
{
	if (o->metavar)
		return o->metavar;
	switch (o->type) {
	case NG_OPT_INT:
		return "N";
	case NG_OPT_SIZE:
		return "BYTES";
	case NG_OPT_DOUBLE:
		return "X";
	case NG_OPT_CHOICE:
		return o->choices;
	default:
		return "VALUE";
	}
}
