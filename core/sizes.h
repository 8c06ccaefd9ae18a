/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message size specifications (-s).
 *
 *   SPEC  := ITEM [, ITEM]...
 *   ITEM  := SIZE | SIZE-SIZE | SIZE-SIZE:xFACTOR | SIZE-SIZE:+STEP
 *   SIZE  := digits with an optional K, M or G suffix (binary: 1K = 1024)
 *
 * A range without a step doubles (1-1M = 1, 2, 4, ..., 1M); :x1.5 multiplies
 * by 1.5 and rounds, skipping repeats; :+1K adds 1K.  The upper bound is
 * always included.  The result is sorted ascending without duplicates.
 * Examples: 1-1M, 1-64K:x1.5, 1,8,4K, 1K-64K:+1K.
 */
#ifndef NG_SIZES_H
#define NG_SIZES_H

#include <stdbool.h>
#include <stddef.h>

/* Parses @spec into a new array (*sizes_p, free() it) of *n_p sizes.
 * On error returns -1 and writes a one-line message naming the bad token to
 * @err. At most 100000 sizes. */
int ng_sizes_parse(const char *spec, size_t **sizes_p, size_t *n_p, char *err, size_t errlen);

/* Caps the ascending list @sizes (*n_p of them) at @max (0: no cap): drops
 * the sizes above it and, when any was dropped, ends the list with @max
 * itself.  Returns true when the list changed. */
bool ng_sizes_cap(size_t *sizes, size_t *n_p, size_t max);

/* The list as a specification that parses back to it ("1,2,4K,4056"), in a
 * new string (free() it); NULL when out of memory. */
char *ng_sizes_format(const size_t *sizes, size_t n);

#endif
