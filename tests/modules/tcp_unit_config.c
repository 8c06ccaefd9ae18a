/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tcp unit test's ng_config_read (test_tcp_unit.c): the module's options
 * into its configuration struct by the table's members (core/options.h),
 * from the values the test gives (tcp_unit_arg), without core/args.c.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

const char *tcp_unit_arg(const struct ng_args *a, const char *name);

/* The index of @v among the '|'-separated words of @choices, -1 for none. */
static int choice_index(const char *choices, const char *v)
{
	size_t len = strlen(v);
	int i = 0;

	for (const char *p = choices; p && *p; i++) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (n == len && !strncmp(p, v, n))
			return i;
		p = bar ? bar + 1 : NULL;
	}
	return -1;
}

/* The module's options into its configuration struct, by the table's members
 * (core/options.h): what tcp_unit_arg gives, else nothing (0, NULL). */
void ng_config_read(const struct ng_args *a, const struct ng_option *table, void *cfg)
{
	char *base = cfg;

	for (const struct ng_option *o = table; o && o->name; o++) {
		const char *s = tcp_unit_arg(a, o->name);
		char *at;

		if (o->given)
			*(bool *)(base + o->given - 1) = s != NULL;
		if (!o->slot)
			continue;
		at = base + o->slot - 1;
		switch (o->type) {
		case NG_OPT_FLAG:
			*(bool *)at = s != NULL;
			break;
		case NG_OPT_INT:
			*(long long *)at = s ? atoll(s) : 0;
			break;
		case NG_OPT_SIZE:
			*(size_t *)at = s ? (size_t)strtoull(s, NULL, 10) : 0;
			break;
		case NG_OPT_DOUBLE:
			*(double *)at = s ? strtod(s, NULL) : 0.0;
			break;
		case NG_OPT_STRING:
			*(const char **)at = s;
			break;
		case NG_OPT_CHOICE:
			*(int *)at = choice_index(o->choices, s ? s : o->def ? o->def : "");
			break;
		}
	}
}
