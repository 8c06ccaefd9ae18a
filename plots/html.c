/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTML for the report (contract in html.h): text, numbers for people, key
 * headings with their units, key/value tables and tables of rows.
 */
#include <math.h>
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

/* "[lo, hi]" of o's ci95, or a dash. */
void ng_html_ci(FILE *f, const json_t *o)
{
	double lo, hi;

	ng_plot_ci(o, &lo, &hi);
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

			ng_html(f, name ? name : key);
			free(name);
			if (what)
				fprintf(f, " %s", what);
			fprintf(f, " (%s)", units[i].unit);
			return;
		}
	}
	ng_html(f, key);
	if (what)
		fprintf(f, " %s", what);
}

/* ------------------------------------------------------------------------
 * Tables
 */

/* A key/value table of object @o (keys in the document's order). */
void ng_html_kv(FILE *f, const json_t *o)
{
	const char *key;
	json_t *v;

	if (!json_is_object(o) || !json_object_size(o)) {
		fprintf(f, "<p class=\"note\">(none)</p>\n");
		return;
	}
	fputs("<table class=\"kv\"><tbody>\n", f);
	json_object_foreach((json_t *)o, key, v)
	{
		fputs("<tr><th>", f);
		ng_html_key(f, key, NULL);
		fputs("</th><td>", f);
		if (ng_plot_is_stats(v) || ng_plot_is_param(v)) {
			ng_html_value(f, json_object_get(v, ng_plot_is_stats(v) ? "median" : "value"));
			fputs(" ", f);
			ng_html_ci(f, v);
		} else {
			ng_html_value(f, v);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

enum ng_cell { NG_CELL_PLAIN, NG_CELL_STATS, NG_CELL_PARAM };

struct ng_column {
	const char *key;
	enum ng_cell type;
};

/*
 * A table of the objects of @rows: one column per key in the order keys first
 * appear; statistics as median and 95% CI, parameters ({"value", "ci95"}) as
 * value and CI ("flag" shown when there is no value), numbers and words as
 * they are.  Nested arrays and objects of another kind are left out and named
 * in a note.
 */
void ng_html_rows(FILE *f, const json_t *rows)
{
	struct ng_column *cols;
	size_t ncols = 0, cap = 0, i, c;
	const char *key, *skipped = NULL;
	json_t *row, *v;

	json_array_foreach(rows, i, row) cap += json_object_size(row);
	cols = calloc(cap ? cap : 1, sizeof(*cols));
	if (!cols) {
		ng_error("out of memory");
		abort();
	}
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
				cols[ncols++].type = type;
			}
		}
	}

	fputs("<table><thead><tr>", f);
	for (c = 0; c < ncols; c++) {
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
		for (c = 0; c < ncols; c++) {
			v = json_object_get(row, cols[c].key);
			if (cols[c].type == NG_CELL_PLAIN) {
				fputs(json_is_number(v) ? "<td class=\"num\">" : "<td>", f);
				ng_html_value(f, v);
				fputs("</td>", f);
				continue;
			}
			if (cols[c].type == NG_CELL_PARAM && json_is_null(json_object_get(v, "value"))) {
				fputs("<td class=\"flag\">", f);
				if (json_is_string(json_object_get(v, "flag"))) {
					fputs("flagged: ", f);
					ng_html(f, json_string_value(json_object_get(v, "flag")));
				} else {
					fputs("not estimated", f);
				}
				fputs("</td><td></td>", f);
				continue;
			}
			fputs("<td class=\"num\">", f);
			ng_html_value(f,
			              json_object_get(v, cols[c].type == NG_CELL_STATS ? "median" : "value"));
			fputs("</td><td class=\"num\">", f);
			ng_html_ci(f, v);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	if (skipped) {
		fputs("<p class=\"note\">Nested details (such as <code>", f);
		ng_html(f, skipped);
		fputs("</code>) are in the result file.</p>\n", f);
	}
	free(cols);
}
