/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command lines of `ngauge plot` and `ngauge report` (contract in
 * plot.h): the options both share (FILE..., -o, --help), plot's --label and
 * --kind, the default outputs, and the two entry points: load and label the
 * files, then draw (render.h) or write the page (report.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gnuplot.h"
#include "load.h"
#include "pdf.h"
#include "plot.h"
#include "render.h"
#include "report.h"

/* What ng_plot_cmdline() needs and finds. */
struct ng_plot_cmdline {
	void (*usage)(FILE *f); /* --help */
	const char *out_what;   /* how "-o needs ..." names the missing value */
	/* The command's own option at argv[*i], advancing *i past its value:
	 * returns 1 when taken, 0 when it is not one of them, -1 after an error
	 * (reported).  NULL: none. */
	int (*own)(void *own_data, int argc, char **argv, int *i);
	void *own_data;
	char **paths;    /* [argc], from the caller: receives the FILEs (borrowed from argv) */
	size_t npaths;   /* 0 before */
	const char *out; /* -o, --output OUT; NULL before and when not given */
};

/* ------------------------------------------------------------------------
 * What plot and report share
 */

/* The value of option @longname (or @shortname, NULL when none) at argv[*i]
 * ("-o X", "--output X", "--output=X", "-oX"), advancing *i; NULL when
 * argv[*i] is not that option.  A missing value is reported as
 * "ARGV0: OPTION needs @what (see ngauge ARGV0 --help)" and sets *bad_p. */
static const char *ng_opt_value(int argc, char **argv, int *i, const char *shortname, const char *longname,
                                const char *what, bool *bad_p)
{
	const char *a = argv[*i];
	size_t len = strlen(longname);

	if (strncmp(a, longname, len) == 0 && a[len] == '=')
		return a + len + 1;
	if (shortname && strncmp(a, shortname, 2) == 0 && a[2])
		return a + 2;
	if (strcmp(a, longname) != 0 && !(shortname && strcmp(a, shortname) == 0))
		return NULL;
	if (*i + 1 >= argc) {
		ng_error("%s: %s needs %s (see ngauge %s --help)", argv[0], a, what, argv[0]);
		*bad_p = true;
		return NULL;
	}
	return argv[++*i];
}

/*
 * Parses the command line of plot or report (argv[0] is the command's name):
 * FILEs (every word after "--", "-", and words not starting with '-'),
 * -h/--help (prints @usage on stdout), -o/--output OUT ("-oOUT",
 * "--output=OUT" too) and the command's own options.  Returns -1 to go on
 * (at least one FILE), else the exit status: 0 after --help, 2 after a usage
 * error (reported: "CMD: unknown option X", "CMD: no result file given", a
 * missing value).
 */
static int ng_plot_cmdline(struct ng_plot_cmdline *cl, int argc, char **argv)
{
	bool bad = false, dashdash = false;
	const char *v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (dashdash || a[0] != '-' || !a[1]) {
			cl->paths[cl->npaths++] = argv[i];
		} else if (strcmp(a, "--") == 0) {
			dashdash = true;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			cl->usage(stdout);
			return 0;
		} else if ((v = ng_opt_value(argc, argv, &i, "-o", "--output", cl->out_what, &bad))) {
			cl->out = v;
		} else if (bad) {
			return 2;
		} else {
			int own = cl->own ? cl->own(cl->own_data, argc, argv, &i) : 0;

			if (own < 0)
				return 2;
			if (own == 0) {
				ng_error("%s: unknown option %s (see ngauge %s --help)", argv[0], a, argv[0]);
				return 2;
			}
		}
	}
	if (!cl->npaths) {
		ng_error("%s: no result file given (see ngauge %s --help)", argv[0], argv[0]);
		return 2;
	}
	return -1;
}

/* The default output's stem: the length of @file without a final ".json"
 * (print it with "%.*s" and append the output's extension). */
static int ng_plot_stem_len(const char *file)
{
	size_t len = strlen(file);

	if (len > 5 && strcmp(file + len - 5, ".json") == 0)
		len -= 5;
	return (int)len;
}

/* ------------------------------------------------------------------------
 * ngauge plot
 */

static void ng_plot_usage(FILE *f)
{
	fputs("usage: ngauge plot FILE... [-o OUT.pdf|.svg|.png|.tex] [--label NAME]... [--kind KIND]\n"
	      "  Draws result files (schema " NG_PLOT_SCHEMA ") with gnuplot; one figure per pattern.\n"
	      "  -o, --output OUT   figure file; the extension picks pdf, svg, png or LaTeX (cairolatex)\n"
	      "                     (default: the first FILE with .json replaced by .pdf)\n"
	      "  --label NAME       legend text of the next file, in the order of the files\n"
	      "  --kind KIND        auto (every panel), latency, bandwidth, overhead (loggp o_s, o_r),\n"
	      "                     cdf, hist (the distribution per size, from --raw or --histogram),\n"
	      "                     load (latency against the achieved rate over open-loop runs)\n"
	      "  Beside OUT: OUT.gp (gnuplot script) and OUT.dat or OUT-N.dat (data).\n"
	      "  NGAUGE_GNUPLOT=PATH chooses the gnuplot program.\n",
	      f);
}

/* plot's own options. */
struct ng_plot_opts {
	const char **labels; /* --label NAME, in order */
	size_t nlabels;
	struct ng_plot_req *req; /* --kind KIND into req->kind */
};

/* ng_plot_cmdline's @own for plot: --label NAME, --kind KIND. */
static int ng_plot_own(void *data, int argc, char **argv, int *i)
{
	struct ng_plot_opts *po = data;
	bool bad = false;
	const char *v;

	if ((v = ng_opt_value(argc, argv, i, NULL, "--label", "a value", &bad))) {
		po->labels[po->nlabels++] = v;
		return 1;
	}
	if (bad)
		return -1;
	if ((v = ng_opt_value(argc, argv, i, NULL, "--kind", "a value", &bad))) {
		if (!ng_plot_kind_of(v, &po->req->kind)) {
			ng_error("plot: unknown --kind \"%s\" (auto, latency, bandwidth, overhead, cdf, "
			         "hist, load)",
			         v);
			return -1;
		}
		return 1;
	}
	return bad ? -1 : 0;
}

int ng_plot_main(int argc, char **argv)
{
	char **paths = ng_plot_xcalloc((size_t)argc, sizeof(*paths));
	const char **labels = ng_plot_xcalloc((size_t)argc, sizeof(*labels));
	struct ng_plot_req req = {.cmd = "plot", .kind = NG_PLOT_KIND_AUTO};
	struct ng_plot_opts po = {.labels = labels, .req = &req};
	struct ng_plot_cmdline cl = {
	    .usage = ng_plot_usage,
	    .out_what = "a value",
	    .own = ng_plot_own,
	    .own_data = &po,
	    .paths = paths,
	};
	struct ng_plot_file *files = NULL;
	size_t npaths, nlabels, nloaded = 0, k;
	const char *out;
	char *out_default = NULL, *gnuplot = NULL;
	ng_status rc;
	int status;

	status = ng_plot_cmdline(&cl, argc, argv);
	if (status >= 0)
		goto out_free_args;
	status = 2;
	npaths = cl.npaths;
	nlabels = po.nlabels;
	out = cl.out;
	if (nlabels > npaths) {
		ng_error("plot: %zu --label values for %zu files", nlabels, npaths);
		goto out_free_args;
	}
	if (!out)
		out = out_default = ng_plot_xasprintf("%.*s.pdf", ng_plot_stem_len(paths[0]), paths[0]);
	if (!ng_plot_name_ok("plot", cl.out ? "-o" : "the figure", out))
		goto out_free_args;
	if (!ng_term_of(out)) {
		ng_error("plot: %s: unknown figure type (the name must end in .pdf, .svg, .png or .tex)",
		         out);
		goto out_free_args;
	}

	/* A file that cannot be read or is no result file: exit 1, as report. */
	status = 1;
	files = ng_plot_xcalloc(npaths, sizeof(*files));
	for (nloaded = 0; nloaded < npaths; nloaded++) {
		if (ng_plot_file_load("plot", paths[nloaded], &files[nloaded]) != NG_OK)
			goto out_free_files;
	}
	if (ng_plot_labels(files, npaths, labels, nlabels) != NG_OK)
		goto out_free_files;
	gnuplot = ng_plot_find_gnuplot();
	req.out = out;
	req.gnuplot = gnuplot;
	rc = ng_plot_render(files, npaths, &req);
	if (rc == NG_ERR_USAGE)
		status = 2;
	if (rc)
		goto out_free_files;
	if (!gnuplot) {
		ng_error("plot: gnuplot not found: install the Debian package gnuplot-nox (or set "
		         "NGAUGE_GNUPLOT); "
		         "scripts and data are written beside %s",
		         out);
		goto out_free_files;
	}
	status = 0;

out_free_files:
	for (k = 0; k < nloaded; k++)
		ng_plot_file_release(&files[k]);
	free(files);
	free(gnuplot);
out_free_args:
	free(out_default);
	free(labels);
	free(paths);
	return status;
}

/* ------------------------------------------------------------------------
 * ngauge report
 */

/* Whether the report's output @out is a PDF (its extension, any case). */
static bool ng_report_is_pdf(const char *out)
{
	const char *dot = strrchr(out, '.');

	return dot && !strchr(dot, '/') && strcasecmp(dot, ".pdf") == 0;
}

static void ng_report_usage(FILE *f)
{
	fputs(
	    "usage: ngauge report FILE... [-o OUT.html|OUT.pdf]\n"
	    "  One self-contained HTML page summarising result files (schema " NG_PLOT_SCHEMA "):\n"
	    "  environment, parameters, per-size table, LogGP/pLogP parameters, figures (inline SVG).\n"
	    "  -o, --output OUT   the page (default: the first FILE with .json replaced by .html);\n"
	    "                     OUT.pdf: the page printed by headless Chromium (Debian package chromium)\n"
	    "  NGAUGE_GNUPLOT=PATH chooses the gnuplot program, NGAUGE_CHROMIUM=PATH the Chromium.\n",
	    f);
}

int ng_report_main(int argc, char **argv)
{
	char **paths = calloc((size_t)argc, sizeof(*paths));
	struct ng_plot_cmdline cl = {.usage = ng_report_usage, .out_what = "a file name", .paths = paths};
	struct ng_plot_file *files = NULL;
	size_t npaths, nloaded = 0, k;
	const char *out;
	char *out_default = NULL, *gnuplot = NULL, *chromium = NULL;
	int status;

	if (!paths) {
		ng_error("out of memory");
		return 1;
	}
	status = ng_plot_cmdline(&cl, argc, argv);
	if (status >= 0)
		goto out_free_args;
	status = 2;
	npaths = cl.npaths;
	out = cl.out;
	if (!out) {
		if (asprintf(&out_default, "%.*s.html", ng_plot_stem_len(paths[0]), paths[0]) < 0) {
			out_default = NULL;
			goto out_nomem;
		}
		out = out_default;
	}
	if (!ng_plot_name_ok("report", cl.out ? "-o" : "the page", out))
		goto out_free_args;

	status = 1;
	/* a PDF is the page printed by Chromium; without it, nothing is written */
	if (ng_report_is_pdf(out)) {
		chromium = ng_pdf_find_chromium();
		if (!chromium) {
			ng_error("report: %s: a PDF report needs Chromium (the Debian package chromium, or "
			         "NGAUGE_CHROMIUM=PATH), which was not found; -o FILE.html writes the page",
			         out);
			goto out_free_args;
		}
	}
	files = calloc(npaths, sizeof(*files));
	if (!files)
		goto out_nomem;
	/* A file that cannot be read or is no result file: exit 1, as plot. */
	for (nloaded = 0; nloaded < npaths; nloaded++) {
		if (ng_plot_file_load("report", paths[nloaded], &files[nloaded]) != NG_OK)
			goto out_free_files;
	}
	if (ng_plot_labels(files, npaths, NULL, 0) != NG_OK)
		goto out_free_files;

	gnuplot = ng_plot_find_gnuplot();
	if (!gnuplot)
		ng_warn("report: gnuplot not found: install the Debian package gnuplot-nox; "
		        "the report has no figures");
	if (ng_report_render(files, npaths, out, gnuplot, chromium) == NG_OK)
		status = 0;

out_free_files:
	for (k = 0; k < nloaded; k++)
		ng_plot_file_release(&files[k]);
	free(files);
	free(gnuplot);
out_free_args:
	free(chromium);
	free(out_default);
	free(paths);
	return status;

out_nomem:
	ng_error("out of memory");
	status = 1;
	goto out_free_files;
}
