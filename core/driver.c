/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver: parses the command line from the option tables, checks the
 * pattern's needs against the module, launches the ranks, opens the module,
 * runs the pattern and writes the results.  This file strings the steps
 * together and hands a --server/--client session on; the steps are
 * driver_plan.c (the plan and its checks), driver_launch.c (the launch),
 * driver_open.c (a rank's module, timer, clock and manifest) and
 * driver_run.c (the pattern's run and the results), sharing stages.h.
 *
 * Exit status: 0 success, 1 failed run, 2 usage error, 128 + the signal when
 * interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
 *
 * Decisions:
 * - Options may come in any order.  Every option of every registered
 *   module and pattern is parsed, then one that the chosen module (with the
 *   module it wraps: --emu-base) and pattern do not read, or that the chosen
 *   configuration leaves unused (the option's .applies), is refused with
 *   exit 2 before anything runs (readers.h, doc/options.md).
 * - Without -x/-p the defaults are tcp and pingpong.
 * - A module that needs an MPI launch (mpi) started without mpiexec re-runs
 *   itself under `mpiexec -n NP`.
 * - The results file is rewritten after every measured size with
 *   "complete": false, and once more at the end; nothing measured is lost if
 *   a rank dies or the run is interrupted.
 * - On SIGINT/SIGTERM/SIGHUP the ranks stop at the next interruptible point;
 *   a rank stuck in a call that cannot be interrupted exits 3 s later (its
 *   results file already holds every completed size).  The local launcher
 *   and --server pass the signals they get on to their ranks.
 */
#include "config.h"

#include <stdio.h>

#include "args.h"
#include "cmdline.h"
#include "docgen.h"
#include "driver.h"
#include "launch.h"
#include "stages.h"

/* --man and --completion: the man page or a shell's completions on stdout. */
static int print_docs(const struct ng_args *a)
{
	static const char *const subcommands[] = {"plot", "report", NULL};
	const struct ng_docgen d = {ng_driver_options, ng_cmdline_short, ng_cmdline_nshort, subcommands};

	if (ng_args_flag(a, "man"))
		ng_docgen_man(stdout, &d);
	else
		ng_docgen_completion(stdout, &d, ng_args_str(a, "completion"));
	return fflush(stdout) == 0 ? 0 : 1;
}

/* --timer-info: the timer's resolution and overhead. */
static int print_timer(const struct ng_args *a)
{
	struct ng_timer t;

	if (ng_timer_init(&t, ng_args_str(a, "timer"), NULL))
		return 1;
	ng_timer_print(&t);
	return 0;
}

/* The switches that print something and run nothing (--help, --version,
 * --man, --completion, --list, --timer-info): true with the exit status in
 * *code_p when one was given. */
static bool print_only(const struct ng_args *a, int *code_p)
{
	*code_p = 0;
	if (ng_args_flag(a, "help"))
		ng_cmdline_help();
	else if (ng_args_flag(a, "version"))
		printf("ngauge %s\n", NG_VERSION);
	else if (ng_args_flag(a, "man") || ng_args_given(a, "completion"))
		*code_p = print_docs(a);
	else if (ng_args_flag(a, "list"))
		ng_cmdline_list();
	else if (ng_args_flag(a, "timer-info"))
		*code_p = print_timer(a);
	else
		return false;
	return true;
}

/*
 * The server's child: the run within the server's limits (its --timeout
 * bounds the client's), then the answer to the client.  Returns 0 when
 * the run goes on; EXIT_USAGE when refused (said in @verdict, which the
 * client hears); 1 when the answer could not be sent.
 */
static int serve_within(struct ng_driver_plan *p, struct ng_boot *preboot, const struct ng_server_limits *lim,
                        char *verdict, size_t len)
{
	double run_s = p->time_s > 0      ? p->time_s * (double)p->nsizes
	               : p->ci_target > 0 ? p->max_time_s * (double)p->nsizes
	                                  : 0.0;

	p->timeout = p->timeout < lim->timeout_s ? p->timeout : lim->timeout_s;
	if (ng_pair_check(lim, p->nsizes ? p->sizes[p->nsizes - 1] : 0, p->count, p->warmup, run_s, verdict,
	                  len)) {
		ng_error("--server: refused the client at %s: %s", preboot->peer_addr, verdict);
		return EXIT_USAGE;
	}
	ng_log_keep_first(NULL, 0);
	if (ng_boot_tcp_verdict(preboot, 0, NULL))
		return 1;
	return 0;
}

/*
 * The run of @argc/@argv (ng_pair_run_fn, pair.h): ng_driver_main()'s, and
 * that of either side of a --server/--client pair, which comes back here
 * with the connected @preboot (taken) and, in the server's child, the
 * server's limits @lim.
 */
static int main_with(int argc, char **argv, struct ng_boot *preboot, const struct ng_server_limits *lim)
{
	struct ng_args a = {0};
	struct ng_driver_plan p = {0};
	struct ng_driver_launched l;
	char verdict[512] = ""; /* the server's child: why the client is refused */
	int code = EXIT_USAGE;

	if (lim)
		ng_log_keep_first(verdict, sizeof(verdict));
	if (ng_cmdline_declare(&a)) {
		ng_error("out of memory");
		return 1;
	}
	/* Under mpiexec every rank parses the same command line: rank 0 says
	 * what is wrong with it (the bootstrap sets the prefix afterwards). */
	if (ng_launched_by_mpi() && ng_launcher_rank() > 0)
		ng_log_set_rank(NG_LOG_QUIET);
	if (ng_cmdline_parse(&a, argc, argv) || print_only(&a, &code))
		goto out;
	code = ng_driver_plan(&p, &a, preboot);
	if (code)
		goto out;
	if (!preboot && ng_args_int(&a, "repeat") > 1) {
		code = ng_driver_repeat(&p, &a, argc, argv);
		goto out;
	}
	code = lim ? serve_within(&p, preboot, lim, verdict, sizeof(verdict)) : 0;
	if (code == 1)
		goto out_boot;
	if (code)
		goto out;
	code = ng_driver_launch(&p, &a, &argc, &argv, preboot, main_with, &l);
	preboot = NULL; /* the launch took it */
	if (l.boot)
		code = ng_driver_run(&p, &a, argc, argv, &l);
out:
	/* A client refused: it hears why in the first line said here. */
	if (preboot && lim) {
		ng_log_keep_first(NULL, 0);
		(void)ng_boot_tcp_verdict(preboot, code ? code : EXIT_USAGE,
		                          verdict[0] ? verdict : "nothing to run");
	}
out_boot:
	if (preboot)
		preboot->ops->fini(preboot);
	ng_driver_plan_free(&p);
	ng_args_release(&a);
	return code;
}

int ng_driver_main(int argc, char **argv)
{
	return main_with(argc, argv, NULL, NULL);
}
