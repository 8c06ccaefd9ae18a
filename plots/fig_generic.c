/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The figure of a pattern no other figure draws: the rows' first statistics
 * key against size, with its CI, in the unit its name ends with (_us,
 * _MBps).  Last in the registry (figures.c): it draws any pattern.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"

static void ng_dat_generic(FILE *f, const struct ng_plot_file *pf)
{
	const struct ng_col cols[] = {
	    {"size", NG_COL_NUM},
	    {"count", NG_COL_NUM},
	    {ng_plot_first_stats_key(pf), NG_COL_STATS},
	    {NULL, NG_COL_NUM},
	};

	ng_dat_rows(f, pf, cols);
}

static void ng_fig_generic(struct ng_fig *g)
{
	const char *key = ng_plot_first_stats_key(g->files[0]);
	const char *us = strstr(key, "_us"), *mbps = strstr(key, "_MBps");
	enum ng_unit u = NG_UNIT_NONE;
	char *name;
	size_t i;

	if (us && !us[3]) {
		u = NG_UNIT_US;
		name = ng_plot_xasprintf("%.*s", (int)(us - key), key);
	} else if (mbps && !mbps[5]) {
		u = NG_UNIT_MBPS;
		name = ng_plot_xasprintf("%.*s", (int)(mbps - key), key);
	} else {
		name = ng_plot_xasprintf("%s", key);
	}
	ng_gp_panel(g, name, u);
	for (i = 0; i < g->n; i++)
		ng_gp_ci_series(g, i, 0, 3, NULL, NULL); /* size, count, KEY (ng_dat_generic) */
	ng_gp_panel_end(g);
	free(name);
}

/* A file whose rows hold no statistics has nothing to draw. */
static const char *ng_check_generic(const struct ng_plot_file *pf)
{
	return ng_plot_first_stats_key(pf) ? NULL : "no statistics in its rows";
}

const struct ng_figure ng_figure_generic = {
    .patterns = NULL,
    .panels = NG_PANEL_LAT,
    .check = ng_check_generic,
    .data = ng_dat_generic,
    .script = ng_fig_generic,
};
