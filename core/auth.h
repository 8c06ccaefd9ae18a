/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --auth FILE: a key shared by a --server and its clients, and the
 * challenge-response the --server/--client bootstrap runs with it before
 * the server parses a single argument (core/boot_tcp.c, doc/security.md).
 *
 * The key is the file's bytes (16 .. 4096 of them: `head -c 32 /dev/urandom
 * > key`, or a passphrase); the file must be a regular file of its owner's
 * alone (no permission bits for group or others, as ssh asks of a private
 * key) owned by the user running ngauge, or root.  MACs are HMAC-SHA-256
 * (libsodium's crypto_auth_hmacsha256), compared in constant time.  Each
 * side proves the key over both sides' fresh 32-byte nonces under a label
 * of its own ("server", "client"), so neither a replayed nor a reflected
 * answer passes; every bootstrap frame after that carries a MAC over its
 * direction, sequence number and bytes ("frame").  Integrity only: nothing
 * is encrypted, and the data path (the modules' own traffic) is raw.
 */
#ifndef NG_AUTH_H
#define NG_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define NG_AUTH_NONCE 32
#define NG_AUTH_MAC   32
#define NG_AUTH_KEY   32

struct ng_auth {
	bool on; /* a key was loaded */
	unsigned char key[NG_AUTH_KEY];
};

/* Loads the key of --auth @path into @a (a->on set).  Refuses, reporting one
 * line and returning NG_ERR_USAGE: a path that is not a regular file, one
 * that group or others may read or write, one owned by another user (not
 * root), and a key shorter than 16 or longer than 4096 bytes. */
ng_status ng_auth_load(const char *path, struct ng_auth *a);
/* Fills @n with NG_AUTH_NONCE random bytes. */
void ng_auth_nonce(unsigned char *n);
/* The MAC of @label, @n1, @n2, @seq and @len bytes of @data under @a's key. */
void ng_auth_mac(const struct ng_auth *a, const char *label, const unsigned char *n1, const unsigned char *n2,
                 uint64_t seq, const void *data, size_t len, unsigned char *mac);
/* Whether @mac is that MAC (constant time). */
bool ng_auth_check(const struct ng_auth *a, const char *label, const unsigned char *n1,
                   const unsigned char *n2, uint64_t seq, const void *data, size_t len,
                   const unsigned char *mac);
/* Forgets the key. */
void ng_auth_clear(struct ng_auth *a);

#endif
