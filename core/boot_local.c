/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Local launch: the parent forks the ranks and becomes their hub.
 *
 * Each rank has one AF_UNIX stream socket to the parent.  A collective is a
 * request {u32 len} + len bytes from every rank; the parent answers each rank
 * with {u32 status, u32 len} + the concatenation.  status 0 is success;
 * status 1 + R means rank R was lost before the collective completed.  The
 * concatenation's length must fit in a u32 below UINT32_MAX (which the
 * parent sends when the ranks' lengths differ): a rank refuses a larger
 * exchange before sending it, and the parent drops a rank that announces
 * more than its share (base/peer.h) as if it were lost.
 *
 * The parent is what schedulers, `timeout` and scripts signal: it blocks
 * SIGINT, SIGTERM and SIGHUP before forking, reads them from a signalfd in
 * its poll loop, passes each on to every rank still running (the ranks stop
 * at their next interruptible point and write what they measured; the
 * driver takes a repeat within a second as the same request), and exits
 * 128 + the first one's number.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cancel.h"
#include "fdio.h"
#include "launch.h"
#include "peer.h"

struct boot_local {
	struct ng_boot base;
	int fd;
};

/* The largest concatenation a collective may carry: the reply's length is a
 * u32, and UINT32_MAX says that the ranks' lengths differ. */
#define NG_LOCAL_MAX_TOTAL (UINT32_MAX - 1u)

/* @len bytes from each of @np ranks in *@total_p; false when that is more
 * than one collective carries (or does not fit in a size_t). */
static bool local_total(size_t len, int np, size_t *total_p)
{
	return np > 0 && !__builtin_mul_overflow(len, (size_t)np, total_p) && *total_p <= NG_LOCAL_MAX_TOTAL;
}

static ng_status local_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	struct boot_local *l = (struct boot_local *)b;
	uint32_t hdr, reply[2];
	size_t total;
	int rc;

	/* The same on every rank: all refuse, before anything is sent. */
	if (!local_total(len, b->size, &total)) {
		ng_error("bootstrap: an exchange of %zu bytes from each of %d ranks exceeds the local "
		         "launcher's %u bytes",
		         len, b->size, NG_LOCAL_MAX_TOTAL);
		return NG_ERR_USAGE;
	}
	hdr = (uint32_t)len;
	if (ng_fd_write_all(l->fd, &hdr, sizeof(hdr)) || ng_fd_write_all(l->fd, mine, len))
		goto err_lost;
	rc = ng_fd_read_all(l->fd, reply, sizeof(reply));
	if (rc)
		goto err_lost;
	if (reply[0] != 0) {
		/* Interrupted: the launcher passed the signal on to every rank
		 * before any of them could leave, so it is here by now (delivered
		 * on the way back from the read), and the rank that left first
		 * stopped for it. */
		if (ng_cancel_requested())
			return NG_ERR_CANCELLED;
		if (reply[0] - 1 < (uint32_t)b->size)
			ng_error("rank %u was lost (the launcher reports it gone)", reply[0] - 1);
		else
			ng_error("bootstrap: the launcher reports a rank lost (%u, not one of the %d ranks)",
			         reply[0] - 1, b->size);
		return NG_ERR_PEER_LOST;
	}
	/* Exactly the concatenation asked for: what is read below fits @all. */
	if (reply[1] != total) {
		ng_error("bootstrap: ranks disagree on the size of an exchange (%u vs %zu bytes)", reply[1],
		         total);
		return NG_ERR_PROTO;
	}
	if (ng_fd_read_all(l->fd, all, total))
		goto err_lost;
	return NG_OK;
err_lost:
	if (ng_cancel_requested())
		return NG_ERR_CANCELLED;
	ng_error("bootstrap: connection to the launcher lost");
	return NG_ERR_PEER_LOST;
}

static ng_status local_barrier(struct ng_boot *b)
{
	char dummy = 0;
	return local_allgather(b, &dummy, 0, &dummy);
}

static void local_fini(struct ng_boot *b)
{
	struct boot_local *l = (struct boot_local *)b;
	close(l->fd);
	free(l);
}

/* No .abort: the hub ends the survivors of a failed rank after its grace
 * period (bootstrap.h). */
static const struct ng_boot_ops local_ops = {
    .name = "local",
    .barrier = local_barrier,
    .allgather = local_allgather,
    .fini = local_fini,
};

/* ---- the parent: hub and supervisor ---- */

struct child {
	pid_t pid;
	int fd;        /* -1 once closed */
	int exited;    /* waitpid collected */
	int status;    /* waitpid status */
	char *buf;     /* pending contribution */
	uint32_t want; /* bytes of contribution announced */
	uint32_t have; /* bytes received (header included: see hub_read) */
	int hdr_done;
	int ready; /* full contribution received */
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Reads what is available from child @c, rank @r of @np; returns -1 on
 * EOF/error, and after reporting a contribution longer than a rank's share
 * of NG_LOCAL_MAX_TOTAL (the caller drops the rank as lost).
 */
static int hub_read(struct child *c, int r, int np)
{
	if (!c->hdr_done) {
		ssize_t n = read(c->fd, (char *)&c->want + c->have, sizeof(c->want) - c->have);
		size_t want;

		if (n <= 0)
			return (n < 0 && errno == EINTR) ? 0 : -1;
		c->have += (uint32_t)n;
		if (c->have < sizeof(c->want))
			return 0;
		if (ng_peer_len("bootstrap exchange length", r, c->want, 0, NG_LOCAL_MAX_TOTAL / (uint32_t)np,
		                &want))
			return -1;
		c->hdr_done = 1;
		c->have = 0;
		free(c->buf);
		c->buf = malloc(want + 1);
		if (!c->buf)
			return -1;
		if (c->want == 0)
			c->ready = 1;
		return 0;
	}
	ssize_t n = read(c->fd, c->buf + c->have, c->want - c->have);
	if (n <= 0)
		return (n < 0 && errno == EINTR) ? 0 : -1;
	c->have += (uint32_t)n;
	if (c->have == c->want)
		c->ready = 1;
	return 0;
}

static void hub_reply_all(struct child *ch, int np)
{
	size_t len = ch[0].want, total = 0;
	char *all = NULL;
	uint32_t hdr[2] = {0, UINT32_MAX};

	/* Every contribution is at most NG_LOCAL_MAX_TOTAL / np (hub_read), so
	 * the check cannot fail; it keeps the arithmetic checked where it is. */
	if (local_total(len, np, &total)) {
		hdr[1] = (uint32_t)total;
		all = malloc(total + 1);
	}
	for (int r = 0; r < np; r++)
		if (ch[r].want != len)
			hdr[1] = UINT32_MAX; /* mismatch: ranks report it */
	if (!all) {
		hdr[0] = 1;
	} else {
		for (int r = 0; r < np; r++)
			if (ch[r].want == len)
				memcpy(all + (size_t)r * len, ch[r].buf, len);
	}
	for (int r = 0; r < np; r++) {
		if (ch[r].fd < 0)
			continue;
		if (ng_fd_write_all(ch[r].fd, hdr, sizeof(hdr)) ||
		    (hdr[1] != UINT32_MAX && all && ng_fd_write_all(ch[r].fd, all, total))) {
			/* The rank is gone; its EOF is seen by the poll loop. */
		}
		ch[r].ready = ch[r].hdr_done = 0;
		ch[r].have = ch[r].want = 0;
	}
	free(all);
}

/* Tells every waiting rank that @lost is gone, and closes the hub: later
 * collectives of the survivors fail at once. */
static void hub_fail(struct child *ch, int np, int lost)
{
	uint32_t hdr[2] = {(uint32_t)lost + 1, 0};
	for (int r = 0; r < np; r++) {
		if (ch[r].fd < 0)
			continue;
		if (ch[r].ready)
			(void)ng_fd_write_all(ch[r].fd, hdr, sizeof(hdr));
		close(ch[r].fd);
		ch[r].fd = -1;
	}
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status) &&
	    (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGHUP))
		return 128 + WTERMSIG(status);
	return 1;
}

/* The exit status of a rank stopped by a signal (130, 143, 129). */
static bool interrupted(int code)
{
	return code == 128 + SIGINT || code == 128 + SIGTERM || code == 128 + SIGHUP;
}

static void describe_exit(int rank, pid_t pid, int status)
{
	if (WIFSIGNALED(status) && !interrupted(128 + WTERMSIG(status)))
		ng_error("rank %d (pid %d) was killed by signal %d (%s)", rank, (int)pid, WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
}

/* Passes the stop signals waiting on @sfd on to every rank still running;
 * returns the number of the first signal ever received (@got once set). */
static int hub_relay(int sfd, const struct child *ch, int np, int got)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		for (int r = 0; r < np; r++)
			if (!ch[r].exited)
				kill(ch[r].pid, (int)si.ssi_signo);
		if (!got)
			got = (int)si.ssi_signo;
	}
	return got;
}

static _Noreturn void hub_run(struct child *ch, int np, double grace_s, const sigset_t *stop)
{
	struct pollfd *pfd = calloc((size_t)np + 1, sizeof(*pfd));
	int alive = np, code = 0, failed = 0, hub_open = 1, got = 0;
	int sfd = signalfd(-1, stop, SFD_NONBLOCK | SFD_CLOEXEC);
	double fail_at = 0, term_at = 0, got_at = 0;

	if (!pfd)
		abort();
	if (sfd < 0)
		ng_error("launcher: signalfd: %s (signals to this process are not passed on)",
		         strerror(errno));

	while (alive > 0) {
		int n = 0;
		for (int r = 0; r < np; r++) {
			pfd[r].fd = ch[r].fd;
			pfd[r].events = POLLIN;
			pfd[r].revents = 0;
			n += ch[r].fd >= 0;
		}
		pfd[np] = (struct pollfd){.fd = sfd, .events = POLLIN};
		int pr = poll(pfd, (nfds_t)np + 1, 100);
		if (pr > 0 && (pfd[np].revents & POLLIN)) {
			int first = !got;
			got = hub_relay(sfd, ch, np, got);
			if (first && got)
				got_at = mono_s();
		}
		/* Ranks that do not stop after a signal (they end themselves 3 s
		 * after it) are killed. */
		if (got && mono_s() - got_at > 5.0)
			for (int r = 0; r < np; r++)
				if (!ch[r].exited)
					kill(ch[r].pid, SIGKILL);
		if (pr > 0) {
			for (int r = 0; r < np; r++) {
				if (ch[r].fd < 0 || !(pfd[r].revents & (POLLIN | POLLHUP | POLLERR)))
					continue;
				if (hub_read(&ch[r], r, np) < 0) {
					close(ch[r].fd);
					ch[r].fd = -1;
					if (hub_open && !ch[r].exited) {
						/* Closed before exiting: it is dying. */
					}
				}
			}
		}
		/* A collective completes when every rank contributed. */
		if (hub_open) {
			int ready = 0, closed = -1;
			for (int r = 0; r < np; r++) {
				ready += ch[r].ready;
				if (ch[r].fd < 0 && closed < 0)
					closed = r;
			}
			if (ready == np)
				hub_reply_all(ch, np);
			else if (closed >= 0 && ready > 0) {
				hub_fail(ch, np, closed);
				hub_open = 0;
			}
		}
		/* Reap. */
		for (;;) {
			int status;
			pid_t pid = waitpid(-1, &status, WNOHANG);
			if (pid <= 0)
				break;
			for (int r = 0; r < np; r++) {
				if (ch[r].pid != pid)
					continue;
				ch[r].exited = 1;
				ch[r].status = status;
				alive--;
				int c = exit_code_of(status);
				if (c != 0) {
					describe_exit(r, pid, status);
					/* A real failure outweighs an interruption. */
					if (!failed || (interrupted(code) && !interrupted(c)))
						code = c;
					if (!failed)
						fail_at = mono_s();
					failed = 1;
					if (hub_open) {
						hub_fail(ch, np, r);
						hub_open = 0;
					}
				}
			}
		}
		if (failed && alive > 0) {
			double now = mono_s();
			if (!term_at && now - fail_at > grace_s) {
				for (int r = 0; r < np; r++)
					if (!ch[r].exited)
						kill(ch[r].pid, SIGTERM);
				term_at = now;
			} else if (term_at && now - term_at > 2.0) {
				for (int r = 0; r < np; r++)
					if (!ch[r].exited)
						kill(ch[r].pid, SIGKILL);
			}
		}
		(void)n;
	}
	free(pfd);
	exit(got ? 128 + got : code);
}

ng_status ng_boot_local(int np, double grace_s, struct ng_boot **b_p)
{
	struct child *ch = calloc((size_t)np, sizeof(*ch));
	int(*sv)[2] = calloc((size_t)np, sizeof(*sv));
	char host[256] = "localhost";

	if (!ch || !sv) {
		ng_error("out of memory launching %d ranks", np);
		return NG_ERR_NOMEM;
	}
	gethostname(host, sizeof(host) - 1);
	fflush(stdout);
	fflush(stderr);
	for (int r = 0; r < np; r++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[r])) {
			ng_error("socketpair: %s", strerror(errno));
			return NG_ERR_SYS;
		}
	}
	pid_t parent = getpid();
	/* Stop signals wait for the hub's signalfd from here on; the ranks get
	 * the mask back (and the driver's handlers, installed before). */
	sigset_t stop, old;
	ng_stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, &old);
	for (int r = 0; r < np; r++) {
		pid_t pid = fork();
		if (pid < 0) {
			ng_error("fork: %s", strerror(errno));
			for (int k = 0; k < r; k++)
				kill(ch[k].pid, SIGKILL);
			sigprocmask(SIG_SETMASK, &old, NULL);
			return NG_ERR_SYS;
		}
		if (pid == 0) {
			struct boot_local *l = calloc(1, sizeof(*l));
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			sigprocmask(SIG_SETMASK, &old, NULL);
			if (getppid() != parent)
				_exit(1);
			for (int k = 0; k < np; k++) {
				close(sv[k][0]);
				if (k != r)
					close(sv[k][1]);
			}
			if (!l)
				_exit(1);
			l->base.ops = &local_ops;
			l->base.rank = r;
			l->base.size = np;
			snprintf(l->base.host, sizeof(l->base.host), "%s", host);
			snprintf(l->base.addr, sizeof(l->base.addr), "127.0.0.1");
			l->fd = sv[r][1];
			free(ch);
			free(sv);
			*b_p = &l->base;
			return NG_OK;
		}
		ch[r].pid = pid;
		ch[r].fd = sv[r][0];
		close(sv[r][1]);
	}
	free(sv);
	hub_run(ch, np, grace_s, &stop);
}
