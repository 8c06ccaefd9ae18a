/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver: command line, launch, capability checks, the run, results. */
#ifndef NG_DRIVER_H
#define NG_DRIVER_H

#include <signal.h>
#include <stdbool.h>

/* The whole program; returns the process exit status (0 ok, 1 failed run,
 * 2 usage error, 128 + signal when interrupted: 130 SIGINT, 143 SIGTERM,
 * 129 SIGHUP). */
int ng_main(int argc, char **argv);

/* The process's cancellation flag: the number of the signal (SIGINT,
 * SIGTERM, SIGHUP) that asked the run to stop, 0 before. */
const volatile sig_atomic_t *ng_driver_cancel_flag(void);
bool ng_driver_cancelled(void);

/* The signals that stop a run (SIGINT, SIGTERM, SIGHUP) in @set.  A process
 * that launches ranks or serves clients (the local hub, --server) passes
 * them on to its children; the run exits 128 + the signal's number. */
void ng_stop_signals(sigset_t *set);
/* "SIGINT", "SIGTERM", "SIGHUP" (else "a signal"), for messages. */
const char *ng_stop_signal_name(int sig);

#endif
