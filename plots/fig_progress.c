/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress figures, on linear axes: time against computation, one
 * series per size (and computing side), a data table per series.  overlap:
 * time per iteration against the computation, with the lines of no overlap
 * and of perfect overlap; skew: the origin's time against the target's
 * computation, with the fitted line and its slope.  And the report's
 * "overlap" and "skew" sections.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"
#include "html.h"

static const struct ng_col ng_cols_overlap[] = {
    {"compute_measured_us", NG_COL_STATS},
    {"time_us", NG_COL_STATS},
    {"compute_us", NG_COL_NUM},
    {"exposed_us", NG_COL_STATS},
    {"overlap_ratio", NG_COL_NUM},
    {"overlap_ratio_lo", NG_COL_NUM},
    {"overlap_ratio_hi", NG_COL_NUM},
    {"overlap_bound", NG_COL_NUM},
    {"size", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const struct ng_col ng_cols_skew[] = {
    {"skew_measured_us", NG_COL_STATS},
    {"time_us", NG_COL_STATS},
    {"skew_us", NG_COL_NUM},
    {"size", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

/* One series: the rows of one size and (overlap) one computing side. */
struct ng_series {
	double size;
	const char *side; /* borrowed; NULL without "side" */
	double t0;        /* median time of the first row (no computation) */
	double xmax;      /* largest measured computation */
};

static bool ng_series_is(const struct ng_series *se, const json_t *row)
{
	const json_t *side = json_object_get(row, "side");

	return ng_plot_num(row, "size") == se->size &&
	       (json_is_string(side) ? se->side && strcmp(se->side, json_string_value(side)) == 0
	                             : !se->side);
}

/* The series of file @pf in the order of its rows, with the x column
 * @xkey; free the array. */
static struct ng_series *ng_series_of(const struct ng_plot_file *pf, const char *xkey, size_t *n_p)
{
	struct ng_series *se = ng_plot_xcalloc(json_array_size(pf->rows) + 1, sizeof(*se));
	size_t n = 0, i, k;
	const json_t *row;

	json_array_foreach(pf->rows, i, row)
	{
		const json_t *side = json_object_get(row, "side");
		double x = ng_plot_num(json_object_get(row, xkey), "median");

		for (k = 0; k < n && !ng_series_is(&se[k], row); k++)
			;
		if (k == n) {
			se[n].size = ng_plot_num(row, "size");
			se[n].side = json_is_string(side) ? json_string_value(side) : NULL;
			se[n].t0 = ng_plot_num(json_object_get(row, "time_us"), "median");
			se[n++].xmax = 0;
		}
		if (x > se[k].xmax)
			se[k].xmax = x;
	}
	*n_p = n;
	return se;
}

/* Table k: the rows of series k. */
static void ng_dat_progress(FILE *f, const struct ng_plot_file *pf, const struct ng_col *cols,
                            const char *xkey)
{
	size_t n, k, i;
	struct ng_series *se = ng_series_of(pf, xkey, &n);
	const json_t *row;

	for (k = 0; k < n; k++) {
		json_t *arr = json_array();
		char *name = ng_plot_xasprintf("size %.17g%s%s", se[k].size, se[k].side ? ", side " : "",
		                               se[k].side ? se[k].side : "");

		json_array_foreach(pf->rows, i, row)
		{
			if (ng_series_is(&se[k], row))
				json_array_append((json_t *)arr, (json_t *)row);
		}
		ng_dat_table(f, (int)k, name, arr, cols, NULL);
		json_decref(arr);
		free(name);
	}
	free(se);
}

static void ng_dat_overlap(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_progress(f, pf, ng_cols_overlap, "compute_measured_us");
}

static void ng_dat_skew(FILE *f, const struct ng_plot_file *pf)
{
	ng_dat_progress(f, pf, ng_cols_skew, "skew_measured_us");
}

/* The points of series @k of file @i with their CIs, titled with the file's
 * legend and, where the file has several series, the size and side. */
static int ng_series_points(struct ng_fig *g, size_t i, size_t k, const struct ng_series *se, size_t n,
                            const struct ng_col *cols)
{
	char size[64] = "", *suffix;

	if (n > 1)
		ng_plot_size_words(size, sizeof(size), se[k].size);
	/* after a --label in parentheses, as the user's text may say anything */
	if (se[k].side)
		suffix = ng_plot_xasprintf("%s%s computes%s%s%s", g->files[i]->user ? "(" : "", se[k].side,
		                           size[0] ? ", " : "", size, g->files[i]->user ? ")" : "");
	else
		suffix = ng_plot_xasprintf("%s", size);
	ng_gp_ci_using(g, i, (int)k, ng_col_of(cols, "time_us"));
	ng_gp_legend(g, i, suffix[0] ? suffix : NULL, NULL);
	free(suffix);
	/* the style ng_gp_ci_using took (1-based) */
	return (int)((size_t)(g->style - 1) % NG_NSTYLES) + 1;
}

/* Tics of the linear x axis from 0 to @xmax: a step of 1, 2 or 5 times a
 * power of ten, about 5 tics (gnuplot's own choice crowds the labels of a
 * panel this narrow). */
static void ng_linear_xtics(struct ng_fig *g, double xmax)
{
	double raw = xmax / 5, mag, step;

	if (!(raw > 0) || !isfinite(raw))
		return;
	mag = pow(10, floor(log10(raw)));
	step = raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
	fprintf(g->gp, "set xtics %g\n", step);
}

/* A key entry for the lines drawn with dash type @dt. */
static void ng_key_line(struct ng_fig *g, const char *dt, const char *title)
{
	ng_gp_next(g);
	fprintf(g->plot, "NaN with lines lw 1 dt %s lc rgb '#666666'", dt);
	ng_gp_title(g, "", title, NULL);
}

/* Time per iteration against computation; per series the no-overlap line
 * T(0) + X (dashed) and the perfect-overlap line max(T(0), X) (dotted). */
static void ng_fig_overlap(struct ng_fig *g)
{
	char t0[40];
	size_t i, k, n;
	double xmax = 0;
	bool any = false;

	ng_gp_panel(g, "Time per iteration", NG_UNIT_US);
	for (i = 0; i < g->n; i++) {
		struct ng_series *se = ng_series_of(g->files[i], "compute_measured_us", &n);

		for (k = 0; k < n; k++) {
			int style = ng_series_points(g, i, k, se, n, ng_cols_overlap);

			xmax = fmax(xmax, se[k].xmax);
			const char *color = ng_gp_color(style);

			if (!isfinite(se[k].t0))
				continue;
			ng_plot_fmt_exact(t0, sizeof(t0), se[k].t0);
			ng_gp_next(g);
			fprintf(g->plot, "(x >= 0 ? %s + x : NaN) with lines lw 1 dt 2 lc rgb '%s' notitle",
			        t0, color);
			ng_gp_next(g);
			fprintf(g->plot,
			        "(x >= 0 ? (x < %s ? %s : x) : NaN) with lines lw 1 dt 3 lc rgb '%s' notitle",
			        t0, t0, color);
			any = true;
		}
		free(se);
	}
	if (any) {
		ng_key_line(g, "2", "no overlap: T(0) + X");
		ng_key_line(g, "3", "perfect overlap: max(T(0), X)");
	}
	ng_linear_xtics(g, xmax);
	ng_gp_panel_end(g);
}

/* The block entry of @size in @pf's "skew" block, or NULL. */
static const json_t *ng_skew_entry(const struct ng_plot_file *pf, double size)
{
	const json_t *e;
	size_t j;

	json_array_foreach(json_object_get(json_object_get(pf->doc, "skew"), "sizes"), j, e)
	{
		if (ng_plot_num(e, "size") == size)
			return e;
	}
	return NULL;
}

/* The origin's time against the target's computation, with the fitted line
 * and its slope in the key. */
static void ng_fig_skew(struct ng_fig *g)
{
	char a[40], b[40], hi[40];
	size_t i, k, n;
	double xmax = 0;

	ng_gp_panel(g, "Origin's time per operation", NG_UNIT_US);
	for (i = 0; i < g->n; i++) {
		struct ng_series *se = ng_series_of(g->files[i], "skew_measured_us", &n);

		for (k = 0; k < n; k++) {
			int style = ng_series_points(g, i, k, se, n, ng_cols_skew);
			const json_t *e = ng_skew_entry(g->files[i], se[k].size);
			const json_t *slope = json_object_get(e, "slope");
			double va = ng_plot_num(json_object_get(e, "intercept_us"), "value");
			double vb = ng_plot_num(slope, "value"), lo, up;
			char *title;

			xmax = fmax(xmax, se[k].xmax);
			if (!isfinite(va) || !isfinite(vb))
				continue;
			ng_plot_ci(slope, &lo, &up);
			ng_plot_fmt_exact(a, sizeof(a), va);
			ng_plot_fmt_exact(b, sizeof(b), vb);
			ng_plot_fmt_exact(hi, sizeof(hi), se[k].xmax);
			ng_gp_next(g);
			fprintf(g->plot,
			        "(x >= 0 && x <= %s ? %s + %s * x : NaN) with lines ls %d dt solid lw 1", hi,
			        a, b, style);
			title = ng_plot_xasprintf("slope %.2f [%.2f, %.2f]", vb, lo, up);
			ng_gp_legend(g, i, title, NULL);
			free(title);
		}
		free(se);
	}
	ng_linear_xtics(g, xmax);
	ng_gp_panel_end(g);
}

/*
 * The report's overlap and skew blocks: their settings (the block's plain
 * entries), the figures of every size with their CIs, and the calibration
 * of the computation on each rank.
 */
static void ng_report_progress(FILE *f, const json_t *b, const char *title, const char *note)
{
	const json_t *compute;
	json_t *plain, *v;
	const char *k;

	fprintf(f, "<h3>%s</h3>\n<p class=\"note\">%s</p>\n", title, note);
	plain = json_object();
	if (!plain) {
		ng_error("out of memory");
		abort();
	}
	json_object_foreach((json_t *)b, k, v)
	{
		if (!json_is_array(v) && !json_is_object(v))
			json_object_set(plain, k, v);
	}
	ng_html_kv(f, plain);
	json_decref(plain);
	if (json_is_array(json_object_get(b, "sizes")))
		ng_html_rows(f, json_object_get(b, "sizes"));
	compute = json_object_get(b, "compute");
	if (json_is_object(compute)) {
		fputs("<p class=\"note\">Calibrated computation (", f);
		ng_html_value(f, json_object_get(compute, "kernel"));
		fputs("): iterations per " NG_MICRO
		      "s at the start and at the end of the run, per rank.</p>\n",
		      f);
		if (json_is_array(json_object_get(compute, "ranks")))
			ng_html_rows(f, json_object_get(compute, "ranks"));
	}
}

static void ng_report_overlap(FILE *f, const json_t *b)
{
	ng_report_progress(f, b, "Overlap of communication and computation",
	                   "Per size and computing side: the transfer time T(0) without computation and the "
	                   "overlap ratio (T(0) + X &minus; T(X)) / T(0) at the largest computation X, with "
	                   "95% confidence intervals (the ratio's from a bootstrap); 0: the computation adds "
	                   "to the transfer, 1: the transfer is hidden.");
}

static void ng_report_skew(FILE *f, const json_t *b)
{
	ng_report_progress(f, b, "Process skew",
	                   "Per size: the origin's time without skew T(0) and the slope of its time against "
	                   "the target's computation (least squares, 95% confidence intervals); 0: the "
	                   "transfer progresses without the target, 1: the origin waits for all of it.");
}

const struct ng_figure ng_figure_overlap = {
    .patterns = (const char *const[]){"overlap", NULL},
    .panels = NG_PANEL_LAT,
    .block = "overlap",
    .data = ng_dat_overlap,
    .script = ng_fig_overlap,
    .xname = "Computation",
    .report = {.block = "overlap", .section = ng_report_overlap},
};

const struct ng_figure ng_figure_skew = {
    .patterns = (const char *const[]){"skew", NULL},
    .panels = NG_PANEL_LAT,
    .block = "skew",
    .data = ng_dat_skew,
    .script = ng_fig_skew,
    .xname = "Computation at the target (skew)",
    .report = {.block = "skew", .section = ng_report_skew},
};
