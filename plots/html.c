/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTML for the report (contract in html.h): text, numbers for people, key
 * headings with their units, key/value tables and tables of rows.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "load.h"

#define NG_DASH "\xe2\x80\x93" /* U+2013 EN DASH: no value */

/* Longest JSON text shown for a nested value in a key/value table. */
#define NG_REPORT_JSON_MAX 2000

/* ------------------------------------------------------------------------
 * Text
 */

/* HTML text or attribute value of @s. */
void ng_html(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* A key's name, a line break allowed after each "_" (long names such as
 * aggregate_epochs_per_s would widen a table). */
static void ng_html_name(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '_') {
			fputs("_<wbr>", f);
		} else {
			char c[2] = {*s, '\0'};

			ng_html(f, c);
		}
	}
}

/* A number for people: integers as integers, large values without exponent,
 * else four significant digits. */
static void ng_fmt_human(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "%s", NG_DASH);
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else if (fabs(v) >= 1e4 && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

static void ng_html_num(FILE *f, double v)
{
	char buf[64];

	ng_fmt_human(buf, sizeof(buf), v);
	fputs(buf, f);
}

/* "[lo, hi]" of o's total interval (ci95_total, else ci95: as the table on
 * stdout), or a dash. */
void ng_html_ci(FILE *f, const json_t *o)
{
	double lo, hi;

	ng_plot_ci_total(o, &lo, &hi);
	if (!isfinite(lo) && !isfinite(hi)) {
		fputs(NG_DASH, f);
		return;
	}
	fputc('[', f);
	ng_html_num(f, lo);
	fputs(", ", f);
	ng_html_num(f, hi);
	fputc(']', f);
}

/* Any JSON value as text: strings as they are, numbers for people, nested
 * values as compact JSON (shortened). */
void ng_html_value(FILE *f, const json_t *v)
{
	char *text;

	if (json_is_string(v)) {
		ng_html(f, json_string_value(v));
	} else if (json_is_number(v)) {
		ng_html_num(f, json_number_value(v));
	} else if (json_is_boolean(v)) {
		fputs(json_is_true(v) ? "yes" : "no", f);
	} else if (!v || json_is_null(v)) {
		fputs(NG_DASH, f);
	} else {
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!text) {
			fputs("?", f);
			return;
		}
		if (strlen(text) > NG_REPORT_JSON_MAX)
			strcpy(text + NG_REPORT_JSON_MAX - 3, "...");
		fputs("<code>", f);
		ng_html(f, text);
		fputs("</code>", f);
		free(text);
	}
}

/*
 * A key as a column heading: the unit suffix of the key name becomes a unit
 * in parentheses ("latency_us" -> "latency (µs)"); @what is inserted before
 * the unit ("latency median (µs)").
 */
static void ng_html_key(FILE *f, const char *key, const char *what)
{
	static const struct {
		const char *suffix, *unit;
	} units[] = {
	    {"_us_per_byte", NG_MICRO "s/byte"},
	    {"_per_us", "per " NG_MICRO "s"},
	    {"_us", NG_MICRO "s"},
	    {"_ns", "ns"},
	    {"_MBps", "MB/s"},
	    {"_ppm", "ppm"},
	    {"_ghz", "GHz"},
	};
	size_t len = strlen(key), i, sl;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		sl = strlen(units[i].suffix);
		if (len > sl && strcmp(key + len - sl, units[i].suffix) == 0) {
			char *name = strndup(key, len - sl);

			ng_html_name(f, name ? name : key);
			free(name);
			if (what)
				fprintf(f, " %s", what);
			fprintf(f, " (%s)", units[i].unit);
			return;
		}
	}
	ng_html_name(f, key);
	if (what)
		fprintf(f, " %s", what);
}

/* The characters of the longest part of @s that cannot wrap: the parts
 * between the characters of @breaks (a line may break after them). */
static size_t ng_unbroken(const char *s, const char *breaks)
{
	size_t best = 0, run = 0;

	for (; *s; s++) {
		if (((unsigned char)*s & 0xc0) == 0x80)
			continue; /* the rest of a character */
		run++;
		if (strchr(breaks, *s)) {
			best = run > best ? run : best;
			run = 0;
		}
	}
	return run > best ? run : best;
}

/* ------------------------------------------------------------------------
 * Tables
 */

/* The deepest nesting of objects flattened into a key/value table. */
#define NG_KV_DEPTH 4

/* Whether every element of array @a is an object (and there is one). */
static bool ng_all_objects(const json_t *a)
{
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
	{
		if (!json_is_object(v))
			return false;
	}
	return json_array_size(a) > 0;
}

/* Whether array @a holds numbers, strings, booleans and nulls only. */
static bool ng_all_scalars(const json_t *a)
{
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
	{
		if (json_is_object(v) || json_is_array(v))
			return false;
	}
	return true;
}

/* The rows of a key/value table for object @o, its keys after @prefix
 * ("model.B_net_MBps"): statistics and parameters as value and CI, nested
 * objects flattened, lists of plain values as a list; a list of objects is
 * a table of its own, after this one (appended to @later as [name, list]). */
static void ng_kv_rows(FILE *f, const json_t *o, const char *prefix, int depth, json_t *later)
{
	const char *key;
	json_t *v, *e;
	size_t i;

	json_object_foreach((json_t *)o, key, v)
	{
		char *name = prefix ? ng_plot_xasprintf("%s.%s", prefix, key) : ng_plot_xasprintf("%s", key);

		if (json_is_object(v) && !ng_plot_is_stats(v) && !ng_plot_is_param(v) &&
		    json_object_size(v) && depth < NG_KV_DEPTH) {
			ng_kv_rows(f, v, name, depth + 1, later);
			free(name);
			continue;
		}
		fputs("<tr><th>", f);
		ng_html_key(f, name, NULL);
		fputs("</th><td>", f);
		if (ng_plot_is_stats(v) || ng_plot_is_param(v)) {
			ng_html_value(f, json_object_get(v, ng_plot_is_stats(v) ? "median" : "value"));
			fputs(" ", f);
			ng_html_ci(f, v);
		} else if (json_is_array(v) && ng_all_scalars(v)) {
			json_array_foreach(v, i, e)
			{
				fputs(i ? ", " : "", f);
				ng_html_value(f, e);
			}
			if (!json_array_size(v))
				fputs("none", f);
		} else if (json_is_array(v) && ng_all_objects(v)) {
			fprintf(f, "%zu entries: the table <q>", json_array_size(v));
			ng_html_key(f, name, NULL);
			fputs("</q> below", f);
			json_array_append_new(later, json_pack("[s,O]", name, v));
		} else {
			ng_html_value(f, v);
		}
		fputs("</td></tr>\n", f);
		free(name);
	}
}

/* A key/value table of object @o (keys in the document's order; statistics
 * and parameters as value and CI), nested objects flattened into it, lists
 * of objects as tables after it; or "(none)". */
void ng_html_kv(FILE *f, const json_t *o)
{
	json_t *later, *e;
	size_t i;

	if (!json_is_object(o) || !json_object_size(o)) {
		fprintf(f, "<p class=\"note\">(none)</p>\n");
		return;
	}
	later = json_array();
	if (!later) {
		ng_error("out of memory");
		abort();
	}
	fputs("<table class=\"kv\"><tbody>\n", f);
	ng_kv_rows(f, o, NULL, 0, later);
	fputs("</tbody></table>\n", f);
	json_array_foreach(later, i, e)
	{
		fputs("<h4>", f);
		ng_html_key(f, json_string_value(json_array_get(e, 0)), NULL);
		fputs("</h4>\n", f);
		ng_html_rows(f, json_array_get(e, 1));
	}
	json_decref(later);
}

void ng_html_data(FILE *f, const char *key, const json_t *v)
{
	fputs("<h4>", f);
	ng_html_key(f, key, NULL);
	fputs("</h4>\n", f);
	if (json_is_object(v)) {
		ng_html_kv(f, v);
	} else if (json_is_array(v) && ng_all_objects(v)) {
		ng_html_rows(f, v);
	} else {
		json_t *one = json_pack("{s:O}", key, v);

		if (!one) {
			ng_error("out of memory");
			abort();
		}
		ng_html_kv(f, one);
		json_decref(one);
	}
}

enum ng_cell { NG_CELL_PLAIN, NG_CELL_STATS, NG_CELL_PARAM };

struct ng_column {
	const char *key;
	enum ng_cell type;
	size_t width, ci_width; /* characters that cannot wrap, its own and its CI's */
	bool ident;             /* names the row (the first column, words): in every part of a split table */
	const json_t *first;    /* its value in the first row that has it */
	bool varies;            /* another row has another value */
};

/* The widest part of a table row's cells in characters (about 0.55 em each
 * at the table's size) that fits the narrowest page (A4, margins of 12 mm),
 * the cells' padding counted. */
#define NG_TABLE_CHARS 80
/* A cell's padding and border, in characters. */
#define NG_CELL_PAD 2

/* The characters of value @v's text that cannot wrap. */
static size_t ng_cell_width(const json_t *v)
{
	char buf[64];

	if (json_is_number(v)) {
		ng_fmt_human(buf, sizeof(buf), json_number_value(v));
		return ng_unbroken(buf, "");
	}
	if (json_is_string(v))
		return ng_unbroken(json_string_value(v), " -/,");
	return 3; /* yes, no, a dash */
}

/* The same for the CI "[lo, hi]" of @o (it may wrap after the comma). */
static size_t ng_ci_width(const json_t *o)
{
	char lo[64], hi[64];
	double l, h;

	ng_plot_ci_total(o, &l, &h);
	ng_fmt_human(lo, sizeof(lo), l);
	ng_fmt_human(hi, sizeof(hi), h);
	return (strlen(lo) > strlen(hi) ? strlen(lo) : strlen(hi)) + 2;
}

/* The column heading's widest word. */
static size_t ng_heading_width(const struct ng_column *c)
{
	char *text = ng_plot_xasprintf("%s %s (xx/yy)", c->key, c->type == NG_CELL_STATS ? "median" : "");
	size_t w = ng_unbroken(text, " _(");

	free(text);
	return w;
}

/* One cell (two for statistics and parameters) of row @row. */
static void ng_html_cell(FILE *f, const struct ng_column *c, const json_t *row)
{
	const json_t *v = json_object_get(row, c->key);

	if (c->type == NG_CELL_PLAIN) {
		fputs(json_is_number(v) ? "<td class=\"num\">" : "<td>", f);
		ng_html_value(f, v);
		fputs("</td>", f);
		return;
	}
	if (c->type == NG_CELL_PARAM && json_is_null(json_object_get(v, "value"))) {
		fputs("<td class=\"flag\">", f);
		if (json_is_string(json_object_get(v, "flag"))) {
			fputs("flagged: ", f);
			ng_html(f, json_string_value(json_object_get(v, "flag")));
		} else {
			fputs("not estimated", f);
		}
		fputs("</td><td></td>", f);
		return;
	}
	fputs("<td class=\"num\">", f);
	ng_html_value(f, json_object_get(v, c->type == NG_CELL_STATS ? "median" : "value"));
	fputs("</td><td class=\"num\">", f);
	ng_html_ci(f, v);
	fputs("</td>", f);
}

/* One table of @rows with the columns @cols[k] for which @in[k] is set. */
static void ng_html_table(FILE *f, const json_t *rows, const struct ng_column *cols, size_t ncols,
                          const bool *in, bool continued)
{
	const json_t *row;
	size_t i, c;

	fputs("<table>", f);
	if (continued)
		fputs("<caption>the same rows, more columns</caption>", f);
	fputs("<thead><tr>", f);
	for (c = 0; c < ncols; c++) {
		if (!in[c])
			continue;
		fputs("<th>", f);
		ng_html_key(f, cols[c].key, cols[c].type == NG_CELL_STATS ? "median" : NULL);
		fputs("</th>", f);
		if (cols[c].type != NG_CELL_PLAIN)
			fputs("<th>95% CI</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	json_array_foreach(rows, i, row)
	{
		fputs("<tr>", f);
		for (c = 0; c < ncols; c++)
			if (in[c])
				ng_html_cell(f, &cols[c], row);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/* The characters a column takes that cannot wrap, its padding counted. */
static size_t ng_column_chars(const struct ng_column *c)
{
	return c->width + NG_CELL_PAD + (c->type == NG_CELL_PLAIN ? 0 : c->ci_width + NG_CELL_PAD);
}

/*
 * A table of the objects of @rows: one column per key in the order keys first
 * appear; statistics as median and 95% CI, parameters ({"value", "ci95"}) as
 * value and CI ("flag" shown when there is no value), numbers and words as
 * they are.  Nested arrays and objects of another kind are left out and named
 * in a note.  A table wider than a page is split into several, each with
 * the columns that name the rows (the first, and those of words that
 * differ between rows).
 */
void ng_html_rows(FILE *f, const json_t *rows)
{
	struct ng_column *cols;
	size_t ncols = 0, cap = 0, i, c, width, ident = 0, total = 0;
	const char *key, *skipped = NULL;
	bool *in, continued = false;
	json_t *row, *v;

	json_array_foreach(rows, i, row) cap += json_object_size(row);
	cols = ng_plot_xcalloc(cap, sizeof(*cols));
	json_array_foreach(rows, i, row)
	{
		json_object_foreach(row, key, v)
		{
			enum ng_cell type = ng_plot_is_stats(v)   ? NG_CELL_STATS
			                    : ng_plot_is_param(v) ? NG_CELL_PARAM
			                                          : NG_CELL_PLAIN;

			if (type == NG_CELL_PLAIN && (json_is_array(v) || json_is_object(v))) {
				if (!skipped)
					skipped = key;
				continue;
			}
			for (c = 0; c < ncols && strcmp(cols[c].key, key) != 0; c++)
				;
			if (c == ncols) {
				cols[ncols].key = key;
				cols[ncols].type = type;
				cols[ncols].ident =
				    ncols == 0 || (type == NG_CELL_PLAIN && json_is_string(v));
				cols[ncols].width = ng_heading_width(&cols[ncols]);
				cols[ncols].first = v;
				cols[ncols++].ci_width = 6; /* "95% CI" */
			}
			cols[c].varies = cols[c].varies || !json_equal(v, cols[c].first);
			width = ng_cell_width(
			    type == NG_CELL_PLAIN
			        ? v
			        : json_object_get(v, type == NG_CELL_STATS ? "median" : "value"));
			cols[c].width = width > cols[c].width ? width : cols[c].width;
			if (type != NG_CELL_PLAIN && ng_ci_width(v) > cols[c].ci_width)
				cols[c].ci_width = ng_ci_width(v);
			cols[c].ident = cols[c].ident && (c == 0 || json_is_string(v) || json_is_null(v));
		}
	}
	for (c = 0; c < ncols; c++) {
		/* words the same in every row name none of them (coll's
		 * "timing"): shown in the first part only */
		cols[c].ident = cols[c].ident && (c == 0 || cols[c].varies);
		total += ng_column_chars(&cols[c]);
		ident += cols[c].ident ? ng_column_chars(&cols[c]) : 0;
	}

	in = ng_plot_xcalloc(ncols, sizeof(*in));
	if (total <= NG_TABLE_CHARS || ident >= NG_TABLE_CHARS / 2) {
		for (c = 0; c < ncols; c++)
			in[c] = true;
		ng_html_table(f, rows, cols, ncols, in, false);
	} else {
		/* parts: the naming columns, and as many others as fit */
		for (c = 0; c < ncols;) {
			size_t used = ident, others = 0;

			for (i = 0; i < ncols; i++)
				in[i] = cols[i].ident;
			for (; c < ncols; c++) {
				if (cols[c].ident)
					continue;
				if (others && used + ng_column_chars(&cols[c]) > NG_TABLE_CHARS)
					break;
				in[c] = true;
				used += ng_column_chars(&cols[c]);
				others++;
			}
			if (!others)
				break;
			ng_html_table(f, rows, cols, ncols, in, continued);
			continued = true;
		}
	}
	if (skipped) {
		fputs("<p class=\"note\">Nested details (such as <code>", f);
		ng_html(f, skipped);
		fputs("</code>) are in the result file.</p>\n", f);
	}
	free(in);
	free(cols);
}
