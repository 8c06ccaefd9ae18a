/* SPDX-License-Identifier: BSD-3-Clause */
/* Summaries of a pair matrix measured by ring offsets (cells.h). */
#include "cells.h"

#include <math.h>
#include <stdlib.h>

static int ng_cells_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double ng_cells_median(double *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) /* cells without a value leave */
		if (isfinite(v[i]))
			v[m++] = v[i];
	if (!m)
		return NAN;
	qsort(v, m, sizeof(*v), ng_cells_cmp);
	return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2.0;
}

static json_t *ng_cells_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *ng_cells_by_rank(const struct ng_cells *c)
{
	json_t *arr = json_array();
	double *v = c->scratch;

	for (int r = 0; arr && r < c->n; r++) {
		double med[4];

		for (int q = 0; q < 4; q++) {
			const double *val = q % 2 ? c->bw : c->lat;
			bool in = q >= 2;

			for (size_t x = 0; x < c->k; x++) {
				int client = in ? (r - c->offs[x] % c->n + c->n) % c->n : r;

				v[x] = val[(size_t)client * c->k + x];
			}
			med[q] = ng_cells_median(v, c->k);
		}
		if (json_array_append_new(arr, json_pack("{s:i, s:o, s:o, s:o, s:o}", "rank", r,
		                                         "out_latency_us", ng_cells_num(med[0]),
		                                         "out_bandwidth_MBps", ng_cells_num(med[1]),
		                                         "in_latency_us", ng_cells_num(med[2]),
		                                         "in_bandwidth_MBps", ng_cells_num(med[3]))) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *ng_cells_by_node(const struct ng_cells *c, const struct ng_nodes *nodes,
                         const char *(*host_of)(const void *ctx, int rank), const void *ctx)
{
	json_t *arr = json_array();
	double *v = c->scratch;

	for (int h = 0; arr && h < nodes->nnodes; h++) {
		size_t cnt[2] = {0, 0};
		double med[4];

		for (int q = 0; q < 4; q++) {
			const double *val = q % 2 ? c->bw : c->lat;
			int out = q >= 2;
			size_t m = 0;

			for (int l = 0; l < ng_nodes_size(nodes, h); l++) {
				int i = ng_nodes_rank(nodes, h, l);

				for (size_t x = 0; x < c->k; x++)
					if ((nodes->node_of[(i + c->offs[x]) % c->n] != h) == out)
						v[m++] = val[(size_t)i * c->k + x];
			}
			cnt[out] = m;
			med[q] = ng_cells_median(v, m);
		}
		if (json_array_append_new(
		        arr,
		        json_pack("{s:s, s:i, s:I, s:o, s:o, s:I, s:o, s:o}", "host",
		                  host_of(ctx, ng_nodes_rank(nodes, h, 0)), "ranks", ng_nodes_size(nodes, h),
		                  "pairs_within", (json_int_t)cnt[0], "latency_within_us",
		                  ng_cells_num(med[0]), "bandwidth_within_MBps", ng_cells_num(med[1]),
		                  "pairs_out", (json_int_t)cnt[1], "latency_out_us", ng_cells_num(med[2]),
		                  "bandwidth_out_MBps", ng_cells_num(med[3]))) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
