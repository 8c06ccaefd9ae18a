/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The words of a figure (plots/legend.c): what tells its files' series apart
 * (the legend) and what they share (the title).
 *
 * A file's series are named by its --label when it has one; else by the
 * facets of the run that two of the figure's files have with different
 * values (a facet only some have, such as a module's own option, says no
 * more than the module; a parameter that is null is not set): the module, the
 * rma design and scheduling (rma-sched, unless the design is sendrecv, which
 * does not schedule), spipe's and the verbs modules' mode, the RDMA
 * backend, the libfabric provider, emu's base module, the rank count, then
 * up to three other parameters of the module or pattern (bookkeeping such
 * as count, warmup, output, seed, port, and the choice of measurements that
 * the rows name, such as rma-test and rma-sync, excepted), then the host,
 * then the file's name, until no two files share a legend.  A facet they all share is
 * said once, in the title: "MODULE PATTERN, FACET, ..." (a figure of one
 * part: "PART: MODULE, FACET, ..."), the rank count only when it is not 2.
 * An oversubscribed run's legend ends with "(oversubscribed)".  The texts
 * come from result files: they are quoted where they are written.
 */
#ifndef NG_PLOT_LEGEND_H
#define NG_PLOT_LEGEND_H

#include <stddef.h>

#include "load.h"

/*
 * The legend of each of @files (@n of them, one pattern; the part @sub or
 * NULL) into *legend_p (an array of @n malloc'ed strings, "" when nothing
 * tells the file apart) and the title into *caption_p (malloc'ed).  Free
 * with ng_legend_free().
 */
void ng_legend_make(const struct ng_plot_file *const *files, size_t n, const char *sub, char ***legend_p,
                    char **caption_p);
void ng_legend_free(char **legend, size_t n, char *caption);

#endif
