/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The matrix figure: heatmaps of the matrix pattern's cells, from the
 * sending (client) rank on the y axis, rank 0 at the top, to the receiving
 * rank on the x axis; the colour is the cell's median.  The latency panel
 * draws the smallest size of the file (the latency of small messages), the
 * bandwidth panel the largest (with one size, both draw it); the outliers
 * of that size are marked with their ratio to the median.  And the report's
 * "matrix" section: the ranks' hosts and addresses and the outliers.
 *
 * Data tables of one file: 0 the latency cells (from, to, median, ci95 lo,
 * ci95 hi; NaN on the diagonal), 1 the bandwidth cells, then the latency
 * and the bandwidth outliers (from, to, ratio), each only when there is one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

/* The entry of the block's "sizes" a panel draws: the smallest size for
 * latency, the largest for bandwidth; NULL when there is none. */
static const json_t *ng_matrix_entry(const struct ng_plot_file *pf, bool largest)
{
	const json_t *sizes = json_object_get(json_object_get(pf->doc, "matrix"), "sizes"), *e, *best = NULL;
	size_t i;

	json_array_foreach(sizes, i, e)
	{
		double s = ng_plot_num(e, "size");

		if (!json_is_object(e) || !isfinite(s))
			continue;
		if (!best || (largest ? s > ng_plot_num(best, "size") : s < ng_plot_num(best, "size")))
			best = e;
	}
	return best;
}

static void ng_dat_matrix_cells(FILE *f, int index, const json_t *e, const char *key)
{
	const json_t *rows = json_object_get(e, key), *row, *cell;
	size_t i, j;

	fprintf(f,
	        "%s# table %d: matrix %s, size %.17g\n# columns: from to %s_median %s_ci95_lo %s_ci95_hi\n",
	        index ? "\n\n" : "", index, key, ng_plot_num(e, "size"), key, key, key);
	json_array_foreach(rows, i, row)
	{
		json_array_foreach(row, j, cell)
		{
			bool first = true;

			fprintf(f, "%zu %zu ", i, j);
			ng_dat_triple(f, &first, cell, "median");
			fputc('\n', f);
		}
		fputc('\n', f); /* a scan line of the image */
	}
}

/* The outliers of @key in entry @e. */
static size_t ng_matrix_noutliers(const json_t *e, const char *key)
{
	const json_t *o;
	size_t i, n = 0;

	json_array_foreach(json_object_get(e, "outliers"), i, o)
	{
		n += ng_plot_row_is(o, "metric", key);
	}
	return n;
}

/* The table of the outliers of @key (none when there are none: gnuplot
 * refuses an empty table). */
static void ng_dat_matrix_outliers(FILE *f, int *index_p, const json_t *e, const char *key)
{
	const json_t *o;
	size_t i;

	if (!ng_matrix_noutliers(e, key))
		return;
	fprintf(f, "\n\n# table %d: outliers %s, size %.17g\n# columns: from to ratio\n", (*index_p)++, key,
	        ng_plot_num(e, "size"));
	json_array_foreach(json_object_get(e, "outliers"), i, o)
	{
		bool first = true;

		if (!ng_plot_row_is(o, "metric", key))
			continue;
		ng_dat_json(f, &first, json_object_get(o, "from"));
		ng_dat_json(f, &first, json_object_get(o, "to"));
		ng_dat_json(f, &first, json_object_get(o, "ratio"));
		fputc('\n', f);
	}
}

static void ng_dat_matrix(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *lat = ng_matrix_entry(pf, false), *bw = ng_matrix_entry(pf, true);
	int index = 2;

	ng_dat_matrix_cells(f, 0, lat, "latency_us");
	ng_dat_matrix_cells(f, 1, bw, "bandwidth_MBps");
	ng_dat_matrix_outliers(f, &index, lat, "latency_us");
	ng_dat_matrix_outliers(f, &index, bw, "bandwidth_MBps");
}

/* One heatmap panel of file @i: table @index, outliers in table @index + 2. */
static void ng_fig_matrix_panel(struct ng_fig *g, size_t i, int index, const char *name, enum ng_unit u,
                                const char *palette)
{
	const struct ng_plot_file *pf = g->files[i];
	const json_t *e = ng_matrix_entry(pf, index == 1);
	double n = (double)json_array_size(json_object_get(e, index ? "bandwidth_MBps" : "latency_us"));
	const char *file = ng_plot_basename(g->dat[i]);
	const char *key = index ? "bandwidth_MBps" : "latency_us";
	/* the outlier tables follow the cells: latency's (when it has any), then bandwidth's */
	size_t nout = ng_matrix_noutliers(e, key);
	int out_index =
	    2 + (index == 1 && ng_matrix_noutliers(ng_matrix_entry(pf, false), "latency_us") ? 1 : 0);
	char *title;

	ng_gp_panel(g, "Sending rank", NG_UNIT_NONE);
	title = ng_plot_xasprintf("%s (%s), size %.17g%s%s", name, u == NG_UNIT_US ? "us" : "MB/s",
	                          ng_plot_num(e, "size"), g->legend[i][0] ? ", " : "", g->legend[i]);
	fputs("set title '", g->gp);
	ng_gp_chars(g->gp, title, g->term->tex);
	fputs("'\n", g->gp);
	free(title);
	/* after the panel's own settings (ng_gp_panel_end): the image's axes; the
	 * colour box unlabelled (the title has the unit: a label beside the box
	 * would run out of the figure) */
	fprintf(g->plot,
	        "set xrange [-0.5:%.17g]\nset yrange [%.17g:-0.5]\nset offsets 0, 0, 0, 0\n"
	        "set xtics %s\nset ytics %s\nunset grid\nunset logscale\nset xlabel 'Receiving rank'\n"
	        "set palette defined %s\nunset cblabel\nset colorbox\n"
	        "set object 1 rectangle from graph 0, 0 to graph 1, 1 behind fc rgb '#c8c8c8' fs solid "
	        "noborder\n",
	        n - 0.5, n - 0.5, n <= 16 ? "1" : "autofreq", n <= 16 ? "1" : "autofreq", palette);
	ng_gp_next(g);
	ng_gp_quote(g->plot, file);
	fprintf(g->plot, " index %d using 2:1:3 with image notitle", index);
	ng_gp_range(g, i, index, 3, 1);
	if (nout) {
		ng_gp_next(g);
		ng_gp_quote(g->plot, file);
		fprintf(g->plot,
		        " index %d using 2:1:(sprintf('%%.2gx', $3)) with labels tc rgb '#ffffff' font ',8' "
		        "notitle",
		        out_index);
	}
	ng_gp_panel_end(g);
	/* the next panel or figure: the settings of the other families */
	fputs("set autoscale x\nset autoscale y\nset xtics autofreq\nset grid xtics ytics\nunset colorbox\n"
	      "unset object 1\n",
	      g->gp);
}

static void ng_fig_matrix(struct ng_fig *g)
{
	for (size_t i = 0; i < g->n; i++) {
		/* latency: light (low) to dark red (high); bandwidth: dark blue (low) to light (high) */
		if (g->panels & NG_PANEL_LAT)
			ng_fig_matrix_panel(g, i, 0, "Latency", NG_UNIT_US,
			                    "(0 '#fff5eb', 0.5 '#fd8d3c', 1 '#7f2704')");
		if (g->panels & NG_PANEL_BW)
			ng_fig_matrix_panel(g, i, 1, "Bandwidth", NG_UNIT_MBPS,
			                    "(0 '#08306b', 0.5 '#6baed6', 1 '#f7fbff')");
	}
}

static const char *ng_matrix_check(const struct ng_plot_file *pf)
{
	return ng_matrix_entry(pf, false) ? NULL : "no size in its \"matrix\" block";
}

/* The report's "matrix" section: who the ranks are and the outliers. */
static void ng_report_matrix(FILE *f, const json_t *b)
{
	const json_t *x, *e, *o;
	size_t i, j;

	fputs("<h3>Matrix</h3>\n<p>Order of the pairs: ", f);
	ng_html_value(f, json_object_get(b, "order"));
	fputs(
	    "; an outlier's latency is above, its bandwidth below, the median over the pairs by the factor ",
	    f);
	ng_html_value(f, json_object_get(b, "outlier_factor"));
	fputs(".</p>\n<table>\n<tr><th>rank</th><th>host</th><th>address</th><th>device</th></tr>\n", f);
	json_array_foreach(json_object_get(b, "ranks"), i, x)
	{
		static const char *const keys[] = {"rank", "host", "addr", "device"};

		fputs("<tr>", f);
		for (j = 0; j < 4; j++) {
			fputs("<td>", f);
			ng_html_value(f, json_object_get(x, keys[j]));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<table>\n<tr><th>size</th><th>from</th><th>to</th><th>metric</th><th>value</th>"
	      "<th>ratio to the median</th></tr>\n",
	      f);
	json_array_foreach(json_object_get(b, "sizes"), i, e)
	{
		json_array_foreach(json_object_get(e, "outliers"), j, o)
		{
			static const char *const keys[] = {"from", "to", "metric", "value", "ratio"};

			fputs("<tr><td>", f);
			ng_html_value(f, json_object_get(e, "size"));
			fputs("</td>", f);
			for (size_t k = 0; k < 5; k++) {
				fputs("<td>", f);
				ng_html_value(f, json_object_get(o, keys[k]));
				fputs("</td>", f);
			}
			fputs("</tr>\n", f);
		}
	}
	fputs("</table>\n", f);
}

const struct ng_figure ng_figure_matrix = {
    .patterns = (const char *const[]){"matrix", NULL},
    .panels = NG_PANEL_LAT | NG_PANEL_BW,
    .block = "matrix",
    .check = ng_matrix_check,
    .data = ng_dat_matrix,
    .script = ng_fig_matrix,
    .xname = "Receiving rank",
    .report = {.block = "matrix", .section = ng_report_matrix},
};
