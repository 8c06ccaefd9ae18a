/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The typed values of the command line, one input a value given to every
 * parser: integers (ng_parse_int), byte counts (ng_parse_size), the check of
 * each option type with and without a range (ng_opt_check, ng_args_set),
 * size specifications (ng_sizes_parse, whose ng_sizes_format must parse
 * back to the same list) and --percentiles (ng_stats_parse_percentiles).
 * Besides crashes, a harness abort()s where a parser breaks its header's
 * contract (a value it accepts that does not read back, a list out of order).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "args.h"
#include "fuzz.h"
#include "sizes.h"

static const struct ng_option ng_fuzz_options[] = {
    {.name = "flag", .type = NG_OPT_FLAG},
    {.name = "int", .type = NG_OPT_INT},
    {.name = "int-range", .type = NG_OPT_INT, .min = -5, .max = 1000},
    {.name = "size", .type = NG_OPT_SIZE},
    {.name = "size-range", .type = NG_OPT_SIZE, .min = 1, .max = 1LL << 20},
    {.name = "double", .type = NG_OPT_DOUBLE},
    {.name = "string", .type = NG_OPT_STRING},
    {.name = "list", .type = NG_OPT_STRING, .list = true},
    {.name = "choice", .type = NG_OPT_CHOICE, .choices = "send|write|read"},
    {.name = NULL},
};

static void ng_fuzz_int(const char *s)
{
	char back[32];
	long long v;

	if (ng_parse_int(s, &v) != 0)
		return;
	/* the same number: decimal digits, leading zeros and "-0" aside */
	snprintf(back, sizeof(back), "%lld", v);
	long long again;
	if (ng_parse_int(back, &again) != 0 || again != v)
		abort();
}

static void ng_fuzz_size(const char *s)
{
	size_t v, again;
	char back[32];

	if (ng_parse_size(s, &v) != 0)
		return;
	if (v > NG_OPT_SIZE_MAX)
		abort(); /* options.h: above NG_OPT_SIZE_MAX is refused */
	snprintf(back, sizeof(back), "%zu", v);
	if (ng_parse_size(back, &again) != 0 || again != v)
		abort();
}

static void ng_fuzz_check(const char *s)
{
	struct ng_args a = {0};
	char err[256];

	if (ng_args_declare(&a, ng_fuzz_options, "fuzz"))
		abort();
	for (size_t i = 0; i < a.n; i++) {
		struct ng_arg_ent *e = &a.ents[i];
		long long lo, hi;

		if (ng_args_set(&a, e, s, err, sizeof(err)) != 0)
			continue;
		switch (e->opt->type) {
		case NG_OPT_INT:
			ng_opt_range(e->opt, &lo, &hi);
			if (ng_args_int(&a, e->opt->name) < lo || ng_args_int(&a, e->opt->name) > hi)
				abort(); /* accepted only within its range */
			break;
		case NG_OPT_SIZE:
			ng_opt_range(e->opt, &lo, &hi);
			if (ng_args_size(&a, e->opt->name) < (size_t)lo ||
			    ng_args_size(&a, e->opt->name) > (size_t)hi)
				abort();
			break;
		case NG_OPT_DOUBLE:
			if (!isfinite(ng_args_double(&a, e->opt->name)))
				abort();
			break;
		case NG_OPT_CHOICE:
			if (ng_args_choice(&a, e->opt->name) < 0)
				abort();
			break;
		default:
			(void)ng_args_str(&a, e->opt->name);
			break;
		}
	}
	json_decref(ng_args_json(&a, "fuzz"));
	ng_args_release(&a);
}

static void ng_fuzz_sizes(const char *spec)
{
	size_t *sizes, *back, n, nback, i;
	char err[512], *text;

	if (ng_sizes_parse(spec, &sizes, &n, err, sizeof(err)))
		return;
	if (n == 0 || n > 100000)
		abort();
	for (i = 1; i < n; i++)
		if (sizes[i - 1] >= sizes[i])
			abort(); /* ascending, no repeats */
	if (sizes[n - 1] > NG_OPT_SIZE_MAX)
		abort();
	text = ng_sizes_format(sizes, n);
	if (!text)
		abort();
	if (ng_sizes_parse(text, &back, &nback, err, sizeof(err)))
		abort(); /* the text parses back ... */
	if (nback != n || memcmp(back, sizes, n * sizeof(*sizes)) != 0)
		abort(); /* ... to the same list */
	free(back);
	free(text);
	(void)ng_sizes_cap(sizes, &n, 4096);
	free(sizes);
}

static void ng_fuzz_percentiles(const char *list)
{
	double q[NG_STATS_PCT_MAX];
	char why[256], key[32], prev[32] = "";
	size_t n = ng_stats_parse_percentiles(list, q, why, sizeof(why));

	if (n > NG_STATS_PCT_MAX)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (!(q[i] > 0.0 && q[i] < 1.0) || (i > 0 && !(q[i] > q[i - 1])))
			abort(); /* above 0, below 100, ascending */
		ng_stats_pct_key(q[i], key, sizeof(key));
		if (strcmp(key, prev) == 0 || strcmp(key, "p100") == 0 || strcmp(key, "p0") == 0)
			abort(); /* a STATS key per percentile, its own */
		memcpy(prev, key, sizeof(prev));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = ng_fuzz_strndup(data, size);

	ng_fuzz_int(s);
	ng_fuzz_size(s);
	ng_fuzz_check(s);
	ng_fuzz_sizes(s);
	ng_fuzz_percentiles(s);
	free(s);
	return 0;
}
