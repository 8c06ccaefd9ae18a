/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tcp module's connection setup (tcp.h): options, listening, the
 * handshakes of connecting and accepting, open and close.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "module.h"
#include "modules/tcp/tcp.h"
#include "options.h"
#include "status.h"

#define NG_TCP_MAGIC     "NGAUGTCP" /* 8 bytes on the wire, no NUL */
#define NG_TCP_VERSION   1u
#define NG_TCP_HELLO_LEN 24u  /* magic 8, version 4, rank 4, token 8 */
#define NG_TCP_HELLO_MS  2000 /* an accepted connection must identify itself within this */
#define NG_TCP_SETUP_S   60.0 /* setup deadline when env->timeout_s is 0 */
#define NG_TCP_STRAYS    16   /* unidentified connections served at once beyond the expected ones, */
                              /* and strays warned about by name (then counted) */
#define NG_TCP_KEEPIDLE_S 10  /* keep-alive: first probe after 10 s idle, */
#define NG_TCP_KEEPINTV_S 5   /* then every 5 s, */
#define NG_TCP_KEEPCNT    3   /* lost after 3 unanswered probes */
#define NG_TCP_POLL_SPIN  1   /* the word index of --tcp-poll spin */

/* The module's options (ng_tcp_options), as ng_config_read gives them. */
struct ng_tcp_config {
	long long port;        /* --tcp-port: base port, 0 for ephemeral */
	const char *bind;      /* --tcp-bind: NULL for the bootstrap's address */
	size_t sndbuf, rcvbuf; /* --tcp-sndbuf, --tcp-rcvbuf: 0 for the system's */
	int poll;              /* --tcp-poll: NG_TCP_POLL_SPIN or sleep */
};

/* What open() needs from the options. */
struct ng_tcp_conf {
	struct sockaddr_in bind; /* listen here (port filled per rank) */
	struct in_addr pub;      /* peers connect to this address */
	char pub_str[INET_ADDRSTRLEN];
	int port;              /* base port, 0 for ephemeral */
	size_t sndbuf, rcvbuf; /* 0: system default */
	bool spin;             /* --tcp-poll spin */
};

/* One rank's published listening address, exchanged with allgather. */
struct ng_tcp_addr {
	uint32_t ip;   /* network byte order */
	uint16_t port; /* network byte order; 0: this rank could not listen */
	uint16_t pad;
};

/* An accepted connection that has not yet identified itself. */
struct ng_tcp_cand {
	int fd; /* -1: free slot */
	size_t got;
	int64_t deadline_ms;
	uint64_t serial; /* order of acceptance: the oldest makes room first */
	unsigned char hello[NG_TCP_HELLO_LEN];
	char from[INET_ADDRSTRLEN + 8];
};

/* ---- setup ----------------------------------------------------------- */

static int ng_tcp_ms_left(int64_t deadline_ms)
{
	int64_t left = deadline_ms - ng_tcp_now_ms();

	if (left < 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
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

static void ng_tcp_hello_pack(unsigned char *h, int rank, uint64_t token)
{
	memcpy(h, NG_TCP_MAGIC, 8);
	ng_tcp_put32(h + 8, NG_TCP_VERSION);
	ng_tcp_put32(h + 12, (uint32_t)rank);
	ng_tcp_put32(h + 16, (uint32_t)(token >> 32));
	ng_tcp_put32(h + 20, (uint32_t)token);
}

/* Checks a hello; returns NULL when it is good, else why not.  *rank_p gets
 * the sender's rank. */
static const char *ng_tcp_hello_check(const unsigned char *h, uint64_t token, uint32_t *rank_p)
{
	uint64_t tok = (uint64_t)ng_tcp_get32(h + 16) << 32 | ng_tcp_get32(h + 20);

	if (memcmp(h, NG_TCP_MAGIC, 8))
		return "not an ngauge tcp connection";
	if (ng_tcp_get32(h + 8) != NG_TCP_VERSION)
		return "other protocol version";
	if (tok != token)
		return "token of another run";
	*rank_p = ng_tcp_get32(h + 12);
	return NULL;
}

static void ng_tcp_sockname(const struct sockaddr_in *sin, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN];

	if (!inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(sin->sin_port));
}

/* SO_SNDBUF / SO_RCVBUF before listen()/connect(), so that window scaling
 * fits them; accepted sockets inherit them from the listener. */
static ng_status ng_tcp_set_bufs(int fd, const struct ng_tcp_conf *cf)
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

/* Turns an identified connection into @peer's data socket. */
static ng_status ng_tcp_data_socket(struct ng_tcp *t, int fd, int peer)
{
	const int one = 1, idle = NG_TCP_KEEPIDLE_S, intv = NG_TCP_KEEPINTV_S, cnt = NG_TCP_KEEPCNT;
	int flags;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intv, sizeof(intv)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt))) {
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
	t->peers[peer].fd = fd;
	return NG_OK;
}

static const struct ng_option ng_tcp_options[] = {
    {.name = "tcp-port",
     NG_INT_AT(struct ng_tcp_config, port),
     .min = 0,
     .max = 65535,
     .metavar = "PORT",
     .help = "listen on PORT + rank (default: an ephemeral port)"},
    {.name = "tcp-bind",
     NG_STRING_AT(struct ng_tcp_config, bind),
     .metavar = "ADDR",
     .help = "listen on and connect from this IPv4 address (default: the launcher's address for this rank)"},
    {.name = "tcp-sndbuf",
     NG_SIZE_AT(struct ng_tcp_config, sndbuf),
     .max = 2147483647,
     .metavar = "BYTES",
     .help = "SO_SNDBUF of every connection (default: the system's)"},
    {.name = "tcp-rcvbuf",
     NG_SIZE_AT(struct ng_tcp_config, rcvbuf),
     .max = 2147483647,
     .metavar = "BYTES",
     .help = "SO_RCVBUF of every connection (default: the system's)"},
    {.name = "tcp-poll",
     NG_CHOICE_AT(struct ng_tcp_config, poll),
     .def = "sleep",
     .choices = "sleep|spin",
     .help = "waiting: sleep in the kernel (blocking calls, poll(); what a socket program does), or spin on "
             "non-blocking calls (no wake-up latency; one core per rank)"},
    {.name = NULL},
};

/* Reads the options and resolves the addresses. */
static ng_status ng_tcp_conf_read(const struct ng_module_env *env, struct ng_tcp_conf *cf)
{
	const struct ng_boot *b = env->boot;
	struct ng_tcp_config o;
	const char *where;
	long long port;
	struct addrinfo hints, *ai;
	int rc;

	memset(cf, 0, sizeof(*cf));
	ng_config_read(env->args, ng_tcp_options, &o);
	where = o.bind;
	port = o.port;
	if (port < 0 || port > 65535 || (port && port + b->size - 1 > 65535)) {
		if (b->rank == 0) /* the same on every rank: said once */
			ng_error("tcp: --tcp-port %lld: %d ranks need ports %lld-%lld, not all in 1-65535",
			         port, b->size, port, port + b->size - 1);
		return NG_ERR_USAGE;
	}
	cf->port = (int)port;
	cf->sndbuf = o.sndbuf;
	cf->rcvbuf = o.rcvbuf;
	cf->spin = o.poll == NG_TCP_POLL_SPIN;

	if (!where || !*where)
		where = b->addr;
	if (!*where) {
		ng_error("tcp: the bootstrap gave no address for this rank; use --tcp-bind ADDR");
		return NG_ERR_USAGE;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	rc = getaddrinfo(where, NULL, &hints, &ai);
	if (rc) {
		ng_error("tcp: bind address %s: %s", where,
		         rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return NG_ERR_USAGE;
	}
	memcpy(&cf->bind, ai->ai_addr, sizeof(cf->bind));
	freeaddrinfo(ai);
	cf->bind.sin_port = 0;

	/* Listening on every interface: peers reach us at the bootstrap's address. */
	cf->pub = cf->bind.sin_addr;
	if (cf->pub.s_addr == htonl(INADDR_ANY) && inet_pton(AF_INET, b->addr, &cf->pub) != 1) {
		ng_error("tcp: listening on %s, but the bootstrap gave no IPv4 address to publish (\"%s\"); "
		         "use --tcp-bind ADDR",
		         where, b->addr);
		return NG_ERR_USAGE;
	}
	inet_ntop(AF_INET, &cf->pub, cf->pub_str, sizeof(cf->pub_str));
	return NG_OK;
}

static ng_status ng_tcp_listen(const struct ng_tcp_conf *cf, int rank, int *fd_p, uint16_t *port_p)
{
	struct sockaddr_in sin = cf->bind;
	socklen_t slen = sizeof(sin);
	const int one = 1;
	char where[INET_ADDRSTRLEN + 8];
	ng_status st;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ng_error("tcp: socket: %s", strerror(errno));
		return NG_ERR_SYS;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		ng_error("tcp: SO_REUSEADDR: %s", strerror(errno));
		st = NG_ERR_SYS;
		goto err_close_socket;
	}
	st = ng_tcp_set_bufs(fd, cf);
	if (st)
		goto err_close_socket;
	sin.sin_port = htons((uint16_t)(cf->port ? cf->port + rank : 0));
	ng_tcp_sockname(&sin, where, sizeof(where));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		ng_error("tcp: bind %s: %s", where, strerror(errno));
		st = errno == EADDRINUSE || errno == EADDRNOTAVAIL ? NG_ERR_USAGE : NG_ERR_SYS;
		goto err_close_socket;
	}
	if (listen(fd, SOMAXCONN)) {
		ng_error("tcp: listen %s: %s", where, strerror(errno));
		st = NG_ERR_SYS;
		goto err_close_socket;
	}
	if (getsockname(fd, (struct sockaddr *)&sin, &slen)) {
		ng_error("tcp: getsockname: %s", strerror(errno));
		st = NG_ERR_SYS;
		goto err_close_socket;
	}
	*fd_p = fd;
	*port_p = ntohs(sin.sin_port);
	return NG_OK;

err_close_socket:
	close(fd);
	return st;
}

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

/* Connects to @peer (a lower rank), exchanges hellos, installs the socket. */
static ng_status ng_tcp_connect(struct ng_tcp *t, const struct ng_tcp_conf *cf, int peer,
                                const struct ng_tcp_addr *a, uint64_t token, int64_t deadline_ms)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	unsigned char hello[NG_TCP_HELLO_LEN];
	char where[INET_ADDRSTRLEN + 8];
	const char *why;
	socklen_t elen = sizeof(int);
	size_t got = 0;
	uint32_t rank;
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

	ng_tcp_hello_pack(hello, t->base.rank, token);
	n = send(fd, hello, sizeof(hello), MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(hello)) {
		err = n < 0 ? errno : EAGAIN;
		goto err_connect;
	}
	while (got < sizeof(hello)) {
		st = ng_tcp_wait_fd(t, fd, POLLIN, deadline_ms, peer, "waiting for the handshake of");
		if (st)
			goto err_close_socket;
		n = recv(fd, hello + got, sizeof(hello) - got, 0);
		if (n == 0) {
			ng_error("tcp: rank %d at %s closed the connection during the handshake", peer,
			         where);
			st = NG_ERR_PEER_LOST;
			goto err_close_socket;
		}
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			err = errno;
			goto err_connect;
		}
		got += (size_t)n;
	}
	why = ng_tcp_hello_check(hello, token, &rank);
	if (!why && rank != (uint32_t)peer)
		why = "wrong rank";
	if (why) {
		ng_error("tcp: bad handshake from %s, expected rank %d: %s", where, peer, why);
		st = NG_ERR_PROTO;
		goto err_close_socket;
	}
	st = ng_tcp_data_socket(t, fd, peer);
	if (st)
		goto err_close_socket;
	return NG_OK;

err_connect:
	ng_error("tcp: connecting to rank %d at %s: %s", peer, where, strerror(err));
	st = err == ECONNREFUSED || err == ECONNRESET ? NG_ERR_PEER_LOST : NG_ERR_SYS;
err_close_socket:
	close(fd);
	return st;
}

/* The connections that connect while a rank accepts its peers'. */
struct ng_tcp_accepting {
	struct ng_tcp_cand *cand; /* [ncand] */
	size_t ncand;
	size_t nconn;    /* peers identified so far */
	uint64_t serial; /* connections accepted so far */
	size_t dropped;  /* strays closed so far; the first NG_TCP_STRAYS are named */
};

static void ng_tcp_cand_drop(struct ng_tcp_accepting *ac, struct ng_tcp_cand *k, const char *why)
{
	if (ac->dropped++ < NG_TCP_STRAYS)
		ng_warn("tcp: ignoring connection from %s: %s", k->from, why);
	close(k->fd);
	k->fd = -1;
}

/*
 * Reads from an unidentified connection.  Returns NG_OK (dropped it, or
 * waiting for more, or installed it as a peer) or a fatal error.
 */
static ng_status ng_tcp_cand_read(struct ng_tcp *t, struct ng_tcp_accepting *ac, struct ng_tcp_cand *k,
                                  uint64_t token)
{
	const char *why;
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

	/* The rank indexes t->peers: a higher rank of this run, not yet here. */
	why = ng_tcp_hello_check(k->hello, token, &rank);
	if (!why && (rank <= (uint32_t)t->base.rank || rank >= (uint32_t)t->base.size))
		why = "unexpected rank";
	if (!why && t->peers[rank].fd >= 0)
		why = "rank already connected";
	if (why) {
		ng_tcp_cand_drop(ac, k, why);
		return NG_OK;
	}
	ng_tcp_hello_pack(k->hello, t->base.rank, token);
	n = send(k->fd, k->hello, sizeof(k->hello), MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(k->hello)) {
		ng_error("tcp: handshake with rank %u at %s: %s", rank, k->from,
		         n < 0 ? strerror(errno) : "short send");
		return NG_ERR_PEER_LOST;
	}
	st = ng_tcp_data_socket(t, k->fd, (int)rank);
	if (st)
		return st;
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
static ng_status ng_tcp_accept_pass(struct ng_tcp *t, struct ng_tcp_accepting *ac, int lfd, uint64_t token,
                                    size_t nexp)
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
		st = ng_tcp_cand_read(t, ac, k, token);
		if (st)
			return st;
	}
	return NG_OK;
}

static void __attribute__((cold)) ng_tcp_accept_timeout(const struct ng_tcp *t)
{
	char list[128];
	size_t len = 0;
	int i;

	list[0] = '\0';
	for (i = t->base.rank + 1; i < t->base.size && len < sizeof(list) - 16; i++) {
		if (t->peers[i].fd < 0)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", len ? " " : "", i);
	}
	ng_error("tcp: timed out waiting for ranks %s%s to connect", list, i < t->base.size ? " ..." : "");
}

/* Accepts and identifies the connections of every higher rank; anything else
 * that connects is dropped. */
static ng_status ng_tcp_accept_all(struct ng_tcp *t, int lfd, uint64_t token, int64_t deadline_ms)
{
	size_t nexp = (size_t)(t->base.size - 1 - t->base.rank), i, npfd;
	struct ng_tcp_accepting ac = {.ncand = nexp + NG_TCP_STRAYS};
	struct pollfd *pfd;
	ng_status st = NG_OK;
	int64_t now, next;
	int rc;

	if (!nexp)
		return NG_OK;
	ac.cand = calloc(ac.ncand, sizeof(*ac.cand));
	pfd = calloc(ac.ncand + 1, sizeof(*pfd));
	if (!ac.cand || !pfd) {
		ng_error("tcp: out of memory");
		st = NG_ERR_NOMEM;
		goto out_free;
	}
	for (i = 0; i < ac.ncand; i++)
		ac.cand[i].fd = -1;

	while (ac.nconn < nexp) {
		now = ng_tcp_now_ms();
		next = deadline_ms;
		for (i = 0; i < ac.ncand; i++) {
			if (ac.cand[i].fd >= 0 && ac.cand[i].deadline_ms <= now)
				ng_tcp_cand_drop(&ac, &ac.cand[i], "no handshake within 2 s");
			if (ac.cand[i].fd >= 0 && ac.cand[i].deadline_ms < next)
				next = ac.cand[i].deadline_ms;
		}
		if (now >= deadline_ms) {
			ng_tcp_accept_timeout(t);
			st = NG_ERR_TIMEOUT;
			goto out_close;
		}
		/* The listener is always served: a new connection takes a free
		 * slot or the oldest stray's (ng_tcp_accept_pass). */
		npfd = 0;
		pfd[npfd++] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (i = 0; i < ac.ncand; i++)
			pfd[npfd++] = (struct pollfd){.fd = ac.cand[i].fd, .events = POLLIN};
		rc = poll(pfd, npfd, ng_tcp_ms_left(next));
		if (rc < 0) {
			if (errno != EINTR) {
				ng_error("tcp: poll: %s", strerror(errno));
				st = NG_ERR_SYS;
				goto out_close;
			}
			if (ng_tcp_cancelled(t)) {
				st = NG_ERR_CANCELLED;
				goto out_close;
			}
			continue;
		}
		/* Hellos that arrived first, then the newcomers. */
		for (i = 0; i < ac.ncand && ac.nconn < nexp; i++) {
			if (ac.cand[i].fd < 0 || !pfd[i + 1].revents)
				continue;
			st = ng_tcp_cand_read(t, &ac, &ac.cand[i], token);
			if (st)
				goto out_close;
		}
		if (pfd[0].revents && ac.nconn < nexp) {
			st = ng_tcp_accept_pass(t, &ac, lfd, token, nexp);
			if (st)
				goto out_close;
		}
	}

out_close:
	for (i = 0; i < ac.ncand; i++) {
		if (ac.cand[i].fd >= 0)
			close(ac.cand[i].fd);
	}
	if (ac.dropped > NG_TCP_STRAYS)
		ng_warn("tcp: ignored %zu more connections that were not ranks of this run",
		        ac.dropped - NG_TCP_STRAYS);
out_free:
	free(pfd);
	free(ac.cand);
	return st;
}

/* Rank 0's run token. */
static ng_status ng_tcp_token(uint64_t *token_p)
{
	unsigned char *p = (unsigned char *)token_p;
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(*token_p)) {
		n = getrandom(p + got, sizeof(*token_p) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ng_error("tcp: getrandom: %s", strerror(errno));
			return NG_ERR_SYS;
		}
		got += (size_t)n;
	}
	return NG_OK;
}

void ng_tcp_close(struct ng_comm *c)
{
	struct ng_tcp *t = ng_tcp_of(c);
	int i;

	if (t->peers) {
		for (i = 0; i < c->size; i++) {
			if (t->peers[i].fd >= 0)
				close(t->peers[i].fd);
		}
	}
	while (t->bufs.next != &t->bufs)
		ng_tcp_buf_release(t->bufs.next);
	free(t->pfd_peer);
	free(t->pfds);
	free(t->active);
	free(t->peers);
	free(t);
}

/* The module's operations (below). */
static const struct ng_module_ops ng_tcp_ops;

ng_status ng_tcp_open(const struct ng_module *m, const struct ng_module_env *env, struct ng_comm **comm_p)
{
	struct ng_boot *b = env->boot;
	size_t size = (size_t)b->size;
	double setup_s = env->timeout_s > 0 ? env->timeout_s : NG_TCP_SETUP_S;
	struct ng_tcp_addr mine = {0}, *addrs;
	struct ng_tcp_conf cf;
	int64_t deadline_ms;
	uint64_t token = 0;
	ng_status st, lst;
	struct ng_tcp *t;
	uint16_t port = 0;
	size_t i, len;
	int lfd = -1;

	st = ng_tcp_conf_read(env, &cf);
	if (st)
		return st;

	t = calloc(1, sizeof(*t));
	if (!t) {
		ng_error("tcp: out of memory");
		return NG_ERR_NOMEM;
	}
	ng_comm_init(&t->base, m, &ng_tcp_ops, b->rank, b->size, env->cancel);
	t->bufs.next = t->bufs.prev = &t->bufs;
	t->timeout_s = env->timeout_s > 0 ? env->timeout_s : 0;
	t->spin = cf.spin;
	t->base.spins = cf.spin;
	t->timeout_ms =
	    t->timeout_s > 0 ? (t->timeout_s * 1e3 >= INT_MAX ? INT_MAX : (int)(t->timeout_s * 1e3)) : -1;
	if (t->timeout_ms == 0 && t->timeout_s > 0)
		t->timeout_ms = 1;
	{
		long pg = sysconf(_SC_PAGESIZE);

		t->page = pg > 64 ? (size_t)pg : 4096;
	}
	t->peers = calloc(size, sizeof(*t->peers));
	t->active = calloc(size, sizeof(*t->active));
	t->pfds = calloc(size, sizeof(*t->pfds));
	t->pfd_peer = calloc(size, sizeof(*t->pfd_peer));
	addrs = calloc(size, sizeof(*addrs));
	if (!t->peers || !t->active || !t->pfds || !t->pfd_peer || !addrs) {
		ng_error("tcp: out of memory");
		st = NG_ERR_NOMEM;
		goto err_free_addrs;
	}
	for (i = 0; i < size; i++) {
		t->peers[i].fd = -1;
		t->peers[i].apos = NG_TCP_NONE;
		ng_queue_init(&t->peers[i].sq.q);
		ng_queue_init(&t->peers[i].rq.q);
	}

	if (b->rank == 0) {
		st = ng_tcp_token(&token);
		if (st)
			goto err_free_addrs;
	}
	st = ng_boot_bcast(b, 0, &token, sizeof(token));
	if (st)
		goto err_free_addrs;

	/* Everyone takes part in the exchange, a rank that cannot listen too
	 * (with port 0), so that all ranks fail together. */
	lst = ng_tcp_listen(&cf, b->rank, &lfd, &port);
	mine.ip = cf.pub.s_addr;
	mine.port = lst ? 0 : htons(port);
	st = ng_boot_allgather(b, &mine, sizeof(mine), addrs);
	if (st || lst) {
		st = st ? st : lst;
		goto err_close_listener;
	}
	for (i = 0; i < size; i++) {
		if (!addrs[i].port) {
			ng_error("tcp: rank %zu could not listen", i);
			st = NG_ERR_PEER_LOST;
			goto err_close_listener;
		}
	}

	/* Every address this rank will connect to is one it may connect to
	 * before any connection is made (bootstrap.h: under --server, the
	 * client's own). */
	for (i = 0; i < (size_t)b->rank; i++) {
		struct in_addr in = {.s_addr = addrs[i].ip};
		char ip[INET_ADDRSTRLEN], what[48];

		if (!inet_ntop(AF_INET, &in, ip, sizeof(ip)))
			snprintf(ip, sizeof(ip), "?");
		snprintf(what, sizeof(what), "the tcp listener of rank %zu", i);
		if (!ng_boot_may_connect(b, ip, what)) {
			st = NG_ERR_PROTO;
			goto err_close_listener;
		}
	}
	deadline_ms = ng_tcp_now_ms() + (int64_t)(setup_s * 1e3);
	for (i = 0; i < (size_t)b->rank; i++) {
		st = ng_tcp_connect(t, &cf, (int)i, &addrs[i], token, deadline_ms);
		if (st)
			goto err_close_listener;
	}
	st = ng_tcp_accept_all(t, lfd, token, deadline_ms);
	if (st)
		goto err_close_listener;
	close(lfd);
	free(addrs);

	len = (size_t)snprintf(t->base.device, sizeof(t->base.device), "tcp %s", cf.pub_str);
	if (cf.sndbuf && len < sizeof(t->base.device))
		len += (size_t)snprintf(t->base.device + len, sizeof(t->base.device) - len, " sndbuf %zu",
		                        cf.sndbuf);
	if (cf.rcvbuf && len < sizeof(t->base.device))
		snprintf(t->base.device + len, sizeof(t->base.device) - len, " rcvbuf %zu", cf.rcvbuf);
	*comm_p = &t->base;
	return NG_OK;

err_close_listener:
	if (lfd >= 0)
		close(lfd);
err_free_addrs:
	free(addrs);
	ng_tcp_close(&t->base); /* closes the peer sockets connected so far */
	return st;
}

static const struct ng_option *const ng_tcp_option_tables[] = {ng_tcp_options, NULL};

static const struct ng_module_ops ng_tcp_ops = {
    .open = ng_tcp_open,
    .close = ng_tcp_close,
    .alloc = ng_tcp_alloc,
    .free = ng_tcp_free,
    .msg = &ng_tcp_msg_ops,
};

const struct ng_module ng_module_tcp = {
    .name = "tcp",
    .desc = "TCP sockets over IPv4, a full mesh with one connection per pair of ranks",
    .options = ng_tcp_option_tables,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .max_msg = 0,
    .hdr_bytes = 0,
    .ops = &ng_tcp_ops,
};
