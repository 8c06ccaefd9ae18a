/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs core's options (verbs_options.h), in the executable: --list and
 * --help show them without ngauge-verbs.so, which holds the verbs core. */
#include "modules/verbs/verbs_options.h"

/* clang-format off */
const struct ng_option ng_verbs_options[] = {
	{ .name = "ib-dev", NG_STRING_AT(struct ng_verbs_config, dev), .metavar = "NAME",
	  .help = "RDMA device (default: the first one with an active port; see ibv_devices)" },
	{ .name = "ib-port", NG_INT_AT(struct ng_verbs_config, port),
	  NG_GIVEN_AT(struct ng_verbs_config, port_given), .metavar = "N", .min = 1, .max = 255,
	  .help = "port of the device (default: its first active port)" },
	{ .name = "ib-gid", NG_INT_AT(struct ng_verbs_config, gid),
	  NG_GIVEN_AT(struct ng_verbs_config, gid_given), .metavar = "INDEX", .max = 255,
	  .help = "GID table index, 0-255 (default: RoCE: the IPv4-mapped RoCE v2 GID; InfiniBand: none, LID routing)" },
	{ .name = "ib-sl", NG_INT_AT(struct ng_verbs_config, sl), .def = "0", .metavar = "N", .max = 15,
	  .help = "service level of every address, 0-15 (InfiniBand: the virtual lane; RoCE: the frame priority)" },
	{ .name = "ib-tclass", NG_INT_AT(struct ng_verbs_config, tclass),
	  .def = "0", .metavar = "N", .max = 255,
	  .help = "traffic class of the GRH, 0-255 (RoCE v2: DSCP << 2 | ECN; only where a GRH is used)" },
	{ .name = NULL },
};
/* clang-format on */
