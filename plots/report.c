/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ngauge report: result files -> one self-contained HTML page (contract in
 * plot.h, entry in report.h).  Tables are generated from the documents' data
 * (html.h: any array of row objects becomes a table); the sections of a
 * pattern's blocks come from the figure registry (figure.h), in its order;
 * figures are drawn by the plot path with the svg terminal into a temporary
 * directory and pasted inline, their element ids prefixed so that several
 * figures on one page do not share ids.
 */
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "config.h"
#include "driver.h"
#include "figure.h"
#include "html.h"
#include "pdf.h"
#include "readers.h"
#include "registry.h"
#include "render.h"
#include "report.h"
#include "safefile.h"

/* Top-level keys shown in their own sections; the figure families' report
 * blocks are too (figure.h), and any other key is listed under "Other
 * data". */
static const char *const ng_report_known[] = {
    "schema", "complete", "module", "pattern",    "ranks",   "command",  "started", "finished",
    "launch", "env",      "timer",  "parameters", "results", "warnings", NULL,
};

/* The page's style: tables and figures no wider than the page, on a
 * screen and printed on A4 or letter paper (margins of 12 mm). */
static const char ng_report_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:72rem;"
    "margin:1.5rem auto;padding:0 1rem;color:#111;line-height:1.4}\n"
    "h1{font-size:1.6rem}\n"
    "h2{font-size:1.3rem;border-bottom:2px solid #333;padding-bottom:.2rem;margin-top:2.5rem}\n"
    "h3{font-size:1.05rem;margin:1.2rem 0 .4rem}\n"
    "h4{font-size:.95rem;margin:.9rem 0 .3rem}\n"
    "table{border-collapse:collapse;font-size:.8rem;margin:.3rem 0;max-width:100%}\n"
    "caption{caption-side:top;text-align:left;color:#444;padding:.1rem 0}\n"
    "th,td{border:1px solid #bbb;padding:.15rem .4rem;text-align:left;vertical-align:top;"
    "overflow-wrap:anywhere}\n"
    "th{background:#eee;overflow-wrap:normal}tbody tr:nth-child(even){background:#f7f7f7}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:normal}\n"
    "table.kv{width:100%}table.kv th{font-weight:normal;color:#444;background:#f3f3f3;width:30%}\n"
    "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;word-break:break-all}\n"
    ".flag{color:#a00}.warn{border:1px solid #c60;background:#fff4e5;padding:.4rem .7rem}\n"
    ".note{color:#444;font-size:.85rem}\n"
    "figure{margin:.5rem 0}figure svg{display:block;width:100%;height:auto}\n"
    "@page{margin:12mm}\n"
    "@media print{body{max-width:none;margin:0;padding:0}h2{break-before:page}"
    "figure,tr{break-inside:avoid}}\n";

/* One report being written. */
struct ng_report {
	FILE *f;             /* the page being written */
	char *tmpdir;        /* figures (and the page to print); NULL when neither */
	const char *gnuplot; /* NULL: no figures */
	unsigned nfig;       /* figures so far (file names, id prefixes) */
	bool left_out;       /* a file's figure was left out */
};

/* ------------------------------------------------------------------------
 * Figures
 */

/* Pastes the SVG document @path from its <svg> element on, with every id
 * and every reference to one prefixed by "f@n-". */
static ng_status ng_report_paste_svg(struct ng_report *r, const char *path)
{
	static const char *const marks[] = {" id=\"", " id='", "href=\"#", "href='#", "url(#", NULL};
	char prefix[32];
	char *text = NULL, *p;
	size_t len = 0, k;
	FILE *in;

	in = fopen(path, "r");
	if (!in) {
		ng_error("report: cannot read %s: %s", path, strerror(errno));
		return NG_ERR_IO;
	}
	if (getdelim(&text, &len, '\0', in) < 0 || !(p = strstr(text, "<svg"))) {
		ng_error("report: %s: not an SVG figure", path);
		free(text);
		fclose(in);
		return NG_ERR_IO;
	}
	fclose(in);
	snprintf(prefix, sizeof(prefix), "f%u-", r->nfig);
	while (*p) {
		for (k = 0; marks[k] && strncmp(p, marks[k], strlen(marks[k])) != 0; k++)
			;
		if (marks[k]) {
			fputs(marks[k], r->f);
			fputs(prefix, r->f);
			p += strlen(marks[k]);
		} else {
			fputc(*p++, r->f);
		}
	}
	free(text);
	return NG_OK;
}

/* The figures one drawing made (ng_plot_req.made). */
struct ng_report_made {
	char **paths;
	size_t n, cap;
};

static void ng_report_made_add(void *data, const char *path)
{
	struct ng_report_made *m = data;

	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 8;
		m->paths = realloc(m->paths, m->cap * sizeof(*m->paths));
		if (!m->paths) {
			ng_error("out of memory");
			abort();
		}
	}
	m->paths[m->n] = strdup(path);
	if (!m->paths[m->n++]) {
		ng_error("out of memory");
		abort();
	}
}

/* What one drawing left out (ng_plot_req.note): the lines, and whether a
 * file was left out entirely. */
struct ng_report_notes {
	char **text;
	size_t n;
	bool file;
};

static void ng_report_note(void *data, const char *text, bool file)
{
	struct ng_report_notes *nt = data;

	nt->text = realloc(nt->text, (nt->n + 1) * sizeof(*nt->text));
	if (!nt->text) {
		ng_error("out of memory");
		abort();
	}
	nt->text[nt->n++] = ng_plot_xasprintf("%s", text);
	nt->file = nt->file || file;
}

/*
 * Draws @files (one pattern) with the svg terminal and pastes the figures
 * (one, or one per part of a pattern drawn in parts).  What the drawing
 * leaves out is said in the page, and (@tell: a file's own figure, not a
 * comparison, which would say it again) in a line on stderr; a file left
 * out, or gnuplot failing, leaves the rest of the page as it is.  Returns
 * NG_OK, or NG_ERR_IO / NG_ERR_NOMEM (reported).
 */
static ng_status ng_report_figure(struct ng_report *r, const struct ng_plot_file *files, size_t n, bool tell,
                                  enum ng_plot_kind kind)
{
	struct ng_report_made made = {0};
	struct ng_report_notes notes = {0};
	struct ng_plot_req req = {.cmd = "report",
	                          .kind = kind,
	                          .keep_going = true,
	                          .gnuplot = r->gnuplot,
	                          .quiet = true,
	                          .made = ng_report_made_add,
	                          .made_data = &made,
	                          .note = ng_report_note,
	                          .note_data = &notes};
	char *out;
	ng_status rc, pasted = NG_OK;
	size_t i;

	if (!r->gnuplot)
		return NG_OK;
	r->nfig++;
	out = ng_plot_xasprintf("%s/f%u.svg", r->tmpdir, r->nfig);
	req.out = out;
	rc = ng_plot_render(files, n, &req);
	for (i = 0; i < made.n; i++) {
		if (pasted == NG_OK) {
			if (i)
				r->nfig++; /* a prefix of its own for the ids of each figure */
			fputs("<figure>\n", r->f);
			pasted = ng_report_paste_svg(r, made.paths[i]);
			fputs("</figure>\n", r->f);
		}
		free(made.paths[i]);
	}
	free(made.paths);
	free(out);
	for (i = 0; i < notes.n; i++) {
		fprintf(r->f, "<p class=\"%s\">", notes.file ? "warn" : "note");
		fputs(notes.file ? "Figure left out: " : "Left out of the figure: ", r->f);
		ng_html(r->f, notes.text[i]);
		fputs("</p>\n", r->f);
		if (tell && notes.file)
			ng_error("report: %s", notes.text[i]);
		else if (tell)
			ng_warn("report: %s", notes.text[i]);
		free(notes.text[i]);
	}
	free(notes.text);
	if (rc == NG_ERR_SYS) {
		/* gnuplot failed (said on stderr): the page goes on without the figure */
		fputs("<p class=\"warn\">Figure left out: gnuplot failed on it.</p>\n", r->f);
		rc = NG_ERR_PROTO;
	}
	if (rc == NG_ERR_PROTO || notes.file) {
		r->left_out = true;
		rc = NG_OK;
	}
	return pasted ? pasted : rc;
}

static int ng_report_rm1(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Removes the temporary directory and everything in it (the figures, and
 * Chromium's profile). */
static void ng_report_rmtmp(const char *dir)
{
	nftw(dir, ng_report_rm1, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------------
 * Sections
 */

/* Whether top-level @key of a result file has a section of its own. */
static bool ng_report_is_known(const char *key)
{
	const struct ng_figure *const *d;
	size_t i;

	for (i = 0; ng_report_known[i]; i++)
		if (strcmp(ng_report_known[i], key) == 0)
			return true;
	for (d = ng_figures; *d; d++)
		if ((*d)->report.block && strcmp((*d)->report.block, key) == 0)
			return true;
	return false;
}

/* The sections of the figure families for the blocks of @pf, then the
 * other top-level data. */
static void ng_report_pattern_blocks(FILE *f, const struct ng_plot_file *pf)
{
	const struct ng_figure *const *d;
	const char *key;
	json_t *v;
	bool other = false;

	for (d = ng_figures; *d; d++) {
		const json_t *b = (*d)->report.block ? json_object_get(pf->doc, (*d)->report.block) : NULL;

		if ((*d)->report.section && json_is_object(b))
			(*d)->report.section(f, b);
	}
	json_object_foreach(pf->doc, key, v)
	{
		if (ng_report_is_known(key))
			continue;
		if (!other)
			fputs("<h3>Other data</h3>\n", f);
		other = true;
		ng_html_data(f, key, v);
	}
}

/* ------------------------------------------------------------------------
 * Parameters
 */

/* The values ng_option_applies asks for: the run's parameters, its launch. */
struct ng_report_vals {
	const struct ng_plot_file *pf;
	const json_t *params;
};

static const char *ng_report_value(void *ctx, const char *name)
{
	const struct ng_report_vals *v = ctx;

	if (strcmp(name, "launch") == 0)
		return json_string_value(json_object_get(v->pf->doc, "launch"));
	return json_string_value(json_object_get(v->params, name));
}

/*
 * Whether parameter @key of @pf applies to its run: not an option of
 * another module or pattern of this build only (an older file's, or one
 * written with options ignored), and not one the configuration leaves
 * unused (the option's .applies, core/options.h).  Parameters nothing here
 * knows, and those whose condition the file does not say, are shown.
 */
static bool ng_report_applies_to(const struct ng_plot_file *pf, const json_t *params, const char *key)
{
	const struct ng_module *m = ng_module_find(pf->module), *wrapped = NULL;
	const struct ng_pattern *p = ng_pattern_find(pf->pattern);
	const struct ng_option *o = ng_driver_find_option(key);
	struct ng_report_vals vals = {pf, params};
	const char *on, *val;

	if (m && m->wraps)
		wrapped =
		    ng_module_find(ng_report_value(&vals, m->wraps) ? ng_report_value(&vals, m->wraps) : "");
	if (!o)
		return true;
	if (ng_option_find(key) && m && p && !ng_option_read_by(m, wrapped, p, key))
		return false;
	return ng_option_applies(o, ng_report_value, &vals, ng_driver_find_option, &on, &val) != 0;
}

/* The parameters that apply to the run, and the names of the others. */
static void ng_report_params(FILE *f, const struct ng_plot_file *pf)
{
	const json_t *params = json_object_get(pf->doc, "parameters");
	json_t *shown = json_object(), *v;
	const char *key;
	size_t hidden = 0;

	if (!shown) {
		ng_error("out of memory");
		abort();
	}
	json_object_foreach((json_t *)params, key, v)
	{
		if (ng_report_applies_to(pf, params, key))
			json_object_set(shown, key, v);
	}
	if (json_is_object(params) && !json_object_size(shown) && json_object_size(params)) {
		json_decref(shown);
		shown = json_deep_copy(params);
	}
	ng_html_kv(f, shown);
	json_object_foreach((json_t *)params, key, v)
	{
		if (json_object_get(shown, key))
			continue;
		fputs(hidden++ ? ", "
		               : "<p class=\"note\">Not used by this run (its launch, module, pattern or "
		                 "configuration leaves them aside), so not shown: ",
		      f);
		fputs("<code>", f);
		ng_html(f, key);
		fputs("</code>", f);
	}
	if (hidden)
		fputs(".</p>\n", f);
	json_decref(shown);
}

static ng_status ng_report_file(struct ng_report *r, const struct ng_plot_file *pf, size_t idx)
{
	static const char *const run_keys[] = {"module",  "pattern",  "ranks",    "launch", "command",
	                                       "started", "finished", "complete", NULL};
	FILE *f = r->f;
	size_t i;

	fprintf(f, "<section id=\"file-%zu\">\n<h2>%zu. ", idx + 1, idx + 1);
	ng_html(f, pf->label);
	fputs("</h2>\n<p><code>", f);
	ng_html(f, pf->path);
	fputs("</code></p>\n", f);
	if (!pf->complete)
		fputs("<p class=\"warn\">Incomplete run: the file holds the sizes measured before the run "
		      "stopped.</p>\n",
		      f);
	if (pf->oversubscribed) {
		json_t *o = json_object_get(json_object_get(pf->doc, "env"), "oversubscription");

		fprintf(f,
		        "<p class=\"warn\">Oversubscribed: %lld busy-polling ranks shared %lld cores of one "
		        "host, so the times include waiting for a core (they measure the scheduler's time "
		        "slices as much as the network).</p>\n",
		        (long long)json_integer_value(json_object_get(o, "spinning_ranks")),
		        (long long)json_integer_value(json_object_get(o, "cores")));
	}
	{
		const json_t *w = json_object_get(pf->doc, "warnings"), *v;

		json_array_foreach(w, i, v)
		{
			const json_t *k = json_object_get(v, "kind"), *m = json_object_get(v, "message");

			if (!json_is_string(k) || !json_is_string(m) ||
			    strcmp(json_string_value(k), "oversubscribed") == 0)
				continue;
			fputs("<p class=\"warn\">Warning (", f);
			ng_html(f, json_string_value(k));
			fputs("): ", f);
			ng_html(f, json_string_value(m));
			fputs("</p>\n", f);
		}
	}
	fputs("<h3>Run</h3>\n<table class=\"kv\"><tbody>\n", f);
	for (i = 0; run_keys[i]; i++) {
		fprintf(f, "<tr><th>%s</th><td>", run_keys[i]);
		ng_html_value(f, json_object_get(pf->doc, run_keys[i]));
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n<h3>Environment</h3>\n", f);
	ng_html_kv(f, json_object_get(pf->doc, "env"));
	fputs("<h3>Timer</h3>\n", f);
	ng_html_kv(f, json_object_get(pf->doc, "timer"));
	fputs("<h3>Parameters</h3>\n", f);
	ng_report_params(f, pf);
	fputs("<h3>Results</h3>\n", f);
	ng_html_rows(f, pf->rows);
	ng_report_pattern_blocks(f, pf);
	ng_status rc;
	char *why;

	if (r->gnuplot)
		fputs("<h3>Figure</h3>\n", f);
	rc = ng_report_figure(r, pf, 1, true, NG_PLOT_KIND_AUTO);
	/* the distribution (plot --kind cdf) of a file that holds samples */
	why = ng_figure_check(ng_figure_of("distribution"), pf);
	if (!why && rc == NG_OK && r->gnuplot) {
		fputs("<h3>Distribution</h3>\n", f);
		rc = ng_report_figure(r, pf, 1, true, NG_PLOT_KIND_CDF);
	}
	free(why);
	return rc;
}

/* Writes the whole page to r->f. */
static ng_status ng_report_write(struct ng_report *r, const struct ng_plot_file *files, size_t n)
{
	FILE *f = r->f;
	size_t i, j, k, same;
	ng_status rc;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>ngauge report</title>\n"
	      "<style>\n",
	      f);
	fputs(ng_report_css, f);
	fputs("</style>\n</head>\n<body>\n<h1>ngauge report</h1>\n", f);
	fprintf(f, "<p class=\"note\">%zu result file%s, written by ngauge ", n, n == 1 ? "" : "s");
	ng_html(f, NG_VERSION);
	fputs(". Medians with the 95% confidence interval of the median, widened by the systematic bounds "
	      "where the file has them (ci95_total, as the tables on stdout; the figures' error bars are the "
	      "sampling interval ci95); MB = 10<sup>6</sup> bytes.</p>\n<ol>\n",
	      f);
	for (i = 0; i < n; i++) {
		fprintf(f, "<li><a href=\"#file-%zu\">", i + 1);
		ng_html(f, files[i].label);
		fputs("</a> <code>", f);
		ng_html(f, files[i].path);
		fputs("</code></li>\n", f);
	}
	fputs("</ol>\n", f);
	if (!r->gnuplot)
		fputs("<p class=\"warn\">No figures: gnuplot was not found "
		      "(Debian package gnuplot-nox).</p>\n",
		      f);

	/* comparisons: one figure per pattern shared by several files */
	for (i = 0; i < n; i++) {
		struct ng_plot_file *copy;
		struct ng_cmp *cmp;

		for (j = 0; j < i && strcmp(files[j].pattern, files[i].pattern) != 0; j++)
			;
		for (k = i, same = 0; k < n; k++)
			same += strcmp(files[k].pattern, files[i].pattern) == 0;
		if (j < i || same < 2)
			continue;
		copy = calloc(same, sizeof(*copy));
		if (!copy) {
			ng_error("out of memory");
			abort();
		}
		for (k = i, same = 0; k < n; k++) {
			if (strcmp(files[k].pattern, files[i].pattern) == 0)
				copy[same++] = files[k];
		}
		fputs("<section>\n<h2>Comparison: ", f);
		ng_html(f, files[i].pattern);
		fputs("</h2>\n", f);
		rc = r->gnuplot ? ng_report_figure(r, copy, same, false, NG_PLOT_KIND_AUTO) : NG_OK;
		/* ngauge compare's ratios against the first of them (compare.h) */
		if (rc == NG_OK && ng_compare_new(copy, same, 0.05, NULL, &cmp) == NG_OK) {
			const struct ng_plot_file *ratios;
			size_t nr;

			fputs("<h3>Ratios against the first file (ngauge compare)</h3>\n", f);
			ng_compare_html(f, cmp);
			ratios = ng_compare_figure_files(cmp, &nr);
			if (r->gnuplot && nr)
				rc = ng_report_figure(r, ratios, nr, false, NG_PLOT_KIND_AUTO);
			ng_compare_free(cmp);
		}
		free(copy);
		fputs("</section>\n", f);
		if (rc)
			return rc;
	}
	for (i = 0; i < n; i++) {
		rc = ng_report_file(r, &files[i], i);
		fputs("</section>\n", f);
		if (rc)
			return rc;
	}
	fputs("</body>\n</html>\n", f);
	return NG_OK;
}

/* ------------------------------------------------------------------------
 * The page
 */

/* Copies the file @from (Chromium's PDF in the private directory) to @out
 * through a temporary beside it (safefile.h).  Reported. */
static ng_status ng_report_copy(const char *from, const char *out)
{
	struct ng_safefile sf;
	char buf[65536];
	size_t got;
	FILE *in = fopen(from, "rb");
	ng_status rc = NG_ERR_IO;

	if (!in) {
		ng_error("report: cannot read %s: %s", from, strerror(errno));
		return NG_ERR_IO;
	}
	if (ng_safefile_open(&sf, out) != 0 || !ng_safefile_stream(&sf)) {
		ng_error("report: cannot create %s: %s", out, strerror(errno));
		goto out_close;
	}
	while ((got = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, got, sf.f);
	if (ferror(in)) {
		ng_error("report: cannot read %s: %s", from, strerror(errno));
		goto out_close;
	}
	if (ng_safefile_commit(&sf) != 0) {
		ng_error("report: cannot write %s: %s", out, strerror(errno));
		goto out_close;
	}
	rc = NG_OK;
out_close:
	ng_safefile_close(&sf); /* removes the temporary unless committed */
	fclose(in);
	return rc;
}

ng_status ng_report_render(const struct ng_plot_file *files, size_t n, const char *out, const char *gnuplot,
                           const char *chromium)
{
	struct ng_report r = {.gnuplot = gnuplot};
	struct ng_safefile sf;
	const char *tmproot;
	char *page = NULL, *pdf = NULL;
	ng_status rc = NG_OK;

	if (gnuplot || chromium) {
		tmproot = getenv("TMPDIR");
		if (!tmproot || !*tmproot)
			tmproot = "/tmp";
		r.tmpdir = ng_plot_xasprintf("%s/ngauge-report-XXXXXX", tmproot);
		if (!mkdtemp(r.tmpdir)) {
			ng_error("report: cannot create a temporary directory %s: %s", r.tmpdir,
			         strerror(errno));
			free(r.tmpdir);
			return NG_ERR_IO;
		}
	}
	/* the page itself (a temporary beside OUT, renamed when complete), or
	 * the page Chromium prints, in the private directory */
	page = chromium ? ng_plot_xasprintf("%s/report.html", r.tmpdir) : ng_plot_xasprintf("%s", out);
	if (ng_safefile_open(&sf, page) != 0 || !(r.f = ng_safefile_stream(&sf))) {
		ng_error("report: cannot create %s: %s", page, strerror(errno));
		ng_safefile_close(&sf);
		rc = NG_ERR_IO;
		goto out_remove_tmpdir;
	}
	rc = ng_report_write(&r, files, n);
	if (rc == NG_OK && ng_safefile_commit(&sf) != 0) {
		ng_error("report: cannot write %s: %s", page, strerror(errno));
		rc = NG_ERR_IO;
	}
	ng_safefile_close(&sf); /* removed unless committed */
	r.f = NULL;
	if (rc != NG_OK)
		goto out_remove_tmpdir;
	if (chromium) {
		/* Chromium writes into the private directory only */
		pdf = ng_plot_xasprintf("%s/report.pdf", r.tmpdir);
		rc = ng_pdf_print(chromium, page, pdf, r.tmpdir);
		if (rc == NG_OK)
			rc = ng_report_copy(pdf, out);
		if (rc != NG_OK)
			goto out_remove_tmpdir;
	}
	printf("%s\n", out);
	if (r.left_out)
		rc = NG_ERR_PROTO;

out_remove_tmpdir:
	if (r.tmpdir)
		ng_report_rmtmp(r.tmpdir);
	free(r.tmpdir);
	free(page);
	free(pdf);
	return rc;
}
