/* SPDX-License-Identifier: BSD-3-Clause */
/* The --ib-* options of the verbs modules and their reading. */
#include <string.h>

#include "modules/ib/ib.h"

/* The word indices of the choices of --ib-mode and --ib-poll (ib_desc.c). */
enum { NG_IB_MODE_WRITE = 1, NG_IB_MODE_READ = 2, NG_IB_POLL_YIELD = 1 };

ng_status ng_ib_conf_read(const struct ng_module_env *env, const char *who, struct ng_ib_conf *cf)
{
	const struct ng_args *a = env->args;
	struct ng_ib_config o;
	long long ring;
	ng_status st;

	/* ibud reads the mode and the eager size too (it refuses write and
	 * read): all four tables, whichever the module lists. */
	ng_config_read(a, ng_ib_mode_options, &o);
	ng_config_read(a, ng_ib_ring_options, &o);
	ng_config_read(a, ng_ib_eager_options, &o);
	ng_config_read(a, ng_ib_poll_options, &o);
	ring = o.ring;
	memset(cf, 0, sizeof(*cf));
	cf->dev.who = who;
	st = ng_ibv_conf_read(a, who, env->boot->rank == 0, &cf->dev);
	if (st != NG_OK)
		return st;
	cf->write = o.mode == NG_IB_MODE_WRITE;
	cf->read = o.mode == NG_IB_MODE_READ;
	cf->yield = o.poll == NG_IB_POLL_YIELD;
	if (ring < NG_IB_RING_MIN || ring > NG_IB_RING_MAX) {
		if (env->boot->rank == 0)
			ng_error("%s: --ib-ring %lld: between %u and %u slots", who, ring, NG_IB_RING_MIN,
			         NG_IB_RING_MAX);
		return NG_ERR_USAGE;
	}
	cf->ring = (size_t)ring;
	cf->eager = o.eager;
	if (cf->eager < 64 || cf->eager > ((size_t)1 << 20)) {
		if (env->boot->rank == 0)
			ng_error("%s: --ib-eager %zu: between 64 bytes and 1M", who, cf->eager);
		return NG_ERR_USAGE;
	}
	return NG_OK;
}
