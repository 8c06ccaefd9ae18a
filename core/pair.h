/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --server/--client (pair.c), for the driver (driver.c) alone: the driver
 * hands its run in as a function, so pair.c never calls back into it.
 */
#ifndef NG_PAIR_H
#define NG_PAIR_H

#include <stdbool.h>
#include <stddef.h>

#include "args.h"
#include "bootstrap.h"

enum { NG_EXIT_USAGE = 2 };

/* What a --server allows the runs of its clients (pair.c's header). */
struct ng_server_limits {
	double max_time_s;   /* --server-max-time */
	size_t max_size;     /* --server-max-size */
	long long max_count; /* --server-max-count */
	double timeout_s;    /* the server's --timeout: the run's is at most this */
};

/*
 * The driver's run of @argc/@argv.  @preboot: a --server/--client pair,
 * connected (rank 0 the client, rank 1 the server's child); taken.  @lim:
 * in the server's child, its limits: a run beyond them is refused, and the
 * child answers the client (ng_boot_tcp_verdict) with 0 once the run is
 * accepted, or with the exit status and the first error line said.
 * Returns the exit status.
 */
typedef int (*ng_pair_run_fn)(int argc, char **argv, struct ng_boot *preboot,
                              const struct ng_server_limits *lim);

/* --server or --client given: serve clients, each through @run in a child,
 * or be one and come back through @run.  Returns the exit status. */
int ng_pair_up(const struct ng_args *a, int argc, char **argv, ng_pair_run_fn run);

/* Checks a run against the server's limits: the largest message, -c and -w,
 * and the wall time it asks for (--time or --max-time over every size; 0
 * where it does not say).  -1 with the reason in @why, or 0. */
int ng_pair_check(const struct ng_server_limits *lim, size_t max_size, long long count, long long warmup,
                  double run_s, char *why, size_t len);

#endif
