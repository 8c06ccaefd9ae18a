/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "tcp" module (tcp.h): the data path (queues, transfers, progress,
 * the module's operations) and memory.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "module.h"
#include "modules/tcp/tcp.h"
#include "options.h"
#include "queue.h"
#include "status.h"

extern const struct ng_module ng_module_tcp;

#define NG_TCP_BUF_MAGIC 0x6e67746370627566ull

/* ---- queues ---------------------------------------------------------- */

static void ng_tcp_activate(struct ng_tcp *t, struct ng_tcp_peer *p)
{
	if (p->apos != NG_TCP_NONE)
		return;
	p->apos = t->nactive;
	t->active[t->nactive++] = ng_tcp_rank_of(t, p);
}

static void ng_tcp_deactivate(struct ng_tcp *t, struct ng_tcp_peer *p)
{
	int last;

	if (p->apos == NG_TCP_NONE || p->sq.n || p->rq.n)
		return;
	last = t->active[--t->nactive];
	t->active[p->apos] = last;
	t->peers[last].apos = p->apos;
	p->apos = NG_TCP_NONE;
}

static void ng_tcp_enqueue(struct ng_tcp *t, struct ng_tcp_peer *p, struct ng_tcp_req *r)
{
	struct ng_tcp_queue *q = r->is_recv ? &p->rq : &p->sq;

	ng_queue_push(&q->q, &r->link);
	q->n++;
	t->npending++;
	ng_tcp_activate(t, p);
}

/* Removes the head of @q and completes it with @st. */
static void ng_tcp_complete(struct ng_tcp *t, struct ng_tcp_peer *p, struct ng_tcp_queue *q, ng_status st)
{
	struct ng_tcp_req *r = NG_QUEUE_ENTRY(ng_queue_pop(&q->q), struct ng_tcp_req, link);

	q->n--;
	t->npending--;
	r->status = st;
	r->done = true;
	ng_tcp_deactivate(t, p);
}

/* Completes every queued request of @p with @st. */
static void ng_tcp_drop(struct ng_tcp *t, struct ng_tcp_peer *p, ng_status st)
{
	while (p->sq.n)
		ng_tcp_complete(t, p, &p->sq, st);
	while (p->rq.n)
		ng_tcp_complete(t, p, &p->rq, st);
}

/* Completes every queued request of every peer with @st (cancel, timeout). */
static void ng_tcp_abandon(struct ng_tcp *t, ng_status st)
{
	while (t->nactive)
		ng_tcp_drop(t, &t->peers[t->active[t->nactive - 1]], st);
}

/* ---- data path ------------------------------------------------------- */

/*
 * Reports why the connection to @p failed (cold path), marks the peer down and
 * completes its queued requests.  @err: errno, 0 for end of stream, EAGAIN for
 * a blocking call that timed out.  Once the cancel flag is set, the loss is
 * the peer's reaction to the same signal: NG_ERR_CANCELLED, not reported.
 */
static ng_status __attribute__((noinline, cold))
ng_tcp_fail(struct ng_tcp *t, struct ng_tcp_peer *p, const char *op, int err)
{
	int peer = ng_tcp_rank_of(t, p);
	ng_status st;

	/* After SIGINT/SIGTERM a peer that ends first is no news. */
	if (ng_tcp_cancelled(t)) {
		st = NG_ERR_CANCELLED;
		goto out_down;
	}
	switch (err) {
	case 0:
		ng_error("tcp: connection to rank %d lost: closed by peer", peer);
		st = NG_ERR_PEER_LOST;
		break;
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
		ng_error("tcp: %s with rank %d: no progress for %g s", op, peer, t->timeout_s);
		st = NG_ERR_TIMEOUT;
		break;
	case ECONNRESET:
	case EPIPE:
	case ETIMEDOUT:
	case ECONNABORTED:
	case ENOTCONN:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EHOSTDOWN:
	case ENETDOWN:
		ng_error("tcp: connection to rank %d lost: %s", peer, strerror(err));
		st = NG_ERR_PEER_LOST;
		break;
	default:
		ng_error("tcp: %s with rank %d: %s", op, peer, strerror(err));
		st = NG_ERR_SYS;
		break;
	}
out_down:
	p->err = st;
	ng_tcp_drop(t, p, st);
	return st;
}

/* A failure already reported where it was found (tcp_conn.c): marks @p down
 * unless it was an interruption. */
static ng_status ng_tcp_down(struct ng_tcp *t, struct ng_tcp_peer *p, ng_status st)
{
	if (st && st != NG_ERR_CANCELLED) {
		p->err = st;
		ng_tcp_drop(t, p, st);
	}
	return st;
}

/* A receive from @p whose connection is not settled (cold path): one step
 * towards it (@flags: MSG_DONTWAIT) or, blocking, until it is.  NG_OK with
 * ng_tcp_rx_ok() false: not yet. */
static ng_status __attribute__((noinline))
ng_tcp_rx_prepare(struct ng_tcp *t, struct ng_tcp_peer *p, int flags)
{
	ng_status st = flags ? ng_tcp_rx_step(t, p) : ng_tcp_rx_settle(t, p);

	return ng_tcp_down(t, p, st);
}

/*
 * Moves the rest of @r (r->off .. r->len) over the socket of @p.  @flags:
 * MSG_DONTWAIT to stop when the socket would block, 0 to block.  Returns
 * NG_OK (done when r->off == r->len, else it would block), NG_ERR_CANCELLED,
 * or the peer's error (reported; the peer's queue is then empty).
 */
static inline ng_status ng_tcp_xfer(struct ng_tcp *t, struct ng_tcp_peer *p, struct ng_tcp_req *r, int flags)
{
	ng_status st;

	while (r->off < r->len) {
		size_t want = r->len - r->off;
		ssize_t n;

		/* Not settled: where its messages arrive is still to be known. */
		if (__builtin_expect(p->slow, 0) && r->is_recv && !ng_tcp_rx_ok(p)) {
			st = ng_tcp_rx_prepare(t, p, flags);
			if (st || !ng_tcp_rx_ok(p))
				return st;
		}
		if (r->is_recv)
			n = recv(p->rxfd, r->buf + r->off, want, flags ? flags : MSG_WAITALL);
		else
			n = send(p->txfd, r->buf + r->off, want, flags | MSG_NOSIGNAL);
		if (n > 0) {
			r->off += (size_t)n;
			t->moved += (uint64_t)n;
			/* A short blocking call: a signal, a timeout or the end. */
			if (!flags && (size_t)n < want && ng_tcp_cancelled(t))
				return NG_ERR_CANCELLED;
			continue;
		}
		if (n == 0) {
			/* The end of a drained connection, between messages: the
			 * rest comes on the kept one (tcp.h, lazy). */
			if (p->drain && r->is_recv && r->off == 0) {
				ng_tcp_rx_drained(t, p);
				continue;
			}
			return ng_tcp_fail(t, p, "recv", 0);
		}
		if (errno == EINTR) {
			if (ng_tcp_cancelled(t))
				return NG_ERR_CANCELLED;
			continue;
		}
		if ((errno == EAGAIN || errno == EWOULDBLOCK) && flags)
			return NG_OK;
		return ng_tcp_fail(t, p, r->is_recv ? "recv" : "send", errno);
	}
	return NG_OK;
}

/*
 * --tcp-poll spin: where the default sleeps in the kernel (a blocking call,
 * poll()), a spinning instance repeats non-blocking calls.  What it owes the
 * timeout is checked on empty passes: the cancel flag on each, the clock
 * (vDSO, no system call) every 1024th; bytes moved restart the count.
 */
struct ng_tcp_idle {
	uint64_t moved;
	unsigned passes;
	int64_t deadline_ms; /* -1: not started */
};

static inline void ng_tcp_idle_init(const struct ng_tcp *t, struct ng_tcp_idle *w)
{
	w->moved = t->moved;
	w->passes = 0;
	w->deadline_ms = -1;
}

/* After a pass: NG_OK, NG_ERR_CANCELLED, or NG_ERR_TIMEOUT when nothing
 * moved for the timeout. */
static inline ng_status ng_tcp_idle(const struct ng_tcp *t, struct ng_tcp_idle *w)
{
	int64_t now;

	if (t->moved != w->moved) {
		ng_tcp_idle_init(t, w);
		return NG_OK;
	}
	if (ng_tcp_cancelled(t))
		return NG_ERR_CANCELLED;
	if (t->timeout_ms < 0 || ++w->passes % 1024)
		return NG_OK;
	now = ng_tcp_now_ms();
	if (w->deadline_ms < 0)
		w->deadline_ms = now + t->timeout_ms;
	return now > w->deadline_ms ? NG_ERR_TIMEOUT : NG_OK;
}

/* Moves all of @r, blocking (default) or spinning (--tcp-poll spin); returns
 * what ng_tcp_xfer() returns for a blocking call. */
static inline ng_status ng_tcp_xfer_all(struct ng_tcp *t, struct ng_tcp_peer *p, struct ng_tcp_req *r)
{
	struct ng_tcp_idle w;
	ng_status st;

	if (!t->spin)
		return ng_tcp_xfer(t, p, r, 0);
	ng_tcp_idle_init(t, &w);
	for (;;) {
		st = ng_tcp_xfer(t, p, r, MSG_DONTWAIT);
		if (st || r->off == r->len)
			return st;
		st = ng_tcp_idle(t, &w);
		if (st == NG_ERR_TIMEOUT)
			return ng_tcp_fail(t, p, r->is_recv ? "recv" : "send", EAGAIN);
		if (st)
			return st;
	}
}

/* One non-blocking pass over @p's queues.  NG_OK or NG_ERR_CANCELLED; a
 * peer error is recorded in the peer and its requests. */
static ng_status ng_tcp_progress_peer(struct ng_tcp *t, struct ng_tcp_peer *p)
{
	struct ng_tcp_req *r;
	ng_status st;

	while ((r = ng_tcp_head(&p->sq))) {
		st = ng_tcp_xfer(t, p, r, MSG_DONTWAIT);
		if (st)
			return st == NG_ERR_CANCELLED ? st : NG_OK;
		if (r->off < r->len)
			break;
		ng_tcp_complete(t, p, &p->sq, NG_OK);
	}
	if (__builtin_expect(p->tx_switch, 0) && !p->sq.n && !p->err) {
		st = ng_tcp_down(t, p, ng_tcp_tx_ready(t, p));
		if (st)
			return st == NG_ERR_CANCELLED ? st : NG_OK;
	}
	while ((r = ng_tcp_head(&p->rq))) {
		st = ng_tcp_xfer(t, p, r, MSG_DONTWAIT);
		if (st)
			return st == NG_ERR_CANCELLED ? st : NG_OK;
		if (r->off < r->len)
			break;
		ng_tcp_complete(t, p, &p->rq, NG_OK);
	}
	return NG_OK;
}

static ng_status ng_tcp_progress_all(struct ng_tcp *t)
{
	ng_status st;
	size_t i;

	/* Backwards: a peer that goes idle is replaced by one already seen. */
	for (i = t->nactive; i-- > 0;) {
		if (i >= t->nactive)
			continue;
		st = ng_tcp_progress_peer(t, &t->peers[t->active[i]]);
		if (st)
			return st;
	}
	return NG_OK;
}

static ng_status __attribute__((noinline, cold)) ng_tcp_poll_timeout(struct ng_tcp *t)
{
	ng_error("tcp: no progress with rank %d%s for %g s", t->active[0],
	         t->nactive > 1 ? " and others" : "", t->timeout_s);
	return NG_ERR_TIMEOUT;
}

/* Sleeps in poll() until a peer with queued work can move, then moves it;
 * spinning (--tcp-poll spin), one non-blocking pass over them instead, with
 * @w counting the empty passes.  NG_OK, NG_ERR_CANCELLED, NG_ERR_TIMEOUT or
 * NG_ERR_SYS (reported). */
static ng_status ng_tcp_poll(struct ng_tcp *t, struct ng_tcp_idle *w)
{
	size_t i, n = t->nactive, np = 0;
	bool listen = false;
	ng_status st;
	int rc;

	if (t->spin) {
		st = ng_tcp_progress_all(t);
		if (st == NG_OK)
			st = ng_tcp_idle(t, w);
		return st == NG_ERR_TIMEOUT ? ng_tcp_poll_timeout(t) : st;
	}

	/* A signal that came between system calls would not interrupt poll(). */
	if (ng_tcp_cancelled(t))
		return NG_ERR_CANCELLED;
	for (i = 0; i < n; i++) {
		struct ng_tcp_peer *p = &t->peers[t->active[i]];
		int rfd = -1;

		if (p->rq.n) {
			if (ng_tcp_rx_ok(p))
				rfd = p->rxfd;
			else if (p->own >= 0 && p->rep_need && (p->rxfd < 0 || p->rxfd == p->own))
				rfd = p->own; /* its answer */
			if (!ng_tcp_rx_ok(p))
				listen = true;
		}
		if (p->sq.n && p->txfd != rfd) {
			t->pfd_peer[np] = t->active[i];
			t->pfds[np++] = (struct pollfd){.fd = p->txfd, .events = POLLOUT};
		}
		if (rfd >= 0) {
			t->pfd_peer[np] = t->active[i];
			t->pfds[np++] = (struct pollfd){
			    .fd = rfd, .events = (short)(POLLIN | (p->sq.n && p->txfd == rfd ? POLLOUT : 0))};
		}
	}
	/* A receive that waits for a connection: the listener too. */
	if (listen) {
		size_t k = ng_tcp_listen_fds(t, t->pfds + np);

		for (i = np; i < np + k; i++)
			t->pfd_peer[i] = -1;
		np += k;
	}
	rc = poll(t->pfds, np, t->timeout_ms);
	if (rc < 0) {
		if (errno != EINTR) {
			ng_error("tcp: poll: %s", strerror(errno));
			return NG_ERR_SYS;
		}
		return ng_tcp_cancelled(t) ? NG_ERR_CANCELLED : NG_OK;
	}
	if (rc == 0)
		return ng_tcp_poll_timeout(t);
	for (i = 0; i < np; i++) {
		if (!t->pfds[i].revents)
			continue;
		if (t->pfd_peer[i] < 0) {
			/* Accepted connections settle peers: every one may move. */
			st = ng_tcp_serve(t);
			return st ? st : ng_tcp_progress_all(t);
		}
		st = ng_tcp_progress_peer(t, &t->peers[t->pfd_peer[i]]);
		if (st)
			return st;
	}
	return NG_OK;
}

/* True when everything queued is in @r's own queue, so blocking on that queue
 * cannot hold up anything else. */
static inline bool ng_tcp_alone(const struct ng_tcp *t, const struct ng_tcp_req *r)
{
	const struct ng_tcp_peer *p = &t->peers[r->peer];

	return (r->is_recv ? p->rq.n : p->sq.n) == t->npending;
}

/* Completes @r's queue up to and including @r with blocking calls. */
static ng_status ng_tcp_finish(struct ng_tcp *t, struct ng_tcp_req *r)
{
	struct ng_tcp_peer *p = &t->peers[r->peer];
	struct ng_tcp_queue *q = r->is_recv ? &p->rq : &p->sq;
	ng_status st;

	while (!r->done) {
		if (ng_tcp_cancelled(t))
			return NG_ERR_CANCELLED;
		st = ng_tcp_xfer_all(t, p, ng_tcp_head(q));
		if (st)
			return st == NG_ERR_CANCELLED ? st : NG_OK;
		ng_tcp_complete(t, p, q, NG_OK);
	}
	return NG_OK;
}

static ng_status ng_tcp_wait(struct ng_comm *c, struct ng_req *req)
{
	struct ng_tcp *t = ng_tcp_of(c);
	struct ng_tcp_req *r = ng_tcp_req_of(req);
	struct ng_tcp_idle w;
	bool first = true;
	ng_status st;

	ng_tcp_idle_init(t, &w);
	while (!r->done) {
		if (ng_tcp_alone(t, r)) {
			st = ng_tcp_finish(t, r);
		} else if (first) {
			st = ng_tcp_progress_all(t);
			first = false;
		} else {
			st = ng_tcp_poll(t, &w);
		}
		if (st)
			ng_tcp_abandon(t, st);
	}
	return r->status;
}

static ng_status ng_tcp_test(struct ng_comm *c, struct ng_req *req, bool *done_p)
{
	struct ng_tcp *t = ng_tcp_of(c);
	struct ng_tcp_req *r = ng_tcp_req_of(req);
	ng_status st;

	if (!r->done) {
		st = ng_tcp_progress_all(t);
		if (st)
			ng_tcp_abandon(t, st);
	}
	*done_p = r->done;
	return r->done ? r->status : NG_OK;
}

/* A 0-byte message still crosses the wire, as one byte, so that its round
 * trip is real; the byte lands in the instance, never in the user's buffer. */
static inline void ng_tcp_req_init(struct ng_tcp *t, struct ng_tcp_req *r, int peer, const void *buf,
                                   size_t len, bool is_recv)
{
	if (len == 0) {
		buf = &t->zbyte;
		len = 1;
	}
	r->link.next = NULL;
	r->buf = (unsigned char *)(uintptr_t)buf;
	r->len = len;
	r->off = 0;
	r->peer = peer;
	r->is_recv = is_recv;
	r->done = false;
	r->status = NG_OK;
}

static ng_status ng_tcp_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *req)
{
	struct ng_tcp *t = ng_tcp_of(c);
	struct ng_tcp_peer *p = &t->peers[peer];
	struct ng_tcp_req *r = ng_tcp_req_of(req);
	ng_status st;

	assert(peer >= 0 && peer < c->size && peer != c->rank);
	ng_tcp_req_init(t, r, peer, buf, len, false);
	if (!p->err && __builtin_expect(p->slow, 0) && (p->txfd < 0 || (p->tx_switch && !p->sq.n)))
		(void)ng_tcp_down(t, p, ng_tcp_tx_ready(t, p));
	if (p->err) {
		r->done = true;
		r->status = p->err;
		return p->err;
	}
	if (!p->sq.n) {
		st = ng_tcp_xfer(t, p, r, MSG_DONTWAIT);
		if (st || r->off == r->len) {
			r->done = true;
			r->status = st;
			return st;
		}
	}
	ng_tcp_enqueue(t, p, r);
	return NG_OK;
}

static ng_status ng_tcp_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *req)
{
	struct ng_tcp *t = ng_tcp_of(c);
	struct ng_tcp_peer *p = &t->peers[peer];
	struct ng_tcp_req *r = ng_tcp_req_of(req);

	assert(peer >= 0 && peer < c->size && peer != c->rank);
	ng_tcp_req_init(t, r, peer, buf, len, true);
	if (p->err) {
		r->done = true;
		r->status = p->err;
		return p->err;
	}
	ng_tcp_enqueue(t, p, r);
	return NG_OK;
}

/* Blocking operations.  With nothing queued anywhere they are a plain
 * send()/recv() loop; otherwise they queue behind what is there and wait. */
static inline ng_status ng_tcp_blocking(struct ng_comm *c, int peer, const void *buf, size_t len,
                                        bool is_recv)
{
	struct ng_tcp *t = ng_tcp_of(c);
	struct ng_tcp_peer *p = &t->peers[peer];
	struct ng_tcp_req r;
	struct ng_req req;
	ng_status st;

	assert(peer >= 0 && peer < c->size && peer != c->rank);
	if (p->err)
		return p->err;
	if (t->npending) {
		st = is_recv ? ng_tcp_irecv(c, peer, (void *)(uintptr_t)buf, len, &req)
		             : ng_tcp_isend(c, peer, buf, len, &req);
		return st ? st : ng_tcp_wait(c, &req);
	}
	if (__builtin_expect(p->slow, 0) && !is_recv && (p->txfd < 0 || p->tx_switch)) {
		st = ng_tcp_down(t, p, ng_tcp_tx_ready(t, p));
		if (st)
			return st;
	}
	ng_tcp_req_init(t, &r, peer, buf, len, is_recv);
	return ng_tcp_xfer_all(t, p, &r);
}

static ng_status ng_tcp_send(struct ng_comm *c, int peer, const void *buf, size_t len)
{
	return ng_tcp_blocking(c, peer, buf, len, false);
}

static ng_status ng_tcp_recv(struct ng_comm *c, int peer, void *buf, size_t len)
{
	return ng_tcp_blocking(c, peer, buf, len, true);
}

/* ---- memory ---------------------------------------------------------- */

ng_status ng_tcp_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	struct ng_tcp *t = ng_tcp_of(c);
	size_t align = len >= 4096 ? t->page : 64;
	size_t body = len ? len : 1;
	struct ng_tcp_buf *h;
	unsigned char *mem;

	if (body > SIZE_MAX - 2 * align) {
		ng_error("tcp: cannot allocate %zu bytes: too large", len);
		return NG_ERR_NOMEM;
	}
	body = (body + align - 1) / align * align;
	/* The header sits just below the aligned block, in its own granule. */
	mem = aligned_alloc(align, align + body);
	if (!mem) {
		ng_error("tcp: cannot allocate %zu bytes: %s", len, strerror(errno));
		return NG_ERR_NOMEM;
	}
	h = (struct ng_tcp_buf *)(void *)(mem + align - sizeof(*h));
	h->mem = mem;
	h->magic = NG_TCP_BUF_MAGIC;
	h->next = t->bufs.next;
	h->prev = &t->bufs;
	t->bufs.next->prev = h;
	t->bufs.next = h;
	*buf_p = mem + align;
	return NG_OK;
}

void ng_tcp_buf_release(struct ng_tcp_buf *h)
{
	h->prev->next = h->next;
	h->next->prev = h->prev;
	h->magic = 0;
	free(h->mem);
}

void ng_tcp_free(struct ng_comm *c, void *buf)
{
	struct ng_tcp_buf *h;

	(void)c;
	if (!buf)
		return;
	h = (struct ng_tcp_buf *)(void *)((unsigned char *)buf - sizeof(*h));
	assert(h->magic == NG_TCP_BUF_MAGIC && "tcp: free() of a block not from alloc()");
	ng_tcp_buf_release(h);
}

const struct ng_msg_ops ng_tcp_msg_ops = {
    .send = ng_tcp_send,
    .recv = ng_tcp_recv,
    .isend = ng_tcp_isend,
    .irecv = ng_tcp_irecv,
    .test = ng_tcp_test,
    .wait = ng_tcp_wait,
};
