/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTML for the report (plots/html.c): text, numbers for people, and tables
 * generated from a result file's data, used by the report's page and by the
 * sections figure families add for their blocks (figure.h).  Every function
 * writes into @f and escapes what it quotes.
 */
#ifndef NG_PLOT_HTML_H
#define NG_PLOT_HTML_H

#include <jansson.h>
#include <stdio.h>

/* HTML text or attribute value of @s. */
void ng_html(FILE *f, const char *s);
/* "[lo, hi]" of @o's ci95_total (ci95 where it has none), or a dash. */
void ng_html_ci(FILE *f, const json_t *o);
/* Any JSON value as text: strings as they are, numbers for people (integers
 * as integers, large values without exponent, else four significant
 * digits), booleans as yes/no, null or NULL as a dash, nested values as
 * compact JSON (shortened; the tables above show them as tables). */
void ng_html_value(FILE *f, const json_t *v);

/* A key/value table of object @o (keys in the document's order; statistics
 * and parameters as value and CI; nested objects flattened into it as
 * "KEY.SUBKEY", lists of plain values as lists), each list of objects a
 * table (ng_html_rows()) after it, headed by its key; or "(none)". */
void ng_html_kv(FILE *f, const json_t *o);
/* A value of a result file the report has no section for, headed by its
 * @key: an object as ng_html_kv(), a list of objects as ng_html_rows(),
 * anything else as a one-line key/value table. */
void ng_html_data(FILE *f, const char *key, const json_t *v);
/*
 * A table of the objects of @rows: one column per key in the order keys first
 * appear; statistics as median and 95% CI, parameters ({"value", "ci95"}) as
 * value and CI ("flag" shown when there is no value), numbers and words as
 * they are.  Nested arrays and objects of another kind are left out and named
 * in a note.  A table wider than a page (its cells' widest words and
 * numbers, which cannot wrap, counted) is split into tables of the same
 * rows, each with the columns that name the rows (the first, and those of
 * words) and as many others as fit.
 */
void ng_html_rows(FILE *f, const json_t *rows);

#endif
