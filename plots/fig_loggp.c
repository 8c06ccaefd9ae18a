/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loggp figure: the overheads o_s and o_r against size, and the
 * transmission time T(s) as points with the fitted segments drawn over them
 * and the breakpoints as vertical dotted lines; and the report's "loggp"
 * section (the parameters per protocol segment, the measurements per size).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

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
			ng_gp_legend(g, i, "fit", NULL);
			titled = true;
		}
	}
}

static void ng_fig_loggp(struct ng_fig *g)
{
	const struct ng_col *cols = ng_cols_loggp_sizes;
	int *styles = ng_plot_xcalloc(g->n, sizeof(*styles));
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
				        at, at, ng_gp_color(styles[i]));
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
				        ng_gp_color(styles[i]));
				ng_gp_legend(g, i, "breakpoints", NULL);
			}
		}
		ng_gp_panel_end(g);
	}
	free(styles);
}

/* The report's "loggp" block: the segments, n and the breakpoints, the
 * LogGOPSim options, the measurements per size. */
static void ng_report_loggp(FILE *f, const json_t *b)
{
	const json_t *v;
	size_t i;

	fputs("<h3>LogGP parameters</h3>\n<p class=\"note\">Per protocol segment, with 95% "
	      "confidence intervals; the transmission time is fitted as "
	      "T(s) = g + (s &minus; from)&middot;G on each segment.</p>\n",
	      f);
	if (json_is_array(json_object_get(b, "segments")))
		ng_html_rows(f, json_object_get(b, "segments"));
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
		ng_html_rows(f, json_object_get(b, "sizes"));
	}
}

const struct ng_figure ng_figure_loggp = {
    .patterns = (const char *const[]){"loggp", NULL},
    .panels = NG_PANEL_OVH | NG_PANEL_LAT,
    .block = "loggp",
    .data = ng_dat_loggp,
    .script = ng_fig_loggp,
    .report = {.block = "loggp", .section = ng_report_loggp},
};
