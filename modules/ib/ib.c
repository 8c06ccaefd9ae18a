/* SPDX-License-Identifier: BSD-3-Clause */
/* The --ib-* options of the verbs modules and their reading. */
#include <string.h>

#include "modules/ib/ib.h"

/*
 * The ib modules' own options.  ibrc and ibuc read all four, ibud the ring
 * and the waiting only (a datagram has no data-path mode and no
 * rendezvous), and --list shows them in this order after the verbs core's
 * device options: so each is a table of its own, and each module lists
 * those it reads.
 */
/* clang-format off */
static const struct ng_option ng_ib_mode_options[] = {
	{ .name = "ib-mode", .type = NG_OPT_CHOICE, .def = "send", .choices = "send|write",
	  .help = "ibrc/ibuc data path: send/receive, or RDMA write + sequence counter" },
	{ .name = NULL },
};

static const struct ng_option ng_ib_ring_options[] = {
	{ .name = "ib-ring", .type = NG_OPT_INT, .def = "32", .metavar = "N", .min = 4, .max = 4096,
	  .help = "pre-posted receive slots per peer (4-4096)" },
	{ .name = NULL },
};

static const struct ng_option ng_ib_eager_options[] = {
	{ .name = "ib-eager", .type = NG_OPT_SIZE, .def = "8K", .min = 64, .max = 1 << 20,
	  .help = "ibrc/ibuc: largest message copied through the ring; larger ones are RDMA-written into the "
	          "receive buffer (64-1M)" },
	{ .name = NULL },
};

static const struct ng_option ng_ib_poll_options[] = {
	{ .name = "ib-poll", .type = NG_OPT_CHOICE, .def = "spin", .choices = "spin|yield",
	  .help = "waiting: spin (busy-poll; for measurements), or yield the CPU after every empty poll (more "
	          "ranks than cores, Soft-RoCE VMs)" },
	{ .name = NULL },
};
/* clang-format on */

/* The word indices of the choices above. */
enum { NG_IB_MODE_WRITE = 1, NG_IB_POLL_YIELD = 1 };

const struct ng_option *const ng_ib_conn_options[] = {
    ng_verbs_options, ng_ib_mode_options, ng_ib_ring_options, ng_ib_eager_options, ng_ib_poll_options, NULL,
};

const struct ng_option *const ng_ib_ud_options[] = {
    ng_verbs_options,
    ng_ib_ring_options,
    ng_ib_poll_options,
    NULL,
};

ng_status ng_ib_conf_read(const struct ng_module_env *env, const char *who, struct ng_ib_conf *cf)
{
	const struct ng_args *a = env->args;
	long long ring = ng_args_int(a, "ib-ring");
	ng_status st;

	memset(cf, 0, sizeof(*cf));
	cf->dev.who = who;
	st = ng_ibv_conf_read(a, who, env->boot->rank == 0, &cf->dev);
	if (st != NG_OK)
		return st;
	/* ibud reads the mode too: it refuses write. */
	cf->write = ng_args_choice(a, "ib-mode") == NG_IB_MODE_WRITE;
	cf->yield = ng_args_choice(a, "ib-poll") == NG_IB_POLL_YIELD;
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
