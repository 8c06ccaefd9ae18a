/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "rdma" module: two-sided messages over the one-sided channel
 * (modules/chan/chan.h) on any backend of the RDMA layer
 * (modules/rdmalayer/rdma.h), with the channel's options.
 */
#include "config.h"

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdmalayer/rdma.h"
#include "options.h"

static ng_status ch_module_open(const struct ng_module *m, const struct ng_module_env *env,
                                struct ng_comm **comm_p)
{
	struct ng_chan_conf cf;
	ng_status st = ng_chan_conf_read(env, &cf);

	return st == NG_OK ? ng_chan_open(m, env, &cf, comm_p) : st;
}

static const struct ng_option *const ch_options[] = {ng_rdma_options, ng_chan_options, NULL};

static const struct ng_module_ops rdma_ops = {
    .open = ch_module_open,
    .close = ng_chan_mod_close,
    .alloc = ng_chan_mod_alloc,
    .free = ng_chan_mod_free,
    .msg = &ng_chan_msg_ops,
    .report = ng_chan_mod_report,
};

const struct ng_module ng_module_rdma = {
    .name = "rdma",
    .desc = "two-sided messages as RDMA writes into rings (the one-sided channel) over the RDMA layer: "
            "--rdma-backend verbs|shm|ofi|ucx",
    .options = ch_options,
    .reads = ng_rdma_reads,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .hdr_bytes = NG_CHAN_MSG_HDR,
    .ops = &rdma_ops,
};
