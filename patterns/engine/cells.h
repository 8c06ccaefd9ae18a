/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Summaries of a pair matrix measured by ring offsets (the matrix pattern):
 * cell (i, x) is the pair from rank i to rank i + offs[x] mod n, and its
 * value the median of that pair's samples.  What a result of many ranks
 * keeps instead of every cell: per rank the median of its cells as the
 * client and as the server; per node (the ranks of one host) the median of
 * its cells inside it and of those leaving it.
 *
 * Values are given as @lat and @bw, n k medians each, cell (i, x) at
 * i k + x; NaN where a cell has none.  Pure: no communication, O(n k) time,
 * @scratch of n k doubles.
 */
#ifndef NG_PATTERNS_CELLS_H
#define NG_PATTERNS_CELLS_H

#include <stddef.h>

#include <jansson.h>

#include "nodes.h"

struct ng_cells {
	int n;             /* ranks */
	size_t k;          /* offsets */
	const int *offs;   /* [k] */
	const double *lat; /* [n k] median latency of each cell, us */
	const double *bw;  /* [n k] median bandwidth of each cell, MB/s */
	double *scratch;   /* [n k] */
};

/* The median of @v[0..n) (sorted in place), NaN for none. */
double ng_cells_median(double *v, size_t n);

/* One object per rank: "rank", "out_latency_us", "out_bandwidth_MBps" (its
 * cells as the client), "in_latency_us", "in_bandwidth_MBps" (as the
 * server); NULL when out of memory. */
json_t *ng_cells_by_rank(const struct ng_cells *c);

/* One object per node of @nodes: "host" (@host_of(ctx, its first rank)),
 * "ranks", "pairs_within", "latency_within_us", "bandwidth_within_MBps",
 * "pairs_out", "latency_out_us", "bandwidth_out_MBps" (null medians where no
 * such cells); NULL when out of memory. */
json_t *ng_cells_by_node(const struct ng_cells *c, const struct ng_nodes *nodes,
                         const char *(*host_of)(const void *ctx, int rank), const void *ctx);

#endif
