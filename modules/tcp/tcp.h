/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "tcp" module: two-sided messages over a full mesh of TCP connections
 * (IPv4).
 *
 * Connection setup (open, collective):
 *   1. Rank 0 draws a 64-bit run token (getrandom) and broadcasts it over the
 *      bootstrap.
 *   2. Every rank listens on --tcp-bind (default: the bootstrap's address,
 *      127.0.0.1 in a local launch), on an ephemeral port or, with
 *      --tcp-port P, on port P + rank, and publishes (address, port) with
 *      ng_boot_allgather.  A rank that cannot listen publishes port 0, so
 *      every rank fails together instead of waiting for it.
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
 *      Before connecting anywhere, a rank checks every address it is to
 *      connect to with ng_boot_may_connect() (under --server: the client's
 *      own, or one --allow admits) and fails the open with NG_ERR_PROTO when
 *      one is refused: no connection is attempted.
 *
 * Data path: one blocking socket per peer with TCP_NODELAY and SO_KEEPALIVE
 * (--tcp-sndbuf / --tcp-rcvbuf set SO_SNDBUF / SO_RCVBUF when given).  No
 * per-message header: the wire carries exactly the payload, message order is
 * the match and both sides know the length, so a length mismatch between
 * sender and receiver is not detected (NG_ERR_TRUNCATED is never returned);
 * --verify catches it.  Blocking send() is a send(MSG_NOSIGNAL) loop and
 * blocking recv() a recv(MSG_WAITALL) loop: the cost of a minimal ping-pong's
 * write()/read() loop.
 *
 * Non-blocking operations: the request lives in struct ng_req.priv and is
 * queued in its peer's send or receive FIFO (intrusive links).  isend first
 * tries to send at once (MSG_DONTWAIT) when nothing is queued before it;
 * irecv only queues.  test() makes one non-blocking pass over every peer with
 * queued work; wait() does the same and then poll()s the sockets of those
 * peers (POLLOUT for queued sends, POLLIN for queued receives) until its
 * request has completed, so both directions and all peers progress while any
 * one request is waited for.  When all queued work is in the waited request's
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
 * Files: tcp.c the data path and memory; tcp_setup.c connection setup,
 * open and close, the options and the descriptor.  This header is what they
 * share; nothing outside them includes it (the module's interface is
 * core/module.h).
 */
#ifndef NG_MODULES_TCP_H
#define NG_MODULES_TCP_H

#include <assert.h>
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

struct ng_tcp_peer {
	int fd;                     /* -1 for this rank itself and before connecting */
	ng_status err;              /* NG_OK, or why the connection is unusable (reported) */
	struct ng_tcp_queue sq, rq; /* queued sends and receives, in posting order */
	size_t apos;                /* index in ng_tcp.active, NG_TCP_NONE when idle */
};

/* Header in front of every alloc() block; the live blocks form a ring. */
struct ng_tcp_buf {
	struct ng_tcp_buf *prev, *next;
	void *mem; /* what aligned_alloc returned */
	uint64_t magic;
};

struct ng_tcp {
	struct ng_comm base;       /* first: container_of */
	struct ng_tcp_peer *peers; /* [size] */
	int *active;               /* ranks with queued requests, [nactive] */
	size_t nactive;
	size_t npending;     /* queued requests over all peers */
	unsigned char zbyte; /* what a 0-byte message carries on the wire */
	struct pollfd *pfds; /* wait()'s poll set, [size] */
	int *pfd_peer;       /* rank of each pfds entry */
	int timeout_ms;      /* poll timeout, -1 for none */
	double timeout_s;    /* 0 for none */
	bool spin;           /* --tcp-poll spin: never sleep in the kernel */
	uint64_t moved;      /* bytes moved so far (a spinning wait's progress) */
	size_t page;
	struct ng_tcp_buf bufs; /* ring of live alloc() blocks */
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

/* tcp.c: releases an alloc() block (close frees those left). */
void ng_tcp_buf_release(struct ng_tcp_buf *h);
/* The data path (tcp.c): two-sided operations and memory, for the module's
 * descriptor in tcp_setup.c. */
extern const struct ng_msg_ops ng_tcp_msg_ops;
ng_status ng_tcp_alloc(struct ng_comm *c, size_t len, void **buf_p);
void ng_tcp_free(struct ng_comm *c, void *buf);

/* tcp_setup.c: open (collective: the full mesh of connections) and close. */
ng_status ng_tcp_open(const struct ng_module *m, const struct ng_module_env *env, struct ng_comm **comm_p);
void ng_tcp_close(struct ng_comm *c);

#endif
