/* SPDX-License-Identifier: BSD-3-Clause */
#include "cancel.h"
#include "status.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include <time.h>
#include <unistd.h>

/* Process state of the driver (cancel.h): written by the handler only. */
static volatile sig_atomic_t cancel_flag;
static struct timespec cancel_time; /* written with the stop signals blocked (sa_mask) */

const volatile sig_atomic_t *ng_cancel_flag(void)
{
	return &cancel_flag;
}

bool ng_cancel_requested(void)
{
	return cancel_flag != 0;
}

int ng_cancel_signal(void)
{
	return cancel_flag;
}

void ng_stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

const char *ng_stop_signal_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	default:
		return "a signal";
	}
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(128 + (cancel_flag ? cancel_flag : SIGINT));
}

/* The first stop signal sets the flag and the alarm; a repeat within a
 * second is the same request; a later one ends the process. */
static void on_signal(int sig)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (cancel_flag) {
		double since = (double)(now.tv_sec - cancel_time.tv_sec) +
		               (double)(now.tv_nsec - cancel_time.tv_nsec) * 1e-9;
		if (since >= 1.0)
			_exit(128 + cancel_flag);
		return;
	}
	cancel_time = now;
	cancel_flag = sig;
	alarm(3);
}

void ng_cancel_install(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	ng_stop_signals(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: blocking calls return EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void ng_cancel_uninstall(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
}

int ng_cancel_wait_child(pid_t pid, const char *who)
{
	const struct timespec tick = {0, 20 * 1000 * 1000};
	bool passed = false;
	int status = 0;

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			ng_error("%s: waitpid: %s", who, strerror(errno));
			return 1;
		}
		if (ng_cancel_requested() && !passed) {
			(void)kill(pid, ng_cancel_signal());
			passed = true;
		}
		nanosleep(&tick, NULL);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}
