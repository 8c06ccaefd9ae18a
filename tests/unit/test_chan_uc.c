/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The channel's rendezvous over an unreliable connection (modules/chan/chan.h):
 * the pieces a payload is written in (at most the largest write, the last
 * never shorter than 8 bytes), and the check of a receive against its FIN:
 * the receiver's marks in the last word of every piece, the XOR of those
 * words.  A payload that arrived whole matches the sender's XOR; one whose
 * write lost a packet (UC places nothing of that write after the loss: the
 * piece keeps its old tail and mark) does not, in the first, a middle or the
 * last piece, while the later pieces arrive whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "modules/chan/chan.h"

#include "../check.h"

/* The pieces of @len bytes at most @max each: count, sum, the shortest and
 * longest. */
static size_t pieces(size_t len, size_t max, size_t *sum_p, size_t *min_p, size_t *max_p)
{
	size_t n = 0, at = 0, lo = SIZE_MAX, hi = 0;

	while (at < len) {
		size_t k = ng_chan_piece(len, at, max);

		if (!k)
			break;
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
		at += k;
		n++;
	}
	*sum_p = at;
	*min_p = lo;
	*max_p = hi;
	return n;
}

static void test_pieces(void)
{
	size_t sum, lo, hi, n;

	n = pieces(10000, 4096, &sum, &lo, &hi);
	CHECK(n == 3 && sum == 10000 && hi == 4096 && lo == 1808, "10000 by 4096: %zu, %zu..%zu", n, lo, hi);
	/* 4,100 bytes: never a last piece of 4; 4,092 + 8. */
	n = pieces(4100, 4096, &sum, &lo, &hi);
	CHECK(n == 2 && sum == 4100 && lo == 8 && hi == 4092, "4100 by 4096: %zu, %zu..%zu", n, lo, hi);
	/* Unlimited: one piece. */
	n = pieces(1 << 20, 0, &sum, &lo, &hi);
	CHECK(n == 1 && sum == 1 << 20, "unlimited: %zu pieces", n);
	/* Above 4 GiB (lengths only): pieces of at most 1 GiB adding up. */
	n = pieces(((size_t)5 << 30) + 3, (size_t)1 << 30, &sum, &lo, &hi);
	CHECK(n == 6 && sum == ((size_t)5 << 30) + 3 && lo >= 8 && hi == (size_t)1 << 30, "5 GiB + 3: %zu",
	      n);
}

/* What UC leaves in @dst of a payload @src written in pieces of @max when
 * the write of piece @lost loses a packet at byte @at of it: the bytes of
 * that piece before the packet, nothing after; every other piece whole. */
static void deliver(unsigned char *dst, const unsigned char *src, size_t len, size_t max, int lost, size_t at)
{
	size_t off = 0;

	for (int i = 0; off < len; i++) {
		size_t k = ng_chan_piece(len, off, max);

		if (i != lost)
			memcpy(dst + off, src + off, k);
		else if (at < k)
			memcpy(dst + off, src + off, at);
		off += k;
	}
}

static void test_check(void)
{
	const size_t len = 10000, max = 4096, mtu = 1024;
	unsigned char *src = malloc(len), *dst = malloc(len), *old = malloc(len);
	uint64_t key = UINT64_C(0x0123456789abcdef), sent;

	if (!src || !dst || !old) {
		CHECK(0, "out of memory");
		return;
	}
	for (size_t i = 0; i < len; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	/* The receive buffer held the same message before (the worst case: old
	 * bytes equal to the new ones everywhere but where the marks go). */
	memcpy(old, src, len);
	sent = ng_chan_tails(src, len, max);

	/* Whole: the receiver's XOR over its buffer is the sender's. */
	memcpy(dst, old, len);
	ng_chan_tails_mark(dst, len, max, key);
	CHECK(ng_chan_tails(dst, len, max) != sent, "the marks equal the payload's tails");
	deliver(dst, src, len, max, -1, 0);
	CHECK(ng_chan_tails(dst, len, max) == sent, "a whole payload fails the check");
	CHECK(memcmp(dst, src, len) == 0, "a whole payload differs");

	/* A packet lost in each piece (the first packet, a middle one, the last):
	 * the later pieces arrive whole, yet the check fails. */
	for (int piece = 0; piece < 3; piece++)
		for (size_t at = 0; at < 4096; at += mtu) {
			size_t k = piece < 2 ? 4096 : 1808;

			if (at >= k)
				continue;
			memcpy(dst, old, len);
			ng_chan_tails_mark(dst, len, max, key);
			deliver(dst, src, len, max, piece, at);
			CHECK(ng_chan_tails(dst, len, max) != sent, "piece %d lost at byte %zu passes", piece,
			      at);
		}

	/* Another transfer (key) marks other values; marks of pieces differ. */
	{
		unsigned char a[64], b[64];
		uint64_t wa, wb;

		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		ng_chan_tails_mark(a, 64, 32, key);
		ng_chan_tails_mark(b, 64, 32, key + 1);
		memcpy(&wa, a + 24, 8);
		memcpy(&wb, a + 56, 8);
		CHECK(wa != wb, "two pieces carry the same mark");
		memcpy(&wb, b + 24, 8);
		CHECK(wa != wb, "two keys give the same mark");
		CHECK(ng_chan_tails(a, 64, 32) != 0, "the marks cancel out");
	}
	free(src);
	free(dst);
	free(old);
}

int main(void)
{
	test_pieces();
	test_check();
	return check_exit();
}
