/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs core's options (verbs_options.h), in the executable: --list and
 * --help show them without ngauge-verbs.so, which holds the verbs core. */
#include "modules/verbs/verbs_options.h"

/* clang-format off */
const struct ng_option ng_verbs_options[] = {
	{ .name = "ib-dev", .type = NG_OPT_STRING, .metavar = "NAME",
	  .help = "RDMA device (default: the first one with an active port; see ibv_devices)" },
	{ .name = "ib-port", .type = NG_OPT_INT, .metavar = "N",
	  .help = "port of the device (default: its first active port)" },
	{ .name = "ib-gid", .type = NG_OPT_INT, .metavar = "INDEX",
	  .help = "GID table index (default: RoCE: the IPv4-mapped RoCE v2 GID; InfiniBand: none, LID routing)" },
	{ .name = NULL },
};
/* clang-format on */
