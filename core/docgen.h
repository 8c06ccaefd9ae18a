/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The man page ngauge(1) and the shell completions, generated from the same
 * option tables and registry that drive --help and --list (ngauge --man,
 * ngauge --completion bash|zsh; meson builds and installs their output), so
 * that they cannot drift from the program.
 */
#ifndef NG_DOCGEN_H
#define NG_DOCGEN_H

#include <stdio.h>

#include "options.h"

/* The core options' short forms: @c for --@name ('x' for "module"). */
struct ng_short_option {
	char c;
	const char *name;
};

/* What the generators describe: the core options (NULL-name terminated),
 * their short forms (@nshort of them), the subcommands (NULL terminated,
 * e.g. "plot", "report"). */
struct ng_docgen {
	const struct ng_option *core;
	const struct ng_short_option *shorts;
	size_t nshort;
	const char *const *subcommands;
};

/* Writes the man page (roff, man(7) macros) to @f. */
void ng_docgen_man(FILE *f, const struct ng_docgen *d);

/* Writes the completion script of @shell ("bash" or "zsh") to @f; returns -1
 * (nothing written) for another shell. */
int ng_docgen_completion(FILE *f, const struct ng_docgen *d, const char *shell);

#endif
