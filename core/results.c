/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result sink: JSON document, CSV, table on stdout, progress line.
 * Every commit rewrites the output file atomically (a temporary beside it,
 * renamed: safefile.h).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "queue.h" /* ng_container_of */
#include "results_priv.h"
#include "results_text.h"
#include "safefile.h"

#define MAX_COLS 16

struct ng_row {
	json_t *obj;
	json_t *raw;
};

struct ng_results {
	json_t *doc;
	/* the text arrays the document's placeholders stand for */
	struct ng_results_text *text;
	size_t ntext;
	json_t *rows;
	char *path;
	enum ng_results_format fmt;
	bool raw;
	const char *label;
	char header_sig[512]; /* keys of the last table header printed */
	char mark[128];       /* ends every table header line (ng_results_mark) */
	/* Table column widths so far, by key: a column is as wide as its
	 * widest value (the header is printed again when one grows). */
	struct {
		char key[48];
		int w;
	} col[48];
	size_t ncol;
	double progress_t0;
	size_t progress_done, progress_total; /* of the last ng_results_progress */
	struct ng_row row;                    /* the one row under construction */
	void (*row_hook)(void *ctx, size_t size, struct ng_row *row);
	void *row_hook_ctx;
	/* held while the file is written: the run's watchdog writes it from
	 * its own thread (ng_results_stop) */
	pthread_mutex_t file_mu;
	/* systematic bounds of every time figure (a key ending in "_us"),
	 * ng_results_systematic */
	struct ng_unc_set sys_us;
	/* --percentiles given: the table's columns in place of p99 */
	size_t npct;
	char pct_key[NG_STATS_PCT_MAX][16];
	/* the rows' notes (ng_results_note), counted per kind */
	struct {
		const char *kind, *summary;
		size_t n;
		double worst;
	} note[8];
	size_t nnote;
	bool verbose;
};

enum ng_results_format ng_results_format_of(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (dot && strcasecmp(dot, ".json") == 0)
		return NG_FMT_JSON;
	if (dot && strcasecmp(dot, ".csv") == 0)
		return NG_FMT_CSV;
	return NG_FMT_NONE;
}

int ng_results_probe(const char *path, char *err, size_t errlen)
{
	struct ng_safefile sf;
	size_t at;

	if (!ng_safefile_name_ok(path, &at)) {
		snprintf(err, errlen, "output file name has a control character (byte 0x%02x at offset %zu)",
		         (unsigned char)path[at], at);
		return -1;
	}
	if (ng_results_format_of(path) == NG_FMT_NONE) {
		snprintf(err, errlen, "output file '%s' must end in .json or .csv", path);
		return -1;
	}
	if (ng_safefile_open(&sf, path) != 0) {
		snprintf(err, errlen, "cannot write output file '%s': %s", path, strerror(errno));
		return -1;
	}
	ng_safefile_close(&sf); /* not committed: removed */
	return 0;
}

void ng_iso_time(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static ng_status checkpoint(struct ng_results *r);

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* {"name": size, ...} of @u (a new reference). */
json_t *ng_unc_json(const struct ng_unc_set *u)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < u->n; i++)
		json_object_set_new(o, u->b[i].name, json_real(u->b[i].size));
	return o;
}

json_t *ng_stats_json(const struct ng_stats *st)
{
	double tlo, thi;

	json_t *o =
	    json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:[o,o]}", "n", (json_int_t)st->n, "min", num(st->min),
	              "median", num(st->median), "mean", num(st->mean), "stddev", num(st->stddev), "p99",
	              num(st->p99), "max", num(st->max), "ci95", num(st->ci_lo), num(st->ci_hi));

	ng_unc_widen(st->ci_lo, st->ci_hi, &st->unc, &tlo, &thi);
	if (o) {
		json_object_set_new(o, "uncertainty", ng_unc_json(&st->unc));
		json_object_set_new(o, "ci95_total", json_pack("[o,o]", num(tlo), num(thi)));
	}
	if (o && st->alternating)
		json_object_set_new(o, "alternating", json_true());
	if (o && st->unstable)
		json_object_set_new(o, "unstable", json_true());
	/* the chosen percentiles; p99 is there already (for every n) */
	for (size_t i = 0; o && i < st->npct; i++) {
		char key[16];

		ng_stats_pct_key(st->pct_q[i], key, sizeof(key));
		if (strcmp(key, "p99") != 0)
			json_object_set_new(o, key, num(st->pct[i]));
	}
	return o;
}

struct ng_results *ng_results_new(json_t *doc, const char *path, bool raw, const char *label)
{
	struct ng_results *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->doc = doc;
	r->rows = json_array();
	json_object_set_new(doc, "complete", json_false());
	json_object_set(doc, "results", r->rows);
	r->path = path ? strdup(path) : NULL;
	r->fmt = ng_results_format_of(path);
	r->raw = raw;
	r->label = label;
	pthread_mutex_init(&r->file_mu, NULL);
	return r;
}

void ng_results_percentiles(struct ng_results *r, const double *q, size_t n)
{
	r->npct = n < NG_STATS_PCT_MAX ? n : NG_STATS_PCT_MAX;
	for (size_t i = 0; i < r->npct; i++)
		ng_stats_pct_key(q[i], r->pct_key[i], sizeof(r->pct_key[i]));
}

/* The main STATS's last columns: p99, or the chosen percentiles ("-" where
 * null); @v NULL: their header. */
static void print_pcts(const struct ng_results *r, json_t *v)
{
	if (r->npct == 0) {
		if (v)
			printf(" %12.4f", json_number_value(json_object_get(v, "p99")));
		else
			printf(" %12s", "p99");
		return;
	}
	for (size_t i = 0; i < r->npct; i++) {
		json_t *x = v ? json_object_get(v, r->pct_key[i]) : NULL;

		if (!v)
			printf(" %12s", r->pct_key[i]);
		else if (json_is_number(x))
			printf(" %12.4f", json_number_value(x));
		else
			printf(" %12s", "-");
	}
}

void ng_results_mark(struct ng_results *r, const char *mark)
{
	snprintf(r->mark, sizeof(r->mark), "%s", mark);
}

bool ng_results_active(const struct ng_results *r)
{
	return r != NULL;
}

void ng_results_verbose(struct ng_results *r, bool verbose)
{
	if (r)
		r->verbose = verbose;
}

void ng_results_note(struct ng_results *r, const char *kind, const char *summary, double worst,
                     const char *fmt, ...)
{
	size_t i;

	if (!r)
		return;
	if (r->verbose) {
		char line[512];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(line, sizeof(line), fmt, ap);
		va_end(ap);
		ng_warn("%s", line);
	}
	for (i = 0; i < r->nnote && strcmp(r->note[i].kind, kind) != 0; i++)
		;
	if (i == r->nnote) {
		if (r->nnote == sizeof(r->note) / sizeof(r->note[0]))
			return;
		r->nnote++;
		r->note[i].kind = kind;
		r->note[i].summary = summary;
		r->note[i].n = 0;
		r->note[i].worst = worst;
	}
	r->note[i].n++;
	if (worst > r->note[i].worst)
		r->note[i].worst = worst;
}

/* One line per kind of note, after the table. */
static void notes_summary(struct ng_results *r)
{
	size_t rows = json_array_size(r->rows);

	for (size_t i = 0; i < r->nnote; i++) {
		const char *sum = r->note[i].summary, *at = strstr(sum, "%s");
		char tail[384];

		if (at)
			snprintf(tail, sizeof(tail), "%.*s%.*f%%%s", (int)(at - sum), sum,
			         r->note[i].worst < 10 ? 1 : 0, r->note[i].worst, at + 2);
		else
			snprintf(tail, sizeof(tail), "%s", sum);
		/* the table's foot; stderr too unless it is the same stream */
		printf("# note (%s): %zu of %zu size%s %s\n", r->note[i].kind, r->note[i].n, rows,
		       rows == 1 ? "" : "s", tail);
		fflush(stdout);
		if (!ng_fd_shown_with(STDOUT_FILENO, STDERR_FILENO))
			ng_warn("%s: %zu of %zu size%s %s%s", r->label ? r->label : "results", r->note[i].n,
			        rows, rows == 1 ? "" : "s", tail,
			        r->verbose ? "" : " (--verbose: a line for each)");
	}
	r->nnote = 0;
}

size_t ng_results_rows(const struct ng_results *r)
{
	return r ? json_array_size(r->rows) : 0;
}

struct ng_row *ng_row_begin(struct ng_results *r, size_t size, size_t count)
{
	if (!r)
		return NULL;
	json_decref(r->row.obj);
	json_decref(r->row.raw);
	r->row.obj = json_pack("{s:I,s:I}", "size", (json_int_t)size, "count", (json_int_t)count);
	r->row.raw = NULL;
	if (!r->row.obj)
		abort();
	return &r->row;
}

void ng_results_systematic(struct ng_results *r, const char *name, double size_us)
{
	if (r)
		ng_unc_add(&r->sys_us, name, size_us);
}

/* Whether @key names a time in microseconds. */
static bool is_time_key(const char *key)
{
	size_t n = strlen(key);

	return n > 3 && strcmp(key + n - 3, "_us") == 0;
}

void ng_row_stats(struct ng_row *row, const char *key, const struct ng_stats *st)
{
	struct ng_stats s;

	if (!row)
		return;
	s = *st;
	if (is_time_key(key)) {
		const struct ng_unc_set *u = &ng_container_of(row, struct ng_results, row)->sys_us;

		for (size_t i = 0; i < u->n; i++)
			ng_unc_add(&s.unc, u->b[i].name, u->b[i].size);
	}
	json_object_set_new(row->obj, key, ng_stats_json(&s));
}

/* @v's ci95_total widened by @b more on each side, @b under @name in its
 * uncertainty. */
static void stats_widen(json_t *v, const char *name, double b)
{
	json_t *u = json_object_get(v, "uncertainty"), *t = json_object_get(v, "ci95_total");

	if (!json_is_object(u) || !json_is_array(t) || !(b > 0.0))
		return;
	json_object_set_new(u, name, json_real(json_number_value(json_object_get(u, name)) + b));
	for (size_t i = 0; i < 2; i++) {
		json_t *x = json_array_get(t, i);

		if (json_is_number(x))
			json_array_set_new(t, i, json_real(json_number_value(x) + (i ? b : -b)));
	}
}

void ng_row_widen(struct ng_row *row, const char *key, const char *name, double bound_us)
{
	if (row)
		stats_widen(json_object_get(row->obj, key), name, bound_us);
}

void ng_results_widen(struct ng_results *r, const char *name, double abs_us, double rel)
{
	size_t i;
	json_t *row, *v;
	const char *key;

	if (!r || !(abs_us > 0.0 || fabs(rel) > 0.0))
		return;
	json_array_foreach(r->rows, i, row) json_object_foreach(row, key, v)
	{
		if (is_time_key(key) && json_is_object(v) && json_object_get(v, "ci95_total"))
			stats_widen(v, name,
			            abs_us +
			                fabs(rel) * fabs(json_number_value(json_object_get(v, "median"))));
	}
	(void)checkpoint(r);
}

void ng_row_number(struct ng_row *row, const char *key, double v)
{
	if (row)
		json_object_set_new(row->obj, key, num(v));
}

void ng_row_int(struct ng_row *row, const char *key, long long v)
{
	if (row)
		json_object_set_new(row->obj, key, json_integer((json_int_t)v));
}

void ng_row_json(struct ng_row *row, const char *key, json_t *v)
{
	if (row)
		json_object_set_new(row->obj, key, v);
	else
		json_decref(v);
}

void ng_row_raw(struct ng_row *row, const char *key, const double *x, size_t n)
{
	if (!row)
		return;
	struct ng_results *r = ng_container_of(row, struct ng_results, row);
	if (!r->raw)
		return;
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, num(x[i]));
	if (!row->raw)
		row->raw = json_object();
	json_object_set_new(row->raw, key, a);
}

/* ---- writing ---- */

static int is_stats(json_t *v)
{
	return json_is_object(v) && json_object_get(v, "median");
}

/* A percentile key of a STATS other than p99 (a column of its own): p50,
 * p90, p99.9, p99.99 or a --percentiles choice. */
static int is_pct_key(const char *key)
{
	return key[0] == 'p' && key[1] >= '0' && key[1] <= '9' && strcmp(key, "p99") != 0;
}

/* One CSV cell of number @x after its comma; empty where @x is no number
 * (null: a percentile the count cannot support, an unbounded side). */
static void csv_cell(FILE *f, const json_t *x)
{
	if (json_is_number(x))
		fprintf(f, ",%.6g", json_number_value(x));
	else
		fputc(',', f);
}

static int write_csv(struct ng_results *r, FILE *f)
{
	static const char *const fields[] = {"min", "median", "mean", "stddev", "p99", "max"};
	json_t *first = json_array_get(r->rows, 0);
	const char *key;
	json_t *v;
	size_t i;

	if (!first)
		return fprintf(f, "size,count\n") < 0;
	/* Header from the first row: strings, then stats, then numbers. */
	fputs("size,count", f);
	json_object_foreach(first, key, v) if (json_is_string(v)) fprintf(f, ",%s", key);
	json_object_foreach(first, key, v) if (is_stats(v))
	{
		for (size_t k = 0; k < 6; k++)
			fprintf(f, ",%s_%s", key, fields[k]);
		fprintf(f, ",%s_ci95_lo,%s_ci95_hi", key, key);
		if (json_object_get(v, "ci95_total"))
			fprintf(f, ",%s_ci95_total_lo,%s_ci95_total_hi", key, key);
		const char *pk;
		json_t *pv;
		json_object_foreach(v, pk, pv) if (is_pct_key(pk)) fprintf(f, ",%s_%s", key, pk);
	}
	json_object_foreach(first, key, v) if (json_is_number(v) && strcmp(key, "size") &&
	                                       strcmp(key, "count")) fprintf(f, ",%s", key);
	fputc('\n', f);
	json_array_foreach(r->rows, i, v)
	{
		json_t *cell;
		fprintf(f, "%lld,%lld", (long long)json_integer_value(json_object_get(v, "size")),
		        (long long)json_integer_value(json_object_get(v, "count")));
		json_object_foreach(first, key, cell) if (json_is_string(cell)) fprintf(
		    f, ",%s",
		    json_string_value(json_object_get(v, key)) ? json_string_value(json_object_get(v, key))
		                                               : "");
		json_object_foreach(first, key, cell) if (is_stats(cell))
		{
			json_t *s = json_object_get(v, key);
			for (size_t k = 0; k < 6; k++)
				fprintf(f, ",%.6g", json_number_value(json_object_get(s, fields[k])));
			json_t *ci = json_object_get(s, "ci95");
			fprintf(f, ",%.6g,%.6g", json_number_value(json_array_get(ci, 0)),
			        json_number_value(json_array_get(ci, 1)));
			/* the total interval where the first row has one; an
			 * unbounded side (null) is an empty cell */
			if (json_object_get(cell, "ci95_total")) {
				ci = json_object_get(s, "ci95_total");
				for (size_t k = 0; k < 2; k++)
					csv_cell(f, json_array_get(ci, k));
			}
			/* the first row's percentile columns; an unsupported one (null) is empty */
			const char *pk;
			json_t *pv;
			json_object_foreach(cell, pk, pv) if (is_pct_key(pk))
			    csv_cell(f, json_object_get(s, pk));
		}
		json_object_foreach(first, key, cell) if (json_is_number(cell) && strcmp(key, "size") &&
		                                          strcmp(key, "count"))
		    fprintf(f, ",%.6g", json_number_value(json_object_get(v, key)));
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

json_t *ng_results_text_value(struct ng_results *r, struct ng_results_text *t)
{
	struct ng_results_text *all;
	json_t *v;

	if (!r) {
		ng_results_text_free(t);
		return json_null();
	}
	pthread_mutex_lock(&r->file_mu); /* the watchdog's writer reads r->text */
	all = realloc(r->text, (r->ntext + 1) * sizeof(*all));
	if (!all)
		abort();
	r->text = all;
	all[r->ntext] = *t;
	v = json_sprintf(NG_RESULTS_TEXT_MARK, r->ntext);
	r->ntext++;
	pthread_mutex_unlock(&r->file_mu);
	memset(t, 0, sizeof(*t));
	if (!v)
		abort();
	return v;
}

static ng_status checkpoint_locked(struct ng_results *r);

static ng_status checkpoint(struct ng_results *r)
{
	ng_status st;

	if (!r->path || r->fmt == NG_FMT_NONE)
		return NG_OK;
	pthread_mutex_lock(&r->file_mu);
	st = checkpoint_locked(r);
	pthread_mutex_unlock(&r->file_mu);
	return st;
}

static ng_status checkpoint_locked(struct ng_results *r)
{
	struct ng_safefile sf;
	FILE *f;
	int rc;

	if (ng_safefile_open(&sf, r->path) != 0)
		goto err;
	f = ng_safefile_stream(&sf);
	if (!f)
		goto err_close;
	errno = 0;
	if (r->fmt == NG_FMT_JSON)
		rc = ng_results_text_dump(r->doc, r->text, r->ntext, f) || fputc('\n', f) == EOF;
	else
		rc = write_csv(r, f);
	if (rc) {
		if (!errno)
			errno = EIO;
		goto err_close;
	}
	if (ng_safefile_commit(&sf) != 0)
		goto err_close;
	ng_safefile_close(&sf);
	return NG_OK;
err_close:
	ng_safefile_close(&sf); /* removes the temporary; keeps errno */
err:
	ng_error("cannot write results to '%s': %s", r->path, strerror(errno));
	return NG_ERR_IO;
}

void ng_fmt_size(size_t s, char *buf, size_t len)
{
	if (s >= (1u << 20) && s % (1u << 20) == 0)
		snprintf(buf, len, "%zuM", s >> 20);
	else if (s >= 1024 && s % 1024 == 0)
		snprintf(buf, len, "%zuK", s >> 10);
	else
		snprintf(buf, len, "%zu", s);
}

/* The marks of a row whose statistics are flagged (sampler.h): "[unstable]",
 * "[alternating]". */
static void print_flags(json_t *row)
{
	static const char *const flags[] = {"unstable", "alternating"};
	const char *key;
	json_t *v;

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		bool any = false;

		json_object_foreach(row, key, v) any = any || (is_stats(v) && json_object_get(v, flags[i]));
		if (any)
			printf("   [%s]", flags[i]);
	}
}

void ng_fmt_real(double x, char *buf, size_t len)
{
	if (!isfinite(x))
		snprintf(buf, len, "-");
	else if (fabs(x) >= 1e4)
		snprintf(buf, len, "%.0f", x);
	else
		snprintf(buf, len, "%.4g", x);
}

/* A number of a table cell: integers as integers, others by ng_fmt_real. */
static void fmt_number(const json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else
		ng_fmt_real(json_number_value(v), buf, len);
}

/* Widens column @key to @w; true when it grew (or is new). */
static bool col_fit(struct ng_results *r, const char *key, int w)
{
	size_t i;

	for (i = 0; i < r->ncol; i++)
		if (strcmp(r->col[i].key, key) == 0)
			break;
	if (i == r->ncol) {
		if (r->ncol == sizeof(r->col) / sizeof(r->col[0]))
			return false;
		snprintf(r->col[i].key, sizeof(r->col[i].key), "%s", key);
		r->col[i].w = 0;
		r->ncol++;
	}
	if (w <= r->col[i].w)
		return false;
	r->col[i].w = w;
	return true;
}

static int col_width(const struct ng_results *r, const char *key)
{
	for (size_t i = 0; i < r->ncol; i++)
		if (strcmp(r->col[i].key, key) == 0)
			return r->col[i].w;
	return (int)strlen(key);
}

static bool is_extra_number(const char *key, const json_t *v)
{
	return json_is_number(v) && strcmp(key, "size") != 0 && strcmp(key, "count") != 0;
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

/* Table line; a header whenever the set of keys changes or a column grows. */
static void print_row(struct ng_results *r, json_t *row)
{
	char sig[512] = "", cell[64], cis[80];
	const char *key;
	json_t *v;
	int main_done = 0;
	bool grew = false;

	json_object_foreach(row, key, v)
	{
		if (json_is_array(v) || (json_is_object(v) && !is_stats(v)))
			continue;
		strncat(sig, key, sizeof(sig) - strlen(sig) - 2);
		strncat(sig, ",", sizeof(sig) - strlen(sig) - 1);
	}
	ng_fmt_size((size_t)json_integer_value(json_object_get(row, "size")), cell, sizeof(cell));
	grew |= col_fit(r, "size", max_int(9, (int)strlen(cell)));
	snprintf(cell, sizeof(cell), "%lld", (long long)json_integer_value(json_object_get(row, "count")));
	grew |= col_fit(r, "count", max_int(8, (int)strlen(cell)));
	json_object_foreach(row, key, v)
	{
		if (json_is_string(v))
			grew |= col_fit(r, key, max_int((int)strlen(key), (int)strlen(json_string_value(v))));
		else if (is_extra_number(key, v)) {
			fmt_number(v, cell, sizeof(cell));
			grew |= col_fit(r, key, max_int((int)strlen(key), (int)strlen(cell)));
		}
	}
	if (strcmp(sig, r->header_sig) != 0 || grew) {
		snprintf(r->header_sig, sizeof(r->header_sig), "%s", sig);
		printf("#%*s %*s", col_width(r, "size"), "size", col_width(r, "count"), "count");
		json_object_foreach(row, key, v) if (json_is_string(v))
		    printf(" %*s", col_width(r, key), key);
		json_object_foreach(row, key, v)
		{
			if (!is_stats(v))
				continue;
			if (!main_done) {
				printf(" %12s %12s %25s", "min", "median", "ci95_total(median)");
				print_pcts(r, NULL);
				main_done = 1;
				printf("   [%s]", key);
			}
		}
		main_done = 0;
		json_object_foreach(row, key, v)
		{
			if (!is_stats(v))
				continue;
			if (main_done)
				printf(" %s(median)", key);
			main_done = 1;
		}
		json_object_foreach(row, key, v) if (is_extra_number(key, v))
		    printf(" %*s", col_width(r, key), key);
		if (r->mark[0])
			printf("   [%s]", r->mark);
		putchar('\n');
		main_done = 0;
	}
	ng_fmt_size((size_t)json_integer_value(json_object_get(row, "size")), cell, sizeof(cell));
	printf("%*s %*lld", col_width(r, "size") + 1, cell, col_width(r, "count"),
	       (long long)json_integer_value(json_object_get(row, "count")));
	json_object_foreach(row, key, v) if (json_is_string(v))
	    printf(" %*s", col_width(r, key), json_string_value(v));
	json_object_foreach(row, key, v)
	{
		if (!is_stats(v))
			continue;
		double med = json_number_value(json_object_get(v, "median"));
		if (!main_done) {
			/* the total interval: sampling and systematic bounds */
			json_t *ci = json_object_get(v, "ci95_total");
			char lo[32], hi[32];

			if (!ci)
				ci = json_object_get(v, "ci95");

			ng_fmt_real(json_number_value(json_array_get(ci, 0)), lo, sizeof(lo));
			ng_fmt_real(json_number_value(json_array_get(ci, 1)), hi, sizeof(hi));
			snprintf(cis, sizeof(cis), "[%s, %s]", lo, hi);
			printf(" %12.4f %12.4f %25s", json_number_value(json_object_get(v, "min")), med, cis);
			print_pcts(r, v);
			main_done = 1;
			printf("   ");
		} else {
			int w = (int)strlen(key) + 8;
			printf(" %*.4f", w, med);
		}
	}
	json_object_foreach(row, key, v) if (is_extra_number(key, v))
	{
		fmt_number(v, cell, sizeof(cell));
		printf(" %*s", col_width(r, key), cell);
	}
	print_flags(row);
	putchar('\n');
	fflush(stdout);
}

void ng_results_row_hook(struct ng_results *r, void (*fn)(void *ctx, size_t size, struct ng_row *row),
                         void *ctx)
{
	if (!r)
		return;
	r->row_hook = fn;
	r->row_hook_ctx = ctx;
}

/* Commit and replace: the row's module keys and raw samples, its table
 * line; @index (SIZE_MAX: append) the place it takes in the rows. */
static ng_status row_put(struct ng_results *r, struct ng_row *row, size_t index)
{
	if (r->row_hook)
		r->row_hook(r->row_hook_ctx, (size_t)json_integer_value(json_object_get(row->obj, "size")),
		            row);
	if (row->raw) {
		json_object_set_new(row->obj, "raw", row->raw);
		row->raw = NULL;
	}
	/* A progress line may be on the terminal: clear it first. */
	if (isatty(STDERR_FILENO) && isatty(STDOUT_FILENO)) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	print_row(r, row->obj);
	if (index == SIZE_MAX)
		json_array_append_new(r->rows, row->obj);
	else
		json_array_set_new(r->rows, index, row->obj);
	row->obj = NULL;
	return checkpoint(r);
}

ng_status ng_row_commit(struct ng_results *r, struct ng_row *row)
{
	if (!r || !row)
		return NG_OK;
	return row_put(r, row, SIZE_MAX);
}

ng_status ng_row_replace(struct ng_results *r, size_t index, struct ng_row *row)
{
	if (!r || !row)
		return NG_OK;
	if (index >= json_array_size(r->rows)) {
		json_decref(row->obj);
		json_decref(row->raw);
		row->obj = row->raw = NULL;
		ng_error("results: no row %zu to replace (%zu rows)", index, json_array_size(r->rows));
		return NG_ERR_INTERNAL;
	}
	return row_put(r, row, index);
}

ng_status ng_results_block(struct ng_results *r, const char *key, json_t *v)
{
	if (!r) {
		json_decref(v);
		return NG_OK;
	}
	json_object_set_new(r->doc, key, v);
	return checkpoint(r);
}

ng_status ng_results_finish(struct ng_results *r, bool complete)
{
	char t[64];
	if (!r)
		return NG_OK;
	notes_summary(r);
	ng_iso_time(t, sizeof(t));
	json_object_set_new(r->doc, "complete", json_boolean(complete));
	json_object_set_new(r->doc, "finished", json_string(t));
	return checkpoint(r);
}

void ng_results_stopped(struct ng_results *r, const char *why)
{
	if (r && why)
		json_object_set_new(r->doc, "stopped", json_string(why));
}

ng_status ng_results_stop(struct ng_results *r, const char *why)
{
	char t[64];
	ng_status st = NG_OK;

	if (!r)
		return NG_OK;
	/* Another thread's: the main thread waits in a call (watchdog.h) and
	 * touches no document meanwhile; a write of its own in progress is
	 * waited for. */
	pthread_mutex_lock(&r->file_mu);
	ng_iso_time(t, sizeof(t));
	json_object_set_new(r->doc, "complete", json_false());
	json_object_set_new(r->doc, "stopped", json_string(why));
	json_object_set_new(r->doc, "finished", json_string(t));
	if (r->path && r->fmt != NG_FMT_NONE) {
		st = checkpoint_locked(r);
		fprintf(stderr, "ngauge: %zu measured size%s kept in '%s' (\"complete\": false)\n",
		        json_array_size(r->rows), json_array_size(r->rows) == 1 ? "" : "s", r->path);
	}
	pthread_mutex_unlock(&r->file_mu);
	return st;
}

void ng_results_free(struct ng_results *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->file_mu);
	json_decref(r->row.obj);
	json_decref(r->row.raw);
	json_decref(r->rows);
	json_decref(r->doc);
	for (size_t i = 0; i < r->ntext; i++)
		ng_results_text_free(&r->text[i]);
	free(r->text);
	free(r->path);
	free(r);
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void human_size(size_t s, char *buf, size_t len)
{
	if (s >= (1u << 20) && s % (1u << 20) == 0)
		snprintf(buf, len, "%zu MiB", s >> 20);
	else if (s >= 1024 && s % 1024 == 0)
		snprintf(buf, len, "%zu KiB", s >> 10);
	else
		snprintf(buf, len, "%zu B", s);
}

void ng_results_progress(struct ng_results *r, size_t done, size_t total, size_t size)
{
	char sz[32];

	if (!r || !isatty(STDERR_FILENO) || total == 0)
		return;
	double now = mono();
	if (done <= 1 || r->progress_t0 == 0)
		r->progress_t0 = now - 1e-9;
	double eta = done ? (now - r->progress_t0) / (double)done * (double)(total - done) : 0;
	r->progress_done = done;
	r->progress_total = total;
	human_size(size, sz, sizeof(sz));
	if (done >= total)
		fputs("\r\033[K", stderr);
	else if (done == 0)
		fprintf(stderr, "\r\033[K%s: 0/%zu sizes, %s", r->label, total, sz);
	else
		fprintf(stderr, "\r\033[K%s: %zu/%zu sizes, %s, ETA %.0f s", r->label, done, total, sz, eta);
	fflush(stderr);
}

void ng_results_progress_size(struct ng_results *r, size_t nsizes, double el_s, double limit_s, bool bound,
                              uint64_t iters)
{
	size_t done, total;
	double left;

	if (!r || !isatty(STDERR_FILENO))
		return;
	total = r->progress_total ? r->progress_total : nsizes;
	done = r->progress_total ? r->progress_done : 0;
	if (done >= total)
		done = total - 1;
	left = (limit_s > el_s ? limit_s - el_s : 0.0) + (double)(total - done - 1) * limit_s;
	fprintf(stderr, "\r\033[K%s: size %zu of %zu: %.1f of %s%.1f s, %llu iterations; %s%.0f s left",
	        r->label, done + 1, total, el_s, bound ? "at most " : "", limit_s, (unsigned long long)iters,
	        bound ? "at most " : "", left);
	fflush(stderr);
}
