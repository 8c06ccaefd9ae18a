/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What plot.c offers report.c: loading and checking result files, labels,
 * finding gnuplot, and drawing figures.  The user-visible contract (file
 * names, figures, messages) is in plot.h.
 */
#ifndef NG_PLOT_PRIV_H
#define NG_PLOT_PRIV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "status.h"

#define NG_PLOT_SCHEMA "ngauge-result/1"
#define NG_MICRO       "\xc2\xb5" /* U+00B5 MICRO SIGN in UTF-8 */

/* Which panels to draw (plot.h, --kind). */
enum ng_plot_kind {
	NG_PLOT_KIND_AUTO,
	NG_PLOT_KIND_LATENCY,
	NG_PLOT_KIND_BANDWIDTH,
	NG_PLOT_KIND_OVERHEAD,
};

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
	char *label;         /* owned; legend text, NULL until ng_plot_labels() */
};

/*
 * Reads @path and checks it (schema, pattern, results).  On failure reports
 * one line naming the file and returns NG_ERR_IO (unreadable, invalid JSON)
 * or NG_ERR_PROTO (not an ngauge result); *f_p is then left empty.
 */
ng_status ng_plot_file_load(const char *path, struct ng_plot_file *f_p);
/* Drops the document and the label; @f may be empty or already released. */
void ng_plot_file_release(struct ng_plot_file *f);

/*
 * Gives each file a label: user[i] for i < nuser (copied), else the default
 * "MODULE PATTERN", made unique within its pattern as plot.h says; the
 * label of an oversubscribed run ends with " (oversubscribed)".  Returns
 * NG_OK or NG_ERR_NOMEM (reported).
 */
ng_status ng_plot_labels(struct ng_plot_file *files, size_t n, const char *const *user, size_t nuser);

/* The gnuplot to run (plot.h), as a malloc'ed path, or NULL when none is
 * found.  Reports nothing: the caller decides whether that is an error. */
char *ng_plot_find_gnuplot(void);

struct ng_plot_req {
	const char *out; /* figure path; its extension picks the terminal */
	enum ng_plot_kind kind;
	const char *gnuplot; /* NULL: write scripts and data, run nothing */
	bool quiet;          /* true: do not list the figures on stdout */
	/* Optional: called with the path of every figure drawn, in order (a
	 * pattern drawn in parts, rma, gives several for one group). */
	void (*made)(void *data, const char *path);
	void *made_data;
};

/*
 * Writes data, scripts and (when req->gnuplot) figures for @files, grouped by
 * pattern as plot.h says.  Returns NG_OK, NG_ERR_USAGE (bad extension, a
 * --kind with no panel for some group; nothing written), NG_ERR_IO (a file
 * could not be written) or NG_ERR_SYS (gnuplot failed); every error is
 * reported.  The files need labels.
 */
ng_status ng_plot_render(const struct ng_plot_file *files, size_t n, const struct ng_plot_req *req);

/* The shortest text that reads back as @v ("%.15g" .. "%.17g"); "NaN" for a
 * non-finite value.  @buf holds at least 32 bytes. */
void ng_plot_fmt_exact(char *buf, size_t len, double v);

/* The number under @key of object @o (integer or real), else NaN. */
double ng_plot_num(const json_t *o, const char *key);

/* A word of a result file (pattern, module, a row's test, sync, side,
 * algorithm): 1 to 64 letters, digits or "_.+:;-".  ng_plot_file_load()
 * refuses a file with any other, so everything it hands on is safe in file
 * names, gnuplot scripts and HTML. */
bool ng_plot_is_word(const char *s);

/* Statistics object: has a numeric "median". */
bool ng_plot_is_stats(const json_t *v);
/* Parameter object {"value": x|null, ...}. */
bool ng_plot_is_param(const json_t *v);
/* "ci95": [lo, hi] of @o into lo/hi (NaN when absent or malformed). */
void ng_plot_ci(const json_t *o, double *lo_p, double *hi_p);

/* ---- the command lines of plot and report ------------------------------ */

/* What ng_plot_cmdline() needs and finds. */
struct ng_plot_cmdline {
	void (*usage)(FILE *f); /* --help */
	const char *out_what;   /* how "-o needs ..." names the missing value */
	/* The command's own option at argv[*i], advancing *i past its value:
	 * returns 1 when taken, 0 when it is not one of them, -1 after an error
	 * (reported).  NULL: none. */
	int (*own)(void *own_data, int argc, char **argv, int *i);
	void *own_data;
	char **paths;    /* [argc], from the caller: receives the FILEs (borrowed from argv) */
	size_t npaths;   /* 0 before */
	const char *out; /* -o, --output OUT; NULL before and when not given */
};

/*
 * Parses the command line of plot or report (argv[0] is the command's name):
 * FILEs (every word after "--", "-", and words not starting with '-'),
 * -h/--help (prints @usage on stdout), -o/--output OUT ("-oOUT",
 * "--output=OUT" too) and the command's own options.  Returns -1 to go on
 * (at least one FILE), else the exit status: 0 after --help, 2 after a usage
 * error (reported: "CMD: unknown option X", "CMD: no result file given", a
 * missing value).
 */
int ng_plot_cmdline(struct ng_plot_cmdline *cl, int argc, char **argv);

/* The default output's stem: the length of @file without a final ".json"
 * (print it with "%.*s" and append the output's extension). */
int ng_plot_stem_len(const char *file);

#endif
