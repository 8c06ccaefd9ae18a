/* SPDX-License-Identifier: BSD-3-Clause */
/* ngauge-ofi.so's entries (core/plugin.h): the RDMA layer's ofi backend
 * (libfabric). */
#include "config.h"

#include "module.h"
#include "modules/rdmalayer/rdma.h"
#include "plugin.h"

extern const struct ng_rdma_backend ng_rdma_ofi;

static const struct ng_plugin_entry ng_plugin_ofi_entries[] = {
    {"rdma:ofi", &ng_rdma_ofi},
    {NULL, NULL},
};

extern NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_ofi;
NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_ofi = {
    .abi = NG_PLUGIN_ABI,
    .name = "ofi",
    .ops_size = sizeof(struct ng_module_ops),
    .entries = ng_plugin_ofi_entries,
};
