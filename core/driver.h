/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver: command line, launch, capability checks, the run, results. */
#ifndef NG_DRIVER_H
#define NG_DRIVER_H

/* The driver's option table and its lookup (ng_driver_options,
 * ng_driver_find_option) are the command line's: cmdline.h. */
#include "cmdline.h"
#include "options.h"

/* The run (every command line that is no other subcommand: main.c); returns
 * the process exit status (0 ok, 1 failed run, 2 usage error, 128 + signal
 * when interrupted: 130 SIGINT, 143 SIGTERM, 129 SIGHUP). */
int ng_driver_main(int argc, char **argv);

#endif
