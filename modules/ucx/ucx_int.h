/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ucx module's instance (modules/ucx/ucx.c: setup, memory, report;
 * ucx_data.c: the data path; ucx_am.c: --ucx-api am; ucx_ep.c: endpoints
 * on first use and error reports; ucx_info.c: what UCX chose, for the
 * report).
 * Internal to modules/ucx; built into ngauge-ucx.so only.
 */
#ifndef NG_MODULES_UCX_UCX_INT_H
#define NG_MODULES_UCX_UCX_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#include "module.h"
#include "modules/ucx/ucx_desc.h"
#include "status.h"

/* The header of an active message (--ucx-api am): the sender's rank and
 * the message's number among those it sent to this receiver, which the
 * receiver checks (UCX does not promise active messages in order). */
struct ng_ucx_amhdr {
	int32_t rank;
	uint32_t pad;
	uint64_t seq;
};

/* Per-request state in struct ng_req.priv (ucx_data.c, ucx_am.c). */
struct ng_ucx_req {
	void *ureq;              /* UCX's request, NULL when there is none (not yet, or no more) */
	void *buf;               /* the receive buffer (am) */
	size_t len;              /* bytes expected (receives) */
	size_t got;              /* bytes delivered */
	struct ng_ucx_amhdr hdr; /* an active message's header: valid until its send completes */
	int peer;
	bool is_recv;
	bool done; /* completed at the call, or by the am handler */
};

/* An active message that arrived before its receive was posted: UCX's
 * persistent data (eager) or its rendezvous descriptor, until the receive
 * takes it. */
struct ng_ucx_amsg {
	void *data;
	size_t length;
	bool rndv;
};

/* Per peer, --ucx-api am: the posted receives and the unexpected messages,
 * both in order (rings that grow by doubling, only past the deepest queue so
 * far), and the sequence numbers of the headers. */
struct ng_ucx_amq {
	struct ng_ucx_req **posted;
	size_t ph, pn, pcap;
	struct ng_ucx_amsg *unexp;
	size_t uh, un, ucap;
	uint64_t next_send, next_recv;
};

/* One block of alloc(): the memory and its UCP mapping. */
struct ng_ucx_mem {
	void *buf;
	ucp_mem_h memh;
};

struct ng_ucx {
	struct ng_comm base; /* first: container_of */
	ucp_context_h ctx;
	ucp_worker_h worker;
	ucp_address_t *addr; /* this worker's address (ucp_worker_get_address) */
	size_t addr_len;
	/* Every rank's worker address: slot r is @slot bytes at
	 * peer_addrs + r * slot, its length in its first 8 bytes. */
	unsigned char *peer_addrs;
	size_t slot;
	/* Endpoint to every rank, NULL until the first operation that names it
	 * (ng_ucx_ep); --connect eager makes them all in open(). */
	ucp_ep_h *eps;
	int neps;
	int api;  /* enum ng_ucx_api */
	int poll; /* enum ng_ucx_poll */
	int efd;  /* the worker's event fd (--ucx-poll wait), else -1 */
	/* alloc()'s live blocks, released by close(). */
	struct ng_ucx_mem *mems;
	size_t nmems, capmems;
	/* --ucx-api am: a queue pair per peer (NULL otherwise), and whether the
	 * handler found a fault it reported (a message out of order, no memory
	 * for a queue): every later completion fails with NG_ERR_IO. */
	struct ng_ucx_amq *amq;
	bool am_fault;
	/* Plain counters for stall() (read by the watchdog's thread). */
	uint64_t nsent, nrecvd;
};

static inline struct ng_ucx *ng_ucx_of(struct ng_comm *c)
{
	return ng_container_of(c, struct ng_ucx, base);
}

/* The module's operations: ngauge-ucx.so's entry "module:ucx". */
extern const struct ng_module_ops ng_module_ops_ucx;
/* The two-sided operations (ucx_data.c): isend, irecv, test, wait of the
 * API chosen at open; send and recv are isend/irecv + wait. */
extern const struct ng_msg_ops ng_ucx_msg_ops;

/*
 * The endpoint to rank @peer into *@ep_p, created from the peer's worker
 * address when this is the first operation naming it (ucp_ep_create; cold).
 * Reports once and returns NG_ERR_IO when UCX refuses, NG_ERR_USAGE for a
 * rank outside 0..size-1.
 */
ng_status ng_ucx_connect(struct ng_ucx *u, int peer, ucp_ep_h *ep_p) __attribute__((cold));

static inline ng_status ng_ucx_ep(struct ng_ucx *u, int peer, ucp_ep_h *ep_p)
{
	if (__builtin_expect((unsigned)peer < (unsigned)u->base.size && u->eps[peer] != NULL, 1)) {
		*ep_p = u->eps[peer];
		return NG_OK;
	}
	return ng_ucx_connect(u, peer, ep_p);
}

/* Maps a UCX status to ngauge's, reporting it once as "ucx: @call with rank
 * @peer: UCX's message" (@peer < 0: none).  Cold path. */
ng_status ng_ucx_fail(const char *call, int peer, ucs_status_t s) __attribute__((cold));

/* --ucx-api am (ucx_am.c): the handler's registration at open, the send,
 * the receive, and taking a posted receive back (cancellation). */
ng_status ng_ucx_am_setup(struct ng_ucx *u) __attribute__((cold));
void ng_ucx_am_release(struct ng_ucx *u) __attribute__((cold));
ng_status ng_ucx_am_isend(struct ng_ucx *u, ucp_ep_h ep, int peer, const void *buf, size_t len,
                          struct ng_ucx_req *q);
ng_status ng_ucx_am_irecv(struct ng_ucx *u, int peer, void *buf, size_t len, struct ng_ucx_req *q);
void ng_ucx_am_unpost(struct ng_ucx *u, struct ng_ucx_req *q) __attribute__((cold));

/*
 * What UCX chose for the endpoint @ep (ucp_ep_print_info, parsed): the
 * transports of its lanes ("posix/memory", "tcp/lo"), one string each, into
 * the JSON array @tls, and the protocol ranges of each operation
 * ("tag_send": "0..<egr/short>..227..<egr/bcopy>..263060..<rndv>..(inf)")
 * into the JSON object @protos.  Cold; allocates.
 */
struct json_t;
void ng_ucx_ep_info(ucp_ep_h ep, struct json_t *tls, struct json_t *protos);
/* The transports of @ep as one line ("posix/memory cma/memory") into @buf. */
void ng_ucx_ep_tls_line(ucp_ep_h ep, char *buf, size_t len);
/* Every UCX_* variable of the environment, as a JSON object of strings. */
struct json_t *ng_ucx_env_json(void);

#endif
