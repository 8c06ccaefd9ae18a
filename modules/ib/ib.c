/* SPDX-License-Identifier: BSD-3-Clause */
/* The --ib-* options of the verbs modules. */
#include <string.h>

#include "modules/ib/ib.h"

/* clang-format off */
const struct ng_option ng_ib_options[] = {
	{ .name = "ib-dev", .type = NG_OPT_STRING, .metavar = "NAME",
	  .help = "RDMA device (default: the first one with an active port; see ibv_devices)" },
	{ .name = "ib-port", .type = NG_OPT_INT, .metavar = "N",
	  .help = "port of the device (default: its first active port)" },
	{ .name = "ib-gid", .type = NG_OPT_INT, .metavar = "INDEX",
	  .help = "GID table index (default: RoCE: the IPv4-mapped RoCE v2 GID; InfiniBand: none, LID routing)" },
	{ .name = "ib-mode", .type = NG_OPT_CHOICE, .def = "send", .choices = "send|write",
	  .help = "ibrc/ibuc data path: send/receive, or RDMA write + sequence counter",
	  .modules = "ibrc|ibuc" },
	{ .name = "ib-ring", .type = NG_OPT_INT, .def = "32", .metavar = "N",
	  .help = "pre-posted receive slots per peer (4-4096)" },
	{ .name = "ib-eager", .type = NG_OPT_SIZE, .def = "8K",
	  .help = "ibrc/ibuc: largest message copied through the ring; larger ones are RDMA-written into the "
	          "receive buffer (64-1M)",
	  .modules = "ibrc|ibuc" },
	{ .name = "ib-poll", .type = NG_OPT_CHOICE, .def = "spin", .choices = "spin|yield",
	  .help = "waiting: spin (busy-poll; for measurements), or yield the CPU after every empty poll (more "
	          "ranks than cores, Soft-RoCE VMs)" },
	{ .name = NULL },
};
/* clang-format on */

ng_status ng_ib_conf_read(const struct ng_module_env *env, const char *who, struct ng_ib_conf *cf)
{
	const struct ng_args *a = env->args;
	long long port = ng_args_int(a, "ib-port"), ring = ng_args_int(a, "ib-ring");
	long long gid = ng_args_given(a, "ib-gid") ? ng_args_int(a, "ib-gid") : -1;
	const char *mode = ng_args_str(a, "ib-mode");

	memset(cf, 0, sizeof(*cf));
	cf->dev.who = who;
	cf->dev.dev = ng_args_str(a, "ib-dev");
	if (ng_args_given(a, "ib-port") && (port < 1 || port > 255)) {
		if (env->boot->rank == 0)
			ng_error("%s: --ib-port %lld: ports are numbered 1-255", who, port);
		return NG_ERR_USAGE;
	}
	cf->dev.port = (int)port;
	if (ng_args_given(a, "ib-gid") && (gid < 0 || gid > 65535)) {
		if (env->boot->rank == 0)
			ng_error("%s: --ib-gid %lld: not a GID table index", who, gid);
		return NG_ERR_USAGE;
	}
	cf->dev.gid_index = (int)gid;
	cf->write = mode && strcmp(mode, "write") == 0;
	mode = ng_args_str(a, "ib-poll");
	cf->yield = mode && strcmp(mode, "yield") == 0;
	if (ring < NG_IB_RING_MIN || ring > NG_IB_RING_MAX) {
		if (env->boot->rank == 0)
			ng_error("%s: --ib-ring %lld: between %u and %u slots", who, ring, NG_IB_RING_MIN,
			         NG_IB_RING_MAX);
		return NG_ERR_USAGE;
	}
	cf->ring = (size_t)ring;
	cf->eager = ng_args_size(a, "ib-eager");
	if (cf->eager < 64 || cf->eager > ((size_t)1 << 20)) {
		if (env->boot->rank == 0)
			ng_error("%s: --ib-eager %zu: between 64 bytes and 1M", who, cf->eager);
		return NG_ERR_USAGE;
	}
	return NG_OK;
}
