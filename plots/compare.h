/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `ngauge compare A.json B.json [C.json ...]` (plots/compare.c): is B slower
 * than A, by how much, with what confidence.  The user's contract is in
 * doc/compare.md; plot.h has the entry point (ng_compare_main).
 *
 * Rows are paired by their identity: the size, and the row's test, sync,
 * algorithm, mode and side where the pattern has them.  The measure is the
 * first statistics key of A's rows (the table's main column: latency_us for
 * pingpong); for each pair, the ratio of medians B/A with its 95% interval:
 * a percentile bootstrap from the raw samples when both rows have them
 * ("bootstrap"), else from the rows' reported intervals of the median on a
 * log scale ("reported-ci"); the Mann-Whitney rank test's two-sided p-value
 * where samples are there.  The verdict at threshold t: for a time (lower is
 * better), "slower" when the ratio exceeds 1 + t and its interval lies above
 * 1, "faster" when the ratio is below 1 / (1 + t) and its interval below 1,
 * else "same"; a rate or bandwidth the other way round.
 */
#ifndef NG_PLOT_COMPARE_H
#define NG_PLOT_COMPARE_H

#include <stdio.h>

#include "load.h"

/* A comparison of files[1..n-1] against files[0]. */
struct ng_cmp;

/*
 * Compares labelled, checked files (files[0] the baseline) at @threshold
 * (a fraction: 0.05 is 5%).  Files that cannot be compared (another
 * pattern, no row in common, no statistics) are said in one line each
 * ("compare: B.json: ..."), with @cmd as the prefix (NULL: say nothing), and make it return
 * NG_ERR_PROTO (nothing in *c_p); else NG_OK.  The files must outlive the
 * comparison.
 */
ng_status ng_compare_new(const struct ng_plot_file *files, size_t n, double threshold, const char *cmd,
                         struct ng_cmp **c_p);
/* What ng_compare_groups() is asked for. */
struct ng_cmp_opts {
	double threshold;               /* a fraction: 0.05 is 5% */
	const struct ng_plot_file *cal; /* --calibrate: a file of several runs of the command, or NULL */
};

/*
 * As ng_compare_new(), with the files in sides: file i belongs to side
 * group[i] (non-decreasing, from 0, the baseline); every other side is
 * compared with side 0.  A side's runs are its files, or each file's
 * "repeat" blocks (ngauge --repeat); with several runs on a side the
 * interval is the hierarchical bootstrap's (compare_runs.h).
 */
ng_status ng_compare_groups(const struct ng_plot_file *files, size_t n, const size_t *group,
                            const struct ng_cmp_opts *o, const char *cmd, struct ng_cmp **c_p);

/* How many rows rest on one run on a side (between-run variance unknown). */
size_t ng_compare_single(const struct ng_cmp *c);

void ng_compare_free(struct ng_cmp *c);

/* Whether some row of the comparison is "slower". */
bool ng_compare_slower(const struct ng_cmp *c);

/* The comparison's section of the report: the manifests' differences and a
 * table per compared file (html.h). */
void ng_compare_html(FILE *f, const struct ng_cmp *c);

/*
 * The comparison as result files of the pseudo-pattern "compare" (the
 * figure family fig_compare.c draws them: the ratio with its interval
 * against the size, one series per compared file, the 1.0 line and the
 * threshold band), labelled "B vs A".  Owned by @c; *n_p of them.
 */
const struct ng_plot_file *ng_compare_figure_files(const struct ng_cmp *c, size_t *n_p);

/* The settings of the commands compare and ab (compare_cmd.c). */
struct ng_cmp_cli {
	const char *cmd;       /* "compare", "ab": the prefix of its messages */
	double threshold;      /* percent */
	const char *out, *fig; /* -o, --plot, or NULL */
	const char *cal;       /* --calibrate FILE, or NULL */
	bool single_run;       /* --single-run */
	const char **labels;   /* --label, nl of them */
	size_t nl;
	const json_t *ab; /* ngauge ab: the record of its rounds (in -o's JSON as "ab"), or NULL */
};

/* One of compare's options at argv[*i] (and its value: *i moves on): 1
 * taken, 0 not one of compare's, -1 a bad value (said in one line). */
int ng_compare_option(struct ng_cmp_cli *cli, int argc, char **argv, int *i);

/* The command over the @n files @paths in sides @group (as
 * ng_compare_groups()): the table on stdout, -o, --plot, and the exit
 * status (0 same, 3 slower, 2 refused, 1 an output not written). */
int ng_compare_run(const struct ng_cmp_cli *cli, const char *const *paths, const size_t *group, size_t n);

#endif
