/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of the RDMA layer's ucx backend share: its state, its
 * operations' records and registrations, and the functions one of them
 * calls in another.  ucx.c opens the context, worker and endpoints,
 * registers memory and publishes its keys, describes and closes; ucx_data.c
 * is the data path: completions, writes, reads, atomics, flush and the
 * lookup of a peer's key.  Internal to the ucx backend (ngauge-ucx.so).
 *
 * Keys.  A UCP remote key is a packed buffer of a size UCP chooses (tens to
 * hundreds of bytes), too large for the layer's 32-byte descriptor.  So
 * every rank keeps a key directory: memory of its own (ucp_mem_map), whose
 * packed key every rank learns at open, holding RUCX_SLOTS slots of
 * RUCX_SLOT bytes.  reg() packs the new registration's key into a free slot
 * and names the slot and its generation in the descriptor's key
 * (slot | generation << 32); the first access of a peer through that key
 * reads the slot (one ucp_get_nbx), checks the generation and unpacks the
 * key, which it keeps until a descriptor with another generation of the
 * slot comes.  The directory's first RUCX_CTL(size) bytes are the control
 * words of the connection rounds.
 */
#ifndef NG_RDMALAYER_UCX_INT_H
#define NG_RDMALAYER_UCX_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include "module.h"
#include "modules/rdmalayer/rdma.h"

#define RUCX_DEPTH 128u  /* operations in flight per peer */
#define RUCX_SLOTS 2048u /* registrations a rank may hold at once */
#define RUCX_SLOT  512u  /* bytes of a directory slot: head, length, key, tail */
/* Bytes of the control words at the start of the directory: two rounds of
 * one word per rank, in whole pages. */
#define RUCX_CTL(n) (((size_t)(n)*16u + 4095u) / 4096u * 4096u)

/* A directory slot as it lies in memory: head and tail are the generation
 * (head written last, tail first; a reader takes the key only when both are
 * the generation its descriptor names), then the packed key. */
struct rucx_slot {
	uint64_t head;
	uint64_t len;
	unsigned char key[RUCX_SLOT - 24];
	uint64_t tail;
};

struct rucx;

/* One operation in flight: its ticket, and where an atomic's operand and
 * old value live until it completes (UCP reads and writes them then). */
struct rucx_op {
	struct rucx *u;
	uint64_t ticket;
	uint64_t *old_p; /* atomic: where the old value goes */
	uint64_t val[2]; /* atomic: operand (fadd) or compare (cas); swap in, old out;
	                  * a notice: the word */
	int peer;
	bool done;
};

struct rucx_mr {
	struct ng_rdma_mr pub; /* first */
	ucp_mem_h memh;
	uint32_t slot; /* in the directory; RUCX_SLOTS: none (the directory itself) */
	bool mapped;   /* mem_alloc: UCP allocated the memory */
	void *raw;     /* mem_alloc from the heap: what to free */
	struct rucx_mr *prev, *next;
};

/* A peer's key as this rank unpacked it. */
struct rucx_key {
	uint64_t key; /* the descriptor's key (slot | generation << 32) */
	ucp_rkey_h rkey;
};

struct rucx {
	struct ng_rdma base; /* first */
	ucp_context_h ctx;
	ucp_worker_h worker;
	ucp_ep_h *eps;               /* [size] */
	bool *dirty;                 /* [size]: posted to since the endpoint's last flush */
	struct rucx_op *ops;         /* [size][RUCX_DEPTH] */
	struct ng_rdma_stage *stage; /* [size]: staging rings, allocated when first used */
	struct rucx_key **keys;      /* [size]: [RUCX_SLOTS] each, allocated at a peer's first key */
	ucp_rkey_h *dir_rkey;        /* [size]: the peers' directories */
	uint64_t *dir_addr;          /* [size] */
	struct rucx_mr *dir;         /* this rank's directory */
	struct rucx_mr *regs;        /* every registration left, for close */
	uint32_t *free_slots;        /* [RUCX_SLOTS]: a stack */
	uint32_t nfree;
	uint32_t *gen; /* [RUCX_SLOTS]: each slot's generation */
	struct rucx_slot fetch;
	ng_status err; /* an operation failed (reported at progress) */
	int err_peer;
	ucs_status_t err_status;
	char tls[96]; /* the transports to the first peer, for the description */
};

static inline struct rucx *rucx_of(struct ng_rdma *r)
{
	return ng_container_of(r, struct rucx, base);
}

/* ---- ucx_data.c: the data path ------------------------------------------ */

/* The backend's progress, write, read, atomic and flush (struct
 * ng_rdma_backend). */
ng_status ng_rucx_progress(struct ng_rdma *r);
ng_status ng_rucx_write(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                        const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags, uint64_t *t_p);
ng_status ng_rucx_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
                       const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p);
ng_status ng_rucx_atomic(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
                         uint64_t off, uint64_t operand, uint64_t compare, uint64_t *old_p, uint64_t *t_p);
ng_status ng_rucx_flush(struct ng_rdma *r, int peer);

/* A write of 8 bytes from @src (copied: any memory) to @raddr at @peer
 * under @rkey, counted as an operation (the connection rounds). */
ng_status ng_rucx_put_word(struct rucx *u, int peer, uint64_t word, uint64_t raddr, ucp_rkey_h rkey);
/* Waits for request @req (a status pointer from a UCP call without a
 * callback, NULL or an error as UCP returns them) making progress, for at
 * most the timeout; frees it.  @what names the operation in a report. */
ng_status ng_rucx_wait_req(struct rucx *u, int peer, ucs_status_ptr_t req, const char *what);
/* A UCP failure @s of @call with @peer (-1: none) reported; its status. */
ng_status ng_rucx_fail(const struct rucx *u, const char *call, int peer, ucs_status_t s)
    __attribute__((cold));

#endif
