/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The declared options and their values (core/args.h), the typed getters
 * and ng_config_read, which modules and patterns read them with
 * (core/options.h).  What an option's value may be is core/options.c's:
 * this file stores and looks up.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

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
	long long x = 0;
	if (v && ng_parse_int(v, &x))
		x = 0;
	return x;
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
	return v ? ng_option_choice(e->opt, v) : -1;
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
		return v ? json_integer(ng_args_int(a, e->opt->name)) : json_null();
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

void ng_config_read(const struct ng_args *a, const struct ng_option *table, void *cfg)
{
	char *base = cfg;

	for (const struct ng_option *o = table; o && o->name; o++) {
		const struct ng_arg_ent *e = ng_args_find(a, o->name);
		char *at;

		assert(e && e->opt->type == o->type && "option not declared with this type");
		if (o->given)
			*(bool *)(base + o->given - 1) = e && e->given;
		if (!o->slot)
			continue;
		at = base + o->slot - 1;
		switch (o->type) {
		case NG_OPT_FLAG:
			*(bool *)at = ng_args_flag(a, o->name);
			break;
		case NG_OPT_INT:
			*(long long *)at = ng_args_int(a, o->name);
			break;
		case NG_OPT_SIZE:
			*(size_t *)at = ng_args_size(a, o->name);
			break;
		case NG_OPT_DOUBLE:
			*(double *)at = ng_args_double(a, o->name);
			break;
		case NG_OPT_STRING:
			*(const char **)at = ng_args_str(a, o->name);
			break;
		case NG_OPT_CHOICE:
			*(int *)at = ng_args_choice(a, o->name);
			break;
		}
	}
}
