/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Credits of the ring protocols (modules/rdmalayer/rdma.h): the low bits a
 * message or datagram carries widened against the highest count known, at
 * the wrap of 16 bits (ibud, the channel) and of 29 (ibrc's immediate);
 * reordered and duplicated counts ignored; counts and credit words above
 * what was sent refused; over unreliable transports credits told again
 * once per silence.
 */
#include <stdint.h>

#include "modules/rdmalayer/rdma.h"

#include "../check.h"

#define M16 UINT64_C(0xffff)
#define M29 ((UINT64_C(1) << 29) - 1)

static void test_widen(void)
{
	uint64_t seen;

	/* Plain: 5 seen, 12 sent, 9 carried. */
	seen = 5;
	CHECK(ng_rdma_credit_widen(&seen, 9, M16, 12) && seen == 9, "plain: %llu", (unsigned long long)seen);
	/* At the wrap of 16 bits: 65530 seen, 65545 sent; the count 65540 carries 4. */
	seen = 65530;
	CHECK(ng_rdma_credit_widen(&seen, 65540 & M16, M16, 65545) && seen == 65540, "wrap: %llu",
	      (unsigned long long)seen);
	/* A reordered datagram behind the wrap (65535 after 65540 was seen): ignored, never 65535 + 2^16. */
	CHECK(!ng_rdma_credit_widen(&seen, 65535, M16, 65545) && seen == 65540, "stale at wrap: %llu",
	      (unsigned long long)seen);
	/* A duplicate of the last: nothing new. */
	CHECK(!ng_rdma_credit_widen(&seen, 65540 & M16, M16, 65545) && seen == 65540, "duplicate");
	/* Many wraps later, 64-bit counts. */
	seen = (UINT64_C(7) << 32) + 65534;
	CHECK(ng_rdma_credit_widen(&seen, 1, M16, (UINT64_C(7) << 32) + 65540) &&
	          seen == (UINT64_C(7) << 32) + 65537,
	      "high wrap: %llx", (unsigned long long)seen);
	/* 29 bits (ibrc's immediate) at its wrap. */
	seen = M29 - 1;
	CHECK(ng_rdma_credit_widen(&seen, 2, M29, M29 + 10) && seen == M29 + 3, "29-bit wrap: %llx",
	      (unsigned long long)seen);
}

static void test_beyond_sent(void)
{
	uint64_t seen = 100;

	/* A count above the messages sent (a torn or forged value) is never credit. */
	CHECK(!ng_rdma_credit_widen(&seen, 111, M16, 110) && seen == 100, "beyond sent taken: %llu",
	      (unsigned long long)seen);
	CHECK(ng_rdma_credit_widen(&seen, 110, M16, 110) && seen == 110, "up to sent refused");
	/* Nothing outstanding: nothing to take. */
	CHECK(!ng_rdma_credit_widen(&seen, 111, M16, 110) && seen == 110, "nothing outstanding");
	/* Credit words: taken when ahead and at most what was sent. */
	seen = 100;
	CHECK(ng_rdma_credit_word(&seen, 104, 110) && seen == 104, "word: %llu", (unsigned long long)seen);
	CHECK(!ng_rdma_credit_word(&seen, 103, 110) && seen == 104, "older word taken");
	CHECK(!ng_rdma_credit_word(&seen, 104, 110) && seen == 104, "same word counted");
	/* A torn read at a carry (0x1_ffff_ffff -> 0x2_0000_0000 read as 0x2_ffff_ffff). */
	seen = UINT64_C(0x1fffffff0);
	CHECK(!ng_rdma_credit_word(&seen, UINT64_C(0x2ffffffff), UINT64_C(0x200000004)) &&
	          seen == UINT64_C(0x1fffffff0),
	      "torn word taken: %llx", (unsigned long long)seen);
	CHECK(ng_rdma_credit_word(&seen, UINT64_C(0x200000000), UINT64_C(0x200000004)), "carry refused");
}

static void test_heal(void)
{
	const uint64_t ms = 1000000;
	struct ng_watch w = {.since_ns = 1000 * ms, .last_ns = 1000 * ms};
	uint64_t healed = 0;

	/* Not yet: a silence shorter than the interval. */
	w.last_ns = 1049 * ms;
	CHECK(!ng_rdma_credit_heal_due(&w, &healed, 50 * ms), "healed after 49 ms");
	/* Between clock reads (spin != 0): never. */
	w.last_ns = 1060 * ms;
	w.spin = 3;
	CHECK(!ng_rdma_credit_heal_due(&w, &healed, 50 * ms), "healed between clock reads");
	/* At the interval: once ... */
	w.spin = 0;
	CHECK(ng_rdma_credit_heal_due(&w, &healed, 50 * ms) && healed == 1060 * ms, "not healed after 60 ms");
	/* ... not again within the interval ... */
	w.last_ns = 1100 * ms;
	CHECK(!ng_rdma_credit_heal_due(&w, &healed, 50 * ms), "healed twice within 50 ms");
	/* ... and again after it, the silence going on (the lost one may be lost again). */
	w.last_ns = 1110 * ms;
	CHECK(ng_rdma_credit_heal_due(&w, &healed, 50 * ms) && healed == 1110 * ms, "not healed again");
	/* A new silence (something happened): not before its own interval. */
	w.since_ns = 2000 * ms;
	w.last_ns = 2010 * ms;
	CHECK(!ng_rdma_credit_heal_due(&w, &healed, 50 * ms), "new silence healed at once");
	w.last_ns = 2050 * ms;
	CHECK(ng_rdma_credit_heal_due(&w, &healed, 50 * ms) && healed == 2050 * ms, "new silence not healed");
}

/* A lost credit write healed: a sender blocked on a ring of 32 (quota 24)
 * whose credit word was never written gets its credits once the receiver's
 * wait has heard nothing for the interval and tells them again, the absolute
 * count, which the sender takes as any credit word (up to what it sent). */
static void test_lost_healed(void)
{
	const uint64_t ms = 1000000, quota = 24;
	uint64_t tx_seq = 24, seen = 0, word = 0; /* the sender: 24 sent, none released yet */
	uint64_t rx_free = 24, credit_sent = 0;   /* the receiver: all 24 consumed */
	struct ng_watch w = {.since_ns = 1000 * ms, .last_ns = 1000 * ms};
	uint64_t healed = 0;

	/* The receiver writes its count (24 >= ring/4 due) ... and the write is lost. */
	credit_sent = rx_free;
	CHECK(!ng_rdma_credit_word(&seen, word, tx_seq) && tx_seq - seen >= quota, "sender not blocked");
	/* Both wait; the receiver's wait hears nothing.  Not yet at 10 ms. */
	w.last_ns = 1010 * ms;
	CHECK(!ng_rdma_credit_heal_due(&w, &healed, 50 * ms), "healed at 10 ms");
	/* At 50 ms: told again (the count, not a delta), and the sender takes it. */
	w.last_ns = 1050 * ms;
	if (ng_rdma_credit_heal_due(&w, &healed, 50 * ms))
		word = rx_free;
	CHECK(word == credit_sent && word == 24, "credits not told again: word %llu",
	      (unsigned long long)word);
	CHECK(ng_rdma_credit_word(&seen, word, tx_seq) && seen == 24 && tx_seq - seen < quota,
	      "sender still blocked: seen %llu", (unsigned long long)seen);
	/* The repeat of the same count changes nothing (a duplicate heal). */
	CHECK(!ng_rdma_credit_word(&seen, word, tx_seq) && seen == 24, "a repeated count taken twice");
}

int main(void)
{
	test_heal();
	test_lost_healed();
	test_widen();
	test_beyond_sent();
	return check_exit();
}
