/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Values a peer sent: every length, count, size, index and string that
 * arrives over a bootstrap exchange or a module's handshake is checked here
 * before it is used (doc/security.md).  A peer is any other rank: under
 * --server it is a client nobody vouched for, so nothing it sends may size
 * an allocation, index an array or reach strcmp/printf unchecked.
 *
 * A value that breaks its bound is reported once, in one line that names
 * what it was, the peer and the bound ("rank 1 sent a host text length of
 * 18446744073709551615 bytes (at most 65536): dropped"), and the caller
 * drops the peer: it returns NG_ERR_PROTO up to the driver, which ends the
 * run (exit 1) as for a lost peer.
 */
#ifndef NG_PEER_H
#define NG_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/*
 * @len as a size_t when @min <= @len <= @max, else reported ("rank @peer sent
 * a @what of LEN (MIN .. MAX)") and NG_ERR_PROTO.  Signed values go through
 * ng_peer_slen so that -1 reads as -1, not as 2^64 - 1.  @peer < 0: the peer
 * is not a rank (a connection not yet welcomed); the line says "a peer".
 */
ng_status ng_peer_len(const char *what, int peer, uint64_t len, uint64_t min, uint64_t max, size_t *len_p);
ng_status ng_peer_slen(const char *what, int peer, int64_t len, int64_t min, int64_t max, size_t *len_p);

/*
 * Terminates a string field of @cap bytes that a peer filled: true when it
 * held a NUL (and so was a string); false when it did not, and then its last
 * byte is made NUL so that the field is safe to print either way.  Callers
 * that need the whole string drop the peer on false (reported with
 * ng_peer_bad()); those that only print it may go on.
 */
bool ng_peer_str(char *s, size_t cap);

/* Reports a malformed value from @peer in one line (@what: "host name",
 * "tcp listener address") and returns NG_ERR_PROTO. */
ng_status ng_peer_bad(const char *what, int peer, const char *why);

#endif
