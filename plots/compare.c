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
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "compare.h"
#include "gnuplot.h"
#include "html.h"
#include "plot.h"
#include "render.h"
#include "safefile.h"

enum { EXIT_SAME = 0, EXIT_USAGE = 2, EXIT_SLOWER = 3 };

/* Bootstrap resamples; the generator's seed is fixed, so the same files
 * give the same intervals. */
#define NG_CMP_RESAMPLES 2000
#define NG_CMP_MAXDIFFS  40

/* The keys that, with the size, name a row. */
static const char *const ng_cmp_ident[] = {"test", "sync", "algorithm", "mode", "side", NULL};

struct ng_cmp_row {
	const json_t *a, *b;
	char id[200];
	double size;
	double ma, mb, ratio, lo, hi, p; /* p: NaN without samples */
	const char *method;              /* "bootstrap", "reported-ci", "medians" */
	const char *verdict;             /* "slower", "faster", "same" */
};

struct ng_cmp_pair {
	const struct ng_plot_file *a, *b;
	struct ng_cmp_row *rows;
	size_t n;
	char **diffs; /* "what: A vs B" */
	size_t ndiffs, nmore;
};

struct ng_cmp {
	double threshold;
	const char *metric;
	bool lower_better;
	double res; /* the coarser timer resolution of the two files, in the measure's unit; 0: not a time */
	struct ng_cmp_pair *pairs;
	size_t npairs;
	struct ng_plot_file *fig;
	size_t nfig;
};

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
static const char *id_rest(const char *id)
{
	const char *s = strchr(id, ' ');

	return s ? s + 1 : "";
}

/* The finite raw samples of @key in @row, malloc'ed; 0 when there are none. */
static size_t raw_samples(const json_t *row, const char *key, double **x_p)
{
	const json_t *arr = json_object_get(json_object_get(row, "raw"), key), *v;
	size_t n = 0, i;
	double *x;

	*x_p = NULL;
	if (!json_is_array(arr) || json_array_size(arr) < 2)
		return 0;
	x = ng_plot_xcalloc(json_array_size(arr), sizeof(*x));
	json_array_foreach(arr, i, v)
	{
		if (json_is_number(v) && isfinite(json_number_value(v)))
			x[n++] = json_number_value(v);
	}
	if (n < 2) {
		free(x);
		return 0;
	}
	*x_p = x;
	return n;
}

static double median_of(const double *x, size_t n, double *tmp)
{
	memcpy(tmp, x, n * sizeof(*x));
	gsl_sort(tmp, 1, n);
	return gsl_stats_median_from_sorted_data(tmp, 1, n);
}

/* Percentile bootstrap of median(b) / median(a). */
static void bootstrap(const double *a, size_t na, const double *b, size_t nb, double *lo_p, double *hi_p)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double *ra = ng_plot_xcalloc(na, sizeof(*ra)), *rb = ng_plot_xcalloc(nb, sizeof(*rb));
	double *lr = ng_plot_xcalloc(NG_CMP_RESAMPLES, sizeof(*lr));
	size_t k = 0;

	/* at most ~4e7 draws: fewer resamples for very long sample lists
	 * (the files are untrusted), never fewer than 200 */
	size_t reps = (size_t)fmin(NG_CMP_RESAMPLES, fmax(200.0, 4e7 / (double)(na + nb)));

	gsl_rng_set(rng, 1);
	for (size_t r = 0; r < reps; r++) {
		double ma, mb;

		for (size_t i = 0; i < na; i++)
			ra[i] = a[gsl_rng_uniform_int(rng, na)];
		for (size_t i = 0; i < nb; i++)
			rb[i] = b[gsl_rng_uniform_int(rng, nb)];
		ma = gsl_stats_median(ra, 1, na);
		mb = gsl_stats_median(rb, 1, nb);
		if (ma > 0 && mb > 0)
			lr[k++] = log(mb / ma);
	}
	if (k > 10) {
		gsl_sort(lr, 1, k);
		*lo_p = exp(gsl_stats_quantile_from_sorted_data(lr, 1, k, 0.025));
		*hi_p = exp(gsl_stats_quantile_from_sorted_data(lr, 1, k, 0.975));
	} else {
		*lo_p = *hi_p = NAN;
	}
	free(lr);
	free(ra);
	free(rb);
	gsl_rng_free(rng);
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

static void compare_row(const struct ng_cmp *c, struct ng_cmp_row *r)
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
		bootstrap(xa, na, xb, nb, &r->lo, &r->hi);
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
	static const char *const skip[] = {"freq_khz.cur", "transparent_in_use_kB", "hugepages.free",
	                                   "].cpu",        "parameters.output",     NULL};
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

/* What differs between the env, timer and parameters of the two files. */
static void manifest_diffs(struct ng_cmp_pair *p)
{
	static const char *const blocks[] = {"module", "ranks", "launch", "env", "timer", "parameters", NULL};
	struct ng_flat fa = {0}, fb = {0};

	for (size_t k = 0; blocks[k]; k++) {
		flatten(&fa, blocks[k], json_object_get(p->a->doc, blocks[k]));
		flatten(&fb, blocks[k], json_object_get(p->b->doc, blocks[k]));
	}
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

static json_t *num_or_null(double v)
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
			                                      num_or_null(r->lo), num_or_null(r->hi)));
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

ng_status ng_compare_new(const struct ng_plot_file *files, size_t n, double threshold, const char *cmd,
                         struct ng_cmp **c_p)
{
	struct ng_cmp *c = ng_plot_xcalloc(1, sizeof(*c));
	ng_status st = NG_OK;

	*c_p = NULL;
	c->threshold = threshold;
	c->metric = ng_plot_first_stats_key(&files[0]);
	if (!c->metric) {
		if (cmd)
			ng_error("%s: %s: no statistics in its rows: nothing to compare", cmd, files[0].path);
		free(c);
		return NG_ERR_PROTO;
	}
	c->lower_better = lower_is_better(c->metric);
	c->pairs = ng_plot_xcalloc(n, sizeof(*c->pairs));
	c->fig = ng_plot_xcalloc(n, sizeof(*c->fig));
	for (size_t k = 1; k < n; k++) {
		struct ng_cmp_pair *p = &c->pairs[c->npairs++];
		const json_t *ra, *rb;
		size_t i, j;

		p->a = &files[0];
		p->b = &files[k];
		if (strcmp(p->a->pattern, p->b->pattern) != 0) {
			if (cmd)
				ng_error("%s: %s: pattern %s, %s is %s: they cannot be compared", cmd,
				         p->b->path, p->b->pattern, p->a->path, p->a->pattern);
			st = NG_ERR_PROTO;
			continue;
		}
		c->res = timer_res(c->metric, p->a, p->b);
		p->rows = ng_plot_xcalloc(json_array_size(p->a->rows), sizeof(*p->rows));
		json_array_foreach(p->a->rows, i, ra)
		{
			char ida[200], idb[200];

			row_id(ra, ida, sizeof(ida));
			json_array_foreach(p->b->rows, j, rb)
			{
				row_id(rb, idb, sizeof(idb));
				if (strcmp(ida, idb) != 0 ||
				    !ng_plot_is_stats(json_object_get(ra, c->metric)) ||
				    !ng_plot_is_stats(json_object_get(rb, c->metric)))
					continue;
				struct ng_cmp_row *r = &p->rows[p->n++];

				r->a = ra;
				r->b = rb;
				r->size = ng_plot_num(ra, "size");
				snprintf(r->id, sizeof(r->id), "%s", ida);
				compare_row(c, r);
				break;
			}
		}
		if (!p->n) {
			if (cmd)
				ng_error("%s: %s: no row in common with %s (the same size, test, sync, "
				         "algorithm, mode "
				         "and side, with %s statistics): they cannot be compared",
				         cmd, p->b->path, p->a->path, c->metric);
			st = NG_ERR_PROTO;
			continue;
		}
		manifest_diffs(p);
		figure_file(c, p);
	}
	if (st) {
		ng_compare_free(c);
		return st;
	}
	*c_p = c;
	return NG_OK;
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

const struct ng_plot_file *ng_compare_figure_files(const struct ng_cmp *c, size_t *n_p)
{
	*n_p = c->nfig;
	return c->fig;
}

/* ---- output ---- */

static const char *method_note(const struct ng_cmp_pair *p)
{
	bool boot = false, rep = false, med = false;

	for (size_t i = 0; i < p->n; i++) {
		boot |= strcmp(p->rows[i].method, "bootstrap") == 0;
		rep |= strcmp(p->rows[i].method, "reported-ci") == 0;
		med |= strcmp(p->rows[i].method, "medians") == 0;
	}
	if (rep || med)
		return "no raw samples in both files (run with --raw): intervals from the files' reported "
		       "intervals "
		       "of the median, no rank test";
	return boot ? "intervals: percentile bootstrap of the raw samples; p: Mann-Whitney rank test" : "";
}

static void print_table(FILE *f, const struct ng_cmp *c)
{
	for (size_t k = 0; k < c->npairs; k++) {
		const struct ng_cmp_pair *p = &c->pairs[k];

		fprintf(f, "# %s vs %s (baseline): %s, ratio of medians B/A, threshold %g%%\n", p->b->path,
		        p->a->path, c->metric, c->threshold * 100.0);
		for (size_t i = 0; i < p->ndiffs; i++)
			fprintf(f, "#   differs: %s\n", p->diffs[i]);
		if (p->nmore)
			fprintf(f, "#   differs: ... and %zu more\n", p->nmore);
		fprintf(f, "#   %s\n", method_note(p));
		fprintf(f, "#%9s %-20s %12s %12s %9s %22s %10s  %s\n", "size", "row", "A median", "B median",
		        "ratio", "ci95(ratio)", "p", "verdict");
		for (size_t i = 0; i < p->n; i++) {
			const struct ng_cmp_row *r = &p->rows[i];
			char ci[64], pv[32];

			if (isfinite(r->lo))
				snprintf(ci, sizeof(ci), "[%.4f, %.4f]", r->lo, r->hi);
			else
				snprintf(ci, sizeof(ci), "-");
			if (isfinite(r->p))
				snprintf(pv, sizeof(pv), "%.3g", r->p);
			else
				snprintf(pv, sizeof(pv), "-");
			fprintf(f, "%10.17g %-20s %12.5g %12.5g %9.4f %22s %10s  %s\n", r->size,
			        id_rest(r->id)[0] ? id_rest(r->id) : "-", r->ma, r->mb, r->ratio, ci, pv,
			        r->verdict);
		}
	}
}

static json_t *to_json(const struct ng_cmp *c)
{
	json_t *cmps = json_array();

	for (size_t k = 0; k < c->npairs; k++) {
		const struct ng_cmp_pair *p = &c->pairs[k];
		json_t *rows = json_array(), *diffs = json_array();

		for (size_t i = 0; i < p->ndiffs; i++)
			json_array_append_new(diffs, json_string(p->diffs[i]));
		for (size_t i = 0; i < p->n; i++) {
			const struct ng_cmp_row *r = &p->rows[i];
			json_t *row = json_pack("{s:f}", "size", r->size);

			for (size_t j = 0; ng_cmp_ident[j]; j++)
				if (json_is_string(json_object_get(r->a, ng_cmp_ident[j])))
					json_object_set(row, ng_cmp_ident[j],
					                json_object_get(r->a, ng_cmp_ident[j]));
			json_object_set_new(row, "a_median", num_or_null(r->ma));
			json_object_set_new(row, "b_median", num_or_null(r->mb));
			json_object_set_new(row, "ratio", num_or_null(r->ratio));
			json_object_set_new(row, "ci95",
			                    json_pack("[o,o]", num_or_null(r->lo), num_or_null(r->hi)));
			json_object_set_new(row, "method", json_string(r->method));
			json_object_set_new(row, "p_value", num_or_null(r->p));
			json_object_set_new(row, "verdict", json_string(r->verdict));
			json_array_append_new(rows, row);
		}
		json_array_append_new(cmps, json_pack("{s:s,s:s,s:o,s:I,s:o}", "a", p->a->path, "b",
		                                      p->b->path, "differences", diffs, "more_differences",
		                                      (json_int_t)p->nmore, "rows", rows));
	}
	return json_pack("{s:s,s:s,s:s,s:f,s:b,s:s,s:o}", "schema", "ngauge-compare/1", "pattern",
	                 c->pairs[0].a->pattern, "metric", c->metric, "threshold_pct", c->threshold * 100.0,
	                 "slower", ng_compare_slower(c), "lower_is_better", c->lower_better ? "yes" : "no",
	                 "comparisons", cmps);
}

void ng_compare_html(FILE *f, const struct ng_cmp *c)
{
	for (size_t k = 0; k < c->npairs; k++) {
		const struct ng_cmp_pair *p = &c->pairs[k];
		json_t *rows = json_array();

		fputs("<h3>", f);
		ng_html(f, p->b->label);
		fputs(" vs ", f);
		ng_html(f, p->a->label);
		fprintf(f,
		        "</h3>\n<p class=\"note\">Ratio of the medians of %s, B/A, with its 95%% interval; "
		        "verdict "
		        "at a threshold of %g%%; ",
		        c->metric, c->threshold * 100.0);
		ng_html(f, method_note(p));
		fputs(".</p>\n", f);
		if (p->ndiffs) {
			fputs("<p class=\"warn\">The runs differ: ", f);
			for (size_t i = 0; i < p->ndiffs; i++) {
				if (i)
					fputs("; ", f);
				ng_html(f, p->diffs[i]);
			}
			if (p->nmore)
				fprintf(f, "; and %zu more", p->nmore);
			fputs("</p>\n", f);
		}
		for (size_t i = 0; i < p->n; i++) {
			const struct ng_cmp_row *r = &p->rows[i];
			json_t *row = json_pack("{s:f}", "size", r->size);

			for (size_t j = 0; ng_cmp_ident[j]; j++)
				if (json_is_string(json_object_get(r->a, ng_cmp_ident[j])))
					json_object_set(row, ng_cmp_ident[j],
					                json_object_get(r->a, ng_cmp_ident[j]));
			json_object_set_new(row, "A median", num_or_null(r->ma));
			json_object_set_new(row, "B median", num_or_null(r->mb));
			json_object_set_new(row, "ratio",
			                    json_pack("{s:o,s:[o,o]}", "value", num_or_null(r->ratio), "ci95",
			                              num_or_null(r->lo), num_or_null(r->hi)));
			json_object_set_new(row, "p", num_or_null(r->p));
			json_object_set_new(row, "verdict", json_string(r->verdict));
			json_array_append_new(rows, row);
		}
		ng_html_rows(f, rows);
		json_decref(rows);
	}
}

/* ---- the command ---- */

static void usage(FILE *f)
{
	fputs(
	    "usage: ngauge compare A.json B.json [C.json ...] [--threshold PCT] [-o OUT.json] [--plot FIG]\n"
	    "  compares each file with A (the baseline): ratio of medians B/A per row with its 95% "
	    "interval,\n"
	    "  rank-test p-value, verdict faster/slower/same at --threshold PCT (default 5)\n"
	    "  -o OUT.json      the comparison as JSON\n"
	    "  --plot FIG       the figure (.pdf, .svg, .png, .tex): ratio against size, one series per "
	    "file\n"
	    "  --label NAME     a file's name in the figure (in the order of the files; repeatable)\n"
	    "exit status: 0 no row slower beyond the threshold, 3 some row is, 2 usage or files that cannot\n"
	    "be compared\n",
	    f);
}

static int write_json(const struct ng_cmp *c, const char *out)
{
	json_t *doc = to_json(c);
	struct ng_safefile sf;
	int rc = -1;

	if (ng_safefile_open(&sf, out) == 0 && ng_safefile_stream(&sf)) {
		errno = 0;
		rc = json_dumpf(doc, sf.f, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
		if (rc != 0 && !errno)
			errno = EIO;
		if (rc == 0)
			rc = ng_safefile_commit(&sf);
	}
	if (rc != 0)
		ng_error("compare: %s: cannot write: %s", out, strerror(errno));
	json_decref(doc);
	ng_safefile_close(&sf); /* removes the temporary unless committed; keeps errno */
	return rc != 0 ? -1 : 0;
}

int ng_compare_main(int argc, char **argv)
{
	const char *out = NULL, *fig = NULL, **paths = ng_plot_xcalloc((size_t)argc, sizeof(*paths));
	const char **labels = ng_plot_xcalloc((size_t)argc, sizeof(*labels));
	size_t n = 0, nl = 0;
	double threshold = 5.0;
	struct ng_plot_file *files;
	struct ng_cmp *c = NULL;
	int code = EXIT_USAGE;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			free(paths);
			free(labels);
			return 0;
		} else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 ||
		            strcmp(a, "--threshold") == 0 || strcmp(a, "--plot") == 0 ||
		            strcmp(a, "--label") == 0) &&
		           i + 1 < argc) {
			const char *v = argv[++i];

			if (a[1] == 'o' || strcmp(a, "--output") == 0) {
				out = v;
			} else if (strcmp(a, "--plot") == 0) {
				fig = v;
			} else if (strcmp(a, "--label") == 0) {
				labels[nl++] = v;
			} else {
				char *end;

				errno = 0;
				threshold = strtod(v, &end);
				if (errno || end == v || *end || !(threshold >= 0 && threshold < 1000)) {
					ng_error("compare: --threshold takes a percentage between 0 and "
					         "1000, got '%s'",
					         v);
					goto out_args;
				}
			}
		} else if (a[0] == '-' && a[1]) {
			ng_error("compare: unknown option '%s' (or its value is missing); see ngauge compare "
			         "--help",
			         a);
			goto out_args;
		} else {
			paths[n++] = a;
		}
	}
	if (n < 2) {
		ng_error("compare: needs at least two result files (A, the baseline, then B ...)");
		usage(stderr);
		goto out_args;
	}
	if ((out && !ng_plot_name_ok("compare", "-o", out)) ||
	    (fig && !ng_plot_name_ok("compare", "--plot", fig)))
		goto out_args;
	if (fig && !ng_term_of(fig)) {
		ng_error("compare: --plot %s: unknown extension (.pdf, .svg, .png or .tex)", fig);
		goto out_args;
	}
	files = ng_plot_xcalloc(n, sizeof(*files));
	for (size_t i = 0; i < n; i++) {
		if (ng_plot_file_load("compare", paths[i], &files[i]) != NG_OK)
			goto out_files;
	}
	if (ng_plot_labels(files, n, labels, nl) != NG_OK)
		goto out_files;
	if (ng_compare_new(files, n, threshold / 100.0, "compare", &c) != NG_OK)
		goto out_files;
	print_table(stdout, c);
	code = ng_compare_slower(c) ? EXIT_SLOWER : EXIT_SAME;
	if (out && write_json(c, out) != 0)
		code = 1;
	if (fig) {
		size_t nf;
		const struct ng_plot_file *ff = ng_compare_figure_files(c, &nf);
		char *gp = ng_plot_find_gnuplot();
		struct ng_plot_req req = {
		    .cmd = "compare", .out = fig, .kind = NG_PLOT_KIND_AUTO, .gnuplot = gp};

		if (!nf)
			ng_warn("compare: no ratio to draw");
		else if (!gp)
			ng_error("compare: gnuplot not found: install the Debian package gnuplot-nox");
		if (!gp || !nf || ng_plot_render(ff, nf, &req) != NG_OK)
			code = code == EXIT_SAME ? 1 : code;
		free(gp);
	}
	fflush(stdout);
	ng_compare_free(c);
out_files:
	for (size_t i = 0; i < n; i++)
		ng_plot_file_release(&files[i]);
	free(files);
out_args:
	free(paths);
	free(labels);
	return code;
}
