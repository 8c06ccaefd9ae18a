/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ofi backend's check of the endpoint names its peers publish
 * (ofi_name.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "modules/rdmalayer/ofi_name.h"
#include "peer.h"

ng_status ng_ofi_name_check(const struct ng_boot *boot, uint32_t fmt, size_t peer, const unsigned char *name,
                            size_t len)
{
	char ip[INET_ADDRSTRLEN], what[64];
	struct in_addr in;
	sa_family_t fam = AF_UNSPEC;

	if (!boot->peer_addr[0])
		return NG_OK;
	if (fmt == FI_SOCKADDR || fmt == FI_SOCKADDR_IN || fmt == FI_SOCKADDR_IN6) {
		if (len < sizeof(sa_family_t))
			return ng_peer_bad("ofi endpoint address", (int)peer,
			                   "shorter than a socket address");
		memcpy(&fam, name + offsetof(struct sockaddr, sa_family), sizeof(fam));
	}
	switch (fmt) {
	case FI_SOCKADDR:
	case FI_SOCKADDR_IN:
	case FI_SOCKADDR_IN6:
		if (fam == AF_INET && fmt != FI_SOCKADDR_IN6) {
			struct sockaddr_in a;

			if (len < sizeof(a))
				return ng_peer_bad("ofi endpoint address", (int)peer,
				                   "shorter than an IPv4 socket address");
			memcpy(&a, name, sizeof(a));
			in = a.sin_addr;
		} else if (fam == AF_INET6 && fmt != FI_SOCKADDR_IN) {
			struct sockaddr_in6 a;

			if (len < sizeof(a))
				return ng_peer_bad("ofi endpoint address", (int)peer,
				                   "shorter than an IPv6 socket address");
			memcpy(&a, name, sizeof(a));
			if (!IN6_IS_ADDR_V4MAPPED(&a.sin6_addr))
				return ng_peer_bad(
				    "ofi endpoint address", (int)peer,
				    "an IPv6 address, which a --server cannot check against the "
				    "client's address or --allow: refused to connect there");
			memcpy(&in.s_addr, &a.sin6_addr.s6_addr[12], 4);
#ifdef AF_IB
		} else if (fam == AF_IB && fmt == FI_SOCKADDR) {
			return NG_OK;
#endif
		} else {
			return ng_peer_bad("ofi endpoint address", (int)peer,
			                   "of another address family than the provider's");
		}
		break;
	case FI_SOCKADDR_IB:
	case FI_ADDR_PSMX:
	case FI_ADDR_PSMX2:
#if FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) >= FI_VERSION(1, 15)
	case FI_ADDR_PSMX3:
	case FI_ADDR_OPX:
	case FI_ADDR_EFA:
	case FI_ADDR_CXI:
#endif
		return NG_OK;
	default:
		ng_error(
		    "rank %zu's ofi endpoint address is of format %u, which carries no address a --server "
		    "can check against the client's or --allow: refused to connect there",
		    peer, (unsigned)fmt);
		return NG_ERR_PROTO;
	}
	if (!inet_ntop(AF_INET, &in, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	snprintf(what, sizeof(what), "the ofi endpoint of rank %zu", peer);
	return ng_boot_may_connect(boot, ip, what) ? NG_OK : NG_ERR_PROTO;
}
