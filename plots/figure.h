/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The contract of a figure family and the one registry of them
 * (plots/figures.c), which both `ngauge plot` and `ngauge report` read.
 *
 * A family is one file plots/fig_NAME.c holding one or more
 * `const struct ng_figure ng_figure_NAME` descriptors: the patterns each
 * draws, its panels, the data tables of one result file (plots/data.h), the
 * panels of the gnuplot script (plots/gnuplot.h), and the section it adds to
 * the report for a top-level block of the result file (plots/html.h).
 * Everything else (grouping files, names, terminals, styles, quoting,
 * running gnuplot, the report's page) is shared.
 *
 * Adding a pattern's figure: write plots/fig_NAME.c with its descriptor,
 * add the line X(NAME) to NG_FIGURE_LIST in plots/figures.c, and name the
 * file in plots/meson.build.  A pattern drawn like an existing family only
 * adds its name to that family's .patterns.
 */
#ifndef NG_PLOT_FIGURE_H
#define NG_PLOT_FIGURE_H

#include <stdio.h>

#include "load.h"

struct ng_fig; /* one figure being written (gnuplot.h) */

/* Panel bits; --kind selects among them (render.h). */
#define NG_PANEL_LAT  (1u << 0) /* times: --kind latency */
#define NG_PANEL_BW   (1u << 1) /* bandwidths: --kind bandwidth */
#define NG_PANEL_OVH  (1u << 2) /* overheads: --kind overhead */
#define NG_PANEL_MSG  (1u << 3) /* message rate: with --kind bandwidth */
#define NG_PANEL_CDF  (1u << 4) /* distribution, cumulative: --kind cdf (fig_dist.c) */
#define NG_PANEL_HIST (1u << 5) /* distribution, per bin: --kind hist (fig_dist.c) */
#define NG_PANEL_LOAD (1u << 6) /* latency against the achieved rate: --kind load (fig_load.c) */

struct ng_figure {
	/* The patterns drawn, NULL-terminated; NULL: every pattern no other
	 * figure draws (the generic figure, last in the registry). */
	const char *const *patterns;
	unsigned panels;   /* NG_PANEL_* it can draw */
	const char *block; /* top-level object with a "sizes" array it needs, or NULL */
	/* Optional: why file @pf cannot be drawn beyond @block (a phrase for
	 * the message that leaves it out, "no statistics in its rows"), or
	 * NULL when it can. */
	const char *(*check)(const struct ng_plot_file *pf);
	/* Writes the data tables of file @pf into @f (after the header the
	 * shared code writes), tables separated by two blank lines (gnuplot
	 * "index"; data.h); unused when drawn in parts. */
	void (*data)(FILE *f, const struct ng_plot_file *pf);
	/* Writes the panels g->panels selects into the script (gnuplot.h:
	 * ng_gp_panel(), series, ng_gp_panel_end()); the preamble (terminal,
	 * styles, x axis) is written before, "unset multiplot" after. */
	void (*script)(struct ng_fig *g);
	/* NULL: x is the message size (log2 axis, log y); else linear x and y
	 * axes, x labelled "XNAME (us)". */
	const char *xname;
	/* Drawn in parts, a figure each (rma: one per test): the rows name their
	 * part under @key; @panels gives a part's panels, @data writes one file's
	 * data of part @sub (in place of .data).  All NULL: one figure. */
	struct {
		const char *key;
		unsigned (*panels)(const char *sub);
		void (*data)(FILE *f, const struct ng_plot_file *pf, const char *sub);
	} parts;
	/* The report: the top-level object of a result file this family
	 * explains (shown in its own section, not under "Other data"), and the
	 * section, written into @f when the document's @block is an object.
	 * Sections follow the order of the registry.  Both NULL: none. */
	struct {
		const char *block;
		void (*section)(FILE *f, const json_t *block);
	} report;
};

/* The registry: every family, NULL-terminated, the generic figure last. */
extern const struct ng_figure *const ng_figures[];

/* The figure that draws @pattern (the generic one when no other does). */
const struct ng_figure *ng_figure_of(const char *pattern);

/* Why @pf cannot be drawn by @d (the block it needs, then d->check), as a
 * malloc'ed phrase; NULL when it can.  Reports nothing. */
char *ng_figure_check(const struct ng_figure *d, const struct ng_plot_file *pf);

#endif
