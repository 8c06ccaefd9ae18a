/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's command line as data and text: its own option table
 * (ng_driver_options), the short options, --help and --list.  Used by the
 * driver (core/driver*.c), the man page and completions (docgen.h) and the
 * report (the options a run's parameters name).
 */
#ifndef NG_CMDLINE_H
#define NG_CMDLINE_H

#include <stddef.h>

#include "docgen.h"
#include "options.h"

/* The driver's own options (--count, --port, ...), NULL-name terminated. */
extern const struct ng_option ng_driver_options[];

/* The declaration of option @name: the driver's own (--count, --port, ...),
 * else a module's or pattern's (readers.h); NULL when unknown. */
const struct ng_option *ng_driver_find_option(const char *name);

/* -x, -p, ... and the long option each stands for. */
extern const struct ng_short_option ng_cmdline_short[];
extern const size_t ng_cmdline_nshort;

struct ng_args;

/* Declares every option: the driver's, then every registered module's and
 * pattern's (core/args.h).  Returns -1 on out-of-memory. */
int ng_cmdline_declare(struct ng_args *a);
/* Parses @argc/@argv (argv[0] is the program) into @a, declared with
 * ng_cmdline_declare(): options in any order, --name value, --name=value,
 * -x value, -xvalue; every value checked against its option's type and range.
 * On the first problem says it in one line (ng_error) and returns -1. */
int ng_cmdline_parse(struct ng_args *a, int argc, char **argv);

/* --help and --list on stdout. */
void ng_cmdline_help(void);
void ng_cmdline_list(void);

/* The names of the registered modules (@modules != 0) or patterns, ", "
 * separated, into @buf (truncated to @len). */
void ng_cmdline_names(char *buf, size_t len, int modules);

#endif
