/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ofi backend's check of its peers' endpoint names under --server
 * (ofi.c; core/bootstrap.h: boot->peer_addr, ng_boot_may_connect).
 * Internal to the ofi backend.
 */
#ifndef NG_RDMA_OFI_NAME_H
#define NG_RDMA_OFI_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "status.h"

/*
 * Whether this rank may send to the endpoint name @name (@len bytes, at
 * most the exchanged field, as rank @peer published it, in the provider's
 * address format @fmt, struct fi_info .addr_format): every name under
 * trusted peers (boot->peer_addr ""); under --server (bootstrap.h) a name
 * that carries an IPv4 address (FI_SOCKADDR_IN, FI_SOCKADDR of AF_INET, an
 * IPv4-mapped FI_SOCKADDR_IN6) only when ng_boot_may_connect() admits that
 * address.  Other formats under --server:
 *   - allowed: fabric addresses with no IP meaning, which reach only the
 *     fabric the provider drives and which, as an InfiniBand one for the
 *     verbs core, is a trusted network (FI_SOCKADDR_IB, AF_IB; Omni-Path's
 *     PSM and OPX; EFA's and Slingshot's (cxi) endpoint addresses);
 *   - refused: an IPv6 address that is not IPv4-mapped (neither the
 *     client's address nor --allow can name it), FI_ADDR_STR (a string that
 *     may hide any address; libfabric's shm provider, whose names lead it to
 *     the peer's process id and cross-memory attach, the hazard the shm
 *     backend refuses for), FI_ADDR_IB_UD (a GID, IPv4-mapped on RoCE, in a
 *     provider's private layout) and every other or unknown format.
 * NG_OK, or NG_ERR_PROTO with the refusal said once in one line.  Called
 * for every peer before fi_av_insert: the first operation connects.
 */
ng_status ng_ofi_name_check(const struct ng_boot *boot, uint32_t fmt, size_t peer, const unsigned char *name,
                            size_t len);

#endif
