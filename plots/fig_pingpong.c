/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The figures of the patterns that measure per message size between pairs
 * or groups of ranks, their rows against size: pingpong (latency and
 * bandwidth, a module's model as a dotted line), 1n and n1 (time per round
 * and aggregate bandwidth), bw and bibw (bandwidth and message rate, and the
 * report's "bw" section).  With more than two ranks the aggregates are extra
 * series.  A pingpong file with --one-way rows adds both directions to its
 * latency panel, their error bars the 95% CI widened by the clocks' bound
 * (data table 1).
 */
#include <math.h>
#include <stdio.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

static const struct ng_col ng_cols_pingpong[] = {
    {"size", NG_COL_NUM},
    {"count", NG_COL_NUM},
    {"latency_us", NG_COL_STATS},
    {"bandwidth_MBps", NG_COL_STATS},
    {"aggregate_bandwidth_MBps", NG_COL_NUM},
    {"predicted_us", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_1n[] = {
    {"size", NG_COL_NUM},
    {"count", NG_COL_NUM},
    {"time_us", NG_COL_STATS},
    {"aggregate_bandwidth_MBps", NG_COL_STATS},
    {"bandwidth_per_client_MBps", NG_COL_STATS},
    {"clients", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_bw[] = {
    {"size", NG_COL_NUM},
    {"count", NG_COL_NUM},
    {"bandwidth_MBps", NG_COL_STATS},
    {"messages_per_s", NG_COL_STATS},
    {"aggregate_bandwidth_MBps", NG_COL_NUM},
    {"aggregate_messages_per_s", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

/* --one-way rows (pingpong): table 1, per size each direction's median and
 * its 95% CI widened by "one_way_bound_us" on both sides. */
static const char *const ng_oneway_keys[2] = {"client_to_server_us", "server_to_client_us"};

static bool ng_pf_oneway(const struct ng_plot_file *pf)
{
	const json_t *row;
	size_t j;

	json_array_foreach(pf->rows, j, row)
	{
		if (json_is_object(json_object_get(row, ng_oneway_keys[0])))
			return true;
	}
	return false;
}

static void ng_dat_oneway(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *row;
	size_t j;

	fputs("\n\n# table 1: one-way\n# columns: size", f);
	for (int d = 0; d < 2; d++)
		fprintf(f, " %s_median %s_lo %s_hi", ng_oneway_keys[d], ng_oneway_keys[d], ng_oneway_keys[d]);
	fputs(" (lo, hi: the 95% CI widened by one_way_bound_us)\n", f);
	json_array_foreach(pf->rows, j, row)
	{
		double b = ng_plot_num(row, "one_way_bound_us"), lo, hi;
		char buf[40];

		if (!json_is_object(json_object_get(row, ng_oneway_keys[0])))
			continue;
		if (!isfinite(b))
			b = 0.0;
		ng_plot_fmt_exact(buf, sizeof(buf), ng_plot_num(row, "size"));
		fputs(buf, f);
		for (int d = 0; d < 2; d++) {
			const json_t *st = json_object_get(row, ng_oneway_keys[d]);
			double v[3];

			ng_plot_ci(st, &lo, &hi);
			v[0] = ng_plot_num(st, "median");
			v[1] = lo - b;
			v[2] = hi + b;
			for (int k = 0; k < 3; k++) {
				ng_plot_fmt_exact(buf, sizeof(buf), v[k]);
				fprintf(f, " %s", buf);
			}
		}
		fputc('\n', f);
	}
}

static void ng_dat_pingpong(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_rows(f, pf, ng_cols_pingpong);
	if (ng_pf_oneway(pf))
		ng_dat_oneway(f, pf);
}

static void ng_dat_1n(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_rows(f, pf, ng_cols_1n);
}

static void ng_dat_bw(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_rows(f, pf, ng_cols_bw);
}

/* Whether some row of file @i has a number under @key. */
static bool ng_rows_have(const struct ng_fig *g, size_t i, const char *key)
{
	json_t *row;
	size_t j;

	if (!key)
		return false;
	json_array_foreach(g->files[i]->rows, j, row)
	{
		if (isfinite(ng_plot_num(row, key)))
			return true;
	}
	return false;
}

/* The median of a file's pairs, named so beside the file's aggregate
 * series (number @aggregate of the rows; NULL: none). */
static const char *ng_pair_suffix(const struct ng_fig *g, size_t i, const char *aggregate)
{
	return ng_rows_have(g, i, aggregate) ? "per pair" : NULL;
}

/* A panel of one statistics key of the rows (table 0), one series per
 * file (and its aggregate, @aggregate, when the file has one). */
static void ng_row_panel(struct ng_fig *g, const struct ng_col *cols, const char *key, const char *name,
                         enum ng_unit u, const char *aggregate)
{
	size_t i;

	ng_gp_panel(g, name, u);
	for (i = 0; i < g->n; i++)
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, key), ng_pair_suffix(g, i, aggregate), NULL);
}

/*
 * A pingpong panel of @key, one series per file; where the rows carry a
 * module's prediction of the one-way time ("predicted_us", e.g. spipe's
 * model), it is drawn as a dotted line in the colour of the measurement:
 * the time itself, or size / time on a bandwidth panel; one key entry,
 * "model (dotted)", stands for all of them.
 */
static void ng_pp_panel(struct ng_fig *g, const char *key, const char *name, enum ng_unit u, bool bandwidth,
                        const char *aggregate)
{
	const struct ng_col *cols = ng_cols_pingpong;
	int pcol = ng_col_of(cols, "predicted_us");
	bool titled = false;
	size_t i;

	ng_gp_panel(g, name, u);
	for (i = 0; i < g->n; i++) {
		int style = (int)((size_t)g->style % NG_NSTYLES) + 1;

		if (!ng_rows_have(g, i, "predicted_us")) {
			const char *suffix = ng_pair_suffix(g, i, aggregate);

			/* beside the two directions (--one-way), the half round trip says so */
			if (!suffix && !bandwidth && ng_pf_oneway(g->files[i]))
				suffix = "half round trip";
			ng_gp_ci_series(g, i, 0, ng_col_of(cols, key), suffix, NULL);
			continue;
		}
		/* the measurement named as such beside the model */
		ng_gp_ci_series(g, i, 0, ng_col_of(cols, key), g->legend[i][0] ? NULL : "measured", NULL);
		ng_gp_next(g);
		ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
		/* the model's line starts at the first size above 0 (ypos(), gnuplot.c) */
		if (bandwidth)
			fprintf(g->plot,
			        " index 0 using " NG_GP_X ":(ypos($1, $1 / $%d)) with lines ls %d dt 3", pcol,
			        style);
		else
			fprintf(g->plot, " index 0 using " NG_GP_X ":(ypos($1, $%d)) with lines ls %d dt 3",
			        pcol, style);
		if (!bandwidth)
			ng_gp_range(g, i, 0, pcol, 1);
		/* one key entry for all of them: the colour says whose */
		if (titled) {
			fputs(" notitle", g->plot);
		} else {
			ng_gp_title(g, "", "model (dotted)", NULL);
			titled = true;
		}
	}
}

/* The plain series "LABEL aggregate" of number @key of the rows, for each
 * file whose rows have it (pairs of ranks: the sum over the pairs). */
static void ng_aggregate_series(struct ng_fig *g, const struct ng_col *cols, const char *key)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		if (ng_rows_have(g, i, key))
			ng_gp_plain_series(g, i, 0, ng_col_of(cols, key), true, ng_gp_style(g), "aggregate",
			                   NULL);
	}
}

static void ng_fig_pingpong(struct ng_fig *g)
{
	const struct ng_col *cols = ng_cols_pingpong;

	if (g->panels & NG_PANEL_LAT) {
		ng_pp_panel(g, "latency_us", "Latency", NG_UNIT_US, false, NULL);
		/* --one-way: both directions beside the half round trip */
		for (size_t i = 0; i < g->n; i++) {
			if (!ng_pf_oneway(g->files[i]))
				continue;
			ng_gp_ci_series(g, i, 1, 2, "client to server", NULL);
			ng_gp_ci_series(g, i, 1, 5, "server to client", NULL);
		}
		ng_gp_panel_end(g);
	}
	if (g->panels & NG_PANEL_BW) {
		ng_pp_panel(g, "bandwidth_MBps", "Bandwidth", NG_UNIT_MBPS, true, "aggregate_bandwidth_MBps");
		/* more than two ranks: the sum over the pairs as well */
		ng_aggregate_series(g, cols, "aggregate_bandwidth_MBps");
		ng_gp_panel_end(g);
	}
}

/* bw, bibw: bandwidth and message rate (--kind bandwidth keeps both). */
static void ng_fig_bw(struct ng_fig *g)
{
	const struct ng_col *cols = ng_cols_bw;

	if (g->panels & NG_PANEL_BW) {
		ng_row_panel(g, cols, "bandwidth_MBps", "Bandwidth", NG_UNIT_MBPS,
		             "aggregate_bandwidth_MBps");
		ng_aggregate_series(g, cols, "aggregate_bandwidth_MBps");
		ng_gp_panel_end(g);
	}
	if (g->panels & NG_PANEL_MSG) {
		ng_row_panel(g, cols, "messages_per_s", "Message rate (messages/s)", NG_UNIT_NONE,
		             "aggregate_messages_per_s");
		ng_aggregate_series(g, cols, "aggregate_messages_per_s");
		ng_gp_panel_end(g);
	}
}

static void ng_fig_1n(struct ng_fig *g)
{
	if (g->panels & NG_PANEL_LAT) {
		ng_row_panel(g, ng_cols_1n, "time_us", "Time per round", NG_UNIT_US, NULL);
		ng_gp_panel_end(g);
	}
	if (g->panels & NG_PANEL_BW) {
		ng_row_panel(g, ng_cols_1n, "aggregate_bandwidth_MBps", "Aggregate bandwidth", NG_UNIT_MBPS,
		             NULL);
		ng_gp_panel_end(g);
	}
}

/* The report's "bw" block: the window and the acknowledgement. */
static void ng_report_bw(FILE *f, const json_t *b)
{
	fputs("<h3>Streaming bandwidth</h3>\n<p class=\"note\">Each repetition is a window of "
	      "non-blocking messages (both ways for bibw) closed by one acknowledgement; bandwidth and "
	      "message rate are per window, MB = 10<sup>6</sup> bytes.</p>\n",
	      f);
	ng_html_kv(f, b);
}

const struct ng_figure ng_figure_pingpong = {
    .patterns = (const char *const[]){"pingpong", NULL},
    .panels = NG_PANEL_LAT | NG_PANEL_BW,
    .data = ng_dat_pingpong,
    .script = ng_fig_pingpong,
};

const struct ng_figure ng_figure_1n = {
    .patterns = (const char *const[]){"1n", "n1", NULL},
    .panels = NG_PANEL_LAT | NG_PANEL_BW,
    .data = ng_dat_1n,
    .script = ng_fig_1n,
};

const struct ng_figure ng_figure_bw = {
    .patterns = (const char *const[]){"bw", "bibw", NULL},
    .panels = NG_PANEL_BW | NG_PANEL_MSG,
    .data = ng_dat_bw,
    .script = ng_fig_bw,
    .report = {.block = "bw", .section = ng_report_bw},
};
