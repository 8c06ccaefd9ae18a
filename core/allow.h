/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --allow CIDR[,CIDR...]: the IPv4 networks a --server admits clients from
 * (and whose addresses a client may publish beside its own: bootstrap.h,
 * ng_boot_may_connect).  "198.18.0.0/15", "10.1.2.3" (a /32), "0.0.0.0/0"
 * (everyone).  The bootstrap speaks IPv4 only (core/boot_tcp.c).
 */
#ifndef NG_ALLOW_H
#define NG_ALLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NG_ALLOW_MAX 32

struct ng_allow {
	size_t n;
	struct {
		uint32_t net, mask; /* host byte order */
	} e[NG_ALLOW_MAX];
};

/* Parses @list into @a.  On a malformed entry writes a one-line reason to
 * @err and returns -1. */
int ng_allow_parse(const char *list, struct ng_allow *a, char *err, size_t errlen);
/* Whether numeric IPv4 address @addr is in one of @a's networks (false for
 * anything that is not a dotted quad). */
bool ng_allow_match(const struct ng_allow *a, const char *addr);

#endif
