/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the epochs of the rma pattern (patterns/rma.c) carry under --verify,
 * as pure functions of a 64-bit tag (base/payload.h), so the rank that ends
 * up holding the data checks every byte without the sender's buffer.
 *
 *   put, get     the payload of the tag (ng_payload_fill)
 *   accumulate   int64 elements (len / 8 of them), each a payload word cut
 *                to 48 bits: a target region reset to a base of such
 *                elements and summed into once holds base + contribution
 *                per element, exactly, and no sum of two can overflow
 *
 * A destination is "spoiled" before an epoch that should fill it: every byte
 * becomes the complement of what the epoch should bring, so data that never
 * arrived (or arrived from an earlier epoch of a different tag) cannot pass.
 *
 * None of this is for a timed region.
 */
#ifndef NG_PATTERNS_RMA_CHECK_H
#define NG_PATTERNS_RMA_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The tag of what rank @rank moves in iteration @iter (warm-up included) of
 * test number @test at @size bytes; @slot tells apart regions of one epoch
 * that hold different data (0 where all carry the same). */
uint64_t ng_rma_tag(unsigned test, size_t size, int rank, uint64_t slot, uint64_t iter);

/* Fills @buf[0..len) with the payload of @tag; with @acc as accumulate
 * elements (@len a multiple of 8). */
void ng_rma_fill(void *buf, size_t len, uint64_t tag, bool acc);

/* Every byte of @buf[0..len) the complement of ng_rma_fill(@tag, @acc). */
void ng_rma_spoil(void *buf, size_t len, uint64_t tag, bool acc);

/* Checks @buf[0..len) against ng_rma_fill(@tag, @acc).  On the first wrong
 * byte stores its offset in *bad_off_p and the expected byte in *want_p and
 * returns false. */
bool ng_rma_check(const void *buf, size_t len, uint64_t tag, bool acc, size_t *bad_off_p,
                  unsigned char *want_p);

/* Checks @buf[0..len) (int64 elements) against the element-wise sum of the
 * accumulate elements of @base and @add; reports like ng_rma_check. */
bool ng_rma_check_sum(const void *buf, size_t len, uint64_t base, uint64_t add, size_t *bad_off_p,
                      unsigned char *want_p);

#endif
