/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ngauge plot: result files -> data files and one gnuplot script per pattern
 * group -> figures.  The user-visible contract is in plot.h.
 *
 * Each pattern is described by one entry of ng_figures[]: the panels it can
 * draw, the top-level block it needs, a writer for the data tables of one
 * file and a writer for the panels of the script.  Everything else (files,
 * terminals, line styles, quoting, running gnuplot) is shared.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "plot.h"
#include "plot_priv.h"

/* gnuplot's messages kept for showing when it fails */
#define NG_GNUPLOT_LOG_MAX 16384

/* ------------------------------------------------------------------------
 * Small helpers
 */

/* asprintf that aborts on out-of-memory, like the rest of ngauge's small
 * bookkeeping allocations (core/results.c). */
static char *ng_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *ng_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		ng_error("out of memory");
		abort();
	}
	return s;
}

static void *ng_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		ng_error("out of memory");
		abort();
	}
	return p;
}

static const char *ng_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void ng_plot_fmt_exact(char *buf, size_t len, double v)
{
	int prec;

	if (!isfinite(v)) {
		snprintf(buf, len, "NaN");
		return;
	}
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

double ng_plot_num(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Whether the string under @key of object @o is @want. */
static bool ng_row_is(const json_t *o, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v && strcmp(v, want) == 0;
}

bool ng_plot_is_stats(const json_t *v)
{
	return json_is_object(v) && json_is_number(json_object_get(v, "median"));
}

bool ng_plot_is_param(const json_t *v)
{
	return json_is_object(v) && json_object_get(v, "value") != NULL;
}

void ng_plot_ci(const json_t *o, double *lo_p, double *hi_p)
{
	const json_t *ci = json_is_object(o) ? json_object_get(o, "ci95") : NULL;

	*lo_p = NAN;
	*hi_p = NAN;
	if (!json_is_array(ci) || json_array_size(ci) != 2)
		return;
	if (json_is_number(json_array_get(ci, 0)))
		*lo_p = json_number_value(json_array_get(ci, 0));
	if (json_is_number(json_array_get(ci, 1)))
		*hi_p = json_number_value(json_array_get(ci, 1));
}

/* The first key of the first row holding statistics: the main column of the
 * table (core/results.h), used for patterns without a figure of their own. */
static const char *ng_first_stats_key(const struct ng_plot_file *pf)
{
	const char *key;
	json_t *row, *v;
	size_t i;

	json_array_foreach(pf->rows, i, row)
	{
		json_object_foreach(row, key, v)
		{
			if (ng_plot_is_stats(v))
				return key;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * Loading and labels
 */

/*
 * The words of a result file (pattern, module, and every string of a row:
 * test, sync, side, algorithm, ...) name things ngauge defines; they reach
 * file names, gnuplot scripts and the report.  A result file is untrusted
 * input (a colleague's run, a paper's artifact): a word is 1 to
 * NG_PLOT_WORD_MAX characters of letters, digits and "_.+:;-", and a file with
 * anything else is refused, naming the field.
 */
#define NG_PLOT_WORD_MAX 64

bool ng_plot_is_word(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++, n++) {
		unsigned char c = (unsigned char)*s;

		if (n >= NG_PLOT_WORD_MAX || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		                               (c >= '0' && c <= '9') || strchr("_.+:;-", c)))
			return false;
	}
	return true;
}

/* Refuses (once, naming @field of @path) a value that is not a word. */
static bool ng_plot_word_check(const char *path, const char *field, const json_t *v)
{
	if (json_is_string(v) && ng_plot_is_word(json_string_value(v)))
		return true;
	ng_error("%s: %s is not a word of at most %d letters, digits or \"_.+:;-\"", path, field,
	         NG_PLOT_WORD_MAX);
	return false;
}

ng_status ng_plot_file_load(const char *path, struct ng_plot_file *f_p)
{
	struct ng_plot_file f = {.path = path};
	json_error_t jerr;
	struct stat st;
	json_t *v, *row;
	FILE *in;
	size_t i;

	memset(f_p, 0, sizeof(*f_p));
	in = fopen(path, "r");
	if (!in) {
		ng_error("%s: %s", path, strerror(errno));
		return NG_ERR_IO;
	}
	if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
		ng_error("%s: is a directory, not a result file", path);
		goto err_close_file;
	}
	if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
		ng_error("%s: empty file", path);
		goto err_close_file;
	}
	f.doc = json_loadf(in, 0, &jerr);
	if (!f.doc) {
#if JANSSON_VERSION_HEX >= 0x020b00
		if (json_error_code(&jerr) == json_error_premature_end_of_input) {
			ng_error("%s: truncated JSON (the document ends early, line %d)", path, jerr.line);
			goto err_close_file;
		}
#endif
		ng_error("%s: invalid JSON at line %d, column %d: %s", path, jerr.line, jerr.column,
		         jerr.text);
		goto err_close_file;
	}
	fclose(in);

	if (!json_is_object(f.doc)) {
		ng_error("%s: not an ngauge result (the top level is not a JSON object)", path);
		goto err_drop_doc;
	}
	v = json_object_get(f.doc, "schema");
	if (!json_is_string(v)) {
		ng_error("%s: not an ngauge result (no \"schema\" string)", path);
		goto err_drop_doc;
	}
	if (strcmp(json_string_value(v), NG_PLOT_SCHEMA) != 0) {
		ng_error("%s: unsupported schema \"%.60s\" (expected \"" NG_PLOT_SCHEMA "\")", path,
		         json_string_value(v));
		goto err_drop_doc;
	}
	v = json_object_get(f.doc, "pattern");
	if (!json_is_string(v) || !*json_string_value(v)) {
		ng_error("%s: no \"pattern\" string", path);
		goto err_drop_doc;
	}
	if (!ng_plot_word_check(path, "\"pattern\"", v))
		goto err_drop_doc;
	f.pattern = json_string_value(v);
	v = json_object_get(f.doc, "module");
	if (v && !ng_plot_word_check(path, "\"module\"", v))
		goto err_drop_doc;
	f.module = json_is_string(v) ? json_string_value(v) : "?";
	v = json_object_get(f.doc, "ranks");
	f.ranks = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
	f.complete = !json_is_false(json_object_get(f.doc, "complete"));
	f.oversubscribed = json_is_true(json_object_get(json_object_get(f.doc, "env"), "oversubscribed"));

	f.rows = json_object_get(f.doc, "results");
	if (!json_is_array(f.rows)) {
		ng_error("%s: no \"results\" array", path);
		goto err_drop_doc;
	}
	if (json_array_size(f.rows) == 0) {
		ng_error("%s: no measurements (\"results\" is empty)", path);
		goto err_drop_doc;
	}
	json_array_foreach(f.rows, i, row)
	{
		double size = ng_plot_num(row, "size");

		const char *key;
		json_t *field;

		if (!json_is_object(row) || !(size >= 0)) {
			ng_error("%s: results[%zu] is not a row with a numeric \"size\"", path, i);
			goto err_drop_doc;
		}
		json_object_foreach(row, key, field)
		{
			char name[96];

			if (!json_is_string(field))
				continue;
			snprintf(name, sizeof(name), "results[%zu].%.60s", i,
			         ng_plot_is_word(key) ? key : "?");
			if (!ng_plot_word_check(path, name, field))
				goto err_drop_doc;
		}
	}
	*f_p = f;
	return NG_OK;

err_close_file:
	fclose(in);
	return NG_ERR_IO;
err_drop_doc:
	json_decref(f.doc);
	return NG_ERR_PROTO;
}

void ng_plot_file_release(struct ng_plot_file *f)
{
	json_decref(f->doc);
	free(f->label);
	memset(f, 0, sizeof(*f));
}

/* True when another file of the same pattern has the label of files[i]. */
static bool ng_label_clash(const struct ng_plot_file *files, size_t n, size_t i)
{
	size_t j;

	for (j = 0; j < n; j++) {
		if (j != i && strcmp(files[j].pattern, files[i].pattern) == 0 &&
		    strcmp(files[j].label, files[i].label) == 0)
			return true;
	}
	return false;
}

ng_status ng_plot_labels(struct ng_plot_file *files, size_t n, const char *const *user, size_t nuser)
{
	bool *clash = ng_xcalloc(n, sizeof(*clash));
	size_t i;
	int step;

	for (i = 0; i < n; i++) {
		free(files[i].label);
		if (i < nuser)
			files[i].label = ng_xasprintf("%s", user[i]);
		else
			files[i].label = ng_xasprintf("%s %s", files[i].module, files[i].pattern);
	}
	/* step 0: add the rank count; step 1: the file name instead */
	for (step = 0; step < 2; step++) {
		for (i = nuser; i < n; i++)
			clash[i] = ng_label_clash(files, n, i);
		for (i = nuser; i < n; i++) {
			if (!clash[i] || (step == 0 && files[i].ranks <= 0))
				continue;
			free(files[i].label);
			if (step == 0)
				files[i].label = ng_xasprintf("%s %s (%lld ranks)", files[i].module,
				                              files[i].pattern, files[i].ranks);
			else
				files[i].label = ng_xasprintf("%s %s (%s)", files[i].module, files[i].pattern,
				                              ng_basename(files[i].path));
		}
	}
	/* Times of ranks that waited for a core are no figures of the network:
	 * the legend says so, whatever the label. */
	for (i = 0; i < n; i++) {
		char *marked;

		if (!files[i].oversubscribed)
			continue;
		marked = ng_xasprintf("%s (oversubscribed)", files[i].label);
		free(files[i].label);
		files[i].label = marked;
	}
	free(clash);
	return NG_OK;
}

/* ------------------------------------------------------------------------
 * Terminals, styles, text
 */

enum ng_term_id { NG_TERM_PDF, NG_TERM_SVG, NG_TERM_PNG, NG_TERM_TEX };

struct ng_term {
	const char *ext;     /* file extension picking the terminal */
	const char *setting; /* "set terminal" line without the size */
	double per_inch;     /* size units per inch */
	const char *unit;    /* size unit suffix ("in" or "" for pixels) */
	bool tex;            /* text is typeset by LaTeX */
};

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
#define NG_NSTYLES (sizeof(ng_styles) / sizeof(ng_styles[0]))

enum ng_unit { NG_UNIT_NONE, NG_UNIT_US, NG_UNIT_MBPS, NG_UNIT_PER_S };

/* Panel bits; --kind selects among them. */
#define NG_PANEL_LAT (1u << 0)
#define NG_PANEL_BW  (1u << 1)
#define NG_PANEL_OVH (1u << 2)
#define NG_PANEL_MSG (1u << 3) /* message rate: with --kind bandwidth */

/* Patterns drawn in parts, a figure each: the rows name their part under
 * @key (rma: "test"); panels_of gives a part's panels, data writes one
 * file's data of one part (in place of ng_figure.data). */
struct ng_figure_parts {
	const char *pattern;
	const char *key;
	unsigned (*panels_of)(const char *sub);
	void (*data)(FILE *f, const struct ng_plot_file *pf, const char *sub);
};

/* One figure (one pattern group, or one part of it) being written. */
struct ng_fig {
	const struct ng_term *term;
	const struct ng_figure *desc;
	const struct ng_figure_parts *parts; /* a pattern drawn in parts, or NULL */
	const char *sub;                     /* the part drawn (rma: the test), or NULL */
	const struct ng_plot_file **files;   /* the group's files */
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

/* True for figures with linear axes (struct ng_figure's xname). */
static bool ng_fig_linear(const struct ng_fig *g);

/* Writes @s into a single-quoted gnuplot string: quotes doubled, control
 * characters as spaces, and with @tex the LaTeX specials escaped. */
static void ng_gp_chars(FILE *f, const char *s, bool tex)
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
static void ng_gp_quote(FILE *f, const char *s)
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
static void ng_gp_range(struct ng_fig *g, size_t i, int index, int col, int n)
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
static void ng_gp_panel(struct ng_fig *g, const char *name, enum ng_unit u)
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
static void ng_gp_next(struct ng_fig *g)
{
	fputs(g->nseries++ ? ", \\\n     " : "plot ", g->plot);
}

/*
 * Ends the panel: the head room for the key (a key line is about 8% of the
 * plot's height; the offset is in units of the data's own span), the plot
 * command, and the decorations forgotten.
 */
static void ng_gp_panel_end(struct ng_fig *g)
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
static void ng_gp_title(struct ng_fig *g, const char *label, const char *suffix, const char *suffix_tex)
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
static int ng_gp_style(struct ng_fig *g)
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
static void ng_gp_ci_using(struct ng_fig *g, size_t i, int index, int col)
{
	int style = ng_gp_style(g);

	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_basename(g->dat[i]));
	fprintf(g->plot,
	        " index %d using 1:%d:(valid(%d) ? $%d : $%d):(valid(%d) ? $%d : $%d)"
	        " with yerrorbars ls %d dt solid lw 1 ps 0 notitle",
	        index, col, col + 1, col + 1, col, col + 2, col + 2, col, style);
	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_basename(g->dat[i]));
	fprintf(g->plot, " index %d using 1:%d with linespoints ls %d", index, col, style);
	ng_gp_range(g, i, index, col, 3);
}

/* A series with CIs titled "LABEL SUFFIX". */
static void ng_gp_ci_series(struct ng_fig *g, size_t i, int index, int col, const char *suffix,
                            const char *suffix_tex)
{
	ng_gp_ci_using(g, i, index, col);
	ng_gp_title(g, g->files[i]->label, suffix, suffix_tex);
}

/* A series of plain values (lines and points, or points only). */
static void ng_gp_plain_series(struct ng_fig *g, size_t i, int index, int col, bool lines, int style,
                               const char *suffix, const char *suffix_tex)
{
	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_basename(g->dat[i]));
	fprintf(g->plot, " index %d using 1:%d with %s ls %d", index, col, lines ? "linespoints" : "points",
	        style);
	ng_gp_range(g, i, index, col, 1);
	ng_gp_title(g, g->files[i]->label, suffix, suffix_tex);
}

/* ------------------------------------------------------------------------
 * Data tables
 */

enum ng_col_type {
	NG_COL_NUM,   /* one number */
	NG_COL_STATS, /* STATS: median, ci95 lo, ci95 hi */
	NG_COL_PARAM, /* parameter: value, ci95 lo, ci95 hi */
};

struct ng_col {
	const char *key;
	enum ng_col_type type;
};

static int ng_col_width(const struct ng_col *c)
{
	return c->type == NG_COL_NUM ? 1 : 3;
}

/* The 1-based column of @key's first number. */
static int ng_col_of(const struct ng_col *cols, const char *key)
{
	int col = 1;

	for (; cols->key; cols++) {
		if (strcmp(cols->key, key) == 0)
			return col;
		col += ng_col_width(cols);
	}
	return 0; /* not reached with the tables below */
}

/* Writes one number of a data line, a blank before all but the first. */
static void ng_dat_put(FILE *f, bool *first, const char *text)
{
	fprintf(f, "%s%s", *first ? "" : " ", text);
	*first = false;
}

static void ng_dat_num(FILE *f, bool *first, double v)
{
	char buf[40];

	ng_plot_fmt_exact(buf, sizeof(buf), v);
	ng_dat_put(f, first, buf);
}

/* A JSON number exactly (integers as integers), anything else as NaN. */
static void ng_dat_json(FILE *f, bool *first, const json_t *v)
{
	char buf[40];

	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		ng_dat_put(f, first, buf);
	} else {
		ng_dat_num(f, first, json_is_real(v) ? json_real_value(v) : NAN);
	}
}

/* @key of object @o (the median or the value), then its ci95 bounds. */
static void ng_dat_triple(FILE *f, bool *first, const json_t *o, const char *key)
{
	double lo, hi;

	ng_dat_json(f, first, json_is_object(o) ? json_object_get(o, key) : NULL);
	ng_plot_ci(o, &lo, &hi);
	ng_dat_num(f, first, lo);
	ng_dat_num(f, first, hi);
}

/*
 * Writes one table: the objects of array @arr (only those whose "algorithm"
 * is @alg, when @alg is set), one line each, columns @cols.  Tables are
 * preceded by their name and column names as comments and separated by two
 * blank lines (gnuplot "index").
 */
static void ng_dat_table(FILE *f, int index, const char *name, const json_t *arr, const struct ng_col *cols,
                         const char *alg)
{
	const struct ng_col *c;
	const json_t *row, *a;
	bool first;
	size_t i;

	fprintf(f, "%s# table %d: ", index ? "\n\n" : "", index);
	ng_gp_chars(f, name, false);
	fputs("\n# columns:", f);
	for (c = cols; c->key; c++) {
		if (c->type == NG_COL_NUM)
			fprintf(f, " %s", c->key);
		else
			fprintf(f, " %s_%s %s_ci95_lo %s_ci95_hi", c->key,
			        c->type == NG_COL_STATS ? "median" : "value", c->key, c->key);
	}
	fputc('\n', f);
	json_array_foreach(arr, i, row)
	{
		if (!json_is_object(row))
			continue;
		a = json_object_get(row, "algorithm");
		if (alg && (!json_is_string(a) || strcmp(json_string_value(a), alg) != 0))
			continue;
		first = true;
		for (c = cols; c->key; c++) {
			const json_t *v = json_object_get(row, c->key);

			if (c->type == NG_COL_NUM)
				ng_dat_json(f, &first, v);
			else
				ng_dat_triple(f, &first, v, c->type == NG_COL_STATS ? "median" : "value");
		}
		fputc('\n', f);
	}
}

static const struct ng_col ng_cols_pingpong[] = {
    {"size", NG_COL_NUM},
    {"count", NG_COL_NUM},
    {"latency_us", NG_COL_STATS},
    {"bandwidth_MBps", NG_COL_STATS},
    {"aggregate_bandwidth_MBps", NG_COL_NUM},
    {"predicted_us", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_1n[] = {
    {"size", NG_COL_NUM},
    {"count", NG_COL_NUM},
    {"time_us", NG_COL_STATS},
    {"aggregate_bandwidth_MBps", NG_COL_STATS},
    {"bandwidth_per_client_MBps", NG_COL_STATS},
    {"clients", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_bw[] = {
    {"size", NG_COL_NUM},
    {"count", NG_COL_NUM},
    {"bandwidth_MBps", NG_COL_STATS},
    {"messages_per_s", NG_COL_STATS},
    {"aggregate_bandwidth_MBps", NG_COL_NUM},
    {"aggregate_messages_per_s", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_alltoall[] = {
    {"size", NG_COL_NUM},         {"count", NG_COL_NUM}, {"time_us", NG_COL_STATS},
    {"algbw_MBps", NG_COL_STATS}, {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_loggp_sizes[] = {
    {"size", NG_COL_NUM},      {"prtt1_us", NG_COL_NUM}, {"prttn_us", NG_COL_NUM},
    {"prttnd_us", NG_COL_NUM}, {"T_us", NG_COL_NUM},     {"o_s_us", NG_COL_NUM},
    {"o_r_us", NG_COL_NUM},    {"delay_us", NG_COL_NUM}, {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_loggp_segments[] = {
    {"from", NG_COL_NUM},
    {"to", NG_COL_NUM},
    {"L_us", NG_COL_PARAM},
    {"o_s_us", NG_COL_PARAM},
    {"o_r_us", NG_COL_PARAM},
    {"g_us", NG_COL_PARAM},
    {"G_us_per_byte", NG_COL_PARAM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_plogp_sizes[] = {
    {"size", NG_COL_NUM},     {"g_us", NG_COL_PARAM}, {"o_s_us", NG_COL_PARAM},
    {"o_r_us", NG_COL_PARAM}, {"L_us", NG_COL_PARAM}, {NULL, NG_COL_NUM},
};

static void ng_dat_rows(FILE *f, const struct ng_plot_file *pf, const struct ng_col *cols)
{
	ng_dat_table(f, 0, "results", pf->rows, cols, NULL);
}

static void ng_dat_pingpong(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_rows(f, pf, ng_cols_pingpong);
}

static void ng_dat_1n(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_rows(f, pf, ng_cols_1n);
}

static void ng_dat_bw(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_rows(f, pf, ng_cols_bw);
}

static void ng_dat_generic(FILE *f, const struct ng_plot_file *pf)
{
	const struct ng_col cols[] = {
	    {"size", NG_COL_NUM},
	    {"count", NG_COL_NUM},
	    {ng_first_stats_key(pf), NG_COL_STATS},
	    {NULL, NG_COL_NUM},
	};

	ng_dat_rows(f, pf, cols);
}

/* The algorithms of an alltoall file that have rows: in the order of the
 * block's list first, then any other "algorithm" of the rows, each once (a
 * listed algorithm without rows has nothing to draw, and only the rows'
 * strings are checked words).  Borrowed strings; free the array. */
static bool ng_alltoall_has_rows(const struct ng_plot_file *pf, const char *alg)
{
	const json_t *row;
	size_t r;

	json_array_foreach(pf->rows, r, row)
	{
		if (ng_row_is(row, "algorithm", alg))
			return true;
	}
	return false;
}

static const char **ng_alltoall_algs(const struct ng_plot_file *pf, size_t *n_p)
{
	const json_t *block = json_object_get(pf->doc, "alltoall");
	const json_t *list = json_is_object(block) ? json_object_get(block, "algorithms") : NULL;
	size_t cap = json_array_size(list) + json_array_size(pf->rows), n = 0, i, j, k;
	const char **algs = ng_xcalloc(cap, sizeof(*algs));
	const json_t *sources[2] = {list, pf->rows};

	for (k = 0; k < 2; k++) {
		for (i = 0; i < json_array_size(sources[k]); i++) {
			const json_t *v = json_array_get(sources[k], i);

			if (k == 1)
				v = json_object_get(v, "algorithm");
			if (!json_is_string(v) || (k == 0 && !ng_alltoall_has_rows(pf, json_string_value(v))))
				continue;
			for (j = 0; j < n && strcmp(algs[j], json_string_value(v)) != 0; j++)
				;
			if (j == n)
				algs[n++] = json_string_value(v);
		}
	}
	*n_p = n;
	return algs;
}

static void ng_dat_alltoall(FILE *f, const struct ng_plot_file *pf)
{
	size_t i, n;
	const char **algs = ng_alltoall_algs(pf, &n);

	for (i = 0; i < n; i++)
		ng_dat_table(f, (int)i, algs[i], pf->rows, ng_cols_alltoall, algs[i]);
	free(algs);
}

static void ng_dat_loggp(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *b = json_object_get(pf->doc, "loggp");
	const json_t *bps = json_object_get(b, "breakpoints"), *v;
	size_t i;

	ng_dat_table(f, 0, "loggp.sizes", json_object_get(b, "sizes"), ng_cols_loggp_sizes, NULL);
	ng_dat_table(f, 1, "loggp.segments", json_object_get(b, "segments"), ng_cols_loggp_segments, NULL);
	fputs("\n\n# table 2: loggp.breakpoints\n# columns: size\n", f);
	json_array_foreach(bps, i, v)
	{
		bool first = true;

		ng_dat_json(f, &first, v);
		fputc('\n', f);
	}
}

static void ng_dat_plogp(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *b = json_object_get(pf->doc, "plogp");

	ng_dat_table(f, 0, "plogp.sizes", json_object_get(b, "sizes"), ng_cols_plogp_sizes, NULL);
}

/* ------------------------------------------------------------------------
 * Panels
 */

/* A panel of one statistics key of the rows (table 0), one series per file. */
static void ng_row_panel(struct ng_fig *g, const struct ng_col *cols, const char *key, const char *name,
                         enum ng_unit u)
{
	size_t i;

	ng_gp_panel(g, name, u);
	for (i = 0; i < g->n; i++)
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, key), NULL, NULL);
}

/* Whether some row of file @i has a number under @key. */
static bool ng_rows_have(const struct ng_fig *g, size_t i, const char *key)
{
	json_t *row;
	size_t j;

	json_array_foreach(g->files[i]->rows, j, row)
	{
		if (isfinite(ng_plot_num(row, key)))
			return true;
	}
	return false;
}

/*
 * A pingpong panel of @key, one series per file; where the rows carry a
 * module's prediction of the one-way time ("predicted_us", e.g. spipe's
 * model), it is drawn as a dotted line in the colour of the measurement:
 * the time itself, or size / time on a bandwidth panel; one key entry,
 * "model (dotted)", stands for all of them.
 */
static void ng_pp_panel(struct ng_fig *g, const char *key, const char *name, enum ng_unit u, bool bandwidth)
{
	const struct ng_col *cols = ng_cols_pingpong;
	int pcol = ng_col_of(cols, "predicted_us");
	bool titled = false;
	size_t i;

	ng_gp_panel(g, name, u);
	for (i = 0; i < g->n; i++) {
		int style = (int)((size_t)g->style % NG_NSTYLES) + 1;

		ng_gp_ci_series(g, i, 0, ng_col_of(cols, key), NULL, NULL);
		if (!ng_rows_have(g, i, "predicted_us"))
			continue;
		ng_gp_next(g);
		ng_gp_quote(g->plot, ng_basename(g->dat[i]));
		if (bandwidth)
			fprintf(g->plot, " index 0 using 1:($1 / $%d) with lines ls %d dt 3", pcol, style);
		else
			fprintf(g->plot, " index 0 using 1:%d with lines ls %d dt 3", pcol, style);
		if (!bandwidth)
			ng_gp_range(g, i, 0, pcol, 1);
		/* one key entry for all of them: the colour says whose */
		if (titled) {
			fputs(" notitle", g->plot);
		} else {
			g->ntitled++;
			fputs(" title 'model (dotted)'", g->plot);
			titled = true;
		}
	}
}

/* The plain series "LABEL aggregate" of number @key of the rows, for each
 * file whose rows have it (pairs of ranks: the sum over the pairs). */
static void ng_aggregate_series(struct ng_fig *g, const struct ng_col *cols, const char *key)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		if (ng_rows_have(g, i, key))
			ng_gp_plain_series(g, i, 0, ng_col_of(cols, key), true, ng_gp_style(g), "aggregate",
			                   NULL);
	}
}

static void ng_fig_pingpong(struct ng_fig *g)
{
	const struct ng_col *cols = ng_cols_pingpong;

	if (g->panels & NG_PANEL_LAT) {
		ng_pp_panel(g, "latency_us", "Latency", NG_UNIT_US, false);
		ng_gp_panel_end(g);
	}
	if (g->panels & NG_PANEL_BW) {
		ng_pp_panel(g, "bandwidth_MBps", "Bandwidth", NG_UNIT_MBPS, true);
		/* more than two ranks: the sum over the pairs as well */
		ng_aggregate_series(g, cols, "aggregate_bandwidth_MBps");
		ng_gp_panel_end(g);
	}
}

/* bw, bibw: bandwidth and message rate (--kind bandwidth keeps both). */
static void ng_fig_bw(struct ng_fig *g)
{
	const struct ng_col *cols = ng_cols_bw;

	if (g->panels & NG_PANEL_BW) {
		ng_row_panel(g, cols, "bandwidth_MBps", "Bandwidth", NG_UNIT_MBPS);
		ng_aggregate_series(g, cols, "aggregate_bandwidth_MBps");
		ng_gp_panel_end(g);
	}
	if (g->panels & NG_PANEL_MSG) {
		ng_row_panel(g, cols, "messages_per_s", "Message rate (messages/s)", NG_UNIT_NONE);
		ng_aggregate_series(g, cols, "aggregate_messages_per_s");
		ng_gp_panel_end(g);
	}
}

static void ng_fig_1n(struct ng_fig *g)
{
	if (g->panels & NG_PANEL_LAT) {
		ng_row_panel(g, ng_cols_1n, "time_us", "Time per round", NG_UNIT_US);
		ng_gp_panel_end(g);
	}
	if (g->panels & NG_PANEL_BW) {
		ng_row_panel(g, ng_cols_1n, "aggregate_bandwidth_MBps", "Aggregate bandwidth", NG_UNIT_MBPS);
		ng_gp_panel_end(g);
	}
}

static void ng_fig_generic(struct ng_fig *g)
{
	const char *key = ng_first_stats_key(g->files[0]);
	const char *us = strstr(key, "_us"), *mbps = strstr(key, "_MBps");
	enum ng_unit u = NG_UNIT_NONE;
	char *name;
	size_t i;

	if (us && !us[3]) {
		u = NG_UNIT_US;
		name = ng_xasprintf("%.*s", (int)(us - key), key);
	} else if (mbps && !mbps[5]) {
		u = NG_UNIT_MBPS;
		name = ng_xasprintf("%.*s", (int)(mbps - key), key);
	} else {
		name = ng_xasprintf("%s", key);
	}
	ng_gp_panel(g, name, u);
	for (i = 0; i < g->n; i++)
		ng_gp_ci_series(g, i, 0, 3, NULL, NULL); /* size, count, KEY (ng_dat_generic) */
	ng_gp_panel_end(g);
	free(name);
}

static void ng_fig_alltoall(struct ng_fig *g)
{
	static const struct {
		unsigned panel;
		const char *key, *name;
		enum ng_unit unit;
	} panels[] = {
	    {NG_PANEL_LAT, "time_us", "Time per alltoall", NG_UNIT_US},
	    {NG_PANEL_BW, "algbw_MBps", "Algorithm bandwidth", NG_UNIT_MBPS},
	};
	size_t p, i, a, n;

	for (p = 0; p < sizeof(panels) / sizeof(panels[0]); p++) {
		if (!(g->panels & panels[p].panel))
			continue;
		ng_gp_panel(g, panels[p].name, panels[p].unit);
		for (i = 0; i < g->n; i++) {
			const char **algs = ng_alltoall_algs(g->files[i], &n);

			for (a = 0; a < n; a++) {
				/* "ALGORITHM", or "LABEL ALGORITHM" when several files share the panel */
				ng_gp_ci_using(g, i, (int)a, ng_col_of(ng_cols_alltoall, panels[p].key));
				g->ntitled++;
				fputs(" title '", g->plot);
				if (g->n > 1) {
					ng_gp_chars(g->plot, g->files[i]->label, g->term->tex);
					fputc(' ', g->plot);
				}
				ng_gp_chars(g->plot, algs[a], g->term->tex);
				fputc('\'', g->plot);
			}
			free(algs);
		}
		ng_gp_panel_end(g);
	}
}

/* The fitted segments of one loggp file, T(s) = g + (s - from) G on
 * [from, to] (doc/result-format.md), as function series over the points. */
static void ng_fig_loggp_fit(struct ng_fig *g, size_t i, int style)
{
	const json_t *b = json_object_get(g->files[i]->doc, "loggp");
	const json_t *seg;
	char from[40], to[40], gap[40], per_byte[40];
	bool titled = false;
	size_t j;

	json_array_foreach(json_object_get(b, "segments"), j, seg)
	{
		double f = ng_plot_num(seg, "from"), t = ng_plot_num(seg, "to");
		double g0 = ng_plot_num(json_object_get(seg, "g_us"), "value");
		double g1 = ng_plot_num(json_object_get(seg, "G_us_per_byte"), "value");

		if (!isfinite(f) || !isfinite(t) || !isfinite(g0) || !isfinite(g1))
			continue; /* a flagged parameter: nothing to draw */
		ng_plot_fmt_exact(from, sizeof(from), f);
		ng_plot_fmt_exact(to, sizeof(to), t);
		ng_plot_fmt_exact(gap, sizeof(gap), g0);
		ng_plot_fmt_exact(per_byte, sizeof(per_byte), g1);
		ng_gp_next(g);
		fprintf(g->plot, "(x >= %s && x <= %s ? %s + (x - %s) * %s : NaN) with lines ls %d", from, to,
		        gap, from, per_byte, style);
		if (titled) {
			fputs(" notitle", g->plot);
		} else {
			ng_gp_title(g, g->files[i]->label, "fit", NULL);
			titled = true;
		}
	}
}

static void ng_fig_loggp(struct ng_fig *g)
{
	const struct ng_col *cols = ng_cols_loggp_sizes;
	int *styles = ng_xcalloc(g->n, sizeof(*styles));
	const json_t *bps, *v;
	char at[40];
	size_t i, j;

	if (g->panels & NG_PANEL_OVH) {
		ng_gp_panel(g, "Overhead", NG_UNIT_US);
		for (i = 0; i < g->n; i++) {
			ng_gp_plain_series(g, i, 0, ng_col_of(cols, "o_s_us"), true, ng_gp_style(g), "o_s",
			                   "$o_s$");
			ng_gp_plain_series(g, i, 0, ng_col_of(cols, "o_r_us"), true, ng_gp_style(g), "o_r",
			                   "$o_r$");
		}
		ng_gp_panel_end(g);
	}
	if (g->panels & NG_PANEL_LAT) {
		ng_gp_panel(g, "Transmission time T(s)", NG_UNIT_US);
		for (i = 0; i < g->n; i++) {
			styles[i] = ng_gp_style(g);
			bps = json_object_get(json_object_get(g->files[i]->doc, "loggp"), "breakpoints");
			json_array_foreach(bps, j, v)
			{
				if (!json_is_number(v))
					continue;
				ng_plot_fmt_exact(at, sizeof(at), json_number_value(v));
				fprintf(g->gp,
				        "set arrow from first %s, graph 0 to first %s, graph 1 nohead lw 1 "
				        "dt 3 lc rgb '%s'\n",
				        at, at, ng_styles[(size_t)(styles[i] - 1) % NG_NSTYLES].color);
			}
		}
		for (i = 0; i < g->n; i++) {
			ng_gp_plain_series(g, i, 0, ng_col_of(cols, "T_us"), false, styles[i], "T(s)",
			                   "$T(s)$");
			ng_fig_loggp_fit(g, i, styles[i]);
			bps = json_object_get(json_object_get(g->files[i]->doc, "loggp"), "breakpoints");
			if (json_array_size(bps)) {
				/* a key entry for the vertical lines */
				ng_gp_next(g);
				fprintf(g->plot, "NaN with lines lw 1 dt 3 lc rgb '%s'",
				        ng_styles[(size_t)(styles[i] - 1) % NG_NSTYLES].color);
				ng_gp_title(g, g->files[i]->label, "breakpoints", NULL);
			}
		}
		ng_gp_panel_end(g);
	}
	free(styles);
}

static void ng_fig_plogp(struct ng_fig *g)
{
	const struct ng_col *cols = ng_cols_plogp_sizes;
	size_t i;

	ng_gp_panel(g, "Time", NG_UNIT_US);
	for (i = 0; i < g->n; i++) {
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, "g_us"), "g(m)", "$g(m)$");
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, "o_s_us"), "o_s(m)", "$o_s(m)$");
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, "o_r_us"), "o_r(m)", "$o_r(m)$");
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, "L_us"), "L(m)", "$L(m)$");
	}
	ng_gp_panel_end(g);
}

/* ------------------------------------------------------------------------
 * The rma suite: one figure per test (doc/result-format.md), one series per
 * file and synchronisation mode, like the figures of the one-sided papers
 */

enum ng_rma_x { NG_RMA_X_SIZE, NG_RMA_X_ORIGINS, NG_RMA_X_TARGETS };

/* A test's figure: its first panel (lock has a second: throughput). */
struct ng_rma_fig {
	const char *test; /* NULL: a test this table does not know */
	const char *name; /* y label */
	const char *key;  /* statistics key drawn */
	enum ng_unit unit;
	unsigned panel;
	enum ng_rma_x x;
};

static const struct ng_rma_fig ng_rma_figs[] = {
    {"put-pingpong", "Time per epoch", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"get-pingpong", "Time per epoch", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"acc-pingpong", "Time per epoch", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"bidir", "Time per epoch", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"put-bw", "Bandwidth", "bandwidth_MBps", NG_UNIT_MBPS, NG_PANEL_BW, NG_RMA_X_SIZE},
    {"get-bw", "Bandwidth", "bandwidth_MBps", NG_UNIT_MBPS, NG_PANEL_BW, NG_RMA_X_SIZE},
    {"sync", "Time per iteration", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_ORIGINS},
    {"multi-origin", "Aggregate bandwidth", "bandwidth_MBps", NG_UNIT_MBPS, NG_PANEL_BW, NG_RMA_X_ORIGINS},
    {"sched-1", "Throughput", "bandwidth_MBps", NG_UNIT_MBPS, NG_PANEL_BW, NG_RMA_X_SIZE},
    {"sched-2", "Time per iteration", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"lock", "Lock, put, unlock", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {NULL, "Time", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
};

static const struct ng_rma_fig *ng_rma_fig_of(const char *test)
{
	const struct ng_rma_fig *f = ng_rma_figs;

	while (f->test && strcmp(f->test, test) != 0)
		f++;
	return f;
}

/* The panels of test @sub's figure. */
static unsigned ng_rma_panels(const char *sub)
{
	const struct ng_rma_fig *f = ng_rma_fig_of(sub);

	return f->panel | (f->test && strcmp(f->test, "lock") == 0 ? NG_PANEL_BW : 0);
}

/* One series of a test: the rows of one synchronisation mode, against size,
 * origins (with one target) or targets (with one origin). */
struct ng_rma_series {
	const char *sync;
	enum ng_rma_x x;
	double size; /* NaN: every size */
	bool single; /* size axis: rows with one origin and one target only (lock) */
	bool panel2; /* lock: the throughput panel */
};

#define NG_RMA_MAXSERIES 32

/* The size of lock's throughput rows: the block's, else the smallest size
 * among rows with several origins. */
static double ng_rma_lock_size(const struct ng_plot_file *pf)
{
	double v = ng_plot_num(json_object_get(pf->doc, "rma"), "lock_throughput_size"), s;
	const json_t *row;
	size_t r;

	if (isfinite(v))
		return v;
	json_array_foreach(pf->rows, r, row)
	{
		s = ng_plot_num(row, "size");
		if (ng_row_is(row, "test", "lock") && ng_plot_num(row, "origins") > 1 && !(s >= v))
			v = s;
	}
	return v;
}

static bool ng_rma_row_in(const json_t *row, const char *test, const struct ng_rma_series *s)
{
	double o = ng_plot_num(row, "origins"), t = ng_plot_num(row, "targets");

	if (!ng_row_is(row, "test", test) || !ng_row_is(row, "sync", s->sync))
		return false;
	if (isfinite(s->size) && ng_plot_num(row, "size") != s->size)
		return false;
	switch (s->x) {
	case NG_RMA_X_SIZE:
		return !s->single || (o <= 1 && t <= 1);
	case NG_RMA_X_ORIGINS:
		return t == 1;
	case NG_RMA_X_TARGETS:
		return o == 1 && t > 1;
	}
	return false;
}

/* Appends series @s unless it is there or holds no row of @pf. */
static void ng_rma_series_add(const struct ng_plot_file *pf, const char *test, struct ng_rma_series *out,
                              size_t *n, const struct ng_rma_series *s)
{
	const json_t *row;
	size_t i, r;

	for (i = 0; i < *n; i++)
		if (strcmp(out[i].sync, s->sync) == 0 && out[i].x == s->x && out[i].panel2 == s->panel2 &&
		    (out[i].size == s->size || (isnan(out[i].size) && isnan(s->size))))
			return;
	if (*n == NG_RMA_MAXSERIES)
		return;
	json_array_foreach(pf->rows, r, row)
	{
		if (ng_rma_row_in(row, test, s)) {
			out[(*n)++] = *s;
			return;
		}
	}
}

/* The series of test @test in file @pf, in the order of their first rows:
 * the first panel's, then (lock) the throughput panel's. */
static size_t ng_rma_series_of(const struct ng_plot_file *pf, const char *test, struct ng_rma_series *out)
{
	const struct ng_rma_fig *f = ng_rma_fig_of(test);
	bool lock = f->test && strcmp(f->test, "lock") == 0;
	bool multi = f->test && strcmp(f->test, "multi-origin") == 0;
	size_t n = 0, r, pass;
	const json_t *row;

	for (pass = 0; pass < (lock ? 2u : 1u); pass++) {
		json_array_foreach(pf->rows, r, row)
		{
			const char *sync = json_string_value(json_object_get(row, "sync"));
			struct ng_rma_series s = {.sync = sync, .x = f->x, .size = NAN, .single = lock};

			if (!sync || !ng_row_is(row, "test", test))
				continue;
			if (pass == 1) {
				s = (struct ng_rma_series){.sync = sync,
				                           .x = NG_RMA_X_ORIGINS,
				                           .size = ng_rma_lock_size(pf),
				                           .panel2 = true};
			} else if (multi) {
				s.size = ng_plot_num(row, "size");
			} else if (f->x == NG_RMA_X_ORIGINS && ng_plot_num(row, "targets") > 1) {
				s.x = NG_RMA_X_TARGETS;
			}
			ng_rma_series_add(pf, test, out, &n, &s);
		}
	}
	return n;
}

/* Columns of every rma table: x, then these. */
static const struct ng_col ng_cols_rma[] = {
    {"x", NG_COL_NUM},
    {"time_us", NG_COL_STATS},
    {"bandwidth_MBps", NG_COL_STATS},
    {"epochs_per_s", NG_COL_STATS},
    {"aggregate_epochs_per_s", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const char *const ng_rma_xkeys[] = {"size", "origins", "targets"};

/* The legend text of a series ("pscw", "pscw, 64 KiB", "pscw, n targets"). */
static void ng_rma_series_name(char *buf, size_t len, const char *test, const struct ng_rma_series *s)
{
	double v = s->size;

	if (strcmp(test, "multi-origin") == 0 && isfinite(v))
		snprintf(buf, len, "%s, %g %s", s->sync, v >= 1024 ? v / 1024 : v, v >= 1024 ? "KiB" : "B");
	else if (strcmp(test, "sync") == 0)
		snprintf(buf, len, "%s, %s", s->sync,
		         s->x == NG_RMA_X_TARGETS ? "1 origin, n targets" : "n origins, 1 target");
	else
		snprintf(buf, len, "%s", s->sync);
}

static void ng_dat_rma(FILE *f, const struct ng_plot_file *pf, const char *test)
{
	struct ng_rma_series ser[NG_RMA_MAXSERIES];
	size_t n = ng_rma_series_of(pf, test, ser), i, r;
	const json_t *row;
	char name[96];

	for (i = 0; i < n; i++) {
		ng_rma_series_name(name, sizeof(name), test, &ser[i]);
		fprintf(f, "%s# table %zu: ", i ? "\n\n" : "", i);
		ng_gp_chars(f, name, false);
		fprintf(f, "%s\n# columns: %s", ser[i].panel2 ? " (throughput)" : "", ng_rma_xkeys[ser[i].x]);
		for (const struct ng_col *c = ng_cols_rma + 1; c->key; c++) {
			if (c->type == NG_COL_NUM)
				fprintf(f, " %s", c->key);
			else
				fprintf(f, " %s_median %s_ci95_lo %s_ci95_hi", c->key, c->key, c->key);
		}
		fputc('\n', f);
		json_array_foreach(pf->rows, r, row)
		{
			bool first = true;

			if (!ng_rma_row_in(row, test, &ser[i]))
				continue;
			ng_dat_json(f, &first, json_object_get(row, ng_rma_xkeys[ser[i].x]));
			for (const struct ng_col *c = ng_cols_rma + 1; c->key; c++) {
				if (c->type == NG_COL_NUM)
					ng_dat_json(f, &first, json_object_get(row, c->key));
				else
					ng_dat_triple(f, &first, json_object_get(row, c->key), "median");
			}
			fputc('\n', f);
		}
	}
}

/* An x axis of rank counts 1..max (linear) in place of the size axis. */
static void ng_rma_xranks(struct ng_fig *g, const char *label)
{
	double max = 1;
	const json_t *row;
	size_t i, r;

	for (i = 0; i < g->n; i++) {
		json_array_foreach(g->files[i]->rows, r, row)
		{
			double o = ng_plot_num(row, "origins"), t = ng_plot_num(row, "targets");

			if (!ng_row_is(row, g->parts->key, g->sub))
				continue;
			max = o > max ? o : max;
			max = t > max ? t : max;
		}
	}
	fprintf(g->gp, "unset logscale x\nset xrange [0.5:%g]\nset xtics %s\nset xlabel '%s'\n", max + 0.5,
	        max <= 16 ? "1" : "autofreq", label);
}

/* One panel: @key of the series of every file, of the first panel or
 * (@panel2) of lock's throughput panel; a STATS key with its CI. */
static void ng_rma_panel(struct ng_fig *g, bool panel2, const char *key)
{
	struct ng_rma_series ser[NG_RMA_MAXSERIES];
	int col = ng_col_of(ng_cols_rma, key);
	bool plain = false;
	char name[96];
	size_t i, k, n;

	for (const struct ng_col *c = ng_cols_rma; c->key; c++)
		plain = plain || (strcmp(c->key, key) == 0 && c->type == NG_COL_NUM);
	for (i = 0; i < g->n; i++) {
		n = ng_rma_series_of(g->files[i], g->sub, ser);
		for (k = 0; k < n; k++) {
			if (ser[k].panel2 != panel2)
				continue;
			ng_rma_series_name(name, sizeof(name), g->sub, &ser[k]);
			if (plain)
				ng_gp_plain_series(g, i, (int)k, col, true, ng_gp_style(g), name, NULL);
			else
				ng_gp_ci_series(g, i, (int)k, col, name, NULL);
		}
	}
}

static void ng_fig_rma(struct ng_fig *g)
{
	const struct ng_rma_fig *f = ng_rma_fig_of(g->sub);
	bool lock = f->test && strcmp(f->test, "lock") == 0;

	if (g->panels & f->panel) {
		fputs("set title '", g->gp);
		ng_gp_chars(g->gp, g->sub, g->term->tex);
		fputs(lock ? ": latency'\n" : "'\n", g->gp);
		if (f->x != NG_RMA_X_SIZE)
			ng_rma_xranks(g,
			              strcmp(g->sub, "sync") == 0 ? "Origins or targets (ranks)" : "Origins");
		ng_gp_panel(g, f->name, f->unit);
		ng_rma_panel(g, false, f->key);
		ng_gp_panel_end(g);
	}
	if (lock && (g->panels & NG_PANEL_BW)) {
		fputs("set title 'lock: throughput of n origins'\n", g->gp);
		ng_rma_xranks(g, "Origins");
		ng_gp_panel(g, "Lock epochs", NG_UNIT_PER_S);
		/* every origin's epochs over the span in which they ran */
		ng_rma_panel(g, true, "aggregate_epochs_per_s");
		ng_gp_panel_end(g);
	}
	fputs("unset title\n", g->gp);
}

/* ------------------------------------------------------------------------
 * Overlap and skew: time against computation, one series per size (and
 * computing side), linear axes
 */

static const struct ng_col ng_cols_overlap[] = {
    {"compute_measured_us", NG_COL_STATS},
    {"time_us", NG_COL_STATS},
    {"compute_us", NG_COL_NUM},
    {"exposed_us", NG_COL_STATS},
    {"overlap_ratio", NG_COL_NUM},
    {"overlap_ratio_lo", NG_COL_NUM},
    {"overlap_ratio_hi", NG_COL_NUM},
    {"overlap_bound", NG_COL_NUM},
    {"size", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_skew[] = {
    {"skew_measured_us", NG_COL_STATS},
    {"time_us", NG_COL_STATS},
    {"skew_us", NG_COL_NUM},
    {"size", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

/* One series: the rows of one size and (overlap) one computing side. */
struct ng_series {
	double size;
	const char *side; /* borrowed; NULL without "side" */
	double t0;        /* median time of the first row (no computation) */
	double xmax;      /* largest measured computation */
};

static bool ng_series_is(const struct ng_series *se, const json_t *row)
{
	const json_t *side = json_object_get(row, "side");

	return ng_plot_num(row, "size") == se->size &&
	       (json_is_string(side) ? se->side && strcmp(se->side, json_string_value(side)) == 0
	                             : !se->side);
}

/* The series of file @pf in the order of its rows, with the x column
 * @xkey; free the array. */
static struct ng_series *ng_series_of(const struct ng_plot_file *pf, const char *xkey, size_t *n_p)
{
	struct ng_series *se = ng_xcalloc(json_array_size(pf->rows) + 1, sizeof(*se));
	size_t n = 0, i, k;
	const json_t *row;

	json_array_foreach(pf->rows, i, row)
	{
		const json_t *side = json_object_get(row, "side");
		double x = ng_plot_num(json_object_get(row, xkey), "median");

		for (k = 0; k < n && !ng_series_is(&se[k], row); k++)
			;
		if (k == n) {
			se[n].size = ng_plot_num(row, "size");
			se[n].side = json_is_string(side) ? json_string_value(side) : NULL;
			se[n].t0 = ng_plot_num(json_object_get(row, "time_us"), "median");
			se[n++].xmax = 0;
		}
		if (x > se[k].xmax)
			se[k].xmax = x;
	}
	*n_p = n;
	return se;
}

/* Table k: the rows of series k. */
static void ng_dat_progress(FILE *f, const struct ng_plot_file *pf, const struct ng_col *cols,
                            const char *xkey)
{
	size_t n, k, i;
	struct ng_series *se = ng_series_of(pf, xkey, &n);
	const json_t *row;

	for (k = 0; k < n; k++) {
		json_t *arr = json_array();
		char *name = ng_xasprintf("size %.17g%s%s", se[k].size, se[k].side ? ", side " : "",
		                          se[k].side ? se[k].side : "");

		json_array_foreach(pf->rows, i, row)
		{
			if (ng_series_is(&se[k], row))
				json_array_append((json_t *)arr, (json_t *)row);
		}
		ng_dat_table(f, (int)k, name, arr, cols, NULL);
		json_decref(arr);
		free(name);
	}
	free(se);
}

static void ng_dat_overlap(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_progress(f, pf, ng_cols_overlap, "compute_measured_us");
}

static void ng_dat_skew(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_progress(f, pf, ng_cols_skew, "skew_measured_us");
}

/* The points of series @k of file @i with their CIs, titled with the file's
 * label and, where the file has several series, the size and side. */
static int ng_series_points(struct ng_fig *g, size_t i, size_t k, const struct ng_series *se, size_t n,
                            const struct ng_col *cols)
{
	char size[64] = "", *suffix;

	if (n > 1) {
		double s = se[k].size;

		if (s >= 1048576 && fmod(s, 1048576) == 0)
			snprintf(size, sizeof(size), "%.0f MiB", s / 1048576);
		else if (s >= 1024 && fmod(s, 1024) == 0)
			snprintf(size, sizeof(size), "%.0f KiB", s / 1024);
		else
			snprintf(size, sizeof(size), "%.0f B", s);
	}
	suffix = se[k].side ? ng_xasprintf("(%s computes%s%s)", se[k].side, size[0] ? ", " : "", size)
	                    : ng_xasprintf("%s", size);
	ng_gp_ci_using(g, i, (int)k, ng_col_of(cols, "time_us"));
	ng_gp_title(g, g->files[i]->label, suffix[0] ? suffix : NULL, NULL);
	free(suffix);
	/* the style ng_gp_ci_using took (1-based) */
	return (int)((size_t)(g->style - 1) % NG_NSTYLES) + 1;
}

/* Tics of the linear x axis from 0 to @xmax: a step of 1, 2 or 5 times a
 * power of ten, about 5 tics (gnuplot's own choice crowds the labels of a
 * panel this narrow). */
static void ng_linear_xtics(struct ng_fig *g, double xmax)
{
	double raw = xmax / 5, mag, step;

	if (!(raw > 0) || !isfinite(raw))
		return;
	mag = pow(10, floor(log10(raw)));
	step = raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
	fprintf(g->gp, "set xtics %g\n", step);
}

/* A key entry for the lines drawn with dash type @dt. */
static void ng_key_line(struct ng_fig *g, const char *dt, const char *title)
{
	ng_gp_next(g);
	fprintf(g->plot, "NaN with lines lw 1 dt %s lc rgb '#666666'", dt);
	g->ntitled++;
	fputs(" title '", g->plot);
	ng_gp_chars(g->plot, title, g->term->tex);
	fputc('\'', g->plot);
}

/* Time per iteration against computation; per series the no-overlap line
 * T(0) + X (dashed) and the perfect-overlap line max(T(0), X) (dotted). */
static void ng_fig_overlap(struct ng_fig *g)
{
	char t0[40];
	size_t i, k, n;
	double xmax = 0;
	bool any = false;

	ng_gp_panel(g, "Time per iteration", NG_UNIT_US);
	for (i = 0; i < g->n; i++) {
		struct ng_series *se = ng_series_of(g->files[i], "compute_measured_us", &n);

		for (k = 0; k < n; k++) {
			int style = ng_series_points(g, i, k, se, n, ng_cols_overlap);

			xmax = fmax(xmax, se[k].xmax);
			const char *color = ng_styles[(size_t)(style - 1) % NG_NSTYLES].color;

			if (!isfinite(se[k].t0))
				continue;
			ng_plot_fmt_exact(t0, sizeof(t0), se[k].t0);
			ng_gp_next(g);
			fprintf(g->plot, "(x >= 0 ? %s + x : NaN) with lines lw 1 dt 2 lc rgb '%s' notitle",
			        t0, color);
			ng_gp_next(g);
			fprintf(g->plot,
			        "(x >= 0 ? (x < %s ? %s : x) : NaN) with lines lw 1 dt 3 lc rgb '%s' notitle",
			        t0, t0, color);
			any = true;
		}
		free(se);
	}
	if (any) {
		ng_key_line(g, "2", "no overlap: T(0) + X");
		ng_key_line(g, "3", "perfect overlap: max(T(0), X)");
	}
	ng_linear_xtics(g, xmax);
	ng_gp_panel_end(g);
}

/* The block entry of @size in @pf's "skew" block, or NULL. */
static const json_t *ng_skew_entry(const struct ng_plot_file *pf, double size)
{
	const json_t *e;
	size_t j;

	json_array_foreach(json_object_get(json_object_get(pf->doc, "skew"), "sizes"), j, e)
	{
		if (ng_plot_num(e, "size") == size)
			return e;
	}
	return NULL;
}

/* The origin's time against the target's computation, with the fitted line
 * and its slope in the key. */
static void ng_fig_skew(struct ng_fig *g)
{
	char a[40], b[40], hi[40];
	size_t i, k, n;
	double xmax = 0;

	ng_gp_panel(g, "Origin's time per operation", NG_UNIT_US);
	for (i = 0; i < g->n; i++) {
		struct ng_series *se = ng_series_of(g->files[i], "skew_measured_us", &n);

		for (k = 0; k < n; k++) {
			int style = ng_series_points(g, i, k, se, n, ng_cols_skew);
			const json_t *e = ng_skew_entry(g->files[i], se[k].size);
			const json_t *slope = json_object_get(e, "slope");
			double va = ng_plot_num(json_object_get(e, "intercept_us"), "value");
			double vb = ng_plot_num(slope, "value"), lo, up;
			char *title;

			xmax = fmax(xmax, se[k].xmax);
			if (!isfinite(va) || !isfinite(vb))
				continue;
			ng_plot_ci(slope, &lo, &up);
			ng_plot_fmt_exact(a, sizeof(a), va);
			ng_plot_fmt_exact(b, sizeof(b), vb);
			ng_plot_fmt_exact(hi, sizeof(hi), se[k].xmax);
			ng_gp_next(g);
			fprintf(g->plot,
			        "(x >= 0 && x <= %s ? %s + %s * x : NaN) with lines ls %d dt solid lw 1", hi,
			        a, b, style);
			title = ng_xasprintf("slope %.2f [%.2f, %.2f]", vb, lo, up);
			ng_gp_title(g, g->files[i]->label, title, NULL);
			free(title);
		}
		free(se);
	}
	ng_linear_xtics(g, xmax);
	ng_gp_panel_end(g);
}

/* ------------------------------------------------------------------------
 * The figure catalogue
 */

struct ng_figure {
	const char *pattern; /* NULL: any other pattern */
	unsigned panels;     /* NG_PANEL_* it can draw */
	const char *block;   /* top-level object with a "sizes" array it needs, or NULL */
	void (*data)(FILE *f, const struct ng_plot_file *pf);
	void (*script)(struct ng_fig *g);
	/* NULL: x is the message size (log2 axis, log y); else linear x and y
	 * axes, x labelled "XNAME (us)" */
	const char *xname;
};

static const struct ng_figure ng_figures[] = {
    {"pingpong", NG_PANEL_LAT | NG_PANEL_BW, NULL, ng_dat_pingpong, ng_fig_pingpong, NULL},
    {"1n", NG_PANEL_LAT | NG_PANEL_BW, NULL, ng_dat_1n, ng_fig_1n, NULL},
    {"n1", NG_PANEL_LAT | NG_PANEL_BW, NULL, ng_dat_1n, ng_fig_1n, NULL},
    {"loggp", NG_PANEL_OVH | NG_PANEL_LAT, "loggp", ng_dat_loggp, ng_fig_loggp, NULL},
    {"plogp", NG_PANEL_LAT, "plogp", ng_dat_plogp, ng_fig_plogp, NULL},
    {"alltoall", NG_PANEL_LAT | NG_PANEL_BW, NULL, ng_dat_alltoall, ng_fig_alltoall, NULL},
    {"bw", NG_PANEL_BW | NG_PANEL_MSG, NULL, ng_dat_bw, ng_fig_bw, NULL},
    {"bibw", NG_PANEL_BW | NG_PANEL_MSG, NULL, ng_dat_bw, ng_fig_bw, NULL},
    {"rma", NG_PANEL_LAT | NG_PANEL_BW, NULL, NULL, ng_fig_rma, NULL},
    {"overlap", NG_PANEL_LAT, "overlap", ng_dat_overlap, ng_fig_overlap, "Computation"},
    {"skew", NG_PANEL_LAT, "skew", ng_dat_skew, ng_fig_skew, "Computation at the target (skew)"},
    {NULL, NG_PANEL_LAT, NULL, ng_dat_generic, ng_fig_generic, NULL},
};

static const struct ng_figure_parts ng_figure_parts[] = {
    {"rma", "test", ng_rma_panels, ng_dat_rma},
    {NULL, NULL, NULL, NULL},
};

static const struct ng_figure_parts *ng_figure_parts_of(const char *pattern)
{
	const struct ng_figure_parts *d = ng_figure_parts;

	while (d->pattern && strcmp(d->pattern, pattern) != 0)
		d++;
	return d->pattern ? d : NULL;
}

static bool ng_fig_linear(const struct ng_fig *g)
{
	return g->desc->xname != NULL;
}

static const struct ng_figure *ng_figure_of(const char *pattern)
{
	const struct ng_figure *d = ng_figures;

	while (d->pattern && strcmp(d->pattern, pattern) != 0)
		d++;
	return d;
}

static const char *const ng_kind_names[] = {
    [NG_PLOT_KIND_AUTO] = "auto",
    [NG_PLOT_KIND_LATENCY] = "latency",
    [NG_PLOT_KIND_BANDWIDTH] = "bandwidth",
    [NG_PLOT_KIND_OVERHEAD] = "overhead",
};

static unsigned ng_kind_panels(enum ng_plot_kind kind)
{
	switch (kind) {
	case NG_PLOT_KIND_LATENCY:
		return NG_PANEL_LAT;
	case NG_PLOT_KIND_BANDWIDTH:
		return NG_PANEL_BW | NG_PANEL_MSG;
	case NG_PLOT_KIND_OVERHEAD:
		return NG_PANEL_OVH;
	case NG_PLOT_KIND_AUTO:
		break;
	}
	return ~0u;
}

/* Checks that @pf can be drawn by @d (reported once, naming the file). */
static ng_status ng_figure_check(const struct ng_figure *d, const struct ng_plot_file *pf)
{
	const json_t *b;

	if (d->block) {
		b = json_object_get(pf->doc, d->block);
		if (!json_is_object(b) || !json_is_array(json_object_get(b, "sizes"))) {
			ng_error("%s: no \"%s\" block with \"sizes\" to plot%s", pf->path, d->block,
			         pf->complete ? "" : " (the run did not complete)");
			return NG_ERR_PROTO;
		}
	}
	if (!d->pattern && !ng_first_stats_key(pf)) {
		ng_error("%s: no statistics in the rows of pattern \"%s\" to plot", pf->path, pf->pattern);
		return NG_ERR_PROTO;
	}
	return NG_OK;
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
	if (g->parts)
		g->parts->data(f, pf, g->sub);
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

				if (k == 0 && g->parts && !ng_row_is(el, g->parts->key, g->sub))
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
	ng_gp_chars(f, ng_basename(g->stem), false);
	fputs(".gp\n\n", f);
	fputs("set encoding utf8\n", f);
	fprintf(f, "set terminal %s size %g%s,%g%s\n", g->term->setting,
	        NG_PANEL_W * npanels * g->term->per_inch, g->term->unit, NG_PANEL_H * g->term->per_inch,
	        g->term->unit);
	fputs("set output '", f);
	ng_gp_chars(f, ng_basename(g->stem), false);
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

static ng_status ng_fig_write(struct ng_fig *g)
{
	char *path = ng_xasprintf("%s.gp", g->stem);
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

/* ------------------------------------------------------------------------
 * gnuplot
 */

static bool ng_is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* @name itself when it holds a '/', else the first match in $PATH. */
static char *ng_which(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char *cand;

	if (strchr(name, '/'))
		return ng_is_executable(name) ? ng_xasprintf("%s", name) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			cand = ng_xasprintf("./%s", name);
		else
			cand = ng_xasprintf("%.*s/%s", (int)(end - p), p, name);
		if (ng_is_executable(cand))
			return cand;
		free(cand);
		if (!*end)
			return NULL;
	}
}

char *ng_plot_find_gnuplot(void)
{
	const char *env = getenv("NGAUGE_GNUPLOT");
	char *path;

	if (env && *env)
		return ng_which(env);
	path = ng_which(NG_GNUPLOT);
	return path ? path : ng_which("gnuplot");
}

/* Runs "gnuplot SCRIPT" in directory @dir; shows gnuplot's messages only
 * when it fails. */
static ng_status ng_gnuplot_run(const char *gnuplot, const char *dir, const char *script)
{
	char *log = ng_xcalloc(NG_GNUPLOT_LOG_MAX + 1, 1);
	char arg0[] = "gnuplot";
	char *args[] = {arg0, (char *)ng_basename(script), NULL};
	size_t used = 0;
	ng_status rc = NG_ERR_SYS;
	int pipefd[2], status, devnull;
	ssize_t got;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		ng_error("cannot run gnuplot: pipe: %s", strerror(errno));
		goto out_free_log;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ng_error("cannot run gnuplot: fork: %s", strerror(errno));
		goto out_close_pipe;
	}
	if (pid == 0) {
		devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		if (chdir(dir) != 0) {
			dprintf(STDERR_FILENO, "cannot enter %s: %s\n", dir, strerror(errno));
			_exit(126);
		}
		execv(gnuplot, args);
		dprintf(STDERR_FILENO, "cannot execute %s: %s\n", gnuplot, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	for (;;) {
		char buf[4096];

		got = read(pipefd[0], buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (used < NG_GNUPLOT_LOG_MAX) {
			size_t room = NG_GNUPLOT_LOG_MAX - used;
			size_t take = (size_t)got < room ? (size_t)got : room;

			memcpy(log + used, buf, take);
			used += take;
		}
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ng_error("cannot run gnuplot: waitpid: %s", strerror(errno));
			goto out_close_pipe;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rc = NG_OK;
		goto out_close_pipe;
	}
	fputs(log, stderr);
	if (used && log[used - 1] != '\n')
		fputc('\n', stderr);
	if (WIFEXITED(status))
		ng_error("gnuplot failed on %s (exit status %d)", script, WEXITSTATUS(status));
	else
		ng_error("gnuplot failed on %s (signal %d)", script, WTERMSIG(status));
out_close_pipe:
	close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
out_free_log:
	free(log);
	return rc;
}

/* ------------------------------------------------------------------------
 * Rendering groups
 */

/* The terminal of @out by its extension, or NULL. */
static const struct ng_term *ng_term_of(const char *out)
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

/* A pattern name made safe for a file name. */
static char *ng_file_word(const char *s)
{
	char *w = ng_xasprintf("%s", s), *p;

	for (p = w; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			*p = '_';
	}
	return w;
}

/*
 * Replaces each figure of a pattern drawn in parts (ng_figure_parts) by one
 * figure per part with a panel that --kind keeps; the others stay.  A
 * pattern left with no figure is a usage error (reported).
 */
static ng_status ng_figs_split(struct ng_fig **figs_p, size_t *n_p, enum ng_plot_kind kind)
{
	struct ng_fig *in = *figs_p, *out;
	size_t n = *n_p, cap = n, k = 0, i, j, r, s, nsubs;
	const char **subs;
	ng_status rc = NG_OK;
	const json_t *row;

	for (i = 0; i < n; i++)
		for (j = 0; in[i].parts && j < in[i].n; j++)
			cap += json_array_size(in[i].files[j]->rows);
	out = ng_xcalloc(cap, sizeof(*out));
	subs = ng_xcalloc(cap, sizeof(*subs));
	for (i = 0; i < n; i++) {
		struct ng_fig *g = &in[i];
		const char *key = g->parts ? g->parts->key : NULL;
		size_t before = k;

		if (!g->parts) {
			out[k++] = *g;
			continue;
		}
		/* the parts, each once, in the order of their first rows */
		for (j = nsubs = 0; j < g->n; j++) {
			json_array_foreach(g->files[j]->rows, r, row)
			{
				const char *v = json_string_value(json_object_get(row, key));

				for (s = 0; v && s < nsubs && strcmp(subs[s], v) != 0; s++)
					;
				if (v && s == nsubs)
					subs[nsubs++] = v;
			}
		}
		for (s = 0; s < nsubs; s++) {
			unsigned panels = g->parts->panels_of(subs[s]) & ng_kind_panels(kind);

			if (!panels)
				continue;
			out[k] = *g;
			out[k].sub = subs[s];
			out[k].panels = panels;
			out[k].files = ng_xcalloc(g->n, sizeof(*g->files));
			out[k].n = 0;
			/* the files with rows of this part */
			for (j = 0; j < g->n; j++) {
				json_array_foreach(g->files[j]->rows, r, row)
				{
					if (ng_row_is(row, key, subs[s]))
						break;
				}
				if (r < json_array_size(g->files[j]->rows))
					out[k].files[out[k].n++] = g->files[j];
			}
			k++;
		}
		if (k == before && !rc) {
			if (nsubs)
				ng_error("plot: --kind %s has no panel for any %s of pattern \"%s\" (%s)",
				         ng_kind_names[kind], key, g->files[0]->pattern, g->files[0]->path);
			else
				ng_error("plot: no row of pattern \"%s\" names its %s (%s)",
				         g->files[0]->pattern, key, g->files[0]->path);
			rc = NG_ERR_USAGE;
		}
		free(g->files);
	}
	free(subs);
	free(in);
	*figs_p = out;
	*n_p = k;
	return rc;
}

ng_status ng_plot_render(const struct ng_plot_file *files, size_t n, const struct ng_plot_req *req)
{
	const struct ng_term *term = ng_term_of(req->out);
	size_t *group = ng_xcalloc(n, sizeof(*group)); /* figure of each file */
	struct ng_fig *figs = ng_xcalloc(n, sizeof(*figs));
	size_t nfigs = 0, i, j;
	char *stem, *dir, *slash;
	ng_status rc = NG_OK;

	if (!term) {
		ng_error("%s: unknown figure type (the name must end in .pdf, .svg, .png or .tex)", req->out);
		free(group);
		free(figs);
		return NG_ERR_USAGE;
	}
	stem = ng_xasprintf("%.*s", (int)(strrchr(req->out, '.') - req->out), req->out);
	slash = strrchr(stem, '/');
	dir = slash ? ng_xasprintf("%.*s", slash == stem ? 1 : (int)(slash - stem), stem) : ng_xasprintf(".");

	/* group by pattern, in the order of each group's first file */
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(files[j].pattern, files[i].pattern) != 0; j++)
			;
		if (j < i) {
			group[i] = group[j];
			continue;
		}
		group[i] = nfigs;
		figs[nfigs].term = term;
		figs[nfigs].desc = ng_figure_of(files[i].pattern);
		figs[nfigs].parts = ng_figure_parts_of(files[i].pattern);
		figs[nfigs].panels = figs[nfigs].desc->panels & ng_kind_panels(req->kind);
		figs[nfigs].files = ng_xcalloc(n, sizeof(*figs[nfigs].files));
		if (!figs[nfigs++].panels) {
			ng_error("plot: --kind %s has no panel for pattern \"%s\" (%s)",
			         ng_kind_names[req->kind], files[i].pattern, files[i].path);
			rc = NG_ERR_USAGE;
		}
	}
	if (rc)
		goto out_free_figs;
	for (i = 0; i < n; i++) {
		struct ng_fig *g = &figs[group[i]];

		g->files[g->n++] = &files[i];
		rc = ng_figure_check(g->desc, &files[i]);
		if (rc)
			goto out_free_figs;
	}
	rc = ng_figs_split(&figs, &nfigs, req->kind);
	if (rc)
		goto out_free_figs;

	/* names, data and scripts */
	for (i = 0; i < nfigs; i++) {
		struct ng_fig *g = &figs[i];

		if (nfigs == 1) {
			g->stem = ng_xasprintf("%s", stem);
		} else {
			char *word = ng_file_word(g->files[0]->pattern);
			char *part = g->sub ? ng_file_word(g->sub) : NULL;

			g->stem = part ? ng_xasprintf("%s-%s-%s", stem, word, part)
			               : ng_xasprintf("%s-%s", stem, word);
			free(word);
			free(part);
		}
		g->dat = ng_xcalloc(g->n, sizeof(*g->dat));
		for (j = 0; j < g->n; j++)
			g->dat[j] = g->n == 1 ? ng_xasprintf("%s.dat", g->stem)
			                      : ng_xasprintf("%s-%zu.dat", g->stem, j + 1);
		rc = ng_fig_write(g);
		if (rc)
			goto out_free_figs;
	}

	/* figures */
	for (i = 0; i < nfigs && req->gnuplot; i++) {
		char *script = ng_xasprintf("%s.gp", figs[i].stem);

		rc = ng_gnuplot_run(req->gnuplot, dir, script);
		free(script);
		if (rc)
			goto out_free_figs;
		if (!req->quiet)
			printf("%s%s\n", figs[i].stem, term->ext);
		if (req->made) {
			char *fig = ng_xasprintf("%s%s", figs[i].stem, term->ext);

			req->made(req->made_data, fig);
			free(fig);
		}
	}

out_free_figs:
	for (i = 0; i < nfigs; i++) {
		for (j = 0; figs[i].dat && j < figs[i].n; j++)
			free(figs[i].dat[j]);
		free(figs[i].dat);
		free(figs[i].files);
		free(figs[i].stem);
	}
	free(figs);
	free(group);
	free(dir);
	free(stem);
	return rc;
}

/* ------------------------------------------------------------------------
 * ngauge plot
 */

static void ng_plot_usage(FILE *f)
{
	fputs("usage: ngauge plot FILE... [-o OUT.pdf|.svg|.png|.tex] [--label NAME]... [--kind KIND]\n"
	      "  Draws result files (schema " NG_PLOT_SCHEMA ") with gnuplot; one figure per pattern.\n"
	      "  -o, --output OUT   figure file; the extension picks pdf, svg, png or LaTeX (cairolatex)\n"
	      "                     (default: the first FILE with .json replaced by .pdf)\n"
	      "  --label NAME       legend text of the next file, in the order of the files\n"
	      "  --kind KIND        auto (every panel), latency, bandwidth, overhead (loggp o_s, o_r)\n"
	      "  Beside OUT: OUT.gp (gnuplot script) and OUT.dat or OUT-N.dat (data).\n"
	      "  NGAUGE_GNUPLOT=PATH chooses the gnuplot program.\n",
	      f);
}

/* The value of option @longname (or @shortname, NULL when none) at argv[*i]
 * ("-o X", "--output X", "--output=X", "-oX"), advancing *i; NULL when
 * argv[*i] is not that option.  A missing value is reported as
 * "ARGV0: OPTION needs @what (see ngauge ARGV0 --help)" and sets *bad_p. */
static const char *ng_opt_value(int argc, char **argv, int *i, const char *shortname, const char *longname,
                                const char *what, bool *bad_p)
{
	const char *a = argv[*i];
	size_t len = strlen(longname);

	if (strncmp(a, longname, len) == 0 && a[len] == '=')
		return a + len + 1;
	if (shortname && strncmp(a, shortname, 2) == 0 && a[2])
		return a + 2;
	if (strcmp(a, longname) != 0 && !(shortname && strcmp(a, shortname) == 0))
		return NULL;
	if (*i + 1 >= argc) {
		ng_error("%s: %s needs %s (see ngauge %s --help)", argv[0], a, what, argv[0]);
		*bad_p = true;
		return NULL;
	}
	return argv[++*i];
}

int ng_plot_cmdline(struct ng_plot_cmdline *cl, int argc, char **argv)
{
	bool bad = false, dashdash = false;
	const char *v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (dashdash || a[0] != '-' || !a[1]) {
			cl->paths[cl->npaths++] = argv[i];
		} else if (strcmp(a, "--") == 0) {
			dashdash = true;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			cl->usage(stdout);
			return 0;
		} else if ((v = ng_opt_value(argc, argv, &i, "-o", "--output", cl->out_what, &bad))) {
			cl->out = v;
		} else if (bad) {
			return 2;
		} else {
			int own = cl->own ? cl->own(cl->own_data, argc, argv, &i) : 0;

			if (own < 0)
				return 2;
			if (own == 0) {
				ng_error("%s: unknown option %s (see ngauge %s --help)", argv[0], a, argv[0]);
				return 2;
			}
		}
	}
	if (!cl->npaths) {
		ng_error("%s: no result file given (see ngauge %s --help)", argv[0], argv[0]);
		return 2;
	}
	return -1;
}

int ng_plot_stem_len(const char *file)
{
	size_t len = strlen(file);

	if (len > 5 && strcmp(file + len - 5, ".json") == 0)
		len -= 5;
	return (int)len;
}

/* plot's own options. */
struct ng_plot_opts {
	const char **labels; /* --label NAME, in order */
	size_t nlabels;
	struct ng_plot_req *req; /* --kind KIND into req->kind */
};

/* ng_plot_cmdline's @own for plot: --label NAME, --kind KIND. */
static int ng_plot_own(void *data, int argc, char **argv, int *i)
{
	struct ng_plot_opts *po = data;
	bool bad = false;
	const char *v;
	size_t k;

	if ((v = ng_opt_value(argc, argv, i, NULL, "--label", "a value", &bad))) {
		po->labels[po->nlabels++] = v;
		return 1;
	}
	if (bad)
		return -1;
	if ((v = ng_opt_value(argc, argv, i, NULL, "--kind", "a value", &bad))) {
		for (k = 0; k < sizeof(ng_kind_names) / sizeof(ng_kind_names[0]); k++) {
			if (strcmp(v, ng_kind_names[k]) == 0)
				break;
		}
		if (k == sizeof(ng_kind_names) / sizeof(ng_kind_names[0])) {
			ng_error("plot: unknown --kind \"%s\" (auto, latency, bandwidth, overhead)", v);
			return -1;
		}
		po->req->kind = (enum ng_plot_kind)k;
		return 1;
	}
	return bad ? -1 : 0;
}

int ng_plot_main(int argc, char **argv)
{
	char **paths = ng_xcalloc((size_t)argc, sizeof(*paths));
	const char **labels = ng_xcalloc((size_t)argc, sizeof(*labels));
	struct ng_plot_req req = {.kind = NG_PLOT_KIND_AUTO};
	struct ng_plot_opts po = {.labels = labels, .req = &req};
	struct ng_plot_cmdline cl = {
	    .usage = ng_plot_usage,
	    .out_what = "a value",
	    .own = ng_plot_own,
	    .own_data = &po,
	    .paths = paths,
	};
	struct ng_plot_file *files = NULL;
	size_t npaths, nlabels, nloaded = 0, k;
	const char *out;
	char *out_default = NULL, *gnuplot = NULL;
	ng_status rc;
	int status;

	status = ng_plot_cmdline(&cl, argc, argv);
	if (status >= 0)
		goto out_free_args;
	status = 2;
	npaths = cl.npaths;
	nlabels = po.nlabels;
	out = cl.out;
	if (nlabels > npaths) {
		ng_error("plot: %zu --label values for %zu files", nlabels, npaths);
		goto out_free_args;
	}
	if (!out)
		out = out_default = ng_xasprintf("%.*s.pdf", ng_plot_stem_len(paths[0]), paths[0]);
	if (!ng_term_of(out)) {
		ng_error("plot: %s: unknown figure type (the name must end in .pdf, .svg, .png or .tex)",
		         out);
		goto out_free_args;
	}

	status = 1;
	files = ng_xcalloc(npaths, sizeof(*files));
	for (nloaded = 0; nloaded < npaths; nloaded++) {
		if (ng_plot_file_load(paths[nloaded], &files[nloaded]) != NG_OK)
			goto out_free_files;
	}
	if (ng_plot_labels(files, npaths, labels, nlabels) != NG_OK)
		goto out_free_files;
	gnuplot = ng_plot_find_gnuplot();
	req.out = out;
	req.gnuplot = gnuplot;
	rc = ng_plot_render(files, npaths, &req);
	if (rc == NG_ERR_USAGE)
		status = 2;
	if (rc)
		goto out_free_files;
	if (!gnuplot) {
		ng_error("gnuplot not found: install the Debian package gnuplot-nox (or set NGAUGE_GNUPLOT); "
		         "scripts and data are written beside %s",
		         out);
		goto out_free_files;
	}
	status = 0;

out_free_files:
	for (k = 0; k < nloaded; k++)
		ng_plot_file_release(&files[k]);
	free(files);
	free(gnuplot);
out_free_args:
	free(out_default);
	free(labels);
	free(paths);
	return status;
}
