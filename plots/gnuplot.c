/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing gnuplot scripts (contract in gnuplot.h): terminals, line styles,
 * text, panels and series, and one figure's files (data and script, with the
 * preamble: terminal, styles, the size axis).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "figure.h"
#include "gnuplot.h"

/* ------------------------------------------------------------------------
 * Terminals, styles, text
 */

enum ng_term_id { NG_TERM_PDF, NG_TERM_SVG, NG_TERM_PNG, NG_TERM_TEX };

/* One panel is 5 x 3.5 inches with 12 pt text: at \columnwidth (about 3.3
 * inches) the text prints at 8 pt, the usual size for figure text.  The
 * key sits below the plot, a row of NG_KEY_ROW_H inches each (the figure
 * grows by them, the plot keeps its size), entries of at most NG_KEY_MAX
 * characters (about 0.1 inch each at 12 pt: the panel's width less the
 * line sample), two columns when they are short. */
#define NG_PANEL_W   5.0
#define NG_PANEL_H   3.5
#define NG_KEY_ROW_H 0.21
#define NG_KEY_MAX   42
#define NG_KEY_SHORT 19
/* The x axis' tic labels and label below the plot, in character heights. */
#define NG_XAXIS_CHARS 3.3

static const struct ng_term ng_terms[] = {
    [NG_TERM_PDF] = {".pdf", "pdfcairo noenhanced color font 'Sans,12' linewidth 1.5", 1, "in", false},
    [NG_TERM_SVG] = {".svg", "svg noenhanced font 'sans-serif,12' linewidth 1.5 background '#ffffff'", 100,
                     "", false},
    /* 240 pixels per inch: 1200 pixels a panel, the text and lines scaled alike */
    [NG_TERM_PNG] = {".png",
                     "pngcairo noenhanced color font 'Sans,12' fontscale 2.4 linewidth 3.6 pointscale 2.4",
                     240, "", false},
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

/* A memory stream for the script's pieces (aborts on out-of-memory, like
 * the rest of the plots' bookkeeping). */
static FILE *ng_memstream(char **buf_p, size_t *len_p)
{
	FILE *f = open_memstream(buf_p, len_p);

	if (!f) {
		ng_error("out of memory");
		abort();
	}
	return f;
}

/* The characters (UTF-8 code points) of @s. */
static size_t ng_text_len(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The first @max characters of @s (@s itself when shorter), ending in
 * "..." when cut, malloc'ed. */
static char *ng_text_cut(const char *s, size_t max)
{
	size_t n = 0, b;

	if (ng_text_len(s) <= max)
		return ng_plot_xasprintf("%s", s);
	for (b = 0; s[b] && n < max - 3; b++)
		n += ((unsigned char)s[b] & 0xc0) != 0x80;
	while (((unsigned char)s[b] & 0xc0) == 0x80)
		b++; /* the rest of the last character */
	return ng_plot_xasprintf("%.*s...", (int)b, s);
}

/* A tic label: the number in plain digits, never an exponent (20000000,
 * 1.5, 0.005). */
static void ng_fmt_tic(char *buf, size_t len, double v)
{
	char *end;
	int dec;

	if (v >= 1 && (v == floor(v) || v >= 1e15)) {
		snprintf(buf, len, "%.0f", v);
	} else if (v >= 1) {
		snprintf(buf, len, "%.10g", v);
	} else {
		dec = v > 0 ? (int)ceil(-log10(v)) + 3 : 1;
		snprintf(buf, len, "%.*f", dec < 20 ? dec : 20, v);
		end = buf + strlen(buf) - 1;
		while (end > buf && *end == '0')
			*end-- = '\0';
		if (*end == '.')
			*end = '\0';
	}
}

/* Adds a note on what the figure leaves out ("; "-separated). */
void ng_gp_note(struct ng_fig *g, const char *fmt, ...)
{
	va_list ap;

	if (g->notes_len)
		fputs("; ", g->notes);
	va_start(ap, fmt);
	vfprintf(g->notes, fmt, ap);
	va_end(ap);
	fflush(g->notes);
}

/*
 * Widens the panel's y range by the numbers of columns @col .. @col + @n - 1
 * of table @index of file @i's data (already written; tables are separated
 * by two blank lines), and counts the points of column @col: drawn (a
 * finite x, at least 0 on a size axis, and a finite value, above 0 on a log
 * y axis), or left out for the value or for the x; a row without a value
 * (null in the file) is no point.
 */
void ng_gp_range(struct ng_fig *g, size_t i, int index, int col, int n)
{
	bool logy = !ng_fig_linear(g), xlin = ng_fig_linear(g) || g->xlinear;
	FILE *f = NULL;
	char *line = NULL, *tok, *save;
	int table = 0, blanks = 0, k;
	double x, y, v, lo, hi;
	size_t cap = 0;
	int fd = g->datf && g->datf[i].path ? dup(g->datf[i].fd) : -1;

	/* the file just written (flushed, its stream done with), through its
	 * descriptor: read from the start, left at its end */
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) == 0)
		f = fdopen(fd, "r");
	if (!f) {
		if (fd >= 0)
			close(fd);
		return; /* not drawn: the panel is left out if nothing else is */
	}
	while (getline(&line, &cap, f) >= 0) {
		if (line[0] == '\n') {
			if (++blanks == 2)
				table++;
			continue;
		}
		blanks = 0;
		if (line[0] == '#' || table != index)
			continue;
		x = y = NAN;
		lo = INFINITY;
		hi = -INFINITY;
		for (k = 1, tok = strtok_r(line, " \t\n", &save); tok;
		     k++, tok = strtok_r(NULL, " \t\n", &save)) {
			v = strtod(tok, NULL);
			if (k == 1)
				x = v;
			if (k < col || k >= col + n)
				continue;
			if (k == col)
				y = v;
			if (isfinite(v) && (!logy || v > 0)) {
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		}
		if (!isfinite(y))
			continue;
		if (!isfinite(x) || (!xlin && x < 0)) {
			g->nnox++;
		} else if (logy && y <= 0) {
			g->nbad++;
		} else {
			g->ndraw++;
			g->pdraw[i]++;
			g->ylo = lo < g->ylo ? lo : g->ylo;
			g->yhi = hi > g->yhi ? hi : g->yhi;
		}
	}
	free(line);
	fclose(f);
	lseek(g->datf[i].fd, 0, SEEK_END);
}

/* @m times 10 to the @e, as near as a double gets (0.3, not 3 x 0.1). */
static double ng_tic_at(double m, int e)
{
	return e >= 0 ? m * pow(10, e) : m / pow(10, -e);
}

/* " 'LABEL' V" (a labelled tic) or " '' V 1" (a minor one) of a tic list. */
static void ng_tic_put(FILE *f, int *first, double v, bool major)
{
	char label[64], at[40];

	ng_plot_fmt_exact(at, sizeof(at), v);
	if (major) {
		ng_fmt_tic(label, sizeof(label), v);
		fprintf(f, "%s'%s' %s", *first ? "" : ", ", label, at);
	} else {
		fprintf(f, "%s'' %s 1", *first ? "" : ", ", at);
	}
	*first = 0;
}

/*
 * The log y axis of a panel: its range is the data's, widened to the
 * nearest labelled tics (at least three labels); labels at 1, 1.5, 2, 3, 4,
 * 5, 6, 8 times the powers of ten for a range of less than half a decade,
 * 1, 2, 5 below two and a half decades, else the powers of ten (every
 * second or more when there are many), with unlabelled minor tics.
 */
static void ng_gp_logy(struct ng_fig *g)
{
	static const double fine[] = {1, 1.5, 2, 3, 4, 5, 6, 8}, coarse[] = {1, 2, 5};
	double lo = fmax(g->ylo, 1e-300), hi = fmin(g->yhi, 1e300), decades, v, blo, bhi;
	const double *m;
	char at[2][40];
	int e, e0, e1, step = 1, nlab, first = 1, grow;
	size_t nm, j;
	bool wide;

	if (hi < lo)
		hi = lo;
	decades = log10(hi / lo);
	wide = decades >= 2.5;
	m = decades < 0.5 ? fine : coarse;
	nm = decades < 0.5 ? sizeof(fine) / sizeof(fine[0]) : sizeof(coarse) / sizeof(coarse[0]);
	if (wide)
		step = (int)ceil(decades / 8);
	e0 = (int)floor(log10(lo)) - 1;
	e1 = (int)ceil(log10(hi)) + 1;
	/* the bounds: tics of m at or just beyond the data */
	blo = ng_tic_at(1, e0);
	bhi = ng_tic_at(1, e1);
	for (e = e0; e <= e1; e++) {
		for (j = 0; j < nm; j++) {
			v = ng_tic_at(m[j], e);
			if (v <= lo * (1 + 1e-12) && v > blo)
				blo = v;
			if (v >= hi * (1 - 1e-12) && v < bhi)
				bhi = v;
		}
	}
	/* at least three labels (below two and a half decades): widen by one
	 * tic, down then up */
	for (grow = 0; !wide && grow < 4; grow++) {
		double below = 0, above = INFINITY;

		for (nlab = 0, e = e0 - 1; e <= e1 + 1; e++) {
			for (j = 0; j < nm; j++) {
				v = ng_tic_at(m[j], e);
				nlab += v >= blo * (1 - 1e-12) && v <= bhi * (1 + 1e-12);
				if (v < blo * (1 - 1e-12) && v > below)
					below = v;
				if (v > bhi * (1 + 1e-12) && v < above)
					above = v;
			}
		}
		if (nlab >= 3)
			break;
		if (grow % 2 == 0 && below > 0)
			blo = below;
		else if (isfinite(above))
			bhi = above;
	}
	/* a hair wider: gnuplot drops a tic on the very end of a log axis */
	ng_plot_fmt_exact(at[0], sizeof(at[0]), blo * (1 - 1e-9));
	ng_plot_fmt_exact(at[1], sizeof(at[1]), bhi * (1 + 1e-9));
	fprintf(g->gp, "set yrange [%s:%s]\nset ytics (", at[0], at[1]);
	for (e = e0 - 1; e <= e1 + 1; e++) {
		/* wide: 1..9 times each power of ten, the powers labelled */
		for (j = 0; j < (wide ? 9 : nm); j++) {
			v = ng_tic_at(wide ? (double)(j + 1) : m[j], e);
			if (v < blo * (1 - 1e-12) || v > bhi * (1 + 1e-12))
				continue;
			ng_tic_put(g->gp, &first, v, !wide || (j == 0 && (e % step + step) % step == 0));
		}
	}
	fputs(")\n", g->gp);
}

/*
 * Starts a panel: y label "NAME (UNIT)", log y axis (linear for a family
 * with an xname).  The panel's settings and its plot command are buffered:
 * ng_gp_panel_end() keeps the panel, or leaves it out when it has nothing
 * to draw.
 */
void ng_gp_panel(struct ng_fig *g, const char *name, enum ng_unit u)
{
	const char *unit = ng_unit_text(g, u);

	g->gp = ng_memstream(&g->panel_buf, &g->panel_len);
	free(g->name);
	g->name = ng_plot_xasprintf("%s", name);
	fputs("set ylabel '", g->gp);
	ng_gp_chars(g->gp, name, g->term->tex);
	if (unit)
		fprintf(g->gp, " (%s)", unit);
	fputs(ng_fig_linear(g) ? "'\nunset logscale y\n" : "'\nset logscale y\n", g->gp);
	g->plot = ng_memstream(&g->plot_buf, &g->plot_len);
	g->style = 0;
	g->nseries = 0;
	g->ntitled = 0;
	g->ylo = INFINITY;
	g->yhi = -INFINITY;
	g->ndraw = g->nbad = g->nnox = 0;
	memset(g->pdraw, 0, g->n * sizeof(*g->pdraw));
	g->keylen = 0;
	g->xlinear = false;
	g->yrange = NULL;
}

void ng_gp_xlinear(struct ng_fig *g, const char *label, double max)
{
	fprintf(g->gp, "unset logscale x\nset xrange [0.5:%.17g]\nset xtics %s\nset xlabel '", max + 0.5,
	        max <= 16 ? "1" : "autofreq");
	ng_gp_chars(g->gp, label, g->term->tex);
	fputs("'\n", g->gp);
	g->xlinear = true;
}

/* Starts the next series of the panel's plot command. */
void ng_gp_next(struct ng_fig *g)
{
	fputs(g->nseries++ ? ", \\\n     " : "plot ", g->plot);
}

/* The values the panel leaves out, for the figure's note: "" or
 * "N values of 0 or below, which a log axis cannot show, N values without
 * an x". */
static void ng_panel_left_out(struct ng_fig *g, char *buf, size_t len)
{
	int n = 0;

	buf[0] = '\0';
	if (g->nbad)
		n = snprintf(buf, len, "%zu value%s of 0 or below, which a log axis cannot show", g->nbad,
		             g->nbad == 1 ? "" : "s");
	if (g->nnox && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%s%zu value%s without an x", n ? ", " : "", g->nnox,
		         g->nnox == 1 ? "" : "s");
}

/*
 * Ends the panel: left out when no point can be drawn; else its y axis,
 * the zero mark of the size axis, the key below the plot (at the figure's
 * KEYTOP, in the panel's own column NP), the plot command, and the panel's
 * own settings undone.
 */
void ng_gp_panel_end(struct ng_fig *g)
{
	char why[160];
	int cols, rows;

	fclose(g->plot);
	g->plot = NULL;
	ng_panel_left_out(g, why, sizeof(why));
	if (!g->ndraw) {
		ng_gp_note(g, "the %s panel (nothing to draw: %s)", g->name,
		           why[0] ? why : "no value in the file");
		fclose(g->gp);
		free(g->panel_buf);
		g->panel_buf = NULL;
		goto out;
	}
	if (why[0])
		ng_gp_note(g, "from the %s panel: %s", g->name, why);
	if (ng_fig_linear(g) && g->yrange) {
		fprintf(g->gp,
		        "set offsets graph 0.02, graph 0.02, 0, 0\nset yrange %s\nset ytics autofreq\n",
		        g->yrange);
	} else if (ng_fig_linear(g)) {
		/* x from 0: a margin so that no marker sits on the frame */
		fputs("set offsets graph 0.02, graph 0.02, graph 0.04, graph 0.04\n"
		      "set autoscale y\nset ytics autofreq\n",
		      g->gp);
	} else {
		fputs("set offsets 0, 0, 0, 0\n", g->gp);
		ng_gp_logy(g);
		if (!g->xlinear && g->xzero)
			fputs("set arrow from XSEP, graph 0 to XSEP, graph 1 nohead lw 1 dt 3 lc rgb "
			      "'#888888'\n",
			      g->gp);
	}
	if (g->ntitled) {
		cols = g->ntitled >= 4 && g->keylen <= NG_KEY_SHORT ? 2 : 1;
		rows = (g->ntitled + cols - 1) / cols;
		fprintf(g->gp, "set key at screen (%d + 0.03) / NP, character KEYTOP maxrows %d\n",
		        g->npanels, rows);
		g->keyrows = rows > g->keyrows ? rows : g->keyrows;
	} else {
		fputs("unset key\n", g->gp);
	}
	fwrite(g->plot_buf, 1, g->plot_len, g->gp);
	fputs("\nunset arrow\nunset title\n", g->gp);
	if (g->yrange)
		fputs("set autoscale y\n", g->gp);
	if (g->xlinear)
		fputs(g->xaxis, g->gp); /* the size axis again */
	fputc('\n', g->gp);
	fclose(g->gp);
	fwrite(g->panel_buf, 1, g->panel_len, g->body);
	free(g->panel_buf);
	g->panel_buf = NULL;
	g->npanels++;
	for (size_t i = 0; i < g->n; i++)
		g->fdraw[i] += g->pdraw[i];
out:
	free(g->plot_buf);
	g->plot_buf = NULL;
	g->gp = g->body;
}

/* " title 'LABEL SEP SUFFIX'": an empty label gives the suffix alone,
 * nothing at all " notitle"; the label is shortened so that the entry has
 * at most NG_KEY_MAX characters. */
static void ng_gp_title_sep(struct ng_fig *g, const char *label, const char *sep, const char *suffix,
                            const char *suffix_tex)
{
	size_t slen = suffix ? ng_text_len(suffix) + (label[0] ? strlen(sep) : 0) : 0, len;
	char *cut;

	if (!label[0] && !suffix) {
		fputs(" notitle", g->plot);
		return;
	}
	cut = ng_text_cut(label, slen + 12 < NG_KEY_MAX ? NG_KEY_MAX - slen : 12);
	len = ng_text_len(cut) + slen;
	g->ntitled++;
	g->keylen = len > g->keylen ? len : g->keylen;
	fputs(" title '", g->plot);
	ng_gp_chars(g->plot, cut, g->term->tex);
	if (suffix && cut[0])
		fputs(sep, g->plot);
	if (suffix && g->term->tex && suffix_tex)
		fputs(suffix_tex, g->plot); /* LaTeX of the code's own, never of a file */
	else if (suffix)
		ng_gp_chars(g->plot, suffix, g->term->tex);
	fputs("'", g->plot);
	free(cut);
}

void ng_gp_title(struct ng_fig *g, const char *label, const char *suffix, const char *suffix_tex)
{
	ng_gp_title_sep(g, label, " ", suffix, suffix_tex);
}

/* A --label is the user's text, followed by the suffix; a legend made of
 * facets ("mpirma, design direct") is set off from it by a comma. */
void ng_gp_legend(struct ng_fig *g, size_t i, const char *suffix, const char *suffix_tex)
{
	ng_gp_title_sep(g, g->legend[i], g->files[i]->user ? " " : ", ", suffix, suffix_tex);
}

/* Takes the next line style of the panel (1-based for gnuplot). */
int ng_gp_style(struct ng_fig *g)
{
	return (int)((size_t)g->style++ % NG_NSTYLES) + 1;
}

/*
 * The y of a series drawn with lines, @col, into @y.  Where size 0 is set
 * apart on the size axis, its point is a series of its own (points only,
 * in @style, no title; written here) and the line leaves it out, so that
 * no line crosses the dotted line between 0 and the other sizes.
 */
static void ng_gp_zero_points(struct ng_fig *g, size_t i, int index, int col, int style, char *y, size_t len)
{
	if (!g->xzero || g->xlinear) {
		snprintf(y, len, "%d", col);
		return;
	}
	snprintf(y, len, "(ypos($1, $%d))", col);
	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
	fprintf(g->plot, " index %d using " NG_GP_X ":(yzero($1, $%d)) with points ls %d notitle", index, col,
	        style);
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
	char y[40];

	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
	fprintf(g->plot,
	        " index %d using " NG_GP_X ":%d:(valid(%d) ? $%d : $%d):(valid(%d) ? $%d : $%d)"
	        " with yerrorbars ls %d dt solid lw 1 ps 0 notitle",
	        index, col, col + 1, col + 1, col, col + 2, col + 2, col, style);
	ng_gp_zero_points(g, i, index, col, style, y, sizeof(y));
	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
	fprintf(g->plot, " index %d using " NG_GP_X ":%s with linespoints ls %d", index, y, style);
	ng_gp_range(g, i, index, col, 3);
}

/* A series with CIs titled "LEGEND SUFFIX". */
void ng_gp_ci_series(struct ng_fig *g, size_t i, int index, int col, const char *suffix,
                     const char *suffix_tex)
{
	ng_gp_ci_using(g, i, index, col);
	ng_gp_legend(g, i, suffix, suffix_tex);
}

/* A series of plain values (lines and points, or points only). */
void ng_gp_plain_series(struct ng_fig *g, size_t i, int index, int col, bool lines, int style,
                        const char *suffix, const char *suffix_tex)
{
	char y[40];

	if (lines)
		ng_gp_zero_points(g, i, index, col, style, y, sizeof(y));
	else
		snprintf(y, sizeof(y), "%d", col);
	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
	fprintf(g->plot, " index %d using " NG_GP_X ":%s with %s ls %d", index, y,
	        lines ? "linespoints" : "points", style);
	ng_gp_range(g, i, index, col, 1);
	ng_gp_legend(g, i, suffix, suffix_tex);
}

/* ------------------------------------------------------------------------
 * Writing one figure
 */

/* Flushes @sf's stream and checks it for a write error (reported). */
static ng_status ng_flush_checked(struct ng_safefile *sf)
{
	errno = 0;
	if (fflush(sf->f) == EOF || ferror(sf->f)) {
		ng_error("cannot write %s: %s", sf->path, errno ? strerror(errno) : "write error");
		return NG_ERR_IO;
	}
	return NG_OK;
}

/* Creates @sf for @path (its stream in sf->f), reported. */
static ng_status ng_fig_create(struct ng_safefile *sf, const char *path)
{
	if (ng_safefile_open(sf, path) != 0 || !ng_safefile_stream(sf)) {
		ng_error("cannot create %s: %s", path, strerror(errno));
		ng_safefile_close(sf);
		return NG_ERR_IO;
	}
	return NG_OK;
}

static ng_status ng_fig_write_data(struct ng_fig *g, size_t i)
{
	const struct ng_plot_file *pf = g->files[i];
	ng_status rc = ng_fig_create(&g->datf[i], g->dat[i]);
	FILE *f = g->datf[i].f;

	if (rc)
		return rc;
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
	return ng_flush_checked(&g->datf[i]);
}

/* The smallest positive and the largest size of the group's rows (of its
 * part, g->sub) and of its pattern block's "sizes" (hi = 0 when there is
 * none), and whether one is 0. */
static void ng_fig_size_range(const struct ng_fig *g, double *lo_p, double *hi_p, bool *zero_p)
{
	const json_t *arrays[2], *el;
	size_t i, k, j;

	*lo_p = INFINITY;
	*hi_p = 0;
	*zero_p = false;
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
				if (s > *hi_p && isfinite(s))
					*hi_p = s;
				if (s == 0)
					*zero_p = true;
			}
		}
	}
}

/*
 * The size axis: log2, tics at powers of two labelled like the size lists
 * of the command line (1, 32, 1K, 1M), every 1, 2, 4, 5 or 10 binary orders
 * so that at most about 8 tics show, and a small margin so no marker is
 * cut.  Size 0, which a log axis has not, is drawn at X0, two binary orders
 * left of the smallest size, with the tic "0", set off by a dotted line at
 * XSEP (sx() in the script).  Sets g->xaxis and g->xzero.
 */
static void ng_fig_xaxis(struct ng_fig *g)
{
	static const int steps[] = {1, 2, 4, 5, 10};
	static const char *const prefix[] = {"", "K", "M", "G", "T", "P", "E"};
	double lo, hi, x0;
	int e, e0, e_lo, e_hi, step = 10, first = 1;
	size_t k, len;
	bool zero;
	FILE *f = ng_memstream(&g->xaxis, &len);

	ng_fig_size_range(g, &lo, &hi, &zero);
	g->xzero = zero && hi > 0; /* the dotted line between 0 and the sizes */
	x0 = hi > 0 ? lo / 4 : 1;
	fprintf(f, "X0 = %.17g\nXSEP = %.17g\nset logscale x 2\n", x0, hi > 0 ? lo / 2 : 1);
	fprintf(f, "set xrange [%.17g:%.17g]\nset xtics (", (zero || !(hi > 0) ? x0 : lo) / 1.25,
	        (hi > 0 ? hi : x0) * 1.25);
	if (zero) {
		fputs("'0' X0", f);
		first = 0;
	}
	if (hi > 0) {
		e_lo = (int)floor(log2(lo));
		e_hi = (int)ceil(log2(hi));
		for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
			if ((e_hi - e_lo) / steps[k] <= 7) {
				step = steps[k];
				break;
			}
		}
		e0 = e_lo + ((step - e_lo % step) % step + step) % step; /* first multiple of step */
		for (e = e0; e <= e_hi && e < 70; e += step) {
			if (e < 0)
				continue;
			fprintf(f, "%s'%lld%s' %.17g", first ? "" : ", ", 1LL << (e % 10), prefix[e / 10],
			        ldexp(1, e));
			first = 0;
		}
	}
	fputs(")\nset xlabel 'Message size (bytes)'\n", f);
	fclose(f);
}

/* @s as one word for a POSIX shell: single-quoted, each ' as '\'' (and a
 * control character, which no name ngauge writes has, as '?', so that the
 * comment it sits in stays one line). */
static void ng_sh_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\'')
			fputs("'\\''", f);
		else
			fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
	fputc('\'', f);
}

static void ng_fig_preamble(struct ng_fig *g, FILE *f)
{
	double height = NG_PANEL_H + g->keyrows * NG_KEY_ROW_H;
	size_t i;
	char *title;

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
	/* a command line for a shell: the name single-quoted */
	fputs("# Redo the figure with: cd THIS_DIRECTORY && gnuplot ", f);
	ng_sh_quote(f, ng_plot_basename(g->script.path));
	fputs("\n\n", f);
	fputs("set encoding utf8\n", f);
	fprintf(f, "set terminal %s size %g%s,%g%s\n", g->term->setting,
	        NG_PANEL_W * g->npanels * g->term->per_inch, g->term->unit, height * g->term->per_inch,
	        g->term->unit);
	fputs("set output '", f);
	ng_gp_chars(f, ng_plot_basename(g->stem), false);
	fprintf(f, "%s'\n\n", g->term->ext);
	for (i = 0; i < NG_NSTYLES; i++)
		fprintf(f, "set style line %zu lc rgb '%s' dt %s pt %d ps 0.8 lw 1.5\n", i + 1,
		        ng_styles[i].color, ng_styles[i].dash, ng_styles[i].point);
	if (ng_fig_linear(g)) {
		fputs("\nsx(x) = x\nypos(x, y) = y\nset autoscale xfix\nset format x '%.10g'\nset xlabel '",
		      f);
		ng_gp_chars(f, g->desc->xname, g->term->tex);
		fprintf(f, " (%s)'\n", ng_unit_text(g, NG_UNIT_US));
	} else {
		fputs("\n# the size axis (size 0 at X0, left of the dotted line at XSEP; lines join\n"
		      "# the other sizes only)\n"
		      "sx(x) = x > 0 ? x : (x == 0 ? X0 : NaN)\n"
		      "ypos(x, y) = x > 0 ? y : NaN\n"
		      "yzero(x, y) = x == 0 ? y : NaN\n",
		      f);
		fputs(g->xaxis, f);
	}
	fputs("set format y '%.10g'\n"
	      "set grid xtics ytics lc rgb '#dddddd' lw 0.5 dt 1\n"
	      "set key left top Left reverse vertical samplen 2.5 noautotitle\n"
	      "set autoscale yfix\n"
	      "set bars small\n"
	      "set samples 1000\n",
	      f);
	/* the key below the x axis: its top KEYTOP character heights above the
	 * bottom of the figure, the same for every panel */
	fprintf(f, "NP = %d\n", g->npanels);
	if (g->keyrows)
		fprintf(f, "KEYTOP = %.2f\nset bmargin %.2f\n", g->keyrows + 0.7,
		        NG_XAXIS_CHARS + g->keyrows + 0.9);
	fprintf(f, "\nset multiplot layout 1,%d", g->npanels);
	if (g->caption && g->caption[0]) {
		title = ng_text_cut(g->caption, (size_t)(NG_PANEL_W * 10 * g->npanels) - 4);
		fputs(" title '", f);
		ng_gp_chars(f, title, g->term->tex);
		fputc('\'', f);
		free(title);
	}
	fputs("\n\n", f);
}

ng_status ng_fig_write(struct ng_fig *g, char **notes_p)
{
	char *path = ng_plot_xasprintf("%s.gp", g->stem);
	ng_status rc;
	FILE *f;
	size_t i;

	*notes_p = NULL;
	g->drawn = false;
	g->fdraw = ng_plot_xcalloc(g->n, sizeof(*g->fdraw));
	g->pdraw = ng_plot_xcalloc(g->n, sizeof(*g->pdraw));
	g->datf = ng_plot_xcalloc(g->n, sizeof(*g->datf));
	for (i = 0; i < g->n; i++) {
		rc = ng_fig_write_data(g, i);
		if (rc)
			goto out_free_path;
	}
	if (!ng_fig_linear(g))
		ng_fig_xaxis(g);
	g->body = ng_memstream(&g->body_buf, &g->body_len);
	g->notes = ng_memstream(&g->notes_buf, &g->notes_len);
	g->gp = g->body;
	g->desc->script(g);
	fclose(g->body);
	g->body = g->gp = NULL;
	fclose(g->notes);
	g->notes = NULL;
	if (g->notes_len)
		*notes_p = g->notes_buf;
	else
		free(g->notes_buf);
	g->notes_buf = NULL;
	rc = NG_OK;
	if (!g->npanels) {
		/* nothing to draw: no figure, no script, no data left behind */
		for (i = 0; i < g->n; i++)
			ng_safefile_close(&g->datf[i]);
		goto out_free_body;
	}
	rc = ng_fig_create(&g->script, path);
	if (rc)
		goto out_free_body;
	f = g->script.f;
	ng_fig_preamble(g, f);
	fwrite(g->body_buf, 1, g->body_len, f);
	fputs("unset multiplot\n", f);
	rc = ng_flush_checked(&g->script);
	g->drawn = rc == NG_OK;
out_free_body:
	free(g->body_buf);
	g->body_buf = NULL;
out_free_path:
	free(g->pdraw);
	g->pdraw = NULL;
	free(g->xaxis);
	g->xaxis = NULL;
	free(g->name);
	g->name = NULL;
	free(path);
	return rc;
}

ng_status ng_fig_commit(struct ng_fig *g)
{
	struct ng_safefile *sf;

	for (size_t i = 0; i <= g->n; i++) {
		sf = i < g->n ? &g->datf[i] : &g->script;
		if (sf->path && sf->tmp && ng_safefile_commit(sf) != 0) {
			ng_error("cannot write %s: %s", sf->path, strerror(errno));
			return NG_ERR_IO;
		}
	}
	return NG_OK;
}

void ng_fig_close(struct ng_fig *g)
{
	for (size_t i = 0; g->datf && i < g->n; i++)
		ng_safefile_close(&g->datf[i]);
	free(g->datf);
	g->datf = NULL;
	ng_safefile_close(&g->script);
}
