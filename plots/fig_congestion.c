/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion figure (doc/congestion.md), from the "congestion" block:
 * per victim its time (latency, or a bandwidth victim's window time) at
 * the percentiles the block keeps, isolated (dashed) against congested
 * (solid) in one colour, so the shift of the body and of the tail reads at
 * a glance; and the impact factors of the median and of p99 with their 95%
 * intervals (log axis, the line at 1: no impact).  And the report's
 * "congestion" section: per victim the medians, p99s and factors with their
 * intervals, and the congestor groups' rates.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

/* The percentiles of a phase's distribution (cg_dist_json in
 * patterns/congestion.c), drawn evenly spaced (position j) so that the
 * tail's p90, p99 and max do not crowd. */
static const struct {
	const char *key;
	double pct;
} ng_cg_pcts[] = {{"min", 0}, {"p1", 1}, {"p10", 10}, {"p50", 50}, {"p90", 90}, {"p99", 99}, {"max", 100}};

static const struct ng_col ng_cols_cg_dist[] = {
    {"position", NG_COL_NUM},  {"percentile", NG_COL_NUM}, {"isolated", NG_COL_NUM},
    {"congested", NG_COL_NUM}, {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_cg_impact[] = {
    {"x", NG_COL_NUM}, {"factor", NG_COL_NUM}, {"lo", NG_COL_NUM}, {"hi", NG_COL_NUM}, {NULL, NG_COL_NUM},
};

/* The impact factors drawn, at x 0 and 1. */
static const char *const ng_cg_stats[] = {"median", "p99"};

static const json_t *ng_cg_impact(const struct ng_plot_file *pf)
{
	return json_object_get(json_object_get(pf->doc, "congestion"), "impact");
}

/* The victim's name of impact entry @v ("lat", "bw", ...). */
static const char *ng_cg_victim(const json_t *v)
{
	const char *s = json_string_value(json_object_get(v, "victim"));

	return s ? s : "?";
}

/* Per victim k: table 2k its distribution in both phases, table 2k + 1 its
 * impact factors (x 0: median, 1: p99, shifted by 0.08 k so that victims
 * stay apart). */
static void ng_dat_congestion(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *v;
	size_t k, j;

	json_array_foreach(ng_cg_impact(pf), k, v)
	{
		json_t *dist = ng_dat_xnew(json_array()), *imp = ng_dat_xnew(json_array());
		const json_t *iso = json_object_get(v, "isolated"), *con = json_object_get(v, "congested");
		char *name;

		for (j = 0; j < sizeof(ng_cg_pcts) / sizeof(ng_cg_pcts[0]); j++) {
			json_t *o = ng_dat_xnew(json_object());

			json_object_set_new(o, "position", ng_dat_real((double)j));
			json_object_set_new(o, "percentile", ng_dat_real(ng_cg_pcts[j].pct));
			json_object_set_new(o, "isolated", ng_dat_real(ng_plot_num(iso, ng_cg_pcts[j].key)));
			json_object_set_new(o, "congested", ng_dat_real(ng_plot_num(con, ng_cg_pcts[j].key)));
			json_array_append_new(dist, o);
		}
		for (j = 0; j < sizeof(ng_cg_stats) / sizeof(ng_cg_stats[0]); j++) {
			const json_t *s = json_object_get(v, ng_cg_stats[j]);
			json_t *o = ng_dat_xnew(json_object());
			double lo, hi;

			json_object_set_new(o, "x", ng_dat_real((double)j + 0.08 * (double)k));
			json_object_set_new(o, "factor", ng_dat_real(ng_plot_num(s, "factor")));
			ng_plot_ci(s, &lo, &hi);
			json_object_set_new(o, "lo", ng_dat_real(lo));
			json_object_set_new(o, "hi", ng_dat_real(hi));
			json_array_append_new(imp, o);
		}
		name = ng_plot_xasprintf("%s distribution", ng_cg_victim(v));
		ng_dat_table(f, (int)(2 * k), name, dist, ng_cols_cg_dist, NULL);
		free(name);
		name = ng_plot_xasprintf("%s impact", ng_cg_victim(v));
		ng_dat_table(f, (int)(2 * k + 1), name, imp, ng_cols_cg_impact, NULL);
		free(name);
		json_decref(dist);
		json_decref(imp);
	}
}

static const char *ng_check_congestion(const struct ng_plot_file *pf)
{
	return json_array_size(ng_cg_impact(pf)) ? NULL : "no \"congestion\" block with victims' impact";
}

/* Starts a series from table @index of file @i, @how ("using ... with ..."),
 * in colour @style, titled "VICTIM SUFFIX". */
static void ng_cg_series(struct ng_fig *g, size_t i, int index, const char *how, int style,
                         const char *victim, const char *suffix)
{
	char *title = ng_plot_xasprintf("%s %s", victim, suffix);

	ng_gp_next(g);
	ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
	fprintf(g->plot, " index %d %s lc rgb '%s'", index, how, ng_gp_color(style));
	ng_gp_legend(g, i, title, NULL);
	free(title);
}

static void ng_fig_congestion(struct ng_fig *g)
{
	const json_t *v;
	size_t i, k;

	ng_gp_panel(g, "Victim's time", NG_UNIT_US);
	fputs("set logscale y 10\nset xrange [-0.3:6.3]\n"
	      "set xtics ('min' 0, 'p1' 1, 'p10' 2, 'p50' 3, 'p90' 4, 'p99' 5, 'max' 6)\n"
	      "set xlabel 'Percentile'\n",
	      g->gp);
	for (i = 0; i < g->n; i++) {
		json_array_foreach(ng_cg_impact(g->files[i]), k, v)
		{
			int style = ng_gp_style(g), index = (int)(2 * k);

			ng_gp_range(g, i, index, 3, 2);
			ng_cg_series(g, i, index, "using 1:3 with linespoints dt 2 pt 6", style,
			             ng_cg_victim(v), "isolated");
			ng_cg_series(g, i, index, "using 1:4 with linespoints dt 1 pt 7", style,
			             ng_cg_victim(v), "congested");
		}
	}
	ng_gp_panel_end(g);

	ng_gp_panel(g, "Impact factor", NG_UNIT_NONE);
	fputs("set logscale y 10\nset xrange [-0.5:1.9]\nset xtics ('median' 0, 'p99' 1)\n"
	      "set xlabel 'Statistic (congested / isolated, 95% interval)'\n",
	      g->gp);
	for (i = 0; i < g->n; i++) {
		json_array_foreach(ng_cg_impact(g->files[i]), k, v)
		{
			int style = ng_gp_style(g), index = (int)(2 * k + 1);

			ng_gp_range(g, i, index, 2, 3);
			ng_cg_series(g, i, index, "using 1:2:3:4 with yerrorbars pt 7", style,
			             ng_cg_victim(v), "impact");
		}
	}
	ng_gp_next(g);
	fputs("1 with lines dt 3 lc rgb '#888888' notitle", g->plot);
	ng_gp_panel_end(g);
	fputs("unset logscale y\nset autoscale x\nset xtics autofreq\n", g->gp);
}

/* {"value", "ci95"} of impact statistic @s, a parameter for the tables. */
static json_t *ng_cg_param(const json_t *s)
{
	json_t *o = ng_dat_xnew(json_object());

	json_object_set(o, "value", json_object_get(s, "factor"));
	json_object_set(o, "ci95", json_object_get(s, "ci95"));
	return o;
}

/* The report: per victim the medians, p99s and factors; the congestors'
 * rates. */
static void ng_report_congestion(FILE *f, const json_t *b)
{
	json_t *rows = ng_dat_xnew(json_array());
	const json_t *v;
	size_t k;

	fputs("<h3>Congestion</h3>\n<p class=\"note\">Victims measured alone and beside the congestors, in "
	      "alternating phases on synchronised starts. Per victim: its median and p99 in both phases "
	      "(latency, or a bandwidth victim's window time, " NG_MICRO "s) and the impact factors, "
	      "congested over isolated, with their 95% bootstrap intervals: an interval above 1 says the "
	      "congestion was felt. The figure shows both phases' percentiles and the factors.</p>\n<p>",
	      f);
	ng_html_value(f, json_object_get(b, "rounds"));
	fputs(" rounds; victims ", f);
	ng_html_value(f, json_object_get(b, "victims"));
	fputs(".</p>\n", f);
	json_array_foreach(json_object_get(b, "impact"), k, v)
	{
		json_t *o = ng_dat_xnew(json_object());
		const json_t *iso = json_object_get(v, "isolated"), *con = json_object_get(v, "congested");

		json_object_set(o, "victim", json_object_get(v, "victim"));
		json_object_set(o, "unit", json_object_get(v, "unit"));
		json_object_set(o, "isolated_p50", json_object_get(iso, "p50"));
		json_object_set(o, "congested_p50", json_object_get(con, "p50"));
		json_object_set_new(o, "impact_median", ng_cg_param(json_object_get(v, "median")));
		json_object_set(o, "isolated_p99", json_object_get(iso, "p99"));
		json_object_set(o, "congested_p99", json_object_get(con, "p99"));
		json_object_set_new(o, "impact_p99", ng_cg_param(json_object_get(v, "p99")));
		json_array_append_new(rows, o);
	}
	if (json_array_size(rows))
		ng_html_rows(f, rows);
	json_decref(rows);
	if (json_array_size(json_object_get(b, "congestor_rates"))) {
		fputs("<p>Congestor groups' rates over the congested phases (MB/s):</p>\n", f);
		ng_html_rows(f, json_object_get(b, "congestor_rates"));
	}
}

const struct ng_figure ng_figure_congestion = {
    .patterns = (const char *const[]){"congestion", NULL},
    .panels = NG_PANEL_LAT,
    .check = ng_check_congestion,
    .data = ng_dat_congestion,
    .script = ng_fig_congestion,
    .xname = "Percentile",
    .report = {.block = "congestion", .section = ng_report_congestion},
};
