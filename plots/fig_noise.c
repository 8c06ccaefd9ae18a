/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The noise figure, in the shape of Netgauge's and of the selfish-detour
 * papers' plots (Beckman et al.): the detours over time for every rank,
 * each a point at its start (ms since the common start) and its length
 * (us, log axis), one colour per rank, from the block's trace (the longest
 * detour of each of 1024 equal slots of the run); and the detours'
 * histogram per rank (bars of count against length, log axes).  A periodic
 * source shows as a row of evenly spaced points at one height, and as a
 * peak in the histogram.  And the report's "noise" section: per rank the
 * lost-time fraction, the detours and the longest one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

static const struct ng_col ng_cols_noise_trace[] = {
    {"t_ms", NG_COL_NUM},
    {"len_us", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_noise_hist[] = {
    {"center_us", NG_COL_NUM}, {"count", NG_COL_NUM}, {"lo_us", NG_COL_NUM},
    {"hi_us", NG_COL_NUM},     {NULL, NG_COL_NUM},
};

/* Ranks drawn with a key entry each; more share the colours, untitled. */
#define NG_NOISE_KEYED 8

static const json_t *ng_noise_ranks(const struct ng_plot_file *pf)
{
	return json_object_get(json_object_get(pf->doc, "noise"), "ranks");
}

/* Per rank r: table 2r its trace (start in ms), table 2r + 1 its histogram
 * (x: a bin's geometric centre). */
static void ng_dat_noise(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *rk, *d;
	size_t r, j;

	json_array_foreach(ng_noise_ranks(pf), r, rk)
	{
		json_t *trace = ng_dat_xnew(json_array()), *bins = ng_dat_xnew(json_array());
		char *name;

		json_array_foreach(json_object_get(rk, "trace"), j, d)
		{
			json_t *o = ng_dat_xnew(json_object());

			json_object_set_new(o, "t_ms", ng_dat_real(ng_plot_num(d, "t_us") / 1e3));
			json_object_set_new(o, "len_us", ng_dat_real(ng_plot_num(d, "len_us")));
			json_array_append_new(trace, o);
		}
		json_array_foreach(json_object_get(rk, "histogram"), j, d)
		{
			double lo = ng_plot_num(d, "lo_us"), hi = ng_plot_num(d, "hi_us");
			json_t *o = ng_dat_xnew(json_object());

			json_object_set_new(o, "center_us", ng_dat_real(sqrt(lo * hi)));
			json_object_set_new(o, "count", ng_dat_real(ng_plot_num(d, "count")));
			json_object_set_new(o, "lo_us", ng_dat_real(lo));
			json_object_set_new(o, "hi_us", ng_dat_real(hi));
			json_array_append_new(bins, o);
		}
		name = ng_plot_xasprintf("rank %zu trace", r);
		ng_dat_table(f, (int)(2 * r), name, trace, ng_cols_noise_trace, NULL);
		free(name);
		name = ng_plot_xasprintf("rank %zu histogram", r);
		ng_dat_table(f, (int)(2 * r + 1), name, bins, ng_cols_noise_hist, NULL);
		free(name);
		json_decref(trace);
		json_decref(bins);
	}
}

static const char *ng_check_noise(const struct ng_plot_file *pf)
{
	return json_is_array(ng_noise_ranks(pf)) ? NULL : "no \"noise\" block with ranks";
}

/* The key's text of rank @r: "rank R" for the first ranks, none after. */
static char *ng_noise_title(size_t r, size_t n)
{
	if (r < NG_NOISE_KEYED)
		return ng_plot_xasprintf("rank %zu", r);
	if (r == NG_NOISE_KEYED)
		return ng_plot_xasprintf("ranks %zu-%zu (colours repeat)", r, n - 1);
	return NULL;
}

/* One series per rank of every file: data block 2 r + @block of its file,
 * drawn as @how ("using ... with ...") in the rank's colour, the first
 * ranks keyed. */
static void ng_noise_series(struct ng_fig *g, int block, const char *how)
{
	size_t i, r, n;
	const json_t *rk;

	for (i = 0; i < g->n; i++) {
		n = json_array_size(ng_noise_ranks(g->files[i]));
		json_array_foreach(ng_noise_ranks(g->files[i]), r, rk)
		{
			int style = ng_gp_style(g);
			char *title = ng_noise_title(r, n);

			ng_gp_range(g, i, (int)(2 * r) + block, 2, 1);
			ng_gp_next(g);
			ng_gp_quote(g->plot, ng_plot_basename(g->dat[i]));
			fprintf(g->plot, " index %zu %s lc rgb '%s'", 2 * r + (size_t)block, how,
			        ng_gp_color(style));
			if (title)
				ng_gp_legend(g, i, title, NULL);
			else
				fputs(" notitle", g->plot);
			free(title);
		}
	}
}

static void ng_fig_noise(struct ng_fig *g)
{
	ng_gp_panel(g, "Detour", NG_UNIT_US);
	fputs("unset logscale x\nset logscale y 10\nset xlabel 'Time since the common start (ms)'\n", g->gp);
	ng_noise_series(g, 0, "using 1:2 with points pt 7 ps 0.5");
	ng_gp_panel_end(g);

	ng_gp_panel(g, "Detours", NG_UNIT_NONE);
	fputs("set logscale x 10\nset logscale y 10\nset format x '%g'\nset xlabel '", g->gp);
	ng_gp_chars(g->gp, "Detour length (" NG_MICRO "s)", g->term->tex);
	fputs("'\n", g->gp);
	ng_noise_series(g, 1, "using 1:2:3:4:(0.8):2 with boxxyerror fs transparent solid 0.3");
	ng_gp_panel_end(g);
	fputs("unset logscale x\nunset logscale y\n", g->gp);
}

/* The report: the method, then per rank its lost fraction, detours and the
 * longest one. */
static void ng_report_noise(FILE *f, const json_t *b)
{
	json_t *rows = ng_dat_xnew(json_array());
	const json_t *rk;
	size_t r;

	fputs("<h3>Operating-system noise</h3>\n<p class=\"note\">Per rank: the time measured, the detours "
	      "found "
	      "(gaps above the threshold), the fraction of the time they took and the longest one with its "
	      "start (" NG_MICRO "s since the common start). The figure shows every rank's detours over time "
	      "(the longest of each of 1024 slots) and their histogram.</p>\n",
	      f);
	fputs("<p>Method: ", f);
	ng_html_value(f, json_object_get(b, "method"));
	fputs(", ", f);
	ng_html_value(f, json_object_get(b, "time_s"));
	fputs(" s per rank.</p>\n", f);
	json_array_foreach(json_object_get(b, "ranks"), r, rk)
	{
		json_t *o = ng_dat_xnew(json_object());
		const json_t *top = json_array_get(json_object_get(rk, "longest"), 0);

		json_object_set(o, "rank", json_object_get(rk, "rank"));
		json_object_set(o, "span_us", json_object_get(rk, "span_us"));
		json_object_set(o, "detours", json_object_get(rk, "detours"));
		json_object_set(o, "lost_fraction", json_object_get(rk, "lost_fraction"));
		json_object_set(o, "threshold_ns", json_object_get(rk, "threshold_ns"));
		if (top) {
			json_object_set(o, "longest_us", json_object_get(top, "len_us"));
			json_object_set(o, "longest_at_us", json_object_get(top, "t_us"));
		}
		json_array_append_new(rows, o);
	}
	if (json_array_size(rows))
		ng_html_rows(f, rows);
	json_decref(rows);
}

const struct ng_figure ng_figure_noise = {
    .patterns = (const char *const[]){"noise", NULL},
    .panels = NG_PANEL_LAT,
    .check = ng_check_noise,
    .data = ng_dat_noise,
    .script = ng_fig_noise,
    .xname = "Time since the common start",
    .report = {.block = "noise", .section = ng_report_noise},
};
