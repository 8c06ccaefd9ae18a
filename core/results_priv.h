/* SPDX-License-Identifier: BSD-3-Clause */
/* Driver side of the result sink (core/results.h). */
#ifndef NG_RESULTS_PRIV_H
#define NG_RESULTS_PRIV_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "results.h"

enum ng_results_format { NG_FMT_NONE, NG_FMT_JSON, NG_FMT_CSV };

/* Picks the format from a path's extension (.json, .csv); NG_FMT_NONE for
 * anything else. */
enum ng_results_format ng_results_format_of(const char *path);

/* Checks that @path can be written: a name without control characters,
 * ending in .json or .csv, in a directory where a temporary can be created
 * (safefile.h: created and removed; the final name is not touched).
 * Returns -1 and writes the reason (one line) to @err when it cannot. */
int ng_results_probe(const char *path, char *err, size_t errlen);

/* A sink for the reporting rank.  @doc is the document's head (schema,
 * module, env, timer, parameters...); the sink takes the reference and adds
 * "complete", "results" and the pattern blocks.  @path may be NULL (table
 * only).  @label names the run in progress lines. */
struct ng_results *ng_results_new(json_t *doc, const char *path, bool raw, const char *label);

/* Calls @fn(@ctx, size, row) on every row before it is committed: the
 * keys a module adds to the rows (core/module.h, report_row). */
void ng_results_row_hook(struct ng_results *r, void (*fn)(void *ctx, size_t size, struct ng_row *row),
                         void *ctx);
/* --percentiles: the table shows the @n percentiles @q (fractions) of the
 * main STATS in place of p99, "-" where the count cannot support one. */
void ng_results_percentiles(struct ng_results *r, const double *q, size_t n);
/* Ends every table header line with @mark ("OVERSUBSCRIBED: ..."), copied. */
void ng_results_mark(struct ng_results *r, const char *mark);

/* --verbose: every row's note on its own line too (ng_results_note). */
void ng_results_verbose(struct ng_results *r, bool verbose);
/* Writes the final document with "complete": @complete and "finished". */
ng_status ng_results_finish(struct ng_results *r, bool complete);
void ng_results_free(struct ng_results *r);
/* Why a run ended early, one line, into the document's "stopped" (written
 * with the next write; ng_results_finish's). */
void ng_results_stopped(struct ng_results *r, const char *why);
/* The same from another thread, at once: "complete": false, "stopped":
 * @why, "finished", and the file written (the run's watchdog, whose
 * process ends next).  Safe while the main thread waits in a call. */
ng_status ng_results_stop(struct ng_results *r, const char *why);

/* Number of committed rows. */
size_t ng_results_rows(const struct ng_results *r);

/* Current UTC time as ISO-8601 into @buf. */
void ng_iso_time(char *buf, size_t len);

#endif
