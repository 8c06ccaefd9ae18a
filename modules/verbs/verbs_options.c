/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs core's options (verbs_options.h), in the executable: --list and
 * --help show them without ngauge-verbs.so, which holds the verbs core. */
#include "modules/verbs/verbs_options.h"

/* clang-format off */
const struct ng_option ng_verbs_options[] = {
	{ .name = "ib-dev", .type = NG_OPT_STRING, .metavar = "NAME",
	  .help = "RDMA device (default: the first one with an active port; see ibv_devices)" },
	{ .name = "ib-port", .type = NG_OPT_INT, .metavar = "N", .min = 1, .max = 255,
	  .help = "port of the device (default: its first active port)" },
	{ .name = "ib-gid", .type = NG_OPT_INT, .metavar = "INDEX", .max = 255,
	  .help = "GID table index, 0-255 (default: RoCE: the IPv4-mapped RoCE v2 GID; InfiniBand: none, LID routing)" },
	{ .name = "ib-sl", .type = NG_OPT_INT, .def = "0", .metavar = "N", .max = 15,
	  .help = "service level of every address, 0-15 (InfiniBand: the virtual lane; RoCE: the frame priority)" },
	{ .name = "ib-tclass", .type = NG_OPT_INT, .def = "0", .metavar = "N", .max = 255,
	  .help = "traffic class of the GRH, 0-255 (RoCE v2: DSCP << 2 | ECN; only where a GRH is used)" },
	{ .name = NULL },
};
/* clang-format on */
