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

/*
 * Numbers (doc/options.md): an integer is decimal digits with an optional
 * leading '-' ("08" and "0100" are 8 and 100: leading zeros never mean
 * octal, and there is no 0x); a byte count is decimal digits with an
 * optional binary suffix K, M or G (KB, KiB, ... alike).  A value outside
 * the option's range is refused, overflow included, before anything runs.
 * The result's parameters record the value read (64K as 65536).
 */
#define NG_OPT_INT_MAX  2147483647LL /* default largest integer (INT_MAX) */
#define NG_OPT_SIZE_MAX (1ULL << 40) /* default largest byte count: 1T */

struct ng_option {
	const char *name; /* long name without "--", e.g. "tcp-port" */
	enum ng_opt_type type;
	const char *def;     /* default as text, NULL for none */
	const char *help;    /* one line */
	const char *choices; /* NG_OPT_CHOICE: "send|write" */
	const char *metavar; /* shown in --help, e.g. "PORT"; NULL = from type */
	/* NG_OPT_INT, NG_OPT_SIZE: the accepted range; min == max == 0 is the
	 * type's default (0 .. NG_OPT_INT_MAX, 0 .. NG_OPT_SIZE_MAX). */
	long long min, max;
	/* NG_OPT_STRING: a comma-separated list; an empty item is refused. */
	bool list;
	/* When the option is read: NULL always, else "OPTION=v1|v2": only when
	 * the (choice) option OPTION has one of these values and is read
	 * itself.  The driver refuses the option given otherwise (exit 2), and
	 * the report leaves it out of the run's parameters.  "launch=w1|w2"
	 * (the driver's own options): only under those launches ("tcp":
	 * --server/--client, "local", "mpi"); the report uses those. */
	const char *applies;
	/* Where the value is read to (ng_config_read): 1 + the offset of its
	 * member in the owner's configuration struct, set with one of the
	 * NG_*_AT macros below together with .type; 0: not read that way
	 * (the driver's own options). */
	size_t slot;
	/* 1 + the offset of a bool member set when the option was given on the
	 * command line (NG_GIVEN_AT); 0: none. */
	size_t given;
};

/*
 * Typed configuration (as UCX's config tables): a module's or pattern's
 * options are read once, at open or setup, into a struct of its own by
 * ng_config_read(); code uses the struct's members, never an option's
 * name, so a name cannot be mistyped at a use site.  Each table entry
 * names its member with the macro of its type, which sets .type and checks
 * the member's C type at compile time:
 *
 *   struct ng_bw_config { long long window; };
 *   {.name = "bw-window", NG_INT_AT(struct ng_bw_config, window), .def = "64", ...}
 *
 * FLAG bool, INT long long, SIZE size_t, DOUBLE double, STRING const char *
 * (the text, owned by the arguments: valid for the run), CHOICE int (the
 * index of the value among .choices, as ng_args_choice; -1 for none).
 */
#define NG_OPT_SLOT_(T, m, ctype)                                                                            \
	(offsetof(T, m) + 1 + 0 * sizeof(char[_Generic(((T *)0)->m, ctype : 1, default : -1)]))
#define NG_FLAG_AT(T, m)   .type = NG_OPT_FLAG, .slot = NG_OPT_SLOT_(T, m, bool)
#define NG_INT_AT(T, m)    .type = NG_OPT_INT, .slot = NG_OPT_SLOT_(T, m, long long)
#define NG_SIZE_AT(T, m)   .type = NG_OPT_SIZE, .slot = NG_OPT_SLOT_(T, m, size_t)
#define NG_DOUBLE_AT(T, m) .type = NG_OPT_DOUBLE, .slot = NG_OPT_SLOT_(T, m, double)
#define NG_STRING_AT(T, m) .type = NG_OPT_STRING, .slot = NG_OPT_SLOT_(T, m, const char *)
#define NG_CHOICE_AT(T, m) .type = NG_OPT_CHOICE, .slot = NG_OPT_SLOT_(T, m, int)
#define NG_GIVEN_AT(T, m)  .given = NG_OPT_SLOT_(T, m, bool)

/* Parsed option values: name -> text; opaque, owned by the driver. */
struct ng_args;

/*
 * Typed getters (core/args.c, beside the driver's side of the values:
 * core/args.h), what ng_config_read reads with; modules and patterns read
 * their options with ng_config_read, never by name.  Return the value given
 * on the command line, else the option's declared default, else
 * 0/NULL/false.  @name must be declared in some registered table
 * (asserted).
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

/*
 * Reads every entry of @table that has a slot (or a given slot) into the
 * configuration struct @cfg (see NG_INT_AT above): the value given on the
 * command line, else the option's declared default, else 0/NULL/false/-1.
 * An entry may name an option another table declares (a pattern's .reads:
 * mpbibw reads alltoall's --ranks-per-node); it is read with that
 * declaration's default.  Every name must be declared with the entry's type
 * (checked for every registered table by the options unit test).
 */
void ng_config_read(const struct ng_args *a, const struct ng_option *table, void *cfg);

/* Parses a byte count: "64K", "1M", "4096", "08" (decimal digits, binary
 * suffixes K, M, G, case-insensitive, then an optional "B"/"iB").
 * Returns 0 on success, -1 on a malformed value, -2 on one above
 * NG_OPT_SIZE_MAX (overflow included). */
int ng_parse_size(const char *s, size_t *out_p);
/* Parses a decimal integer: an optional '-', then digits only (leading
 * zeros are decimal).  Returns 0 on success, -1 on a malformed value, -2 on
 * one outside long long. */
int ng_parse_int(const char *s, long long *out_p);

/* The word shown for @o's value in --help, the man page and the
 * completions: its .metavar, else by type ("N", "BYTES", "X", the choices). */
const char *ng_option_metavar(const struct ng_option *o);
/* The range of integer or byte-count option @o (its own or the type's). */
void ng_opt_range(const struct ng_option *o, long long *min_p, long long *max_p);
/* Checks @value against @opt's type, choices and range.  Returns 0, or -1
 * with a one-line reason in @err. */
int ng_opt_check(const struct ng_option *opt, const char *value, char *err, size_t errlen);
/* The index of @value among the choices of choice option @o ("send|write":
 * send 0, write 1), -1 when it is none of them. */
int ng_option_choice(const struct ng_option *o, const char *value);

#endif
