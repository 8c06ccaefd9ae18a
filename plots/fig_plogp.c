/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The plogp figure: g(m), o_s(m), o_r(m) and L(m) in one panel, with their
 * CIs; and the report's "plogp" section (L, the parameters per size).
 */
#include <stdio.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

static const struct ng_col ng_cols_plogp_sizes[] = {
    {"size", NG_COL_NUM},     {"g_us", NG_COL_PARAM}, {"o_s_us", NG_COL_PARAM},
    {"o_r_us", NG_COL_PARAM}, {"L_us", NG_COL_PARAM}, {NULL, NG_COL_NUM},
};

static void ng_dat_plogp(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *b = json_object_get(pf->doc, "plogp");

	ng_dat_table(f, 0, "plogp.sizes", json_object_get(b, "sizes"), ng_cols_plogp_sizes, NULL);
}

static void ng_fig_plogp(struct ng_fig *g)
{
	const struct ng_col *cols = ng_cols_plogp_sizes;
	size_t i;

	ng_gp_panel(g, "Time", NG_UNIT_US);
	for (i = 0; i < g->n; i++) {
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, "g_us"), "g(m)", "$g(m)$");
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, "o_s_us"), "o_s(m)", "$o_s(m)$");
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, "o_r_us"), "o_r(m)", "$o_r(m)$");
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, "L_us"), "L(m)", "$L(m)$");
	}
	ng_gp_panel_end(g);
}

/* The report's "plogp" block: L with its CI, the parameters per size. */
static void ng_report_plogp(FILE *f, const json_t *b)
{
	const json_t *v;

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
		ng_html_rows(f, json_object_get(b, "sizes"));
}

const struct ng_figure ng_figure_plogp = {
    .patterns = (const char *const[]){"plogp", NULL},
    .panels = NG_PANEL_LAT,
    .block = "plogp",
    .data = ng_dat_plogp,
    .script = ng_fig_plogp,
    .report = {.block = "plogp", .section = ng_report_plogp},
};
