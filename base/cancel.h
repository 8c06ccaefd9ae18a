/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cancel flag and the stop signals: how a run learns that it should stop.
 *
 * SIGINT, SIGTERM and SIGHUP stop a run.  Once ng_cancel_install() has put
 * the handlers in place, the first stop signal sets the process's cancel
 * flag to its number; the ranks stop at their next interruptible point (a
 * module's poll loop, a pattern between sizes, a blocking call that returns
 * EINTR) and write what they measured; the run exits 128 + the signal's
 * number.  One request may arrive by several paths (the local hub and
 * --server pass it on, `timeout` and a terminal signal the whole process
 * group): a repeat within a second is the same request.  A later one ends
 * the process at once (_exit(128 + the first signal)), and so does an alarm
 * 3 s after the first, for a rank busy inside a library call that never looks
 * at the flag.
 *
 * This is process state of the program's driver, not of a module or a
 * pattern: they get the flag's address in their context (module env, run)
 * and only read it.  Everything here is async-signal-safe to read.
 */
#ifndef NG_CANCEL_H
#define NG_CANCEL_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* Installs the handlers of the stop signals and SIGALRM (without SA_RESTART:
 * blocking calls return EINTR) and ignores SIGPIPE.  Called by the driver
 * before it launches ranks; calling it again is harmless. */
void ng_cancel_install(void);

/* Puts the default dispositions of the stop signals, SIGALRM and SIGPIPE
 * back (a command that is no run: plot, report), after main() installed the
 * handlers first thing.  A stop signal that arrived before is in the flag. */
void ng_cancel_uninstall(void);

/* The cancel flag: 0 until a stop signal arrived, then that signal's number.
 * Never NULL; valid for the life of the process (contexts keep it). */
const volatile sig_atomic_t *ng_cancel_flag(void);

/* True once a stop signal arrived. */
bool ng_cancel_requested(void);

/* The number of the stop signal that arrived, 0 before. */
int ng_cancel_signal(void);

/* Waits for the child @pid to end, passing on to it the first stop signal
 * this process gets (a child in its own session does not get the
 * terminal's); polls every 20 ms.  Returns its exit status (128 + the
 * signal that ended it), or 1 when waiting fails (said once, with @who in
 * front: "--repeat", "ab"). */
int ng_cancel_wait_child(pid_t pid, const char *who);

/* The signals that stop a run (SIGINT, SIGTERM, SIGHUP) in @set.  A process
 * that launches ranks or serves clients (the local hub, --server) blocks and
 * watches them, and passes them on to its children. */
void ng_stop_signals(sigset_t *set);

/* "SIGINT", "SIGTERM", "SIGHUP" (else "a signal"), for messages; never NULL. */
const char *ng_stop_signal_name(int sig);

#endif
