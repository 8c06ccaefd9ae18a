/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ngauge compare and ngauge ab: the commands, the comparison's table, its
 * JSON and its section of the report (compare.h, doc/compare.md).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_priv.h"
#include "gnuplot.h"
#include "html.h"
#include "plot.h"
#include "render.h"
#include "safefile.h"

enum { EXIT_SAME = 0, EXIT_USAGE = 2, EXIT_SLOWER = 3 };

/* ---- output ---- */

static const char *method_note(const struct ng_cmp_pair *p)
{
	bool boot = false, rep = false, med = false, hier = false;

	for (size_t i = 0; i < p->n; i++) {
		boot |= strcmp(p->rows[i].method, "bootstrap") == 0;
		rep |= strcmp(p->rows[i].method, "reported-ci") == 0;
		med |= strcmp(p->rows[i].method, "medians") == 0;
		hier |= strcmp(p->rows[i].method, "hierarchical") == 0;
	}
	if (hier)
		return "intervals: hierarchical bootstrap (runs, then samples within runs), widened for the "
		       "number of runs; ratio: the median of the runs' ratios (Hodges-Lehmann); medians: of "
		       "the runs' medians; no rank test (the runs are the unit)";
	if (rep || med)
		return "no raw samples in both files (run with --raw): intervals from the files' reported "
		       "intervals "
		       "of the median, no rank test";
	return boot ? "intervals: percentile bootstrap of the raw samples; p: Mann-Whitney rank test" : "";
}

/* The line on runs: how many each side has, and what one run per side means. */
static void runs_note(FILE *f, const struct ng_cmp *c, const struct ng_cmp_pair *p)
{
	size_t na = 0, nb = 0, nw = 0;
	double w[3] = {NAN, NAN, NAN};

	for (size_t i = 0; i < p->n; i++) {
		na = p->rows[i].na > na ? p->rows[i].na : na;
		nb = p->rows[i].nb > nb ? p->rows[i].nb : nb;
		if (isfinite(p->rows[i].widen)) {
			w[0] = nw && w[0] < p->rows[i].widen ? w[0] : p->rows[i].widen;
			w[1] = nw && w[1] > p->rows[i].widen ? w[1] : p->rows[i].widen;
			nw++;
		}
	}
	fprintf(f, "#   runs: A %zu, B %zu", na, nb);
	if (na >= 2 && nb >= 2)
		fputs("; between %: the spread (sd of log medians) of A's / B's runs\n", f);
	else if (c->cal)
		fprintf(f,
		        "; one run on a side: intervals widened by the spread between the %zu runs of %s "
		        "(factor %.2g to %.2g)\n",
		        c->cal_runs, c->cal->path, w[0], w[1]);
	else
		fputs("; one run on a side (--single-run): the variance between runs is unknown and not in "
		      "these intervals\n",
		      f);
}

static void fmt_between(char *buf, size_t len, const struct ng_cmp_row *r)
{
	if (isfinite(r->cva) || isfinite(r->cvb))
		snprintf(buf, len, "%.2g/%.2g", r->cva, r->cvb);
	else
		snprintf(buf, len, "-");
}

static void print_table(FILE *f, const struct ng_cmp *c)
{
	for (size_t k = 0; k < c->npairs; k++) {
		const struct ng_cmp_pair *p = &c->pairs[k];

		fprintf(f, "# %s%s vs %s%s (baseline): %s, ratio of medians B/A, threshold %g%%\n",
		        p->b->path, p->nfb > 1 ? " ..." : "", p->a->path, p->nfa > 1 ? " ..." : "", c->metric,
		        c->threshold * 100.0);
		for (size_t i = 0; i < p->ndiffs; i++)
			fprintf(f, "#   differs: %s\n", p->diffs[i]);
		if (p->nmore)
			fprintf(f, "#   differs: ... and %zu more\n", p->nmore);
		fprintf(f, "#   %s\n", method_note(p));
		runs_note(f, c, p);
		fprintf(f, "#%9s %-20s %12s %12s %9s %22s %10s %11s  %s\n", "size", "row", "A median",
		        "B median", "ratio", "ci95(ratio)", "p", "between %", "verdict");
		for (size_t i = 0; i < p->n; i++) {
			const struct ng_cmp_row *r = &p->rows[i];
			char ci[64], pv[32], bw[48];

			if (isfinite(r->lo))
				snprintf(ci, sizeof(ci), "[%.4f, %.4f]", r->lo, r->hi);
			else
				snprintf(ci, sizeof(ci), "-");
			if (isfinite(r->p))
				snprintf(pv, sizeof(pv), "%.3g", r->p);
			else
				snprintf(pv, sizeof(pv), "-");
			fmt_between(bw, sizeof(bw), r);
			fprintf(f, "%10.17g %-20s %12.5g %12.5g %9.4f %22s %10s %11s  %s\n", r->size,
			        ng_cmp_id_rest(r->id)[0] ? ng_cmp_id_rest(r->id) : "-", r->ma, r->mb,
			        r->ratio, ci, pv, bw, r->verdict);
		}
	}
}

static json_t *paths_of(const struct ng_plot_file *f, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(f[i].path));
	return a;
}

/* A compared row's first keys: its size and the identity keys A's row has
 * (test, sync, algorithm, ...). */
static json_t *row_head(const struct ng_cmp_row *r)
{
	json_t *row = json_pack("{s:f}", "size", r->size);

	for (size_t j = 0; ng_cmp_ident[j]; j++)
		if (json_is_string(json_object_get(r->a, ng_cmp_ident[j])))
			json_object_set(row, ng_cmp_ident[j], json_object_get(r->a, ng_cmp_ident[j]));
	return row;
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
			json_t *row = row_head(r);

			json_object_set_new(row, "a_median", ng_cmp_num_or_null(r->ma));
			json_object_set_new(row, "b_median", ng_cmp_num_or_null(r->mb));
			json_object_set_new(row, "ratio", ng_cmp_num_or_null(r->ratio));
			json_object_set_new(
			    row, "ci95",
			    json_pack("[o,o]", ng_cmp_num_or_null(r->lo), ng_cmp_num_or_null(r->hi)));
			json_object_set_new(row, "method", json_string(r->method));
			json_object_set_new(row, "p_value", ng_cmp_num_or_null(r->p));
			json_object_set_new(row, "runs_a", json_integer((json_int_t)r->na));
			json_object_set_new(row, "runs_b", json_integer((json_int_t)r->nb));
			json_object_set_new(row, "between_pct_a", ng_cmp_num_or_null(r->cva));
			json_object_set_new(row, "between_pct_b", ng_cmp_num_or_null(r->cvb));
			json_object_set_new(row, "widened", ng_cmp_num_or_null(r->widen));
			json_object_set_new(row, "verdict", json_string(r->verdict));
			json_array_append_new(rows, row);
		}
		json_array_append_new(cmps,
		                      json_pack("{s:s,s:s,s:o,s:o,s:o,s:I,s:o}", "a", p->a->path, "b",
		                                p->b->path, "a_files", paths_of(p->fa, p->nfa), "b_files",
		                                paths_of(p->fb, p->nfb), "differences", diffs,
		                                "more_differences", (json_int_t)p->nmore, "rows", rows));
	}
	return json_pack("{s:s,s:s,s:s,s:f,s:b,s:s,s:b,s:o,s:o}", "schema", "ngauge-compare/1", "pattern",
	                 c->pairs[0].a->pattern, "metric", c->metric, "threshold_pct", c->threshold * 100.0,
	                 "slower", ng_compare_slower(c), "lower_is_better", c->lower_better ? "yes" : "no",
	                 "single_run", c->nsingle > 0, "calibration",
	                 c->cal ? json_pack("{s:s,s:I,s:f}", "file", c->cal->path, "runs",
	                                    (json_int_t)c->cal_runs, "largest_pct", 100.0 * c->cal_sd_max)
	                        : json_null(),
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
			json_t *row = row_head(r);

			json_object_set_new(row, "A median", ng_cmp_num_or_null(r->ma));
			json_object_set_new(row, "B median", ng_cmp_num_or_null(r->mb));
			json_object_set_new(row, "ratio",
			                    json_pack("{s:o,s:[o,o]}", "value", ng_cmp_num_or_null(r->ratio),
			                              "ci95", ng_cmp_num_or_null(r->lo),
			                              ng_cmp_num_or_null(r->hi)));
			json_object_set_new(row, "p", ng_cmp_num_or_null(r->p));
			json_object_set_new(row, "verdict", json_string(r->verdict));
			json_array_append_new(rows, row);
		}
		ng_html_rows(f, rows);
		json_decref(rows);
	}
}

/* ---- the commands ---- */

static void usage(FILE *f)
{
	fputs(
	    "usage: ngauge compare A.json B.json [C.json ...] [options]\n"
	    "       ngauge compare A1.json A2.json ... -- B1.json B2.json ... [-- C1.json ...] [options]\n"
	    "  compares each side with A (the baseline): ratio of medians B/A per row with its 95% "
	    "interval,\n"
	    "  verdict faster/slower/same at --threshold PCT (default 5).  A side's runs are its files and\n"
	    "  the runs of --repeat files; with several runs a side, a hierarchical bootstrap over runs\n"
	    "  -o OUT.json      the comparison as JSON\n"
	    "  --plot FIG       the figure (.pdf, .svg, .png, .tex): ratio against size, one series per "
	    "side\n"
	    "  --label NAME     a file's name in the figure (in the order of the files; repeatable)\n"
	    "  --single-run     compare one run per side anyway (the variance between runs unknown)\n"
	    "  --calibrate CAL  one run per side: widen by the spread between the runs of CAL, a --repeat\n"
	    "                   run of the same command\n"
	    "exit status: 0 no row slower beyond the threshold, 3 some row is, 2 usage, files that cannot\n"
	    "be compared, or one run per side without --single-run or --calibrate\n",
	    f);
}

static int dump_doc(FILE *f, const void *doc)
{
	return json_dumpf(doc, f, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
}

static int write_json(const struct ng_cmp *c, const char *out, const json_t *extra)
{
	json_t *doc = to_json(c);
	int rc;

	if (extra)
		json_object_set(doc, "ab", (json_t *)extra);
	rc = ng_safefile_write(out, dump_doc, doc);
	if (rc != 0)
		ng_error("compare: %s: cannot write: %s", out, strerror(errno));
	json_decref(doc);
	return rc;
}

int ng_compare_option(struct ng_cmp_cli *cli, int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (strcmp(a, "--single-run") == 0) {
		cli->single_run = true;
		return 1;
	}
	if (!(strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--threshold") == 0 ||
	      strcmp(a, "--plot") == 0 || strcmp(a, "--label") == 0 || strcmp(a, "--calibrate") == 0))
		return 0;
	if (*i + 1 >= argc) {
		ng_error("%s: option '%s' needs a value; see ngauge %s --help", cli->cmd, a, cli->cmd);
		return -1;
	}
	const char *v = argv[++*i];

	if (a[1] == 'o' || strcmp(a, "--output") == 0) {
		cli->out = v;
	} else if (strcmp(a, "--plot") == 0) {
		cli->fig = v;
	} else if (strcmp(a, "--calibrate") == 0) {
		cli->cal = v;
	} else if (strcmp(a, "--label") == 0) {
		cli->labels[cli->nl++] = v;
	} else {
		char *end;

		errno = 0;
		cli->threshold = strtod(v, &end);
		if (errno || end == v || *end || !(cli->threshold >= 0 && cli->threshold < 1000)) {
			ng_error("%s: --threshold takes a percentage between 0 and 1000, got '%s'", cli->cmd,
			         v);
			return -1;
		}
	}
	return 1;
}

/* The refusal of one run per side, in one line. */
static void refuse_single(const struct ng_cmp_cli *cli, const struct ng_cmp *c)
{
	const struct ng_cmp_pair *p = &c->pairs[0];

	for (size_t k = 0; k < c->npairs; k++)
		for (size_t i = 0; i < c->pairs[k].n; i++)
			if (c->pairs[k].rows[i].na < 2 || c->pairs[k].rows[i].nb < 2) {
				p = &c->pairs[k];
				break;
			}
	ng_error("%s: %s vs %s: one run on a side, so the variance between runs is unknown and a "
	         "launch-to-launch difference would read as a change: no verdict; give several runs per side "
	         "(ngauge --repeat N, or A1.json A2.json -- B1.json B2.json, or ngauge ab), --calibrate FILE "
	         "(a --repeat run of the command), or --single-run to compare the runs' own intervals alone",
	         cli->cmd, p->b->path, p->a->path);
}

static int draw(const struct ng_cmp_cli *cli, const struct ng_cmp *c, int code)
{
	size_t nf;
	const struct ng_plot_file *ff = ng_compare_figure_files(c, &nf);
	char *gp = ng_plot_find_gnuplot();
	struct ng_plot_req req = {.cmd = cli->cmd, .out = cli->fig, .kind = NG_PLOT_KIND_AUTO, .gnuplot = gp};

	if (!nf)
		ng_warn("%s: no ratio to draw", cli->cmd);
	else if (!gp)
		ng_error("%s: gnuplot not found: install the Debian package gnuplot-nox", cli->cmd);
	if (!gp || !nf || ng_plot_render(ff, nf, &req) != NG_OK)
		code = code == EXIT_SAME ? 1 : code;
	free(gp);
	return code;
}

int ng_compare_run(const struct ng_cmp_cli *cli, const char *const *paths, const size_t *group, size_t n)
{
	struct ng_plot_file *files, cal = {0};
	struct ng_cmp_opts o = {.threshold = cli->threshold / 100.0};
	struct ng_cmp *c = NULL;
	int code = EXIT_USAGE;

	if ((cli->out && !ng_plot_name_ok(cli->cmd, "-o", cli->out)) ||
	    (cli->fig && !ng_plot_name_ok(cli->cmd, "--plot", cli->fig)))
		return EXIT_USAGE;
	if (cli->fig && !ng_term_of(cli->fig)) {
		ng_error("%s: --plot %s: unknown extension (.pdf, .svg, .png or .tex)", cli->cmd, cli->fig);
		return EXIT_USAGE;
	}
	if (cli->cal && cli->single_run) {
		ng_error("%s: --calibrate and --single-run: give one of them", cli->cmd);
		return EXIT_USAGE;
	}
	files = ng_plot_xcalloc(n, sizeof(*files));
	for (size_t i = 0; i < n; i++)
		if (ng_plot_file_load(cli->cmd, paths[i], &files[i]) != NG_OK)
			goto out_files;
	if (cli->cal) {
		if (ng_plot_file_load(cli->cmd, cli->cal, &cal) != NG_OK)
			goto out_files;
		o.cal = &cal;
	}
	if (ng_plot_labels(files, n, cli->labels, cli->nl) != NG_OK)
		goto out_files;
	if (ng_compare_groups(files, n, group, &o, cli->cmd, &c) != NG_OK)
		goto out_files;
	if (ng_compare_single(c) && !cli->single_run && !cli->cal) {
		refuse_single(cli, c);
		goto out_cmp;
	}
	if (cli->ab) {
		const json_t *v;
		size_t i;

		printf("# ab: %lld rounds, runs in the order",
		       (long long)json_integer_value(json_object_get(cli->ab, "rounds")));
		json_array_foreach(json_object_get(cli->ab, "order"), i, v)
		    printf(" %s", json_string_value(v));
		printf("\n");
	}
	print_table(stdout, c);
	code = ng_compare_slower(c) ? EXIT_SLOWER : EXIT_SAME;
	if (cli->out && write_json(c, cli->out, cli->ab) != 0)
		code = 1;
	if (cli->fig)
		code = draw(cli, c, code);
	fflush(stdout);
out_cmp:
	ng_compare_free(c);
out_files:
	for (size_t i = 0; i < n; i++)
		ng_plot_file_release(&files[i]);
	ng_plot_file_release(&cal);
	free(files);
	return code;
}

int ng_compare_main(int argc, char **argv)
{
	const char **paths = ng_plot_xcalloc((size_t)argc, sizeof(*paths));
	size_t *group = ng_plot_xcalloc((size_t)argc, sizeof(*group)), n = 0, g = 0;
	struct ng_cmp_cli cli = {.cmd = "compare", .threshold = 5.0};
	bool sides = false;
	int code = EXIT_USAGE;

	cli.labels = ng_plot_xcalloc((size_t)argc, sizeof(*cli.labels));
	for (int i = 1; i < argc; i++)
		sides |= strcmp(argv[i], "--") == 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int t;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			code = 0;
			goto out;
		}
		if (strcmp(a, "--") == 0) {
			if (!n || group[n - 1] != g) {
				ng_error("compare: '--' with no file before it: each side needs a file");
				goto out;
			}
			g++;
			continue;
		}
		t = ng_compare_option(&cli, argc, argv, &i);
		if (t < 0)
			goto out;
		if (t)
			continue;
		if (a[0] == '-' && a[1]) {
			ng_error("compare: unknown option '%s'; see ngauge compare --help", a);
			goto out;
		}
		group[n] = sides ? g : n;
		paths[n++] = a;
	}
	if (n < 2 || (sides && (g < 1 || group[n - 1] != g))) {
		ng_error("compare: needs at least two result files (A, the baseline, then B ...), or two "
		         "sides of files separated by '--', none empty");
		usage(stderr);
		goto out;
	}
	code = ng_compare_run(&cli, paths, group, n);
out:
	free(paths);
	free(group);
	free(cli.labels);
	return code;
}
