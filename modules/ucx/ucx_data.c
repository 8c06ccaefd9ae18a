/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ucx module's data path (ucx_int.h): isend, irecv, test and wait over
 * the API chosen at open; send and recv are isend/irecv + wait (direct
 * calls in this file).
 *
 *   tag     ucp_tag_send_nbx with the sender's rank as the tag;
 *           ucp_tag_recv_nbx of that tag with a full mask.  UCX matches
 *           messages of one tag from one sender in order: ngauge's "message
 *           order is the match".  A longer message than the receive gives
 *           NG_ERR_TRUNCATED (UCS_ERR_MESSAGE_TRUNCATED), a shorter one is
 *           caught by its length.
 *   stream  ucp_stream_send_nbx / ucp_stream_recv_nbx with
 *           UCP_STREAM_RECV_FLAG_WAITALL on the endpoint to the peer: a byte
 *           stream, so that a receive takes exactly its length; a sender and a
 *           receiver that disagree on lengths are not detected (as tcp).
 *           Zero-length messages move nothing and complete at once.
 *
 * Requests: UCX's own (from its memory pool: no allocation once warm),
 * NULL when the call completed at once; the module's state of a request is
 * struct ng_ucx_req in ng_req.priv.  Hot path: no allocation, logging or
 * option lookup; the only calls are UCX's, and poll() on the worker's event
 * fd with --ucx-poll wait.
 *
 * Waiting: wait() checks the request, then progresses the worker; with
 * --ucx-poll wait, a progress call that found nothing arms the worker
 * (ucp_worker_arm) and sleeps in poll() on its event fd, at most 100 ms at
 * a time.  The cancel flag is read whenever a progress call found nothing:
 * a pending receive is then cancelled (ucp_request_cancel) and a pending
 * send released to UCX (ucp_request_free), NG_ERR_CANCELLED.  A silent peer
 * is left to the run's watchdog (core/watchdog.h): UCX has no per-call
 * timeout.
 */
#include "config.h"

#include <assert.h>
#include <poll.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include "module.h"
#include "modules/ucx/ucx_int.h"
#include "status.h"

static_assert(sizeof(struct ng_ucx_req) <= sizeof(((struct ng_req *)0)->priv),
              "struct ng_ucx_req does not fit in struct ng_req.priv");
static_assert(alignof(struct ng_ucx_req) <= alignof(struct ng_req),
              "struct ng_ucx_req needs more alignment than struct ng_req");

static inline struct ng_ucx_req *ng_ucx_req_of(struct ng_req *r)
{
	return (struct ng_ucx_req *)(void *)r->priv;
}

static ng_status __attribute__((noinline, cold)) ng_ucx_short(int peer, size_t got, size_t len)
{
	ng_error("ucx: message from rank %d has %zu bytes, expected %zu", peer, got, len);
	return NG_ERR_TRUNCATED;
}

static ng_status ng_ucx_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *r)
{
	struct ng_ucx *u = ng_ucx_of(c);
	struct ng_ucx_req *q = ng_ucx_req_of(r);
	ucp_request_param_t prm;
	ucs_status_ptr_t p;
	ucp_ep_h ep;
	ng_status st = ng_ucx_ep(u, peer, &ep);

	if (st != NG_OK)
		return st;
	q->ureq = NULL;
	q->len = q->got = len;
	q->peer = peer;
	q->is_recv = false;
	q->done = false;
	u->nsent++;
	prm.op_attr_mask = 0;
	if (u->api == NG_UCX_API_AM)
		return ng_ucx_am_isend(u, ep, peer, buf, len, q);
	if (u->api == NG_UCX_API_STREAM) {
		if (len == 0) {
			q->done = true;
			return NG_OK;
		}
		p = ucp_stream_send_nbx(ep, buf, len, &prm);
	} else {
		p = ucp_tag_send_nbx(ep, buf, len, (ucp_tag_t)c->rank, &prm);
	}
	if (__builtin_expect(UCS_PTR_IS_ERR(p), 0))
		return ng_ucx_fail(u->api == NG_UCX_API_STREAM ? "ucp_stream_send_nbx" : "ucp_tag_send_nbx",
		                   peer, UCS_PTR_STATUS(p));
	q->ureq = p;
	q->done = p == NULL;
	return NG_OK;
}

static ng_status ng_ucx_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *r)
{
	struct ng_ucx *u = ng_ucx_of(c);
	struct ng_ucx_req *q = ng_ucx_req_of(r);
	ucp_request_param_t prm;
	ucs_status_ptr_t p;

	q->ureq = NULL;
	q->buf = buf;
	q->len = len;
	q->got = 0;
	q->peer = peer;
	q->is_recv = true;
	q->done = false;
	if (u->api == NG_UCX_API_AM)
		return ng_ucx_am_irecv(u, peer, buf, len, q);
	if (u->api == NG_UCX_API_STREAM) {
		ucp_ep_h ep;
		ng_status st = ng_ucx_ep(u, peer, &ep);

		if (st != NG_OK)
			return st;
		if (len == 0) {
			q->done = true;
			return NG_OK;
		}
		prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
		prm.flags = UCP_STREAM_RECV_FLAG_WAITALL;
		p = ucp_stream_recv_nbx(ep, buf, len, &q->got, &prm);
		if (__builtin_expect(UCS_PTR_IS_ERR(p), 0))
			return ng_ucx_fail("ucp_stream_recv_nbx", peer, UCS_PTR_STATUS(p));
	} else {
		if (__builtin_expect((unsigned)peer >= (unsigned)c->size, 0))
			return ng_ucx_connect(u, peer, NULL);
		/* Never completed at the call: UCX 1.13 may then leave recv_info
		 * unwritten (seen over sm in trains of messages, loggp and bw,
		 * with a completion callback set or not), and the length is what
		 * --verify and a short message need; the request's test gives it. */
		prm.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
		p = ucp_tag_recv_nbx(u->worker, buf, len, (ucp_tag_t)peer, UINT64_MAX, &prm);
		if (__builtin_expect(UCS_PTR_IS_ERR(p), 0))
			return ng_ucx_fail("ucp_tag_recv_nbx", peer, UCS_PTR_STATUS(p));
	}
	q->ureq = p;
	q->done = p == NULL;
	return NG_OK;
}

/* Whether @q has completed (*done_p), and its outcome; frees UCX's request. */
static inline ng_status ng_ucx_check(struct ng_ucx *u, struct ng_ucx_req *q, bool *done_p)
{
	ucs_status_t s;
	size_t got = q->got;

	if (q->ureq) {
		if (!q->is_recv || u->api == NG_UCX_API_AM) {
			s = ucp_request_check_status(q->ureq);
		} else if (u->api == NG_UCX_API_STREAM) {
			s = ucp_stream_recv_request_test(q->ureq, &got);
		} else {
			ucp_tag_recv_info_t info;

			s = ucp_tag_recv_request_test(q->ureq, &info);
			got = info.length;
		}
		if (s == UCS_INPROGRESS) {
			*done_p = false;
			return NG_OK;
		}
		ucp_request_free(q->ureq);
		q->ureq = NULL;
		if (__builtin_expect(s != UCS_OK, 0)) {
			*done_p = true;
			return ng_ucx_fail(q->is_recv ? "receive" : "send", q->peer, s);
		}
	} else if (!q->done) {
		/* an active message not arrived yet */
		*done_p = false;
		return NG_OK;
	}
	*done_p = true;
	if (__builtin_expect(u->am_fault, 0))
		return NG_ERR_IO;
	if (q->is_recv) {
		if (__builtin_expect(got != q->len, 0))
			return ng_ucx_short(q->peer, got, q->len);
		u->nrecvd++;
	}
	return NG_OK;
}

static ng_status ng_ucx_test(struct ng_comm *c, struct ng_req *r, bool *done_p)
{
	struct ng_ucx *u = ng_ucx_of(c);
	struct ng_ucx_req *q = ng_ucx_req_of(r);

	if (q->ureq || !q->done)
		ucp_worker_progress(u->worker);
	return ng_ucx_check(u, q, done_p);
}

/* wait() saw the cancel flag: ends @q so that the caller may free its buffer
 * (a receive: cancelled, or delivered meanwhile). */
static ng_status __attribute__((noinline, cold)) ng_ucx_abandon(struct ng_ucx *u, struct ng_ucx_req *q)
{
	if (!q->ureq) {
		/* an active message's receive still posted */
		ng_ucx_am_unpost(u, q);
		return NG_ERR_CANCELLED;
	}
	if (q->is_recv) {
		ucp_request_cancel(u->worker, q->ureq);
		for (int i = 0; i < 1000000 && ucp_request_check_status(q->ureq) == UCS_INPROGRESS; i++)
			ucp_worker_progress(u->worker);
	}
	ucp_request_free(q->ureq);
	q->ureq = NULL;
	return NG_ERR_CANCELLED;
}

/* --ucx-poll wait: sleeps until the worker has an event (at most 100 ms),
 * unless ucp_worker_arm finds one pending. */
static void ng_ucx_sleep(struct ng_ucx *u)
{
	struct pollfd pfd = {.fd = u->efd, .events = POLLIN};

	if (ucp_worker_arm(u->worker) == UCS_OK)
		(void)poll(&pfd, 1, 100);
}

static ng_status ng_ucx_wait(struct ng_comm *c, struct ng_req *r)
{
	struct ng_ucx *u = ng_ucx_of(c);
	struct ng_ucx_req *q = ng_ucx_req_of(r);
	const volatile sig_atomic_t *cancel = c->cancel;
	bool done;

	for (;;) {
		ng_status st = ng_ucx_check(u, q, &done);

		if (done)
			return st;
		if (ucp_worker_progress(u->worker))
			continue;
		if (cancel && *cancel)
			return ng_ucx_abandon(u, q);
		if (u->poll == NG_UCX_POLL_WAIT)
			ng_ucx_sleep(u);
	}
}

/* Blocking send and receive: the non-blocking call and its wait, in this
 * file so that both are direct calls (what ng_msg_send_by_wait would make
 * of them costs two indirect ones). */
static ng_status ng_ucx_send(struct ng_comm *c, int peer, const void *buf, size_t len)
{
	struct ng_req r;
	ng_status st = ng_ucx_isend(c, peer, buf, len, &r);

	return st != NG_OK ? st : ng_ucx_wait(c, &r);
}

static ng_status ng_ucx_recv(struct ng_comm *c, int peer, void *buf, size_t len)
{
	struct ng_req r;
	ng_status st = ng_ucx_irecv(c, peer, buf, len, &r);

	return st != NG_OK ? st : ng_ucx_wait(c, &r);
}

const struct ng_msg_ops ng_ucx_msg_ops = {
    .send = ng_ucx_send,
    .recv = ng_ucx_recv,
    .isend = ng_ucx_isend,
    .irecv = ng_ucx_irecv,
    .test = ng_ucx_test,
    .wait = ng_ucx_wait,
};
