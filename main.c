/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The program's entry: dispatches the subcommands.
 *
 *   ngauge plot FILE...     figures from result files   (plots/)
 *   ngauge report FILE...   an HTML report              (plots/)
 *   ngauge compare A B...   B against A, row by row     (plots/compare_cmd.c)
 *   ngauge ab -- A -- B     A and B run alternately, compared (plots/ab.c)
 *   ngauge [options]        a run: any other command line (core/driver.c)
 *
 * A subcommand is the first argument, and gets the command line from its own
 * name on (argv[0] is "plot", "report"); its return value is the exit
 * status.  A new subcommand is one line in the table below.  The run has no
 * word of its own: a command line that names no subcommand is a run's.
 */
#include <string.h>

#include "cancel.h"
#include "driver.h"
#include "plots/plot.h"
#include "status.h"

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} subcommands[] = {
    {"plot", ng_plot_main},
    {"report", ng_report_main},
    {"compare", ng_compare_main},
    {"ab", ng_ab_main},
};

/* 128 + the stop signal that arrived, said in one line; 0 when none did. */
static int interrupted(void)
{
	if (!ng_cancel_requested())
		return 0;
	ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
	return 128 + ng_cancel_signal();
}

int main(int argc, char **argv)
{
	int code;

	ng_cancel_install();
	if (argc > 1)
		for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
			if (strcmp(argv[1], subcommands[i].name) == 0) {
				ng_cancel_uninstall();
				code = interrupted();
				return code ? code : subcommands[i].main(argc - 1, argv + 1);
			}
	code = ng_driver_main(argc, argv);
	/* A run says so itself; a command that ends well after a signal (--list,
	 * --version) reports it. */
	if (code == 0 && ng_cancel_requested())
		code = interrupted();
	return code;
}
