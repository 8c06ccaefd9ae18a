/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result sink: one "ngauge-result/1" JSON document per run, a CSV with
 * the same per-size rows, and an aligned table on stdout.
 *
 * A pattern builds one row per measured size (ng_row_begin ... ng_row_commit)
 * on rank 0; the calls are no-ops on every other rank, so patterns gather
 * their figures to rank 0 first (ng_boot_allgather) and then report.  Each
 * commit prints the row's table line and rewrites the result file (temporary
 * file + rename) with "complete": false, so whatever was measured survives a
 * crash or a kill; the driver rewrites it with "complete": true at the end.
 *
 * Keys carry their unit: "latency_us", "bandwidth_MBps" (MB = 10^6 bytes),
 * "time_us".  The first stats key of a row is the table's main column.
 */
#ifndef NG_RESULTS_H
#define NG_RESULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analysis/stats.h"
#include "results_text.h"
#include "status.h"

struct ng_results;
struct ng_row;

/* Starts a row for @size bytes measured @count times.  Never NULL on rank 0
 * (aborts on out-of-memory); NULL on other ranks, where the row calls are
 * no-ops. */
struct ng_row *ng_row_begin(struct ng_results *r, size_t size, size_t count);
/* Adds statistics under @key, e.g. "latency_us". */
void ng_row_stats(struct ng_row *row, const char *key, const struct ng_stats *st);
/* Widens the "ci95_total" of the statistics under @key (added before) by
 * @bound_us on each side, and adds @bound_us to their "uncertainty" under
 * @name (a systematic bound that applies to that figure alone, e.g.
 * "clock_offset" where it compares two ranks' clocks).  No-op where @key
 * holds no such statistics or @bound_us is not positive. */
void ng_row_widen(struct ng_row *row, const char *key, const char *name, double bound_us);
/*
 * Systematic bounds (analysis/stats.h, struct ng_unc_set): every STATS of a
 * time in microseconds (a key ending in "_us") added after this carries
 * bound @size_us named @name in its "uncertainty", and its "ci95_total" is
 * its ci95 widened by the sum of its bounds (worst-case addition).  The
 * driver adds the timer's (resolution, read overhead: a difference of two
 * reads) and the clock offset bound where ranks' clocks are compared; a
 * STATS of another unit carries none (an empty "uncertainty", "ci95_total"
 * equal to "ci95").  No-op for NULL @r.
 */
void ng_results_systematic(struct ng_results *r, const char *name, double size_us);
/* A bound known only at the end of the run (the timer's drift, an
 * emulator's overshoot): every time STATS written so far gains @name =
 * @abs_us + |@rel| |median| and its ci95_total widens by it.  Checkpoints
 * the file.  No-op for NULL @r or a zero bound. */
void ng_results_widen(struct ng_results *r, const char *name, double abs_us, double rel);
/* {"name": size, ...} of @u: the "uncertainty" object (a new reference). */
json_t *ng_unc_json(const struct ng_unc_set *u);
/* Adds one number under @key, e.g. "clients". */
void ng_row_number(struct ng_row *row, const char *key, double v);
/* Adds one count under @key, written as a JSON integer, e.g. "origins". */
void ng_row_int(struct ng_row *row, const char *key, long long v);
/* The table's form of a byte count: "64K", "1M", "1000" (exact suffixes
 * only), for a pattern's summary tables on stdout. */
void ng_fmt_size(size_t s, char *buf, size_t len);
/* The table's form of a real: four significant digits, whole numbers from
 * 10^4 on (never scientific notation above 1), "-" when not finite. */
void ng_fmt_real(double x, char *buf, size_t len);
/* Adds a JSON value under @key (steals the reference), e.g. per-pair details. */
void ng_row_json(struct ng_row *row, const char *key, json_t *v);
/* Keeps @n raw samples under "raw": {"@key": [...]} when --raw was given. */
void ng_row_raw(struct ng_row *row, const char *key, const double *x, size_t n);
/* Appends the row, prints its table line, checkpoints the result file. */
ng_status ng_row_commit(struct ng_results *r, struct ng_row *row);
/* Puts the row in the place of the @index-th committed row (a measurement
 * taken again: the file keeps one row per measured point), prints its
 * table line and checkpoints the file; NG_ERR_INTERNAL (nothing changed,
 * @row freed) when fewer rows were committed. */
ng_status ng_row_replace(struct ng_results *r, size_t index, struct ng_row *row);

/* Sets a top-level pattern-specific block ("loggp", "alltoall", ...); steals
 * @v; replaces an earlier block of that key.  Checkpoints the file. */
ng_status ng_results_block(struct ng_results *r, const char *key, json_t *v);

/* The STATS object of the result format (n, min, median, mean, stddev, p99,
 * max, ci95); a new reference.  Non-finite values become null. */
json_t *ng_stats_json(const struct ng_stats *st);

/* True on the rank that holds the results (rank 0). */
bool ng_results_active(const struct ng_results *r);

/* The arrays kept as compact text (struct ng_results_text): results_text.h. */
/*
 * The value to put in the document (under a key of a row, a block or the
 * document itself) that the file shows as the array of @t's elements.  @r
 * takes what @t holds (@t is emptied) and frees it with the results.  A new
 * reference to a placeholder string that only this result's writer turns
 * into the array: put it nowhere else.  With NULL @r (a rank other than 0)
 * @t is freed and the value is null.  Never NULL (aborts on out-of-memory).
 */
json_t *ng_results_text_value(struct ng_results *r, struct ng_results_text *t);

/*
 * A condition of one row that its flag in the row already says (a drift
 * between the halves of its samples, two alternating levels): counted per
 * @kind (a static key, "unstable") and said in one line per kind at the
 * table's foot, "# note (unstable): 12 of 21 sizes " + @summary (static; a
 * "%s" in it is replaced by the largest @worst seen, as a percentage), and
 * as a warning on stderr unless stderr is the same stream, so that a table
 * is not buried under a line per size.  With --verbose each note's own
 * line (@fmt) is printed at once as well.  No-op on ranks without the
 * sink.
 */
void ng_results_note(struct ng_results *r, const char *kind, const char *summary, double worst,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * The progress line on stderr, drawn only by the rank that holds the
 * results and only when stderr is a terminal; no-ops otherwise (NULL @r
 * included).  Patterns draw it through ng_progress and ng_progress_size
 * (core/pattern.h), where the contract is.
 *
 * ng_results_progress: @done of @total measurements, the last of @size
 * bytes ("pingpong: 12/21 sizes, 64 KiB, ETA 3 s"); @done 0 announces
 * @total, @done == @total clears the line.
 * ng_results_progress_size: within one measurement, @el_s of @limit_s
 * seconds (@bound: at most) and @iters repetitions; @nsizes is the total
 * when no ng_results_progress has announced one.
 */
void ng_results_progress(struct ng_results *r, size_t done, size_t total, size_t size);
void ng_results_progress_size(struct ng_results *r, size_t nsizes, double el_s, double limit_s, bool bound,
                              uint64_t iters);

#endif
