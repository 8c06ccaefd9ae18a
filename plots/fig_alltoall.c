/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The alltoall figure: time per alltoall and algorithm bandwidth against
 * size, one series per algorithm with rows (and per file), a data table per
 * algorithm; and the report's "alltoall" section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

static const struct ng_col ng_cols_alltoall[] = {
    {"size", NG_COL_NUM},         {"count", NG_COL_NUM}, {"time_us", NG_COL_STATS},
    {"algbw_MBps", NG_COL_STATS}, {NULL, NG_COL_NUM},
};

/* The algorithms of an alltoall file that have rows: in the order of the
 * block's list first, then any other "algorithm" of the rows, each once (a
 * listed algorithm without rows has nothing to draw, and only the rows'
 * strings are checked words).  Borrowed strings; free the array. */
static bool ng_alltoall_has_rows(const struct ng_plot_file *pf, const char *alg)
{
	const json_t *row;
	size_t r;

	json_array_foreach(pf->rows, r, row)
	{
		if (ng_plot_row_is(row, "algorithm", alg))
			return true;
	}
	return false;
}

static const char **ng_alltoall_algs(const struct ng_plot_file *pf, size_t *n_p)
{
	const json_t *block = json_object_get(pf->doc, "alltoall");
	const json_t *list = json_is_object(block) ? json_object_get(block, "algorithms") : NULL;
	size_t cap = json_array_size(list) + json_array_size(pf->rows), n = 0, i, j, k;
	const char **algs = ng_plot_xcalloc(cap, sizeof(*algs));
	const json_t *sources[2] = {list, pf->rows};

	for (k = 0; k < 2; k++) {
		for (i = 0; i < json_array_size(sources[k]); i++) {
			const json_t *v = json_array_get(sources[k], i);

			if (k == 1)
				v = json_object_get(v, "algorithm");
			if (!json_is_string(v) || (k == 0 && !ng_alltoall_has_rows(pf, json_string_value(v))))
				continue;
			for (j = 0; j < n && strcmp(algs[j], json_string_value(v)) != 0; j++)
				;
			if (j == n)
				algs[n++] = json_string_value(v);
		}
	}
	*n_p = n;
	return algs;
}

static void ng_dat_alltoall(FILE *f, const struct ng_plot_file *pf)
{
	size_t i, n;
	const char **algs = ng_alltoall_algs(pf, &n);

	for (i = 0; i < n; i++)
		ng_dat_table(f, (int)i, algs[i], pf->rows, ng_cols_alltoall, algs[i]);
	free(algs);
}

static void ng_fig_alltoall(struct ng_fig *g)
{
	static const struct {
		unsigned panel;
		const char *key, *name;
		enum ng_unit unit;
	} panels[] = {
	    {NG_PANEL_LAT, "time_us", "Time per alltoall", NG_UNIT_US},
	    {NG_PANEL_BW, "algbw_MBps", "Algorithm bandwidth", NG_UNIT_MBPS},
	};
	size_t p, i, a, n;

	for (p = 0; p < sizeof(panels) / sizeof(panels[0]); p++) {
		if (!(g->panels & panels[p].panel))
			continue;
		ng_gp_panel(g, panels[p].name, panels[p].unit);
		for (i = 0; i < g->n; i++) {
			const char **algs = ng_alltoall_algs(g->files[i], &n);

			for (a = 0; a < n; a++) {
				/* "ALGORITHM", after the file's legend when it has one */
				ng_gp_ci_using(g, i, (int)a, ng_col_of(ng_cols_alltoall, panels[p].key));
				ng_gp_legend(g, i, algs[a], NULL);
			}
			free(algs);
		}
		ng_gp_panel_end(g);
	}
}

/* The report's "alltoall" block, as it is. */
static void ng_report_alltoall(FILE *f, const json_t *b)
{
	fputs("<h3>Alltoall</h3>\n", f);
	ng_html_kv(f, b);
}

const struct ng_figure ng_figure_alltoall = {
    .patterns = (const char *const[]){"alltoall", NULL},
    .panels = NG_PANEL_LAT | NG_PANEL_BW,
    .data = ng_dat_alltoall,
    .script = ng_fig_alltoall,
    .report = {.block = "alltoall", .section = ng_report_alltoall},
};
