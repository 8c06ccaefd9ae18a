/* SPDX-License-Identifier: BSD-3-Clause */
#include "allow.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ng_allow_parse(const char *list, struct ng_allow *a, char *err, size_t errlen)
{
	const char *p = list;

	memset(a, 0, sizeof(*a));
	while (*p) {
		char item[64], *slash;
		size_t n = strcspn(p, ",");
		struct in_addr in;
		long bits = 32;

		if (n == 0 || n >= sizeof(item)) {
			snprintf(err, errlen, "--allow: '%.*s' is not an IPv4 network (ADDR or ADDR/BITS)",
			         (int)(n < 64 ? n : 64), p);
			return -1;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		slash = strchr(item, '/');
		if (slash) {
			char *end;
			*slash = '\0';
			bits = strtol(slash + 1, &end, 10);
			if (slash[1] < '0' || slash[1] > '9' || *end || bits < 0 || bits > 32) {
				snprintf(err, errlen, "--allow: '%s' has a prefix length that is not 0 .. 32",
				         slash + 1);
				return -1;
			}
		}
		if (inet_pton(AF_INET, item, &in) != 1) {
			snprintf(err, errlen, "--allow: '%s' is not an IPv4 address", item);
			return -1;
		}
		if (a->n == NG_ALLOW_MAX) {
			snprintf(err, errlen, "--allow: more than %d networks", NG_ALLOW_MAX);
			return -1;
		}
		a->e[a->n].mask = bits ? ~(uint32_t)0 << (32 - bits) : 0;
		a->e[a->n].net = ntohl(in.s_addr) & a->e[a->n].mask;
		a->n++;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!a->n) {
		snprintf(err, errlen, "--allow: no network given");
		return -1;
	}
	return 0;
}

bool ng_allow_match(const struct ng_allow *a, const char *addr)
{
	struct in_addr in;

	if (!a || inet_pton(AF_INET, addr, &in) != 1)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if ((ntohl(in.s_addr) & a->e[i].mask) == a->e[i].net)
			return true;
	return false;
}
