/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The latency-throughput curve of a sweep of offered loads (plot --kind
 * load): the files are runs of one pattern at several --rate or --load
 * values (pingpong or bw open loop, patterns/engine/offered.h), and every
 * size becomes one curve across them: its median latency (95% CI as error
 * bars) and its p99 (dotted) against the rate that came back, log axes,
 * the points in the order of the offer.  The knee of a curve is the highest
 * offer that held, every lower offer having held too ("sustained" in the
 * rows): below it the latency is the path's, above it the queue's.  It is
 * marked by a ring, and the legend names it ("8 B, knee 180000/s"; "every
 * offer held" when the sweep did not reach it, "no offer held" when even
 * the lowest did not).
 *
 * Each file's data table holds its own rows; the curves, which run across
 * the files, are gnuplot datablocks in the script ($load_K, $knee_K).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"

static const struct ng_col ng_cols_load[] = {
    {"size", NG_COL_NUM},   {"offered", NG_COL_NUM},   {"achieved", NG_COL_NUM},
    {"median", NG_COL_NUM}, {"lo", NG_COL_NUM},        {"hi", NG_COL_NUM},
    {"p99", NG_COL_NUM},    {"sustained", NG_COL_NUM}, {NULL, NG_COL_NUM},
};

/* One point of a curve: a row of an open-loop run. */
struct ng_load_pt {
	double size, offered, achieved, median, lo, hi, p99;
	bool held;
};

/* Row @row as a point; false when it is no open-loop row. */
static bool ng_load_point(const json_t *row, struct ng_load_pt *p)
{
	const json_t *lat = json_object_get(row, "latency_us");

	if (!json_is_number(json_object_get(row, "offered_rate_per_s")) || !json_is_object(lat))
		return false;
	p->size = ng_plot_num(row, "size");
	p->offered = ng_plot_num(row, "offered_rate_per_s");
	p->achieved = ng_plot_num(row, "achieved_rate_per_s");
	p->median = ng_plot_num(lat, "median");
	ng_plot_ci(lat, &p->lo, &p->hi);
	p->p99 = ng_plot_num(lat, "p99");
	p->held = json_is_true(json_object_get(row, "sustained"));
	return true;
}

static void ng_dat_load(FILE *f, const struct ng_plot_file *pf)
{
	json_t *rows = ng_dat_xnew(json_array());
	struct ng_load_pt p;
	const json_t *row;
	size_t r;

	json_array_foreach(pf->rows, r, row)
	{
		json_t *o;

		if (!ng_load_point(row, &p))
			continue;
		o = ng_dat_xnew(json_object());
		json_object_set_new(o, "size", ng_dat_real(p.size));
		json_object_set_new(o, "offered", ng_dat_real(p.offered));
		json_object_set_new(o, "achieved", ng_dat_real(p.achieved));
		json_object_set_new(o, "median", ng_dat_real(p.median));
		json_object_set_new(o, "lo", ng_dat_real(p.lo));
		json_object_set_new(o, "hi", ng_dat_real(p.hi));
		json_object_set_new(o, "p99", ng_dat_real(p.p99));
		json_object_set_new(o, "sustained", ng_dat_real(p.held ? 1.0 : 0.0));
		json_array_append_new(rows, o);
	}
	ng_dat_table(f, 0, "offered load", rows, ng_cols_load, NULL);
	json_decref(rows);
}

static const char *ng_check_load(const struct ng_plot_file *pf)
{
	struct ng_load_pt p;
	const json_t *row;
	size_t r;

	json_array_foreach(pf->rows, r, row)
	{
		if (ng_load_point(row, &p))
			return NULL;
	}
	return "no offered load in its rows: the curve is drawn from open-loop runs (pingpong or bw with "
	       "--rate or --load)";
}

static int ng_load_by_offer(const void *a, const void *b)
{
	const struct ng_load_pt *x = a, *y = b;

	return (x->offered > y->offered) - (x->offered < y->offered);
}

static int ng_load_by_size(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The points of size @size over all files, in the order of the offer, into
 * @pts (room for every row); their number. */
static size_t ng_load_curve(const struct ng_fig *g, double size, struct ng_load_pt *pts)
{
	struct ng_load_pt p;
	const json_t *row;
	size_t n = 0, i, r;

	for (i = 0; i < g->n; i++) {
		json_array_foreach(g->files[i]->rows, r, row)
		{
			if (ng_load_point(row, &p) && p.size == size)
				pts[n++] = p;
		}
	}
	qsort(pts, n, sizeof(*pts), ng_load_by_offer);
	return n;
}

/* The knee of a curve sorted by offer: the index of the highest offer that
 * held with every lower one, or -1 when the lowest did not hold; @n when
 * every offer held (the sweep did not reach it). */
static long ng_load_knee(const struct ng_load_pt *pts, size_t n)
{
	size_t k = 0;

	while (k < n && pts[k].held)
		k++;
	return k == n ? (long)n : (long)k - 1;
}

static void ng_fig_load(struct ng_fig *g)
{
	size_t total = 0, nsizes = 0, i, j, r;
	double *sizes;
	struct ng_load_pt *pts, p;
	const json_t *row;

	for (i = 0; i < g->n; i++)
		total += json_array_size(g->files[i]->rows);
	sizes = ng_plot_xcalloc(total + 1, sizeof(*sizes));
	pts = ng_plot_xcalloc(total + 1, sizeof(*pts));
	for (i = 0; i < g->n; i++) {
		json_array_foreach(g->files[i]->rows, r, row)
		{
			if (!ng_load_point(row, &p))
				continue;
			for (j = 0; j < nsizes && sizes[j] != p.size; j++)
				;
			if (j == nsizes)
				sizes[nsizes++] = p.size;
		}
	}
	qsort(sizes, nsizes, sizeof(*sizes), ng_load_by_size);

	ng_gp_panel(g, "Latency", NG_UNIT_US);
	fputs("set logscale x 10\nset logscale y 10\nset xlabel 'Achieved rate (messages/s)'\n", g->gp);
	for (i = 0; i < g->n; i++)
		ng_gp_range(g, i, 0, ng_col_of(ng_cols_load, "median"), 4); /* median, lo, hi, p99 */
	for (j = 0; j < nsizes; j++) {
		size_t n = ng_load_curve(g, sizes[j], pts);
		long knee = ng_load_knee(pts, n);
		char name[64], *title;
		int style = ng_gp_style(g);

		ng_plot_size_words(name, sizeof(name), sizes[j]);
		fprintf(g->gp, "$load_%zu << EOD\n", j);
		for (size_t k = 0; k < n; k++)
			fprintf(g->gp, "%.10g %.10g %.10g %.10g %.10g %.10g\n", pts[k].achieved,
			        pts[k].median, pts[k].lo, pts[k].hi, pts[k].p99, pts[k].offered);
		fputs("EOD\n", g->gp);
		if (knee >= 0 && (size_t)knee < n) {
			fprintf(g->gp, "$knee_%zu << EOD\n%.10g %.10g\nEOD\n", j, pts[knee].achieved,
			        pts[knee].median);
			title = ng_plot_xasprintf("%s, knee %.0f/s", name, pts[knee].offered);
		} else {
			title = ng_plot_xasprintf("%s, %s", name,
			                          knee < 0 ? "no offer held" : "every offer held");
		}
		ng_gp_next(g);
		fprintf(g->plot, "$load_%zu using 1:2:3:4 with yerrorlines ls %d dt 1", j, style);
		ng_gp_title(g, "", title, NULL);
		ng_gp_next(g);
		fprintf(g->plot, "$load_%zu using 1:5 with linespoints ls %d dt 3 pt 0", j, style);
		if (j == 0)
			ng_gp_title(g, "", "p99 (dotted)", NULL);
		else
			fputs(" notitle", g->plot);
		if (knee >= 0 && (size_t)knee < n) {
			ng_gp_next(g);
			fprintf(g->plot,
			        "$knee_%zu using 1:2 with points lc rgb '%s' pt 6 ps 2.5 lw 2 notitle", j,
			        ng_gp_color(style));
		}
		free(title);
	}
	ng_gp_panel_end(g);
	fputs("unset logscale x\nunset logscale y\n", g->gp);
	free(pts);
	free(sizes);
}

const struct ng_figure ng_figure_load = {
    .patterns = (const char *const[]){"load", NULL},
    .panels = NG_PANEL_LOAD,
    .check = ng_check_load,
    .data = ng_dat_load,
    .script = ng_fig_load,
    .xname = "Achieved rate",
};
