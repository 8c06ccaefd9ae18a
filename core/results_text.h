/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result file's text arrays (results_text.c): arrays a pattern keeps as
 * compact text (struct ng_results_text, below) stand in the document as
 * a placeholder string each, and are put in their places when the file is
 * written.  The sink (results.c) makes the placeholders and calls the dump.
 */
#ifndef NG_RESULTS_TEXT_H
#define NG_RESULTS_TEXT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "status.h"

/*
 * A JSON array of the document kept as compact text, for the arrays with an
 * element per rank or per pair (the manifest's placement, pingpong's pairs):
 * a tree of jansson nodes costs about a kilobyte per element, its compact
 * text a tenth of that, so rank 0's memory does not grow by a tree per rank.
 * The file shows the same array (one element per line).
 *
 * Zero-initialise; ng_results_text_add appends elements; then
 * ng_results_text_value moves the text into the result, or
 * ng_results_text_free drops it.  Not thread-safe: one owner at a time.
 */
struct ng_results_text {
	char *buf; /* the elements' compact texts, ",\n" between them, NUL-terminated; NULL when empty */
	size_t len, cap; /* bytes in buf (without the NUL), bytes allocated */
	size_t n;        /* elements */
};

/* Appends the compact text of @v (steals the reference; NULL is taken for
 * out-of-memory).  NG_OK, or NG_ERR_NOMEM (reported once, here; @t keeps
 * what it held). */
ng_status ng_results_text_add(struct ng_results_text *t, json_t *v);
/* Frees what @t holds and empties it. */
void ng_results_text_free(struct ng_results_text *t);

/* The placeholder string of the @i-th text array of a result
 * (ng_results_text_value). */
#define NG_RESULTS_TEXT_MARK "@ngauge-text-array-%zu@"

/* Writes @doc as the result file's JSON on @f (indented, keys in order, 10
 * significant digits), each placeholder of @text[0..@ntext) replaced by that
 * array.  0, or -1 when a write failed (errno set). */
int ng_results_text_dump(const json_t *doc, const struct ng_results_text *text, size_t ntext, FILE *f);

#endif
