/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The figure of `ngauge compare` (compare.h): the ratio of medians B/A with
 * its 95% interval against the size, one series per compared file, the line
 * of no change (1.0) and the band of the threshold.  Its files are made by
 * the comparison (pattern "compare"), never read from disk.
 */
#include <stdio.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"

static const char *const ng_compare_patterns[] = {"compare", NULL};

static void ng_dat_compare(FILE *f, const struct ng_plot_file *pf)
{
	const struct ng_col cols[] = {
	    {"size", NG_COL_NUM},
	    {"ratio", NG_COL_STATS},
	    {NULL, NG_COL_NUM},
	};

	ng_dat_rows(f, pf, cols);
}

static void ng_fig_compare(struct ng_fig *g)
{
	double t = ng_plot_num(g->files[0]->doc, "threshold_pct") / 100.0;

	ng_gp_panel(g, "Ratio of medians B/A", NG_UNIT_NONE);
	if (t > 0)
		fprintf(g->gp,
		        "set object 1 rect from graph 0, first %.6g to graph 1, first %.6g behind "
		        "fillcolor rgb '#e8e8e8' fillstyle solid 1.0 noborder\n",
		        1.0 / (1.0 + t), 1.0 + t);
	fputs("set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#555555' dt 2\n", g->gp);
	for (size_t i = 0; i < g->n; i++)
		ng_gp_ci_series(g, i, 0, 2, NULL, NULL); /* size, ratio (ng_dat_compare) */
	ng_gp_panel_end(g);
	fputs("unset object 1\nunset arrow 1\n", g->gp);
}

const struct ng_figure ng_figure_compare = {
    .patterns = ng_compare_patterns,
    .panels = NG_PANEL_LAT,
    .data = ng_dat_compare,
    .script = ng_fig_compare,
};
