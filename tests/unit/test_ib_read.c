/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibrc --ib-mode read's pure pieces (modules/ib/rc_int.h): a message read
 * in pieces no larger than the port's largest message, the pieces adding up
 * to it above 4 GiB too; the notice's layout in a staging entry and its
 * ring message's immediate data (type, flags, credits).
 */
#include <stdint.h>
#include <string.h>

#include "modules/ib/rc_int.h"

#include "../check.h"

/* The pieces of a read of @len bytes at most @max each: count and sum. */
static void pieces(size_t len, size_t max, size_t *n_p, size_t *sum_p, size_t *largest_p)
{
	size_t off = 0, n = 0, largest = 0, k;

	while ((k = ng_rc_read_piece(len, off, max)) > 0) {
		off += k;
		n++;
		largest = k > largest ? k : largest;
	}
	*n_p = n;
	*sum_p = off;
	*largest_p = largest;
}

static void test_split(void)
{
	size_t n, sum, largest;

	CHECK(ng_rc_read_piece(0, 0, 4096) == 0, "an empty message is no read");
	pieces(10, 4, &n, &sum, &largest);
	CHECK(n == 3 && sum == 10 && largest == 4, "10 by 4: %zu pieces, %zu bytes", n, sum);
	pieces(8, 4, &n, &sum, &largest);
	CHECK(n == 2 && sum == 8, "8 by 4: %zu pieces, %zu bytes", n, sum);
	pieces(1, (size_t)1 << 30, &n, &sum, &largest);
	CHECK(n == 1 && sum == 1, "1 byte: %zu pieces", n);
	CHECK(ng_rc_read_piece(100, 100, 8) == 0 && ng_rc_read_piece(100, 101, 8) == 0,
	      "past the end: no read");
	if (sizeof(size_t) >= 8) {
		/* 5 GiB + 3 at 1 GiB a read (the cap of maxw): six reads, none above 1 GiB, never a length
		 * truncated to 32 bits. */
		size_t big = ((size_t)5 << 30) + 3;

		pieces(big, (size_t)1 << 30, &n, &sum, &largest);
		CHECK(n == 6 && sum == big && largest == (size_t)1 << 30 && (uint32_t)largest == largest,
		      "5 GiB + 3: %zu pieces, %zu bytes, largest %zu", n, sum, largest);
		/* A port of 2 GiB - 1 (odd): every piece fits 31 bits. */
		pieces(big, ((size_t)1 << 31) - 1, &n, &sum, &largest);
		CHECK(n == 3 && sum == big && largest == ((size_t)1 << 31) - 1, "2 GiB - 1 pieces: %zu, %zu",
		      n, sum);
	}
}

static void test_notice(void)
{
	struct ng_rc_cts c = ng_rc_notice_make(41, UINT64_C(0x7f0012345678), UINT64_C(5) << 30, 0xabcdef01u),
	                 d;
	unsigned char slot[NG_RC_STAGE];
	uint32_t imm;

	/* What the sender stages is what the receiver copies out of its ring slot. */
	CHECK(sizeof(c) == 32 && sizeof(c) <= NG_RC_STAGE, "the notice is 32 bytes: %zu", sizeof(c));
	memset(slot, 0xee, sizeof(slot));
	memcpy(slot, &c, sizeof(c));
	memcpy(&d, slot, sizeof(d));
	CHECK(d.idx == 41 && d.addr == UINT64_C(0x7f0012345678) && d.len == UINT64_C(5) << 30 &&
	          d.rkey == 0xabcdef01u && d.pad == 0,
	      "notice round trip: idx %llu len %llu rkey %x", (unsigned long long)d.idx,
	      (unsigned long long)d.len, d.rkey);
	/* The immediate data: NOTICE in the top two bits, no flags, the credit count's low 29 bits. */
	imm = NG_RC_IMM(NG_RC_NOTICE, 0, (UINT64_C(1) << 29) + 7);
	CHECK(imm >> 30 == NG_RC_NOTICE && (imm >> NG_RC_CREDIT_BITS & 1u) == 0 &&
	          (imm & NG_RC_CREDIT_MASK) == 7,
	      "notice imm %08x", imm);
	/* The receiver's FIN: a mismatch flag survives next to the credits. */
	imm = NG_RC_IMM(NG_RC_FIN, NG_RC_F_MISMATCH, NG_RC_CREDIT_MASK);
	CHECK(imm >> 30 == NG_RC_FIN && (imm >> NG_RC_CREDIT_BITS & 1u) == NG_RC_F_MISMATCH &&
	          (imm & NG_RC_CREDIT_MASK) == NG_RC_CREDIT_MASK,
	      "fin imm %08x", imm);
}

int main(void)
{
	test_split();
	test_notice();
	return check_exit();
}
