/* SPDX-License-Identifier: BSD-3-Clause */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

int ng_parse_size(const char *s, size_t *out_p)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
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
	if (shift && v > (SIZE_MAX >> shift))
		return -1;
	*out_p = (size_t)(v << shift);
	return 0;
}

int ng_args_declare(struct ng_args *a, const struct ng_option *table, const char *owner)
{
	for (const struct ng_option *o = table; o && o->name; o++) {
		if (a->n == a->cap) {
			size_t cap = a->cap ? 2 * a->cap : 64;
			struct ng_arg_ent *e = realloc(a->ents, cap * sizeof(*e));
			if (!e)
				return -1;
			a->ents = e;
			a->cap = cap;
		}
		a->ents[a->n++] = (struct ng_arg_ent){.opt = o, .owner = owner};
	}
	return 0;
}

struct ng_arg_ent *ng_args_find(const struct ng_args *a, const char *name)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->ents[i].opt->name, name) == 0)
			return &a->ents[i];
	return NULL;
}

/* The index of word @v among the '|'-separated @choices, or -1. */
static int choice_index(const char *choices, const char *v)
{
	size_t len = strlen(v);
	int i = 0;

	for (const char *p = choices; p && *p; i++) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == len && strncmp(p, v, n) == 0)
			return i;
		p = bar ? bar + 1 : NULL;
	}
	return -1;
}

int ng_opt_check(const struct ng_option *o, const char *v, char *err, size_t errlen)
{
	char *end;
	size_t sz;

	switch (o->type) {
	case NG_OPT_FLAG:
		return 0;
	case NG_OPT_INT:
		errno = 0;
		(void)strtoll(v, &end, 0);
		if (errno || end == v || *end) {
			snprintf(err, errlen, "--%s expects an integer, got '%s'", o->name, v);
			return -1;
		}
		return 0;
	case NG_OPT_SIZE:
		if (ng_parse_size(v, &sz)) {
			snprintf(err, errlen, "--%s expects a byte count like 4096 or 64K, got '%s'", o->name,
			         v);
			return -1;
		}
		return 0;
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
		if (choice_index(o->choices, v) < 0) {
			snprintf(err, errlen, "--%s must be one of %s, got '%s'", o->name, o->choices, v);
			return -1;
		}
		return 0;
	case NG_OPT_STRING:
		return 0;
	}
	return 0;
}

int ng_args_set(struct ng_args *a, struct ng_arg_ent *e, const char *value, char *err, size_t errlen)
{
	(void)a;
	if (ng_opt_check(e->opt, value, err, errlen))
		return -1;
	e->value = value;
	e->given = true;
	return 0;
}

static const char *value_of(const struct ng_args *a, const char *name)
{
	const struct ng_arg_ent *e = ng_args_find(a, name);
	assert(e && "option not declared in any table");
	if (!e)
		return NULL;
	return e->given ? e->value : e->opt->def;
}

bool ng_args_flag(const struct ng_args *a, const char *name)
{
	const struct ng_arg_ent *e = ng_args_find(a, name);
	assert(e && "option not declared in any table");
	if (!e)
		return false;
	if (e->given)
		return true;
	return e->opt->def && strcmp(e->opt->def, "1") == 0;
}

long long ng_args_int(const struct ng_args *a, const char *name)
{
	const char *v = value_of(a, name);
	return v ? strtoll(v, NULL, 0) : 0;
}

size_t ng_args_size(const struct ng_args *a, const char *name)
{
	const char *v = value_of(a, name);
	size_t s = 0;
	if (v && ng_parse_size(v, &s))
		s = 0;
	return s;
}

double ng_args_double(const struct ng_args *a, const char *name)
{
	const char *v = value_of(a, name);
	return v ? strtod(v, NULL) : 0.0;
}

const char *ng_args_str(const struct ng_args *a, const char *name)
{
	return value_of(a, name);
}

int ng_args_choice(const struct ng_args *a, const char *name)
{
	const struct ng_arg_ent *e = ng_args_find(a, name);
	const char *v;

	assert(e && e->opt->type == NG_OPT_CHOICE && "not a declared choice option");
	if (!e)
		return -1;
	v = e->given ? e->value : e->opt->def;
	return v ? choice_index(e->opt->choices, v) : -1;
}

bool ng_args_given(const struct ng_args *a, const char *name)
{
	const struct ng_arg_ent *e = ng_args_find(a, name);
	return e && e->given;
}

/* The effective value of @e as JSON (new reference). */
static json_t *ent_json(const struct ng_args *a, const struct ng_arg_ent *e)
{
	const char *v = e->given ? e->value : e->opt->def;

	switch (e->opt->type) {
	case NG_OPT_FLAG:
		return json_boolean(ng_args_flag(a, e->opt->name));
	case NG_OPT_INT:
		return v ? json_integer(strtoll(v, NULL, 0)) : json_null();
	case NG_OPT_SIZE:
		return v ? json_integer((json_int_t)ng_args_size(a, e->opt->name)) : json_null();
	case NG_OPT_DOUBLE:
		return v ? json_real(strtod(v, NULL)) : json_null();
	default:
		return v ? json_string(v) : json_null();
	}
}

json_t *ng_args_json(const struct ng_args *a, const char *owner)
{
	json_t *o = json_object();
	for (size_t i = 0; i < a->n; i++) {
		const struct ng_arg_ent *e = &a->ents[i];

		if (strcmp(e->owner, owner) == 0)
			json_object_set_new(o, e->opt->name, ent_json(a, e));
	}
	return o;
}

void ng_args_json_table(const struct ng_args *a, const struct ng_option *table, json_t *obj)
{
	for (const struct ng_option *o = table; o && o->name; o++) {
		const struct ng_arg_ent *e = ng_args_find(a, o->name);

		if (e)
			json_object_set_new(obj, o->name, ent_json(a, e));
	}
}

bool ng_args_declared(const struct ng_args *a, const struct ng_option *table)
{
	for (size_t i = 0; table && table->name && i < a->n; i++)
		if (a->ents[i].opt == table)
			return true;
	return false;
}

void ng_args_release(struct ng_args *a)
{
	free(a->ents);
	a->ents = NULL;
	a->n = a->cap = 0;
}
