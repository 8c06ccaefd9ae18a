/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data files beside a figure (contract in data.h): column lists,
 * numbers written exactly, tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "gnuplot.h"

json_t *ng_dat_xnew(json_t *v)
{
	if (!v) {
		ng_error("out of memory");
		abort();
	}
	return v;
}

json_t *ng_dat_real(double v)
{
	return ng_dat_xnew(isfinite(v) ? json_real(v) : json_null());
}

static int ng_col_width(const struct ng_col *c)
{
	return c->type == NG_COL_NUM ? 1 : 3;
}

/* The 1-based column of @key's first number. */
int ng_col_of(const struct ng_col *cols, const char *key)
{
	int col = 1;

	for (; cols->key; cols++) {
		if (strcmp(cols->key, key) == 0)
			return col;
		col += ng_col_width(cols);
	}
	return 0; /* not reached with the tables below */
}

/* Writes one number of a data line, a blank before all but the first. */
static void ng_dat_put(FILE *f, bool *first, const char *text)
{
	fprintf(f, "%s%s", *first ? "" : " ", text);
	*first = false;
}

static void ng_dat_num(FILE *f, bool *first, double v)
{
	char buf[40];

	ng_plot_fmt_exact(buf, sizeof(buf), v);
	ng_dat_put(f, first, buf);
}

/* A JSON number exactly (integers as integers), anything else as NaN. */
void ng_dat_json(FILE *f, bool *first, const json_t *v)
{
	char buf[40];

	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		ng_dat_put(f, first, buf);
	} else {
		ng_dat_num(f, first, json_is_real(v) ? json_real_value(v) : NAN);
	}
}

/* @key of object @o (the median or the value), then its ci95 bounds. */
void ng_dat_triple(FILE *f, bool *first, const json_t *o, const char *key)
{
	double lo, hi;

	ng_dat_json(f, first, json_is_object(o) ? json_object_get(o, key) : NULL);
	ng_plot_ci(o, &lo, &hi);
	ng_dat_num(f, first, lo);
	ng_dat_num(f, first, hi);
}

/*
 * Writes one table: the objects of array @arr (only those whose "algorithm"
 * is @alg, when @alg is set), one line each, columns @cols.  Tables are
 * preceded by their name and column names as comments and separated by two
 * blank lines (gnuplot "index").
 */
void ng_dat_table(FILE *f, int index, const char *name, const json_t *arr, const struct ng_col *cols,
                  const char *alg)
{
	const struct ng_col *c;
	const json_t *row, *a;
	bool first;
	size_t i;

	fprintf(f, "%s# table %d: ", index ? "\n\n" : "", index);
	ng_gp_chars(f, name, false);
	fputs("\n# columns:", f);
	for (c = cols; c->key; c++) {
		if (c->type == NG_COL_NUM)
			fprintf(f, " %s", c->key);
		else
			fprintf(f, " %s_%s %s_ci95_lo %s_ci95_hi", c->key,
			        c->type == NG_COL_STATS ? "median" : "value", c->key, c->key);
	}
	fputc('\n', f);
	json_array_foreach(arr, i, row)
	{
		if (!json_is_object(row))
			continue;
		a = json_object_get(row, "algorithm");
		if (alg && (!json_is_string(a) || strcmp(json_string_value(a), alg) != 0))
			continue;
		first = true;
		for (c = cols; c->key; c++) {
			const json_t *v = json_object_get(row, c->key);

			if (c->type == NG_COL_NUM)
				ng_dat_json(f, &first, v);
			else
				ng_dat_triple(f, &first, v, c->type == NG_COL_STATS ? "median" : "value");
		}
		fputc('\n', f);
	}
}
void ng_dat_rows(FILE *f, const struct ng_plot_file *pf, const struct ng_col *cols)
{
	ng_dat_table(f, 0, "results", pf->rows, cols, NULL);
}
