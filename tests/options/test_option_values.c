/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every integer and byte-count option of this build (the driver's, every
 * module's and pattern's) gives one answer to each of the values of
 * doc/options.md: "08" and "0100" are decimal (8, 100) and recorded so,
 * "0x10", "1e300", "" and "8x" are not numbers, 2^63 and 2^64-1 are above
 * every maximum, "-1" is refused (not negative where a negative means
 * nothing: every option of this build).  The answers are asserted on the
 * option checker's message and on the value the parameters block records.
 *
 * With --numeric it prints the names of those options, one a line, with
 * their type ("int" or "size"), for tests/options/options.py.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "driver.h"
#include "readers.h"
#include "registry.h"
#include "tests/check.h"

static const struct ng_option *seen[512];
static size_t nseen;

/* Calls @fn on every integer or byte-count option once. */
static void each_table(const struct ng_option *t, void (*fn)(const struct ng_option *))
{
	for (const struct ng_option *o = t; o && o->name; o++) {
		size_t i;

		if (o->type != NG_OPT_INT && o->type != NG_OPT_SIZE)
			continue;
		for (i = 0; i < nseen && strcmp(seen[i]->name, o->name) != 0; i++)
			;
		if (i < nseen || nseen == sizeof(seen) / sizeof(seen[0]))
			continue;
		seen[nseen++] = o;
		fn(o);
	}
}

static void each_option(void (*fn)(const struct ng_option *))
{
	nseen = 0;
	each_table(ng_driver_options, fn);
	for (size_t i = 0; ng_modules[i]; i++) {
		for (const struct ng_option *const *t = ng_modules[i]->options; t && *t; t++)
			each_table(*t, fn);
		for (const struct ng_option *const *t = ng_modules[i]->reads; t && *t; t++)
			each_table(*t, fn);
	}
	for (size_t i = 0; ng_patterns[i]; i++)
		each_table(ng_patterns[i]->options, fn);
}

static void print_one(const struct ng_option *o)
{
	printf("%s %s\n", o->name, o->type == NG_OPT_INT ? "int" : "size");
}

/* The value recorded in the parameters block for @o given @v. */
static json_t *recorded(const struct ng_option *o, const char *v)
{
	const struct ng_option tab[2] = {*o, {.name = NULL}};
	struct ng_args a = {0};
	char err[256];
	json_t *obj = json_object(), *val;

	ng_args_declare(&a, tab, "test");
	if (ng_args_set(&a, ng_args_find(&a, o->name), v, err, sizeof(err)))
		return NULL;
	ng_args_json_table(&a, tab, obj);
	val = json_incref(json_object_get(obj, o->name));
	json_decref(obj);
	ng_args_release(&a);
	return val;
}

/* @v (a decimal number @n) is accepted and recorded as @n inside the
 * option's range, else refused with the range. */
static void decimal(const struct ng_option *o, const char *v, long long n)
{
	long long lo, hi;
	char err[256] = "";
	int rc = ng_opt_check(o, v, err, sizeof(err));

	ng_opt_range(o, &lo, &hi);
	if (n >= lo && n <= hi) {
		json_t *j = recorded(o, v);

		CHECK(rc == 0, "--%s %s refused: %s", o->name, v, err);
		CHECK(j && json_is_integer(j) && json_integer_value(j) == n,
		      "--%s %s recorded as %s, not %lld", o->name, v,
		      j ? (json_is_integer(j) ? "another integer" : "no integer") : "nothing", n);
		json_decref(j);
	} else {
		CHECK(rc != 0 && strstr(err, "must be between"), "--%s %s: '%s'", o->name, v, err);
	}
}

/* @v is refused with a message holding @what and naming the option and @v. */
static void refused(const struct ng_option *o, const char *v, const char *what)
{
	char err[256] = "", name[80], quoted[80];
	int rc = ng_opt_check(o, v, err, sizeof(err));

	snprintf(name, sizeof(name), "--%s ", o->name);
	snprintf(quoted, sizeof(quoted), "'%s'", v);
	CHECK(rc != 0, "--%s '%s' accepted", o->name, v);
	CHECK(strstr(err, what) && strstr(err, name) && strstr(err, quoted),
	      "--%s '%s': '%s' (expected '%s')", o->name, v, err, what);
	CHECK(!strchr(err, '\n'), "--%s '%s': more than one line", o->name, v);
}

static void check_one(const struct ng_option *o)
{
	bool isint = o->type == NG_OPT_INT;
	long long lo, hi;

	ng_opt_range(o, &lo, &hi);
	CHECK(lo >= 0, "--%s accepts negative values (%lld)", o->name, lo);
	CHECK(hi <= (isint ? NG_OPT_INT_MAX : (long long)NG_OPT_SIZE_MAX) || (isint && hi > 0),
	      "--%s: maximum %lld", o->name, hi);
	CHECK(!o->def || ng_opt_check(o, o->def, (char[256]){0}, 256) == 0, "--%s: default '%s' refused",
	      o->name, o->def);
	decimal(o, "08", 8);
	decimal(o, "0100", 100);
	refused(o, "0x10", "decimal only: no 0x");
	refused(o, "9223372036854775808", "must be between");
	refused(o, "18446744073709551615", "must be between");
	refused(o, "-1", isint ? "must be between" : "not negative");
	refused(o, "1e300", isint ? "expects an integer" : "expects a byte count");
	refused(o, "", isint ? "expects an integer" : "expects a byte count");
	refused(o, "8x", isint ? "expects an integer" : "expects a byte count");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--numeric") == 0) {
		each_option(print_one);
		return 0;
	}
	each_option(check_one);
	CHECK(nseen >= 20, "only %zu integer and byte-count options found", nseen);
	printf("%zu integer and byte-count options checked\n", nseen);
	return check_exit();
}
