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
 *
 * Peers are not trusted (doc/security.md).  The parent reads handshakes
 * without blocking, up to NG_SERVER_PENDING at once, each dropped when it
 * has not completed within --timeout of its accept: a silent, trickling or
 * keyless peer holds nobody up, and a real client is served behind any
 * number of them.  A connection from outside --allow is closed before a
 * byte is read.  Each drop is one line naming the peer's address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allow.h"
#include "cancel.h"
#include "launch.h"

/* A child that ends within this long after a client arrived was finishing. */
#define NG_SERVER_GRACE_S 1.0
/* A child still running this long after a stop signal is killed. */
#define NG_SERVER_STOP_S 5.0
/* Handshakes read at once; a new connection beyond them drops the oldest. */
#define NG_SERVER_PENDING 64

struct ng_server {
	pid_t child;  /* serving a client; 0: idle */
	int served;   /* clients welcomed so far */
	int code;     /* exit status of the last child */
	int stop_sig; /* the first stop signal; 0: none */
	double stop_at;
	double started;  /* when the child began serving */
	double ended_at; /* when it was told to end (--server-max-time); 0: not */
	struct ng_boot_tcp_hs *hs[NG_SERVER_PENDING];
	double hs_end[NG_SERVER_PENDING]; /* each handshake's deadline */
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

/* Serves the client of handshake @h in a child; the parent keeps nothing of it. */
static void ng_server_fork(struct ng_server *s, struct ng_boot_tcp_hs *h, int lfd, int sfd,
                           const sigset_t *old, const struct ng_server_conf *c)
{
	struct ng_boot *b;
	const char *args;
	size_t len;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ng_error("--server: fork: %s", strerror(errno));
		ng_boot_tcp_hs_free(h);
		return;
	}
	if (pid == 0) {
		close(lfd);
		close(sfd);
		for (size_t i = 0; i < NG_SERVER_PENDING; i++)
			if (s->hs[i] && s->hs[i] != h)
				close(ng_boot_tcp_hs_fd(s->hs[i]));
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		sigprocmask(SIG_SETMASK, old, NULL);
		if (ng_boot_tcp_hs_welcome(h, c->timeout_s, c->allow, &b, &args, &len))
			_exit(1);
		exit(c->serve(b, args, len, c->arg));
	}
	ng_boot_tcp_hs_free(h);
	s->child = pid;
	s->served++;
	s->started = ng_server_now();
	s->ended_at = 0;
	fprintf(stderr, "ngauge: serving client %d\n", s->served);
}

/* Takes a new connection into the handshake table (or closes it); false
 * when none was waiting. */
static bool ng_server_take(struct ng_server *s, int lfd, const struct ng_server_conf *c)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char peer[64] = "?";
	size_t slot = 0;
	int fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return false;
	if (sa.sin_family == AF_INET)
		inet_ntop(AF_INET, &sa.sin_addr, peer, sizeof(peer));
	if (c->allow && !ng_allow_match(c->allow, peer)) {
		ng_warn("--server: closed a connection from %s, which --allow does not admit", peer);
		close(fd);
		return true;
	}
	for (size_t i = 0; i < NG_SERVER_PENDING; i++) {
		if (!s->hs[i]) {
			slot = i;
			break;
		}
		if (s->hs_end[i] < s->hs_end[slot])
			slot = i;
	}
	if (s->hs[slot]) {
		ng_warn("--server: dropped the connection from %s: %d handshakes pending, it is the oldest",
		        ng_boot_tcp_hs_peer(s->hs[slot]), NG_SERVER_PENDING);
		ng_boot_tcp_hs_free(s->hs[slot]);
	}
	s->hs[slot] = ng_boot_tcp_hs_new(fd, peer, c->auth);
	s->hs_end[slot] = ng_server_now() + c->timeout_s;
	if (!s->hs[slot])
		close(fd);
	return true;
}

/* A complete handshake: the client is served, or told the server is busy. */
static void ng_server_done(struct ng_server *s, size_t i, int lfd, int sfd, const sigset_t *old,
                           const struct ng_server_conf *c)
{
	struct ng_boot_tcp_hs *h = s->hs[i];

	s->hs[i] = NULL;
	if ((s->child && !ng_server_wait_child(s, NG_SERVER_GRACE_S)) || (c->once && s->served)) {
		ng_boot_tcp_hs_busy(h);
		fprintf(stderr, "ngauge: told a client at %s that the server is busy with client %d\n",
		        ng_boot_tcp_hs_peer(h), s->served);
		ng_boot_tcp_hs_free(h);
		return;
	}
	ng_server_fork(s, h, lfd, sfd, old, c);
}

/* Reads every readable handshake and drops those past their deadline. */
static void ng_server_handshakes(struct ng_server *s, const struct pollfd *pf, int lfd, int sfd,
                                 const sigset_t *old, const struct ng_server_conf *c)
{
	double now = ng_server_now();

	for (size_t i = 0; i < NG_SERVER_PENDING; i++) {
		char why[600];
		int rc = 0;

		if (!s->hs[i])
			continue;
		if (pf[i].revents)
			rc = ng_boot_tcp_hs_step(s->hs[i], why, sizeof(why));
		if (rc == 0 && now > s->hs_end[i]) {
			snprintf(why, sizeof(why), "no complete handshake within %.0f s (--timeout)",
			         c->timeout_s);
			rc = -1;
		}
		if (rc < 0) {
			/* a port scanner's probe is no news */
			if (strcmp(why, "closed the connection during the handshake") != 0)
				ng_warn("--server: dropped the connection from %s: %s",
				        ng_boot_tcp_hs_peer(s->hs[i]), why);
			ng_boot_tcp_hs_free(s->hs[i]);
			s->hs[i] = NULL;
		} else if (rc > 0) {
			ng_server_done(s, i, lfd, sfd, old, c);
		}
	}
}

/* A run past --server-max-time is told to stop, then killed. */
static void ng_server_limit(struct ng_server *s, const struct ng_server_conf *c)
{
	double now = ng_server_now();

	if (!s->child || s->stop_sig || !(c->max_time_s > 0))
		return;
	if (!s->ended_at && now - s->started > c->max_time_s) {
		ng_warn("--server: client %d ran past --server-max-time (%.0f s): stopped", s->served,
		        c->max_time_s);
		kill(s->child, SIGTERM);
		s->ended_at = now;
	} else if (s->ended_at && now - s->ended_at > NG_SERVER_STOP_S) {
		kill(s->child, SIGKILL);
	}
}

int ng_server_run(const struct ng_server_conf *c)
{
	struct ng_server s = {0};
	sigset_t watch, old;
	int lfd, sfd;
	ng_status st;

	st = ng_boot_tcp_listen(c->bind, c->port, &lfd);
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
	fprintf(stderr, "ngauge: server listening on port %d (%s%s)\n", c->port,
	        c->once ? "one client" : "clients one after another; SIGTERM or Ctrl-C stops it",
	        c->auth ? "; clients prove the --auth key" : "");

	for (;;) {
		struct pollfd pf[2 + NG_SERVER_PENDING];
		int n, wait_ms = -1;
		double now = ng_server_now();

		pf[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
		pf[1] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (size_t i = 0; i < NG_SERVER_PENDING; i++) {
			pf[2 + i] = (struct pollfd){.fd = s.hs[i] ? ng_boot_tcp_hs_fd(s.hs[i]) : -1,
			                            .events = POLLIN};
			if (s.hs[i]) {
				int ms = (int)((s.hs_end[i] - now) * 1000) + 1;
				wait_ms = wait_ms < 0 || ms < wait_ms ? (ms > 0 ? ms : 0) : wait_ms;
			}
		}
		if (s.child && c->max_time_s > 0)
			wait_ms = wait_ms < 0 || wait_ms > 1000 ? 1000 : wait_ms;
		if (s.stop_sig)
			wait_ms = 200;
		/* While stopping, only the signals: no new client. */
		n = poll(pf, s.stop_sig ? 1 : 2 + NG_SERVER_PENDING, wait_ms);
		if (n < 0 && errno != EINTR) {
			ng_error("--server: poll: %s", strerror(errno));
			s.code = 1;
			break;
		}
		if (n > 0 && (pf[0].revents & POLLIN))
			ng_server_signals(&s, sfd);
		if (ng_server_reap(&s) && (c->once ? s.served > 0 : false))
			break;
		if (s.stop_sig) {
			if (!s.child)
				break;
			if (ng_server_now() - s.stop_at > NG_SERVER_STOP_S)
				kill(s.child, SIGKILL);
			continue;
		}
		ng_server_limit(&s, c);
		if (n < 0)
			continue;
		ng_server_handshakes(&s, pf + 2, lfd, sfd, &old, c);
		if (n > 0 && (pf[1].revents & POLLIN))
			for (int k = 0; k < NG_SERVER_PENDING && ng_server_take(&s, lfd, c); k++)
				;
	}
	for (size_t i = 0; i < NG_SERVER_PENDING; i++)
		ng_boot_tcp_hs_free(s.hs[i]);
	close(lfd);
	close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!s.stop_sig)
		return s.code;
	fprintf(stderr, "ngauge: server stopped by %s after %d client%s\n", ng_stop_signal_name(s.stop_sig),
	        s.served, s.served == 1 ? "" : "s");
	return 128 + s.stop_sig;
}
