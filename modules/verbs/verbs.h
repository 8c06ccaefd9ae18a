/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs core: what every module on libibverbs (rdma-core) shares.
 *
 * It owns one opened device port (context, protection domain, the chosen
 * port and GID), the registered communication memory handed out by a
 * module's alloc(), and helpers for queue pairs: creation with the largest
 * inline size the device takes, the INIT -> RTR -> RTS transitions with the
 * active MTU and valid retry settings, posting of sends, RDMA writes, RDMA
 * reads and remote atomics with per-QP completion accounting, and the
 * timeout/cancel bookkeeping of poll loops.  It knows nothing of messages,
 * rings or matching: the two-sided modules (ibrc, ibuc, ibud) and the
 * one-sided RDMA layer build those on top.
 *
 * Selection (ng_ibv_open), by the options of ng_verbs_options:
 *   device  --ib-dev NAME, else the first device (in libibverbs' order) that
 *           has an active port;
 *   port    --ib-port N, else the device's first active port;
 *   GID     --ib-gid INDEX; else on RoCE (Ethernet link layer) the first
 *           RoCE v2 GID that is an IPv4-mapped address (::ffff:a.b.c.d), else
 *           the first RoCE v2 GID, else the first valid one; on InfiniBand no
 *           GID (LID routing, no GRH) unless --ib-gid is given.
 *   Every GID entry is read with ibv_query_gid_ex, which also gives its type.
 *   A port that requires a GRH (IBV_QPF_GRH_REQUIRED: EFA) gets its first
 *   valid GID on InfiniBand too.
 *   The device must take the caller's queue pairs (verbs_check.h): an iWARP
 *   device is refused (it connects through rdma_cm), EFA for RC and UC;
 *   without --ib-dev such a device is passed over for the next one.
 *   Peers are compared at connection (link layer, GRH, GID type and family,
 *   subnet) and refused with both ranks' values when they cannot reach
 *   each other.  Addresses carry --ib-sl and, with a GRH, --ib-tclass.
 *
 * Queue pairs: a QP counts what it posted and what completed, so work
 * request number n (1-based, in posting order) is complete once done >= n.
 * A QP completes its work requests in order, so after the first error
 * completion all later ones are flushed: err_from records the number of the
 * first failed one.  Work requests are posted signaled (ng_ibv_wr_rdma,
 * ng_ibv_wr_atomic), except where a module signals selectively
 * (ng_ibv_qp_signal_due: ibrc/ibuc): then only a request someone waits for
 * and at least every sig_every-th one are, and the completion of number n
 * completes every earlier one (ng_ibv_qp_complete_to, with n from the
 * wr_id, ng_ibv_qp_number).
 *
 * Layering: the bottom of the verbs family: it includes core and
 * modules/watch/watch.h only; the ib modules (modules/ib/) and the RDMA layer's
 * verbs backend (modules/rdmalayer/verbs.c) are built on it.
 *
 * Threading: none; an instance belongs to one thread.  Byte order: the
 * addresses exchanged between ranks are in host order (all ranks of a run
 * share one).
 */
#ifndef NG_VERBS_VERBS_H
#define NG_VERBS_VERBS_H

#include <infiniband/verbs.h>

#include "modules/verbs/verbs_check.h"
#include "modules/verbs/verbs_options.h"
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "modules/watch/watch.h"
#include "options.h"
#include "status.h"

/* What ng_ibv_open selects by. */
struct ng_ibv_conf {
	const char *who;      /* module name, prefixes every message ("ibrc") */
	const char *dev;      /* device name, NULL or "": automatic */
	int port;             /* 0: automatic */
	int gid_index;        /* -1: automatic */
	int sl;               /* --ib-sl: service level, 0-15 */
	int tclass;           /* --ib-tclass: GRH traffic class, 0-255 */
	enum ibv_qp_type qpt; /* the queue pairs the caller makes (0: RC) */
	bool quiet;           /* report nothing (a caller probing whether verbs opens) */
};

/* The options of the selection: ng_verbs_options (verbs_options.h). */

/* Reads ng_verbs_options (struct ng_verbs_config) into @cf (who, qpt and quiet untouched).  A port
 * outside 1-255, a GID index outside 0-255 (an address handle's source GID
 * index is 8 bits), a service level outside 0-15 or a traffic class outside
 * 0-255 is NG_ERR_USAGE, reported by the rank with @say (every rank reads
 * the same options). */
ng_status ng_ibv_conf_read(const struct ng_args *a, const char *who, bool say, struct ng_ibv_conf *cf);

/* One registered block handed out by ng_ibv_mem_alloc. */
struct ng_ibv_mem {
	unsigned char *base; /* what the caller got */
	size_t len;          /* usable bytes from base */
	void *raw;           /* what aligned_alloc returned */
	struct ibv_mr *mr;
};

/* An opened device port and its registered memory. */
struct ng_ibv {
	const char *who;
	bool quiet; /* opened quiet: reports nothing at open and connection */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	uint8_t port;
	uint8_t sl, tclass;        /* of every address (--ib-sl, --ib-tclass) */
	struct ng_ibv_facts facts; /* what the device checks decided by */
	bool roce;                 /* Ethernet link layer */
	bool global;               /* address with a GRH (RoCE, or --ib-gid on IB) */
	int gid_index;             /* -1 without a GRH */
	uint32_t gid_type;         /* enum ibv_gid_type of the chosen GID */
	union ibv_gid gid;
	int mem_access; /* ibv_access_flags of alloc() memory */
	size_t page;
	char name[64]; /* device name */
	/* Registration table of alloc() blocks: a few entries, searched
	 * linearly; @last is the index of the latest hit. */
	struct ng_ibv_mem *mems;
	size_t nmems, capmems, last;
};

/* A registered internal area (rings, counters, staging). */
struct ng_ibv_area {
	unsigned char *base;
	size_t len;
	struct ibv_mr *mr;
};

/* A rank's port address, exchanged over the bootstrap. */
struct ng_ibv_ep {
	uint8_t gid[16];
	uint16_t lid;
	uint8_t mtu;        /* enum ibv_mtu: the port's active MTU */
	uint8_t global;     /* addresses to this rank need a GRH */
	uint8_t link_layer; /* IBV_LINK_LAYER_* */
	uint8_t gid_type;   /* enum ibv_gid_type */
	uint8_t rd_init;    /* reads/atomics its device issues per QP (max_qp_init_rd_atom, <= 255) */
	uint8_t rd_resp;    /* reads/atomics its device answers per QP (max_qp_rd_atom, <= 255) */
	uint32_t gid_index;
};

/* A queue pair with completion accounting (see the top of this file). */
struct ng_ibv_qp {
	struct ibv_qp *qp;
	enum ibv_qp_type type;
	uint64_t posted;   /* work requests posted */
	uint64_t done;     /* completions seen */
	uint64_t err_from; /* number of the first failed request, UINT64_MAX: none */
	uint32_t depth;    /* send queue depth */
	uint32_t max_inline;
	uint32_t sig_every; /* selective signaling: at least every n-th request (0, 1: all) */
	uint64_t sig_last;  /* number of the last signaled request */
};

/*
 * Collective over all ranks of @boot.  Selects device, port and GID (see
 * above), opens the device and allocates the protection domain.  A rank that
 * fails writes one line naming the cause (no device: how to get a Soft-RoCE
 * device; unknown --ib-dev: the devices that exist); identical messages of
 * several ranks are printed once, by the lowest of them.  When any rank
 * fails, all return an error: NG_ERR_NODEV (no usable device), NG_ERR_USAGE
 * (a bad --ib-dev/--ib-port/--ib-gid), NG_ERR_SYS, or, on the ranks that did
 * not fail themselves, the failing rank's status.  On failure nothing is left
 * open.
 */
ng_status ng_ibv_open(struct ng_ibv *v, const struct ng_ibv_conf *cf, struct ng_boot *boot);
/* Releases the remaining alloc() blocks, the PD and the device.  QPs, CQs,
 * AHs and areas must be gone already. */
void ng_ibv_close(struct ng_ibv *v);

/* "rxe0 port 1 gid 1 mtu 1024 (RoCE v2)" / "mlx5_0 port 1 lid 7 mtu 4096
 * (InfiniBand)", with @mtu the MTU in use. */
void ng_ibv_describe(const struct ng_ibv *v, enum ibv_mtu mtu, char *buf, size_t len);
/* This rank's address. */
void ng_ibv_ep_get(const struct ng_ibv *v, struct ng_ibv_ep *ep);

/*
 * Whether every rank's address (@eps, @size of them, @stride bytes apart:
 * the records of an exchange) can reach every other's (ng_ibv_check_peer,
 * each against rank 0).  NG_ERR_UNSUPPORTED when not, reported by rank 0
 * (@rank) unless v was opened quiet; every rank returns the same.
 */
ng_status ng_ibv_eps_check(const struct ng_ibv *v, int rank, size_t size, const struct ng_ibv_ep *eps,
                           size_t stride);

/*
 * Takes rank @peer's address @ep from an exchange: NG_OK when its MTU is
 * one of enum ibv_mtu and this rank may reach it; else NG_ERR_PROTO,
 * reported in one line.  Under --server (@b->peer_addr set: bootstrap.h) a
 * RoCE GID that is an IPv4-mapped address (::ffff:a.b.c.d) is reached only
 * where ng_boot_may_connect() admits a.b.c.d, and a RoCE GID of another
 * IPv6 address not at all (neither the client's address nor --allow can
 * name it); an InfiniBand LID or GID, which carries no IP address and
 * reaches only the InfiniBand fabric (a trusted network), always.
 */
ng_status ng_ibv_ep_take(const struct ng_boot *b, const struct ng_ibv_ep *ep, int peer);

static inline size_t ng_ibv_mtu_bytes(enum ibv_mtu m)
{
	return (size_t)128 << (unsigned)m;
}

/* ---- memory ----------------------------------------------------------- */

/*
 * alloc() of a module: at least @len bytes, 64-byte aligned (page aligned
 * for @len >= 4096), registered with v->mem_access, entered in the table.
 * Reports its errors (ulimit -l is named when pinning fails).
 */
ng_status ng_ibv_mem_alloc(struct ng_ibv *v, size_t len, void **buf_p);
/* free() of a module; @buf must come from ng_ibv_mem_alloc (asserted). */
void ng_ibv_mem_free(struct ng_ibv *v, void *buf);

/* The block holding [buf, buf + len), or NULL.  No system call. */
static inline const struct ng_ibv_mem *ng_ibv_mem_find(struct ng_ibv *v, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	const struct ng_ibv_mem *m;

	if (v->last < v->nmems) {
		m = &v->mems[v->last];
		if (p >= m->base && len <= m->len && (size_t)(p - m->base) <= m->len - len)
			return m;
	}
	for (size_t i = 0; i < v->nmems; i++) {
		m = &v->mems[i];
		if (p >= m->base && len <= m->len && (size_t)(p - m->base) <= m->len - len) {
			v->last = i;
			return m;
		}
	}
	return NULL;
}

/* Reports a failed registration of @len bytes (@what) with the cause @err
 * (an errno; the locked-memory limit is named when pinning failed). */
void ng_ibv_reg_error(const struct ng_ibv *v, size_t len, const char *what, int err);

/* A zeroed, page-aligned internal area of @len bytes registered with
 * @access.  Reports its errors. */
ng_status ng_ibv_area_alloc(struct ng_ibv *v, size_t len, int access, const char *what,
                            struct ng_ibv_area *a);
/* Safe on a zeroed area. */
void ng_ibv_area_free(struct ng_ibv_area *a);

/*
 * Staging: registered bytes that belong to one work request while it is in
 * flight, @slot bytes for each of the @depth work requests of the send queue
 * to each of @npeers peers.  What a work request sends from memory that is
 * not registered (a CTS, a credit word, unregistered pieces of a write) is
 * copied into the slot of its number, and an atomic's old value lands
 * there; the slot of work request n to peer p (n as ng_ibv_qp.posted counts
 * them) is free again once n has completed, when the send queue (at most
 * @depth in flight) lets number n + depth be posted.
 */
struct ng_ibv_stage {
	struct ng_ibv_area area; /* [npeers][depth][slot] */
	size_t slot;
	uint32_t depth;
};

/* Allocates the staging of @npeers send queues of @depth work requests, with
 * @slot bytes each (local access only).  Reports its errors. */
ng_status ng_ibv_stage_alloc(struct ng_ibv *v, size_t npeers, uint32_t depth, size_t slot,
                             struct ng_ibv_stage *s);
/* Safe on a zeroed staging. */
void ng_ibv_stage_free(struct ng_ibv_stage *s);

/* The slot of work request number @wr to peer @peer. */
static inline unsigned char *ng_ibv_stage_at(const struct ng_ibv_stage *s, int peer, uint64_t wr)
{
	return s->area.base + ((size_t)peer * s->depth + (size_t)(wr % s->depth)) * s->slot;
}

/* The local key of every slot. */
static inline uint32_t ng_ibv_stage_lkey(const struct ng_ibv_stage *s)
{
	return s->area.mr->lkey;
}

/* ---- queue pairs ------------------------------------------------------ */

/*
 * Creates a QP of @type on @scq/@rcq with room for @sq_depth sends and
 * @rq_depth receives, 4 scatter/gather entries per send (the RDMA layer's
 * NG_RDMA_IOV_MAX) and 1 per receive, and the largest
 * inline size up to *@inline_p the device accepts (found by bisection,
 * ng_ibv_bisect); the size the device granted for it (which may be more) is
 * the QP's max_inline and is written back, so that later QPs ask for it at
 * once.  Reports its errors.
 */
ng_status ng_ibv_qp_create(struct ng_ibv *v, enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
                           uint32_t sq_depth, uint32_t rq_depth, uint32_t *inline_p, struct ng_ibv_qp *q);
/* Safe on a zeroed or half-made QP. */
void ng_ibv_qp_destroy(struct ng_ibv_qp *q);

/* The PSN a QP starts with, derived from its number (both sides know it). */
static inline uint32_t ng_ibv_psn(uint32_t qpn)
{
	return (qpn * 2654435761u) & 0xffffffu;
}

/* The QKey of ngauge's UD QPs (bit 31 clear: not privileged). */
#define NG_IBV_QKEY 0x6e670001u

/*
 * RESET -> INIT -> RTR -> RTS towards @remote (QP number @rqpn) with path MTU
 * @mtu.  RC: ack timeout 14 (4.096 us * 2^14 = 67 ms), retry_cnt 7 (the
 * maximum), rnr_retry 7 (infinite), up to 16 RDMA reads/atomics outstanding
 * each way, agreed with the peer (ng_ibv_rd_atom_agree: no more than its
 * device answers, no more than this one issues or answers); access: remote write, read and
 * atomics.  UC: remote write only.  UD: @remote and @rqpn unused.  Receives
 * may be posted once the QP is in INIT: call ng_ibv_qp_init first, post,
 * then ng_ibv_qp_connect.  Report their errors with @peer (-1: none).
 */
ng_status ng_ibv_qp_init(struct ng_ibv *v, struct ng_ibv_qp *q);
/* The two halves of ng_ibv_qp_connect, for a connection made in steps
 * (verbs_conn.h): INIT -> RTR (receives towards @remote's QP @rqpn), then
 * RTR -> RTS (sends). */
ng_status ng_ibv_qp_rtr(struct ng_ibv *v, struct ng_ibv_qp *q, const struct ng_ibv_ep *remote, uint32_t rqpn,
                        enum ibv_mtu mtu, int peer);
ng_status ng_ibv_qp_rts(struct ng_ibv *v, struct ng_ibv_qp *q, const struct ng_ibv_ep *remote, int peer);
ng_status ng_ibv_qp_connect(struct ng_ibv *v, struct ng_ibv_qp *q, const struct ng_ibv_ep *remote,
                            uint32_t rqpn, enum ibv_mtu mtu, int peer);

/*
 * Collective: connects a full mesh of RC or UC QPs, *@qps[i] towards rank i
 * (qps[rank] NULL), created and in INIT on every rank.  Every rank
 * publishes its port address, its QP numbers, @len bytes of @extra (what the
 * caller's peers need: ring addresses and keys, window bases) and @local
 * (its status so far: a rank that failed before takes part with its error, so
 * that all fail together).  Then every QP goes to RTS with the path MTU of
 * its pair, and the ranks agree that all did before any message can move
 * (UC drops what arrives before the receiving QP is ready).  On success
 * @extras (size * len bytes) holds every rank's @extra and *@mtu_p the
 * smallest active MTU of all ranks.  Errors are reported by the rank that
 * decides them; the others return that rank's status quietly.
 */
ng_status ng_ibv_mesh_connect(struct ng_ibv *v, struct ng_boot *b, struct ng_ibv_qp *const *qps,
                              ng_status local, const void *extra, size_t len, void *extras,
                              enum ibv_mtu *mtu_p);

/* An address handle to @remote (UD). */
ng_status ng_ibv_ah_create(struct ng_ibv *v, const struct ng_ibv_ep *remote, int peer, struct ibv_ah **ah_p);

/* ---- posting (hot path: no allocation, no logging) -------------------- */

/* Room for @n more work requests in the send queue. */
static inline bool ng_ibv_qp_room(const struct ng_ibv_qp *q, uint32_t n)
{
	return q->posted - q->done + n <= q->depth;
}

/*
 * Posts the chain @wr (the caller set opcode, sges, addresses, signaling
 * and the other flags).  Returns 0 or the errno of ibv_post_send
 * (nothing counted then).  Reporting is left to the caller (cold path).
 */
static inline int ng_ibv_post(struct ng_ibv_qp *q, struct ibv_send_wr *wr, uint32_t n)
{
	struct ibv_send_wr *bad;
	int rc;

	rc = ibv_post_send(q->qp, wr, &bad);
	if (!rc)
		q->posted += n;
	return rc;
}

/* Fills @wr as a one-sided operation on [raddr, raddr + len) under @rkey.
 * The caller sets sg_list/num_sge and posts with ng_ibv_post. */
static inline void ng_ibv_wr_rdma(struct ibv_send_wr *wr, enum ibv_wr_opcode op, uint64_t wr_id,
                                  uint64_t raddr, uint32_t rkey)
{
	wr->wr_id = wr_id;
	wr->next = NULL;
	wr->opcode = op;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
}

/* Fills @wr as an 8-byte remote atomic (IBV_WR_ATOMIC_CMP_AND_SWP with
 * @compare/@swap, or IBV_WR_ATOMIC_FETCH_AND_ADD with @compare as the
 * addend) on the aligned word at @raddr; the old value lands in the
 * caller's 8-byte sge. */
static inline void ng_ibv_wr_atomic(struct ibv_send_wr *wr, enum ibv_wr_opcode op, uint64_t wr_id,
                                    uint64_t raddr, uint32_t rkey, uint64_t compare, uint64_t swap)
{
	wr->wr_id = wr_id;
	wr->next = NULL;
	wr->opcode = op;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.atomic.remote_addr = raddr;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.compare_add = compare;
	wr->wr.atomic.swap = swap;
}

/*
 * Accounts one send-queue completion of @q.  Returns true on the first
 * failed completion of the QP (the caller reports it once, naming the peer),
 * false otherwise (success, or an error after the first).
 */
static inline bool ng_ibv_qp_complete(struct ng_ibv_qp *q, enum ibv_wc_status status)
{
	q->done++;
	if (status == IBV_WC_SUCCESS || q->err_from != UINT64_MAX)
		return false;
	q->err_from = q->done;
	return true;
}

/*
 * Selective signaling.  Whether work request number posted + 1 of @q is to
 * be signaled: when the caller waits for its completion (@need: its buffer,
 * a read's data, the end of a send), and when sig_every - 1 unsignaled ones
 * went before it, so that any sig_every consecutive requests hold one whose
 * completion frees the send queue (sig_every <= depth: the queue never
 * fills with unsignaled requests only).  The caller posts it with
 * IBV_SEND_SIGNALED then and records it with ng_ibv_qp_signaled.  Pure.
 */
static inline bool ng_ibv_qp_signal_due(const struct ng_ibv_qp *q, bool need)
{
	return need || q->posted + 1 - q->sig_last >= q->sig_every;
}
/* The request just posted was signaled. */
static inline void ng_ibv_qp_signaled(struct ng_ibv_qp *q)
{
	q->sig_last = q->posted;
}
/* The number of the request whose completion carries @low, the low @bits
 * bits of its number in its wr_id: the first one after q->done with those
 * bits (a completion is for a request in done + 1 .. done + depth).  Pure. */
static inline uint64_t ng_ibv_qp_number(const struct ng_ibv_qp *q, uint64_t low, unsigned bits)
{
	uint64_t mask = (UINT64_C(1) << bits) - 1;

	return q->done + ((low - q->done) & mask);
}
/* Accounts the completion of request number @n of @q and so of every one
 * before it (selective signaling).  Returns true on the first failed
 * completion of the QP, as ng_ibv_qp_complete. */
static inline bool ng_ibv_qp_complete_to(struct ng_ibv_qp *q, uint64_t n, enum ibv_wc_status status)
{
	if (n > q->done)
		q->done = n;
	if (status == IBV_WC_SUCCESS || q->err_from != UINT64_MAX)
		return false;
	q->err_from = n;
	return true;
}

/* Whether work request number @n of @q has completed, and how. */
static inline bool ng_ibv_qp_is_done(const struct ng_ibv_qp *q, uint64_t n)
{
	return q->done >= n;
}
static inline bool ng_ibv_qp_failed(const struct ng_ibv_qp *q, uint64_t n)
{
	return n >= q->err_from;
}

/* Reports a failed work completion on the way to or from @peer: "rank R lost
 * (transport retry counter exceeded)" for the statuses a dead peer causes,
 * else the status text.  Returns NG_ERR_PEER_LOST or NG_ERR_IO. */
ng_status ng_ibv_wc_error(const struct ng_ibv *v, const struct ibv_wc *wc, int peer, const char *what);

#endif
