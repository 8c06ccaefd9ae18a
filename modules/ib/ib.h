/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the two-sided verbs modules (ibrc, ibuc in rc.c; ibud in ud.c) share
 * besides the verbs core: their options (--ib-*), and the request state they
 * keep in struct ng_req.priv.  Internal to modules/ib/.
 *
 * Layering: the ib modules are built on the verbs core (verbs.h) and, for
 * ibrc/ibuc --ib-mode write, on the channel (modules/chan/chan.h), which
 * brings the RDMA layer; nothing outside modules/ib/ includes this header.
 */
#ifndef NG_IB_IB_H
#define NG_IB_IB_H

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "modules/ib/ib_desc.h"
#include "modules/verbs/verbs.h"
#include "options.h"
#include "queue.h"

/* The option tables and the descriptors: ib_desc.c, in the executable. */

/* Limits of --ib-ring. */
#define NG_IB_RING_MIN 4u
#define NG_IB_RING_MAX 4096u

/* What open() takes from the options. */
struct ng_ib_conf {
	struct ng_ibv_conf dev; /* --ib-dev, --ib-port, --ib-gid */
	bool write;             /* --ib-mode write */
	bool read;              /* --ib-mode read (ibrc only) */
	size_t ring;            /* --ib-ring: receive slots per peer */
	size_t eager;           /* --ib-eager: largest message through the ring */
	bool yield;             /* --ib-poll yield */
};

/* Reads and checks the options (reports a bad value: NG_ERR_USAGE). */
ng_status ng_ib_conf_read(const struct ng_module_env *env, const char *who, struct ng_ib_conf *cf);

enum ng_ib_state {
	NG_IB_QUEUED, /* in its peer's send or receive queue */
	NG_IB_POSTED, /* a send whose work requests are out: done when the QP completes ->wr */
	NG_IB_DONE,   /* complete; ->status is valid */
};

/* Per-request state in struct ng_req.priv. */
struct ng_ib_req {
	struct ng_qlink link; /* in its peer's send or receive queue */
	unsigned char *buf;
	size_t len;
	size_t off;     /* rendezvous send: bytes written so far */
	uint64_t wr;    /* posted send: number of its last work request */
	uint64_t idx;   /* data message number between the two ranks */
	uint64_t raddr; /* rendezvous send: the receiver's buffer */
	uint32_t rkey;  /* rendezvous send: its key */
	uint32_t lkey;  /* of buf */
	uint32_t bkey;  /* rkey of buf (a rendezvous receive publishes it) */
	int peer;
	ng_status status;
	uint8_t state; /* enum ng_ib_state */
	bool is_recv;
	bool rndv;     /* larger than the eager size: rendezvous */
	bool cts;      /* receive: CTS sent; send: CTS taken */
	bool mismatch; /* rendezvous send: the receive has another length */
};

static_assert(sizeof(struct ng_ib_req) <= sizeof(((struct ng_req *)0)->priv),
              "struct ng_ib_req does not fit in struct ng_req.priv");
static_assert(alignof(struct ng_ib_req) <= alignof(struct ng_req),
              "struct ng_ib_req needs more alignment than struct ng_req");

static inline struct ng_ib_req *ng_ib_req_of(struct ng_req *r)
{
	return (struct ng_ib_req *)(void *)r->priv;
}

static inline void ng_ib_req_init(struct ng_ib_req *r, int peer, const void *buf, size_t len, bool is_recv)
{
	*r = (struct ng_ib_req){
	    .buf = (unsigned char *)(uintptr_t)buf,
	    .len = len,
	    .peer = peer,
	    .state = NG_IB_QUEUED,
	    .is_recv = is_recv,
	};
}

/* Completes @r.  Leaves its link alone: a request completed at the head of
 * a queue is popped afterwards. */
static inline void ng_ib_req_done(struct ng_ib_req *r, ng_status st)
{
	r->status = st;
	r->state = NG_IB_DONE;
}

/* The request of queue node @n (NULL: none). */
static inline struct ng_ib_req *ng_ib_req_at(struct ng_qlink *n)
{
	return n ? NG_QUEUE_ENTRY(n, struct ng_ib_req, link) : NULL;
}

/* The oldest request of @q, left queued; NULL when empty. */
static inline struct ng_ib_req *ng_ib_queue_head(const struct ng_queue *q)
{
	return ng_ib_req_at(ng_queue_first(q));
}

/* The request queued after @r, NULL at the tail. */
static inline struct ng_ib_req *ng_ib_req_next(const struct ng_ib_req *r)
{
	return ng_ib_req_at(r->link.next);
}

/* Removes the oldest request of @q (not empty) and returns it. */
static inline struct ng_ib_req *ng_ib_queue_pop(struct ng_queue *q)
{
	return ng_ib_req_at(ng_queue_pop(q));
}

/* Completes every queued request with @st. */
static inline void ng_ib_queue_drop(struct ng_queue *q, ng_status st)
{
	struct ng_qlink *n;

	while ((n = ng_queue_pop(q)))
		ng_ib_req_done(ng_ib_req_at(n), st);
}

#endif
