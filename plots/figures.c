/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one registry of figure families (contract in figure.h), read by
 * `ngauge plot` (which figure draws a pattern) and `ngauge report` (the
 * sections of the result files' blocks, in this order).
 *
 * Adding a pattern's figure is one new file, plots/fig_NAME.c defining
 * `const struct ng_figure ng_figure_NAME`, and one line X(NAME) below (and
 * the file's name in plots/meson.build).  The generic figure stays last: it
 * draws every pattern no other figure names.
 */
#include <string.h>

#include "figure.h"

#define NG_FIGURE_LIST(X)                                                                                    \
	X(pingpong)   /* fig_pingpong.c: pingpong */                                                         \
	X(1n)         /* fig_pingpong.c: 1n, n1 */                                                           \
	X(loggp)      /* fig_loggp.c */                                                                      \
	X(plogp)      /* fig_plogp.c */                                                                      \
	X(alltoall)   /* fig_alltoall.c */                                                                   \
	X(coll)       /* fig_coll.c: one figure per operation */                                             \
	X(bw)         /* fig_pingpong.c: bw, bibw */                                                         \
	X(rma)        /* fig_rma.c: one figure per test */                                                   \
	X(overlap)    /* fig_progress.c */                                                                   \
	X(skew)       /* fig_progress.c */                                                                   \
	X(ebb)        /* fig_ebb.c */                                                                        \
	X(noise)      /* fig_noise.c */                                                                      \
	X(congestion) /* fig_congestion.c: victims' distributions, impact factors */                         \
	X(compare)    /* fig_compare.c: the ratios of ngauge compare */                                      \
	X(matrix)     /* fig_matrix.c: heatmaps */                                                           \
	X(dist)       /* fig_dist.c: --kind cdf, hist of any pattern ("distribution") */                     \
	X(load)       /* fig_load.c: --kind load, the latency-throughput curve of open-loop runs */          \
	X(generic)    /* fig_generic.c: any other pattern; last */

#define NG_FIGURE_DECLARE(name) extern const struct ng_figure ng_figure_##name;
#define NG_FIGURE_ENTRY(name)   &ng_figure_##name,

NG_FIGURE_LIST(NG_FIGURE_DECLARE)

const struct ng_figure *const ng_figures[] = {NG_FIGURE_LIST(NG_FIGURE_ENTRY) NULL};

const struct ng_figure *ng_figure_of(const char *pattern)
{
	const struct ng_figure *const *d;
	const char *const *p;

	for (d = ng_figures; (*d)->patterns; d++) {
		for (p = (*d)->patterns; *p; p++) {
			if (strcmp(*p, pattern) == 0)
				return *d;
		}
	}
	return *d;
}

char *ng_figure_check(const struct ng_figure *d, const struct ng_plot_file *pf)
{
	const char *why;
	const json_t *b;

	if (d->block) {
		b = json_object_get(pf->doc, d->block);
		if (!json_is_object(b) || !json_is_array(json_object_get(b, "sizes")))
			return ng_plot_xasprintf("no \"%s\" block with \"sizes\"%s", d->block,
			                         pf->complete ? "" : " (the run did not complete)");
	}
	why = d->check ? d->check(pf) : NULL;
	return why ? ng_plot_xasprintf("%s", why) : NULL;
}
