/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state of ibrc/ibuc (rc.c) and what the data paths share: the ring
 * message format, the per-peer state, posting with room and credit checks,
 * and failing a peer.  rc.c holds send mode and the setup; rc_read.c the
 * read mode's data path (--ib-mode read), which rc.c calls.  Internal to
 * modules/ib/: everything here is static inline, so that rc_read.c calls
 * nothing of rc.c's.
 */
#ifndef NG_IB_RC_INT_H
#define NG_IB_RC_INT_H

#include <arpa/inet.h>
#include <string.h>

#include "modules/ib/ib.h"
#include "modules/rdmalayer/rdma.h" /* the credit words' arithmetic */
#include "modules/verbs/verbs_conn.h"

#define NG_RC_CTL      64u                 /* control words per peer: [1] credits */
#define NG_RC_WR_RANK  0xffffffffu         /* send wr_id: the peer's rank ... */
#define NG_RC_WR_HEAL  ((uint64_t)1 << 32) /* ... a credit write told again ... */
#define NG_RC_WR_SHIFT 33u                 /* ... and the low bits of its number */
#define NG_RC_WR_BITS  31u
#define NG_RC_HEAL_NS  50000000u /* UC: credits told again after 50 ms of silence */
#define NG_RC_STAGE    64u       /* staging bytes per send work request */
#define NG_RC_INLINE   512u      /* inline size asked for first */
#define NG_RC_POLL     16
#define NG_RC_NONE     SIZE_MAX
#define NG_RC_SLACK    16u /* send-queue room beyond 2R */

/* Read mode (rc_read.c) uses two of them: NOTICE (the CTS layout, sent by
 * the sender: "read my buffer") and FIN from the receiver ("your buffer is
 * free", with NG_RC_F_MISMATCH when the lengths differ and nothing was
 * read). */
enum ng_rc_type { NG_RC_EAGER = 0, NG_RC_CTS = 1, NG_RC_FIN = 2, NG_RC_NOTICE = 3 };
enum { NG_RC_F_MISMATCH = 1 }; /* FIN: the receive has another length; nothing was written */

/* Immediate data of every ring message: type (2 bits), flags (1 bit) and the
 * low 29 bits of the sender's release count (its credits for my ring). */
#define NG_RC_CREDIT_BITS 29
#define NG_RC_CREDIT_MASK ((UINT32_C(1) << NG_RC_CREDIT_BITS) - 1)
#define NG_RC_IMM(type, flags, credit)                                                                       \
	((uint32_t)(type) << 30 | (uint32_t)(flags) << NG_RC_CREDIT_BITS |                                   \
	 ((uint32_t)(credit)&NG_RC_CREDIT_MASK))

/* Body of a CTS, and of a read mode's NOTICE (the sender's buffer). */
struct ng_rc_cts {
	uint64_t idx; /* data message number */
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t pad;
};

static_assert(sizeof(struct ng_rc_cts) <= NG_RC_STAGE, "a CTS fits in one staging entry");

/* What is known of each slot of a ring. */
struct ng_rc_meta {
	uint32_t len;
	uint8_t type;
	uint8_t flags;
	bool done; /* consumed; released once every earlier slot is */
};

struct ng_rc_peer {
	struct ng_ibv_qp q; /* q.qp NULL: not made yet (--connect lazy) */
	int rank;
	bool up;       /* q in RTS: work may be posted (ng_rc_room) */
	ng_status err; /* NG_OK, or why this peer is unusable (reported) */
	size_t apos;   /* index in the active list, NG_RC_NONE when idle */
	/* The peer's control words for my messages. */
	uint64_t r_ctl;
	uint32_t r_ctl_rkey;
	/* Receive side: the peer's messages in my ring, registered with its
	 * QP (at open, or on first use under --connect lazy) */
	struct ng_ibv_area ring_a;
	struct ng_rc_meta *meta; /* [R] */
	volatile uint64_t *ctl;  /* my control words for this peer */
	uint64_t rx_tail;        /* ring messages arrived (send mode) */
	uint64_t rx_scan;        /* ring messages looked at */
	uint64_t rx_free;        /* ring messages released (a prefix) */
	uint64_t credit_sent;    /* rx_free last told the peer (written or carried) */
	uint64_t rx_posted;      /* receives posted */
	uint64_t *unexp;         /* [R] ring numbers of data messages with no receive yet */
	size_t unexp_head, unexp_n;
	struct ng_queue rq;         /* posted receives; the head gets the next data message */
	struct ng_ib_req *cts_next; /* first receive in rq not yet looked at for a CTS */
	uint64_t cts_out;           /* CTSs sent whose FIN has not come */
	/* Send side. */
	struct ng_queue sq;    /* sends not (fully) posted yet */
	uint64_t tx_seq;       /* ring messages sent */
	uint64_t tx_idx;       /* data messages sent */
	uint64_t credit_seen;  /* the peer's release count, the highest seen */
	struct ng_rc_cts *cts; /* [K] CTSs received for my sends */
	uint64_t cts_head, cts_tail;
	bool credit_due;
	/* Read mode (rc_read.c). */
	struct ng_queue rdq; /* receives given a NOTICE: reading, then their FIN */
	struct ng_queue wq;  /* sends whose NOTICE is out: done at their FIN */
};

struct ng_rc {
	struct ng_comm base; /* first: container_of */
	struct ng_ibv v;
	enum ibv_qp_type type;
	uint64_t healed; /* UC: the silence whose credits were told again */
	bool healing;    /* posting those: their completions are no event */
	size_t R, K, eager_quota, thresh;
	size_t eager;       /* S */
	size_t slot;        /* slot stride */
	size_t ring_stride; /* R * slot */
	size_t maxw;        /* largest single RDMA write or read */
	bool read;          /* --ib-mode read (rc_read.c) */
	uint32_t depth;     /* send queue depth per QP */
	uint32_t max_inline;
	uint32_t scq_size, scq_busy; /* send CQ entries, and those of signaled requests in flight */
	struct ibv_cq *scq, *rcq;
	struct ng_ibv_area ctl_a;
	struct ng_ibv_stage stage; /* NG_RC_STAGE bytes per work request: CTSs, credit words */
	struct ng_rc_peer *peers;  /* [size] */
	struct ng_rc_meta *metas;  /* [size * R] */
	uint64_t *unexps;          /* [size * R] */
	struct ng_rc_cts *ctss;    /* [size * K] */
	int *active;               /* peers with work, [nactive] */
	size_t nactive;
	struct ng_watch watch;
	/* Connections (verbs_conn.h): lazy makes a peer's QP on first use. */
	bool lazy;
	struct ng_ibv_cm cm; /* lazy: the connection service */
	uint32_t inl;        /* inline size asked of the next QP */
	size_t nqps;         /* QPs made (towards peers) */
	size_t nqps_open;    /* of them, at open */
};

/* What every rank publishes beside its QPs (ng_ibv_mesh_connect). */
struct ng_rc_addr {
	uint64_t ctl_base;
	uint32_t ctl_rkey;
	uint32_t ring, eager;
	uint32_t read, pad; /* --ib-mode read */
};

static inline struct ng_rc *ng_rc_of(struct ng_comm *c)
{
	return ng_container_of(c, struct ng_rc, base);
}

static inline unsigned char *ng_rc_payload(const struct ng_rc *t, const struct ng_rc_peer *p, size_t slot)
{
	return p->ring_a.base + slot * t->slot;
}

/* The staging slot of the next work request to @p. */
static inline unsigned char *ng_rc_stage(const struct ng_rc *t, const struct ng_rc_peer *p)
{
	return ng_ibv_stage_at(&t->stage, p->rank, p->q.posted + 1);
}

/* ---- active peers ----------------------------------------------------- */

static inline void ng_rc_activate(struct ng_rc *t, struct ng_rc_peer *p)
{
	if (p->apos != NG_RC_NONE)
		return;
	p->apos = t->nactive;
	t->active[t->nactive++] = p->rank;
}

static inline void ng_rc_deactivate(struct ng_rc *t, struct ng_rc_peer *p)
{
	int last;

	if (p->apos == NG_RC_NONE || !ng_queue_empty(&p->sq) || !ng_queue_empty(&p->rq) || p->credit_due ||
	    !ng_queue_empty(&p->rdq) || !ng_queue_empty(&p->wq))
		return;
	last = t->active[--t->nactive];
	t->active[p->apos] = last;
	t->peers[last].apos = p->apos;
	p->apos = NG_RC_NONE;
}

/* ---- errors (cold) ---------------------------------------------------- */

/* Marks @p unusable with @st (already reported) and completes its queued
 * requests; posted sends see the error in ng_rc_check. */
static inline void __attribute__((cold)) ng_rc_fail(struct ng_rc *t, struct ng_rc_peer *p, ng_status st)
{
	if (!p->err)
		p->err = st;
	ng_ib_queue_drop(&p->rq, p->err);
	ng_ib_queue_drop(&p->sq, p->err);
	ng_ib_queue_drop(&p->rdq, p->err);
	ng_ib_queue_drop(&p->wq, p->err);
	p->cts_next = NULL;
	p->credit_due = false;
	ng_rc_deactivate(t, p);
}

static inline void __attribute__((cold))
ng_rc_post_error(struct ng_rc *t, struct ng_rc_peer *p, const char *what, int rc)
{
	ng_error("%s: posting %s to rank %d: %s", t->base.mod->name, what, p->rank, strerror(rc));
	ng_rc_fail(t, p, NG_ERR_IO);
}

static inline void __attribute__((cold)) ng_rc_proto(struct ng_rc *t, struct ng_rc_peer *p, const char *why)
{
	ng_error("%s: protocol error with rank %d: %s", t->base.mod->name, p->rank, why);
	ng_rc_fail(t, p, NG_ERR_PROTO);
}

static inline ng_status __attribute__((cold))
ng_rc_truncated(struct ng_rc *t, struct ng_rc_peer *p, size_t got, size_t want)
{
	if (got == SIZE_MAX)
		ng_error("%s: the message from rank %d does not have the %zu bytes the receive expects",
		         t->base.mod->name, p->rank, want);
	else
		ng_error("%s: a message of %zu bytes from rank %d, but the receive expects %zu",
		         t->base.mod->name, got, p->rank, want);
	return NG_ERR_TRUNCATED;
}

/* Nothing happened for --timeout seconds (or the run was cancelled) while
 * waiting, among others, for @hint. */
/* ---- posting ---------------------------------------------------------- */

/* Room for @n work requests on @p's QP and in the shared send CQ; none
 * while the QP is not connected (--connect lazy: the work waits). */
static inline bool ng_rc_room(const struct ng_rc *t, const struct ng_rc_peer *p, uint32_t n)
{
	return p->up && ng_ibv_qp_room(&p->q, n) && t->scq_busy + n <= t->scq_size;
}

/* Whether one more ring message fits at the peer (@eager: within the EAGER
 * share). */
static inline bool ng_rc_credit(struct ng_rc *t, struct ng_rc_peer *p, bool eager)
{
	uint64_t lim = eager ? t->eager_quota : t->R, seen;

	if (p->tx_seq - p->credit_seen < lim)
		return true;
	seen = __atomic_load_n(&p->ctl[1], __ATOMIC_ACQUIRE);
	/* Messages may have carried a later count than the word holds. */
	if (ng_rdma_credit_word(&p->credit_seen, seen, p->tx_seq))
		t->watch.events++;
	return p->tx_seq - p->credit_seen < lim;
}

/*
 * Posts the one work request @wr to @p, signaled selectively: when the
 * caller set IBV_SEND_SIGNALED (it waits for this request: r->wr), else
 * when ng_ibv_qp_signal_due says the queue needs one (every sig_every-th,
 * a quarter of the queue).  Its number goes into the wr_id (NG_RC_WR_*),
 * so that a completion completes every request before it.  Returns the
 * errno of the post (0: posted).
 */
static inline int ng_rc_post(struct ng_rc *t, struct ng_rc_peer *p, struct ibv_send_wr *wr)
{
	bool sig = ng_ibv_qp_signal_due(&p->q, (wr->send_flags & IBV_SEND_SIGNALED) != 0);
	int rc;

	if (sig)
		wr->send_flags |= IBV_SEND_SIGNALED;
	wr->wr_id |= (p->q.posted + 1) << NG_RC_WR_SHIFT;
	rc = ng_ibv_post(&p->q, wr, 1);
	if (!rc && sig) {
		t->scq_busy++;
		ng_ibv_qp_signaled(&p->q);
	}
	return rc;
}

/* A ring message just posted told @p my release count. */
static inline void ng_rc_credit_carried(struct ng_rc_peer *p)
{
	p->credit_sent = p->rx_free;
	p->credit_due = false;
}

/*
 * Posts one ring message of @type to @p: SEND_WITH_IMM of @sge (nsge 0 or
 * 1).  The caller checked room and credit.  Returns the errno of the post
 * (0: posted); *inl_p says whether the data went inline (the caller's buffer
 * is free at once).  Signaled when a send waits for it (not inline, or a
 * FIN), else selectively (ng_rc_post).
 */
static inline int ng_rc_post_msg(struct ng_rc *t, struct ng_rc_peer *p, enum ng_rc_type type, uint8_t flags,
                                 struct ibv_sge *sge, int nsge, bool *inl_p)
{
	struct ibv_send_wr wr;
	size_t len = nsge ? sge->length : 0;
	bool inl = len <= t->max_inline;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uint64_t)p->rank;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = (!inl || type == NG_RC_FIN ? IBV_SEND_SIGNALED : 0) | (inl ? IBV_SEND_INLINE : 0);
	wr.imm_data = htonl(NG_RC_IMM(type, type == NG_RC_FIN ? flags : 0, p->rx_free));
	wr.sg_list = sge;
	wr.num_sge = nsge;
	rc = ng_rc_post(t, p, &wr);
	if (!rc) {
		p->tx_seq++;
		ng_rc_credit_carried(p);
	}
	*inl_p = inl;
	return rc;
}

/* ---- receive ring ------------------------------------------------------ */

/* Posts the receive of ring slot @slot of @p.  Returns 0 or an errno. */
static inline int ng_rc_post_slot(struct ng_rc *t, struct ng_rc_peer *p, size_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(p->ring_a.base + slot * t->slot),
	                      .length = (uint32_t)t->eager,
	                      .lkey = p->ring_a.mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = (uint64_t)p->rank << 32 | slot, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->q.qp, &wr, &bad);
}

/* ---- setup (rc_setup.c) ----------------------------------------------- */

/* Sizes from the options and the device's limits.  Reports what does not
 * fit. */
ng_status ng_rc_sizes(struct ng_rc *t, const struct ng_ib_conf *cf);
/* The QP towards @p: its receive ring allocated and registered, the QP
 * created, in INIT, the ring's receives posted (counted in t->nqps).
 * Reports its errors. */
ng_status ng_rc_peer_qp(struct ng_rc *t, struct ng_rc_peer *p);
/* The connection service's callbacks (--connect lazy): a peer's QP made on
 * demand, and a peer whose QP is up made active (its queued work goes). */
extern const struct ng_ibv_cm_ops ng_rc_cm_ops;
/* report(): rank 0's "connect", "qps", "qps_at_open", "connect_ms",
 * "handshakes_resent". */
struct json_t *ng_rc_report(struct ng_comm *c);

/* ---- read mode (rc_read.c) -------------------------------------------- */

/*
 * --ib-mode read (Netgauge's -M r): every data message, whatever its size,
 * is pulled by the receiver.  The sender posts a NOTICE ring message (its
 * buffer: address, key, length; an EAGER-share credit, since a NOTICE may
 * wait unexpected in the ring) and keeps the send in p->wq; the receive that
 * the NOTICE matches (message order, as in send mode) RDMA-reads the payload
 * into its buffer in pieces of at most maxw bytes (ng_rc_read_piece), and
 * once the reads have completed sends a FIN (a ring message, full-ring
 * credit) and completes; the FIN completes the oldest send of p->wq.  RC
 * only (UC has no RDMA read).  Each function below is called by rc.c with
 * @p usable (p->err clear) and may fail @p.
 */

/* The length of the next read of a message of @len bytes of which @off are
 * read, pieces of at most @max (> 0) bytes; 0 when all is read. */
static inline size_t ng_rc_read_piece(size_t len, size_t off, size_t max)
{
	if (off >= len)
		return 0;
	return len - off < max ? len - off : max;
}

/* The NOTICE of a send: its buffer (@addr, @rkey, @len) as message @idx.
 * Encoded into and decoded from the ring slot as struct ng_rc_cts. */
static inline struct ng_rc_cts ng_rc_notice_make(uint64_t idx, uint64_t addr, uint64_t len, uint32_t rkey)
{
	return (struct ng_rc_cts){.idx = idx, .addr = addr, .len = len, .rkey = rkey};
}

/* Sends the NOTICE of send @r, at the head of p->sq or in no queue.
 * Returns false when it must wait (room, credit): @r is left alone; true
 * when it was posted (@r left p->sq for p->wq, where it stays until its FIN)
 * or failed (@r completed with the error, every queue of @p dropped). */
bool ng_rc_read_send(struct ng_rc *t, struct ng_rc_peer *p, struct ng_ib_req *r);

/* Gives the NOTICE in ring message @s to the receive at the head of p->rq
 * (not empty), which moves to p->rdq; releases the slot. */
void ng_rc_read_deliver(struct ng_rc *t, struct ng_rc_peer *p, uint64_t s);

/* A FIN of ring slot @m arrived: completes the oldest send of p->wq. */
void ng_rc_read_fin(struct ng_rc *t, struct ng_rc_peer *p, const struct ng_rc_meta *m);

/* Posts the reads of p->rdq as the send queue has room, and the FIN of each
 * receive whose reads have completed, in order; completes those receives. */
void ng_rc_read_progress(struct ng_rc *t, struct ng_rc_peer *p);

#endif
