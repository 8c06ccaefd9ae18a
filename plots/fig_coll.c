/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The coll figures, drawn in parts: one figure per operation (the rows'
 * "op"), time per collective and bus bandwidth against size, one series per
 * algorithm (and per file), a data table per algorithm; barrier, one row
 * of size 0, has no figure (its time is in the rows and the report).  And
 * the report's "coll" section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

static const struct ng_col ng_cols_coll[] = {
    {"size", NG_COL_NUM},         {"count", NG_COL_NUM}, {"time_us", NG_COL_STATS},
    {"busbw_MBps", NG_COL_STATS}, {NULL, NG_COL_NUM},
};

/* The algorithms with rows of operation @op in @pf, each once, in the order
 * of their first rows.  Borrowed strings; free the array. */
static const char **ng_coll_algs(const struct ng_plot_file *pf, const char *op, size_t *n_p)
{
	const char **algs = ng_plot_xcalloc(json_array_size(pf->rows) + 1, sizeof(*algs));
	const json_t *row;
	size_t r, j, n = 0;

	json_array_foreach(pf->rows, r, row)
	{
		const char *a = json_string_value(json_object_get(row, "algorithm"));

		if (!a || !ng_plot_row_is(row, "op", op))
			continue;
		for (j = 0; j < n && strcmp(algs[j], a) != 0; j++)
			;
		if (j == n)
			algs[n++] = a;
	}
	*n_p = n;
	return algs;
}

static unsigned ng_coll_panels(const char *op)
{
	return strcmp(op, "barrier") == 0 ? 0 : NG_PANEL_LAT | NG_PANEL_BW;
}

static void ng_dat_coll(FILE *f, const struct ng_plot_file *pf, const char *op)
{
	size_t n, i, r;
	const char **algs = ng_coll_algs(pf, op, &n);
	const json_t *row;

	for (i = 0; i < n; i++) {
		fprintf(f, "%s# table %zu: ", i ? "\n\n" : "", i);
		ng_gp_chars(f, op, false);
		fputc(' ', f);
		ng_gp_chars(f, algs[i], false);
		fputs("\n# columns:", f);
		for (const struct ng_col *c = ng_cols_coll; c->key; c++) {
			if (c->type == NG_COL_NUM)
				fprintf(f, " %s", c->key);
			else
				fprintf(f, " %s_median %s_ci95_lo %s_ci95_hi", c->key, c->key, c->key);
		}
		fputc('\n', f);
		json_array_foreach(pf->rows, r, row)
		{
			bool first = true;

			if (!ng_plot_row_is(row, "op", op) || !ng_plot_row_is(row, "algorithm", algs[i]))
				continue;
			for (const struct ng_col *c = ng_cols_coll; c->key; c++) {
				if (c->type == NG_COL_NUM)
					ng_dat_json(f, &first, json_object_get(row, c->key));
				else
					ng_dat_triple(f, &first, json_object_get(row, c->key), "median");
			}
			fputc('\n', f);
		}
	}
	free(algs);
}

static void ng_fig_coll(struct ng_fig *g)
{
	static const struct {
		unsigned panel;
		const char *key, *name;
		enum ng_unit unit;
	} panels[] = {
	    {NG_PANEL_LAT, "time_us", "Time per collective", NG_UNIT_US},
	    {NG_PANEL_BW, "busbw_MBps", "Bus bandwidth", NG_UNIT_MBPS},
	};
	size_t p, i, a, n;

	for (p = 0; p < sizeof(panels) / sizeof(panels[0]); p++) {
		if (!(g->panels & panels[p].panel))
			continue;
		ng_gp_panel(g, panels[p].name, panels[p].unit);
		for (i = 0; i < g->n; i++) {
			const char **algs = ng_coll_algs(g->files[i], g->sub, &n);

			for (a = 0; a < n; a++) {
				ng_gp_ci_using(g, i, (int)a, ng_col_of(ng_cols_coll, panels[p].key));
				ng_gp_legend(g, i, algs[a], NULL);
			}
			free(algs);
		}
		ng_gp_panel_end(g);
	}
}

/* The report's "coll" block, as it is. */
static void ng_report_coll(FILE *f, const json_t *b)
{
	fputs("<h3>Collectives</h3>\n", f);
	ng_html_kv(f, b);
}

const struct ng_figure ng_figure_coll = {
    .patterns = (const char *const[]){"coll", NULL},
    .panels = NG_PANEL_LAT | NG_PANEL_BW,
    .script = ng_fig_coll,
    .parts = {.key = "op", .panels = ng_coll_panels, .data = ng_dat_coll},
    .report = {.block = "coll", .section = ng_report_coll},
};
