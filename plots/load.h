/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Result files for plot and report (the floor of plots/): loading and
 * checking "ngauge-result/1" files, which are untrusted input; reading their
 * numbers, statistics and parameters; the legend labels; and the small
 * helpers every file of plots/ uses.  The user-visible contract (messages,
 * exit statuses) is in plot.h.
 */
#ifndef NG_PLOT_LOAD_H
#define NG_PLOT_LOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#define NG_PLOT_SCHEMA "ngauge-result/1"
#define NG_MICRO       "\xc2\xb5" /* U+00B5 MICRO SIGN in UTF-8 */

/* One checked result file.  Every pointer but @label and @doc is borrowed
 * from @doc. */
struct ng_plot_file {
	const char *path;    /* as given on the command line (borrowed) */
	json_t *doc;         /* owned reference */
	const char *module;  /* "?" when absent */
	const char *pattern; /* always a string */
	long long ranks;     /* 0 when absent */
	bool complete;       /* "complete": true, or no "complete" key */
	bool oversubscribed; /* env "oversubscribed": true (busy-polling ranks outnumbered the cores) */
	json_t *rows;        /* "results", a non-empty array of objects with a numeric "size" */
	char
	    *label; /* owned; the file's name in the report and the data files, NULL until ng_plot_labels() */
	const char *user; /* its --label (borrowed), or NULL; set by ng_plot_labels() */
};

/*
 * Reads @path and checks it (schema, pattern, results, and that every word
 * of it is one: ng_plot_is_word()).  On failure reports one line starting
 * with @cmd ("plot", "report") and the file's name and returns NG_ERR_IO
 * (unreadable, invalid JSON) or NG_ERR_PROTO (not an ngauge result, or a
 * field that is not a word); *f_p is then left empty.  plot and report
 * both exit 1 on either.
 */
ng_status ng_plot_file_load(const char *cmd, const char *path, struct ng_plot_file *f_p);
/* Drops the document and the label; @f may be empty or already released. */
void ng_plot_file_release(struct ng_plot_file *f);

/*
 * Gives each file a label: user[i] for i < nuser (copied, and kept in
 * @user), else the default "MODULE PATTERN", made unique within its pattern
 * by the rank count, then by the file name; the label of an oversubscribed
 * run ends with " (oversubscribed)".  The legends of a figure are made from
 * the files it draws (legend.h).  Returns NG_OK or NG_ERR_NOMEM (reported).
 */
ng_status ng_plot_labels(struct ng_plot_file *files, size_t n, const char *const *user, size_t nuser);

/* The validity warnings of @pf's run (its "warnings" entries that are
 * objects with a string "kind"), but "oversubscribed", which has a mark of
 * its own. */
size_t ng_plot_warnings(const struct ng_plot_file *pf);

/* A word of a result file (pattern, module, a row's test, sync, side,
 * algorithm): 1 to 64 letters, digits or "_.+:;-".  ng_plot_file_load()
 * refuses a file with any other, so everything it hands on is safe in file
 * names, gnuplot scripts and HTML. */
bool ng_plot_is_word(const char *s);

/* The shortest text that reads back as @v ("%.15g" .. "%.17g"); "NaN" for a
 * non-finite value.  @buf holds at least 32 bytes. */
void ng_plot_fmt_exact(char *buf, size_t len, double v);

/* A size for a legend: "8 B", "64 KiB", "2 MiB", in the largest of these
 * units that divides it exactly. */
void ng_plot_size_words(char *buf, size_t len, double size);

/* The number under @key of object @o (integer or real), else NaN. */
double ng_plot_num(const json_t *o, const char *key);
/* Whether the string under @key of object @o is @want. */
bool ng_plot_row_is(const json_t *o, const char *key, const char *want);
/* Statistics object: has a numeric "median". */
bool ng_plot_is_stats(const json_t *v);
/* Parameter object {"value": x|null, ...}. */
bool ng_plot_is_param(const json_t *v);
/* "ci95": [lo, hi] of @o into lo/hi (NaN when absent or malformed). */
void ng_plot_ci(const json_t *o, double *lo_p, double *hi_p);
/* The interval a table prints: "ci95_total" (the sampling interval widened
 * by the systematic bounds, doc/result-format.md) where @o has one, else
 * "ci95"; as ng_plot_ci. */
void ng_plot_ci_total(const json_t *o, double *lo_p, double *hi_p);
/* The first key of the first row holding statistics: the main column of the
 * table (core/results.h), or NULL when no row has statistics.  Borrowed. */
const char *ng_plot_first_stats_key(const struct ng_plot_file *pf);

/* asprintf and calloc (of at least one element) that report and abort on
 * out-of-memory, like the rest of ngauge's small bookkeeping allocations
 * (core/results.c).  Free the result. */
char *ng_plot_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *ng_plot_xcalloc(size_t n, size_t size);
/* The part of @path after its last '/' (borrowed from @path). */
const char *ng_plot_basename(const char *path);
/* Whether output name @path is free of control characters (bytes below
 * 0x20, 0x7f: safefile.h); when not, says so in one line, "CMD: WHAT: the
 * file name has a control character (byte 0x0a at offset 5)", naming the
 * option @what ("-o"), and the caller exits with status 2. */
bool ng_plot_name_ok(const char *cmd, const char *what, const char *path);

#endif
