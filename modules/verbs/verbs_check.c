/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs core's device checks (verbs_check.h): pure decisions. */
#include <stdio.h>
#include <string.h>

#include "modules/verbs/verbs_check.h"

const char *ng_ibv_gid_type_str(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	default:
		return "unknown type";
	}
}

const char *ng_ibv_qpt_str(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	default:
		return "?";
	}
}

static const char *ng_ibv_transport_str(enum ibv_transport_type t)
{
	switch (t) {
	case IBV_TRANSPORT_IB:
		return "InfiniBand";
	case IBV_TRANSPORT_IWARP:
		return "iWARP";
	case IBV_TRANSPORT_USNIC:
		return "usNIC";
	case IBV_TRANSPORT_USNIC_UDP:
		return "usNIC UDP";
	case IBV_TRANSPORT_UNSPECIFIED:
		return "unspecified";
	default:
		return "unknown";
	}
}

/* Old drivers leave the link layer unspecified on InfiniBand ports. */
static uint8_t ng_ibv_ll(uint8_t ll)
{
	return ll == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
}

static const char *ng_ibv_ll_str(uint8_t ll)
{
	return ng_ibv_ll(ll) == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand";
}

bool ng_ibv_is_efa(const struct ng_ibv_facts *f)
{
	if (f->vendor_id == NG_IBV_VENDOR_AMAZON)
		return true;
	return f->node == IBV_NODE_UNSPECIFIED && f->name && strncmp(f->name, "efa", 3) == 0;
}

ng_status ng_ibv_check_device(const struct ng_ibv_facts *f, const char *who, enum ibv_qp_type qpt, char *err,
                              size_t errlen)
{
	if (f->transport == IBV_TRANSPORT_IWARP || f->node == IBV_NODE_RNIC) {
		snprintf(
		    err, errlen,
		    "%s: %s is an iWARP device: its queue pairs connect only through rdma_cm (librdmacm), "
		    "and ngauge's verbs modules connect theirs by hand (iWARP has no UC or UD either); "
		    "measure it with -x rdma --rdma-backend ofi (libfabric's verbs provider uses rdma_cm)",
		    who, f->name);
		return NG_ERR_UNSUPPORTED;
	}
	if (ng_ibv_is_efa(f)) {
		if (qpt == IBV_QPT_UD)
			return NG_OK;
		snprintf(
		    err, errlen,
		    "%s: %s is an AWS EFA device, which has no %s queue pairs (only SRD and UD): measure "
		    "it with -x rdma --rdma-backend ofi --ofi-provider efa (or ibud for datagrams)",
		    who, f->name, ng_ibv_qpt_str(qpt));
		return NG_ERR_UNSUPPORTED;
	}
	if (f->transport != IBV_TRANSPORT_IB) {
		snprintf(
		    err, errlen,
		    "%s: %s is neither an InfiniBand nor a RoCE device (transport %s): its queue pairs are "
		    "not the ones ngauge's verbs modules make; try -x rdma --rdma-backend ofi",
		    who, f->name, ng_ibv_transport_str(f->transport));
		return NG_ERR_UNSUPPORTED;
	}
	return NG_OK;
}

bool ng_ibv_need_grh(const struct ng_ibv_facts *f, bool gid_given)
{
	return gid_given || f->link_layer == IBV_LINK_LAYER_ETHERNET ||
	       (f->port_flags & IBV_QPF_GRH_REQUIRED);
}

/* ::ffff:a.b.c.d */
static bool ng_ibv_v4(const uint8_t *gid)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

static void ng_ibv_prefix_str(const uint8_t *gid, char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x", gid[0], gid[1], gid[2], gid[3], gid[4],
	         gid[5], gid[6], gid[7]);
}

ng_status ng_ibv_check_peer(const struct ng_ibv_peer_facts *a, int ra, const struct ng_ibv_peer_facts *b,
                            int rb, const char *who, char *err, size_t errlen)
{
	if (ng_ibv_ll(a->link_layer) != ng_ibv_ll(b->link_layer)) {
		snprintf(err, errlen,
		         "%s: rank %d's port is %s, rank %d's %s: the two cannot reach each other (choose "
		         "ports of one kind with --ib-dev/--ib-port)",
		         who, rb, ng_ibv_ll_str(b->link_layer), ra, ng_ibv_ll_str(a->link_layer));
		return NG_ERR_UNSUPPORTED;
	}
	if (a->global != b->global) {
		snprintf(err, errlen,
		         "%s: rank %d addresses %s a GRH, rank %d %s: give every rank --ib-gid (or none), so "
		         "that both ends route alike",
		         who, rb, b->global ? "with" : "without", ra, a->global ? "with" : "without");
		return NG_ERR_UNSUPPORTED;
	}
	if (ng_ibv_ll(a->link_layer) == IBV_LINK_LAYER_ETHERNET) {
		if (a->gid_type != b->gid_type) {
			snprintf(err, errlen,
			         "%s: rank %d uses a %s GID (index %d), rank %d a %s GID (index %d): RoCE v1 "
			         "and v2 are different packets; choose GIDs of one type on every host with "
			         "--ib-gid (their types: /sys/class/infiniband/DEV/ports/N/gid_attrs/types/)",
			         who, rb, ng_ibv_gid_type_str(b->gid_type), b->gid_index, ra,
			         ng_ibv_gid_type_str(a->gid_type), a->gid_index);
			return NG_ERR_UNSUPPORTED;
		}
		if (a->gid_type == IBV_GID_TYPE_ROCE_V2 && ng_ibv_v4(a->gid) != ng_ibv_v4(b->gid)) {
			snprintf(err, errlen,
			         "%s: rank %d's GID (index %d) is an %s address, rank %d's (index %d) an %s "
			         "one: RoCE v2 routes IPv4 and IPv6 apart; choose GIDs of one family with "
			         "--ib-gid",
			         who, rb, b->gid_index, ng_ibv_v4(b->gid) ? "IPv4" : "IPv6", ra, a->gid_index,
			         ng_ibv_v4(a->gid) ? "IPv4" : "IPv6");
			return NG_ERR_UNSUPPORTED;
		}
		return NG_OK;
	}
	if (!a->global && memcmp(a->gid, b->gid, 8) != 0) {
		char pa[40], pb[40];

		ng_ibv_prefix_str(a->gid, pa, sizeof(pa));
		ng_ibv_prefix_str(b->gid, pb, sizeof(pb));
		snprintf(err, errlen,
		         "%s: rank %d is in another InfiniBand subnet (GID prefix %s) than rank %d (%s): LID "
		         "routing stays inside one subnet; give every rank --ib-gid to route with a GRH",
		         who, rb, pb, ra, pa);
		return NG_ERR_UNSUPPORTED;
	}
	return NG_OK;
}

uint32_t ng_ibv_bisect(uint32_t want, bool (*fits)(void *ctx, uint32_t n), void *ctx)
{
	uint32_t lo = 0, hi = want; /* lo fits (or is 0); above hi nothing was tried */

	if (want == 0 || fits(ctx, want))
		return want;
	/* want does not fit: the answer is in [lo, want). */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (fits(ctx, mid))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t ng_ibv_min3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a < b ? a : b;

	return m < c ? m : c;
}

void ng_ibv_rd_atom_agree(uint32_t my_init, uint32_t my_resp, uint32_t peer_resp, uint32_t cap,
                          uint8_t *init_p, uint8_t *dest_p)
{
	if (cap > 255)
		cap = 255;
	*init_p = (uint8_t)ng_ibv_min3(my_init, peer_resp, cap);
	*dest_p = (uint8_t)(my_resp < cap ? my_resp : cap);
}
