/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report as a PDF (plots/pdf.c): the page printed by headless Chromium
 * (Debian package chromium), the browser a reader would print it with.
 */
#ifndef NG_PLOT_PDF_H
#define NG_PLOT_PDF_H

#include "status.h"

/* Longest wait for Chromium to print, in seconds. */
#define NG_PDF_TIMEOUT 120

/* The Chromium to print with: $NGAUGE_CHROMIUM when set (and nothing else
 * then), else chromium, chromium-browser or google-chrome from PATH; a
 * malloc'ed path, or NULL when none is found (reports nothing). */
char *ng_pdf_find_chromium(void);

/*
 * Prints the HTML file @html to the PDF file @pdf with headless Chromium
 * @chromium (no network, no GPU, no first-run chores; as root without its
 * sandbox, which refuses root), its profile in a new directory under
 * @tmpdir, which the caller removes.  Blocks until Chromium is done, at
 * most NG_PDF_TIMEOUT seconds, and ends every process it started.  Returns
 * NG_OK when @pdf is a PDF, else NG_ERR_SYS reported in one line ("report:
 * Chromium did not print ...", with its last complaint).
 */
ng_status ng_pdf_print(const char *chromium, const char *html, const char *pdf, const char *tmpdir);

#endif
