/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Local launch: the parent forks the ranks and becomes their hub.
 *
 * Each rank has one AF_UNIX stream socket to the parent: the parent listens
 * on an abstract address of its own before forking, each rank connects once
 * it runs, and the parent takes a connection as a rank's when its peer
 * (SO_PEERCRED) is that rank's process.  So a rank inherits nothing of the
 * others' (with socketpairs made before the forks, a rank the scheduler
 * ran late held the parent's ends of every rank forked before it), and the
 * parent holds one descriptor per rank (the soft limit raised to the hard
 * one where it is lower: local_fd_limit), a rank one.  A collective is a
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
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
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

/* A rank forked but not connected yet (struct child.fd). */
#define NG_LOCAL_PENDING (-2)

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
	int ready;  /* full contribution received */
	int killed; /* sent SIGKILL (stopped after a failure) */
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

/*
 * Writes @hdr and then @len bytes of @all to every rank still connected, to
 * all at once: non-blocking writes to whichever rank's socket has room
 * (poll), so that a rank the scheduler has not run yet does not hold up
 * the others (writing to one rank after the other waited for each to
 * read: at 2,048 ranks on 2 cores most of the start-up).  A rank whose
 * socket fails is left to the poll loop (its end of stream).
 */
static void hub_write_all(struct child *ch, int np, const uint32_t hdr[2], const char *all, size_t len)
{
	size_t whole = 2 * sizeof(uint32_t) + len, left = 0;
	size_t *done = calloc((size_t)np, sizeof(*done));
	struct pollfd *pfd = calloc((size_t)np, sizeof(*pfd));
	int *who = calloc((size_t)np, sizeof(*who));

	if (!done || !pfd || !who) {
		/* Out of memory: one rank after the other, blocking. */
		for (int r = 0; r < np; r++)
			if (ch[r].fd >= 0 && !ng_fd_write_all(ch[r].fd, hdr, 2 * sizeof(uint32_t)) && len)
				(void)ng_fd_write_all(ch[r].fd, all, len);
		goto out_free;
	}
	for (int r = 0; r < np; r++)
		if (ch[r].fd >= 0)
			left++;
		else
			done[r] = whole;
	while (left) {
		nfds_t n = 0;

		for (int r = 0; r < np; r++)
			if (done[r] < whole) {
				pfd[n] = (struct pollfd){.fd = ch[r].fd, .events = POLLOUT};
				who[n++] = r;
			}
		if (poll(pfd, n, 1000) < 0 && errno != EINTR)
			break;
		for (nfds_t i = 0; i < n; i++) {
			int r = who[i];

			if (!pfd[i].revents)
				continue;
			while (done[r] < whole) {
				const char *from = done[r] < 2 * sizeof(uint32_t)
				                       ? (const char *)hdr + done[r]
				                       : all + (done[r] - 2 * sizeof(uint32_t));
				size_t want = done[r] < 2 * sizeof(uint32_t) ? 2 * sizeof(uint32_t) - done[r]
				                                             : whole - done[r];
				ssize_t k = send(ch[r].fd, from, want, MSG_DONTWAIT | MSG_NOSIGNAL);

				if (k > 0) {
					done[r] += (size_t)k;
					continue;
				}
				if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
					break;
				done[r] = whole; /* gone: its end of stream is seen by the poll loop */
			}
			if (done[r] == whole)
				left--;
		}
	}
out_free:
	free(who);
	free(pfd);
	free(done);
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
	hub_write_all(ch, np, hdr, all, hdr[1] != UINT32_MAX && all ? total : 0);
	for (int r = 0; r < np; r++) {
		ch[r].ready = ch[r].hdr_done = 0;
		ch[r].have = ch[r].want = 0;
	}
	free(all);
}

/*
 * Accepts the ranks' connections waiting on @lfd: a connection whose peer
 * (SO_PEERCRED) is a rank not yet connected becomes that rank's; any other
 * is closed, and so is every one once the hub has closed (@open 0).
 * Returns the number of ranks connected.
 */
static int hub_accept(struct child *ch, int np, int lfd, int open)
{
	int got = 0, fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		int r = np;

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
			for (r = 0; r < np && !(ch[r].pid == cr.pid && ch[r].fd == NG_LOCAL_PENDING); r++)
				;
		if (r == np || !open) {
			close(fd);
			if (r < np) { /* the hub closed before this rank connected */
				ch[r].fd = -1;
				got++;
			}
			continue;
		}
		/* Blocking from here: the hub writes to it with MSG_DONTWAIT. */
		(void)fcntl(fd, F_SETFL, 0);
		ch[r].fd = fd;
		got++;
	}
	return got;
}

/* Tells every waiting rank that @lost is gone, and closes the hub: later
 * collectives of the survivors fail at once. */
static void hub_fail(struct child *ch, int np, int lost)
{
	uint32_t hdr[2] = {(uint32_t)lost + 1, 0};
	for (int r = 0; r < np; r++) {
		if (ch[r].fd < 0)
			continue; /* gone, or not connected yet (hub_accept closes it when it comes) */
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

/* Whether process @pid is stopped (state T in /proc/PID/stat). */
static bool is_stopped(pid_t pid)
{
	char path[64], buf[256];
	const char *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	return rp && rp[1] == ' ' && (rp[2] == 'T' || rp[2] == 't');
}

static _Noreturn void hub_run(struct child *ch, int np, int lfd, double grace_s, const sigset_t *stop)
{
	struct pollfd *pfd = calloc((size_t)np + 2, sizeof(*pfd));
	int alive = np, code = 0, failed = 0, hub_open = 1, got = 0, pending = np;
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
			pfd[r].fd = ch[r].fd; /* a pending rank's -2: not polled */
			pfd[r].events = POLLIN;
			pfd[r].revents = 0;
			n += ch[r].fd >= 0;
		}
		pfd[np] = (struct pollfd){.fd = sfd, .events = POLLIN};
		pfd[np + 1] = (struct pollfd){.fd = pending ? lfd : -1, .events = POLLIN};
		int pr = poll(pfd, (nfds_t)np + 2, 100);
		if (pr > 0 && (pfd[np + 1].revents & POLLIN))
			pending -= hub_accept(ch, np, lfd, hub_open);
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
				if (ch[r].fd == -1 && closed < 0)
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
			/* A survivor that is stopped (SIGSTOP, a debugger) can say
			 * and write nothing: it gets no grace. */
			for (int r = 0; r < np; r++)
				if (!ch[r].exited && !ch[r].killed && is_stopped(ch[r].pid)) {
					kill(ch[r].pid, SIGKILL);
					ch[r].killed = 1;
				}
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

/*
 * The hub holds one descriptor per rank (its end of the rank's socketpair),
 * plus a few.  A soft limit below that (1,024 on most systems) is raised to
 * the hard limit for the hub; the ranks get the soft limit back, since each
 * needs only a few descriptors of its own.  Refuses, with one line, an --np
 * beyond what the hard limit allows.
 */
#define NG_LOCAL_SPARE_FDS 64 /* the hub's own beyond one per rank: stdio, the signalfd, plugins */

static ng_status local_fd_limit(int np, struct rlimit *old_p)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)np + NG_LOCAL_SPARE_FDS;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		ng_error("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return NG_ERR_SYS;
	}
	*old_p = rl;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
			ng_error("--np %d: the local launcher needs %llu descriptors (one per rank and %d), "
			         "the hard "
			         "limit is %llu (ulimit -Hn)",
			         np, (unsigned long long)need, NG_LOCAL_SPARE_FDS,
			         (unsigned long long)rl.rlim_max);
			return NG_ERR_USAGE;
		}
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl)) {
			ng_error("--np %d: raising the descriptor limit to %llu: %s", np,
			         (unsigned long long)rl.rlim_cur, strerror(errno));
			return NG_ERR_SYS;
		}
	}
	return NG_OK;
}

ng_status ng_boot_local(int np, double grace_s, struct ng_boot **b_p)
{
	struct child *ch = calloc((size_t)np, sizeof(*ch));
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char host[256] = "localhost";
	struct rlimit old_nofile;
	unsigned long long nonce = 0;
	socklen_t slen;
	ng_status st;
	int lfd;

	if (!ch) {
		ng_error("out of memory launching %d ranks", np);
		return NG_ERR_NOMEM;
	}
	st = local_fd_limit(np, &old_nofile);
	if (st) {
		free(ch);
		return st;
	}
	/* The ranks' meeting point: an abstract address (no file) that names
	 * this process and a random number. */
	if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != (ssize_t)sizeof(nonce))
		nonce = (unsigned long long)mono_s() * 1000003ull;
	slen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	                   (size_t)snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "ngauge-hub-%d-%llx",
	                                    (int)getpid(), nonce));
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun, slen) || listen(lfd, SOMAXCONN)) {
		ng_error("launcher: listening for the ranks: %s", strerror(errno));
		if (lfd >= 0)
			close(lfd);
		free(ch);
		return NG_ERR_SYS;
	}
	gethostname(host, sizeof(host) - 1);
	fflush(stdout);
	fflush(stderr);
	pid_t parent = getpid();
	/* Stop signals wait for the hub's signalfd from here on; the ranks get
	 * the mask back (and the driver's handlers, installed before). */
	sigset_t stop, old;
	ng_stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, &old);
	for (int r = 0; r < np; r++) {
		pid_t pid = fork();

		if (pid < 0) {
			ng_error("fork of rank %d: %s", r, strerror(errno));
			for (int k = 0; k < r; k++)
				kill(ch[k].pid, SIGKILL);
			for (int k = 0; k < r; k++)
				waitpid(ch[k].pid, NULL, 0);
			close(lfd);
			free(ch);
			sigprocmask(SIG_SETMASK, &old, NULL);
			return NG_ERR_SYS;
		}
		if (pid == 0) {
			struct boot_local *l = calloc(1, sizeof(*l));
			int fd;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			sigprocmask(SIG_SETMASK, &old, NULL);
			if (getppid() != parent)
				_exit(1);
			close(lfd);
			(void)setrlimit(RLIMIT_NOFILE, &old_nofile);
			fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (!l || fd < 0)
				_exit(1);
			while (connect(fd, (struct sockaddr *)&sun, slen))
				if (errno != EINTR && errno != EAGAIN)
					_exit(1);
			l->base.ops = &local_ops;
			l->base.rank = r;
			l->base.size = np;
			snprintf(l->base.host, sizeof(l->base.host), "%s", host);
			snprintf(l->base.addr, sizeof(l->base.addr), "127.0.0.1");
			l->fd = fd;
			free(ch);
			*b_p = &l->base;
			return NG_OK;
		}
		ch[r].pid = pid;
		ch[r].fd = NG_LOCAL_PENDING;
	}
	hub_run(ch, np, lfd, grace_s, &stop);
}
