/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA layer's sizes: the staging ring per peer and the channel's
 * pinned memory per rank (the table in doc/rdma.md), and the lengths of
 * split writes (a write above the largest message is cut into several, the
 * notice last, block pieces whole; what cannot be cut is refused).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "modules/chan/chan.h"
#include "modules/rdmalayer/rdma.h"

#include "../check.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static void test_stage(void)
{
	/* A ring message of 8 KiB stages 8,216 bytes at most; four of them, in pages. */
	CHECK(ng_chan_stage_need(8192) == 8192 + 24, "stage need %zu", ng_chan_stage_need(8192));
	CHECK(ng_chan_stage_need(8191) == 8192 + 24, "odd eager: %zu", ng_chan_stage_need(8191));
	CHECK(ng_rdma_stage_bytes(8216) == 36 * KIB, "stage ring %zu", ng_rdma_stage_bytes(8216));
	CHECK(ng_rdma_stage_bytes(16384 + 24) == 68 * KIB, "16K eager: %zu", ng_rdma_stage_bytes(16408));
	CHECK(ng_rdma_stage_bytes(64) == 4 * KIB, "small: %zu", ng_rdma_stage_bytes(64));
}

static void test_pinned(void)
{
	/* The defaults (32 slots of 8 KiB): a ring of 32 slots of 8,256 bytes
	 * in whole pages (a registration per peer: 260 KiB), 64 B of control
	 * words and a 36 KiB staging ring per peer. */
	size_t ring = (32 * 8256 + 4095) / 4096 * 4096, per_peer = ring + 64 + 36 * KIB;
	size_t p256 = ng_chan_pinned_bytes(256, 32, 8192), p1024 = ng_chan_pinned_bytes(1024, 32, 8192);

	printf("pinned per rank, 32 x 8 KiB: 256 ranks %zu B (%.1f MiB), 1024 ranks %zu B (%.1f MiB)\n", p256,
	       (double)p256 / MIB, p1024, (double)p1024 / MIB);
	CHECK(p256 >= 256 * per_peer && p256 < 256 * per_peer + 2 * 4096, "256 ranks: %zu", p256);
	CHECK(p1024 >= 1024 * per_peer && p1024 < 1024 * per_peer + 2 * 4096, "1024 ranks: %zu", p1024);
	CHECK(ring == 260 * KIB, "ring per peer %zu", ring);
	/* The numbers doc/rdma.md states. */
	CHECK(p256 / MIB == 74, "256 ranks: %zu MiB", p256 / MIB);
	CHECK(p1024 / MIB == 296, "1024 ranks: %zu MiB", p1024 / MIB);
	/* Per peer, so a rank that talks to 8 peers of 1,024 pins 8 peers' worth
	 * of rings and staging (and every peer's 64 B of control words). */
	CHECK(ng_chan_pinned_bytes(8, 32, 8192) + 1016 * 64 < 3 * MIB, "8 peers: %zu",
	      ng_chan_pinned_bytes(8, 32, 8192));
	/* Before: 128 staging slots of 16 KiB per peer (2 MiB) on top of the rings. */
	CHECK(p1024 < (size_t)1024 * 2 * MIB / 4, "1024 ranks: %zu", p1024);
}

static void test_split(void)
{
	/* Plain writes: as much as fits. */
	CHECK(ng_rdma_split_len(10000, 4096, 0) == 4096, "plain");
	CHECK(ng_rdma_split_len(100, 4096, 0) == 100, "plain, short");
	/* A notice never alone short of 8 bytes: 4,099 = 4,091 + 8. */
	CHECK(ng_rdma_split_len(4099, 4096, NG_RDMA_NOTIFY) == 4091, "notify: %zu",
	      ng_rdma_split_len(4099, 4096, NG_RDMA_NOTIFY));
	CHECK(ng_rdma_split_len(4104, 4096, NG_RDMA_NOTIFY) == 4096, "notify, 8 left");
	/* Blocks: whole pieces per write, the last may be shorter. */
	CHECK(ng_rdma_split_len(10000, 5000, NG_RDMA_BLOCKS(12)) == 4096, "blocks");
	CHECK(ng_rdma_split_len(3000, 5000, NG_RDMA_BLOCKS(12)) == 3000, "blocks, last");
	/* A piece larger than the largest message cannot be carried: refused. */
	CHECK(ng_rdma_split_len(10000, 2000, NG_RDMA_BLOCKS(12)) == 0, "piece above the maximum");
	/* Above 4 GiB nothing is cut to 32 bits. */
	CHECK(ng_rdma_split_len((size_t)5 << 30, (size_t)1 << 31, 0) == (size_t)1 << 31, "5 GiB");
	CHECK(ng_rdma_split_len(((size_t)1 << 32) + 8, (size_t)1 << 31, NG_RDMA_NOTIFY) == (size_t)1 << 31,
	      "4 GiB + 8");
}

static void test_slice(void)
{
	static unsigned char a[16], b[100], c[8];
	const struct ng_rdma_iov iov[3] = {
	    {a, 16, NULL}, {b, 100, (const struct ng_rdma_mr *)(void *)b}, {c, 8, NULL}};
	struct ng_rdma_iov out[3];
	unsigned k;

	k = ng_rdma_iov_slice(iov, 3, 0, 124, out);
	CHECK(k == 3 && out[0].addr == a && out[1].len == 100 && out[2].len == 8, "whole");
	k = ng_rdma_iov_slice(iov, 3, 10, 20, out);
	CHECK(k == 2 && out[0].addr == a + 10 && out[0].len == 6 && out[1].addr == b && out[1].len == 14 &&
	          out[1].mr == iov[1].mr,
	      "middle: %u", k);
	k = ng_rdma_iov_slice(iov, 3, 116, 8, out);
	CHECK(k == 1 && out[0].addr == c && out[0].len == 8 && !out[0].mr, "the notice word");
	k = ng_rdma_iov_slice(iov, 3, 20, 50, out);
	CHECK(k == 1 && out[0].addr == b + 4 && out[0].len == 50, "inside one piece");
}

int main(void)
{
	test_stage();
	test_pinned();
	test_split();
	test_slice();
	return check_exit();
}
