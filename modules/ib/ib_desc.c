/* SPDX-License-Identifier: BSD-3-Clause */
/* The ib modules' options and descriptors in the executable; their operations
 * are ngauge-verbs.so's entries "module:ibrc", "module:ibuc" and
 * "module:ibud" (rc.c, ud.c; core/plugin.h). */
#include "modules/ib/ib_desc.h"
#include "module.h"
#include "modules/verbs/verbs_options.h"

/*
 * The ib modules' own options.  ibrc and ibuc read all four, ibud the ring
 * and the waiting only (a datagram has no data-path mode and no
 * rendezvous), and --list shows them in this order after the verbs core's
 * device options: so each is a table of its own, and each module lists
 * those it reads.
 */
/* clang-format off */
const struct ng_option ng_ib_mode_options[] = {
	{ .name = "ib-mode", NG_CHOICE_AT(struct ng_ib_config, mode),
	  .def = "send", .choices = "send|write|read",
	  .help = "ibrc/ibuc data path: send/receive, RDMA write + sequence counter, or (ibrc) RDMA read by the "
	          "receiver after the sender's notice" },
	{ .name = NULL },
};

const struct ng_option ng_ib_ring_options[] = {
	{ .name = "ib-ring", NG_INT_AT(struct ng_ib_config, ring),
	  .def = "32", .metavar = "N", .min = 4, .max = 4096,
	  .help = "pre-posted receive slots per peer (4-4096)" },
	{ .name = NULL },
};

const struct ng_option ng_ib_eager_options[] = {
	{ .name = "ib-eager", NG_SIZE_AT(struct ng_ib_config, eager), .def = "8K", .min = 64, .max = 1 << 20,
	  .help = "ibrc/ibuc: largest message copied through the ring; larger ones are RDMA-written into the "
	          "receive buffer (64-1M)" },
	{ .name = NULL },
};

const struct ng_option ng_ib_poll_options[] = {
	{ .name = "ib-poll", NG_CHOICE_AT(struct ng_ib_config, poll), .def = "spin", .choices = "spin|yield",
	  .help = "waiting: spin (busy-poll; for measurements), or yield the CPU after every empty poll (more "
	          "ranks than cores, Soft-RoCE VMs)" },
	{ .name = NULL },
};
/* clang-format on */

static const struct ng_option *const ng_ib_conn_options[] = {
    ng_verbs_options, ng_ib_mode_options, ng_ib_ring_options, ng_ib_eager_options, ng_ib_poll_options, NULL,
};

static const struct ng_option *const ng_ib_ud_options[] = {
    ng_verbs_options,
    ng_ib_ring_options,
    ng_ib_poll_options,
    NULL,
};

const struct ng_module ng_module_ibrc = {
    .name = "ibrc",
    .desc = "InfiniBand/RoCE verbs, reliable connection (send/receive, or --ib-mode write: the rdma module's "
            "channel over the verbs backend)",
    .plugin = "verbs",
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .options = ng_ib_conn_options,
    .max_msg = 0,
    .hdr_bytes = 0,
};

const struct ng_module ng_module_ibuc = {
    .name = "ibuc",
    .desc = "InfiniBand/RoCE verbs, unreliable connection (a lost message fails the run after --timeout)",
    .plugin = "verbs",
    .caps = NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .options = ng_ib_conn_options,
    .max_msg = 0,
    .hdr_bytes = 0,
};

const struct ng_module ng_module_ibud = {
    .name = "ibud",
    .desc = "InfiniBand/RoCE verbs, unreliable datagrams (messages up to the MTU minus the 40-byte GRH)",
    .plugin = "verbs",
    .caps = NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .options = ng_ib_ud_options,
    .max_msg = NG_IBUD_MAX_MSG,
    .hdr_bytes = 0,
};
