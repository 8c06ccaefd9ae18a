/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "rdma" module: two-sided messages over the RDMA layer (rdma.h), the
 * one-sided channel of the Netgauge paper (Fig. 4), on any backend.
 *
 * Ring.  Every rank keeps, for every peer, a ring of R = --rdma-ring slots
 * that only that peer writes into, and one 64-bit credit word per peer that
 * the peer writes.  A ring message is ONE write with a notice (rdma.h,
 * NG_RDMA_NOTIFY) of
 *     [seq 8 | len 4 | type 1 | flags 1 | credit 2 | payload, padded to 8 | seq 8]
 * into slot (seq - 1) % R, where seq is the sender's ring message number
 * (1, 2, ...; slots are never cleared, the number tells old from new).  The
 * receiver polls the header's seq of its next slot, then the trailing seq
 * after the payload, whose notice makes the whole message visible.  One
 * write per message, no completion to wait for when the backend inlines or
 * copies it: the latency of the write channel is one RDMA write.  Types:
 *   EAGER  a whole message of at most S = --rdma-eager bytes;
 *   CTS    "clear to send": the receive buffer (descriptor, offset, length)
 *          for data message idx, sent when a receive larger than S is posted;
 *   FIN    the sender has written data message idx into that buffer (its
 *          notice orders it after the payload's writes).
 * Where a CTS points and how the payload gets there is the rendezvous
 * protocol's (chan.h, struct ng_chan_rndv): by default the receive block
 * itself, written from the send block; spipe's protocols register on the
 * fly, cache registrations, or copy through buffers of their own.
 * Data messages (EAGER or rendezvous) are numbered in posting order on both
 * sides; the n-th receive from a peer gets the n-th message from it.
 *
 * Rings at first use.  Only the control words (struct ch_ctl, 64 bytes
 * per peer: the credit word, the peer's ring for my messages, its ask)
 * are there for every peer from the open on.  The ring for a peer's
 * messages is allocated and registered by the receiver when first used:
 * at its first receive from that peer, or when the peer, holding a message
 * and no ring, has asked (it writes ctl.want, which every progress round
 * looks at for the peers without a ring); the receiver then writes the
 * ring's descriptor into the peer's ctl (ring, then ring_ready as the
 * notice), and the peer's ring messages wait until it sees it.  So the
 * first message to a new peer needs that peer's progress on the channel,
 * and its first receive or progress allocates (the one allocation of the
 * data path, once per pair: a warm-up's).  Over UC a lost ask or
 * descriptor is written again by the heal below.
 *
 * Flow control as in ibrc: a sender has at most R ring messages unreleased
 * at the receiver; EAGER messages may use only R - 2K of them (K = max(1,
 * R/8) CTSs outstanding per direction), so CTS and FIN always find room.
 * The receiver releases slots in ring order once consumed.  Every ring
 * message carries the low 16 bits of its sender's release count (credit;
 * the receiver widens it against the highest count seen, R <= 4096), so
 * traffic in both directions returns credits with no write of its own; when
 * R/4 more slots are released than the peer has been told, the receiver
 * writes its release count into the sender's credit word (traffic in one
 * direction).  A receiver keeps unexpected EAGER messages (no receive posted yet)
 * in the ring: at most R - 2K per peer, further sends wait.
 *
 * Over an unreliable connection (UC, ng_chan_set_lossy: ibuc --ib-mode
 * write) a lost packet drops the rest of its write and nobody is told.  A
 * lost ring message or CTS stalls the ring (the run fails after --timeout,
 * as ibuc says); a lost piece of a rendezvous payload would not, since its
 * FIN is a write of its own: so the receiver marks the last word of every
 * payload piece before its CTS and the FIN carries the XOR of the words
 * the sender wrote there; a receive whose buffer does not match fails with
 * NG_ERR_IO, naming the peer (chan.h: the rule, its cost and its limit).
 * Rendezvous stays zero-copy over UC; large messages are not carried
 * another way.  A lost credit write is healed: a wait that hears nothing
 * for 50 ms writes every peer's absolute release count again, every 50 ms
 * of the silence (writes the watchdog does not count as a sign of life).
 *
 * Lengths: a receive of another length than the message gives
 * NG_ERR_TRUNCATED; a rendezvous send whose receive is no larger than S (so
 * no CTS ever comes) is an error that shows as the peer's silence after
 * --timeout where the transport cannot tell a live peer (rdma.h, Errors);
 * where it can (verbs RC), the wait lasts until the run is cancelled.
 *
 * Progress happens in test, wait and the blocking calls: the backend's
 * progress, then every peer with posted work: its ring, then its send queue.
 * Waiting spins (or yields, --rdma-poll yield) under the layer's watchdog:
 * silence for --timeout while waiting names the peer as lost, unless the
 * transport confirms it alive (rdma.h, Errors).
 *
 * The files: this one sets a channel up and tears it down, and keeps its
 * blocks; chan_ring.c writes ring messages, gives rings at first use and
 * returns credits; chan_rndv.c is the rendezvous (the channel's own
 * protocol, the CTS, the check over UC); chan_msg.c the two-sided
 * operations and the progress that reads the rings; chan_int.h what they
 * share.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/chan/chan_int.h"
#include "modules/rdmalayer/rdma.h"
#include "peer.h"
#include "queue.h"

size_t ng_chan_pinned_bytes(size_t ranks, size_t ring, size_t eager)
{
	size_t page = 4096, one = ring * ch_slot_bytes(eager), ctl = ranks * CH_CTL;

	/* A ring per peer (a registration of its own, in pages), the control
	 * words of every peer, a staging ring per peer. */
	return ranks * ((one + page - 1) / page * page) + (ctl + page - 1) / page * page +
	       ranks * ng_rdma_stage_bytes(ng_chan_stage_need(eager));
}

void ng_chan_set_lossy(struct ng_chan *t)
{
	t->lossy = true;
}

ng_status ng_chan_set_rndv(struct ng_chan *t, const struct ng_chan_rndv *rv, void *ctx)
{
	if (t->lossy) {
		if (t->rank == 0)
			ng_error("%s: a rendezvous protocol of a module's own needs a reliable transport "
			         "(the channel checks only its own rendezvous over UC)",
			         t->who);
		return NG_ERR_USAGE;
	}
	if (ng_chan_stage_need(t->S) > t->r->stage_max) {
		if (t->rank == 0)
			ng_error(
			    "%s: a ring message of the eager size %zu (%zu bytes with its header and "
			    "trailer) is above the %zu bytes the %s backend stages from unregistered memory "
			    "(lower --rdma-eager)",
			    t->who, t->S, ng_chan_stage_need(t->S), t->r->stage_max, t->r->be->name);
		return NG_ERR_USAGE;
	}
	t->rv = rv;
	t->rv_ctx = ctx;
	t->anymem = true;
	return NG_OK;
}

ng_status ng_chan_block_add(struct ng_chan *t, struct ng_rdma_mr *mr)
{
	if (t->nblocks == t->capblocks) {
		size_t cap = t->capblocks ? 2 * t->capblocks : 8;
		struct ch_block *b = realloc(t->blocks, cap * sizeof(*b));

		if (!b) {
			ng_error("%s: out of memory", t->who);
			return NG_ERR_NOMEM;
		}
		t->blocks = b;
		t->capblocks = cap;
	}
	t->blocks[t->nblocks++] = (struct ch_block){.base = mr->base, .len = mr->len, .mr = mr};
	return NG_OK;
}

struct ng_rdma_mr *ng_chan_block_remove(struct ng_chan *t, void *base)
{
	for (size_t i = 0; i < t->nblocks; i++)
		if (t->blocks[i].base == base) {
			struct ng_rdma_mr *mr = t->blocks[i].mr;

			t->blocks[i] = t->blocks[--t->nblocks];
			t->last = 0;
			return mr;
		}
	return NULL;
}

void ng_chan_destroy(struct ng_chan *t)
{
	if (!t)
		return;
	for (int i = 0; t->peers && i < t->size; i++)
		ng_rdma_mem_free(t->r, t->peers[i].ring_mr);
	ng_rdma_mem_free(t->r, t->ctl_mr);
	free(t->blocks);
	free(t->peers);
	free(t->metas);
	free(t->unexps);
	free(t->ctss);
	free(t);
}

ng_status ng_chan_new(struct ng_rdma *r, struct ng_boot *b, size_t ring, size_t eager, struct ng_chan **ch_p)
{
	struct ng_chan *t = calloc(1, sizeof(*t));
	struct ch_addr mine, *all = NULL;
	size_t n = (size_t)b->size, maxw;
	ng_status st;

	*ch_p = NULL;
	if (!t) {
		ng_error("%s: out of memory", r->who);
		return NG_ERR_NOMEM;
	}
	t->r = r;
	t->who = r->who;
	t->rv = &ng_ch_direct;
	t->rv_ctx = t;
	t->rank = b->rank;
	t->size = b->size;
	t->R = ring;
	t->S = eager;
	t->K = t->R / 8 ? t->R / 8 : 1;
	t->quota = t->R - 2 * t->K;
	t->slot = ch_slot_bytes(t->S);
	t->peers = calloc(n, sizeof(*t->peers));
	t->metas = calloc(n * t->R, sizeof(*t->metas));
	t->unexps = calloc(n * t->R, sizeof(*t->unexps));
	t->ctss = calloc(n * t->K, sizeof(*t->ctss));
	all = calloc(n, sizeof(*all));
	if (!t->peers || !t->metas || !t->unexps || !t->ctss || !all) {
		ng_error("%s: out of memory", t->who);
		st = NG_ERR_NOMEM;
		goto err;
	}
	/* The rings come at first use (ng_ch_ring_give); the control words now. */
	st = ng_rdma_mem_alloc(r, n * CH_CTL, &t->ctl_mr);
	if (st != NG_OK)
		goto err;
	mine = (struct ch_addr){.ctl = t->ctl_mr->remote, .R = t->R, .S = t->S, .maxw = r->max_write};
	st = ng_boot_allgather(b, &mine, sizeof(mine), all);
	if (st != NG_OK)
		goto err;
	for (size_t i = 0; i < n; i++) {
		struct ch_peer *p = &t->peers[i];

		if (all[i].R != t->R || all[i].S != t->S) {
			if (b->rank == 0)
				ng_error("%s: rank %zu has another ring (%llu slots of %llu bytes) than rank "
				         "0 (%zu of %zu)",
				         t->who, i, (unsigned long long)all[i].R,
				         (unsigned long long)all[i].S, t->R, t->S);
			st = NG_ERR_USAGE;
			goto err;
		}
		/* A peer's largest write cuts rendezvous payloads (ng_chan_piece:
		 * 0, unlimited, or at least 16 bytes, peer.h). */
		if (all[i].maxw &&
		    ng_peer_len("largest RDMA write", (int)i, all[i].maxw, 16, SIZE_MAX, &maxw) != NG_OK) {
			st = NG_ERR_PROTO;
			goto err;
		}
		ng_queue_init(&p->rq);
		ng_queue_init(&p->sq);
		p->meta = t->metas + i * t->R;
		p->unexp = t->unexps + i * t->R;
		p->ctss = t->ctss + i * t->K;
		p->ctl = (volatile struct ch_ctl *)(void *)((unsigned char *)t->ctl_mr->base + i * CH_CTL);
		p->r_ctl = all[i].ctl;
		t->maxw = ng_rdma_max_join(t->maxw, (size_t)all[i].maxw);
	}
	/* The marks' key: another per run and rank (chan.h). */
	t->key = ch_mix(ng_watch_now_ns() ^ (uint64_t)(uintptr_t)t ^ ((uint64_t)b->rank << 48));
	free(all);
	/* Nobody writes before everyone has set up. */
	st = ng_boot_barrier(b);
	if (st != NG_OK) {
		ng_chan_destroy(t);
		return st;
	}
	*ch_p = t;
	return NG_OK;

err:
	free(all);
	ng_chan_destroy(t);
	return st;
}

void ng_chan_blocks_free(struct ng_chan *t)
{
	for (size_t i = 0; i < t->nblocks; i++)
		ng_rdma_mem_free(t->r, t->blocks[i].mr);
	t->nblocks = 0;
}
