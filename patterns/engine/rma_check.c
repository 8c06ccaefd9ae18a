/* SPDX-License-Identifier: BSD-3-Clause */
/* Content of the rma pattern's epochs; the contract is in rma_check.h. */
#include "rma_check.h"

#include <string.h>

#include "payload.h"

#define NG_RMA_ACC_MASK ((UINT64_C(1) << 48) - 1)

uint64_t ng_rma_tag(unsigned test, size_t size, int rank, uint64_t slot, uint64_t iter)
{
	return ng_payload_tag(((uint64_t)test << 56) ^ (uint64_t)size,
	                      ((uint64_t)(unsigned)rank << 32) ^ slot, iter);
}

static uint64_t ng_rma_elem(uint64_t tag, size_t k)
{
	return ng_payload_word(tag, k) & NG_RMA_ACC_MASK;
}

void ng_rma_fill(void *buf, size_t len, uint64_t tag, bool acc)
{
	unsigned char *p = buf;

	if (!acc) {
		ng_payload_fill(buf, len, tag);
		return;
	}
	for (size_t k = 0; k < len / 8; k++) {
		uint64_t e = ng_rma_elem(tag, k);

		memcpy(p + 8 * k, &e, 8);
	}
}

void ng_rma_spoil(void *buf, size_t len, uint64_t tag, bool acc)
{
	unsigned char *p = buf;

	ng_rma_fill(buf, len, tag, acc);
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)~p[i];
}

/* The first differing byte of @got against the 8 bytes of @want (@n of them). */
static bool ng_rma_word_check(const unsigned char *got, uint64_t want, size_t n, size_t at, size_t *bad_off_p,
                              unsigned char *want_p)
{
	unsigned char w[8];

	memcpy(w, &want, 8);
	if (memcmp(got, w, n) == 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (got[i] != w[i]) {
			*bad_off_p = at + i;
			*want_p = w[i];
			break;
		}
	}
	return false;
}

bool ng_rma_check(const void *buf, size_t len, uint64_t tag, bool acc, size_t *bad_off_p,
                  unsigned char *want_p)
{
	const unsigned char *p = buf;

	for (size_t at = 0; at < len; at += 8) {
		uint64_t w = acc ? ng_rma_elem(tag, at / 8) : ng_payload_word(tag, at / 8);
		size_t n = len - at < 8 ? len - at : 8;

		if (!ng_rma_word_check(p + at, w, n, at, bad_off_p, want_p))
			return false;
	}
	return true;
}

bool ng_rma_check_sum(const void *buf, size_t len, uint64_t base, uint64_t add, size_t *bad_off_p,
                      unsigned char *want_p)
{
	const unsigned char *p = buf;

	for (size_t k = 0; k < len / 8; k++)
		if (!ng_rma_word_check(p + 8 * k, ng_rma_elem(base, k) + ng_rma_elem(add, k), 8, 8 * k,
		                       bad_off_p, want_p))
			return false;
	return true;
}
