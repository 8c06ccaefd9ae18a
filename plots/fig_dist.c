/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The distribution figure of any pattern (`--kind cdf`, `--kind hist`): per
 * size, the cumulative fraction of the samples (or the fraction in each of
 * NG_DIST_BINS bins per octave) against the value, on a log axis, with the
 * run's --percentiles marked.  Drawn from the rows' "raw" samples, else from
 * their "histogram" buckets; one panel per file, side by side.  It draws the
 * pseudo-pattern "distribution": render.c picks it for those kinds, report.c
 * for a file that holds samples.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"

/* Bins per octave of the hist panel (raw samples and histogram buckets
 * alike are gathered into them). */
#define NG_DIST_BINS 8

/* The STATS key the figure draws: the first key of the first row's "raw",
 * else of its "histogram"; NULL when no row has either. */
static const char *ng_dist_key(const struct ng_plot_file *pf, bool *raw_p)
{
	const json_t *row, *o;
	const char *key;
	json_t *v;
	size_t r;

	json_array_foreach(pf->rows, r, row)
	{
		o = json_object_get(row, "raw");
		json_object_foreach((json_t *)o, key, v)
		{
			if (json_is_array(v) && json_array_size(v)) {
				*raw_p = true;
				return key;
			}
		}
	}
	json_array_foreach(pf->rows, r, row)
	{
		o = json_object_get(row, "histogram");
		json_object_foreach((json_t *)o, key, v)
		{
			if (json_is_array(json_object_get(v, "buckets")) &&
			    json_array_size(json_object_get(v, "buckets"))) {
				*raw_p = false;
				return key;
			}
		}
	}
	return NULL;
}

/* (value, count) pairs of one row's distribution, ascending. */
struct ng_dist_pt {
	double x, n;
};

static int ng_dist_cmp(const void *a, const void *b)
{
	double x = ((const struct ng_dist_pt *)a)->x, y = ((const struct ng_dist_pt *)b)->x;

	return x < y ? -1 : x > y;
}

/* The positive values of @row's distribution of @key: the raw samples
 * (count 1 each) or the buckets' midpoints with their counts, sorted; *np
 * their number, *total the count of them. */
static struct ng_dist_pt *ng_dist_points(const json_t *row, const char *key, bool raw, size_t *np,
                                         double *total)
{
	const json_t *arr, *el;
	struct ng_dist_pt *pts;
	size_t i, k = 0;

	arr = raw ? json_object_get(json_object_get(row, "raw"), key)
	          : json_object_get(json_object_get(json_object_get(row, "histogram"), key), "buckets");
	pts = ng_plot_xcalloc(json_array_size(arr) + 1, sizeof(*pts));
	*total = 0;
	json_array_foreach(arr, i, el)
	{
		double x, n = 1;

		if (raw) {
			x = json_number_value(el);
		} else {
			double lo = json_number_value(json_array_get(el, 0));
			double hi = json_number_value(json_array_get(el, 1));

			x = (lo + hi) / 2;
			n = json_number_value(json_array_get(el, 2));
		}
		if (!json_is_number(raw ? el : json_array_get(el, 0)) || !(x > 0) || !isfinite(x) || !(n > 0))
			continue;
		pts[k].x = x;
		pts[k++].n = n;
		*total += n;
	}
	qsort(pts, k, sizeof(*pts), ng_dist_cmp);
	*np = k;
	return pts;
}

/* The run's --percentiles (parameters), as given. */
static const char *ng_dist_list(const struct ng_plot_file *pf)
{
	const char *list =
	    json_string_value(json_object_get(json_object_get(pf->doc, "parameters"), "percentiles"));

	return list ? list : "50,90,99,99.9,99.99";
}

/*
 * Writes one row's two tables of one kind, @index and @index + 1: the
 * distribution (cdf: value, cumulative fraction; hist: the bin's geometric
 * middle, the fraction of the samples in it), then the percentiles of the
 * run's --percentiles (value, the fraction or the highest bin, "pQ").
 */
static void ng_dat_dist_row(FILE *f, const struct ng_plot_file *pf, const json_t *row, int index, bool hist)
{
	bool raw = false, first = true;
	const char *key = ng_dist_key(pf, &raw);
	double total, cum = 0, peak = 0;
	size_t i, np;
	struct ng_dist_pt *pts = ng_dist_points(row, key, raw, &np, &total);
	const json_t *st = json_object_get(row, key);
	char *copy, *tok, *save;

	fprintf(f, "%s# table %d: size ", index ? "\n\n" : "", index);
	ng_dat_json(f, &first, json_object_get(row, "size"));
	fprintf(f, ", %s, from its %s\n", hist ? "fraction per bin" : "cumulative fraction",
	        raw ? "raw samples" : "histogram");
	if (!hist) {
		for (i = 0; i < np; i++) {
			cum += pts[i].n;
			fprintf(f, "%.17g %.17g\n", pts[i].x, cum / total);
		}
	} else {
		for (i = 0; i < np;) {
			long b = lround(floor(log2(pts[i].x) * NG_DIST_BINS));
			double n = 0;

			for (; i < np && lround(floor(log2(pts[i].x) * NG_DIST_BINS)) == b; i++)
				n += pts[i].n;
			fprintf(f, "%.17g %.17g\n", exp2((b + 0.5) / NG_DIST_BINS), n / total);
			peak = n / total > peak ? n / total : peak;
		}
	}
	fprintf(f, "\n\n# table %d: the percentiles of that size (value, y, name)\n", index + 1);
	copy = ng_plot_xasprintf("%s", ng_dist_list(pf));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char name[32];
		const json_t *v;

		snprintf(name, sizeof(name), "p%s", tok);
		v = json_object_get(st, name);
		if (!json_is_number(v) || !(json_number_value(v) > 0) || !ng_plot_is_word(tok))
			continue;
		first = true;
		ng_dat_json(f, &first, v);
		fprintf(f, " %.17g %s\n", hist ? peak : atof(tok) / 100, name);
	}
	free(copy);
	free(pts);
}

/* Per row four tables (NG_DIST_TABLES): the cdf and its percentiles, the
 * hist and its percentiles. */
#define NG_DIST_TABLES 4

static void ng_dat_dist(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *row;
	size_t r;

	json_array_foreach(pf->rows, r, row)
	{
		ng_dat_dist_row(f, pf, row, (int)r * NG_DIST_TABLES, false);
		ng_dat_dist_row(f, pf, row, (int)r * NG_DIST_TABLES + 2, true);
	}
}

/* A size as the size lists of the command line say it: 1, 64, 1K, 4M. */
static void ng_dist_size(char *buf, size_t len, double s)
{
	static const char *const prefix[] = {"", "K", "M", "G"};
	size_t k = 0;

	while (k + 1 < sizeof(prefix) / sizeof(prefix[0]) && s >= 1024 && fmod(s, 1024) == 0) {
		s /= 1024;
		k++;
	}
	snprintf(buf, len, "size %.10g%s", s, prefix[k]);
}

/* One panel per file: a curve per size, its percentiles as points with
 * their names. */
static void ng_fig_dist_panels(struct ng_fig *g, bool hist)
{
	size_t i, r;
	const json_t *row;

	for (i = 0; i < g->n; i++) {
		bool raw = false;
		const char *key = ng_dist_key(g->files[i], &raw);
		const char *us = strstr(key, "_us");
		char *name = us && !us[3] ? ng_plot_xasprintf("%.*s (%s)", (int)(us - key), key,
		                                              g->term->tex ? "$\\mu$s" : "µs")
		                          : ng_plot_xasprintf("%s", key);
		int index = hist ? 2 : 0;

		ng_gp_panel(g, hist ? "Fraction of the samples" : "Cumulative fraction", NG_UNIT_NONE);
		if (!hist)
			g->yrange = "[0:1.04]";
		fputs("set logscale x 10\nset format x '%.10g'\nset xlabel '", g->gp);
		ng_gp_chars(g->gp, name, g->term->tex);
		fputs("'\n", g->gp);
		if (g->n > 1 && g->legend[i][0]) {
			fputs("set title '", g->gp);
			ng_gp_chars(g->gp, g->legend[i], g->term->tex);
			fputs("'\n", g->gp);
		}
		json_array_foreach(g->files[i]->rows, r, row)
		{
			char size[32], *what;
			int style = ng_gp_style(g);
			const char *k;
			json_t *v;

			/* the size, and the row's words (alltoall's algorithm, rma's
			 * test and sync) where rows share a size */
			ng_dist_size(size, sizeof(size), ng_plot_num(row, "size"));
			what = ng_plot_xasprintf("%s", size);
			json_object_foreach((json_t *)row, k, v)
			{
				char *more;

				if (!json_is_string(v))
					continue;
				more = ng_plot_xasprintf("%s, %s", what, json_string_value(v));
				free(what);
				what = more;
			}
			ng_gp_next(g);
			ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
			fprintf(g->plot, " index %d using 1:2 with %s ls %d", index,
			        hist ? "histeps" : "steps", style);
			ng_gp_range(g, i, index, 2, 1);
			ng_gp_title(g, "", what, NULL);
			free(what);
			ng_gp_next(g);
			ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
			fprintf(g->plot, " index %d using 1:2 with points ls %d pt 7 ps 0.6 notitle",
			        index + 1, style);
			ng_gp_next(g);
			ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
			fprintf(
			    g->plot,
			    " index %d using 1:2:3 with labels left offset 0.6,-0.3 font ',8' tc rgb '%s' "
			    "notitle",
			    index + 1, ng_gp_color(style));
			index += NG_DIST_TABLES;
		}
		ng_gp_panel_end(g);
		fputs("unset logscale x\n", g->gp);
		free(name);
	}
}

static void ng_fig_dist(struct ng_fig *g)
{
	if (g->panels & NG_PANEL_CDF)
		ng_fig_dist_panels(g, false);
	else
		ng_fig_dist_panels(g, true);
}

/* A file without samples has no distribution to draw. */
static const char *ng_check_dist(const struct ng_plot_file *pf)
{
	bool raw;

	return ng_dist_key(pf, &raw) ? NULL
	                             : "no samples to draw its distribution from: rerun with --raw "
	                               "(every sample) or --histogram (the buckets)";
}

const struct ng_figure ng_figure_dist = {
    .patterns = (const char *const[]){"distribution", NULL},
    .panels = NG_PANEL_CDF | NG_PANEL_HIST,
    .check = ng_check_dist,
    .data = ng_dat_dist,
    .script = ng_fig_dist,
    .xname = "Value",
};
