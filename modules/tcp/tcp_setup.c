/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tcp module's setup (tcp.h): options, listening, open (the full mesh
 * of --connect eager, the addresses of --connect lazy) and close, the
 * module's report and its descriptor.
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

#include <jansson.h>

#include "bootstrap.h"
#include "module.h"
#include "modules/tcp/tcp.h"
#include "options.h"
#include "status.h"

#define NG_TCP_POLL_SPIN 1 /* the word index of --tcp-poll spin */

/* The module's options (ng_tcp_options), as ng_config_read gives them. */
struct ng_tcp_config {
	long long port;        /* --tcp-port: base port, 0 for ephemeral */
	const char *bind;      /* --tcp-bind: NULL for the bootstrap's address */
	size_t sndbuf, rcvbuf; /* --tcp-sndbuf, --tcp-rcvbuf: 0 for the system's */
	int poll;              /* --tcp-poll: NG_TCP_POLL_SPIN or sleep */
};

/* ---- setup ----------------------------------------------------------- */

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

static void __attribute__((cold)) ng_tcp_accept_timeout(const struct ng_tcp *t)
{
	char list[128];
	size_t len = 0;
	int i;

	list[0] = '\0';
	for (i = t->base.rank + 1; i < t->base.size && len < sizeof(list) - 16; i++) {
		if (t->peers[i].txfd < 0)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", len ? " " : "", i);
	}
	ng_error("tcp: timed out waiting for ranks %s%s to connect", list, i < t->base.size ? " ..." : "");
}

/* Accepts and identifies the connections of every higher rank; anything else
 * that connects is dropped. */
static ng_status ng_tcp_accept_all(struct ng_tcp *t, int lfd, int64_t deadline_ms)
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
			st = ng_tcp_cand_read(t, &ac, &ac.cand[i], false);
			if (st)
				goto out_close;
		}
		if (pfd[0].revents && ac.nconn < nexp) {
			st = ng_tcp_accept_pass(t, &ac, lfd, false, nexp);
			if (st)
				goto out_close;
		}
	}

out_close:
	ng_tcp_accepting_close(&ac);
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
			struct ng_tcp_peer *p = &t->peers[i];

			if (p->own >= 0)
				close(p->own);
			if (p->acc >= 0)
				close(p->acc);
		}
	}
	if (t->acc.cand)
		ng_tcp_accepting_close(&t->acc);
	if (t->lfd >= 0)
		close(t->lfd);
	while (t->bufs.next != &t->bufs)
		ng_tcp_buf_release(t->bufs.next);
	free(t->acc.cand);
	free(t->addrs);
	free(t->pfd_peer);
	free(t->pfds);
	free(t->active);
	free(t->peers);
	free(t);
}

/* The module's operations (below). */
static const struct ng_module_ops ng_tcp_ops;

/* Eager: the full mesh, every connection now (tcp.h, step 3). */
static ng_status ng_tcp_mesh(struct ng_tcp *t, const struct ng_tcp_addr *addrs)
{
	int64_t deadline_ms = ng_tcp_deadline(t);
	ng_status st;
	int i;

	for (i = 0; i < t->base.rank; i++) {
		struct ng_tcp_peer *p = &t->peers[i];

		st = ng_tcp_connect(t, i, &addrs[i], true, deadline_ms, &p->own);
		if (st)
			return st;
		p->txfd = p->rxfd = p->own;
		ng_tcp_peer_mark(p);
		t->nconn++;
		t->nopen++;
	}
	st = ng_tcp_accept_all(t, t->lfd, deadline_ms);
	if (st)
		return st;
	close(t->lfd);
	t->lfd = -1;
	t->nconn_open = t->nconn;
	return NG_OK;
}

ng_status ng_tcp_open(const struct ng_module *m, const struct ng_module_env *env, struct ng_comm **comm_p)
{
	struct ng_boot *b = env->boot;
	size_t size = (size_t)b->size;
	struct ng_tcp_addr mine = {0}, *addrs;
	struct ng_tcp_conf *cf;
	ng_status st, lst;
	struct ng_tcp *t;
	uint16_t port = 0;
	size_t i, len;

	t = calloc(1, sizeof(*t));
	if (!t) {
		ng_error("tcp: out of memory");
		return NG_ERR_NOMEM;
	}
	cf = &t->conf;
	t->lfd = -1;
	t->waiting = -1;
	st = ng_tcp_conf_read(env, cf);
	if (st) {
		free(t);
		return st;
	}
	cf->lazy = env->connect_lazy;
	ng_comm_init(&t->base, m, &ng_tcp_ops, b->rank, b->size, env->cancel);
	t->bufs.next = t->bufs.prev = &t->bufs;
	t->timeout_s = env->timeout_s > 0 ? env->timeout_s : 0;
	t->spin = cf->spin;
	t->base.spins = cf->spin;
	t->timeout_ms =
	    t->timeout_s > 0 ? (t->timeout_s * 1e3 >= INT_MAX ? INT_MAX : (int)(t->timeout_s * 1e3)) : -1;
	if (t->timeout_ms == 0 && t->timeout_s > 0)
		t->timeout_ms = 1;
	{
		long pg = sysconf(_SC_PAGESIZE);

		t->page = pg > 64 ? (size_t)pg : 4096;
	}
	/* A few words per rank: the peers' state and the published addresses;
	 * the rest grows with the peers a rank talks to. */
	t->peers = calloc(size, sizeof(*t->peers));
	t->active = calloc(size, sizeof(*t->active));
	t->pfds = calloc(2 * size + 1 + NG_TCP_LAZY_SLOTS, sizeof(*t->pfds));
	t->pfd_peer = calloc(2 * size + 1 + NG_TCP_LAZY_SLOTS, sizeof(*t->pfd_peer));
	addrs = calloc(size, sizeof(*addrs));
	if (!t->peers || !t->active || !t->pfds || !t->pfd_peer || !addrs) {
		ng_error("tcp: out of memory");
		st = NG_ERR_NOMEM;
		goto err_free_addrs;
	}
	for (i = 0; i < size; i++) {
		t->peers[i].txfd = t->peers[i].rxfd = t->peers[i].own = t->peers[i].acc = -1;
		t->peers[i].apos = NG_TCP_NONE;
		t->peers[i].slow = true;
		ng_queue_init(&t->peers[i].sq.q);
		ng_queue_init(&t->peers[i].rq.q);
	}

	if (b->rank == 0) {
		st = ng_tcp_token(&t->token);
		if (st)
			goto err_free_addrs;
	}
	st = ng_boot_bcast(b, 0, &t->token, sizeof(t->token));
	if (st)
		goto err_free_addrs;

	/* Everyone takes part in the exchange, a rank that cannot listen too
	 * (with port 0), so that all ranks fail together. */
	lst = ng_tcp_listen(cf, b->rank, &t->lfd, &port);
	mine.ip = cf->pub.s_addr;
	mine.port = lst ? 0 : htons(port);
	st = ng_boot_allgather(b, &mine, sizeof(mine), addrs);
	if (st || lst) {
		st = st ? st : lst;
		goto err_free_addrs;
	}
	for (i = 0; i < size; i++) {
		if (!addrs[i].port) {
			ng_error("tcp: rank %zu could not listen", i);
			st = NG_ERR_PEER_LOST;
			goto err_free_addrs;
		}
	}

	/* Every address this rank may connect to is one it may connect to
	 * before any connection is made (bootstrap.h: under --server, the
	 * client's own): eager, the lower ranks'; lazy, everyone's. */
	for (i = 0; i < (cf->lazy ? size : (size_t)b->rank); i++) {
		struct in_addr in = {.s_addr = addrs[i].ip};
		char ip[INET_ADDRSTRLEN], what[48];

		if (i == (size_t)b->rank)
			continue;
		if (!inet_ntop(AF_INET, &in, ip, sizeof(ip)))
			snprintf(ip, sizeof(ip), "?");
		snprintf(what, sizeof(what), "the tcp listener of rank %zu", i);
		if (!ng_boot_may_connect(b, ip, what)) {
			st = NG_ERR_PROTO;
			goto err_free_addrs;
		}
	}
	if (cf->lazy) {
		/* Kept: the listener, the addresses, slots for connections
		 * that have not identified themselves yet. */
		t->acc.ncand = NG_TCP_LAZY_SLOTS;
		t->acc.cand = calloc(t->acc.ncand, sizeof(*t->acc.cand));
		if (!t->acc.cand) {
			ng_error("tcp: out of memory");
			st = NG_ERR_NOMEM;
			goto err_free_addrs;
		}
		for (i = 0; i < t->acc.ncand; i++)
			t->acc.cand[i].fd = -1;
		t->addrs = addrs;
		addrs = NULL;
	} else {
		st = ng_tcp_mesh(t, addrs);
		if (st)
			goto err_free_addrs;
		free(addrs);
	}

	len = (size_t)snprintf(t->base.device, sizeof(t->base.device), "tcp %s", cf->pub_str);
	if (cf->sndbuf && len < sizeof(t->base.device))
		len += (size_t)snprintf(t->base.device + len, sizeof(t->base.device) - len, " sndbuf %zu",
		                        cf->sndbuf);
	if (cf->rcvbuf && len < sizeof(t->base.device))
		snprintf(t->base.device + len, sizeof(t->base.device) - len, " rcvbuf %zu", cf->rcvbuf);
	*comm_p = &t->base;
	return NG_OK;

err_free_addrs:
	free(addrs);
	ng_tcp_close(&t->base); /* closes the listener and the peer sockets connected so far */
	return st;
}

/* For the run's watchdog, from its thread (core/module.h, stall): plain
 * counters only. */
static void ng_tcp_stall(struct ng_comm *c, char *buf, size_t len)
{
	const struct ng_tcp *t = (const struct ng_tcp *)c;
	int waiting = t->waiting;
	int n;

	n = snprintf(buf, len,
	             "%zu request%s queued for %zu peer%s, %llu bytes moved in the run, %zu connection%s",
	             t->npending, t->npending == 1 ? "" : "s", t->nactive, t->nactive == 1 ? "" : "s",
	             (unsigned long long)t->moved, t->nconn, t->nconn == 1 ? "" : "s");
	if (waiting >= 0 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", setting up the connection with rank %d", waiting);
}

/* The module's block of the result (rank 0's counters; core/module.h). */
static json_t *ng_tcp_report(struct ng_comm *c)
{
	const struct ng_tcp *t = ng_tcp_of(c);

	return json_pack("{s:s, s:I, s:I, s:I, s:f}", "connect", t->conf.lazy ? "lazy" : "eager",
	                 "connections", (json_int_t)t->nconn, "connections_at_open",
	                 (json_int_t)t->nconn_open, "open", (json_int_t)t->nopen, "connect_ms",
	                 (double)t->connect_ns * 1e-6);
}

static const struct ng_option *const ng_tcp_option_tables[] = {ng_tcp_options, NULL};

static const struct ng_module_ops ng_tcp_ops = {
    .open = ng_tcp_open,
    .close = ng_tcp_close,
    .alloc = ng_tcp_alloc,
    .free = ng_tcp_free,
    .msg = &ng_tcp_msg_ops,
    .report = ng_tcp_report,
    .stall = ng_tcp_stall,
};

const struct ng_module ng_module_tcp = {
    .name = "tcp",
    .desc = "TCP sockets over IPv4, one connection per pair of ranks that talk, made on first use",
    .options = ng_tcp_option_tables,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .max_msg = 0,
    .hdr_bytes = 0,
    .ops = &ng_tcp_ops,
};
