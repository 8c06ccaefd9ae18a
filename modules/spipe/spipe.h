/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "spipe" module: two-sided messages from ordinary (unregistered)
 * memory at RDMA speed, the superpipeline protocol of Denis (Euro-Par 2011)
 * and the protocols it is measured against, on the rdma module's channel
 * (chan.h) over any RDMA layer backend.
 *
 * Buffers are ordinary memory (alloc() maps anonymous pages; the module
 * does not need NG_CAP_REGMEM).  Messages up to --rdma-eager go through the
 * channel's ring (the layer stages the payload: one copy in, one out).
 * Larger ones go by the channel's rendezvous (the receive posts a CTS, the
 * sender writes, a FIN closes) with the protocol of --spipe-mode plugged
 * into the channel (struct ng_chan_rndv):
 *
 *   reg       the sender registers its buffer when the send is posted, the
 *             receiver its buffer before the CTS; one write into it; both
 *             deregister when done.
 *   rcache    the same with the registrations kept in a cache (rcache.h).
 *   copy      the sender copies the whole message into a registered buffer
 *             of its own, writes it (one notified write) into the
 *             receiver's registered buffer, which copies it out.
 *   pipeline  chunks of C_opt(L) (eq. 3) through --spipe-buffers buffers of
 *             --spipe-bufsize bytes: the copy of chunk i+1 overlaps the write
 *             of chunk i; each chunk one notified write, copied out once
 *             complete.
 *   super     the superpipeline: chunks C_i = C_0 q^i (eq. 5) folded onto the
 *             same buffers, cut into sub-blocks of --spipe-block bytes whose
 *             last 8 bytes are a flag; a chunk is ONE write with a notice per
 *             sub-block (NG_RDMA_BLOCKS), so the receiver copies each block
 *             out while the rest of the chunk is still arriving.  The sender
 *             copies its first chunk as soon as the send is posted, while
 *             the CTS may still be on its way.
 *
 * Chunked transfers (copy, pipeline, super).  Chunks to a peer are numbered
 * 1, 2, ... over the whole run (stamps); chunk k goes into buffer (k-1) mod
 * N of the receiver's staging area, whose descriptor the CTS carries, and
 * each of its flags holds k, so an old flag never passes for a new one.
 * Sender and receiver cut a message of L bytes into the same chunks (the
 * schedule is a function of L and of parameters all ranks share: rank 0's
 * model, broadcast at open).  The receiver acknowledges every chunk it has
 * copied out by writing its count into a word at the sender; the sender
 * writes chunk k only when chunk k - N has been acknowledged (N-buffering:
 * with N = 3 it waits for the acknowledgement of the chunk three back, not
 * the previous one), and copies into one of its own N buffers only when
 * the write that last left it has completed.  The FIN follows the last
 * chunk (its notice orders it after them): the receive completes on it,
 * with whatever was not yet copied out copied then.  copy mode is one chunk
 * of the whole message through one buffer (of the message's size, grown
 * when a larger message comes).
 *
 * The registration cache and freed memory (rcache.h).  A registration names
 * the pages mapped when it was made; memory freed and mapped anew at the
 * same address would be served by a stale one.  This module sees every
 * release of the memory it hands out: free() invalidates every cache entry
 * overlapping the block before it unmaps it, so a later block at the same
 * address misses and is registered anew.  Memory that did not come from
 * alloc() (whose release the module cannot see) is registered for the
 * message and deregistered after it, never cached.  We do not intercept
 * malloc/free/munmap of the application (the paper's warning: such hooks
 * break with other allocators and runtimes).
 *
 * --spipe-fresh: every message's buffers are memory the protocol has never
 * seen: the cache forgets them before and after each message, exactly as
 * when the application had freed them and allocated new ones (rcache then
 * misses every time and costs what reg does).  The copy modes never learn
 * anything about user memory, so fresh and reused are the same to them.
 * What the kernel does for truly new pages (faulting them in) is the
 * application's cost and not part of this.
 *
 * The model (spipe_model.h).  open() measures, on the backend in use:
 * lambda_reg, B_reg and their dereg counterparts (registering and
 * deregistering touched memory of 4 KiB to 4 MiB, rank 0; medians),
 * B_copy(L) (memcpy of 4 KiB to 16 MiB, rank 0; medians), lambda_net and
 * B_net (ping-pong of notified writes between registered buffers of ranks
 * 0 and 1, 8 B to 1 MiB, the first quartile of each size's rounds:
 * lambda_net the half round trip of 8 B, 1/B_net the median of the slopes
 * between the sizes from 64 KiB on) and g (a train of 16 writes of 64 B
 * against one, per extra write).  Rank 0 broadcasts the result; it fixes the schedules (C_0 =
 * B_copy(L) 2 lambda_net and q = B_copy(L) / B_net, at least 1.5, unless
 * --spipe-c0 and --spipe-q say otherwise) and the predictions.  The result file gets the
 * parameters under "spipe" and each row the predicted one-way time of its
 * size ("predicted_us", to read against pingpong's latency_us) and that of
 * every mode.
 *
 * Progress and failures: everything happens in the channel's progress
 * (test, wait, blocking calls); a peer that stops writing flags, acks or
 * ring messages is named after --timeout by the channel's watchdog.
 *
 * Files.  spipe_proto.c: the protocols, the module's memory, open and close;
 * spipe_calib.c: the start-up measurements that fit the model, and what the
 * result file gets of the model; spipe_model.c (spipe_model.h): the model
 * and the chunk schedules, pure code.  This header is the contract between
 * them; nothing outside modules/spipe/ includes it (the module's interface
 * is core/module.h).
 */
#ifndef NG_SPIPE_SPIPE_H
#define NG_SPIPE_SPIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdmalayer/rcache.h"
#include "modules/rdmalayer/rdma.h"
#include "modules/spipe/spipe_model.h"

#define SP_NBUF_MAX   16u
#define SP_CTL        64u /* bytes per peer in the acknowledgement area */
#define SP_RC_ENTRIES 64u
#define SP_RC_BYTES   ((size_t)1 << 30)

/* Registered staging memory of a receiver, named by CTSs.  One reference
 * per receive whose CTS named it, one while it is its peer's current area. */
struct sp_area {
	struct ng_rdma_mr *mr;
	unsigned refs;
};

/* A chunk copied into a local buffer, not yet written. */
struct sp_pend {
	unsigned slot;
	size_t len;
};

struct sp_peer {
	/* Sender side: messages to this peer. */
	struct ng_rdma_mr *tx_mr; /* N local buffers of tx_slot bytes */
	size_t tx_slot;
	uint64_t tx_ticket[SP_NBUF_MAX]; /* the write that last left each buffer */
	uint64_t tx_stamp;               /* chunks written */
	uint64_t tx_local;               /* chunks copied (buffer tx_local mod N next) */
	struct sp_pend pend[SP_NBUF_MAX];
	unsigned pend_head, pend_n;
	bool tx_active;
	struct ng_spipe_plan tx_plan;
	size_t tx_copied;
	const volatile uint64_t *ack; /* chunks it has copied out (it writes) */
	/* Receiver side: messages from this peer. */
	struct sp_area *rx_area; /* current: named by new CTSs */
	uint64_t rx_stamp;       /* chunks copied out */
	bool rx_active;
	struct ng_spipe_plan rx_plan;
	size_t rx_pos, rx_chunk, rx_cpos;
	uint64_t ack_word;        /* source of the acknowledgement write */
	struct ng_rdma_rmr r_ack; /* its acknowledgement area */
};

/* A block of alloc() memory. */
struct sp_mem {
	unsigned char *base;
	size_t len;
};

/* Samples of the start-up measurements, for the result file. */
struct sp_samples {
	double reg_size[4], reg_us[4], dereg_us[4];
	double net_size[5], net_us[5];
	double train1_us, train16_us;
	double seconds, seconds_local; /* the whole measurement, its local part */
};

struct spipe {
	struct ng_chan_mod cm; /* first: base, layer, channel */
	struct ng_spipe_proto proto;
	struct ng_spipe_model model;
	struct sp_samples samples;
	size_t S;       /* eager size */
	size_t piece;   /* payload bytes per sub-block (super), 0: one piece per chunk */
	unsigned shift; /* log2 of the sub-block */
	bool fresh;
	bool c0_given, q_given;
	struct ng_rcache rc;
	uint64_t uncached; /* registrations of memory not from alloc() */
	struct ng_rdma_mr *ack_mr;
	struct sp_peer *peers;
	struct sp_mem *mems;
	size_t nmems, capmems;
};

static inline struct spipe *sp_of(struct ng_comm *c)
{
	return ng_container_of(c, struct spipe, cm.base);
}

static inline size_t sp_pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- spipe_calib.c ------------------------------------------------------ */

/* Collective: the model, measured by ranks 0 (and 1) at open and known to
 * all (rank 0 broadcasts it with its samples).  Errors are reported; all
 * ranks fail together. */
ng_status ng_spipe_measure(struct spipe *sp, struct ng_boot *b);
/* The module's report() and report_row() (core/module.h): the model's
 * parameters and samples, the protocol's settings and the registration
 * cache's counters; each row's predicted one-way times. */
struct json_t *ng_spipe_report(struct ng_comm *c);
void ng_spipe_report_row(struct ng_comm *c, size_t size, struct ng_row *row);

#endif
