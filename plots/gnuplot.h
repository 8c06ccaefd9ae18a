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
#include "safefile.h"

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

/* One figure (one pattern group, or one part of it) being written.  The
 * family's writers read the first block and write through @gp and @plot;
 * the rest is gnuplot.c's bookkeeping. */
struct ng_fig {
	const struct ng_term *term;
	const struct ng_figure *desc;      /* the family drawing it */
	const char *sub;                   /* the part drawn (rma: the test), or NULL */
	const struct ng_plot_file **files; /* the group's files */
	size_t n;
	unsigned panels; /* NG_PANEL_* to draw */
	char *stem;      /* output path without extension */
	char **dat;      /* data file path per file */
	/* The files written (safefile.h): not in place until ng_fig_commit();
	 * ng_fig_close() removes what was not committed. */
	struct ng_safefile *datf;  /* per file: its data */
	struct ng_safefile script; /* stem + ".gp" */
	/* The legend text of each file's series: what tells them apart (its
	 * --label, else the module, design, scheduling, mode ... that differ
	 * between the files; legend.h), "" when nothing does.  And what they
	 * share, the figure's title (caption). */
	char **legend;
	char *caption;
	FILE *gp;        /* the current panel's settings (ng_gp_panel() .. ng_gp_panel_end()) */
	FILE *plot;      /* the current panel's plot command */
	int style;       /* next style of the current panel */
	int nseries;     /* series of the current plot command */
	int ntitled;     /* ... of them with a key entry */
	double ylo, yhi; /* positive data range of the panel (linear y: the finite range) */
	/* A fixed y range of the current panel on a linear axis ("[0:1]"), set
	 * by the family after ng_gp_panel(); NULL: from the data. */
	const char *yrange;

	/* gnuplot.c's own */
	char *plot_buf, *panel_buf, *body_buf, *name;
	size_t plot_len, panel_len, body_len;
	FILE *body;           /* the panels kept so far */
	size_t ndraw;         /* the panel's points that can be drawn */
	size_t nbad, nnox;    /* ... left out: a value <= 0 on a log axis; no x value */
	size_t keylen;        /* longest key entry of the panel (characters) */
	bool xlinear;         /* the panel has linear x (ng_gp_xlinear()) */
	int npanels, keyrows; /* panels kept, most key rows of one */
	bool xzero;           /* the size axis sets size 0 apart from the others */
	char *xaxis;          /* the size axis' settings */
	FILE *notes;          /* what was left out, "; "-separated */
	char *notes_buf;
	size_t notes_len;
	bool drawn;    /* the figure has a panel (ng_fig_write()) */
	size_t *fdraw; /* per file: its points drawn in the panels kept (ng_fig_write()) */
	size_t *pdraw; /* ... in the current panel */
};

/* Writes @s into a single-quoted gnuplot string: quotes doubled, control
 * characters as spaces, and with @tex the LaTeX specials escaped. */
void ng_gp_chars(FILE *f, const char *s, bool tex);
/* A quoted literal text (file names, fixed words: no LaTeX escaping). */
void ng_gp_quote(FILE *f, const char *s);

/*
 * Starts a panel: y label "NAME (UNIT)", log y axis (linear for a family
 * with an xname).  What the family writes to g->gp until ng_gp_panel_end()
 * belongs to this panel (a title, arrows, an x axis of its own: see
 * ng_gp_xlinear()); the series go to g->plot.
 */
void ng_gp_panel(struct ng_fig *g, const char *name, enum ng_unit u);
/* Gives the current panel a linear x axis of rank counts 1..@max labelled
 * @label (the size axis comes back for the next panel). */
void ng_gp_xlinear(struct ng_fig *g, const char *label, double max);
/* Starts the next series of the panel's plot command (in g->plot). */
void ng_gp_next(struct ng_fig *g);
/*
 * Ends the panel: its y range (from the data only: widened to the nearest
 * labelled tics of a log axis, never for the key, which sits below the
 * plot), tics, the plot command.  A panel with no point to draw (every value
 * missing, or 0 and below on a log axis) is left out of the figure, and
 * points left out of a panel that is drawn are counted: both are noted for
 * the figure's message (ng_fig_write()).
 */
void ng_gp_panel_end(struct ng_fig *g);

/* Says what the figure leaves out, and why, in the message that
 * ng_fig_write() hands on ("; "-separated): what a family knows of its
 * rows that the panels cannot tell. */
void ng_gp_note(struct ng_fig *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The x column of every data series: "(sx($1))", the size with size 0 at
 * its marked place on a log size axis (ng_fig_write()). */
#define NG_GP_X "(sx($1))"

/* Widens the panel's y range (its tics) by the numbers of columns @col ..
 * @col + @n - 1 of table @index of file @i's data (already written), and
 * counts the points of column @col that can be drawn (a finite x, and a
 * value above 0 on a log y axis). */
void ng_gp_range(struct ng_fig *g, size_t i, int index, int col, int n);
/* " title 'TEXT'" for the series just started, TEXT being "LABEL SUFFIX"
 * (@suffix as plain text, and as LaTeX in @suffix_tex: the code's own
 * text, never a file's; NULL: @suffix quoted); an empty @label gives the
 * suffix alone, an empty label and no suffix " notitle".  Long entries are
 * shortened (ending "...") so that the key stays within the figure. */
void ng_gp_title(struct ng_fig *g, const char *label, const char *suffix, const char *suffix_tex);
/* ng_gp_title() with file @i's legend: "LEGEND SUFFIX" after a --label,
 * "LEGEND, SUFFIX" after a legend of facets, "SUFFIX" after an empty one. */
void ng_gp_legend(struct ng_fig *g, size_t i, const char *suffix, const char *suffix_tex);
/* Takes the next line style of the panel (1-based for gnuplot). */
int ng_gp_style(struct ng_fig *g);

/*
 * Starts a series with the 95% CI as error bars (no title yet): data table
 * @index of file @i, value column @col, CI columns @col + 1 and @col + 2;
 * takes the next style.
 */
void ng_gp_ci_using(struct ng_fig *g, size_t i, int index, int col);
/* A series with CIs, titled by ng_gp_legend(). */
void ng_gp_ci_series(struct ng_fig *g, size_t i, int index, int col, const char *suffix,
                     const char *suffix_tex);
/* A series of plain values (lines and points, or points only) in @style,
 * titled by ng_gp_legend(). */
void ng_gp_plain_series(struct ng_fig *g, size_t i, int index, int col, bool lines, int style,
                        const char *suffix, const char *suffix_tex);

/*
 * Writes figure @g's data files (g->dat, one per file: a header naming the
 * source, then the family's tables) and its script (g->stem + ".gp": the
 * preamble, with the size axis and the title, then the panels kept), and
 * sets g->drawn when a panel was kept.  The files are temporaries beside
 * their names (g->datf, g->script; safefile.h) until ng_fig_commit().  What
 * was left out (panels, points) is described in *notes_p (malloc'ed, "; "-
 * separated; NULL: nothing); g->fdraw counts each file's points drawn
 * (allocated here, freed by the caller).
 * Returns NG_OK or NG_ERR_IO (reported); a figure with no panel to draw
 * is no error (g->drawn false: no script is written, no data kept).
 */
ng_status ng_fig_write(struct ng_fig *g, char **notes_p);

/* Puts a drawn figure's data files and script in place (renamed over their
 * names).  The script stays open: g->script.fd is the very file written,
 * whatever its name becomes.  Returns NG_OK or NG_ERR_IO (reported; what
 * was not committed is removed by ng_fig_close()). */
ng_status ng_fig_commit(struct ng_fig *g);

/* Closes the figure's files, removing those not committed, and frees
 * g->datf.  Safe on a figure never written. */
void ng_fig_close(struct ng_fig *g);

#endif
