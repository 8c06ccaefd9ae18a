/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LogGP cost of a coll algorithm (--coll-model FILE, doc/coll.md#models):
 * the parameters come from a loggp result file (its "loggp" block, one set
 * per protocol segment), the messages from the algorithm itself.
 *
 * The schedule is not written down twice: each of the P ranks' calls is
 * recorded by running the algorithm of coll_algos.c over a recording
 * instance (no data moves; the algorithms' control flow does not depend on
 * the data), and the ranks' programs are then played against each other
 * with emu's semantics (modules/emu/emu.c), every rank starting at 0:
 *
 *   send of s bytes, called at t:   injected at max(t + o_s + s O_s, the
 *                                   rank's previous injection + g + (s' - 1) G),
 *                                   returns then;
 *   delivered at                    injection + L + (s - 1) G;
 *   receive, called at t:           returns at max(t, delivery) + o_r + s O_r,
 *
 * with the parameters of the segment that holds s (the nearest one outside
 * them).  An exchange (irecv, isend, wait) is a send, then a receive.  The
 * prediction is the last rank's end: what window timing measures.  The sums
 * and copies of the algorithms are not in the model (at 8 KiB about a
 * microsecond of a few hundred over emu's injected costs).
 *
 * Nothing here runs inside a timed region: the pattern asks after a
 * measurement, on the reporting rank.
 */
#ifndef NG_PATTERNS_COLL_MODEL_H
#define NG_PATTERNS_COLL_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_algos.h"
#include "status.h"

#define NG_COLL_MODEL_SEGS 16

/* One protocol segment of a LogGP fit, us and us per byte. */
struct ng_coll_seg {
	double from, to;
	double L, os, or_, g, G, Os, Or;
};

struct ng_coll_model {
	struct ng_coll_seg seg[NG_COLL_MODEL_SEGS];
	size_t nseg;
};

/*
 * Reads the "loggp" block of the result file @path into @m.  NG_ERR_USAGE,
 * reported in one line when @loud (every rank reads the file, rank 0 says
 * what is wrong), when the file cannot be read or holds no LogGP fit.
 */
ng_status ng_coll_model_load(const char *path, struct ng_coll_model *m, bool loud);

/*
 * The predicted time of one @op with algorithm @algo over @P ranks, @count
 * elements of @type per block, exchanges posted non-blocking when @nb (as
 * the module allows): us.  A negative value when there is none: native (the
 * library's own algorithm is unknown), out of memory, a run too large to
 * play here (three buffers of P blocks above 768 MiB, or more than 4 Mi
 * calls of all ranks together), or a schedule the model cannot play (a
 * receive with no send to match).
 */
double ng_coll_model_us(const struct ng_coll_model *m, enum ng_coll_op op, int algo, int P, bool nb,
                        enum ng_coll_type type, size_t count);

#endif
