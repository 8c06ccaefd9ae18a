/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The program's entry: dispatches the subcommands.
 *
 *   ngauge plot FILE...     figures from result files   (plots/)
 *   ngauge report FILE...   an HTML report              (plots/)
 *   ngauge compare A B...   B against A, row by row     (plots/compare.c)
 *   ngauge [options]        a run: any other command line (core/driver.c)
 *
 * A subcommand is the first argument, and gets the command line from its own
 * name on (argv[0] is "plot", "report"); its return value is the exit
 * status.  A new subcommand is one line in the table below.  The run has no
 * word of its own: a command line that names no subcommand is a run's.
 */
#include <string.h>

#include "driver.h"
#include "plots/plot.h"

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} subcommands[] = {
    {"plot", ng_plot_main},
    {"report", ng_report_main},
    {"compare", ng_compare_main},
};

int main(int argc, char **argv)
{
	if (argc > 1)
		for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
			if (strcmp(argv[1], subcommands[i].name) == 0)
				return subcommands[i].main(argc - 1, argv + 1);
	return ng_driver_main(argc, argv);
}
