/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ebb figure: the histogram of the pairs' bandwidths over every random
 * bisection (block "ebb", eight bins per octave) on a log bandwidth axis,
 * one series of bars per file, with the effective bisection bandwidth (the
 * mean, its 95% interval shaded) and the median marked.  Static routing on
 * a network without full bisection shows as two or more peaks.  And the
 * report's "ebb" section: the settings and every round's sum, slowest and
 * fastest pair.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

static const struct ng_col ng_cols_ebb_bins[] = {
    {"center_MBps", NG_COL_NUM}, {"count", NG_COL_NUM}, {"lo_MBps", NG_COL_NUM},
    {"hi_MBps", NG_COL_NUM},     {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_ebb_marks[] = {
    {"effective_bisection_MBps", NG_COL_PARAM},
    {"bandwidth_MBps", NG_COL_STATS},
    {NULL, NG_COL_NUM},
};

/* Table 0: the bins (x: the bin's geometric centre; bins of 0 left out,
 * which a log axis cannot show); table 1: the marks of the row. */
static void ng_dat_ebb(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *h = json_object_get(json_object_get(pf->doc, "ebb"), "histogram"), *b;
	json_t *bins = ng_dat_xnew(json_array());
	size_t i;

	json_array_foreach(h, i, b)
	{
		double lo = ng_plot_num(b, "lo_MBps"), hi = ng_plot_num(b, "hi_MBps");

		double n = ng_plot_num(b, "count");
		json_t *o;

		if (!(lo > 0) || !(hi > lo) || !isfinite(hi))
			continue;
		o = ng_dat_xnew(json_object());
		json_object_set_new(o, "center_MBps", ng_dat_xnew(json_real(sqrt(lo * hi))));
		json_object_set_new(o, "count", ng_dat_xnew(isfinite(n) ? json_real(n) : json_null()));
		json_object_set_new(o, "lo_MBps", ng_dat_xnew(json_real(lo)));
		json_object_set_new(o, "hi_MBps", ng_dat_xnew(json_real(hi)));
		json_array_append_new(bins, o);
	}
	ng_dat_table(f, 0, "ebb.histogram", bins, ng_cols_ebb_bins, NULL);
	json_decref(bins);
	ng_dat_table(f, 1, "results", pf->rows, ng_cols_ebb_marks, NULL);
}

/* A file without the block's histogram has nothing to draw. */
static const char *ng_check_ebb(const struct ng_plot_file *pf)
{
	const json_t *b = json_object_get(pf->doc, "ebb");

	return json_is_array(json_object_get(b, "histogram")) ? NULL : "no \"ebb\" block with a histogram";
}

/* A key entry for a mark drawn as an arrow (dash type @dt). */
static void ng_ebb_key(struct ng_fig *g, const char *dt, const char *title)
{
	ng_gp_next(g);
	fprintf(g->plot, "NaN with lines lw 1.5 dt %s lc rgb '#444444'", dt);
	ng_gp_title(g, "", title, NULL);
}

/* Tics of the log bandwidth axis at 1, 2 and 5 times the powers of ten
 * (the powers alone over more than three decades): gnuplot's own put one
 * or none on a histogram that spans less than a decade. */
static void ng_ebb_xtics(struct ng_fig *g)
{
	static const double m[] = {1, 2, 5};
	double lo = INFINITY, hi = 0;
	const json_t *b;
	size_t i, j;
	bool first = true;

	for (i = 0; i < g->n; i++) {
		json_array_foreach(json_object_get(json_object_get(g->files[i]->doc, "ebb"), "histogram"), j,
		                   b)
		{
			double l = ng_plot_num(b, "lo_MBps"), h = ng_plot_num(b, "hi_MBps");

			if (l > 0 && h > l) {
				lo = fmin(lo, l);
				hi = fmax(hi, h);
			}
		}
	}
	if (!(lo < hi))
		return;
	fprintf(g->gp, "set xrange [%.17g:%.17g]\n", lo / 1.3, hi * 1.3);
	for (int e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)); e++) {
		for (j = 0; j < (hi / lo > 1000 ? 1 : 3); j++) {
			double v = m[j] * pow(10, e);

			if (v < lo / 1.5 || v > hi * 1.5)
				continue;
			fprintf(g->gp, "%s%.17g", first ? "set xtics (" : ", ", v);
			first = false;
		}
	}
	if (!first)
		fputs(")\n", g->gp);
}

static void ng_fig_ebb(struct ng_fig *g)
{
	char v[40], lo_s[40], hi_s[40], med[40];
	bool any = false;
	size_t i;

	ng_gp_panel(g, "Pairs x rounds", NG_UNIT_NONE);
	fputs("set logscale x 10\nset format x '%g'\nset xlabel 'Bandwidth of a pair (MB/s)'\n"
	      "set style fill transparent solid 0.45 border\n",
	      g->gp);
	ng_ebb_xtics(g);
	for (i = 0; i < g->n; i++) {
		const json_t *row = json_array_get(g->files[i]->rows, 0);
		const json_t *p = json_object_get(row, "effective_bisection_MBps");
		double e = ng_plot_num(p, "value"),
		       m = ng_plot_num(json_object_get(row, "bandwidth_MBps"), "median");
		double lo, hi;
		int style = ng_gp_style(g);
		const char *color = ng_gp_color(style);
		char *title;

		ng_gp_range(g, i, 0, 2, 1);
		ng_gp_next(g);
		if (i == 0) /* counts from 0: the linear panel's offsets would put the axis below it */
			fputs("[][0:*] ", g->plot);
		ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
		fprintf(g->plot, " index 0 using 1:($2/2):3:4:(0):2 with boxxyerror lc rgb '%s'", color);
		title = isfinite(e) ? ng_plot_xasprintf("ebb %.4g MB/s", e) : NULL;
		ng_gp_legend(g, i, title, NULL);
		free(title);
		if (isfinite(e) && e > 0) {
			ng_plot_ci(p, &lo, &hi);
			ng_plot_fmt_exact(v, sizeof(v), e);
			if (isfinite(lo) && isfinite(hi) && lo > 0 && hi > lo) {
				ng_plot_fmt_exact(lo_s, sizeof(lo_s), lo);
				ng_plot_fmt_exact(hi_s, sizeof(hi_s), hi);
				fprintf(
				    g->gp,
				    "set object rect from %s, graph 0 to %s, graph 1 behind fc rgb '%s' fs "
				    "transparent solid 0.12 noborder\n",
				    lo_s, hi_s, color);
			}
			fprintf(g->gp,
			        "set arrow from %s, graph 0 to %s, graph 1 nohead lw 1.5 dt 1 lc rgb '%s'\n",
			        v, v, color);
			any = true;
		}
		if (isfinite(m) && m > 0) {
			ng_plot_fmt_exact(med, sizeof(med), m);
			fprintf(g->gp,
			        "set arrow from %s, graph 0 to %s, graph 1 nohead lw 1.5 dt 3 lc rgb '%s'\n",
			        med, med, color);
			any = true;
		}
	}
	if (any) {
		ng_ebb_key(g, "1", "effective bisection bandwidth (mean; 95% CI shaded)");
		ng_ebb_key(g, "3", "median");
	}
	ng_gp_panel_end(g);
	fputs("unset object\nunset logscale x\n", g->gp);
}

/* A pair's rank from a result file (untrusted): -1 unless a whole number in range. */
static long long rank_of(const json_t *pair, const char *key)
{
	double x = ng_plot_num(pair, key);

	return x >= 0 && x < 1e15 && x == (double)(long long)x ? (long long)x : -1;
}

/* The report: the settings, then per round its sum and its slowest and
 * fastest pair. */
static void ng_report_ebb(FILE *f, const json_t *b)
{
	json_t *plain = ng_dat_xnew(json_object()), *rows = ng_dat_xnew(json_array()), *v;
	const json_t *r, *p;
	const char *k;
	size_t i, j;

	fputs(
	    "<h3>Effective bisection bandwidth</h3>\n<p class=\"note\">Random bisections, every pair "
	    "streaming at once (Netgauge's ebb); the effective bisection bandwidth is the mean of the "
	    "pairs' bandwidths over all pairs and rounds (the row's effective_bisection_MBps, with its 95% "
	    "interval over the rounds). Per round: the sum over its pairs, the slowest and the fastest pair "
	    "(client &rarr; server).</p>\n",
	    f);
	json_object_foreach((json_t *)b, k, v)
	{
		if (!json_is_array(v) && !json_is_object(v))
			json_object_set(plain, k, v);
	}
	ng_html_kv(f, plain);
	json_decref(plain);
	json_array_foreach(json_object_get(b, "bisections"), i, r)
	{
		const json_t *lo = NULL, *hi = NULL;

		json_array_foreach(json_object_get(r, "pairs"), j, p)
		{
			double x = ng_plot_num(p, "bandwidth_MBps");

			if (!lo || x < ng_plot_num(lo, "bandwidth_MBps"))
				lo = p;
			if (!hi || x > ng_plot_num(hi, "bandwidth_MBps"))
				hi = p;
		}
		if (!lo)
			continue;
		json_t *o = ng_dat_xnew(json_object());
		char *a = ng_plot_xasprintf("%lld -> %lld", rank_of(lo, "client"), rank_of(lo, "server"));
		char *c = ng_plot_xasprintf("%lld -> %lld", rank_of(hi, "client"), rank_of(hi, "server"));

		json_object_set(o, "round", json_object_get(r, "round"));
		json_object_set(o, "sum_MBps", json_object_get(r, "sum_MBps"));
		json_object_set_new(o, "slowest", ng_dat_xnew(json_string(a)));
		json_object_set(o, "slowest_MBps", json_object_get(lo, "bandwidth_MBps"));
		json_object_set_new(o, "fastest", ng_dat_xnew(json_string(c)));
		json_object_set(o, "fastest_MBps", json_object_get(hi, "bandwidth_MBps"));
		json_array_append_new(rows, o);
		free(a);
		free(c);
	}
	if (json_array_size(rows))
		ng_html_rows(f, rows);
	json_decref(rows);
}

const struct ng_figure ng_figure_ebb = {
    .patterns = (const char *const[]){"ebb", NULL},
    .panels = NG_PANEL_BW,
    .check = ng_check_ebb,
    .data = ng_dat_ebb,
    .script = ng_fig_ebb,
    .xname = "Bandwidth of a pair",
    .report = {.block = "ebb", .section = ng_report_ebb},
};
