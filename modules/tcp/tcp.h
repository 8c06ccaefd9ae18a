/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "tcp" module: two-sided messages over TCP connections (IPv4), one per
 * pair of ranks that talk, made on first use (--connect lazy, the default)
 * or all at open (--connect eager).
 *
 * Open (collective, both modes):
 *   1. Rank 0 draws a 64-bit run token (getrandom) and broadcasts it over the
 *      bootstrap.
 *   2. Every rank listens on --tcp-bind (default: the bootstrap's address,
 *      127.0.0.1 in a local launch), on an ephemeral port or, with
 *      --tcp-port P, on port P + rank, and publishes (address, port) with
 *      ng_boot_allgather: 8 bytes per rank.  A rank that cannot listen
 *      publishes port 0, so every rank fails together instead of waiting for
 *      it.  Every address this rank may connect to is checked with
 *      ng_boot_may_connect() (under --server: the client's own, or one
 *      --allow admits) before any connection is made: the open fails with
 *      NG_ERR_PROTO when one is refused.
 *
 * Eager (--connect eager, the full mesh of earlier versions):
 *   3. Rank j connects to every rank i < j and accepts from every rank i > j.
 *      The connecting side sends a 24-byte hello (magic "NGAUGTCP", protocol
 *      version, its rank, the token); the accepting side checks it and
 *      answers with its own hello, which the connecting side checks in turn.
 *      The listener is non-blocking and served with poll(): a connection with
 *      a wrong magic, version, token or rank, or one that has not sent its
 *      hello within 2 s, is closed with one warning (the first 16 by name,
 *      then counted) and accepting goes on, so stray connections and random
 *      bytes cannot disturb the run.  Unidentified connections have 16 slots
 *      beyond the expected ranks'; the listener is served even when all are
 *      taken, and a newcomer then takes the oldest one's slot (closing it),
 *      so that strays cannot keep a rank waiting in the backlog.  The whole
 *      setup is bounded by env->timeout_s (60 s when that is 0).  The
 *      listener is closed once every peer is connected.
 *
 * Lazy (--connect lazy, tcp_conn.c): open ends after step 2 and keeps the
 * listener and the published addresses (8 bytes per rank).
 *   - A send (send, isend) to a rank without a connection connects to its
 *     listener and sends the hello, then the message at once: it never waits
 *     for the peer to accept, so a first send costs what a connect() costs
 *     and needs nothing of the peer (a peer busy elsewhere accepts later).
 *   - The accepting side answers every accepted connection with a hello
 *     (flags in the version word's upper half), read by the connecting side
 *     in front of the first bytes it receives there.
 *   - Receives from a rank whose data may come on a connection not yet
 *     accepted wait by serving the listener (accepting what waits there,
 *     identifying it by its hello, dropping strays as in eager mode) and
 *     reading that answer.  So does a wait() that has such a receive queued.
 *   - Simultaneous connects (each rank sent to the other before accepting
 *     the other's connection) are resolved by rank order: the connection the
 *     lower rank opened is kept.  The higher rank, on accepting it, answers
 *     with the flag NG_TCP_F_DRAIN and moves its sends there once those
 *     queued on its own connection have left, then closes its own; the lower
 *     rank reads the higher one's own connection to its end first (what was
 *     sent before the move), then the kept one.  The lower rank never
 *     writes on the higher one's connection and answers nothing there.
 *   So a pair that talks holds one connection (two for a moment after a
 *   simultaneous connect), and a rank holds a descriptor per peer it talked
 *   to, plus its listener.
 *
 * Data path: one blocking socket per peer with TCP_NODELAY (SO_KEEPALIVE only
 * without a timeout: tcp_conn.c) (--tcp-sndbuf / --tcp-rcvbuf set SO_SNDBUF /
 * SO_RCVBUF when given).  No
 * per-message header: the wire carries exactly the payload, message order is
 * the match and both sides know the length, so a length mismatch between
 * sender and receiver is not detected (NG_ERR_TRUNCATED is never returned);
 * --verify catches it.  Blocking send() is a send(MSG_NOSIGNAL) loop and
 * blocking recv() a recv(MSG_WAITALL) loop: the cost of a minimal ping-pong's
 * write()/read() loop.  A peer whose connection is not settled (none yet, an
 * answer not yet read, a simultaneous connect being resolved) is marked
 * "slow": one predictable branch on the data path sends it to tcp_conn.c.
 *
 * Non-blocking operations: the request lives in struct ng_req.priv and is
 * queued in its peer's send or receive FIFO (intrusive links).  isend first
 * tries to send at once (MSG_DONTWAIT) when nothing is queued before it;
 * irecv only queues.  test() makes one non-blocking pass over every peer with
 * queued work; wait() does the same and then poll()s the sockets of those
 * peers (POLLOUT for queued sends, POLLIN for queued receives; the listener
 * too while a queued receive waits for a connection) until its request has
 * completed, so both directions and all peers progress while any one
 * request is waited for.  When all queued work is in the waited request's
 * own queue, wait() finishes it with plain blocking calls instead (a single
 * isend or irecv plus wait costs what a blocking call costs).  A blocking
 * send/recv issued while anything is queued goes through isend/irecv + wait,
 * so it completes after the operations posted before it.
 *
 * --tcp-poll spin replaces every sleep (a blocking call, poll()) with a loop
 * of MSG_DONTWAIT calls over the same queues: no wake-up latency, one core
 * per rank.  The timeout then counts empty passes' time (the clock is read
 * every 1024th), and the cancel flag is checked on every empty pass.
 *
 * Errors: end of stream, ECONNRESET, EPIPE and the like on a peer's socket
 * are reported once ("connection to rank R lost: ...") and give
 * NG_ERR_PEER_LOST; that peer's queued requests complete with the same status
 * and later operations on it return it at once.  With env->timeout_s > 0 a
 * blocking call (SO_RCVTIMEO/SO_SNDTIMEO) or a wait (poll) that sees no
 * progress for that long gives NG_ERR_TIMEOUT.  EINTR retries unless the
 * cancel flag is set (NG_ERR_CANCELLED); wait() also checks the flag before
 * each poll() or blocking call, the plain blocking send/recv do not (a signal
 * that lands between two of their system calls is seen by the next EINTR,
 * the peer's end of stream, or the timeout).  When test/wait return
 * NG_ERR_CANCELLED or a poll timeout, every queued request is completed with
 * that status: the instance is then only good for close().
 *
 * Files: tcp_data.c the data path and memory; tcp_conn.c the connections (the
 * handshake, connecting, accepting, first use); tcp_setup.c the options,
 * open and close, the report and the descriptor.  This header is what they
 * share; nothing outside them includes it (the module's interface is
 * core/module.h).
 */
#ifndef NG_MODULES_TCP_H
#define NG_MODULES_TCP_H

#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "module.h"
#include "queue.h"
#include "status.h"

#define NG_TCP_NONE SIZE_MAX

/* Per-request state kept in struct ng_req.priv. */
struct ng_tcp_req {
	struct ng_qlink link; /* in its peer's send or receive queue */
	unsigned char *buf;
	size_t len;
	size_t off; /* bytes moved so far */
	int peer;
	bool is_recv;
	bool done; /* completed (status valid); no longer queued */
	ng_status status;
};

static_assert(sizeof(struct ng_tcp_req) <= sizeof(((struct ng_req *)0)->priv),
              "struct ng_tcp_req does not fit in struct ng_req.priv");
static_assert(alignof(struct ng_tcp_req) <= alignof(struct ng_req),
              "struct ng_tcp_req needs more alignment than struct ng_req");

/* A peer's send or receive queue and its length. */
struct ng_tcp_queue {
	struct ng_queue q;
	size_t n;
};

#define NG_TCP_MAGIC     "NGAUGTCP" /* 8 bytes on the wire, no NUL */
#define NG_TCP_VERSION   1u         /* the version word's lower half; the upper half: flags */
#define NG_TCP_F_DRAIN   1u  /* answer: my own connection to you carried messages; read it to its end first */
#define NG_TCP_HELLO_LEN 24u /* magic 8, version and flags 4, rank 4, token 8 */
#define NG_TCP_HELLO_MS  2000 /* an accepted connection must identify itself within this */
#define NG_TCP_SETUP_S   60.0 /* connection deadline when env->timeout_s is 0 */
#define NG_TCP_STRAYS    16   /* unidentified connections served at once beyond the expected ones, */
                              /* and strays warned about by name (then counted) */
#define NG_TCP_LAZY_SLOTS 64  /* unidentified connections served at once in lazy mode */

struct ng_tcp_peer {
	int txfd;       /* sends go here; -1 before the first (which connects) */
	int rxfd;       /* receives come from here; -1 while not known */
	bool slow;      /* not settled: sends or receives go through tcp_conn.c first */
	bool rep_need;  /* own: the peer's answer is still to be read, in front of its data */
	bool tx_switch; /* a simultaneous connect lost: move sends to acc once sq is empty */
	bool drain;     /* rxfd is acc, the higher rank's own connection: read it to its end, then own */
	bool drained;   /* the drain is done */
	uint8_t rep_got;
	int own;                    /* the connection this rank opened, -1 for none */
	int acc;                    /* the connection this rank accepted, -1 for none */
	ng_status err;              /* NG_OK, or why the connection is unusable (reported) */
	struct ng_tcp_queue sq, rq; /* queued sends and receives, in posting order */
	size_t apos;                /* index in ng_tcp.active, NG_TCP_NONE when idle */
	unsigned char rep[NG_TCP_HELLO_LEN];
};

/* Header in front of every alloc() block; the live blocks form a ring. */
struct ng_tcp_buf {
	struct ng_tcp_buf *prev, *next;
	void *mem; /* what aligned_alloc returned */
	uint64_t magic;
};

/* What connecting needs from the options. */
struct ng_tcp_conf {
	struct sockaddr_in bind; /* listen here (port filled per rank) */
	struct in_addr pub;      /* peers connect to this address */
	char pub_str[INET_ADDRSTRLEN];
	int port;              /* base port, 0 for ephemeral */
	size_t sndbuf, rcvbuf; /* 0: system default */
	bool spin;             /* --tcp-poll spin */
	bool lazy;             /* --connect lazy */
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

/* The connections that connect while a rank accepts its peers'. */
struct ng_tcp_accepting {
	struct ng_tcp_cand *cand; /* [ncand] */
	size_t ncand;
	size_t nconn;    /* peers identified so far */
	uint64_t serial; /* connections accepted so far */
	size_t dropped;  /* strays closed so far; the first NG_TCP_STRAYS are named */
};

struct ng_tcp {
	struct ng_comm base;       /* first: container_of */
	struct ng_tcp_peer *peers; /* [size] */
	int *active;               /* ranks with queued requests, [nactive] */
	size_t nactive;
	size_t npending;     /* queued requests over all peers */
	unsigned char zbyte; /* what a 0-byte message carries on the wire */
	struct pollfd *pfds; /* wait()'s poll set, [2 size + 1 + NG_TCP_LAZY_SLOTS] */
	int *pfd_peer;       /* rank of each pfds entry, -1 for the listener's */
	int timeout_ms;      /* poll timeout, -1 for none */
	double timeout_s;    /* 0 for none */
	bool spin;           /* --tcp-poll spin: never sleep in the kernel */
	uint64_t moved;      /* bytes moved so far (a spinning wait's progress) */
	size_t page;
	struct ng_tcp_buf bufs; /* ring of live alloc() blocks */
	/* Connections (tcp_conn.c). */
	struct ng_tcp_conf conf;
	uint64_t token;
	int lfd;                     /* the listener (lazy), -1 once closed */
	struct ng_tcp_addr *addrs;   /* [size], the published listeners (lazy) */
	struct ng_tcp_accepting acc; /* unidentified accepted connections (lazy) */
	size_t nconn;                /* connections opened or accepted and kept */
	size_t nconn_open;           /* of them, made at open (eager) */
	size_t nopen;                /* data sockets open now */
	uint64_t connect_ns;         /* time spent opening connections on first use */
	volatile int waiting;        /* the rank whose connection this rank waits for, -1: none */
};

static inline struct ng_tcp *ng_tcp_of(struct ng_comm *c)
{
	return ng_container_of(c, struct ng_tcp, base);
}

static inline struct ng_tcp_req *ng_tcp_req_of(struct ng_req *r)
{
	return (struct ng_tcp_req *)(void *)r->priv;
}

static inline bool ng_tcp_cancelled(const struct ng_tcp *t)
{
	return t->base.cancel && *t->base.cancel;
}

/* The oldest request of @q, NULL when empty. */
static inline struct ng_tcp_req *ng_tcp_head(const struct ng_tcp_queue *q)
{
	struct ng_qlink *n = ng_queue_first(&q->q);

	return n ? NG_QUEUE_ENTRY(n, struct ng_tcp_req, link) : NULL;
}

static inline int ng_tcp_rank_of(const struct ng_tcp *t, const struct ng_tcp_peer *p)
{
	return (int)(p - t->peers);
}

static inline int64_t ng_tcp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline uint64_t ng_tcp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* tcp_data.c: releases an alloc() block (close frees those left). */
void ng_tcp_buf_release(struct ng_tcp_buf *h);
/* The data path (tcp_data.c): two-sided operations and memory, for the module's
 * descriptor in tcp_setup.c. */
extern const struct ng_msg_ops ng_tcp_msg_ops;
ng_status ng_tcp_alloc(struct ng_comm *c, size_t len, void **buf_p);
void ng_tcp_free(struct ng_comm *c, void *buf);

/* ---- tcp_conn.c: connections --------------------------------------- */

/* The hello of @rank with @flags and @token into @h (NG_TCP_HELLO_LEN). */
void ng_tcp_hello_pack(unsigned char *h, int rank, unsigned flags, uint64_t token);
/* NULL when @h is a good hello of this run, else why not; *rank_p and
 * *flags_p get the sender's rank and flags. */
const char *ng_tcp_hello_check(const unsigned char *h, uint64_t token, uint32_t *rank_p, unsigned *flags_p);
/* "ADDR:PORT" of @sin into @buf. */
void ng_tcp_sockname(const struct sockaddr_in *sin, char *buf, size_t len);
/* SO_SNDBUF / SO_RCVBUF of the options on @fd. */
ng_status ng_tcp_set_bufs(int fd, const struct ng_tcp_conf *cf);
/* Turns an identified connection into a data socket of @peer (blocking,
 * TCP_NODELAY, keep-alive, the timeouts); does not install it. */
ng_status ng_tcp_data_socket(struct ng_tcp *t, int fd, int peer);
/* Milliseconds left until @deadline_ms, 0 when past. */
int ng_tcp_ms_left(int64_t deadline_ms);
/* The deadline of a connection made now. */
int64_t ng_tcp_deadline(const struct ng_tcp *t);
/*
 * Connects to @peer's listener at @a and sends the hello.  @answer: wait for
 * the peer's answer and check it (eager); else return at once with the
 * socket, the answer to be read later (lazy).  *fd_p: the data socket.
 * Errors reported.
 */
ng_status ng_tcp_connect(struct ng_tcp *t, int peer, const struct ng_tcp_addr *a, bool answer,
                         int64_t deadline_ms, int *fd_p);
/* Reads from unidentified connection @k; installs it when it identifies a
 * rank: eager (@lazy false) only a higher rank not yet connected, lazy any
 * other rank (the rules of first use).  NG_OK or a fatal error. */
ng_status ng_tcp_cand_read(struct ng_tcp *t, struct ng_tcp_accepting *ac, struct ng_tcp_cand *k, bool lazy);
/* Accepts what waits on @lfd into the free slots of @ac (the oldest earlier
 * one makes room when all are taken), reading each one's hello at once. */
ng_status ng_tcp_accept_pass(struct ng_tcp *t, struct ng_tcp_accepting *ac, int lfd, bool lazy, size_t nexp);
void ng_tcp_cand_drop(struct ng_tcp_accepting *ac, struct ng_tcp_cand *k, const char *why);
/* Closes every unidentified connection of @ac and says how many strays were
 * dropped beyond those named. */
void ng_tcp_accepting_close(struct ng_tcp_accepting *ac);

/* First use (lazy).  Each returns NG_OK, NG_ERR_CANCELLED, or the peer's
 * error (reported; the peer is then marked down by the caller's path). */
/* Makes @p's send connection ready: connects on the first send, moves sends
 * to the kept connection after a lost simultaneous connect once @p's queued
 * sends have left. */
ng_status ng_tcp_tx_ready(struct ng_tcp *t, struct ng_tcp_peer *p);
/* One non-blocking step towards knowing where @p's messages arrive: serves
 * the listener, reads @p's answer.  The peer is settled for receiving when
 * ng_tcp_rx_ok(). */
ng_status ng_tcp_rx_step(struct ng_tcp *t, struct ng_tcp_peer *p);
/* The same until settled, asleep in poll() (or spinning), bounded by the
 * timeout. */
ng_status ng_tcp_rx_settle(struct ng_tcp *t, struct ng_tcp_peer *p);
/* End of stream on a drained connection: continue on the kept one. */
void ng_tcp_rx_drained(struct ng_tcp *t, struct ng_tcp_peer *p);
/* Serves the listener once, without blocking. */
ng_status ng_tcp_serve(struct ng_tcp *t);
/* The descriptors poll() watches for a receive that waits for a connection
 * (the listener, the unidentified connections) into @pfds; their count. */
size_t ng_tcp_listen_fds(const struct ng_tcp *t, struct pollfd *pfds);

/* Whether receives from @p may read rxfd. */
static inline bool ng_tcp_rx_ok(const struct ng_tcp_peer *p)
{
	return p->rxfd >= 0 && !(p->rxfd == p->own && p->rep_need);
}

/* Recomputes @p's slow mark after a change of its connections. */
static inline void ng_tcp_peer_mark(struct ng_tcp_peer *p)
{
	p->slow = p->txfd < 0 || p->tx_switch || !ng_tcp_rx_ok(p);
}

/* tcp_setup.c: open (collective) and close. */
ng_status ng_tcp_open(const struct ng_module *m, const struct ng_module_env *env, struct ng_comm **comm_p);
void ng_tcp_close(struct ng_comm *c);

#endif
