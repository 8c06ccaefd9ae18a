/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * From checked result files to figures (plots/render.c), for plot and
 * report: grouping the files by pattern, the figure of each group from the
 * registry (figure.h), the parts of a pattern drawn in parts, the names of
 * the outputs, and running gnuplot.  The user-visible contract (file names,
 * figures, messages) is in plot.h.
 */
#ifndef NG_PLOT_RENDER_H
#define NG_PLOT_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "load.h"

/* Which panels to draw (plot.h, --kind). */
enum ng_plot_kind {
	NG_PLOT_KIND_AUTO,
	NG_PLOT_KIND_LATENCY,
	NG_PLOT_KIND_BANDWIDTH,
	NG_PLOT_KIND_OVERHEAD,
	/* the distribution per size of any pattern (the "distribution"
	 * figure, plots/fig_dist.c), in place of the pattern's figure */
	NG_PLOT_KIND_CDF,
	NG_PLOT_KIND_HIST,
	/* the latency-throughput curve of open-loop runs (plots/fig_load.c), in
	 * place of the pattern's figure */
	NG_PLOT_KIND_LOAD,
};

/* The kind named @word ("auto", "latency", "bandwidth", "overhead", "cdf", "hist", "load") into
 * *kind_p; false (nothing reported) for any other word. */
bool ng_plot_kind_of(const char *word, enum ng_plot_kind *kind_p);

/* @name itself when it holds a '/' (and is an executable file), else the
 * first executable @name in $PATH; malloc'ed, or NULL. */
char *ng_plot_which(const char *name);

/* The gnuplot to run (plot.h), as a malloc'ed path, or NULL when none is
 * found.  Reports nothing: the caller decides whether that is an error. */
char *ng_plot_find_gnuplot(void);

struct ng_plot_req {
	const char *cmd; /* "plot" or "report": the first word of its messages */
	const char *out; /* figure path; its extension picks the terminal */
	enum ng_plot_kind kind;
	const char *gnuplot; /* NULL: write scripts and data, run nothing */
	bool quiet;          /* true: do not list the figures on stdout */
	/* false (plot): a file the figure cannot draw at all (a block it needs,
	 * statistics, a part's name in its rows) stops everything before
	 * anything is written; true (report): the others are drawn. */
	bool keep_going;
	/* Optional: called with the path of every figure drawn, in order (a
	 * pattern drawn in parts, rma, gives several for one group). */
	void (*made)(void *data, const char *path);
	void *made_data;
	/* Optional: receives each message on what was left out (below) in
	 * place of its line on stderr, without the "CMD: " prefix; @file is
	 * true for a file left out entirely. */
	void (*note)(void *data, const char *text, bool file);
	void *note_data;
};

/*
 * Writes data, scripts and (when req->gnuplot) figures for @files, grouped by
 * pattern as plot.h says, and draws what can be drawn:
 *  - a file its figure cannot draw (a block it needs, statistics, a part's
 *    name in its rows), or of whose rows no point can be drawn, is left out:
 *    "CMD: FILE: not drawn: WHY" (an error line); without req->keep_going
 *    the first kind stops the command before anything is written;
 *  - a figure or panel with nothing to draw, and the points a panel leaves
 *    out (0 and below on a log axis, no x value), are said in a warning line
 *    per figure, "CMD: FILE[, test PART]: left out: WHAT" (none for a figure
 *    whose files are all left out: their error says it).
 * Returns NG_OK when every file is in a figure drawn; NG_ERR_PROTO when a
 * file was left out (the others drawn); NG_ERR_USAGE (bad extension, a
 * --kind with no panel for some group; nothing written), NG_ERR_IO (a file
 * could not be written) or NG_ERR_SYS (gnuplot failed: one line, the
 * script and gnuplot's first complaint); every error is reported.  The files
 * need labels.
 */
ng_status ng_plot_render(const struct ng_plot_file *files, size_t n, const struct ng_plot_req *req);

#endif
