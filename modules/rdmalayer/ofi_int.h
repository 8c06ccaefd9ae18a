/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of the RDMA layer's ofi backend share: its state, its
 * operations' contexts and registrations, and the functions one of them
 * calls in another.  ofi.c picks the provider, opens the fabric, domain and
 * endpoint, exchanges the addresses and closes (and describes the backend);
 * ofi_mem.c registers memory; ofi_data.c is the data path: completions,
 * writes, reads, atomics, flush, and the test fault.  Internal to the ofi
 * backend (ngauge-ofi.so).
 */
#ifndef NG_RDMALAYER_OFI_INT_H
#define NG_RDMALAYER_OFI_INT_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "modules/rdmalayer/rdma.h"

#define OFI_DEPTH   128u /* operations in flight per peer */
#define OFI_NAMELEN 256u
#define OFI_POLL    16
#define OFI_ORDER   (FI_ORDER_WAW | FI_ORDER_RAW) /* what notices and flush need, ordered */
#define OFI_HELD    64u                           /* test fault: pieces held back at most */
#define OFI_ARENA   ((size_t)8 << 20)             /* test fault: copies of held writes */
#define OFI_FOPS    1024u                         /* test fault: contexts of held pieces */
#define OFI_LATE    64u                           /* test fault: progress rounds a piece is held */

/* How notices and flush are made safe (see the top). */
enum ofi_sem { OFI_SEM_ORDERED, OFI_SEM_DELIVERY, OFI_SEM_ASSUME };

struct ofi_op {
	struct fi_context2 fctx; /* first: the provider's */
	uint64_t ticket;
	uint64_t *old_p;     /* atomic: where the old value goes */
	const uint64_t *res; /* atomic: where the provider put it (staging) */
	int peer;            /* -1: a held piece of the test fault (not counted) */
	bool done;
};

struct ofi_mr {
	struct ng_rdma_mr pub; /* first */
	struct fid_mr *mr;
	void *desc;
	void *raw; /* mem_alloc: what to free */
};

/* Test fault: a piece of a write posted late. */
struct ofi_held {
	int peer;
	void *src;
	size_t len;
	uint64_t addr, key;
};

struct ofi {
	struct ng_rdma base; /* first */
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t *addr;             /* [size] */
	struct ofi_op *ops;          /* [size][OFI_DEPTH] */
	struct ng_rdma_stage *stage; /* [size]: staging rings, allocated when first used */
	struct ofi_mr *ctl;          /* [size] words: connection rounds, flush reads */
	struct ng_rdma_rmr *rctl;    /* [size] */
	char cache[12];              /* the user's FI_MR_CACHE_MAX_COUNT when not 0, else "" */
	uint64_t next_key;
	uint64_t wflags; /* of every write: FI_DELIVERY_COMPLETE in that mode */
	size_t iov_limit;
	enum ofi_sem sem;
	bool virt, local, prov_key, ep_bind;
	/* The test fault (NGAUGE_OFI_FAULT=late). */
	bool fault, releasing;
	struct ofi_mr *arena;
	size_t arena_at;
	struct ofi_held held[OFI_HELD];
	unsigned nheld, idle;
	struct ofi_op *fops; /* [OFI_FOPS] */
	size_t fop;
	char prov[64];
};

static inline struct ofi *ofi_of(struct ng_rdma *r)
{
	return ng_container_of(r, struct ofi, base);
}

static inline void *ofi_desc(const struct ng_rdma_mr *mr)
{
	return mr ? ((const struct ofi_mr *)(const void *)mr)->desc : NULL;
}

/* ---- ofi_data.c: the data path ------------------------------------------ */

/* The backend's progress, write, read, atomic and flush (struct
 * ng_rdma_backend). */
ng_status ng_ofi_progress(struct ng_rdma *r);
ng_status ng_ofi_write(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                       const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags, uint64_t *t_p);
ng_status ng_ofi_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
                      const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p);
ng_status ng_ofi_atomic(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
                        uint64_t off, uint64_t operand, uint64_t compare, uint64_t *old_p, uint64_t *t_p);
ng_status ng_ofi_flush(struct ng_rdma *r, int peer);

/* ---- ofi_mem.c: memory -------------------------------------------------- */

/* The backend's reg, dereg (and mem_free) and mem_alloc. */
ng_status ng_ofi_reg(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p);
void ng_ofi_dereg(struct ng_rdma *r, struct ng_rdma_mr *pub);
ng_status ng_ofi_mem_alloc(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p);

#endif
