/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Result files for plot and report (contract in load.h): the small helpers
 * of plots/, reading numbers, statistics and parameters of a document,
 * loading and checking a result file (its words above all: a result file is
 * untrusted input), and the legend labels.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "load.h"
#include "safefile.h"

/* ------------------------------------------------------------------------
 * Small helpers
 */

char *ng_plot_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		ng_error("out of memory");
		abort();
	}
	return s;
}

void *ng_plot_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		ng_error("out of memory");
		abort();
	}
	return p;
}

const char *ng_plot_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool ng_plot_name_ok(const char *cmd, const char *what, const char *path)
{
	size_t at;

	if (ng_safefile_name_ok(path, &at))
		return true;
	ng_error("%s: %s: the file name has a control character (byte 0x%02x at offset %zu)", cmd, what,
	         (unsigned char)path[at], at);
	return false;
}

void ng_plot_size_words(char *buf, size_t len, double size)
{
	if (size >= 1048576 && fmod(size, 1048576) == 0)
		snprintf(buf, len, "%.0f MiB", size / 1048576);
	else if (size >= 1024 && fmod(size, 1024) == 0)
		snprintf(buf, len, "%.0f KiB", size / 1024);
	else
		snprintf(buf, len, "%.0f B", size);
}

void ng_plot_fmt_exact(char *buf, size_t len, double v)
{
	int prec;

	if (!isfinite(v)) {
		snprintf(buf, len, "NaN");
		return;
	}
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

double ng_plot_num(const json_t *o, const char *key)
{
	const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

bool ng_plot_row_is(const json_t *o, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v && strcmp(v, want) == 0;
}

bool ng_plot_is_stats(const json_t *v)
{
	return json_is_object(v) && json_is_number(json_object_get(v, "median"));
}

bool ng_plot_is_param(const json_t *v)
{
	return json_is_object(v) && json_object_get(v, "value") != NULL;
}

static void ng_plot_ci_of(const json_t *o, const char *key, double *lo_p, double *hi_p)
{
	const json_t *ci = json_is_object(o) ? json_object_get(o, key) : NULL;

	*lo_p = NAN;
	*hi_p = NAN;
	if (!json_is_array(ci) || json_array_size(ci) != 2)
		return;
	if (json_is_number(json_array_get(ci, 0)))
		*lo_p = json_number_value(json_array_get(ci, 0));
	if (json_is_number(json_array_get(ci, 1)))
		*hi_p = json_number_value(json_array_get(ci, 1));
}

void ng_plot_ci(const json_t *o, double *lo_p, double *hi_p)
{
	ng_plot_ci_of(o, "ci95", lo_p, hi_p);
}

void ng_plot_ci_total(const json_t *o, double *lo_p, double *hi_p)
{
	bool total = json_is_object(o) && json_is_array(json_object_get(o, "ci95_total"));

	ng_plot_ci_of(o, total ? "ci95_total" : "ci95", lo_p, hi_p);
}

const char *ng_plot_first_stats_key(const struct ng_plot_file *pf)
{
	const char *key;
	json_t *row, *v;
	size_t i;

	json_array_foreach(pf->rows, i, row)
	{
		json_object_foreach(row, key, v)
		{
			if (ng_plot_is_stats(v))
				return key;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * Loading and labels
 */

/*
 * The words of a result file (pattern, module, and every string of a row:
 * test, sync, side, algorithm, ...) name things ngauge defines; they reach
 * file names, gnuplot scripts and the report.  A result file is untrusted
 * input (a colleague's run, a paper's artifact): a word is 1 to
 * NG_PLOT_WORD_MAX characters of letters, digits and "_.+:;-", and a file with
 * anything else is refused, naming the field.
 */
#define NG_PLOT_WORD_MAX 64

bool ng_plot_is_word(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++, n++) {
		unsigned char c = (unsigned char)*s;

		if (n >= NG_PLOT_WORD_MAX || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		                               (c >= '0' && c <= '9') || strchr("_.+:;-", c)))
			return false;
	}
	return true;
}

/* Refuses (once, naming @field of @path) a value that is not a word. */
static bool ng_plot_word_check(const char *cmd, const char *path, const char *field, const json_t *v)
{
	if (json_is_string(v) && ng_plot_is_word(json_string_value(v)))
		return true;
	ng_error("%s: %s: %s is not a word of at most %d letters, digits or \"_.+:;-\"", cmd, path, field,
	         NG_PLOT_WORD_MAX);
	return false;
}

ng_status ng_plot_file_load(const char *cmd, const char *path, struct ng_plot_file *f_p)
{
	struct ng_plot_file f = {.path = path};
	json_error_t jerr;
	struct stat st;
	json_t *v, *row;
	FILE *in;
	size_t i;

	memset(f_p, 0, sizeof(*f_p));
	in = fopen(path, "r");
	if (!in) {
		ng_error("%s: %s: %s", cmd, path, strerror(errno));
		return NG_ERR_IO;
	}
	if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
		ng_error("%s: %s: is a directory, not a result file", cmd, path);
		goto err_close_file;
	}
	if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
		ng_error("%s: %s: empty file", cmd, path);
		goto err_close_file;
	}
	f.doc = json_loadf(in, 0, &jerr);
	if (!f.doc) {
#if JANSSON_VERSION_HEX >= 0x020b00
		if (json_error_code(&jerr) == json_error_premature_end_of_input) {
			ng_error("%s: %s: truncated JSON (the document ends early, line %d)", cmd, path,
			         jerr.line);
			goto err_close_file;
		}
#endif
		ng_error("%s: %s: invalid JSON at line %d, column %d: %s", cmd, path, jerr.line, jerr.column,
		         jerr.text);
		goto err_close_file;
	}
	fclose(in);

	if (!json_is_object(f.doc)) {
		ng_error("%s: %s: not an ngauge result (the top level is not a JSON object)", cmd, path);
		goto err_drop_doc;
	}
	v = json_object_get(f.doc, "schema");
	if (!json_is_string(v)) {
		ng_error("%s: %s: not an ngauge result (no \"schema\" string)", cmd, path);
		goto err_drop_doc;
	}
	if (strcmp(json_string_value(v), NG_PLOT_SCHEMA) != 0) {
		ng_error("%s: %s: unsupported schema \"%.60s\" (expected \"" NG_PLOT_SCHEMA "\")", cmd, path,
		         json_string_value(v));
		goto err_drop_doc;
	}
	v = json_object_get(f.doc, "pattern");
	if (!json_is_string(v) || !*json_string_value(v)) {
		ng_error("%s: %s: no \"pattern\" string", cmd, path);
		goto err_drop_doc;
	}
	if (!ng_plot_word_check(cmd, path, "\"pattern\"", v))
		goto err_drop_doc;
	f.pattern = json_string_value(v);
	v = json_object_get(f.doc, "module");
	if (v && !ng_plot_word_check(cmd, path, "\"module\"", v))
		goto err_drop_doc;
	f.module = json_is_string(v) ? json_string_value(v) : "?";
	v = json_object_get(f.doc, "ranks");
	f.ranks = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
	f.complete = !json_is_false(json_object_get(f.doc, "complete"));
	f.oversubscribed = json_is_true(json_object_get(json_object_get(f.doc, "env"), "oversubscribed"));

	f.rows = json_object_get(f.doc, "results");
	if (!json_is_array(f.rows)) {
		ng_error("%s: %s: no \"results\" array", cmd, path);
		goto err_drop_doc;
	}
	if (json_array_size(f.rows) == 0) {
		ng_error("%s: %s: no measurements (\"results\" is empty)", cmd, path);
		goto err_drop_doc;
	}
	json_array_foreach(f.rows, i, row)
	{
		double size = ng_plot_num(row, "size");

		const char *key;
		json_t *field;

		if (!json_is_object(row) || !(size >= 0)) {
			ng_error("%s: %s: results[%zu] is not a row with a numeric \"size\"", cmd, path, i);
			goto err_drop_doc;
		}
		json_object_foreach(row, key, field)
		{
			char name[96];

			if (!json_is_string(field))
				continue;
			snprintf(name, sizeof(name), "results[%zu].%.60s", i,
			         ng_plot_is_word(key) ? key : "?");
			if (!ng_plot_word_check(cmd, path, name, field))
				goto err_drop_doc;
		}
	}
	*f_p = f;
	return NG_OK;

err_close_file:
	fclose(in);
	return NG_ERR_IO;
err_drop_doc:
	json_decref(f.doc);
	return NG_ERR_PROTO;
}

void ng_plot_file_release(struct ng_plot_file *f)
{
	json_decref(f->doc);
	free(f->label);
	memset(f, 0, sizeof(*f));
}

/* True when another file of the same pattern has the label of files[i]. */
static bool ng_label_clash(const struct ng_plot_file *files, size_t n, size_t i)
{
	size_t j;

	for (j = 0; j < n; j++) {
		if (j != i && strcmp(files[j].pattern, files[i].pattern) == 0 &&
		    strcmp(files[j].label, files[i].label) == 0)
			return true;
	}
	return false;
}

ng_status ng_plot_labels(struct ng_plot_file *files, size_t n, const char *const *user, size_t nuser)
{
	bool *clash = ng_plot_xcalloc(n, sizeof(*clash));
	size_t i;
	int step;

	for (i = 0; i < n; i++) {
		free(files[i].label);
		files[i].user = i < nuser ? user[i] : NULL;
		if (i < nuser)
			files[i].label = ng_plot_xasprintf("%s", user[i]);
		else
			files[i].label = ng_plot_xasprintf("%s %s", files[i].module, files[i].pattern);
	}
	/* step 0: add the rank count; step 1: the file name instead */
	for (step = 0; step < 2; step++) {
		for (i = nuser; i < n; i++)
			clash[i] = ng_label_clash(files, n, i);
		for (i = nuser; i < n; i++) {
			if (!clash[i] || (step == 0 && files[i].ranks <= 0))
				continue;
			free(files[i].label);
			if (step == 0)
				files[i].label = ng_plot_xasprintf("%s %s (%lld ranks)", files[i].module,
				                                   files[i].pattern, files[i].ranks);
			else
				files[i].label =
				    ng_plot_xasprintf("%s %s (%s)", files[i].module, files[i].pattern,
				                      ng_plot_basename(files[i].path));
		}
	}
	/* Times of ranks that waited for a core are no figures of the network:
	 * the legend says so, whatever the label. */
	for (i = 0; i < n; i++) {
		char *marked;

		if (!files[i].oversubscribed)
			continue;
		marked = ng_plot_xasprintf("%s (oversubscribed)", files[i].label);
		free(files[i].label);
		files[i].label = marked;
	}
	free(clash);
	return NG_OK;
}

size_t ng_plot_warnings(const struct ng_plot_file *pf)
{
	const json_t *w = json_object_get(pf->doc, "warnings"), *v;
	size_t i, n = 0;

	json_array_foreach(w, i, v)
	{
		const json_t *k = json_object_get(v, "kind");

		n += json_is_string(k) && strcmp(json_string_value(k), "oversubscribed") != 0;
	}
	return n;
}
