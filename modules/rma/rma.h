/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "rma" module: MPI-2 one-sided communication (core/module.h, struct
 * ng_rma_ops) over ngauge's RDMA layer (rdma.h), the way "Efficient
 * Implementation of MPI-2 Passive One-Sided Communication on InfiniBand
 * Clusters" / "MPI-2 one-sided over InfiniBand" §4 designs it, with the
 * scheduling of "Scheduling of MPI-2 One Sided Operations" §4.  Its two-sided
 * operations are the rdma module's channel (chan.h) on the same layer.
 *
 * Windows.  win_allocate() allocates the window memory with the layer
 * (registered once), a control area of 64-bit words, and exchanges both
 * descriptors and the window length over the bootstrap.  Control area of
 * rank r, one word each, every word on a cache line of its own (a poller
 * never shares its line with another word being written):
 *   post[t]   written by target t: how many exposure epochs t opened to r
 *   done[o]   written by origin o: how many access epochs o closed to r
 *   fbar[k]   fence barrier, round k (dissemination barrier)
 *   lock      passive target lock: shared holders, + LOCK_EXCL if exclusive
 *   acc       the window's accumulate lock: 0 free, else holder + 1
 *
 * --rma-design direct (default):
 *   put = RDMA write, get = RDMA read, from the origin buffer when it is
 *   registered (the window, a cached registration for buffers above 64 KiB)
 *   or through a registered staging area (copied in at put, out at the
 *   epoch's end for get);
 *   accumulate = take the target's accumulate lock with compare-and-swap,
 *   RDMA read, combine here, RDMA write, release with a notified write;
 *   post = a notified write of post[me] at each origin; start records the
 *   group and communication to a target begins as soon as its post is
 *   seen (operations to a target whose post is not seen yet wait in a
 *   queue and go out at the next call that sees it); complete waits for
 *   local completion, flushes each target and writes done[me] there; wait
 *   polls done[o] of every origin of its group;
 *   fence = complete the epoch's operations, flush every target touched,
 *   then a dissemination barrier of notified writes;
 *   lock = fetch-and-add / compare-and-swap on the target's lock word
 *   (shared: add 1, back off while LOCK_EXCL is set; exclusive: 0 ->
 *   LOCK_EXCL), unlock = complete, flush, atomic release.  No target
 *   involvement anywhere.
 *   --rma-sched reorder: the epoch's operations are queued until complete
 *   and issued gets first, interleaved with puts (get, put, get, put, ...),
 *   so reads and writes use both directions of a link at once;
 *   --rma-sched aggregate: inside a PSCW access epoch, puts up to
 *   --rma-aggregate bytes are not written but packed into the epoch's
 *   completion message (one channel message instead of a write per put
 *   plus the done write), which the target unpacks in its wait; gets up to
 *   --rma-aggregate bytes are not read but requested in that message
 *   (M_GETREQ: target offset, length, and the id of the pending get that
 *   names where the origin wants the data), the target answers them in its
 *   wait with the window's bytes at that moment (M_GETREP, the sendrecv
 *   design's answer, in pieces of a channel message), straight into the
 *   origin's buffer, and complete returns only once every answer is there
 *   (ng_rma_mod_settle).  The target's wait returns once the DONE that
 *   ends the message is applied and its answers are sent, so the window's
 *   bytes were read inside the exposure epoch.  Fence and lock epochs have
 *   no completion message: their operations stay writes and reads.
 *   all = reorder and aggregate.
 *
 * --rma-design sendrecv: the baseline.  Every operation is a message over a
 *   channel of its own (requests of at most the eager size; larger ones in
 *   pieces), applied by the target when it is inside a one-sided call
 *   (post/wait/fence/...; a target that computes outside them delays its
 *   origins: that is what this design shows).  post sends POST to each
 *   origin, whose operations wait for it; complete sends DONE; gets are
 *   answered with the data (a request per RMA_NPEND / 2 answers at most;
 *   complete, unlock and fence return once every answer is here);
 *   lock/unlock are requests the target grants and
 *   acknowledges, so a passive-target epoch needs the target inside a call
 *   (in a benchmark, waiting in the closing fence).
 *
 * Errors (one line each): a range outside the target's window, a target
 * outside the epoch's group or 0..size-1, an operation outside an epoch,
 * unlock without lock, complete without start, wait without post: usage
 * (NG_ERR_USAGE); a target that does not post within --timeout:
 * NG_ERR_TIMEOUT ("rank T opened no exposure epoch within S s").
 *
 * Limits: origin buffers above 64 KiB stay registered in a cache of 16 until
 * the window is freed: memory freed and reused at the same address while a
 * window lives may be served by a stale registration (verbs).  Queued
 * operations per epoch: 4096 (more are issued early).
 *
 * Files.  Each design is its own table of one-sided operations (struct
 * ng_rma_ops): rma_direct.c (ng_rma_mod_direct_ops) and rma_sendrecv.c
 * (ng_rma_mod_sendrecv_ops).  open() chooses the design once: the
 * descriptor ng_module_rma's operations carry the direct table, and an
 * instance of the sendrecv design is served by operations of its own
 * whose table is the sendrecv one (ng_comm.ops), so that no operation asks
 * which design it runs.  rma.c holds what both use: the windows, the checks
 * of epochs and ranges, the start and wait of PSCW, the operations' channel
 * (messages of the sendrecv design and of aggregation, served in every
 * synchronisation call), and open and close.  This header is the contract
 * between them; nothing outside modules/rma/ includes it (the module's
 * interface is core/module.h).
 */
#ifndef NG_RMA_RMA_H
#define NG_RMA_RMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdmalayer/rdma.h"

#define RMA_STAGE     ((size_t)4 << 20)  /* staging bytes */
#define RMA_STAGE_MAX ((size_t)64 << 10) /* larger origin buffers are registered */
#define RMA_NCACHE    16
#define RMA_NOPS      4096
#define RMA_NPEND     4096
#define LOCK_EXCL     ((uint64_t)1 << 32)
#define RMA_LINE      8 /* words: every control word has a cache line of its own */

enum rma_kind { RMA_PUT, RMA_GET, RMA_ACC };

/* A queued operation (direct design). */
struct rma_op {
	uint8_t kind;
	int target;
	uint64_t off;
	size_t len;
	const unsigned char *src;    /* put: origin data (staged or registered) */
	unsigned char *dst;          /* get: where the data lands (staged or registered) */
	const struct ng_rdma_mr *mr; /* of src/dst, NULL: staged copy (put) */
};

/* A get whose data lands in staging and is copied out at the epoch's end. */
struct rma_copy {
	unsigned char *to;
	const unsigned char *from;
	size_t len;
};

/* Messages of the sendrecv design and of aggregation: a header and its data
 * (padded to 8 bytes); one channel message may carry several. */
enum rma_msg_type {
	M_PUT,
	M_ACC,
	M_GETREQ,
	M_GETREP,
	M_POST,
	M_DONE,
	M_FENCE,
	M_LOCK,
	M_GRANT,
	M_UNLOCK,
	M_UNLACK
};

struct rma_msg {
	uint8_t type;
	uint8_t dtype; /* M_ACC: enum ng_rma_type */
	uint8_t op;    /* M_ACC: enum ng_rma_op */
	uint8_t excl;  /* M_LOCK */
	uint32_t len;  /* data bytes that follow */
	uint64_t off;  /* in the target's window */
	uint64_t id;   /* M_GETREQ/M_GETREP: pending get */
	uint64_t arg;  /* M_GETREQ: bytes asked for; M_FENCE: epoch */
	uint32_t win;  /* window number (in creation order, the same on every rank) */
	uint32_t pad;
};

#define RMA_NSLOT 64 /* outgoing message buffers */

struct rma_slot {
	struct ng_req req;
	bool busy;
};

struct rma_reg {
	unsigned char *base;
	size_t len;
	struct ng_rdma_mr *mr;
	uint64_t used;
};

struct rma {
	struct ng_chan_mod cm;   /* first: the two-sided channel and the layer */
	bool reorder, aggregate; /* direct: --rma-sched */
	size_t agg_max;
	struct ng_chan *ich; /* the operations' channel (sendrecv, aggregate) */
	size_t S;            /* its largest message */
	struct ng_rdma_mr *box_mr;
	unsigned char *inbox;   /* [size][S] */
	unsigned char *outbox;  /* [RMA_NSLOT][S] */
	unsigned char *scratch; /* [S] the message being applied */
	unsigned char *selfbox; /* [S] a message to this rank itself */
	struct ng_req *inreq;   /* [size] */
	struct rma_slot slots[RMA_NSLOT];
	struct rma_msg *replies; /* [RMA_NPEND] queued answers: peer in .excl/.id */
	int *reply_to;
	size_t rq_head, rq_n;
	/* origin memory */
	struct ng_rdma_mr *stage_mr;
	size_t stage_used;
	struct rma_reg cache[RMA_NCACHE];
	uint64_t cache_clock;
	unsigned char **pend; /* [RMA_NPEND] destinations of gets in flight (sendrecv) */
	uint32_t *pend_len;   /* [RMA_NPEND] bytes each answer must carry: an answer (a
	                       * peer's message) of another length is refused */
	size_t npend_out;
	uint64_t pend_next;
	struct ng_boot *boot; /* windows are created and freed collectively */
	struct ng_win *wins;
	uint32_t nwins; /* windows created so far */
};

struct ng_win {
	struct rma *m;
	uint32_t id;
	size_t len;
	struct ng_rdma_mr *mem, *ctl;
	struct ng_rdma_rmr *rmem, *rctl; /* [size] */
	uint64_t *wlen;                  /* [size] */
	volatile uint64_t *post, *done, *fbar, *lockw, *accw;
	/* Where the design counts the exposure epochs targets opened to this
	 * rank (posts[t * posts_stride]) and the access epochs origins closed
	 * (dones[o * dones_stride]): the control words (post, done) or the
	 * messages (post_seen, done_seen); set by the design's win_allocate. */
	const volatile uint64_t *posts, *dones;
	size_t posts_stride, dones_stride;
	int nrounds;
	bool in_access, in_expose, in_fence;
	int *acc_grp, nacc, *exp_grp, nexp;
	bool *ingrp;          /* [size] target in the access group */
	uint64_t *post_want;  /* [size] */
	uint64_t *post_seen;  /* [size] sendrecv: POSTs received */
	bool *ready;          /* [size] its post was seen (or: lock held, fence) */
	uint64_t *posts_sent; /* [size] */
	uint64_t *dones_sent; /* [size] */
	uint64_t *done_want;  /* [size] */
	uint64_t *done_seen;  /* [size] sendrecv, aggregate: DONEs received */
	uint64_t *fence_seen; /* [size] sendrecv: FENCE epochs received */
	uint64_t fence_epoch;
	uint8_t *locked;   /* [size] 0, 1 shared, 2 exclusive */
	uint8_t *granted;  /* [size] sendrecv */
	uint8_t *unlacked; /* [size] sendrecv */
	bool *touched;     /* [size] written to in this epoch */
	struct rma_op *ops;
	size_t nops;
	struct rma_copy *copies;
	size_t ncopies;
	unsigned char *agg;   /* [size][S] aggregation (direct, aggregate) */
	size_t *agg_used;     /* [size] */
	int lock_excl_holder; /* sendrecv target */
	int lock_shared;
	int *lock_queue; /* [size] origin + 1, negative: exclusive */
	size_t lq_head, lq_n;
	struct ng_win *next;
};

static inline struct rma *rma_of(struct ng_comm *c)
{
	return ng_container_of(c, struct rma, cm.base);
}

static inline const char *rma_who(const struct rma *m)
{
	return m->cm.base.mod->name;
}

static inline size_t rma_type_size(unsigned t)
{
	return t == NG_RMA_INT32 ? 4 : 8;
}

/* Whether @t's exposure epoch for the current access epoch was seen. */
static inline bool rma_ready(struct ng_win *w, int t)
{
	if (!w->ready[t])
		w->ready[t] = __atomic_load_n(&w->posts[(size_t)t * w->posts_stride], __ATOMIC_ACQUIRE) >=
		              w->post_want[t];
	return w->ready[t];
}

/* The one-sided tables of the two designs. */
extern const struct ng_rma_ops ng_rma_mod_direct_ops;
extern const struct ng_rma_ops ng_rma_mod_sendrecv_ops;

/* ---- rma.c: shared by the designs ------------------------------------- */

/* The idle step of a wait for @peer (-1: the peers); @what says what is
 * awaited in the line reported on a timeout (NG_ERR_TIMEOUT). */
ng_status ng_rma_mod_idle(struct rma *m, int peer, const char *what);

/* Combines @count elements of @type at @src into @dst with @op (the
 * accumulate of MPI, element-wise). */
void ng_rma_mod_combine(unsigned char *dst, const unsigned char *src, size_t count, unsigned type,
                        unsigned op);

/* The operations' channel (m->ich).  Sends one message (@h and its data) to
 * @peer, serving while no buffer is free; a message to this rank is applied
 * at once. */
ng_status ng_rma_mod_send(struct rma *m, int peer, const struct rma_msg *h, const void *data);
/* Sends the prepared messages @buf (@len bytes) to @peer. */
ng_status ng_rma_mod_send_raw(struct rma *m, int peer, const void *buf, size_t len);
/* Serves what has arrived (applies it, answers it) and sends what is queued.
 * Never blocks; *@seen_p when anything happened. */
ng_status ng_rma_mod_serve(struct rma *m, bool *seen_p);
/* Serves until *@word >= @v (a counter in this process's memory that
 * messages or remote writes advance); @peer and @what name what is awaited. */
ng_status ng_rma_mod_until(struct rma *m, const volatile uint64_t *word, uint64_t v, int peer,
                           const char *what);
/* Gets answered by messages (M_GETREP: every get of the sendrecv design,
 * the aggregated ones of the direct design).  Reserves the ids of a get of
 * @len bytes (at least 1) into @origin, which the answers (pieces of at most
 * S - sizeof(struct rma_msg) bytes) are copied into when they arrive; *@id_p
 * is the first, for the request's M_GETREQ.id.  false, nothing reserved,
 * when the table of gets in flight (RMA_NPEND) has no room for them (after
 * ng_rma_mod_settle it has room for RMA_NPEND pieces).  ng_rma_mod_settle
 * returns once every reserved get is answered. */
bool ng_rma_mod_get_expect(struct rma *m, void *origin, size_t len, uint64_t *id_p);
/* Every message sent, every answer given, every get of ours answered. */
ng_status ng_rma_mod_settle(struct rma *m);

/* Epochs.  An operation to @target on [off, off + len) of its window:
 * NG_ERR_USAGE (reported) outside an access epoch to it, or outside the
 * window or the ranks. */
ng_status ng_rma_mod_check(struct rma *m, struct ng_win *w, int target, size_t off, size_t len);
/* Serves until @t's exposure epoch for the current access epoch is seen. */
ng_status ng_rma_mod_wait_ready(struct rma *m, struct ng_win *w, int t);
/* post: checks @group and opens the exposure epoch (the design then tells
 * each origin). */
ng_status ng_rma_mod_post_begin(struct rma *m, struct ng_win *w, const int *group, int n);
/* complete: NG_ERR_USAGE (reported) without start; and the end of the
 * access epoch after the design's part, @st its status so far. */
ng_status ng_rma_mod_complete_begin(struct rma *m, struct ng_win *w);
ng_status ng_rma_mod_complete_end(struct rma *m, struct ng_win *w, ng_status st);
/* lock and unlock: NG_ERR_USAGE (reported) for a rank outside the run, a
 * lock held already, an unlock without a lock; and the bookkeeping after
 * the design's part (@st its status). */
ng_status ng_rma_mod_lock_begin(struct rma *m, struct ng_win *w, int target);
ng_status ng_rma_mod_lock_end(struct rma *m, struct ng_win *w, int target, bool exclusive, ng_status st);
ng_status ng_rma_mod_unlock_begin(struct rma *m, struct ng_win *w, int target);
void ng_rma_mod_unlock_end(struct ng_win *w, int target);

/* The operations both designs share (struct ng_rma_ops). */
ng_status ng_rma_mod_start(struct ng_comm *c, struct ng_win *w, const int *group, int n);
ng_status ng_rma_mod_wait(struct ng_comm *c, struct ng_win *w);
void ng_rma_mod_win_free(struct ng_comm *c, struct ng_win *w);
/* Collective: the window of win_allocate (its memory, control area and the
 * peers' descriptors); the design's win_allocate then sets where it counts
 * posts and dones. */
ng_status ng_rma_mod_win_new(struct ng_comm *c, size_t len, void **base_p, struct ng_win **win_p);

#endif
