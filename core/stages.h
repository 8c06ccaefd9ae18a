/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's stages and what they hand each other (core/driver*.c), for
 * them alone: the plan a command line makes (driver_plan.c), the launch
 * that starts the ranks (driver_launch.c), and one rank's state from the
 * module's open to its close (driver_open.c, driver_run.c).  driver.c
 * strings them together.
 */
#ifndef NG_STAGES_H
#define NG_STAGES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "../analysis/stats.h"
#include "../timers/timer.h"
#include "args.h"
#include "cancel.h"
#include "clocksync.h"
#include "env.h"
#include "manifest.h"
#include "pair.h"
#include "pattern.h"
#include "results.h"
#include "status.h"

enum { EXIT_USAGE = NG_EXIT_USAGE };

/* The run's settings, from the parsed options (ng_driver_plan). */
struct ng_driver_plan {
	const struct ng_module *mod;
	const struct ng_module_ops *ops; /* mod's operations (ng_module_impl: from its plugin) */
	const struct ng_pattern *pat;
	size_t *sizes;
	size_t nsizes;
	const char *sizes_spec;
	bool sizes_default; /* no -s: the pattern's list, cut to the module's largest message */
	char *sizes_cut;    /* the spec of that cut list (owned) */
	long long count, warmup, np, seed;
	const char *output;
	double timeout;
	double time_s, interval_s;    /* --time, --interval (0: not given) */
	double ci_target, max_time_s; /* --ci-target (0: not given), --max-time (10 s without) */
	double pct[NG_STATS_PCT_MAX]; /* --percentiles */
	size_t npct;
};

/* How this process's ranks came to be: ng_driver_launch() fills it,
 * ng_driver_run() uses it. */
struct ng_driver_launched {
	struct ng_boot *boot;  /* this rank's bootstrap (the run releases it); NULL: no rank here */
	const char *how;       /* for messages: "--np", "mpiexec" or "--server/--client" */
	bool mpi;              /* MPI is initialised (the mpi bootstrap): NG_CAP_MPI modules can run */
	double (*wtime)(void); /* under mpi, MPI_Wtime for the mpi timer; else NULL */
	char mpi_version[256]; /* under mpi, the MPI library; else "" */
	/* A local launch: the TSC calibrated once by the launcher before it
	 * forked (one host, one TSC), which every rank takes instead of
	 * calibrating its own (100 ms of busy-waiting each); timer_ready false:
	 * each rank calibrates. */
	struct ng_timer timer;
	bool timer_ready;
};

/* One rank's state, from ng_driver_open() to ng_driver_close(). */
struct ng_driver_rank {
	struct ng_boot *boot;          /* the launch's; released by ng_driver_close() */
	struct ng_comm *comm;          /* the opened instance; NULL until the module opened */
	struct ng_results *res;        /* rank 0's result sink, else NULL */
	struct ng_timer timer;         /* the timer in use */
	const struct ng_timer *timer0; /* the launcher's calibration (struct ng_driver_launched), or NULL */
	struct ng_clock clk;           /* the global clock (clocksync.h) */
	struct ng_oversub over;        /* the oversubscription check (env.h) */
	struct ng_manifest man;        /* the manifest (manifest.h) */
	const char *how;               /* the launch, for messages (struct ng_driver_launched) */
	const char *mpi_ver;           /* the MPI library, or NULL */
	double (*wtime)(void);         /* MPI_Wtime under mpi, else NULL */
	bool mpi;                      /* MPI is initialised */
	/* Set where the ranks leave on one verdict (rank count and launch kind,
	 * which each reaches on its own; the instance checks, which they agree
	 * on): one rank says why, all meet at a barrier so that the message is
	 * out before anyone leaves, and the job ends without an abort. */
	bool agreed;
};

/* The exit status of a run that ended with @st (driver.h: 0, 1, 2, 128 +
 * the signal). */
static inline int ng_driver_exit(ng_status st)
{
	switch (st) {
	case NG_OK:
		return 0;
	case NG_ERR_USAGE:
		return EXIT_USAGE;
	case NG_ERR_CANCELLED:
		return 128 + (ng_cancel_signal() ? ng_cancel_signal() : SIGINT);
	default:
		return 1;
	}
}

/* ---- driver_plan.c: the plan from the parsed options, and its checks ---- */

/*
 * Fills @p from @a (parsed and declared by ng_cmdline_*): the module and
 * pattern, the sizes, the counts and their checks, the module's plugin.
 * @preboot: the --server/--client pair when there is one (its rank 1 does
 * not probe the results file).  Says what is wrong in one line and returns
 * the exit status (EXIT_USAGE, or 128 + the signal when stopped already);
 * 0 when the run can go on.  @p holds memory even on failure:
 * ng_driver_plan_free() releases it.
 */
int ng_driver_plan(struct ng_driver_plan *p, const struct ng_args *a, const struct ng_boot *preboot);
void ng_driver_plan_free(struct ng_driver_plan *p);

/* Whether @size ranks can run @p's pattern over its module; says why not on
 * @rank 0 (or -1: the launching process), naming the launch @how.  0 or -1. */
int ng_driver_check_ranks(const struct ng_driver_plan *p, int size, int rank, const char *how);

/* Writes why the largest size of @p is above @max into @why (with @what
 * after the byte count) and returns -1, or 0. */
int ng_driver_max_size_why(const struct ng_driver_plan *p, size_t max, const char *what, char *why,
                           size_t len);

/* Parses --pin's CPU list into @cpus (at most @max); returns its length, or
 * -1 (reported) when malformed. */
int ng_driver_pin_parse(const char *list, int *cpus, int max);

/* ---- driver_launch.c: the launch ---- */

/*
 * The launch choice, made there and nowhere else: --server/--client (coming
 * back through @again, the driver's run of a command line), srun's PMI, an
 * MPI launcher, the relaunch under mpiexec, or --np local ranks.  Takes
 * @preboot.  Returns with l->boot set in a rank, which goes on to
 * ng_driver_run(); otherwise l->boot is NULL and the return value is this
 * process's exit status.  The MPI bootstrap may take arguments of its own
 * out of *argc_p / *argv_p.
 */
int ng_driver_launch(const struct ng_driver_plan *p, struct ng_args *a, int *argc_p, char ***argv_p,
                     struct ng_boot *preboot, ng_pair_run_fn again, struct ng_driver_launched *l);

/* ---- driver_open.c: one rank's module, timer, clock and manifest ---- */

/*
 * Opens one rank's run on the bootstrap @l gives it: --pin, the rank
 * checks, the timer, the module's instance and its checks, the
 * oversubscription check, the manifest and the global clock.  Fills @r
 * (ng_driver_close() releases it, whatever this returns) and returns 0, or
 * the rank's exit status (said).
 */
int ng_driver_open(struct ng_driver_rank *r, struct ng_driver_plan *p, struct ng_args *a,
                   const struct ng_driver_launched *l);

/* Closes what ng_driver_open() opened and releases the bootstrap: ends the
 * job where a failure would leave the other ranks waiting (bootstrap.h,
 * abort).  Returns @code. */
int ng_driver_close(struct ng_driver_rank *r, const struct ng_driver_plan *p, int code);

/* ---- driver_run.c: one rank's run ---- */

/*
 * --repeat N (driver_repeat.c): the run of @argc/@argv N times, each a new
 * launch of this program without --repeat and -o, merged into one result
 * file (-o, JSON) with every run's rows and the spread between the runs;
 * refused (EXIT_USAGE, one line) where another launcher started this
 * process.  Returns the exit status: that of the first run that failed,
 * else 0.
 */
int ng_driver_repeat(const struct ng_driver_plan *p, const struct ng_args *a, int argc, char **argv);

/* One rank's run, on the bootstrap @l gives it (released here): opened,
 * measured, written, closed.  Returns the rank's exit status. */
int ng_driver_run(struct ng_driver_plan *p, struct ng_args *a, int argc, char **argv,
                  const struct ng_driver_launched *l);

#endif
