/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs core's connection service: RC and UC queue pairs made and
 * connected on first use (--connect lazy), for ibrc, ibuc and the RDMA
 * layer's verbs backend.
 *
 * The service is one UD queue pair per rank (chosen over rdma_cm: it needs
 * no IP address per port, no event channel and no extra kernel modules
 * (ib_cm, rdma_ucm), it runs on every device the modules accept, Soft-RoCE
 * included, and its messages are polled in the caller's own poll loop, with
 * no thread and no file descriptor).  At open, every rank creates it and
 * publishes, in one all-gather, its port address, the service's QP number
 * and the caller's extra bytes (ring addresses, keys): O(1) bytes per rank,
 * O(p) kept.  Nothing per pair is made at open.
 *
 * First use of a pair (the caller calls ng_ibv_cm_connect when an operation
 * first names a peer): a three-way handshake of datagrams, as the IB
 * connection manager's REQ, REP, RTU:
 *   REQ  the initiator makes its QP towards the peer (the caller's
 *        callback: created, in INIT, receives posted) and sends its number;
 *   REP  the peer makes its own QP the same way, moves it to RTR towards
 *        the initiator's and answers with its number;
 *   RTU  the initiator moves its QP to RTR and RTS (it may send at once:
 *        the peer's QP receives), and tells the peer, which moves its QP to
 *        RTS (only then may it send: a UC packet that reaches a QP before
 *        its RTR is lost).
 * Simultaneous connects (both ranks sent a REQ) are resolved by rank order:
 * the lower rank's REQ wins; the higher rank answers it with the QP it had
 * already made for its own REQ, and the lower rank ignores the higher one's.
 * So a pair holds one QP on each side whoever starts.  Datagrams can be
 * lost: a REQ unanswered, or a REP not confirmed, for NG_IBV_CM_RESEND_NS is
 * sent again, a repeated REQ is answered with the REP again, a repeated REP
 * with the RTU again.  A pair not connected after the caller's --timeout
 * fails (the caller's watchdog names the peer).
 *
 * Progress: the peer answers when it polls (ng_ibv_cm_poll, from the
 * caller's idle poll rounds: any wait in the module), so a first send to a
 * peer completes once that peer next waits in the module; patterns send
 * their first messages in their untimed warm-up, where both sides wait.
 * Cost outside first use: one ibv_poll_cq of an empty CQ per idle poll
 * round (no system call), and a branch on whether a pair is connected.
 *
 * Layering and threading as verbs.h: one instance belongs to one thread.
 */
#ifndef NG_VERBS_CONN_H
#define NG_VERBS_CONN_H

#include "modules/verbs/verbs.h"

#define NG_IBV_CM_RESEND_NS 20000000u /* a handshake datagram is sent again after 20 ms */

/* What the service needs of its caller. */
struct ng_ibv_cm_ops {
	/* The caller's QP towards @peer, created, in INIT and with its
	 * receives posted (made now when it does not exist yet); NULL on a
	 * failure, reported.  Called once per peer. */
	struct ng_ibv_qp *(*qp)(void *ctx, int peer);
	/* @peer's QP reached RTS: work queued for it may go.  Optional. */
	void (*up)(void *ctx, int peer);
};

enum ng_ibv_cm_state {
	NG_IBV_CM_NONE,  /* no QP towards the peer */
	NG_IBV_CM_REQ,   /* initiator: REQ sent, waiting for the REP */
	NG_IBV_CM_RTR,   /* responder: RTR, REP sent, waiting for the RTU */
	NG_IBV_CM_READY, /* RTS both ways */
	NG_IBV_CM_FAILED,
};

struct ng_ibv_cm_peer {
	struct ibv_ah *ah; /* to the peer's service QP, made on first use */
	uint64_t sent_ns;  /* when the last handshake datagram went out */
	uint64_t t0_ns;    /* when this rank started the connection */
	uint8_t state;     /* enum ng_ibv_cm_state */
};

struct ng_ibv_cm {
	struct ng_ibv *v;
	const struct ng_ibv_cm_ops *ops;
	void *ctx;
	int rank, size;
	struct ibv_cq *cq;      /* the service QP's sends and receives */
	struct ng_ibv_qp q;     /* the service QP (UD) */
	struct ng_ibv_area buf; /* [nrecv] receive slots, then [q.depth] send slots */
	uint32_t nrecv;
	unsigned char *recs; /* [size] published records, @stride bytes apart */
	size_t stride;
	struct ng_ibv_cm_peer *peers; /* [size] */
	size_t pending;               /* peers in REQ or RTR */
	unsigned spin;                /* polls since the last clock read (pending only) */
	enum ibv_mtu mtu;             /* the smallest active MTU of all ranks */
	/* Counters for the module's report. */
	size_t nready;       /* pairs connected (READY) */
	size_t initiated;    /* of them, by this rank's REQ */
	uint64_t connect_ns; /* time from this rank's REQs to their READY, summed */
	uint64_t resent;     /* handshake datagrams sent again */
	uint64_t events;     /* handshake datagrams handled (a sign of the peers) */
};

/*
 * Collective (as ng_ibv_mesh_connect): creates the service, publishes this
 * rank's address, the service's QP number, @len bytes of @extra and @local
 * (a rank that failed before takes part with its error), checks every
 * rank's address (ng_ibv_ep_take, ng_ibv_eps_check) and copies every rank's
 * extra bytes into @extras (size * len).  @ops and @ctx serve the pairs
 * later.  No pair is connected.  Errors are reported by the rank that
 * decides them; on failure the service is closed.
 */
ng_status ng_ibv_cm_open(struct ng_ibv_cm *cm, struct ng_ibv *v, struct ng_boot *b,
                         const struct ng_ibv_cm_ops *ops, void *ctx, ng_status local, const void *extra,
                         size_t len, void *extras);
/* Safe on a zeroed service.  The caller destroys its own QPs. */
void ng_ibv_cm_close(struct ng_ibv_cm *cm);

/* Starts connecting to @peer (not this rank) unless it is connected or
 * connecting.  NG_OK or a reported error (the QP could not be made). */
ng_status ng_ibv_cm_connect(struct ng_ibv_cm *cm, int peer);

static inline bool ng_ibv_cm_ready(const struct ng_ibv_cm *cm, int peer)
{
	return cm->peers[peer].state == NG_IBV_CM_READY;
}

/* Handles the handshake datagrams that arrived, and sends again what is
 * due.  Returns NG_OK or a reported error (a QP that could not be made or
 * moved; that peer is marked FAILED).  No allocation; system calls only
 * while a handshake is in progress (the QP transitions, the clock). */
ng_status ng_ibv_cm_poll(struct ng_ibv_cm *cm);

/* Whether @peer failed to connect (reported). */
static inline bool ng_ibv_cm_failed(const struct ng_ibv_cm *cm, int peer)
{
	return cm->peers[peer].state == NG_IBV_CM_FAILED;
}

#endif
