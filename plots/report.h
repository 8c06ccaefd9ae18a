/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report's page (plots/report.c): one self-contained HTML file from
 * checked, labelled result files, as plot.h says.
 */
#ifndef NG_PLOT_REPORT_H
#define NG_PLOT_REPORT_H

#include <stddef.h>

#include "load.h"

/*
 * Writes the report of @files (labelled) to @out: first to a temporary
 * beside it (safefile.h), renamed when complete (removed on failure), then
 * prints @out on stdout.  With @gnuplot, the figures are drawn with the svg
 * terminal in a temporary directory under $TMPDIR (else /tmp), removed
 * afterwards; without, the page says there are no figures.  With
 * @chromium, OUT is the page printed to PDF (pdf.h) in that directory, then
 * copied to OUT the same way.  A file whose figure cannot be drawn, or on
 * which gnuplot fails, is said in the page and on stderr, and the page is
 * written all the same.  Returns NG_OK; NG_ERR_PROTO when the page was
 * written with a file's figure left out; else the error reported once
 * (NG_ERR_IO: a file or directory could not be made or written; NG_ERR_SYS:
 * Chromium did not print; NG_ERR_NOMEM).
 */
ng_status ng_report_render(const struct ng_plot_file *files, size_t n, const char *out, const char *gnuplot,
                           const char *chromium);

#endif
