/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Driver side of core/options.h: the set of declared options and the values
 * given on the command line (core/args.c).  A value is checked against its
 * option with ng_opt_check (core/options.h) before it is stored.
 */
#ifndef NG_ARGS_H
#define NG_ARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "options.h"

struct ng_arg_ent {
	const struct ng_option *opt;
	const char *owner; /* "" for the driver, else module/pattern name */
	const char *value; /* given value (points into argv or a literal) */
	bool given;
};

struct ng_args {
	struct ng_arg_ent *ents;
	size_t n, cap;
};

/* Declares every option of @table (NULL-name terminated) for @owner.
 * Returns -1 on out-of-memory. */
int ng_args_declare(struct ng_args *a, const struct ng_option *table, const char *owner);
/* The entry of option @name, or NULL. */
struct ng_arg_ent *ng_args_find(const struct ng_args *a, const char *name);
/* Validates @value against the option's type and stores it.  On a bad value
 * writes a one-line reason to @err and returns -1. */
int ng_args_set(struct ng_args *a, struct ng_arg_ent *e, const char *value, char *err, size_t errlen);
/* Effective values of the options of @owner as a JSON object (new reference). */
json_t *ng_args_json(const struct ng_args *a, const char *owner);
/* Adds the effective values of the options of @table to @obj, in table order. */
void ng_args_json_table(const struct ng_args *a, const struct ng_option *table, json_t *obj);
/* Whether @table (its first entry) is declared already. */
bool ng_args_declared(const struct ng_args *a, const struct ng_option *table);
void ng_args_release(struct ng_args *a);

#endif
