/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data files beside a figure (plots/data.c): plain whitespace-separated
 * columns, numbers copied from the JSON exactly (JSON null as NaN), each
 * table preceded by "#" comments naming it and its columns, tables separated
 * by two blank lines (gnuplot "index").  A figure family describes its
 * tables as column lists and writes them with these.
 */
#ifndef NG_PLOT_DATA_H
#define NG_PLOT_DATA_H

#include <stdbool.h>
#include <stdio.h>

#include "load.h"

enum ng_col_type {
	NG_COL_NUM,   /* one number */
	NG_COL_STATS, /* STATS: median, ci95 lo, ci95 hi */
	NG_COL_PARAM, /* parameter: value, ci95 lo, ci95 hi */
};

/* A column of a table: the key of the row objects it is read from.  A list
 * of columns ends with a NULL key. */
struct ng_col {
	const char *key;
	enum ng_col_type type;
};

/* @v itself; NULL (jansson out of memory) is reported and ends the
 * process: a family builds the rows of its tables whole or not at all. */
json_t *ng_dat_xnew(json_t *v);
/* A number for a row of a family's table: a finite @v as itself, anything
 * else as null (written as NaN), whatever a damaged file holds. */
json_t *ng_dat_real(double v);

/* The 1-based column of @key's first number in @cols (0: not there). */
int ng_col_of(const struct ng_col *cols, const char *key);

/* Writes one number of a data line, a blank before all but the first:
 * a JSON number exactly (integers as integers), anything else as NaN. */
void ng_dat_json(FILE *f, bool *first, const json_t *v);
/* @key of object @o (the median or the value), then its ci95 bounds. */
void ng_dat_triple(FILE *f, bool *first, const json_t *o, const char *key);

/*
 * Writes one table: the objects of array @arr (only those whose "algorithm"
 * is @alg, when @alg is set), one line each, columns @cols; @index 0 is the
 * first table of the file, later ones start with two blank lines.
 */
void ng_dat_table(FILE *f, int index, const char *name, const json_t *arr, const struct ng_col *cols,
                  const char *alg);
/* The rows of @pf as table 0, "results", columns @cols. */
void ng_dat_rows(FILE *f, const struct ng_plot_file *pf, const struct ng_col *cols);

#endif
