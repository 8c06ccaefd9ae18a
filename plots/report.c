/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ngauge report: result files -> one self-contained HTML page (contract in
 * plot.h).  Tables are generated from the documents' data (any array of
 * row objects becomes a table: statistics as median and 95% CI, parameters
 * as value and CI, plain numbers and words as they are); figures are drawn by
 * the plot path with the svg terminal into a temporary directory and pasted
 * inline, their element ids prefixed so that several figures on one page do
 * not share ids.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "plot.h"
#include "plot_priv.h"

#define NG_DASH "\xe2\x80\x93" /* U+2013 EN DASH: no value */

/* Longest JSON text shown for a nested value in a key/value table. */
#define NG_REPORT_JSON_MAX 2000

/* Top-level keys shown in their own sections; any other key is listed under
 * "Other data". */
static const char *const ng_report_known[] = {
    "schema", "complete",   "module",  "pattern", "ranks", "command",  "started", "finished", "launch", "env",
    "timer",  "parameters", "results", "loggp",   "plogp", "alltoall", "bw",      "overlap",  "skew",   NULL,
};

static const char ng_report_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:72rem;"
    "margin:1.5rem auto;padding:0 1rem;color:#111;line-height:1.4}\n"
    "h1{font-size:1.6rem}\n"
    "h2{font-size:1.3rem;border-bottom:2px solid #333;padding-bottom:.2rem;margin-top:2.5rem}\n"
    "h3{font-size:1.05rem;margin:1.2rem 0 .4rem}\n"
    "table{border-collapse:collapse;font-size:.85rem;margin:.3rem 0}\n"
    "th,td{border:1px solid #bbb;padding:.15rem .45rem;text-align:left;vertical-align:top}\n"
    "th{background:#eee}tbody tr:nth-child(even){background:#f7f7f7}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "table.kv th{font-weight:normal;color:#444;background:#f3f3f3}\n"
    "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;word-break:break-all}\n"
    ".flag{color:#a00}.warn{border:1px solid #c60;background:#fff4e5;padding:.4rem .7rem}\n"
    ".note{color:#444;font-size:.85rem}\n"
    "figure{margin:.5rem 0}figure svg{max-width:100%;height:auto}\n"
    "@media print{h2{break-before:page}figure,table{break-inside:avoid}}\n";

/* One report being written. */
struct ng_report {
	FILE *f;             /* OUT.tmp */
	char *tmpdir;        /* figures; NULL when not drawing */
	const char *gnuplot; /* NULL: no figures */
	unsigned nfig;       /* figures so far (file names, id prefixes) */
};

/* ------------------------------------------------------------------------
 * Text
 */

/* HTML text or attribute value of @s. */
static void ng_html(FILE *f, const char *s)
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
static void ng_html_ci(FILE *f, const json_t *o)
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
static void ng_html_value(FILE *f, const json_t *v)
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
static void ng_report_kv(FILE *f, const json_t *o)
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
static void ng_report_rows(FILE *f, const json_t *rows)
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

/* ------------------------------------------------------------------------
 * Figures
 */

/* Pastes the SVG document @path from its <svg> element on, with every id
 * and every reference to one prefixed by "f@n-". */
static ng_status ng_report_paste_svg(struct ng_report *r, const char *path)
{
	static const char *const marks[] = {" id=\"", " id='", "href=\"#", "href='#", "url(#", NULL};
	char prefix[32];
	char *text = NULL, *p;
	size_t len = 0, k;
	FILE *in;

	in = fopen(path, "r");
	if (!in) {
		ng_error("cannot read %s: %s", path, strerror(errno));
		return NG_ERR_IO;
	}
	if (getdelim(&text, &len, '\0', in) < 0 || !(p = strstr(text, "<svg"))) {
		ng_error("%s: not an SVG figure", path);
		free(text);
		fclose(in);
		return NG_ERR_IO;
	}
	fclose(in);
	snprintf(prefix, sizeof(prefix), "f%u-", r->nfig);
	while (*p) {
		for (k = 0; marks[k] && strncmp(p, marks[k], strlen(marks[k])) != 0; k++)
			;
		if (marks[k]) {
			fputs(marks[k], r->f);
			fputs(prefix, r->f);
			p += strlen(marks[k]);
		} else {
			fputc(*p++, r->f);
		}
	}
	free(text);
	return NG_OK;
}

/* Draws @files (one pattern) with the svg terminal and pastes the figure. */
static ng_status ng_report_figure(struct ng_report *r, const struct ng_plot_file *files, size_t n)
{
	struct ng_plot_req req = {.kind = NG_PLOT_KIND_AUTO, .gnuplot = r->gnuplot, .quiet = true};
	char *out;
	ng_status rc;

	if (!r->gnuplot)
		return NG_OK;
	r->nfig++;
	if (asprintf(&out, "%s/f%u.svg", r->tmpdir, r->nfig) < 0) {
		ng_error("out of memory");
		abort();
	}
	req.out = out;
	rc = ng_plot_render(files, n, &req);
	if (rc == NG_OK) {
		fputs("<figure>\n", r->f);
		rc = ng_report_paste_svg(r, out);
		fputs("</figure>\n", r->f);
	}
	free(out);
	return rc;
}

/* Removes the temporary directory and what the figures left in it. */
static void ng_report_rmtmp(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char *path;

	if (d) {
		while ((de = readdir(d))) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
				continue;
			unlink(path);
			free(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* ------------------------------------------------------------------------
 * Sections
 */

/*
 * The overlap and skew blocks: their settings (the block's plain entries),
 * the figures of every size with their CIs, and the calibration of the
 * computation on each rank.
 */
static void ng_report_progress(FILE *f, const struct ng_plot_file *pf, const char *key, const char *title,
                               const char *note)
{
	const json_t *b = json_object_get(pf->doc, key), *compute;
	json_t *plain, *v;
	const char *k;

	if (!json_is_object(b))
		return;
	fprintf(f, "<h3>%s</h3>\n<p class=\"note\">%s</p>\n", title, note);
	plain = json_object();
	if (!plain) {
		ng_error("out of memory");
		abort();
	}
	json_object_foreach((json_t *)b, k, v)
	{
		if (!json_is_array(v) && !json_is_object(v))
			json_object_set(plain, k, v);
	}
	ng_report_kv(f, plain);
	json_decref(plain);
	if (json_is_array(json_object_get(b, "sizes")))
		ng_report_rows(f, json_object_get(b, "sizes"));
	compute = json_object_get(b, "compute");
	if (json_is_object(compute)) {
		fputs("<p class=\"note\">Calibrated computation (", f);
		ng_html_value(f, json_object_get(compute, "kernel"));
		fputs("): iterations per " NG_MICRO
		      "s at the start and at the end of the run, per rank.</p>\n",
		      f);
		if (json_is_array(json_object_get(compute, "ranks")))
			ng_report_rows(f, json_object_get(compute, "ranks"));
	}
}

static void ng_report_pattern_blocks(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *b;
	const char *key;
	json_t *v;
	bool other = false;
	size_t i;

	b = json_object_get(pf->doc, "loggp");
	if (json_is_object(b)) {
		fputs("<h3>LogGP parameters</h3>\n<p class=\"note\">Per protocol segment, with 95% "
		      "confidence intervals; the transmission time is fitted as "
		      "T(s) = g + (s &minus; from)&middot;G on each segment.</p>\n",
		      f);
		if (json_is_array(json_object_get(b, "segments")))
			ng_report_rows(f, json_object_get(b, "segments"));
		fputs("<table class=\"kv\"><tbody>\n<tr><th>messages per train (n)</th><td>", f);
		ng_html_value(f, json_object_get(b, "n"));
		fputs("</td></tr>\n<tr><th>breakpoints (bytes)</th><td>", f);
		json_array_foreach(json_object_get(b, "breakpoints"), i, v)
		{
			if (i)
				fputs(", ", f);
			ng_html_value(f, v);
		}
		if (!json_array_size(json_object_get(b, "breakpoints")))
			fputs("none", f);
		fputs("</td></tr>\n", f);
		if (json_is_string(json_object_get(b, "loggopsim"))) {
			fputs("<tr><th>LogGOPSim options</th><td><code>", f);
			ng_html(f, json_string_value(json_object_get(b, "loggopsim")));
			fputs("</code></td></tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
		if (json_is_array(json_object_get(b, "sizes"))) {
			fputs("<h3>LogGP measurements per size</h3>\n", f);
			ng_report_rows(f, json_object_get(b, "sizes"));
		}
	}
	b = json_object_get(pf->doc, "plogp");
	if (json_is_object(b)) {
		fputs("<h3>pLogP parameters</h3>\n<table class=\"kv\"><tbody>\n", f);
		fputs("<tr><th>L (" NG_MICRO "s)</th><td>", f);
		v = json_object_get(b, "L_us");
		if (json_is_null(json_object_get(v, "value"))) {
			fputs("<span class=\"flag\">not estimated</span>", f);
		} else {
			ng_html_value(f, json_object_get(v, "value"));
			fputs(" ", f);
			ng_html_ci(f, v);
		}
		fputs("</td></tr>\n</tbody></table>\n", f);
		if (json_is_array(json_object_get(b, "sizes")))
			ng_report_rows(f, json_object_get(b, "sizes"));
	}
	b = json_object_get(pf->doc, "alltoall");
	if (json_is_object(b)) {
		fputs("<h3>Alltoall</h3>\n", f);
		ng_report_kv(f, b);
	}
	b = json_object_get(pf->doc, "bw");
	if (json_is_object(b)) {
		fputs(
		    "<h3>Streaming bandwidth</h3>\n<p class=\"note\">Each repetition is a window of "
		    "non-blocking messages (both ways for bibw) closed by one acknowledgement; bandwidth and "
		    "message rate are per window, MB = 10<sup>6</sup> bytes.</p>\n",
		    f);
		ng_report_kv(f, b);
	}
	ng_report_progress(f, pf, "overlap", "Overlap of communication and computation",
	                   "Per size and computing side: the transfer time T(0) without computation and the "
	                   "overlap ratio (T(0) + X &minus; T(X)) / T(0) at the largest computation X, with "
	                   "95% confidence intervals (the ratio's from a bootstrap); 0: the computation adds "
	                   "to the transfer, 1: the transfer is hidden.");
	ng_report_progress(f, pf, "skew", "Process skew",
	                   "Per size: the origin's time without skew T(0) and the slope of its time against "
	                   "the target's computation (least squares, 95% confidence intervals); 0: the "
	                   "transfer progresses without the target, 1: the origin waits for all of it.");
	json_object_foreach(pf->doc, key, v)
	{
		for (i = 0; ng_report_known[i] && strcmp(ng_report_known[i], key) != 0; i++)
			;
		if (ng_report_known[i])
			continue;
		if (!other) {
			fputs("<h3>Other data</h3>\n<table class=\"kv\"><tbody>\n", f);
			other = true;
		}
		fputs("<tr><th>", f);
		ng_html(f, key);
		fputs("</th><td>", f);
		ng_html_value(f, v);
		fputs("</td></tr>\n", f);
	}
	if (other)
		fputs("</tbody></table>\n", f);
}

static ng_status ng_report_file(struct ng_report *r, const struct ng_plot_file *pf, size_t idx)
{
	static const char *const run_keys[] = {"module",  "pattern",  "ranks",    "launch", "command",
	                                       "started", "finished", "complete", NULL};
	FILE *f = r->f;
	size_t i;

	fprintf(f, "<section id=\"file-%zu\">\n<h2>%zu. ", idx + 1, idx + 1);
	ng_html(f, pf->label);
	fputs("</h2>\n<p><code>", f);
	ng_html(f, pf->path);
	fputs("</code></p>\n", f);
	if (!pf->complete)
		fputs("<p class=\"warn\">Incomplete run: the file holds the sizes measured before the run "
		      "stopped.</p>\n",
		      f);
	if (pf->oversubscribed) {
		json_t *o = json_object_get(json_object_get(pf->doc, "env"), "oversubscription");

		fprintf(f,
		        "<p class=\"warn\">Oversubscribed: %lld busy-polling ranks shared %lld cores of one "
		        "host, so the times include waiting for a core (they measure the scheduler's time "
		        "slices as much as the network).</p>\n",
		        (long long)json_integer_value(json_object_get(o, "spinning_ranks")),
		        (long long)json_integer_value(json_object_get(o, "cores")));
	}
	fputs("<h3>Run</h3>\n<table class=\"kv\"><tbody>\n", f);
	for (i = 0; run_keys[i]; i++) {
		fprintf(f, "<tr><th>%s</th><td>", run_keys[i]);
		ng_html_value(f, json_object_get(pf->doc, run_keys[i]));
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n<h3>Environment</h3>\n", f);
	ng_report_kv(f, json_object_get(pf->doc, "env"));
	fputs("<h3>Timer</h3>\n", f);
	ng_report_kv(f, json_object_get(pf->doc, "timer"));
	fputs("<h3>Parameters</h3>\n", f);
	ng_report_kv(f, json_object_get(pf->doc, "parameters"));
	fputs("<h3>Results</h3>\n", f);
	ng_report_rows(f, pf->rows);
	ng_report_pattern_blocks(f, pf);
	if (r->gnuplot)
		fputs("<h3>Figure</h3>\n", f);
	return ng_report_figure(r, pf, 1);
}

/* Writes the whole page to r->f. */
static ng_status ng_report_write(struct ng_report *r, const struct ng_plot_file *files, size_t n)
{
	FILE *f = r->f;
	size_t i, j, k, same;
	ng_status rc;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>ngauge report</title>\n"
	      "<style>\n",
	      f);
	fputs(ng_report_css, f);
	fputs("</style>\n</head>\n<body>\n<h1>ngauge report</h1>\n", f);
	fprintf(f, "<p class=\"note\">%zu result file%s, written by ngauge ", n, n == 1 ? "" : "s");
	ng_html(f, NG_VERSION);
	fputs(". Medians with the 95% confidence interval of the median; "
	      "MB = 10<sup>6</sup> bytes.</p>\n<ol>\n",
	      f);
	for (i = 0; i < n; i++) {
		fprintf(f, "<li><a href=\"#file-%zu\">", i + 1);
		ng_html(f, files[i].label);
		fputs("</a> <code>", f);
		ng_html(f, files[i].path);
		fputs("</code></li>\n", f);
	}
	fputs("</ol>\n", f);
	if (!r->gnuplot)
		fputs("<p class=\"warn\">No figures: gnuplot was not found "
		      "(Debian package gnuplot-nox).</p>\n",
		      f);

	/* comparisons: one figure per pattern shared by several files */
	for (i = 0; i < n && r->gnuplot; i++) {
		struct ng_plot_file *copy;

		for (j = 0; j < i && strcmp(files[j].pattern, files[i].pattern) != 0; j++)
			;
		for (k = i, same = 0; k < n; k++)
			same += strcmp(files[k].pattern, files[i].pattern) == 0;
		if (j < i || same < 2)
			continue;
		copy = calloc(same, sizeof(*copy));
		if (!copy) {
			ng_error("out of memory");
			abort();
		}
		for (k = i, same = 0; k < n; k++) {
			if (strcmp(files[k].pattern, files[i].pattern) == 0)
				copy[same++] = files[k];
		}
		fputs("<section>\n<h2>Comparison: ", f);
		ng_html(f, files[i].pattern);
		fputs("</h2>\n", f);
		rc = ng_report_figure(r, copy, same);
		free(copy);
		fputs("</section>\n", f);
		if (rc)
			return rc;
	}
	for (i = 0; i < n; i++) {
		rc = ng_report_file(r, &files[i], i);
		fputs("</section>\n", f);
		if (rc)
			return rc;
	}
	fputs("</body>\n</html>\n", f);
	return NG_OK;
}

/* ------------------------------------------------------------------------
 * ngauge report
 */

static void ng_report_usage(FILE *f)
{
	fputs("usage: ngauge report FILE... [-o OUT.html]\n"
	      "  One self-contained HTML page summarising result files (schema " NG_PLOT_SCHEMA "):\n"
	      "  environment, parameters, per-size table, LogGP/pLogP parameters, figures (inline SVG).\n"
	      "  -o, --output OUT   the page (default: the first FILE with .json replaced by .html)\n"
	      "  NGAUGE_GNUPLOT=PATH chooses the gnuplot program.\n",
	      f);
}

int ng_report_main(int argc, char **argv)
{
	char **paths = calloc((size_t)argc, sizeof(*paths));
	struct ng_plot_cmdline cl = {.usage = ng_report_usage, .out_what = "a file name", .paths = paths};
	struct ng_report r = {0};
	struct ng_plot_file *files = NULL;
	size_t npaths, nloaded = 0, k;
	const char *out, *tmproot;
	char *out_default = NULL, *out_tmp = NULL, *gnuplot = NULL;
	int status;
	ng_status rc;

	if (!paths) {
		ng_error("out of memory");
		return 1;
	}
	status = ng_plot_cmdline(&cl, argc, argv);
	if (status >= 0)
		goto out_free_args;
	status = 2;
	npaths = cl.npaths;
	out = cl.out;
	if (!out) {
		if (asprintf(&out_default, "%.*s.html", ng_plot_stem_len(paths[0]), paths[0]) < 0)
			goto out_nomem;
		out = out_default;
	}

	status = 1;
	files = calloc(npaths, sizeof(*files));
	if (!files)
		goto out_nomem;
	for (nloaded = 0; nloaded < npaths; nloaded++) {
		if (ng_plot_file_load(paths[nloaded], &files[nloaded]) != NG_OK)
			goto out_free_files;
	}
	if (ng_plot_labels(files, npaths, NULL, 0) != NG_OK)
		goto out_free_files;

	gnuplot = ng_plot_find_gnuplot();
	r.gnuplot = gnuplot;
	if (!gnuplot) {
		ng_warn("gnuplot not found: install the Debian package gnuplot-nox; "
		        "the report has no figures");
	} else {
		tmproot = getenv("TMPDIR");
		if (!tmproot || !*tmproot)
			tmproot = "/tmp";
		if (asprintf(&r.tmpdir, "%s/ngauge-report-XXXXXX", tmproot) < 0)
			goto out_nomem;
		if (!mkdtemp(r.tmpdir)) {
			ng_error("cannot create a temporary directory %s: %s", r.tmpdir, strerror(errno));
			free(r.tmpdir);
			r.tmpdir = NULL;
			goto out_free_files;
		}
	}
	if (asprintf(&out_tmp, "%s.tmp", out) < 0)
		goto out_nomem;
	r.f = fopen(out_tmp, "w");
	if (!r.f) {
		ng_error("cannot create %s: %s", out_tmp, strerror(errno));
		goto out_remove_tmpdir;
	}
	rc = ng_report_write(&r, files, npaths);
	if (ferror(r.f) && rc == NG_OK) {
		ng_error("cannot write %s: %s", out_tmp, strerror(errno));
		rc = NG_ERR_IO;
	}
	if (fclose(r.f) != 0 && rc == NG_OK) {
		ng_error("cannot write %s: %s", out_tmp, strerror(errno));
		rc = NG_ERR_IO;
	}
	if (rc == NG_OK && rename(out_tmp, out) != 0) {
		ng_error("cannot rename %s to %s: %s", out_tmp, out, strerror(errno));
		rc = NG_ERR_IO;
	}
	if (rc != NG_OK) {
		unlink(out_tmp);
		goto out_remove_tmpdir;
	}
	printf("%s\n", out);
	status = 0;

out_remove_tmpdir:
	if (r.tmpdir)
		ng_report_rmtmp(r.tmpdir);
out_free_files:
	for (k = 0; k < nloaded; k++)
		ng_plot_file_release(&files[k]);
	free(files);
	free(gnuplot);
	free(r.tmpdir);
	free(out_tmp);
out_free_args:
	free(out_default);
	free(paths);
	return status;

out_nomem:
	ng_error("out of memory");
	status = 1;
	goto out_remove_tmpdir;
}
