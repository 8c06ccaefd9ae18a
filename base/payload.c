/* SPDX-License-Identifier: BSD-3-Clause */
#include "payload.h"

#include <string.h>

static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t ng_payload_tag(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t s = a;
	uint64_t h = splitmix64(&s);
	s = h ^ b;
	h = splitmix64(&s);
	s = h ^ c;
	return splitmix64(&s);
}

/* Byte i of a payload is byte (i % 8) of word i / 8 of the splitmix stream
 * seeded with the tag, so any offset can be checked independently. */
void ng_payload_fill(void *buf, size_t len, uint64_t tag)
{
	unsigned char *p = buf;
	uint64_t s = tag;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w = splitmix64(&s);
		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		uint64_t w = splitmix64(&s);
		memcpy(p + i, &w, len - i);
	}
}

bool ng_payload_check(const void *buf, size_t len, uint64_t tag, size_t *bad_off_p)
{
	const unsigned char *p = buf;
	uint64_t s = tag;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = splitmix64(&s);
		unsigned char e[8];
		size_t n = len - i < 8 ? len - i : 8;
		memcpy(e, &w, 8);
		if (memcmp(p + i, e, n) != 0) {
			for (size_t k = 0; k < n; k++) {
				if (p[i + k] != e[k]) {
					*bad_off_p = i + k;
					return false;
				}
			}
		}
	}
	return true;
}

uint64_t ng_payload_word(uint64_t tag, size_t k)
{
	/* splitmix64's state after k+1 steps is tag + (k+1) * increment. */
	uint64_t s = tag + (uint64_t)k * 0x9e3779b97f4a7c15ull;

	return splitmix64(&s);
}

unsigned char ng_payload_byte(uint64_t tag, size_t off)
{
	uint64_t w = ng_payload_word(tag, off / 8);
	unsigned char e[8];
	memcpy(e, &w, 8);
	return e[off % 8];
}
