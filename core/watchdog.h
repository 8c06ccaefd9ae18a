/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run's watchdog: a thread per rank that ends a rank which waits
 * without progress, whatever module it runs over (doc/validation.md,
 * "A run never hangs").
 *
 * The modules bound their own waits by --timeout where they can (tcp, the
 * verbs modules and the RDMA layer count a silent peer as lost; mpirma's
 * thread ends a window call MPI cannot bound).  This one covers every
 * other wait: a blocking MPI_Send or MPI_Recv, a library's collective, the
 * bootstrap's meetings, a module that fails to see its own timeout.  It
 * reads the rank's struct ng_where (base/where.h), which the module
 * wrappers and the bootstrap's collectives mark, and fires when one wait
 * has lasted
 *
 *   --timeout + 1.5 s + the expected time of a call
 *
 * with no call completing.  The expected time is the session's
 * (where->expect_ns): twice the mean time of a call of this rank in the
 * previous measurement (its wall time over the calls it completed), scaled
 * up by the size ratio, so that a rank which sits a measurement out in one
 * call (matrix's pairs take turns) expects that long; for the first
 * measurement, the whole measurement (its count and warm-up at 10 us + 1 us
 * per byte an iteration).  The 1.5 s are the slack for a rank that a
 * busy host does not run for a while: a peer stopped for twice --timeout
 * that then goes on is still alive to the RDMA layer, and to this.
 *
 * Firing: every rank that fires prints one line saying where it stands
 * (pattern, measurement and size, the calls completed in it, the call it
 * waits in and for which peer, the module's own state when its ops give
 * one), the rank with the result sink writes the partial result
 * ("complete": false, "stopped": the line) and says how many sizes it
 * kept, and the process ends with exit status 1: the sink's rank 0.3 s
 * later, every other rank a second later (a launcher ends the others once
 * one is gone: the others, which usually fire about then too, get a moment
 * for their lines, the sink's rank a second for the file).
 *
 * The thread sleeps between looks (every quarter of the timeout, at most
 * every 0.25 s), touches nothing the main thread writes but the where
 * record, and never calls into a module or an MPI library.  A look that
 * comes more than a second late (the host did not run this thread)
 * restarts the count, as the poll-loop watchdog does (modules/watch).
 */
#ifndef NG_WATCHDOG_H
#define NG_WATCHDOG_H

#include <stddef.h>

#include "status.h"

struct ng_comm;
struct ng_results;
struct ng_watchdog;

/* Starts the watchdog of @c's rank (its where record), @timeout_s the
 * run's --timeout (0 or less: none, *w_p NULL); @res the result sink (rank
 * 0) or NULL.  NG_OK, or NG_ERR_SYS (reported) when no thread can start. */
ng_status ng_watchdog_start(struct ng_watchdog **w_p, struct ng_comm *c, double timeout_s,
                            struct ng_results *res);
/* Stops and frees it; NULL is a no-op. */
void ng_watchdog_stop(struct ng_watchdog *w);

/* The slack beyond --timeout, in seconds. */
#define NG_WATCHDOG_SLACK_S 1.5

#endif
