/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ngauge compare: ratios of medians between result files, their intervals,
 * rank tests and verdicts (contract in compare.h and doc/compare.md); the
 * command itself, its table, its JSON and its figure.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "analysis/stats.h"
#include "compare.h"
#include "compare_priv.h"
#include "compare_runs.h"
#include "gnuplot.h"
#include "html.h"
#include "plot.h"
#include "render.h"
#include "safefile.h"

/* The keys that, with the size, name a row. */
const char *const ng_cmp_ident[] = {"test", "sync", "op", "algorithm", "mode", "side", NULL};

/* ---- rows ---- */

static void row_id(const json_t *row, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "%.17g", ng_plot_num(row, "size"));

	for (size_t k = 0; ng_cmp_ident[k] && o < len; k++) {
		const json_t *v = json_object_get(row, ng_cmp_ident[k]);

		if (json_is_string(v))
			o += (size_t)snprintf(buf + o, len - o, " %s=%s", ng_cmp_ident[k],
			                      json_string_value(v));
	}
}

/* The row's identity without its size, for the table ("test=put sync=fence"). */
const char *ng_cmp_id_rest(const char *id)
{
	const char *s = strchr(id, ' ');

	return s ? s + 1 : "";
}

static size_t raw_samples(const json_t *row, const char *key, double **x_p)
{
	return ng_cmp_raw_samples(row, key, x_p);
}

static double median_of(const double *x, size_t n, double *tmp)
{
	memcpy(tmp, x, n * sizeof(*x));
	gsl_sort(tmp, 1, n);
	return gsl_stats_median_from_sorted_data(tmp, 1, n);
}

/* The Mann-Whitney rank test, two-sided, normal approximation with the tie
 * correction and a continuity correction. */
static double rank_test(const double *a, size_t na, const double *b, size_t nb)
{
	size_t n = na + nb, *idx = ng_plot_xcalloc(n, sizeof(*idx));
	double *all = ng_plot_xcalloc(n, sizeof(*all)), ra = 0, ties = 0, u, mean, var, z;

	memcpy(all, a, na * sizeof(*a));
	memcpy(all + na, b, nb * sizeof(*b));
	gsl_sort_index(idx, all, 1, n);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double rank;

		while (j + 1 < n && all[idx[j + 1]] == all[idx[i]])
			j++;
		rank = (double)(i + j) / 2.0 + 1.0;
		for (size_t k = i; k <= j; k++)
			if (idx[k] < na)
				ra += rank;
		ties += pow((double)(j - i + 1), 3) - (double)(j - i + 1);
		i = j + 1;
	}
	free(idx);
	free(all);
	u = ra - (double)na * ((double)na + 1) / 2.0;
	mean = (double)na * (double)nb / 2.0;
	var = (double)na * (double)nb / 12.0 * ((double)n + 1 - ties / ((double)n * ((double)n - 1)));
	if (var <= 0)
		return 1.0;
	z = (fabs(u - mean) - 0.5) / sqrt(var);
	return z <= 0 ? 1.0 : 2.0 * gsl_cdf_ugaussian_Q(z);
}

static const char *verdict(const struct ng_cmp *c, double ratio, double lo, double hi)
{
	double up = 1.0 + c->threshold, down = 1.0 / up;
	bool above = isfinite(lo) ? lo > 1.0 : true, below = isfinite(hi) ? hi < 1.0 : true;
	bool worse, better;

	if (!isfinite(ratio))
		return "same";
	worse = c->lower_better ? ratio > up && above : ratio < down && below;
	better = c->lower_better ? ratio < down && below : ratio > up && above;
	return worse ? "slower" : better ? "faster" : "same";
}

/* One run per side: the bootstrap of the samples and the rank test, or the
 * reported intervals. */
static void compare_one(const struct ng_cmp *c, struct ng_cmp_row *r)
{
	const json_t *sa = json_object_get(r->a, c->metric), *sb = json_object_get(r->b, c->metric);
	double *xa, *xb, la, ha, lb, hb;
	size_t na = raw_samples(r->a, c->metric, &xa), nb = raw_samples(r->b, c->metric, &xb);

	r->ma = ng_plot_num(sa, "median");
	r->mb = ng_plot_num(sb, "median");
	r->p = NAN;
	r->lo = r->hi = NAN;
	if (na && nb) {
		double *tmp = ng_plot_xcalloc(na > nb ? na : nb, sizeof(*tmp));

		r->ma = median_of(xa, na, tmp);
		r->mb = median_of(xb, nb, tmp);
		free(tmp);
		r->ratio = r->ma > 0 ? r->mb / r->ma : NAN;
		ng_stats_ratio_ci(xa, na, xb, nb, 0.5, &r->lo, &r->hi);
		r->p = rank_test(xa, na, xb, nb);
		r->method = "bootstrap";
	} else {
		r->ratio = r->ma > 0 && isfinite(r->mb) ? r->mb / r->ma : NAN;
		ng_plot_ci(sa, &la, &ha);
		ng_plot_ci(sb, &lb, &hb);
		if (isfinite(r->ratio) && la > 0 && ha > 0 && lb > 0 && hb > 0 && r->mb > 0) {
			double sea = (log(ha) - log(la)) / (2 * 1.96), seb = (log(hb) - log(lb)) / (2 * 1.96);
			double se = sqrt(sea * sea + seb * seb);

			r->lo = r->ratio * exp(-1.96 * se);
			r->hi = r->ratio * exp(1.96 * se);
			r->method = "reported-ci";
		} else {
			r->method = "medians";
		}
	}
	free(xa);
	free(xb);
}

/* The spread between --calibrate's runs (log sd) of the row @id; its
 * largest over rows where it has not that row. */
static double cal_sd(const struct ng_cmp *c, const char *id, const char *metric);

/* One run on a side and --calibrate: the interval widened by the spread
 * between the calibration's runs, once for each side with one run
 * (doc/compare.md). */
static void calibrate_row(const struct ng_cmp *c, struct ng_cmp_row *r)
{
	double sd, t, lr, hl, hh, w, nl, nh;
	int k = (r->na < 2) + (r->nb < 2);

	r->widen = NAN;
	if (!k || !c->cal || !isfinite(r->ratio) || !(r->ratio > 0))
		return;
	sd = cal_sd(c, r->id, c->metric);
	t = gsl_cdf_tdist_Pinv(0.975, (double)c->cal_runs - 1.0);
	lr = log(r->ratio);
	hl = isfinite(r->lo) && r->lo > 0 ? fmax(lr - log(r->lo), 0) : 0;
	hh = isfinite(r->hi) && r->hi > 0 ? fmax(log(r->hi) - lr, 0) : 0;
	w = t * sd * sqrt((double)k);
	nl = sqrt(hl * hl + w * w);
	nh = sqrt(hh * hh + w * w);
	r->widen = hl + hh > 0 ? (nl + nh) / (hl + hh) : NAN;
	r->lo = r->ratio * exp(-nl);
	r->hi = r->ratio * exp(nh);
}

/* Several runs on a side: the hierarchical bootstrap (compare_runs.h). */
static void compare_runs(const struct ng_cmp *c, struct ng_cmp_row *r, const json_t *const *ra,
                         const json_t *const *rb)
{
	struct ng_cmp_run *a = ng_plot_xcalloc(r->na, sizeof(*a)), *b = ng_plot_xcalloc(r->nb, sizeof(*b));
	size_t na = 0, nb = 0;

	for (size_t i = 0; i < r->na; i++)
		na += ng_cmp_run_from(ra[i], c->metric, &a[na]);
	for (size_t i = 0; i < r->nb; i++)
		nb += ng_cmp_run_from(rb[i], c->metric, &b[nb]);
	r->na = na;
	r->nb = nb;
	r->p = NAN;
	r->method = "hierarchical";
	if (na && nb) {
		ng_cmp_hier(a, na, b, nb, &r->ma, &r->mb, &r->ratio, &r->lo, &r->hi);
		r->cva = 100.0 * ng_cmp_log_sd(a, na);
		r->cvb = 100.0 * ng_cmp_log_sd(b, nb);
	} else {
		r->ma = r->mb = r->ratio = r->lo = r->hi = NAN;
	}
	for (size_t i = 0; i < na; i++)
		ng_cmp_run_free(&a[i]);
	for (size_t i = 0; i < nb; i++)
		ng_cmp_run_free(&b[i]);
	free(a);
	free(b);
}

/* The row @r of @na runs @ra of side A and @nb runs @rb of side B. */
static void compare_row(struct ng_cmp *c, struct ng_cmp_row *r, const json_t *const *ra, size_t na,
                        const json_t *const *rb, size_t nb)
{
	r->a = ra[0];
	r->b = rb[0];
	r->na = na;
	r->nb = nb;
	r->cva = r->cvb = NAN;
	if (na == 1 && nb == 1)
		compare_one(c, r);
	else
		compare_runs(c, r, ra, rb);
	if (r->na < 2 || r->nb < 2)
		c->nsingle++;
	calibrate_row(c, r);
	/* A median is known to the timer's resolution only: the interval holds
	 * the ratios of medians one resolution step apart (a tight distribution
	 * would otherwise give an interval narrower than the timer can tell). */
	if (c->res > 0 && isfinite(r->ratio) && r->ma > c->res) {
		double lo = (r->mb - c->res) / (r->ma + c->res), hi = (r->mb + c->res) / (r->ma - c->res);

		r->lo = isfinite(r->lo) && r->lo < lo ? r->lo : lo;
		r->hi = isfinite(r->hi) && r->hi > hi ? r->hi : hi;
	}
	r->verdict = verdict(c, r->ratio, r->lo, r->hi);
}

/* ---- manifests ---- */

struct ng_flat {
	char **path, **val;
	size_t n, cap;
};

/* Leaves that change from run to run on one machine: not differences. */
static bool volatile_leaf(const char *path)
{
	/* the timer's figures are measured anew by every launch (calibrated
	 * against CLOCK_MONOTONIC_RAW): its name says when the timer differs */
	static const char *const skip[] = {
	    "freq_khz.cur",        "transparent_in_use_kB", "hugepages.free", "].cpu", "parameters.output",
	    "timer.resolution_ns", "timer.overhead_ns",     "timer.tsc_ghz",  NULL};
	for (size_t i = 0; skip[i]; i++) {
		size_t l = strlen(skip[i]), p = strlen(path);

		if (p >= l && strcmp(path + p - l, skip[i]) == 0)
			return true;
	}
	return false;
}

static void flatten(struct ng_flat *fl, const char *path, const json_t *v)
{
	const char *k;
	const json_t *x;
	size_t i;

	if (!v)
		return; /* a block the file has not: the other file's leaves say "(absent)" */
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
		{
			char *p = ng_plot_xasprintf("%s%s%s", path, path[0] ? "." : "", k);
			flatten(fl, p, x);
			free(p);
		}
		return;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			char *p = ng_plot_xasprintf("%s[%zu]", path, i);
			flatten(fl, p, x);
			free(p);
		}
		return;
	}
	if (volatile_leaf(path))
		return;
	if (fl->n == fl->cap) {
		fl->cap = fl->cap ? 2 * fl->cap : 64;
		fl->path = realloc(fl->path, fl->cap * sizeof(*fl->path));
		fl->val = realloc(fl->val, fl->cap * sizeof(*fl->val));
		if (!fl->path || !fl->val) {
			ng_error("out of memory");
			abort();
		}
	}
	fl->path[fl->n] = ng_plot_xasprintf("%s", path);
	if (json_is_string(v))
		fl->val[fl->n] = ng_plot_xasprintf("%.120s", json_string_value(v));
	else
		fl->val[fl->n] = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	/* a file's text on one line of the table: control characters as spaces */
	for (char *c = fl->path[fl->n]; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	for (char *c = fl->val[fl->n]; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	fl->n++;
}

static void flat_free(struct ng_flat *fl)
{
	for (size_t i = 0; i < fl->n; i++) {
		free(fl->path[i]);
		free(fl->val[i]);
	}
	free(fl->path);
	free(fl->val);
}

static const char *flat_get(const struct ng_flat *fl, const char *path)
{
	for (size_t i = 0; i < fl->n; i++)
		if (strcmp(fl->path[i], path) == 0)
			return fl->val[i];
	return NULL;
}

static void add_diff(struct ng_cmp_pair *p, const char *path, const char *a, const char *b)
{
	if (p->ndiffs == NG_CMP_MAXDIFFS) {
		p->nmore++;
		return;
	}
	if (!p->diffs)
		p->diffs = ng_plot_xcalloc(NG_CMP_MAXDIFFS, sizeof(*p->diffs));
	p->diffs[p->ndiffs++] =
	    ng_plot_xasprintf("%s: %s vs %s", path, a ? a : "(absent)", b ? b : "(absent)");
}

/* The "setup" object of @doc's module block (the block named by its
 * "module"), flattened under "MODULE.setup". */
static void module_setup(struct ng_flat *fl, const json_t *doc)
{
	const char *mod = json_string_value(json_object_get(doc, "module"));
	const json_t *setup = mod ? json_object_get(json_object_get(doc, mod), "setup") : NULL;

	if (setup) {
		char *path = ng_plot_xasprintf("%s.setup", mod);
		flatten(fl, path, setup);
		free(path);
	}
}

/* What differs between the env, timer and parameters of the two files, and
 * the setup of their modules. */
static void manifest_diffs(struct ng_cmp_pair *p)
{
	static const char *const blocks[] = {"module", "ranks", "launch", "env", "timer", "parameters", NULL};
	struct ng_flat fa = {0}, fb = {0};

	for (size_t k = 0; blocks[k]; k++) {
		flatten(&fa, blocks[k], json_object_get(p->a->doc, blocks[k]));
		flatten(&fb, blocks[k], json_object_get(p->b->doc, blocks[k]));
	}
	/* the module's own "setup" (core/module.h, report): what configures its
	 * data path, such as ucx's UCX_* environment and transports */
	module_setup(&fa, p->a->doc);
	module_setup(&fb, p->b->doc);
	for (size_t i = 0; i < fa.n; i++) {
		const char *b = flat_get(&fb, fa.path[i]);

		if (!b || strcmp(b, fa.val[i]) != 0)
			add_diff(p, fa.path[i], fa.val[i], b);
	}
	for (size_t i = 0; i < fb.n; i++)
		if (!flat_get(&fa, fb.path[i]))
			add_diff(p, fb.path[i], NULL, fb.val[i]);
	flat_free(&fa);
	flat_free(&fb);
}

/* ---- the comparison ---- */

/* Whether larger is worse for @key: times are, rates and bandwidths not. */
static bool lower_is_better(const char *key)
{
	size_t l = strlen(key);

	return !(strstr(key, "MBps") || strstr(key, "per_s") || strstr(key, "rate") ||
	         (l > 3 && strcmp(key + l - 3, "_Gb") == 0));
}

/* The coarser timer resolution of @a and @b in the unit of @key (_us, _ns);
 * 0 for a measure that is no time, or files without one. */
static double timer_res(const char *key, const struct ng_plot_file *a, const struct ng_plot_file *b)
{
	double ra = ng_plot_num(json_object_get(a->doc, "timer"), "resolution_ns");
	double rb = ng_plot_num(json_object_get(b->doc, "timer"), "resolution_ns");
	double r = isfinite(ra) && isfinite(rb) ? fmax(ra, rb) : isfinite(ra) ? ra : isfinite(rb) ? rb : 0;
	size_t l = strlen(key);

	if (!(r > 0) || l < 3)
		return 0;
	if (strcmp(key + l - 3, "_us") == 0)
		return r / 1000.0;
	return strcmp(key + l - 3, "_ns") == 0 ? r : 0;
}

json_t *ng_cmp_num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static void figure_file(struct ng_cmp *c, const struct ng_cmp_pair *p)
{
	json_t *rows = json_array();
	struct ng_plot_file *f;

	for (size_t i = 0; i < p->n; i++) {
		const struct ng_cmp_row *r = &p->rows[i];

		if (isfinite(r->ratio))
			json_array_append_new(rows, json_pack("{s:f,s:i,s:{s:f,s:[o,o]}}", "size", r->size,
			                                      "count", 1, "ratio", "median", r->ratio, "ci95",
			                                      ng_cmp_num_or_null(r->lo),
			                                      ng_cmp_num_or_null(r->hi)));
	}
	if (!json_array_size(rows)) {
		json_decref(rows);
		return;
	}
	f = &c->fig[c->nfig++];
	f->path = p->b->path;
	f->doc = json_pack("{s:s,s:s,s:s,s:f,s:s,s:o}", "schema", "ngauge-compare/1", "module", p->b->module,
	                   "pattern", "compare", "threshold_pct", c->threshold * 100.0, "metric", c->metric,
	                   "results", rows);
	f->module = p->b->module;
	f->pattern = "compare";
	f->ranks = p->b->ranks;
	f->complete = true;
	f->rows = json_object_get(f->doc, "results");
	f->label = ng_plot_xasprintf("%s vs %s", p->b->user ? p->b->user : ng_plot_basename(p->b->path),
	                             p->a->user ? p->a->user : ng_plot_basename(p->a->path));
	f->user = f->label;
}

/* The runs of @nf files @f: each file's "repeat" blocks (ngauge --repeat),
 * or the file itself; their rows into *t_p (borrowed, malloc'ed array). */
static size_t side_tables(const struct ng_plot_file *f, size_t nf, const json_t ***t_p)
{
	size_t n = 0, cap = 0, i;
	const json_t **t = NULL, *b;

	for (size_t k = 0; k < nf; k++) {
		const json_t *blocks = json_object_get(json_object_get(f[k].doc, "repeat"), "blocks");
		size_t want = json_array_size(blocks) ? json_array_size(blocks) : 1;

		if (n + want > cap) {
			cap = 2 * (n + want);
			t = realloc(t, cap * sizeof(*t));
			if (!t) {
				ng_error("out of memory");
				abort();
			}
		}
		if (!json_array_size(blocks)) {
			t[n++] = f[k].rows;
			continue;
		}
		json_array_foreach(blocks, i, b)
		{
			if (json_is_array(json_object_get(b, "results")))
				t[n++] = json_object_get(b, "results");
		}
	}
	*t_p = t;
	return n;
}

/* The row of @rows named @id with @metric statistics, or NULL. */
static const json_t *find_row(const json_t *rows, const char *id, const char *metric)
{
	const json_t *r;
	char other[200];
	size_t i;

	json_array_foreach(rows, i, r)
	{
		if (!json_is_object(r) || !ng_plot_is_stats(json_object_get(r, metric)))
			continue;
		row_id(r, other, sizeof(other));
		if (strcmp(other, id) == 0)
			return r;
	}
	return NULL;
}

/* The rows named @id in the @nt runs @t, into @out; how many. */
static size_t rows_of_runs(const json_t *const *t, size_t nt, const char *id, const char *metric,
                           const json_t **out)
{
	size_t n = 0;

	for (size_t k = 0; k < nt; k++) {
		const json_t *r = find_row(t[k], id, metric);

		if (r)
			out[n++] = r;
	}
	return n;
}

/* The spread (log sd) of --calibrate's runs at the row @id, or NaN. */
static double cal_sd_at(const struct ng_cmp *c, const char *id, const char *metric)
{
	const json_t **t, **rows;
	size_t nt = side_tables(c->cal, 1, &t), n, m = 0;
	struct ng_cmp_run *runs;
	double sd;

	rows = ng_plot_xcalloc(nt, sizeof(*rows));
	n = rows_of_runs(t, nt, id, metric, rows);
	runs = ng_plot_xcalloc(n, sizeof(*runs));
	for (size_t i = 0; i < n; i++)
		m += ng_cmp_run_from(rows[i], metric, &runs[m]);
	sd = ng_cmp_log_sd(runs, m);
	for (size_t i = 0; i < m; i++)
		ng_cmp_run_free(&runs[i]);
	free(runs);
	free(rows);
	free(t);
	return sd;
}

static double cal_sd(const struct ng_cmp *c, const char *id, const char *metric)
{
	double sd = cal_sd_at(c, id, metric);

	return isfinite(sd) ? sd : c->cal_sd_max;
}

/* Takes --calibrate's file: its runs and its largest spread.  NG_ERR_PROTO
 * (said, with @cmd) when it has fewer than two runs or no row to measure. */
static ng_status take_cal(struct ng_cmp *c, const struct ng_plot_file *cal, const char *cmd)
{
	const json_t **t, *r;
	size_t nt, i;

	c->cal = cal;
	nt = side_tables(cal, 1, &t);
	c->cal_runs = nt;
	c->cal_sd_max = NAN;
	if (nt >= 2)
		json_array_foreach(t[0], i, r)
		{
			char id[200];
			double sd;

			row_id(r, id, sizeof(id));
			sd = cal_sd_at(c, id, c->metric);
			if (isfinite(sd) && !(sd <= c->cal_sd_max))
				c->cal_sd_max = sd;
		}
	free(t);
	if (nt < 2 || !isfinite(c->cal_sd_max)) {
		if (cmd)
			ng_error("%s: --calibrate %s: %s", cmd, cal->path,
			         nt < 2
			             ? "one run: give the file of a run with --repeat N (N of 2 or more, 5 "
			               "or more for a useful spread) of the same command"
			             : "no row with its measure in two runs or more");
		return NG_ERR_PROTO;
	}
	return NG_OK;
}

/* Compares the side of @nb files @fb with the baseline's @na files @fa
 * into @p.  NG_ERR_PROTO (said, with @cmd) when they cannot be. */
static ng_status compare_sides(struct ng_cmp *c, struct ng_cmp_pair *p, const char *cmd)
{
	const json_t **ta, **tb, **ra, **rb, *r0;
	size_t nta = side_tables(p->fa, p->nfa, &ta), ntb = side_tables(p->fb, p->nfb, &tb), i;
	ng_status st = NG_OK;

	for (size_t k = 0; k < p->nfa + p->nfb; k++) {
		const struct ng_plot_file *f = k < p->nfa ? &p->fa[k] : &p->fb[k - p->nfa];

		if (strcmp(p->a->pattern, f->pattern) != 0) {
			if (cmd)
				ng_error("%s: %s: pattern %s, %s is %s: they cannot be compared", cmd,
				         f->path, f->pattern, p->a->path, p->a->pattern);
			st = NG_ERR_PROTO;
			goto out;
		}
	}
	c->res = timer_res(c->metric, p->a, p->b);
	p->rows = ng_plot_xcalloc(json_array_size(ta[0]) + 1, sizeof(*p->rows));
	ra = ng_plot_xcalloc(nta, sizeof(*ra));
	rb = ng_plot_xcalloc(ntb, sizeof(*rb));
	json_array_foreach(ta[0], i, r0)
	{
		char id[200];
		size_t na, nb;

		if (!json_is_object(r0) || !ng_plot_is_stats(json_object_get(r0, c->metric)))
			continue;
		row_id(r0, id, sizeof(id));
		na = rows_of_runs(ta, nta, id, c->metric, ra);
		nb = rows_of_runs(tb, ntb, id, c->metric, rb);
		if (!na || !nb)
			continue;
		struct ng_cmp_row *r = &p->rows[p->n++];

		r->size = ng_plot_num(r0, "size");
		snprintf(r->id, sizeof(r->id), "%s", id);
		compare_row(c, r, ra, na, rb, nb);
	}
	free(ra);
	free(rb);
	if (!p->n) {
		if (cmd)
			ng_error(
			    "%s: %s: no row in common with %s (the same size, test, sync, algorithm, mode "
			    "and side, with %s statistics): they cannot be compared",
			    cmd, p->b->path, p->a->path, c->metric);
		st = NG_ERR_PROTO;
	}
out:
	free(ta);
	free(tb);
	return st;
}

ng_status ng_compare_groups(const struct ng_plot_file *files, size_t n, const size_t *group,
                            const struct ng_cmp_opts *o, const char *cmd, struct ng_cmp **c_p)
{
	struct ng_cmp *c = ng_plot_xcalloc(1, sizeof(*c));
	ng_status st = NG_OK;
	size_t na = 0;

	*c_p = NULL;
	c->threshold = o->threshold;
	c->metric = ng_plot_first_stats_key(&files[0]);
	if (!c->metric) {
		if (cmd)
			ng_error("%s: %s: no statistics in its rows: nothing to compare", cmd, files[0].path);
		free(c);
		return NG_ERR_PROTO;
	}
	c->lower_better = lower_is_better(c->metric);
	if (o->cal && take_cal(c, o->cal, cmd) != NG_OK) {
		free(c);
		return NG_ERR_PROTO;
	}
	c->pairs = ng_plot_xcalloc(n, sizeof(*c->pairs));
	c->fig = ng_plot_xcalloc(n, sizeof(*c->fig));
	while (na < n && group[na] == 0)
		na++;
	for (size_t k = na; k < n && st == NG_OK;) {
		struct ng_cmp_pair *p = &c->pairs[c->npairs++];
		size_t e = k;

		while (e < n && group[e] == group[k])
			e++;
		p->fa = p->a = &files[0];
		p->nfa = na;
		p->fb = p->b = &files[k];
		p->nfb = e - k;
		k = e;
		st = compare_sides(c, p, cmd);
		if (st == NG_OK) {
			manifest_diffs(p);
			figure_file(c, p);
		}
	}
	if (st) {
		ng_compare_free(c);
		return st;
	}
	*c_p = c;
	return NG_OK;
}

ng_status ng_compare_new(const struct ng_plot_file *files, size_t n, double threshold, const char *cmd,
                         struct ng_cmp **c_p)
{
	size_t *group = ng_plot_xcalloc(n, sizeof(*group));
	const struct ng_cmp_opts o = {.threshold = threshold};
	ng_status st;

	for (size_t i = 0; i < n; i++)
		group[i] = i;
	st = ng_compare_groups(files, n, group, &o, cmd, c_p);
	free(group);
	return st;
}

void ng_compare_free(struct ng_cmp *c)
{
	if (!c)
		return;
	for (size_t k = 0; k < c->npairs; k++) {
		for (size_t i = 0; i < c->pairs[k].ndiffs; i++)
			free(c->pairs[k].diffs[i]);
		free(c->pairs[k].diffs);
		free(c->pairs[k].rows);
	}
	for (size_t k = 0; k < c->nfig; k++) {
		json_decref(c->fig[k].doc);
		free(c->fig[k].label);
	}
	free(c->fig);
	free(c->pairs);
	free(c);
}

bool ng_compare_slower(const struct ng_cmp *c)
{
	for (size_t k = 0; k < c->npairs; k++)
		for (size_t i = 0; i < c->pairs[k].n; i++)
			if (strcmp(c->pairs[k].rows[i].verdict, "slower") == 0)
				return true;
	return false;
}

size_t ng_compare_single(const struct ng_cmp *c)
{
	return c->nsingle;
}

const struct ng_plot_file *ng_compare_figure_files(const struct ng_cmp *c, size_t *n_p)
{
	*n_p = c->nfig;
	return c->fig;
}
