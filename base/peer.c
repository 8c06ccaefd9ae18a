/* SPDX-License-Identifier: BSD-3-Clause */
#include "peer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void who(char *buf, size_t len, int peer)
{
	if (peer >= 0)
		snprintf(buf, len, "rank %d", peer);
	else
		snprintf(buf, len, "a peer");
}

ng_status ng_peer_len(const char *what, int peer, uint64_t len, uint64_t min, uint64_t max, size_t *len_p)
{
	char w[32];

	if (len >= min && len <= max && len <= SIZE_MAX) {
		*len_p = (size_t)len;
		return NG_OK;
	}
	who(w, sizeof(w), peer);
	ng_error("%s sent a %s of %" PRIu64 " (%" PRIu64 " .. %" PRIu64 "): dropped", w, what, len, min, max);
	return NG_ERR_PROTO;
}

ng_status ng_peer_slen(const char *what, int peer, int64_t len, int64_t min, int64_t max, size_t *len_p)
{
	char w[32];

	if (len >= min && len <= max && len >= 0 && (uint64_t)len <= SIZE_MAX) {
		*len_p = (size_t)len;
		return NG_OK;
	}
	who(w, sizeof(w), peer);
	ng_error("%s sent a %s of %" PRId64 " (%" PRId64 " .. %" PRId64 "): dropped", w, what, len, min, max);
	return NG_ERR_PROTO;
}

bool ng_peer_str(char *s, size_t cap)
{
	if (!cap)
		return false;
	if (memchr(s, '\0', cap))
		return true;
	s[cap - 1] = '\0';
	return false;
}

ng_status ng_peer_bad(const char *what, int peer, const char *why)
{
	char w[32];

	who(w, sizeof(w), peer);
	ng_error("%s sent a malformed %s (%s): dropped", w, what, why);
	return NG_ERR_PROTO;
}
