/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tcp module's connections (tcp.h): the hello, connecting, accepting and
 * identifying, and the rules of first use (--connect lazy): who connects,
 * who answers, and how a simultaneous connect is resolved by rank order.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "module.h"
#include "modules/tcp/tcp.h"
#include "status.h"

#define NG_TCP_KEEPIDLE_S 10 /* keep-alive: first probe after 10 s idle, */
#define NG_TCP_KEEPINTV_S 5  /* then every 5 s, */
#define NG_TCP_KEEPCNT    3  /* lost after 3 unanswered probes */

/* ---- the hello ------------------------------------------------------- */

int ng_tcp_ms_left(int64_t deadline_ms)
{
	int64_t left = deadline_ms - ng_tcp_now_ms();

	if (left < 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

int64_t ng_tcp_deadline(const struct ng_tcp *t)
{
	double s = t->timeout_s > 0 ? t->timeout_s : NG_TCP_SETUP_S;

	return ng_tcp_now_ms() + (int64_t)(s * 1e3);
}

static void ng_tcp_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static uint32_t ng_tcp_get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void ng_tcp_hello_pack(unsigned char *h, int rank, unsigned flags, uint64_t token)
{
	memcpy(h, NG_TCP_MAGIC, 8);
	ng_tcp_put32(h + 8, NG_TCP_VERSION | (uint32_t)flags << 16);
	ng_tcp_put32(h + 12, (uint32_t)rank);
	ng_tcp_put32(h + 16, (uint32_t)(token >> 32));
	ng_tcp_put32(h + 20, (uint32_t)token);
}

const char *ng_tcp_hello_check(const unsigned char *h, uint64_t token, uint32_t *rank_p, unsigned *flags_p)
{
	uint64_t tok = (uint64_t)ng_tcp_get32(h + 16) << 32 | ng_tcp_get32(h + 20);
	uint32_t ver = ng_tcp_get32(h + 8);

	if (memcmp(h, NG_TCP_MAGIC, 8))
		return "not an ngauge tcp connection";
	if ((ver & 0xffffu) != NG_TCP_VERSION || (ver >> 16) & ~NG_TCP_F_DRAIN)
		return "other protocol version";
	if (tok != token)
		return "token of another run";
	*rank_p = ng_tcp_get32(h + 12);
	*flags_p = ver >> 16;
	return NULL;
}

void ng_tcp_sockname(const struct sockaddr_in *sin, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN];

	if (!inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(sin->sin_port));
}

/* SO_SNDBUF / SO_RCVBUF before listen()/connect(), so that window scaling
 * fits them; accepted sockets inherit them from the listener. */
ng_status ng_tcp_set_bufs(int fd, const struct ng_tcp_conf *cf)
{
	int v;

	if (cf->sndbuf) {
		v = cf->sndbuf > INT_MAX / 2 ? INT_MAX / 2 : (int)cf->sndbuf;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v))) {
			ng_error("tcp: SO_SNDBUF %d: %s", v, strerror(errno));
			return NG_ERR_SYS;
		}
	}
	if (cf->rcvbuf) {
		v = cf->rcvbuf > INT_MAX / 2 ? INT_MAX / 2 : (int)cf->rcvbuf;
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v))) {
			ng_error("tcp: SO_RCVBUF %d: %s", v, strerror(errno));
			return NG_ERR_SYS;
		}
	}
	return NG_OK;
}

ng_status ng_tcp_data_socket(struct ng_tcp *t, int fd, int peer)
{
	const int one = 1, idle = NG_TCP_KEEPIDLE_S, intv = NG_TCP_KEEPINTV_S, cnt = NG_TCP_KEEPCNT;
	int flags;

	/* Keep-alive only where nothing else notices a silent peer (no
	 * timeout): with one, every blocking call and every wait is bounded by
	 * it.  Keep-alive on many connections made together and idle together
	 * fires their probes together: 65,000 sockets of a 256-rank mesh on
	 * loopback overflowed the input queue (net.core.netdev_max_backlog)
	 * every 5 s, and the kernel aborted tens of thousands of connections
	 * with ETIMEDOUT (doc/tcp.md, Failures). */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    (!(t->timeout_s > 0) && (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	                             setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	                             setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intv, sizeof(intv)) ||
	                             setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt))))) {
		ng_error("tcp: socket options for rank %d: %s", peer, strerror(errno));
		return NG_ERR_SYS;
	}
	if (t->timeout_s > 0) {
		struct timeval tv;
		double s = t->timeout_s > 1e6 ? 1e6 : t->timeout_s;

		tv.tv_sec = (time_t)s;
		tv.tv_usec = (suseconds_t)((s - (double)tv.tv_sec) * 1e6);
		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
		    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
			ng_error("tcp: socket timeouts for rank %d: %s", peer, strerror(errno));
			return NG_ERR_SYS;
		}
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		ng_error("tcp: fcntl for rank %d: %s", peer, strerror(errno));
		return NG_ERR_SYS;
	}
	return NG_OK;
}

/* ---- connecting ------------------------------------------------------ */

/* Waits until @fd is ready for @events or @deadline_ms passes. */
static ng_status ng_tcp_wait_fd(struct ng_tcp *t, int fd, short events, int64_t deadline_ms, int peer,
                                const char *what)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int rc;

	for (;;) {
		rc = poll(&pfd, 1, ng_tcp_ms_left(deadline_ms));
		if (rc > 0)
			return NG_OK;
		if (rc == 0) {
			ng_error("tcp: %s rank %d: timed out", what, peer);
			return NG_ERR_TIMEOUT;
		}
		if (errno != EINTR) {
			ng_error("tcp: poll: %s", strerror(errno));
			return NG_ERR_SYS;
		}
		if (ng_tcp_cancelled(t))
			return NG_ERR_CANCELLED;
	}
}

/* Reads the peer's answer on @fd (blocking until @deadline_ms) and checks it
 * names @peer. */
static ng_status ng_tcp_answer(struct ng_tcp *t, int fd, int peer, const char *where, int64_t deadline_ms)
{
	unsigned char hello[NG_TCP_HELLO_LEN];
	const char *why;
	unsigned flags;
	size_t got = 0;
	uint32_t rank;
	ssize_t n;

	while (got < sizeof(hello)) {
		ng_status st =
		    ng_tcp_wait_fd(t, fd, POLLIN, deadline_ms, peer, "waiting for the handshake of");

		if (st)
			return st;
		n = recv(fd, hello + got, sizeof(hello) - got, MSG_DONTWAIT);
		if (n == 0) {
			ng_error("tcp: rank %d at %s closed the connection during the handshake", peer,
			         where);
			return NG_ERR_PEER_LOST;
		}
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			ng_error("tcp: connecting to rank %d at %s: %s", peer, where, strerror(errno));
			return errno == ECONNRESET ? NG_ERR_PEER_LOST : NG_ERR_SYS;
		}
		got += (size_t)n;
	}
	why = ng_tcp_hello_check(hello, t->token, &rank, &flags);
	if (!why && rank != (uint32_t)peer)
		why = "wrong rank";
	if (why) {
		ng_error("tcp: bad handshake from %s, expected rank %d: %s", where, peer, why);
		return NG_ERR_PROTO;
	}
	return NG_OK;
}

ng_status ng_tcp_connect(struct ng_tcp *t, int peer, const struct ng_tcp_addr *a, bool answer,
                         int64_t deadline_ms, int *fd_p)
{
	const struct ng_tcp_conf *cf = &t->conf;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	unsigned char hello[NG_TCP_HELLO_LEN];
	char where[INET_ADDRSTRLEN + 8];
	socklen_t elen = sizeof(int);
	ng_status st;
	ssize_t n;
	int fd, err = 0;

	sin.sin_addr.s_addr = a->ip;
	sin.sin_port = a->port;
	ng_tcp_sockname(&sin, where, sizeof(where));

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ng_error("tcp: socket: %s", strerror(errno));
		return NG_ERR_SYS;
	}
	st = ng_tcp_set_bufs(fd, cf);
	if (st)
		goto err_close_socket;
	/* Leave from the chosen interface's address, too (the port is still
	 * picked by connect(), per destination). */
	if (cf->bind.sin_addr.s_addr != htonl(INADDR_ANY)) {
#ifdef IP_BIND_ADDRESS_NO_PORT
		const int one = 1;

		(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
#endif
		if (bind(fd, (const struct sockaddr *)&cf->bind, sizeof(cf->bind))) {
			ng_error("tcp: bind for connecting to rank %d: %s", peer, strerror(errno));
			st = NG_ERR_SYS;
			goto err_close_socket;
		}
	}
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		if (errno != EINPROGRESS && errno != EINTR) {
			err = errno;
			goto err_connect;
		}
		st = ng_tcp_wait_fd(t, fd, POLLOUT, deadline_ms, peer, "connecting to");
		if (st)
			goto err_close_socket;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) || err)
			goto err_connect;
	}

	ng_tcp_hello_pack(hello, t->base.rank, 0, t->token);
	n = send(fd, hello, sizeof(hello), MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(hello)) {
		err = n < 0 ? errno : EAGAIN;
		goto err_connect;
	}
	if (answer) {
		st = ng_tcp_answer(t, fd, peer, where, deadline_ms);
		if (st)
			goto err_close_socket;
	}
	st = ng_tcp_data_socket(t, fd, peer);
	if (st)
		goto err_close_socket;
	*fd_p = fd;
	return NG_OK;

err_connect:
	ng_error("tcp: connecting to rank %d at %s: %s", peer, where, strerror(err));
	st = err == ECONNREFUSED || err == ECONNRESET ? NG_ERR_PEER_LOST : NG_ERR_SYS;
err_close_socket:
	close(fd);
	return st;
}

/* ---- accepting ------------------------------------------------------- */

void ng_tcp_cand_drop(struct ng_tcp_accepting *ac, struct ng_tcp_cand *k, const char *why)
{
	if (ac->dropped++ < NG_TCP_STRAYS)
		ng_warn("tcp: ignoring connection from %s: %s", k->from, why);
	close(k->fd);
	k->fd = -1;
}

void ng_tcp_accepting_close(struct ng_tcp_accepting *ac)
{
	for (size_t i = 0; i < ac->ncand; i++) {
		if (ac->cand[i].fd >= 0)
			close(ac->cand[i].fd);
		ac->cand[i].fd = -1;
	}
	if (ac->dropped > NG_TCP_STRAYS)
		ng_warn("tcp: ignored %zu more connections that were not ranks of this run",
		        ac->dropped - NG_TCP_STRAYS);
	ac->dropped = 0;
}

/*
 * A rank's connection @fd accepted in lazy mode (its hello read): the rules
 * of first use.  With no connection of ours to @q it is the pair's, both
 * ways; after our own (a simultaneous connect) the lower rank's is kept.
 * Returns a why-not for a connection that is not wanted (dropped as a
 * stray), else NULL with *st_p the outcome.
 */
static const char *ng_tcp_lazy_accept(struct ng_tcp *t, int fd, int q, ng_status *st_p)
{
	struct ng_tcp_peer *p = &t->peers[q];
	unsigned char hello[NG_TCP_HELLO_LEN];
	bool race = p->own >= 0, mine_kept = race && t->base.rank < q;
	ssize_t n;

	*st_p = NG_OK;
	if (p->acc >= 0 || p->drained)
		return "rank already connected";
	if (p->err)
		return "rank already lost";
	/* The answer goes on the connection that is kept, with the drain flag
	 * when ours carried messages before it; nothing goes on the other. */
	if (!mine_kept) {
		ng_tcp_hello_pack(hello, t->base.rank, race ? NG_TCP_F_DRAIN : 0, t->token);
		n = send(fd, hello, sizeof(hello), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n != (ssize_t)sizeof(hello)) {
			ng_error("tcp: handshake with rank %d: %s", q,
			         n < 0 ? strerror(errno) : "short send");
			*st_p = NG_ERR_PEER_LOST;
			return NULL;
		}
	}
	*st_p = ng_tcp_data_socket(t, fd, q);
	if (*st_p)
		return NULL;
	p->acc = fd;
	t->nopen++;
	if (!race) {
		p->txfd = p->rxfd = fd;
		t->nconn++;
	} else if (mine_kept) {
		/* The higher rank's own connection: what it sent before it saw
		 * ours, to be read first (unless the answer on ours is still
		 * to come, which names it too). */
		p->rxfd = fd;
		p->drain = true;
	} else {
		/* Ours loses: sends move to the lower rank's once those queued
		 * on ours have left; its messages come here. */
		p->rxfd = fd;
		p->rep_need = false;
		p->tx_switch = true;
		t->nconn++;
	}
	ng_tcp_peer_mark(p);
	return NULL;
}

ng_status ng_tcp_cand_read(struct ng_tcp *t, struct ng_tcp_accepting *ac, struct ng_tcp_cand *k, bool lazy)
{
	const char *why;
	unsigned flags;
	uint32_t rank;
	ng_status st;
	ssize_t n;

	n = recv(k->fd, k->hello + k->got, sizeof(k->hello) - k->got, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
			return NG_OK;
		ng_tcp_cand_drop(ac, k, strerror(errno));
		return NG_OK;
	}
	if (n == 0) {
		ng_tcp_cand_drop(ac, k, "closed before the handshake");
		return NG_OK;
	}
	k->got += (size_t)n;
	if (memcmp(k->hello, NG_TCP_MAGIC, k->got < 8 ? k->got : 8)) {
		ng_tcp_cand_drop(ac, k, "not an ngauge tcp connection");
		return NG_OK;
	}
	if (k->got < sizeof(k->hello))
		return NG_OK;

	/* The rank indexes t->peers: eager, a higher rank of this run not yet
	 * here; lazy, any other rank of this run. */
	why = ng_tcp_hello_check(k->hello, t->token, &rank, &flags);
	if (!why && flags)
		why = "unexpected flags";
	if (!why && (rank >= (uint32_t)t->base.size || rank == (uint32_t)t->base.rank ||
	             (!lazy && rank < (uint32_t)t->base.rank)))
		why = "unexpected rank";
	if (!why && !lazy && t->peers[rank].txfd >= 0)
		why = "rank already connected";
	if (!why && lazy) {
		why = ng_tcp_lazy_accept(t, k->fd, (int)rank, &st);
		if (!why) {
			if (st)
				return st;
			k->fd = -1; /* owned by the peer now */
			ac->nconn++;
			return NG_OK;
		}
	}
	if (why) {
		ng_tcp_cand_drop(ac, k, why);
		return NG_OK;
	}
	ng_tcp_hello_pack(k->hello, t->base.rank, 0, t->token);
	n = send(k->fd, k->hello, sizeof(k->hello), MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(k->hello)) {
		ng_error("tcp: handshake with rank %u at %s: %s", rank, k->from,
		         n < 0 ? strerror(errno) : "short send");
		return NG_ERR_PEER_LOST;
	}
	st = ng_tcp_data_socket(t, k->fd, (int)rank);
	if (st)
		return st;
	t->peers[rank].txfd = t->peers[rank].rxfd = t->peers[rank].acc = k->fd;
	ng_tcp_peer_mark(&t->peers[rank]);
	t->nconn++;
	t->nopen++;
	k->fd = -1; /* owned by the peer now */
	ac->nconn++;
	return NG_OK;
}

/*
 * The slot for the next connection: a free one, else that of the oldest
 * connection accepted before @pass (this pass's own connections have not
 * been polled yet), which is then closed once a connection takes its place.
 * NULL when every slot holds a connection of this pass.
 */
static struct ng_tcp_cand *ng_tcp_cand_slot(struct ng_tcp_accepting *ac, uint64_t pass)
{
	struct ng_tcp_cand *old = NULL;

	for (size_t i = 0; i < ac->ncand; i++) {
		struct ng_tcp_cand *k = &ac->cand[i];

		if (k->fd < 0)
			return k;
		if (k->serial < pass && (!old || k->serial < old->serial))
			old = k;
	}
	return old;
}

/*
 * Accepts what waits on @lfd, reading each connection's hello at once (a
 * rank sends it with its connection).  A stray cannot hold a slot that a
 * rank needs: when all are taken, the oldest unidentified connection makes
 * room (it had a poll to identify itself), so strays that connect early and
 * stay silent, or connect faster than the deadline drops them, delay a rank
 * by a pass at most instead of leaving it in the backlog.
 */
ng_status ng_tcp_accept_pass(struct ng_tcp *t, struct ng_tcp_accepting *ac, int lfd, bool lazy, size_t nexp)
{
	uint64_t pass = ac->serial;
	ng_status st;

	while (ac->nconn < nexp) {
		struct ng_tcp_cand *k = ng_tcp_cand_slot(ac, pass);
		struct sockaddr_in sin;
		socklen_t slen = sizeof(sin);
		int fd;

		if (!k)
			break; /* the rest waits for the next pass */
		fd = accept4(lfd, (struct sockaddr *)&sin, &slen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				break;
			if (errno == ECONNABORTED || errno == EPROTO || errno == ENETDOWN ||
			    errno == EHOSTUNREACH || errno == ENETUNREACH || errno == ENONET)
				continue;
			ng_error("tcp: accept: %s", strerror(errno));
			return NG_ERR_SYS;
		}
		if (k->fd >= 0)
			ng_tcp_cand_drop(ac, k, "no handshake before newer connections needed its slot");
		k->fd = fd;
		k->got = 0;
		k->serial = ac->serial++;
		k->deadline_ms = ng_tcp_now_ms() + NG_TCP_HELLO_MS;
		ng_tcp_sockname(&sin, k->from, sizeof(k->from));
		st = ng_tcp_cand_read(t, ac, k, lazy);
		if (st)
			return st;
	}
	return NG_OK;
}

/* ---- first use (lazy) ------------------------------------------------ */

ng_status ng_tcp_serve(struct ng_tcp *t)
{
	struct ng_tcp_accepting *ac = &t->acc;
	int64_t now = ng_tcp_now_ms();
	ng_status st;

	if (t->lfd < 0)
		return NG_OK;
	for (size_t i = 0; i < ac->ncand; i++) {
		struct ng_tcp_cand *k = &ac->cand[i];

		if (k->fd < 0)
			continue;
		if (k->deadline_ms <= now) {
			ng_tcp_cand_drop(ac, k, "no handshake within 2 s");
			continue;
		}
		st = ng_tcp_cand_read(t, ac, k, true);
		if (st)
			return st;
	}
	return ng_tcp_accept_pass(t, ac, t->lfd, true, SIZE_MAX);
}

size_t ng_tcp_listen_fds(const struct ng_tcp *t, struct pollfd *pfds)
{
	size_t n = 0;

	if (t->lfd < 0)
		return 0;
	pfds[n++] = (struct pollfd){.fd = t->lfd, .events = POLLIN};
	for (size_t i = 0; i < t->acc.ncand; i++) {
		if (t->acc.cand[i].fd >= 0)
			pfds[n++] = (struct pollfd){.fd = t->acc.cand[i].fd, .events = POLLIN};
	}
	return n;
}

ng_status ng_tcp_tx_ready(struct ng_tcp *t, struct ng_tcp_peer *p)
{
	int q = ng_tcp_rank_of(t, p);
	uint64_t t0;
	ng_status st;

	if (p->txfd < 0) {
		if (!t->addrs) { /* eager: every connection was made at open */
			ng_error("tcp: no connection to rank %d", q);
			return NG_ERR_INTERNAL;
		}
		t->waiting = q;
		t0 = ng_tcp_now_ns();
		st = ng_tcp_connect(t, q, &t->addrs[q], false, ng_tcp_deadline(t), &p->own);
		t->waiting = -1;
		if (st)
			return st;
		t->connect_ns += ng_tcp_now_ns() - t0;
		t->nconn++;
		t->nopen++;
		p->txfd = p->own;
		p->rep_need = true;
	}
	if (p->tx_switch && !p->sq.n) {
		/* What was sent on our own connection is on its way; the lower
		 * rank reads it to its end, then the kept one. */
		close(p->own);
		t->nopen--;
		p->own = -1;
		p->txfd = p->acc;
		p->tx_switch = false;
	}
	ng_tcp_peer_mark(p);
	return NG_OK;
}

/* Reads what has come of @p's answer on its own connection, without
 * blocking; acts on it once complete. */
static ng_status ng_tcp_read_answer(struct ng_tcp *t, struct ng_tcp_peer *p)
{
	int q = ng_tcp_rank_of(t, p);
	const char *why;
	unsigned flags;
	uint32_t rank;
	ssize_t n;

	while (p->rep_got < sizeof(p->rep)) {
		n = recv(p->own, p->rep + p->rep_got, sizeof(p->rep) - p->rep_got, MSG_DONTWAIT);
		if (n > 0) {
			p->rep_got = (uint8_t)(p->rep_got + n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return NG_OK;
		if (n < 0 && errno == EINTR)
			return ng_tcp_cancelled(t) ? NG_ERR_CANCELLED : NG_OK;
		if (ng_tcp_cancelled(t))
			return NG_ERR_CANCELLED;
		ng_error("tcp: connection to rank %d lost: %s", q,
		         n == 0 ? "closed during the handshake" : strerror(errno));
		return NG_ERR_PEER_LOST;
	}
	why = ng_tcp_hello_check(p->rep, t->token, &rank, &flags);
	if (!why && rank != (uint32_t)q)
		why = "wrong rank";
	/* Only a higher rank drains, and only one that opened a connection. */
	if (!why && (flags & NG_TCP_F_DRAIN) && q < t->base.rank)
		why = "unexpected flags";
	if (!why && !(flags & NG_TCP_F_DRAIN) && p->acc >= 0)
		why = "a second connection";
	if (why) {
		struct sockaddr_in sin = {.sin_family = AF_INET};
		char where[INET_ADDRSTRLEN + 8];

		sin.sin_addr.s_addr = t->addrs[q].ip;
		sin.sin_port = t->addrs[q].port;
		ng_tcp_sockname(&sin, where, sizeof(where));
		ng_error("tcp: bad handshake from %s, expected rank %d: %s", where, q, why);
		return NG_ERR_PROTO;
	}
	p->rep_need = false;
	if (!(flags & NG_TCP_F_DRAIN)) {
		p->rxfd = p->own; /* the pair's one connection */
	} else if (p->drained) {
		p->rxfd = p->own;
	} else if (p->acc >= 0) {
		p->rxfd = p->acc; /* set when it was accepted */
		p->drain = true;
	} else {
		p->rxfd = -1; /* its own connection is still to be accepted */
	}
	ng_tcp_peer_mark(p);
	return NG_OK;
}

ng_status ng_tcp_rx_step(struct ng_tcp *t, struct ng_tcp_peer *p)
{
	ng_status st;

	if (ng_tcp_rx_ok(p))
		return NG_OK;
	if (p->own >= 0 && p->rep_need && (p->rxfd < 0 || p->rxfd == p->own)) {
		st = ng_tcp_read_answer(t, p);
		if (st || ng_tcp_rx_ok(p))
			return st;
	}
	if (p->rxfd < 0)
		return ng_tcp_serve(t);
	return NG_OK;
}

void ng_tcp_rx_drained(struct ng_tcp *t, struct ng_tcp_peer *p)
{
	close(p->acc);
	t->nopen--;
	p->acc = -1;
	p->drain = false;
	p->drained = true;
	p->rxfd = p->own; /* its answer first, when not read yet (ng_tcp_rx_ok) */
	ng_tcp_peer_mark(p);
}

static ng_status __attribute__((cold)) ng_tcp_settle_timeout(struct ng_tcp *t, int q)
{
	ng_error("tcp: waiting for the connection of rank %d: no progress for %g s", q, t->timeout_s);
	return NG_ERR_TIMEOUT;
}

ng_status ng_tcp_rx_settle(struct ng_tcp *t, struct ng_tcp_peer *p)
{
	int q = ng_tcp_rank_of(t, p);
	int64_t deadline = t->timeout_ms < 0 ? -1 : ng_tcp_now_ms() + t->timeout_ms;
	struct pollfd pfd[1 + NG_TCP_LAZY_SLOTS + 1];
	ng_status st = NG_OK;
	size_t n;
	int rc;

	t->waiting = q;
	for (;;) {
		st = ng_tcp_rx_step(t, p);
		if (st || ng_tcp_rx_ok(p))
			break;
		if (ng_tcp_cancelled(t)) {
			st = NG_ERR_CANCELLED;
			break;
		}
		if (deadline >= 0 && ng_tcp_now_ms() > deadline) {
			st = ng_tcp_settle_timeout(t, q);
			break;
		}
		if (t->spin)
			continue;
		n = ng_tcp_listen_fds(t, pfd);
		if (p->own >= 0 && p->rep_need && (p->rxfd < 0 || p->rxfd == p->own))
			pfd[n++] = (struct pollfd){.fd = p->own, .events = POLLIN};
		rc = poll(pfd, n, deadline < 0 ? 1000 : ng_tcp_ms_left(deadline));
		if (rc < 0 && errno != EINTR) {
			ng_error("tcp: poll: %s", strerror(errno));
			st = NG_ERR_SYS;
			break;
		}
	}
	t->waiting = -1;
	return st;
}
