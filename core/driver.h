/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver: command line, launch, capability checks, the run, results. */
#ifndef NG_DRIVER_H
#define NG_DRIVER_H

#include <signal.h>
#include <stdbool.h>

/* The whole program; returns the process exit status
 * (0 ok, 1 failed run, 2 usage error, 130 interrupted). */
int ng_main(int argc, char **argv);

/* The process's cancellation flag, set by SIGINT/SIGTERM. */
const volatile sig_atomic_t *ng_driver_cancel_flag(void);
bool ng_driver_cancelled(void);

#endif
