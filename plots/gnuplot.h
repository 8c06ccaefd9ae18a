/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing gnuplot scripts (plots/gnuplot.c): the terminals, the line styles,
 * quoting text into a script, and the pieces a figure family's script is
 * made of: panels and series.  And writing one figure's files (its data and
 * its script), which calls the family's writers (figure.h).
 *
 * A family's .script writes, per panel it draws:
 *
 *     ng_gp_panel(g, "Latency", NG_UNIT_US);
 *     for (i = 0; i < g->n; i++)
 *             ng_gp_ci_series(g, i, 0, column, NULL, NULL);
 *     ng_gp_panel_end(g);
 *
 * and may add series of its own to the panel's plot command: ng_gp_next(g),
 * then the series' text into g->plot, ng_gp_title() (or " notitle").
 */
#ifndef NG_PLOT_GNUPLOT_H
#define NG_PLOT_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "load.h"

struct ng_figure; /* figure.h */

/* A gnuplot terminal, picked by the output's extension. */
struct ng_term {
	const char *ext;     /* file extension picking the terminal */
	const char *setting; /* "set terminal" line without the size */
	double per_inch;     /* size units per inch */
	const char *unit;    /* size unit suffix ("in" or "" for pixels) */
	bool tex;            /* text is typeset by LaTeX */
};

/* The terminal of @out by its extension (.pdf, .svg, .png, .tex, any
 * case), or NULL. */
const struct ng_term *ng_term_of(const char *out);

/* Line styles 1..NG_NSTYLES of every script (colour, dash, point type);
 * a panel takes them in turn (ng_gp_style()). */
#define NG_NSTYLES 8

/* The colour ("#rrggbb") of line style @style (1-based, taken modulo
 * NG_NSTYLES). */
const char *ng_gp_color(int style);

/* The unit of a panel's y axis. */
enum ng_unit { NG_UNIT_NONE, NG_UNIT_US, NG_UNIT_MBPS, NG_UNIT_PER_S };

/* One figure (one pattern group, or one part of it) being written. */
struct ng_fig {
	const struct ng_term *term;
	const struct ng_figure *desc;      /* the family drawing it */
	const char *sub;                   /* the part drawn (rma: the test), or NULL */
	const struct ng_plot_file **files; /* the group's files */
	size_t n;
	unsigned panels; /* NG_PANEL_* to draw */
	char *stem;      /* output path without extension */
	char **dat;      /* data file path per file */
	FILE *gp;        /* the script being written */
	FILE *plot;      /* the current panel's plot command */
	char *plot_buf;  /* ... its text (open_memstream) */
	size_t plot_len;
	int style;       /* next style of the current panel */
	int nseries;     /* series of the current plot command */
	int ntitled;     /* ... of them with a key entry */
	double ylo, yhi; /* positive data range of the panel */
};

/* Writes @s into a single-quoted gnuplot string: quotes doubled, control
 * characters as spaces, and with @tex the LaTeX specials escaped. */
void ng_gp_chars(FILE *f, const char *s, bool tex);
/* A quoted literal text (file names, fixed words: no LaTeX escaping). */
void ng_gp_quote(FILE *f, const char *s);

/*
 * Starts a panel: y label "NAME (UNIT)", log y axis (linear for a family
 * with an xname), key top left.  The series go to a buffer (g->plot) so
 * that ng_gp_panel_end() can first make room above the data for the key.
 */
void ng_gp_panel(struct ng_fig *g, const char *name, enum ng_unit u);
/* Starts the next series of the panel's plot command (in g->plot). */
void ng_gp_next(struct ng_fig *g);
/* Ends the panel: the key's head room, y tics, the plot command. */
void ng_gp_panel_end(struct ng_fig *g);

/* Widens the panel's y range (its tics and head room) by the positive
 * numbers of columns @col .. @col + @n - 1 of table @index of file @i's
 * data (already written). */
void ng_gp_range(struct ng_fig *g, size_t i, int index, int col, int n);
/* " title 'LABEL SUFFIX'" with the suffix given as plain text and as LaTeX
 * (@suffix_tex: the code's own text, never a file's; NULL: @suffix quoted). */
void ng_gp_title(struct ng_fig *g, const char *label, const char *suffix, const char *suffix_tex);
/* Takes the next line style of the panel (1-based for gnuplot). */
int ng_gp_style(struct ng_fig *g);

/*
 * Starts a series with the 95% CI as error bars (no title yet): data table
 * @index of file @i, value column @col, CI columns @col + 1 and @col + 2;
 * takes the next style.
 */
void ng_gp_ci_using(struct ng_fig *g, size_t i, int index, int col);
/* A series with CIs titled "LABEL SUFFIX" (ng_gp_title()). */
void ng_gp_ci_series(struct ng_fig *g, size_t i, int index, int col, const char *suffix,
                     const char *suffix_tex);
/* A series of plain values (lines and points, or points only) in @style,
 * titled "LABEL SUFFIX". */
void ng_gp_plain_series(struct ng_fig *g, size_t i, int index, int col, bool lines, int style,
                        const char *suffix, const char *suffix_tex);

/*
 * Writes figure @g's data files (g->dat, one per file: a header naming the
 * source, then the family's tables) and its script (g->stem + ".gp": the
 * preamble, the family's panels).  Returns NG_OK or NG_ERR_IO (reported).
 */
ng_status ng_fig_write(struct ng_fig *g);

#endif
