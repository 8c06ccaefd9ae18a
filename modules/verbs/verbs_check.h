/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs core's device checks: decisions over queried attributes, with
 * no call into libibverbs, so that devices this project has no hardware for
 * (iWARP, AWS EFA, InfiniBand, RoCE v1) are tested with their attributes
 * (tests/unit/test_ibv_check.c) and the same code decides on a real device
 * (verbs.c fills the facts from ibv_query_device/ibv_query_port).
 *
 * Every check returns NG_OK or a status with one line in @err (prefixed
 * with @who, naming the device and what to do instead); it reports nothing
 * itself: the caller exchanges the line between ranks and prints it once.
 *
 * Layering: the verbs core (modules/verbs/); includes the verbs header for
 * its enumerations only.
 */
#ifndef NG_VERBS_CHECK_H
#define NG_VERBS_CHECK_H

#include <infiniband/verbs.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Amazon's PCI vendor id: the EFA devices. */
#define NG_IBV_VENDOR_AMAZON 0x1d0fu

/* The attributes of one device port that the checks decide by. */
struct ng_ibv_facts {
	const char *name;                  /* device name ("mlx5_0", "efa_0", "rxe0") */
	enum ibv_transport_type transport; /* ibv_device.transport_type */
	enum ibv_node_type node;           /* ibv_device.node_type */
	uint32_t vendor_id;                /* ibv_device_attr.vendor_id */
	uint8_t link_layer;                /* ibv_port_attr.link_layer (IBV_LINK_LAYER_*) */
	uint8_t port_flags;                /* ibv_port_attr.flags (IBV_QPF_GRH_REQUIRED) */
};

/* Whether @f is an AWS EFA device (Amazon's vendor id, or a device of no
 * node type whose name starts with "efa"). */
bool ng_ibv_is_efa(const struct ng_ibv_facts *f);

/*
 * Whether the queue pairs of @qpt can run on @f as ngauge makes them (by
 * hand: INIT -> RTR -> RTS with addresses exchanged over the bootstrap).
 * Refused, NG_ERR_UNSUPPORTED:
 *   - an iWARP device (transport iWARP; Linux's soft iWARP, siw, too): its
 *     queue pairs connect only through rdma_cm (librdmacm), and it has no UC
 *     or UD; the message names rdma_cm and the ofi backend;
 *   - an EFA device with RC or UC (EFA has SRD and UD only): the message
 *     names the ofi backend (--rdma-backend ofi --ofi-provider efa);
 *   - a transport that is neither InfiniBand/RoCE nor EFA (usNIC, unknown).
 */
ng_status ng_ibv_check_device(const struct ng_ibv_facts *f, const char *who, enum ibv_qp_type qpt, char *err,
                              size_t errlen);

/* Whether addresses on @f's port need a GRH: RoCE (Ethernet link layer),
 * a port that requires one (IBV_QPF_GRH_REQUIRED: EFA, some fabrics), or a
 * GID given with --ib-gid. */
bool ng_ibv_need_grh(const struct ng_ibv_facts *f, bool gid_given);

/* What two ranks' ports must agree on (a part of the exchanged address). */
struct ng_ibv_peer_facts {
	uint8_t link_layer; /* IBV_LINK_LAYER_* */
	uint8_t global;     /* addresses to this rank carry a GRH */
	uint8_t gid_type;   /* enum ibv_gid_type of the GID in use */
	uint8_t gid[16];
	int32_t gid_index; /* -1: none (LID routing) */
};

/*
 * Whether rank @ra (@a) and rank @rb (@b) can reach each other.  Refused,
 * NG_ERR_UNSUPPORTED, with a line naming both ranks' values and the option
 * to change: another link layer (InfiniBand and Ethernet do not route to
 * each other), a GRH on one side only, RoCE GIDs of other types (v1 and v2
 * frames are different packets) or of other families (an IPv4-mapped GID
 * and an IPv6 one), InfiniBand LID routing to another subnet (another GID
 * prefix: only a GRH crosses a router).  Every condition is an equality, so
 * ranks that all agree with one rank agree with each other.
 */
ng_status ng_ibv_check_peer(const struct ng_ibv_peer_facts *a, int ra, const struct ng_ibv_peer_facts *b,
                            int rb, const char *who, char *err, size_t errlen);

/*
 * The RDMA reads and atomics in flight on an RC queue pair, agreed with the
 * peer: as initiator at most what this device can issue (@my_init,
 * max_qp_init_rd_atom), what the peer's device answers (@peer_resp,
 * max_qp_rd_atom) and @cap; as responder (max_dest_rd_atomic) what this
 * device answers and @cap, which is at least what the peer will issue.
 */
void ng_ibv_rd_atom_agree(uint32_t my_init, uint32_t my_resp, uint32_t peer_resp, uint32_t cap,
                          uint8_t *init_p, uint8_t *dest_p);

/*
 * The largest n in 0 .. @want for which @fits(@ctx, n) holds, by bisection
 * (log2(want) + 1 calls at most, @want first), for a predicate that holds
 * up to some size and not above (a device's inline size: a QP is created
 * with n, ibv_create_qp fails above the device's limit).  0 when nothing
 * above 0 fits (@fits is not called with 0).
 */
uint32_t ng_ibv_bisect(uint32_t want, bool (*fits)(void *ctx, uint32_t n), void *ctx);

/* The text of a GID type: "IB", "RoCE v1", "RoCE v2". */
const char *ng_ibv_gid_type_str(uint32_t t);

/* The text of a queue pair type: "RC", "UC", "UD" ("?" for another). */
const char *ng_ibv_qpt_str(enum ibv_qp_type t);

#endif
