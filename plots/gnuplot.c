/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing gnuplot scripts (contract in gnuplot.h): terminals, line styles,
 * text, panels and series, and one figure's files (data and script, with the
 * preamble: terminal, styles, the size axis).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "figure.h"
#include "gnuplot.h"

/* ------------------------------------------------------------------------
 * Terminals, styles, text
 */

enum ng_term_id { NG_TERM_PDF, NG_TERM_SVG, NG_TERM_PNG, NG_TERM_TEX };

/* One panel is 5 x 3.5 inches with 12 pt text: at \columnwidth (about 3.3
 * inches) the text prints at 8 pt, the usual size for figure text. */
#define NG_PANEL_W 5.0
#define NG_PANEL_H 3.5

static const struct ng_term ng_terms[] = {
    [NG_TERM_PDF] = {".pdf", "pdfcairo noenhanced color font 'Sans,12' linewidth 1.5", 1, "in", false},
    [NG_TERM_SVG] = {".svg", "svg noenhanced font 'sans-serif,12' linewidth 1.5 background '#ffffff'", 100,
                     "", false},
    [NG_TERM_PNG] = {".png", "pngcairo noenhanced color font 'Sans,12' linewidth 1.5", 100, "", false},
    [NG_TERM_TEX] = {".tex", "cairolatex pdf color linewidth 1.5", 1, "in", true},
};

/*
 * Line styles: colour (Okabe-Ito, safe for colour-blind readers) and, for
 * black-and-white print, a dash type and a point type of their own; filled
 * and open markers alternate.
 */
struct ng_style {
	const char *color;
	const char *dash;
	int point;
};

static const struct ng_style ng_styles[] = {
    {"#000000", "1", 7},               /* solid, filled circle */
    {"#d55e00", "2", 4},               /* dashed, open square */
    {"#0072b2", "4", 9},               /* dash-dot, filled triangle */
    {"#009e73", "5", 12},              /* dash-dot-dot, open diamond */
    {"#cc79a7", "(12,5)", 5},          /* long dash, filled square */
    {"#e69f00", "(2,4)", 6},           /* dotted, open circle */
    {"#56b4e9", "(12,4,2,4,2,4)", 11}, /* dash-dot-dot long, filled inverted triangle */
    {"#666666", "(6,3)", 8},           /* short dash, open triangle */
};
_Static_assert(sizeof(ng_styles) / sizeof(ng_styles[0]) == NG_NSTYLES, "NG_NSTYLES counts ng_styles");

const struct ng_term *ng_term_of(const char *out)
{
	const char *dot = strrchr(out, '.');
	size_t i;

	if (!dot || strchr(dot, '/'))
		return NULL;
	for (i = 0; i < sizeof(ng_terms) / sizeof(ng_terms[0]); i++) {
		if (strcasecmp(dot, ng_terms[i].ext) == 0)
			return &ng_terms[i];
	}
	return NULL;
}

const char *ng_gp_color(int style)
{
	return ng_styles[(size_t)(style - 1) % NG_NSTYLES].color;
}

/* True for figures with linear axes (struct ng_figure's xname). */
static bool ng_fig_linear(const struct ng_fig *g)
{
	return g->desc->xname != NULL;
}

/* Writes @s into a single-quoted gnuplot string: quotes doubled, control
 * characters as spaces, and with @tex the LaTeX specials escaped. */
void ng_gp_chars(FILE *f, const char *s, bool tex)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f) {
			fputc(' ', f);
		} else if (c == '\'') {
			fputs("''", f);
		} else if (tex && strchr("&%$#_{}", c)) {
			fputc('\\', f);
			fputc(c, f);
		} else if (tex && c == '\\') {
			fputs("\\textbackslash{}", f);
		} else if (tex && c == '^') {
			fputs("\\^{}", f);
		} else if (tex && c == '~') {
			fputs("\\~{}", f);
		} else {
			fputc(c, f);
		}
	}
}

/* A quoted literal text (file names, fixed words: no LaTeX escaping). */
void ng_gp_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	ng_gp_chars(f, s, false);
	fputc('\'', f);
}

/* Writes the text of a unit for the terminal. */
static const char *ng_unit_text(const struct ng_fig *g, enum ng_unit u)
{
	switch (u) {
	case NG_UNIT_US:
		return g->term->tex ? "$\\mu$s" : NG_MICRO "s";
	case NG_UNIT_MBPS:
		return "MB/s";
	case NG_UNIT_PER_S:
		return "1/s";
	case NG_UNIT_NONE:
		break;
	}
	return NULL;
}

/*
 * Widens the panel's y range by the positive numbers of columns @col ..
 * @col + @n - 1 of table @index of file @i's data (already written; tables
 * are separated by two blank lines).
 */
void ng_gp_range(struct ng_fig *g, size_t i, int index, int col, int n)
{
	FILE *f = fopen(g->dat[i], "r");
	char *line = NULL, *tok, *save;
	int table = 0, blanks = 0, k;
	size_t cap = 0;
	double v;

	if (!f)
		return; /* only the tics suffer */
	while (getline(&line, &cap, f) >= 0) {
		if (line[0] == '\n') {
			if (++blanks == 2)
				table++;
			continue;
		}
		blanks = 0;
		if (line[0] == '#' || table != index)
			continue;
		for (k = 1, tok = strtok_r(line, " \t\n", &save); tok;
		     k++, tok = strtok_r(NULL, " \t\n", &save)) {
			if (k < col || k >= col + n)
				continue;
			v = strtod(tok, NULL);
			if (isfinite(v) && v > 0) {
				g->ylo = v < g->ylo ? v : g->ylo;
				g->yhi = v > g->yhi ? v : g->yhi;
			}
		}
	}
	free(line);
	fclose(f);
}

/*
 * Tics of the log y axis.  gnuplot labels only powers of ten, which leaves
 * a panel spanning less than a decade or two with one label or none; such
 * panels get labelled tics at 1, 2, 5 (or finer) times the powers of ten.
 */
static void ng_gp_ytics(struct ng_fig *g)
{
	static const double fine[] = {1, 1.5, 2, 3, 4, 5, 6, 8}, coarse[] = {1, 2, 5};
	const double *m;
	double decades;
	size_t nm, j;
	int e, first = 1;

	decades = g->yhi > 0 ? log10(g->yhi / g->ylo) : 99;
	if (decades >= 2.5) {
		fputs("set ytics autofreq\n", g->gp);
		return;
	}
	m = decades < 0.5 ? fine : coarse;
	nm = decades < 0.5 ? sizeof(fine) / sizeof(fine[0]) : sizeof(coarse) / sizeof(coarse[0]);
	fputs("set ytics (", g->gp);
	/* one decade beyond the data on either side: the key's head room */
	for (e = (int)floor(log10(g->ylo)) - 1; e <= (int)ceil(log10(g->yhi)) + 1; e++) {
		for (j = 0; j < nm; j++) {
			fprintf(g->gp, "%s'%g' %g", first ? "" : ", ", m[j] * pow(10, e), m[j] * pow(10, e));
			first = 0;
		}
	}
	fputs(")\n", g->gp);
}

/*
 * Starts a panel: y label "NAME (UNIT)", log y axis, key top left.  The
 * series go to a buffer (g->plot) so that ng_gp_panel_end() can first make
 * room above the data for the key: on a log y axis times grow to the right
 * and bandwidths level off at the top, so top left is empty only up to the
 * height of the key, whatever the data.
 */
void ng_gp_panel(struct ng_fig *g, const char *name, enum ng_unit u)
{
	const char *unit = ng_unit_text(g, u);

	fputs("set ylabel '", g->gp);
	ng_gp_chars(g->gp, name, g->term->tex);
	if (unit)
		fprintf(g->gp, " (%s)", unit);
	fputs(ng_fig_linear(g) ? "'\nunset logscale y\n" : "'\nset logscale y\n", g->gp);
	g->plot = open_memstream(&g->plot_buf, &g->plot_len);
	if (!g->plot) {
		ng_error("out of memory");
		abort();
	}
	g->style = 0;
	g->nseries = 0;
	g->ntitled = 0;
	g->ylo = INFINITY;
	g->yhi = 0;
}

/* Starts the next series of the panel's plot command. */
void ng_gp_next(struct ng_fig *g)
{
	fputs(g->nseries++ ? ", \\\n     " : "plot ", g->plot);
}

/*
 * Ends the panel: the head room for the key (a key line is about 8% of the
 * plot's height; the offset is in units of the data's own span), the plot
 * command, and the decorations forgotten.
 */
void ng_gp_panel_end(struct ng_fig *g)
{
	double key = 0.03 + 0.08 * g->ntitled;

	if (key > 0.7)
		key = 0.7;
	fclose(g->plot);
	g->plot = NULL;
	if (ng_fig_linear(g)) {
		/* x from 0: a margin so that no marker sits on the frame */
		fprintf(g->gp, "set offsets graph 0.02, graph 0.02, graph %.2f, graph 0.04\n",
		        key / (1 - key));
		fputs("set ytics autofreq\n", g->gp);
	} else {
		fprintf(g->gp, "set offsets 0, 0, graph %.2f, graph 0.04\n", key / (1 - key));
		ng_gp_ytics(g);
	}
	/* no value to draw (every one null): gnuplot cannot autoscale */
	if (!(g->yhi > 0))
		fputs("set yrange [1:10]\n", g->gp);
	fwrite(g->plot_buf, 1, g->plot_len, g->gp);
	if (!g->nseries)
		fputs("plot NaN notitle", g->gp);
	fputs("\nunset arrow\n", g->gp);
	if (!(g->yhi > 0))
		fputs("set autoscale y\n", g->gp);
	fputc('\n', g->gp);
	free(g->plot_buf);
	g->plot_buf = NULL;
}

/* "title 'LABEL SUFFIX'" with the suffix given as plain text and as LaTeX. */
void ng_gp_title(struct ng_fig *g, const char *label, const char *suffix, const char *suffix_tex)
{
	g->ntitled++;
	fputs(" title '", g->plot);
	ng_gp_chars(g->plot, label, g->term->tex);
	if (suffix && g->term->tex && suffix_tex) {
		fprintf(g->plot, " %s", suffix_tex); /* LaTeX of the code's own, never of a file */
	} else if (suffix) {
		fputc(' ', g->plot);
		ng_gp_chars(g->plot, suffix, g->term->tex);
	}
	fputs("'", g->plot);
}

/* Takes the next line style of the panel (1-based for gnuplot). */
int ng_gp_style(struct ng_fig *g)
{
	return (int)((size_t)g->style++ % NG_NSTYLES) + 1;
}

/*
 * Starts a series with the 95% CI as error bars (no title yet): data table
 * @index of file @i, value column @col, CI columns @col + 1 and @col + 2.
 * The bars are a plot element of their own, solid and thin, so that the
 * dashes of the line (and its key sample) stay as the style says; a missing
 * CI bound draws no bar rather than dropping the point.
 */
void ng_gp_ci_using(struct ng_fig *g, size_t i, int index, int col)
{
	int style = ng_gp_style(g);

	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
	fprintf(g->plot,
	        " index %d using 1:%d:(valid(%d) ? $%d : $%d):(valid(%d) ? $%d : $%d)"
	        " with yerrorbars ls %d dt solid lw 1 ps 0 notitle",
	        index, col, col + 1, col + 1, col, col + 2, col + 2, col, style);
	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
	fprintf(g->plot, " index %d using 1:%d with linespoints ls %d", index, col, style);
	ng_gp_range(g, i, index, col, 3);
}

/* A series with CIs titled "LABEL SUFFIX". */
void ng_gp_ci_series(struct ng_fig *g, size_t i, int index, int col, const char *suffix,
                     const char *suffix_tex)
{
	ng_gp_ci_using(g, i, index, col);
	ng_gp_title(g, g->files[i]->label, suffix, suffix_tex);
}

/* A series of plain values (lines and points, or points only). */
void ng_gp_plain_series(struct ng_fig *g, size_t i, int index, int col, bool lines, int style,
                        const char *suffix, const char *suffix_tex)
{
	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
	fprintf(g->plot, " index %d using 1:%d with %s ls %d", index, col, lines ? "linespoints" : "points",
	        style);
	ng_gp_range(g, i, index, col, 1);
	ng_gp_title(g, g->files[i]->label, suffix, suffix_tex);
}

/* ------------------------------------------------------------------------
 * Writing one figure
 */

static ng_status ng_close_checked(FILE *f, const char *path)
{
	bool bad = ferror(f);

	if (fclose(f) != 0 || bad) {
		ng_error("cannot write %s: %s", path, errno ? strerror(errno) : "write error");
		return NG_ERR_IO;
	}
	return NG_OK;
}

static ng_status ng_fig_write_data(struct ng_fig *g, size_t i)
{
	const struct ng_plot_file *pf = g->files[i];
	FILE *f = fopen(g->dat[i], "w");

	if (!f) {
		ng_error("cannot create %s: %s", g->dat[i], strerror(errno));
		return NG_ERR_IO;
	}
	fputs("# ngauge plot data from ", f);
	ng_gp_chars(f, pf->path, false);
	fputs("\n# module ", f);
	ng_gp_chars(f, pf->module, false);
	fputs(", pattern ", f);
	ng_gp_chars(f, pf->pattern, false);
	fprintf(f, ", %lld ranks%s\n# label: ", pf->ranks, pf->complete ? "" : ", incomplete run");
	ng_gp_chars(f, pf->label, false);
	fputs("\n# NaN: no value in the result file (null or absent)\n", f);
	if (g->desc->parts.key)
		g->desc->parts.data(f, pf, g->sub);
	else
		g->desc->data(f, pf);
	errno = 0;
	return ng_close_checked(f, g->dat[i]);
}

/* The smallest positive and the largest size of the group's rows (of its
 * part, g->sub) and of its pattern block's "sizes"; hi = 0 when there is
 * none. */
static void ng_fig_size_range(const struct ng_fig *g, double *lo_p, double *hi_p)
{
	const json_t *arrays[2], *el;
	size_t i, k, j;

	*lo_p = INFINITY;
	*hi_p = 0;
	for (i = 0; i < g->n; i++) {
		arrays[0] = g->files[i]->rows;
		arrays[1] = NULL;
		if (g->desc->block)
			arrays[1] =
			    json_object_get(json_object_get(g->files[i]->doc, g->desc->block), "sizes");
		for (k = 0; k < 2; k++) {
			json_array_foreach(arrays[k], j, el)
			{
				double s = ng_plot_num(el, "size");

				if (k == 0 && g->desc->parts.key &&
				    !ng_plot_row_is(el, g->desc->parts.key, g->sub))
					continue;
				if (s > 0 && s < *lo_p)
					*lo_p = s;
				if (s > *hi_p)
					*hi_p = s;
			}
		}
	}
}

/*
 * Size axis: log2, tics at powers of two labelled like the size lists of the
 * command line (1, 32, 1K, 1M), every 1, 2, 4, 5 or 10 binary orders so that
 * at most about 8 tics show, and a small margin so no marker is cut.
 */
static void ng_fig_xtics(struct ng_fig *g)
{
	static const int steps[] = {1, 2, 4, 5, 10};
	static const char *const prefix[] = {"", "K", "M", "G", "T", "P", "E"};
	double lo, hi;
	int e, e0, e_lo, e_hi, step = 10;
	size_t k;

	ng_fig_size_range(g, &lo, &hi);
	if (!(hi > 0))
		return;
	e_lo = (int)floor(log2(lo));
	e_hi = (int)ceil(log2(hi));
	for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		if ((e_hi - e_lo) / steps[k] <= 7) {
			step = steps[k];
			break;
		}
	}
	e0 = e_lo + (step - e_lo % step) % step; /* first multiple of step */
	fprintf(g->gp, "set xrange [%g:%g]\nset xtics (", lo / 1.25, hi * 1.25);
	for (e = e0; e <= e_hi && e < 70; e += step)
		fprintf(g->gp, "%s'%lld%s' %.17g", e == e0 ? "" : ", ", 1LL << (e % 10), prefix[e / 10],
		        ldexp(1, e));
	fputs(")\n", g->gp);
}

static void ng_fig_preamble(struct ng_fig *g, int npanels)
{
	FILE *f = g->gp;
	size_t i;

	fputs("# ngauge plot: pattern ", f);
	ng_gp_chars(f, g->files[0]->pattern, false);
	if (g->sub) {
		fputs(", test ", f);
		ng_gp_chars(f, g->sub, false);
	}
	fprintf(f, ", %zu result file%s\n", g->n, g->n > 1 ? "s" : "");
	for (i = 0; i < g->n; i++) {
		fputs("#   ", f);
		ng_gp_chars(f, g->files[i]->path, false);
		fputc('\n', f);
	}
	fputs("# Redo the figure with: cd THIS_DIRECTORY && gnuplot ", f);
	ng_gp_chars(f, ng_plot_basename(g->stem), false);
	fputs(".gp\n\n", f);
	fputs("set encoding utf8\n", f);
	fprintf(f, "set terminal %s size %g%s,%g%s\n", g->term->setting,
	        NG_PANEL_W * npanels * g->term->per_inch, g->term->unit, NG_PANEL_H * g->term->per_inch,
	        g->term->unit);
	fputs("set output '", f);
	ng_gp_chars(f, ng_plot_basename(g->stem), false);
	fprintf(f, "%s'\n\n", g->term->ext);
	for (i = 0; i < NG_NSTYLES; i++)
		fprintf(f, "set style line %zu lc rgb '%s' dt %s pt %d ps 0.8 lw 1.5\n", i + 1,
		        ng_styles[i].color, ng_styles[i].dash, ng_styles[i].point);
	if (ng_fig_linear(g)) {
		fputs("\nset autoscale xfix\n", f);
	} else {
		fputs("\nset logscale x 2\n", f);
		ng_fig_xtics(g);
	}
	fputs("set format y '%g'\n"
	      "set grid xtics ytics lc rgb '#dddddd' lw 0.5 dt 1\n"
	      "set key top left Left reverse noautotitle\n"
	      "set autoscale yfix\n"
	      "set bars small\n"
	      "set samples 1000\n",
	      f);
	if (ng_fig_linear(g)) {
		fputs("set xlabel '", f);
		ng_gp_chars(f, g->desc->xname, g->term->tex);
		fprintf(f, " (%s)'\n\n", ng_unit_text(g, NG_UNIT_US));
	} else {
		fputs("set xlabel 'Message size (bytes)'\n\n", f);
	}
	if (npanels > 1)
		fprintf(f, "set multiplot layout 1,%d\n\n", npanels);
}

ng_status ng_fig_write(struct ng_fig *g)
{
	char *path = ng_plot_xasprintf("%s.gp", g->stem);
	unsigned p;
	int npanels = 0;
	ng_status rc;
	size_t i;

	for (i = 0; i < g->n; i++) {
		rc = ng_fig_write_data(g, i);
		if (rc)
			goto out_free_path;
	}
	g->gp = fopen(path, "w");
	if (!g->gp) {
		ng_error("cannot create %s: %s", path, strerror(errno));
		rc = NG_ERR_IO;
		goto out_free_path;
	}
	for (p = g->panels; p; p &= p - 1)
		npanels++;
	ng_fig_preamble(g, npanels);
	g->desc->script(g);
	if (npanels > 1)
		fputs("unset multiplot\n", g->gp);
	errno = 0;
	rc = ng_close_checked(g->gp, path);
	g->gp = NULL;
out_free_path:
	free(path);
	return rc;
}
