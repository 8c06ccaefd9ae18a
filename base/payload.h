/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Payload patterns for --verify: a message's bytes are a pure function of a
 * 64-bit tag (e.g. size, sender and iteration mixed together), so the
 * receiver can check every byte without the sender's buffer.
 */
#ifndef NG_PAYLOAD_H
#define NG_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Mixes values into a tag (splitmix64). */
uint64_t ng_payload_tag(uint64_t a, uint64_t b, uint64_t c);
/* Fills @buf with the bytes of @tag. */
void ng_payload_fill(void *buf, size_t len, uint64_t tag);
/* Checks @buf against @tag; on a mismatch returns false and stores the first
 * bad offset in *bad_off_p. */
bool ng_payload_check(const void *buf, size_t len, uint64_t tag, size_t *bad_off_p);

/* The expected byte at @off of a payload with @tag (for error messages). */
unsigned char ng_payload_byte(uint64_t tag, size_t off);
/* Word @k of a payload with @tag: its bytes 8k .. 8k + 7 (host byte order). */
uint64_t ng_payload_word(uint64_t tag, size_t k);

#endif
