/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-host bootstrap without MPI: --server on one host, --client HOST on the
 * other.  One TCP connection carries the collectives.  The server cannot
 * trust what arrives on it (doc/security.md), so:
 *
 * - The handshake (protocol 2, below) is read by the server's parent
 *   process without blocking, many connections at once (core/server.c), each
 *   with a deadline from its accept: a silent or trickling peer is dropped,
 *   and holds nobody up.  With --auth both sides prove the shared key over
 *   fresh nonces (core/auth.h) before the client's arguments are read.
 * - Every length on the wire is bounded before it is used (the arguments at
 *   64 KiB, a refusal's text at 512 bytes, an exchange's length must equal
 *   this rank's own), and every read and write of the bootstrap has a
 *   deadline: the server's --timeout on its side.  TCP keepalive finds a
 *   peer whose host vanished.
 * - With --auth every frame after the handshake carries an HMAC over its
 *   direction, sequence number and bytes: a frame altered or replayed on the
 *   path fails the run.
 *
 * Protocol 2, all integers big-endian:
 *   client hello   "NGBOOT01" u32 version=2, u32 flags (1: has a key), nonce[32]
 *   server answer  "NGBOOT01" u32 version, u32 flags (1: asks for the key),
 *                  nonce[32], [mac("server", cnonce, snonce)]
 *                  or a refusal: "NGNOPE01" u32 len, text
 *   client proof   [mac("client", snonce, cnonce)]
 *   client args    u32 len (1 .. 64 KiB), NUL-separated arguments,
 *                  [mac("args", snonce, cnonce, seq 0)]
 *   then one of    "NGBUSY01" (serving another client), a refusal, or the
 *                  verdict of the server's child once it parsed the run:
 *                  "NGBOOT01" u32 code (0: runs; 2 usage; 1 failed),
 *                  u32 len (0 .. 512), text, [mac("verdict", ..., seq 0)]
 *   frames         u64 len, bytes, [mac("c>s" or "s>c", ..., seq)]
 * Allgather with two ranks: each side sends its frame, then reads the
 * other's, whose length must be its own.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "cancel.h"
#include "fdio.h"
#include "launch.h"
#include "peer.h"

#define BOOT_MAGIC   "NGBOOT01"
#define BUSY_MAGIC   "NGBUSY01" /* the server's answer while it serves another client */
#define REFUSE_MAGIC "NGNOPE01" /* a refusal with its reason */
#define PROTO        2u
#define FLAG_KEY     1u
#define HELLO_LEN    48 /* magic, version, flags, nonce */
#define ARGS_MAX     (64 * 1024)
#define TEXT_MAX     512

struct boot_tcp {
	struct ng_boot base;
	int fd;
	int timeout_ms; /* every read and write of the bootstrap */
	struct ng_auth auth;
	unsigned char snonce[NG_AUTH_NONCE], cnonce[NG_AUTH_NONCE];
	uint64_t seq_out, seq_in;
};

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Keepalive finds a peer whose host is gone while nothing is sent. */
static void sock_tune(int fd, int timeout_ms)
{
	int one = 1, idle = timeout_ms / 1000 > 1 ? timeout_ms / 1000 : 1, intvl = 2, cnt = 3;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* The direction labels of the frames' MACs. */
static const char *dir_label(int rank, bool out)
{
	return (rank == 0) == out ? "c>s" : "s>c";
}

static ng_status tcp_send(struct boot_tcp *t, const void *buf, size_t len)
{
	unsigned char head[8], mac[NG_AUTH_MAC];

	put64(head, len);
	if (ng_fd_write_all_timeout(t->fd, head, sizeof(head), t->timeout_ms) ||
	    ng_fd_write_all_timeout(t->fd, buf, len, t->timeout_ms))
		return NG_ERR_PEER_LOST;
	if (t->auth.on) {
		ng_auth_mac(&t->auth, dir_label(t->base.rank, true), t->snonce, t->cnonce, t->seq_out++, buf,
		            len, mac);
		if (ng_fd_write_all_timeout(t->fd, mac, sizeof(mac), t->timeout_ms))
			return NG_ERR_PEER_LOST;
	}
	return NG_OK;
}

static ng_status tcp_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	struct boot_tcp *t = (struct boot_tcp *)b;
	unsigned char head[8], mac[NG_AUTH_MAC];
	char *dst = all, *theirs = dst + (size_t)(1 - b->rank) * len;
	size_t tl;
	ng_status st;
	int rc;

	st = tcp_send(t, mine, len);
	if (st)
		goto err_lost;
	rc = ng_fd_read_all_timeout(t->fd, head, sizeof(head), t->timeout_ms);
	if (rc)
		goto err_read;
	/* The exchange's length is this rank's own, or the peer is off. */
	if (ng_peer_len("bootstrap exchange length", 1 - b->rank, get64(head), len, len, &tl))
		return NG_ERR_PROTO;
	memcpy(dst + (size_t)b->rank * len, mine, len);
	rc = ng_fd_read_all_timeout(t->fd, theirs, len, t->timeout_ms);
	if (rc)
		goto err_read;
	if (t->auth.on) {
		rc = ng_fd_read_all_timeout(t->fd, mac, sizeof(mac), t->timeout_ms);
		if (rc)
			goto err_read;
		if (!ng_auth_check(&t->auth, dir_label(b->rank, false), t->snonce, t->cnonce, t->seq_in++,
		                   theirs, len, mac))
			return ng_peer_bad("bootstrap frame", 1 - b->rank,
			                   "its MAC does not match the --auth key");
	}
	return NG_OK;
err_read:
	if (rc < 0 && errno == ETIMEDOUT && !ng_cancel_requested()) {
		ng_error("bootstrap: rank %d was silent for %.0f s (--timeout): dropped", 1 - b->rank,
		         t->timeout_ms / 1000.0);
		return NG_ERR_PEER_LOST;
	}
err_lost:
	if (ng_cancel_requested())
		return NG_ERR_CANCELLED;
	ng_error("bootstrap: connection to rank %d lost", 1 - b->rank);
	return NG_ERR_PEER_LOST;
}

static ng_status tcp_barrier(struct ng_boot *b)
{
	char d = 0;
	return tcp_allgather(b, &d, 0, &d);
}

static void tcp_fini(struct ng_boot *b)
{
	struct boot_tcp *t = (struct boot_tcp *)b;
	close(t->fd);
	ng_auth_clear(&t->auth);
	free(t);
}

/* No .abort: the peer sees the connection close (bootstrap.h). */
static const struct ng_boot_ops tcp_boot_ops = {
    .name = "tcp",
    .barrier = tcp_barrier,
    .allgather = tcp_allgather,
    .fini = tcp_fini,
};

static struct boot_tcp *boot_new(int fd, int rank, double timeout_s)
{
	struct boot_tcp *t = calloc(1, sizeof(*t));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (!t) {
		ng_error("out of memory");
		return NULL;
	}
	t->base.ops = &tcp_boot_ops;
	t->base.rank = rank;
	t->base.size = 2;
	t->fd = fd;
	t->timeout_ms = timeout_s * 1000 < 1     ? 1
	                : timeout_s * 1000 > 1e9 ? 1000000000
	                                         : (int)(timeout_s * 1000);
	sock_tune(fd, t->timeout_ms);
	gethostname(t->base.host, sizeof(t->base.host) - 1);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, t->base.addr, sizeof(t->base.addr), NULL, 0,
		            NI_NUMERICHOST);
	return t;
}

ng_status ng_boot_tcp_listen(const char *bind_addr, int port, int *lfd_p)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE},
	                *ai = NULL;
	char portstr[16];
	int lfd, one = 1, rc;

	snprintf(portstr, sizeof(portstr), "%d", port);
	rc = getaddrinfo(bind_addr, portstr, &hints, &ai);
	if (rc) {
		ng_error("--server: cannot resolve '%s': %s", bind_addr ? bind_addr : "*", gai_strerror(rc));
		return NG_ERR_USAGE;
	}
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0) {
		ng_error("--server: socket: %s", strerror(errno));
		freeaddrinfo(ai);
		return NG_ERR_SYS;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 128)) {
		ng_error("--server: cannot listen on port %d: %s", port, strerror(errno));
		close(lfd);
		freeaddrinfo(ai);
		return NG_ERR_SYS;
	}
	freeaddrinfo(ai);
	*lfd_p = lfd;
	return NG_OK;
}

/* ---- the server's side of a handshake (its parent process) ---- */

enum hs_state { HS_HELLO, HS_PROOF, HS_ARGLEN, HS_ARGS, HS_DONE };

struct ng_boot_tcp_hs {
	int fd;
	char peer[64];
	const struct ng_auth *auth; /* NULL or not on: no key asked */
	enum hs_state state;
	unsigned char *buf; /* what the current state reads */
	size_t have, need;
	unsigned char head[HELLO_LEN];
	unsigned char cnonce[NG_AUTH_NONCE], snonce[NG_AUTH_NONCE];
	char *args; /* HS_DONE: the arguments, NUL-terminated, args_len bytes */
	size_t args_len;
};

struct ng_boot_tcp_hs *ng_boot_tcp_hs_new(int fd, const char *peer, const struct ng_auth *auth)
{
	struct ng_boot_tcp_hs *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->fd = fd;
	snprintf(h->peer, sizeof(h->peer), "%s", peer);
	h->auth = auth && auth->on ? auth : NULL;
	h->state = HS_HELLO;
	h->buf = h->head;
	h->need = HELLO_LEN;
	return h;
}

int ng_boot_tcp_hs_fd(const struct ng_boot_tcp_hs *h)
{
	return h->fd;
}

const char *ng_boot_tcp_hs_peer(const struct ng_boot_tcp_hs *h)
{
	return h->peer;
}

void ng_boot_tcp_hs_free(struct ng_boot_tcp_hs *h)
{
	if (!h)
		return;
	if (h->fd >= 0)
		close(h->fd);
	free(h->args);
	free(h);
}

/* Tells the peer why (best effort: it may be gone) and keeps the reason. */
static void hs_refuse(struct ng_boot_tcp_hs *h, const char *text)
{
	unsigned char msg[8 + 4 + TEXT_MAX];
	size_t n = strnlen(text, TEXT_MAX);

	memcpy(msg, REFUSE_MAGIC, 8);
	put32(msg + 8, (uint32_t)n);
	memcpy(msg + 12, text, n);
	(void)send(h->fd, msg, 12 + n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static int hs_fail(struct ng_boot_tcp_hs *h, char *why, size_t whylen, bool tell, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int hs_fail(struct ng_boot_tcp_hs *h, char *why, size_t whylen, bool tell, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	if (tell)
		hs_refuse(h, why);
	return -1;
}

/* The state that follows a complete read. */
static int hs_advance(struct ng_boot_tcp_hs *h, char *why, size_t whylen)
{
	switch (h->state) {
	case HS_HELLO: {
		unsigned char ans[HELLO_LEN + NG_AUTH_MAC];
		uint32_t ver = get32(h->head + 8), flags = get32(h->head + 12);
		size_t n = HELLO_LEN;

		if (memcmp(h->head, BOOT_MAGIC, 8) != 0)
			return hs_fail(h, why, whylen, false, "not an ngauge client");
		if (ver != PROTO)
			return hs_fail(
			    h, why, whylen, true,
			    "the client speaks bootstrap protocol %u, this server %u (another ngauge "
			    "version)",
			    ver, PROTO);
		if (!h->auth && (flags & FLAG_KEY))
			return hs_fail(
			    h, why, whylen, true,
			    "the client has a key (--auth), but this server was started without one");
		memcpy(h->cnonce, h->head + 16, NG_AUTH_NONCE);
		ng_auth_nonce(h->snonce);
		memcpy(ans, BOOT_MAGIC, 8);
		put32(ans + 8, PROTO);
		put32(ans + 12, h->auth ? FLAG_KEY : 0);
		memcpy(ans + 16, h->snonce, NG_AUTH_NONCE);
		if (h->auth) {
			ng_auth_mac(h->auth, "server", h->cnonce, h->snonce, 0, NULL, 0, ans + HELLO_LEN);
			n += NG_AUTH_MAC;
		}
		if (send(h->fd, ans, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)n)
			return hs_fail(h, why, whylen, false, "went away during the handshake");
		if (h->auth && !(flags & FLAG_KEY)) {
			/* it learns that a key is asked for from our answer, and leaves */
			return hs_fail(h, why, whylen, false, "has no key (--auth)");
		}
		h->state = h->auth ? HS_PROOF : HS_ARGLEN;
		h->need = h->auth ? NG_AUTH_MAC : 4;
		break;
	}
	case HS_PROOF:
		if (!ng_auth_check(h->auth, "client", h->snonce, h->cnonce, 0, NULL, 0, h->head))
			return hs_fail(h, why, whylen, true,
			               "authentication failed: the client's key is not this server's");
		h->state = HS_ARGLEN;
		h->need = 4;
		break;
	case HS_ARGLEN: {
		uint32_t len = get32(h->head);

		if (len < 1 || len > ARGS_MAX)
			return hs_fail(h, why, whylen, true, "sent an argument list of %u bytes (1 .. %d)",
			               len, ARGS_MAX);
		h->args_len = len;
		h->args = malloc(len + NG_AUTH_MAC + 1);
		if (!h->args)
			return hs_fail(h, why, whylen, false, "out of memory");
		h->buf = (unsigned char *)h->args;
		h->have = 0;
		h->need = len + (h->auth ? NG_AUTH_MAC : 0);
		h->state = HS_ARGS;
		return 0;
	}
	case HS_ARGS:
		if (h->auth && !ng_auth_check(h->auth, "args", h->snonce, h->cnonce, 0, h->args, h->args_len,
		                              (unsigned char *)h->args + h->args_len))
			return hs_fail(h, why, whylen, true,
			               "its arguments do not carry the --auth key's MAC");
		h->args[h->args_len] = '\0';
		if (h->args[h->args_len - 1] != '\0')
			return hs_fail(h, why, whylen, true,
			               "sent an argument list that does not end in NUL");
		h->state = HS_DONE;
		return 1;
	case HS_DONE:
		return 1;
	}
	h->buf = h->head;
	h->have = 0;
	return 0;
}

int ng_boot_tcp_hs_step(struct ng_boot_tcp_hs *h, char *why, size_t whylen)
{
	while (h->state != HS_DONE) {
		ssize_t n = recv(h->fd, h->buf + h->have, h->need - h->have, MSG_DONTWAIT);
		int rc;

		if (n == 0)
			return hs_fail(h, why, whylen, false, "closed the connection during the handshake");
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return hs_fail(h, why, whylen, false, "connection error during the handshake: %s",
			               strerror(errno));
		}
		h->have += (size_t)n;
		if (h->have < h->need)
			continue;
		rc = hs_advance(h, why, whylen);
		if (rc)
			return rc;
	}
	return 1;
}

void ng_boot_tcp_hs_busy(struct ng_boot_tcp_hs *h)
{
	(void)send(h->fd, BUSY_MAGIC, 8, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void ng_boot_tcp_hs_refuse(struct ng_boot_tcp_hs *h, const char *text)
{
	hs_refuse(h, text);
}

ng_status ng_boot_tcp_hs_welcome(struct ng_boot_tcp_hs *h, double timeout_s, const struct ng_allow *allow,
                                 struct ng_boot **b_p, const char **args_p, size_t *len_p)
{
	struct boot_tcp *t;
	int flags = fcntl(h->fd, F_GETFL);

	if (flags >= 0)
		fcntl(h->fd, F_SETFL, flags & ~O_NONBLOCK);
	t = boot_new(h->fd, 1, timeout_s);
	if (!t)
		return NG_ERR_NOMEM;
	h->fd = -1; /* the bootstrap's now */
	snprintf(t->base.peer_addr, sizeof(t->base.peer_addr), "%s", h->peer);
	t->base.allow = allow;
	if (h->auth)
		t->auth = *h->auth;
	memcpy(t->snonce, h->snonce, NG_AUTH_NONCE);
	memcpy(t->cnonce, h->cnonce, NG_AUTH_NONCE);
	*b_p = &t->base;
	*args_p = h->args;
	*len_p = h->args_len;
	return NG_OK;
}

ng_status ng_boot_tcp_verdict(struct ng_boot *b, int code, const char *text)
{
	struct boot_tcp *t = (struct boot_tcp *)b;
	unsigned char msg[8 + 4 + 4 + TEXT_MAX + NG_AUTH_MAC];
	size_t n = text ? strnlen(text, TEXT_MAX) : 0;

	memcpy(msg, BOOT_MAGIC, 8);
	put32(msg + 8, (uint32_t)code);
	put32(msg + 12, (uint32_t)n);
	memcpy(msg + 16, text ? text : "", n);
	if (t->auth.on)
		ng_auth_mac(&t->auth, "verdict", t->snonce, t->cnonce, 0, msg + 8, 8 + n, msg + 16 + n);
	if (ng_fd_write_all_timeout(t->fd, msg, 16 + n + (t->auth.on ? NG_AUTH_MAC : 0), t->timeout_ms)) {
		ng_error("--server: the client went away before it heard the server's answer");
		return NG_ERR_PEER_LOST;
	}
	return NG_OK;
}

/* ---- the client ---- */

/* A peer's text made one printable ASCII line (it reaches a terminal). */
static void printable(char *text)
{
	for (unsigned char *p = (unsigned char *)text; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

/* Reads a refusal's text after its magic: bounded, printable. */
static void read_refusal(int fd, int ms, char *text, size_t len)
{
	unsigned char l[4];
	size_t n;

	text[0] = '\0';
	if (ng_fd_read_all_timeout(fd, l, 4, ms) || get32(l) > TEXT_MAX || get32(l) >= len)
		return;
	n = get32(l);
	if (ng_fd_read_all_timeout(fd, text, n, ms))
		n = 0;
	text[n] = '\0';
	printable(text);
}

static int connect_retry(const char *host, int port, double timeout_s)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	char portstr[16];
	int fd = -1, rc;
	struct timespec t0;

	snprintf(portstr, sizeof(portstr), "%d", port);
	rc = getaddrinfo(host, portstr, &hints, &ai);
	if (rc) {
		ng_error("--client: cannot resolve '%s': %s", host, gai_strerror(rc));
		return -2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The server may start a moment later: retry until the timeout. */
	for (;;) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			ng_error("--client: socket: %s", strerror(errno));
			break;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		int err = errno;
		close(fd);
		fd = -1;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ng_cancel_requested() || (double)(now.tv_sec - t0.tv_sec) >= timeout_s) {
			ng_error("--client: cannot connect to %s:%d: %s", host, port, strerror(err));
			break;
		}
		struct timespec d = {0, 100000000};
		nanosleep(&d, NULL);
	}
	freeaddrinfo(ai);
	return fd;
}

ng_status ng_boot_tcp_client(const char *host, int port, double timeout_s, const struct ng_auth *auth,
                             const char *args, size_t len, struct ng_boot **b_p)
{
	unsigned char hello[HELLO_LEN], ans[HELLO_LEN + NG_AUTH_MAC], mac[NG_AUTH_MAC], l[4], v[8];
	char text[TEXT_MAX + 1] = "";
	struct boot_tcp *t;
	bool keyed = auth && auth->on;
	int fd, ms;
	uint32_t code, tl;

	if (len < 1 || len > ARGS_MAX) {
		ng_error("--client: the command line is %zu bytes; the server reads at most %d", len,
		         ARGS_MAX);
		return NG_ERR_USAGE;
	}
	fd = connect_retry(host, port, timeout_s);
	if (fd < 0)
		return fd == -2 ? NG_ERR_USAGE : NG_ERR_PEER_LOST;
	t = boot_new(fd, 0, timeout_s);
	if (!t) {
		close(fd);
		return NG_ERR_NOMEM;
	}
	ms = t->timeout_ms;
	if (keyed)
		t->auth = *auth;
	ng_auth_nonce(t->cnonce);
	memcpy(hello, BOOT_MAGIC, 8);
	put32(hello + 8, PROTO);
	put32(hello + 12, keyed ? FLAG_KEY : 0);
	memcpy(hello + 16, t->cnonce, NG_AUTH_NONCE);
	if (ng_fd_write_all_timeout(fd, hello, sizeof(hello), ms) || ng_fd_read_all_timeout(fd, ans, 8, ms))
		goto err_silent;
	if (memcmp(ans, REFUSE_MAGIC, 8) == 0)
		goto err_refused;
	if (memcmp(ans, BOOT_MAGIC, 8) != 0 || ng_fd_read_all_timeout(fd, ans + 8, HELLO_LEN - 8, ms))
		goto err_silent;
	if (get32(ans + 8) != PROTO) {
		ng_error(
		    "--client: the server at %s:%d speaks bootstrap protocol %u, this client %u (another "
		    "ngauge version)",
		    host, port, get32(ans + 8), PROTO);
		goto err_close;
	}
	if ((get32(ans + 12) & FLAG_KEY) && !keyed) {
		ng_error("--client: the server at %s:%d asks for a key: give --auth FILE", host, port);
		goto err_usage;
	}
	if (!(get32(ans + 12) & FLAG_KEY) && keyed) {
		ng_error("--client: the server at %s:%d was started without --auth and cannot prove the key",
		         host, port);
		goto err_usage;
	}
	memcpy(t->snonce, ans + 16, NG_AUTH_NONCE);
	if (keyed) {
		if (ng_fd_read_all_timeout(fd, ans + HELLO_LEN, NG_AUTH_MAC, ms))
			goto err_silent;
		if (!ng_auth_check(auth, "server", t->cnonce, t->snonce, 0, NULL, 0, ans + HELLO_LEN)) {
			ng_error(
			    "--client: the server at %s:%d does not have this key (--auth): nothing sent",
			    host, port);
			goto err_usage;
		}
		ng_auth_mac(auth, "client", t->snonce, t->cnonce, 0, NULL, 0, mac);
		if (ng_fd_write_all_timeout(fd, mac, sizeof(mac), ms))
			goto err_silent;
	}
	put32(l, (uint32_t)len);
	if (ng_fd_write_all_timeout(fd, l, 4, ms) || ng_fd_write_all_timeout(fd, args, len, ms))
		goto err_silent;
	if (keyed) {
		ng_auth_mac(auth, "args", t->snonce, t->cnonce, 0, args, len, mac);
		if (ng_fd_write_all_timeout(fd, mac, sizeof(mac), ms))
			goto err_silent;
	}
	/* The answer: busy, refused, or the verdict of the child that parsed the run. */
	if (ng_fd_read_all_timeout(fd, ans, 8, ms))
		goto err_silent;
	if (memcmp(ans, BUSY_MAGIC, 8) == 0) {
		ng_error("--client: the server at %s:%d is busy with another client", host, port);
		goto err_close;
	}
	if (memcmp(ans, REFUSE_MAGIC, 8) == 0)
		goto err_refused;
	if (memcmp(ans, BOOT_MAGIC, 8) != 0 || ng_fd_read_all_timeout(fd, v, 8, ms))
		goto err_silent;
	code = get32(v);
	tl = get32(v + 4);
	if (tl > TEXT_MAX || code > 255) {
		(void)ng_peer_bad("verdict", 1, "its length or code is out of range");
		goto err_close;
	}
	if (ng_fd_read_all_timeout(fd, text, tl, ms))
		goto err_silent;
	text[tl] = '\0';
	if (keyed) {
		unsigned char signed_part[8 + TEXT_MAX];

		memcpy(signed_part, v, 8);
		memcpy(signed_part + 8, text, tl);
		if (ng_fd_read_all_timeout(fd, mac, sizeof(mac), ms))
			goto err_silent;
		if (!ng_auth_check(auth, "verdict", t->snonce, t->cnonce, 0, signed_part, 8 + tl, mac)) {
			(void)ng_peer_bad("verdict", 1, "its MAC does not match the --auth key");
			goto err_close;
		}
	}
	if (code) {
		printable(text);
		ng_error("--client: the server at %s:%d refused the run: %s", host, port,
		         tl ? text : "(no reason given)");
		tcp_fini(&t->base);
		return code == 2 ? NG_ERR_USAGE : NG_ERR_PROTO;
	}
	*b_p = &t->base;
	return NG_OK;
err_refused:
	read_refusal(fd, ms, text, sizeof(text));
	ng_error("--client: the server at %s:%d refused the connection: %s", host, port,
	         text[0] ? text : "(no reason given)");
	tcp_fini(&t->base);
	return NG_ERR_USAGE;
err_silent:
	if (ng_cancel_requested()) {
		tcp_fini(&t->base);
		return NG_ERR_CANCELLED;
	}
	ng_error("--client: %s:%d did not answer as an ngauge server%s", host, port,
	         errno == ETIMEDOUT ? " (no answer within --timeout)" : "");
err_close:
	tcp_fini(&t->base);
	return NG_ERR_PROTO;
err_usage:
	tcp_fini(&t->base);
	return NG_ERR_USAGE;
}
