/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result-file loader and everything that reads a loaded file: one input
 * is one "ngauge-result/1" file, or two separated by a line
 * "--ngauge-fuzz-next--" (a baseline and a file compared with it; one file
 * is compared with itself).  Both are loaded as `ngauge plot` loads them
 * (ng_plot_file_load: untrusted input, plots/load.h); when both are
 * accepted, they are labelled, compared (ng_compare_new, its HTML and its
 * ratios' figure files, and ngauge compare's table), drawn (ng_plot_render
 * without gnuplot: the data files and scripts, every kind), and reported
 * (ng_report_render without gnuplot and Chromium).  Everything is written in
 * the harness's private directory and removed after each input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "plots/compare.h"
#include "plots/load.h"
#include "plots/plot.h"
#include "plots/render.h"
#include "plots/report.h"

#define NG_FUZZ_NEXT "\n--ngauge-fuzz-next--\n"

static void ng_fuzz_note(void *data, const char *text, bool file)
{
	(void)data;
	(void)text;
	(void)file;
}

/* Draws @files as `ngauge plot --kind KIND -o DIR/fig.svg` would, without
 * running gnuplot. */
static void ng_fuzz_render(const struct ng_plot_file *files, size_t n, enum ng_plot_kind kind)
{
	char *out = ng_plot_xasprintf("%s/fig.svg", ng_fuzz_dir());
	struct ng_plot_req req = {
	    .cmd = "plot",
	    .out = out,
	    .kind = kind,
	    .gnuplot = NULL,
	    .quiet = true,
	    .keep_going = true,
	    .note = ng_fuzz_note,
	};

	(void)ng_plot_render(files, n, &req);
	free(out);
}

static void ng_fuzz_compare(const struct ng_plot_file *files, FILE *sink)
{
	const struct ng_plot_file *ratios;
	struct ng_cmp *cmp;
	size_t nr;

	if (ng_compare_new(files, 2, 0.05, "compare", &cmp) != NG_OK)
		return;
	(void)ng_compare_slower(cmp);
	ng_compare_html(sink, cmp);
	ratios = ng_compare_figure_files(cmp, &nr);
	if (nr)
		ng_fuzz_render(ratios, nr, NG_PLOT_KIND_AUTO);
	ng_compare_free(cmp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ng_plot_file files[2];
	const uint8_t *next = NULL;
	size_t na = size, i;
	char *pa, *pb, *out;
	FILE *sink;

	for (i = 0; i + sizeof(NG_FUZZ_NEXT) - 1 <= size; i++) {
		if (memcmp(data + i, NG_FUZZ_NEXT, sizeof(NG_FUZZ_NEXT) - 1) == 0) {
			next = data + i + sizeof(NG_FUZZ_NEXT) - 1;
			na = i;
			break;
		}
	}
	pa = ng_fuzz_file("a.json", data, na);
	pb = next ? ng_fuzz_file("b.json", next, size - (size_t)(next - data))
	          : ng_fuzz_file("b.json", data, na);
	if (ng_plot_file_load("plot", pa, &files[0]) != NG_OK)
		goto out_paths;
	if (ng_plot_file_load("plot", pb, &files[1]) != NG_OK)
		goto out_release_a;
	if (ng_plot_labels(files, 2, NULL, 0) != NG_OK)
		goto out_release_b;
	for (i = 0; i < 2; i++) {
		(void)ng_plot_warnings(&files[i]);
		(void)ng_plot_first_stats_key(&files[i]);
	}
	sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	ng_fuzz_compare(files, sink);
	fclose(sink);

	/* ngauge compare A B: the table on stdout, no file written */
	{
		char *argv[] = {(char *)"compare", pa, pb, NULL};

		(void)ng_compare_main(3, argv);
	}
	ng_fuzz_render(files, 2, NG_PLOT_KIND_AUTO);
	ng_fuzz_render(files, 1, NG_PLOT_KIND_CDF);
	ng_fuzz_render(files, 1, NG_PLOT_KIND_HIST);
	out = ng_plot_xasprintf("%s/report.html", ng_fuzz_dir());
	(void)ng_report_render(files, 2, out, NULL, NULL);
	free(out);

out_release_b:
	ng_plot_file_release(&files[1]);
out_release_a:
	ng_plot_file_release(&files[0]);
out_paths:
	free(pa);
	free(pb);
	ng_fuzz_clear();
	return 0;
}
