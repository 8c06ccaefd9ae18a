/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The comparison's insides, shared by its computation (compare.c) and its
 * output and commands (compare_cmd.c): nothing else includes this.
 */
#ifndef NG_PLOT_COMPARE_PRIV_H
#define NG_PLOT_COMPARE_PRIV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "compare.h"

#define NG_CMP_MAXDIFFS 40

/* The keys that, with the size, name a row. */
extern const char *const ng_cmp_ident[];

struct ng_cmp_row {
	const json_t *a, *b; /* the row in the first run of each side */
	char id[200];
	double size;
	double ma, mb, ratio, lo, hi, p; /* p: NaN without samples */
	size_t na, nb;                   /* runs of each side */
	double cva, cvb;                 /* spread of each side's run medians (log sd, %); NaN with one run */
	double widen;        /* --calibrate: how much wider the interval became; NaN: not widened */
	const char *method;  /* "hierarchical", "bootstrap", "reported-ci", "medians" */
	const char *verdict; /* "slower", "faster", "same" */
};

struct ng_cmp_pair {
	const struct ng_plot_file *a, *b;   /* the first file of each side */
	const struct ng_plot_file *fa, *fb; /* each side's files (consecutive), nfa and nfb of them */
	size_t nfa, nfb;
	struct ng_cmp_row *rows;
	size_t n;
	char **diffs; /* "what: A vs B" */
	size_t ndiffs, nmore;
};

struct ng_cmp {
	double threshold;
	const struct ng_plot_file *cal; /* --calibrate's file, or NULL */
	size_t cal_runs;                /* its runs */
	double cal_sd_max;              /* the largest spread (log sd) of its rows */
	size_t nsingle;                 /* rows with one run on a side */
	const char *metric;
	bool lower_better;
	double res; /* the coarser timer resolution of the two files, in the measure's unit; 0: not a time */
	struct ng_cmp_pair *pairs;
	size_t npairs;
	struct ng_plot_file *fig;
	size_t nfig;
};

/* The row's identity without its size, for the table ("test=put sync=fence"). */
const char *ng_cmp_id_rest(const char *id);
/* A number, or null when it is not finite. */
json_t *ng_cmp_num_or_null(double v);

#endif
