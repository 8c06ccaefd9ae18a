/* SPDX-License-Identifier: BSD-3-Clause */
/* ngauge-ucx.so's entries (core/plugin.h): the ucx module (UCX's UCP) and
 * the RDMA layer's ucx backend (modules/rdmalayer/ucx.c). */
#include "config.h"

#include "module.h"
#include "modules/ng_modules.h"
#include "modules/rdmalayer/rdma.h"
#include "plugin.h"

/* The modules whose operations it holds (modules/meson.build's list). */
#define NG_MODULE(name) extern const struct ng_module_ops ng_module_ops_##name;
NG_PLUGIN_MODULES_ucx
#undef NG_MODULE
    extern const struct ng_rdma_backend ng_rdma_ucx;

static const struct ng_plugin_entry ng_plugin_ucx_entries[] = {
#define NG_MODULE(name) {"module:" #name, &ng_module_ops_##name},
    NG_PLUGIN_MODULES_ucx
#undef NG_MODULE
    {"rdma:ucx", &ng_rdma_ucx},
    {NULL, NULL},
};

extern NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_ucx;
NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_ucx = {
    .abi = NG_PLUGIN_ABI,
    .name = "ucx",
    .ops_size = sizeof(struct ng_module_ops),
    .entries = ng_plugin_ucx_entries,
};
