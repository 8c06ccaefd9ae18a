/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options declared as data.  Options come in tables terminated by an entry
 * with name == NULL: a pattern has one, a module lists several (its own, its
 * layer's, its backend's: core/module.h); the driver uses the tables to
 * parse the command line, to generate --help and --list, and to write the
 * "parameters" block of every result file.
 *
 * Names are namespaced by their owner: a module "tcp" declares "tcp-port",
 * a pattern "loggp" declares "loggp-n", the RDMA layer "rdma-backend".  On
 * the command line they are given as --tcp-port 5000 or --tcp-port=5000.
 * The driver validates every value against its type before anything runs
 * (exit 2 on a bad value), so the typed getters below never fail.  Look
 * values up once, at open/setup time, never in a timed loop.
 */
#ifndef NG_OPTIONS_H
#define NG_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

enum ng_opt_type {
	NG_OPT_FLAG,   /* no argument; true when given */
	NG_OPT_INT,    /* signed integer */
	NG_OPT_SIZE,   /* byte count with optional K/M/G suffix (binary) */
	NG_OPT_DOUBLE, /* floating point */
	NG_OPT_STRING, /* free text */
	NG_OPT_CHOICE, /* one of the '|'-separated words in .choices */
};

struct ng_option {
	const char *name; /* long name without "--", e.g. "tcp-port" */
	enum ng_opt_type type;
	const char *def;     /* default as text, NULL for none */
	const char *help;    /* one line */
	const char *choices; /* NG_OPT_CHOICE: "send|write" */
	const char *metavar; /* shown in --help, e.g. "PORT"; NULL = from type */
};

/* Parsed option values: name -> text; opaque, owned by the driver. */
struct ng_args;

/*
 * Typed getters.  Return the value given on the command line, else the
 * option's declared default, else 0/NULL/false.  @name must be declared in
 * some registered table (asserted).
 */
bool ng_args_flag(const struct ng_args *a, const char *name);
long long ng_args_int(const struct ng_args *a, const char *name);
size_t ng_args_size(const struct ng_args *a, const char *name);
double ng_args_double(const struct ng_args *a, const char *name);
const char *ng_args_str(const struct ng_args *a, const char *name);
/* A choice option (NG_OPT_CHOICE) as the index of its value among the
 * option's .choices: 0 for the first word ("send|write": send 0, write 1);
 * -1 when neither given nor defaulted. */
int ng_args_choice(const struct ng_args *a, const char *name);
/* true when the option was given explicitly on the command line. */
bool ng_args_given(const struct ng_args *a, const char *name);

/* Parses "64K", "1M", "4096" (binary suffixes K, M, G, case-insensitive).
 * Returns 0 on success, -1 on a malformed or overflowing value. */
int ng_parse_size(const char *s, size_t *out_p);

#endif
