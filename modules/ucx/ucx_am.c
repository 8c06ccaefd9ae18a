/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --ucx-api am: messages as UCP active messages (ucx_int.h).
 *
 * A send is ucp_am_send_nbx of id 0 with a 16-byte header (struct
 * ng_ucx_amhdr: the sender's rank and the message's number to this
 * receiver), the header kept in the request until the send completes (UCX
 * 1.13 reads it until then).  Each rank registers one handler
 * (UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA: the data stays valid
 * after the handler returns UCS_INPROGRESS).  A message that finds a posted
 * receive of its sender is delivered at once: an eager one copied into the
 * receive buffer in the handler, a rendezvous one fetched into it with
 * ucp_am_recv_data_nbx (the receive completes with that request).  A message
 * that arrives first waits in its sender's unexpected queue, holding UCX's
 * data, until a receive takes it (copy and ucp_am_data_release, or
 * ucp_am_recv_data_nbx).  The receive's length must be the message's (a
 * mismatch fails the receive, as tag matching does).  A header whose number
 * is not the next expected is reported once and fails every later
 * completion: UCX does not promise active messages in order, so the module
 * checks what tag matching would have kept.
 *
 * The copy of an eager message is part of every figure measured with
 * --ucx-api am: what an application on active messages pays.  Hot path: no
 * allocation but a queue's growth past its deepest state so far (doubling;
 * 64 entries to start, allocated at the first message of a peer).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "module.h"
#include "modules/ucx/ucx_int.h"
#include "status.h"

#define NG_UCX_AM_ID    0
#define NG_UCX_AM_QUEUE 64 /* first capacity of a peer's queues */

/* Doubles @a's posted (@which 0) or unexpected (1) ring; false on no memory
 * (reported). */
static bool __attribute__((noinline, cold)) ng_ucx_am_grow(struct ng_ucx_amq *a, int which)
{
	size_t cap = which ? a->ucap : a->pcap, ncap = cap ? 2 * cap : NG_UCX_AM_QUEUE;

	if (which) {
		struct ng_ucx_amsg *n = malloc(ncap * sizeof(*n));

		if (!n)
			goto err_nomem;
		for (size_t i = 0; i < a->un; i++)
			n[i] = a->unexp[(a->uh + i) % cap];
		free(a->unexp);
		a->unexp = n;
		a->uh = 0;
		a->ucap = ncap;
	} else {
		struct ng_ucx_req **n = malloc(ncap * sizeof(*n));

		if (!n)
			goto err_nomem;
		for (size_t i = 0; i < a->pn; i++)
			n[i] = a->posted[(a->ph + i) % cap];
		free(a->posted);
		a->posted = n;
		a->ph = 0;
		a->pcap = ncap;
	}
	return true;
err_nomem:
	ng_error("ucx: out of memory for the active-message queues");
	return false;
}

/* Delivers the message (@data, @length, @rndv) into the posted receive @q;
 * @in_cb: inside the handler (eager data then goes back to UCX by the
 * handler's UCS_OK; outside it, by ucp_am_data_release). */
static void ng_ucx_am_deliver(struct ng_ucx *u, struct ng_ucx_req *q, void *data, size_t length, bool rndv,
                              bool in_cb)
{
	q->got = length;
	if (__builtin_expect(length != q->len, 0)) {
		/* the receive fails on its length (ng_ucx_check) */
		if (!in_cb)
			ucp_am_data_release(u->worker, data);
		q->done = true;
		return;
	}
	if (rndv) {
		ucp_request_param_t prm = {.op_attr_mask = 0};
		ucs_status_ptr_t p = ucp_am_recv_data_nbx(u->worker, data, q->buf, length, &prm);

		if (UCS_PTR_IS_ERR(p)) {
			ng_ucx_fail("ucp_am_recv_data_nbx", q->peer, UCS_PTR_STATUS(p));
			u->am_fault = true;
			q->done = true;
			return;
		}
		q->ureq = p;
		q->done = p == NULL;
		return;
	}
	memcpy(q->buf, data, length);
	if (!in_cb)
		ucp_am_data_release(u->worker, data);
	q->done = true;
}

static ucs_status_t ng_ucx_am_handler(void *arg, const void *header, size_t header_length, void *data,
                                      size_t length, const ucp_am_recv_param_t *param)
{
	struct ng_ucx *u = arg;
	struct ng_ucx_amhdr h;
	bool rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
	struct ng_ucx_amq *a;

	if (__builtin_expect(header_length != sizeof(h), 0)) {
		ng_error("ucx: active message with a %zu-byte header, not ngauge's", header_length);
		u->am_fault = true;
		return UCS_OK;
	}
	memcpy(&h, header, sizeof(h));
	if (__builtin_expect(h.rank < 0 || h.rank >= u->base.size, 0)) {
		ng_error("ucx: active message from rank %d, outside 0..%d", (int)h.rank, u->base.size - 1);
		u->am_fault = true;
		return UCS_OK;
	}
	a = &u->amq[h.rank];
	if (__builtin_expect(h.seq != a->next_recv, 0)) {
		ng_error("ucx: active message %llu from rank %d arrived when %llu was due (out of order)",
		         (unsigned long long)h.seq, (int)h.rank, (unsigned long long)a->next_recv);
		u->am_fault = true;
	}
	a->next_recv = h.seq + 1;
	while (a->pn) {
		struct ng_ucx_req *q = a->posted[a->ph];

		a->ph = (a->ph + 1) % a->pcap;
		a->pn--;
		if (!q)
			continue; /* a cancelled receive */
		ng_ucx_am_deliver(u, q, data, length, rndv, true);
		return UCS_OK;
	}
	if (a->un == a->ucap && !ng_ucx_am_grow(a, 1)) {
		u->am_fault = true;
		return UCS_OK;
	}
	a->unexp[(a->uh + a->un) % a->ucap] =
	    (struct ng_ucx_amsg){.data = data, .length = length, .rndv = rndv};
	a->un++;
	return UCS_INPROGRESS;
}

ng_status ng_ucx_am_isend(struct ng_ucx *u, ucp_ep_h ep, int peer, const void *buf, size_t len,
                          struct ng_ucx_req *q)
{
	ucp_request_param_t prm = {.op_attr_mask = 0};
	ucs_status_ptr_t p;

	q->hdr.rank = u->base.rank;
	q->hdr.pad = 0;
	q->hdr.seq = u->amq[peer].next_send++;
	p = ucp_am_send_nbx(ep, NG_UCX_AM_ID, &q->hdr, sizeof(q->hdr), buf, len, &prm);
	if (__builtin_expect(UCS_PTR_IS_ERR(p), 0))
		return ng_ucx_fail("ucp_am_send_nbx", peer, UCS_PTR_STATUS(p));
	q->ureq = p;
	q->done = p == NULL;
	return NG_OK;
}

ng_status ng_ucx_am_irecv(struct ng_ucx *u, int peer, void *buf, size_t len, struct ng_ucx_req *q)
{
	struct ng_ucx_amq *a;

	if (__builtin_expect((unsigned)peer >= (unsigned)u->base.size, 0)) {
		ng_error("ucx: rank %d out of range (0..%d)", peer, u->base.size - 1);
		return NG_ERR_USAGE;
	}
	a = &u->amq[peer];
	if (a->un) {
		struct ng_ucx_amsg m = a->unexp[a->uh];

		a->uh = (a->uh + 1) % a->ucap;
		a->un--;
		ng_ucx_am_deliver(u, q, m.data, m.length, m.rndv, false);
		return NG_OK;
	}
	if (a->pn == a->pcap && !ng_ucx_am_grow(a, 0))
		return NG_ERR_NOMEM;
	a->posted[(a->ph + a->pn) % a->pcap] = q;
	a->pn++;
	return NG_OK;
}

void ng_ucx_am_unpost(struct ng_ucx *u, struct ng_ucx_req *q)
{
	struct ng_ucx_amq *a = &u->amq[q->peer];

	for (size_t i = 0; i < a->pn; i++)
		if (a->posted[(a->ph + i) % a->pcap] == q)
			a->posted[(a->ph + i) % a->pcap] = NULL;
}

ng_status ng_ucx_am_setup(struct ng_ucx *u)
{
	ucp_am_handler_param_t hp = {
	    .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
	                  UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG,
	    .id = NG_UCX_AM_ID,
	    .flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA,
	    .cb = ng_ucx_am_handler,
	    .arg = u,
	};
	ucs_status_t s;

	u->amq = calloc((size_t)u->base.size, sizeof(*u->amq));
	if (!u->amq) {
		ng_error("ucx: out of memory");
		return NG_ERR_NOMEM;
	}
	s = ucp_worker_set_am_recv_handler(u->worker, &hp);
	return s == UCS_OK ? NG_OK : ng_ucx_fail("ucp_worker_set_am_recv_handler", -1, s);
}

void ng_ucx_am_release(struct ng_ucx *u)
{
	for (int r = 0; u->amq && r < u->base.size; r++) {
		struct ng_ucx_amq *a = &u->amq[r];

		for (size_t i = 0; i < a->un; i++)
			ucp_am_data_release(u->worker, a->unexp[(a->uh + i) % a->ucap].data);
		free(a->posted);
		free(a->unexp);
	}
	free(u->amq);
	u->amq = NULL;
}
