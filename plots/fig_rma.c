/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rma suite's figures, drawn in parts: one figure per test (the rows'
 * "test", doc/result-format.md), one series per file and synchronisation
 * mode, like the figures of the one-sided papers: time per epoch or
 * iteration, bandwidth; sync against the number of origins (one target) and,
 * in a panel of its own, of targets (one origin); multi-origin against
 * origins; lock's latency and, in a second panel, the throughput of n
 * origins.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data.h"
#include "figure.h"
#include "gnuplot.h"

enum ng_rma_x { NG_RMA_X_SIZE, NG_RMA_X_ORIGINS, NG_RMA_X_TARGETS };

/* A test's figure: its first panel (lock has a second: throughput). */
struct ng_rma_fig {
	const char *test; /* NULL: a test this table does not know */
	const char *name; /* y label */
	const char *key;  /* statistics key drawn */
	enum ng_unit unit;
	unsigned panel;
	enum ng_rma_x x;
};

static const struct ng_rma_fig ng_rma_figs[] = {
    {"put-pingpong", "Time per epoch", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"get-pingpong", "Time per epoch", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"acc-pingpong", "Time per epoch", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"bidir", "Time per epoch", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"put-bw", "Bandwidth", "bandwidth_MBps", NG_UNIT_MBPS, NG_PANEL_BW, NG_RMA_X_SIZE},
    {"get-bw", "Bandwidth", "bandwidth_MBps", NG_UNIT_MBPS, NG_PANEL_BW, NG_RMA_X_SIZE},
    {"sync", "Time per iteration", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_ORIGINS},
    {"multi-origin", "Aggregate bandwidth", "bandwidth_MBps", NG_UNIT_MBPS, NG_PANEL_BW, NG_RMA_X_ORIGINS},
    {"sched-1", "Throughput", "bandwidth_MBps", NG_UNIT_MBPS, NG_PANEL_BW, NG_RMA_X_SIZE},
    {"sched-2", "Time per iteration", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {"lock", "Lock, put, unlock", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
    {NULL, "Time", "time_us", NG_UNIT_US, NG_PANEL_LAT, NG_RMA_X_SIZE},
};

static const struct ng_rma_fig *ng_rma_fig_of(const char *test)
{
	const struct ng_rma_fig *f = ng_rma_figs;

	while (f->test && strcmp(f->test, test) != 0)
		f++;
	return f;
}

/* The panels of test @sub's figure. */
static unsigned ng_rma_panels(const char *sub)
{
	const struct ng_rma_fig *f = ng_rma_fig_of(sub);

	return f->panel | (f->test && strcmp(f->test, "lock") == 0 ? NG_PANEL_BW : 0);
}

/* One series of a test: the rows of one synchronisation mode, against size,
 * origins (with one target) or targets (with one origin). */
struct ng_rma_series {
	const char *sync;
	enum ng_rma_x x;
	double size; /* NaN: every size */
	bool single; /* size axis: rows with one origin and one target only (lock) */
	int panel;   /* 0: the first panel; 1: sync's targets, lock's throughput */
};

#define NG_RMA_MAXSERIES 32

/* The size of lock's throughput rows: the block's, else the smallest size
 * among rows with several origins. */
static double ng_rma_lock_size(const struct ng_plot_file *pf)
{
	double v = ng_plot_num(json_object_get(pf->doc, "rma"), "lock_throughput_size"), s;
	const json_t *row;
	size_t r;

	if (isfinite(v))
		return v;
	json_array_foreach(pf->rows, r, row)
	{
		s = ng_plot_num(row, "size");
		if (ng_plot_row_is(row, "test", "lock") && ng_plot_num(row, "origins") > 1 && !(s >= v))
			v = s;
	}
	return v;
}

static bool ng_rma_row_in(const json_t *row, const char *test, const struct ng_rma_series *s)
{
	double o = ng_plot_num(row, "origins"), t = ng_plot_num(row, "targets");

	if (!ng_plot_row_is(row, "test", test) || !ng_plot_row_is(row, "sync", s->sync))
		return false;
	if (isfinite(s->size) && ng_plot_num(row, "size") != s->size)
		return false;
	switch (s->x) {
	case NG_RMA_X_SIZE:
		return !s->single || (o <= 1 && t <= 1);
	case NG_RMA_X_ORIGINS:
		return t == 1;
	case NG_RMA_X_TARGETS:
		return o == 1 && t > 1;
	}
	return false;
}

/* Appends series @s unless it is there or holds no row of @pf. */
static void ng_rma_series_add(const struct ng_plot_file *pf, const char *test, struct ng_rma_series *out,
                              size_t *n, const struct ng_rma_series *s)
{
	const json_t *row;
	size_t i, r;

	for (i = 0; i < *n; i++)
		if (strcmp(out[i].sync, s->sync) == 0 && out[i].x == s->x && out[i].panel == s->panel &&
		    (out[i].size == s->size || (isnan(out[i].size) && isnan(s->size))))
			return;
	if (*n == NG_RMA_MAXSERIES)
		return;
	json_array_foreach(pf->rows, r, row)
	{
		if (ng_rma_row_in(row, test, s)) {
			out[(*n)++] = *s;
			return;
		}
	}
}

/* The series of test @test in file @pf, in the order of their first rows:
 * the first panel's, then (lock) the throughput panel's. */
static size_t ng_rma_series_of(const struct ng_plot_file *pf, const char *test, struct ng_rma_series *out)
{
	const struct ng_rma_fig *f = ng_rma_fig_of(test);
	bool lock = f->test && strcmp(f->test, "lock") == 0;
	bool multi = f->test && strcmp(f->test, "multi-origin") == 0;
	size_t n = 0, r, pass;
	const json_t *row;

	for (pass = 0; pass < (lock ? 2u : 1u); pass++) {
		json_array_foreach(pf->rows, r, row)
		{
			const char *sync = json_string_value(json_object_get(row, "sync"));
			struct ng_rma_series s = {.sync = sync, .x = f->x, .size = NAN, .single = lock};

			if (!sync || !ng_plot_row_is(row, "test", test))
				continue;
			if (pass == 1) {
				s = (struct ng_rma_series){.sync = sync,
				                           .x = NG_RMA_X_ORIGINS,
				                           .size = ng_rma_lock_size(pf),
				                           .panel = 1};
			} else if (multi) {
				s.size = ng_plot_num(row, "size");
			} else if (f->x == NG_RMA_X_ORIGINS && ng_plot_num(row, "targets") > 1) {
				s.x = NG_RMA_X_TARGETS;
				s.panel = 1;
			}
			ng_rma_series_add(pf, test, out, &n, &s);
		}
	}
	return n;
}

/* Columns of every rma table: x, then these. */
static const struct ng_col ng_cols_rma[] = {
    {"x", NG_COL_NUM},
    {"time_us", NG_COL_STATS},
    {"bandwidth_MBps", NG_COL_STATS},
    {"epochs_per_s", NG_COL_STATS},
    {"aggregate_epochs_per_s", NG_COL_NUM},
    {NULL, NG_COL_NUM},
};

static const char *const ng_rma_xkeys[] = {"size", "origins", "targets"};

/* The legend text of a series ("pscw", "pscw, 64 KiB", "pscw, n targets"). */
static void ng_rma_series_name(char *buf, size_t len, const char *test, const struct ng_rma_series *s)
{
	double v = s->size;

	if (strcmp(test, "multi-origin") == 0 && isfinite(v))
		snprintf(buf, len, "%s, %g %s", s->sync, v >= 1024 ? v / 1024 : v, v >= 1024 ? "KiB" : "B");
	else if (strcmp(test, "sync") == 0)
		snprintf(buf, len, "%s, %s", s->sync,
		         s->x == NG_RMA_X_TARGETS ? "1 origin, n targets" : "n origins, 1 target");
	else
		snprintf(buf, len, "%s", s->sync);
}

static void ng_dat_rma(FILE *f, const struct ng_plot_file *pf, const char *test)
{
	struct ng_rma_series ser[NG_RMA_MAXSERIES];
	size_t n = ng_rma_series_of(pf, test, ser), i, r;
	const json_t *row;
	char name[96];

	for (i = 0; i < n; i++) {
		ng_rma_series_name(name, sizeof(name), test, &ser[i]);
		fprintf(f, "%s# table %zu: ", i ? "\n\n" : "", i);
		ng_gp_chars(f, name, false);
		fprintf(f, "%s\n# columns: %s",
		        ser[i].panel && strcmp(test, "lock") == 0 ? " (throughput)" : "",
		        ng_rma_xkeys[ser[i].x]);
		for (const struct ng_col *c = ng_cols_rma + 1; c->key; c++) {
			if (c->type == NG_COL_NUM)
				fprintf(f, " %s", c->key);
			else
				fprintf(f, " %s_median %s_ci95_lo %s_ci95_hi", c->key, c->key, c->key);
		}
		fputc('\n', f);
		json_array_foreach(pf->rows, r, row)
		{
			bool first = true;

			if (!ng_rma_row_in(row, test, &ser[i]))
				continue;
			ng_dat_json(f, &first, json_object_get(row, ng_rma_xkeys[ser[i].x]));
			for (const struct ng_col *c = ng_cols_rma + 1; c->key; c++) {
				if (c->type == NG_COL_NUM)
					ng_dat_json(f, &first, json_object_get(row, c->key));
				else
					ng_dat_triple(f, &first, json_object_get(row, c->key), "median");
			}
			fputc('\n', f);
		}
	}
}

/* The largest @key (origins, targets) of the part's rows: the end of a
 * rank-count axis. */
static double ng_rma_xmax(const struct ng_fig *g, const char *key)
{
	double max = 1, v;
	const json_t *row;
	size_t i, r;

	for (i = 0; i < g->n; i++) {
		json_array_foreach(g->files[i]->rows, r, row)
		{
			v = ng_plot_num(row, key);
			if (ng_plot_row_is(row, g->desc->parts.key, g->sub) && v > max && v < 1e6)
				max = v;
		}
	}
	return max;
}

/* Whether some file has a series in @panel. */
static bool ng_rma_has_panel(const struct ng_fig *g, int panel)
{
	struct ng_rma_series ser[NG_RMA_MAXSERIES];
	size_t i, k, n;

	for (i = 0; i < g->n; i++) {
		n = ng_rma_series_of(g->files[i], g->sub, ser);
		for (k = 0; k < n; k++)
			if (ser[k].panel == panel)
				return true;
	}
	return false;
}

/* The series of @panel of every file: @key with its CI (a STATS key), or
 * as plain values. */
static void ng_rma_panel(struct ng_fig *g, int panel, const char *key)
{
	struct ng_rma_series ser[NG_RMA_MAXSERIES];
	int col = ng_col_of(ng_cols_rma, key);
	bool plain = false;
	char name[96];
	size_t i, k, n;

	for (const struct ng_col *c = ng_cols_rma; c->key; c++)
		plain = plain || (strcmp(c->key, key) == 0 && c->type == NG_COL_NUM);
	for (i = 0; i < g->n; i++) {
		n = ng_rma_series_of(g->files[i], g->sub, ser);
		for (k = 0; k < n; k++) {
			if (ser[k].panel != panel)
				continue;
			ng_rma_series_name(name, sizeof(name), g->sub, &ser[k]);
			if (plain)
				ng_gp_plain_series(g, i, (int)k, col, true, ng_gp_style(g), name, NULL);
			else
				ng_gp_ci_series(g, i, (int)k, col, name, NULL);
		}
	}
}

/* The test's figure (its name is in the title): its first panel against
 * size or origins; sync's targets and lock's throughput in a second. */
static void ng_fig_rma(struct ng_fig *g)
{
	const struct ng_rma_fig *f = ng_rma_fig_of(g->sub);
	bool lock = f->test && strcmp(f->test, "lock") == 0;
	bool sync = f->test && strcmp(f->test, "sync") == 0;

	if (!ng_rma_has_panel(g, 0) && !ng_rma_has_panel(g, 1))
		ng_gp_note(g,
		           "no row of the test with the sync, origins and targets its series are drawn by");
	if ((g->panels & f->panel) && ng_rma_has_panel(g, 0)) {
		ng_gp_panel(g, f->name, f->unit);
		if (lock)
			fputs("set title 'lock: latency'\n", g->gp);
		if (f->x != NG_RMA_X_SIZE)
			ng_gp_xlinear(g, sync ? "Origins (one target)" : "Origins",
			              ng_rma_xmax(g, "origins"));
		ng_rma_panel(g, 0, f->key);
		ng_gp_panel_end(g);
	}
	if (sync && (g->panels & f->panel) && ng_rma_has_panel(g, 1)) {
		ng_gp_panel(g, f->name, f->unit);
		ng_gp_xlinear(g, "Targets (one origin)", ng_rma_xmax(g, "targets"));
		ng_rma_panel(g, 1, f->key);
		ng_gp_panel_end(g);
	}
	if (lock && (g->panels & NG_PANEL_BW) && ng_rma_has_panel(g, 1)) {
		ng_gp_panel(g, "Lock epochs", NG_UNIT_PER_S);
		fputs("set title 'lock: throughput of n origins'\n", g->gp);
		ng_gp_xlinear(g, "Origins", ng_rma_xmax(g, "origins"));
		/* every origin's epochs over the span in which they ran */
		ng_rma_panel(g, 1, "aggregate_epochs_per_s");
		ng_gp_panel_end(g);
	}
}

const struct ng_figure ng_figure_rma = {
    .patterns = (const char *const[]){"rma", NULL},
    .panels = NG_PANEL_LAT | NG_PANEL_BW,
    .script = ng_fig_rma,
    .parts = {.key = "test", .panels = ng_rma_panels, .data = ng_dat_rma},
};
