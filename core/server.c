/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --server: serves clients one after another, like iperf3 -s.
 *
 * The server process only listens and supervises: each client it welcomes
 * is served by a child process of its own (fork), so that whatever a run
 * leaves behind (a module's state, a crash) ends with that child.  While a
 * child serves, a new client is told the server is busy (one line on its
 * side, exit 1) rather than left waiting; a child that is just finishing
 * gets a moment to end first, so that clients started one after another
 * are served.
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are blocked and read from a signalfd
 * (with SIGCHLD, which says a child ended), so nothing here runs in a
 * signal handler.  A stop signal is passed on to the child being served,
 * which stops at its next interruptible point like any rank; the server
 * waits for it (killing it 5 s later if it has not ended) and returns
 * 128 + the signal's number.  The child gets the server's original signal
 * mask back and installs the stop-signal handlers (cancel.h) itself.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cancel.h"
#include "launch.h"

/* A child that ends within this long after a client arrived was finishing. */
#define NG_SERVER_GRACE_S 1.0
/* A child still running this long after a stop signal is killed. */
#define NG_SERVER_STOP_S 5.0

struct ng_server {
	pid_t child;  /* serving a client; 0: idle */
	int served;   /* clients welcomed so far */
	int code;     /* exit status of the last child */
	int stop_sig; /* the first stop signal; 0: none */
	double stop_at;
};

static double ng_server_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Collects the child once it has ended; true when none is left. */
static bool ng_server_reap(struct ng_server *s)
{
	int status;

	if (!s->child || waitpid(s->child, &status, WNOHANG) != s->child)
		return s->child == 0;
	s->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(stderr, "ngauge: client %d done (exit %d)\n", s->served, s->code);
	s->child = 0;
	return true;
}

/* Waits up to @secs for the child to end; true when it did. */
static bool ng_server_wait_child(struct ng_server *s, double secs)
{
	double end = ng_server_now() + secs;

	while (!ng_server_reap(s)) {
		struct timespec d = {0, 10000000};
		if (ng_server_now() > end)
			return false;
		nanosleep(&d, NULL);
	}
	return true;
}

/* Reads the signalfd: stop signals are remembered and passed on. */
static void ng_server_signals(struct ng_server *s, int sfd)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (!s->stop_sig) {
			s->stop_sig = (int)si.ssi_signo;
			s->stop_at = ng_server_now();
		}
		if (s->child)
			kill(s->child, (int)si.ssi_signo);
	}
}

/* Serves the client on @fd in a child; the parent keeps nothing of it. */
static void ng_server_fork(struct ng_server *s, int fd, int lfd, int sfd, const sigset_t *old,
                           int (*serve)(struct ng_boot *b, void *arg), void *arg)
{
	struct ng_boot *b;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ng_error("--server: fork: %s", strerror(errno));
		close(fd);
		return;
	}
	if (pid == 0) {
		close(lfd);
		close(sfd);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		sigprocmask(SIG_SETMASK, old, NULL);
		if (ng_boot_tcp_welcome(fd, &b))
			_exit(1);
		exit(serve(b, arg));
	}
	close(fd);
	s->child = pid;
	s->served++;
	fprintf(stderr, "ngauge: serving client %d\n", s->served);
}

int ng_server_run(const char *bind, int port, bool once, int (*serve)(struct ng_boot *b, void *arg),
                  void *arg)
{
	struct ng_server s = {0};
	sigset_t watch, old;
	int lfd, sfd;
	ng_status st;

	st = ng_boot_tcp_listen(bind, port, &lfd);
	if (st)
		return st == NG_ERR_USAGE ? 2 : 1;
	ng_stop_signals(&watch);
	sigaddset(&watch, SIGCHLD);
	sigprocmask(SIG_BLOCK, &watch, &old);
	sfd = signalfd(-1, &watch, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		ng_error("--server: signalfd: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(lfd);
		return 1;
	}
	fprintf(stderr, "ngauge: server listening on port %d (%s)\n", port,
	        once ? "one client" : "clients one after another; SIGTERM or Ctrl-C stops it");

	for (;;) {
		struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN}, {.fd = lfd, .events = POLLIN}};
		int n = poll(pf, s.stop_sig ? 1 : 2, s.stop_sig ? 200 : -1);

		if (n < 0 && errno != EINTR) {
			ng_error("--server: poll: %s", strerror(errno));
			s.code = 1;
			break;
		}
		if (n > 0 && (pf[0].revents & POLLIN))
			ng_server_signals(&s, sfd);
		if (ng_server_reap(&s) && (once ? s.served > 0 : false))
			break;
		if (s.stop_sig) {
			if (!s.child)
				break;
			if (ng_server_now() - s.stop_at > NG_SERVER_STOP_S)
				kill(s.child, SIGKILL);
			continue;
		}
		if (n <= 0 || !(pf[1].revents & POLLIN))
			continue;
		int fd = ng_boot_tcp_accept(lfd);
		if (fd < 0)
			continue;
		if ((s.child && !ng_server_wait_child(&s, NG_SERVER_GRACE_S)) || (once && s.served)) {
			ng_boot_tcp_busy(fd);
			fprintf(stderr, "ngauge: told a client that the server is busy with client %d\n",
			        s.served);
			continue;
		}
		ng_server_fork(&s, fd, lfd, sfd, &old, serve, arg);
	}
	close(lfd);
	close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!s.stop_sig)
		return s.code;
	fprintf(stderr, "ngauge: server stopped by %s after %d client%s\n", ng_stop_signal_name(s.stop_sig),
	        s.served, s.served == 1 ? "" : "s");
	return 128 + s.stop_sig;
}
