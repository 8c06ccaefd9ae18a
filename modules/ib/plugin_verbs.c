/* SPDX-License-Identifier: BSD-3-Clause */
/* ngauge-verbs.so's entries (core/plugin.h): the ib modules (ibrc, ibuc, ibud)
 * and the RDMA layer's verbs backend, on the verbs core. */
#include "config.h"

#include "module.h"
#include "modules/ng_modules.h"
#include "modules/rdmalayer/rdma.h"
#include "plugin.h"

/* The modules whose operations it holds (modules/meson.build's list). */
#define NG_MODULE(name) extern const struct ng_module_ops ng_module_ops_##name;
NG_PLUGIN_MODULES_verbs
#undef NG_MODULE
    extern const struct ng_rdma_backend ng_rdma_verbs;

static const struct ng_plugin_entry ng_plugin_verbs_entries[] = {
#define NG_MODULE(name) {"module:" #name, &ng_module_ops_##name},
    NG_PLUGIN_MODULES_verbs
#undef NG_MODULE
    {"rdma:verbs", &ng_rdma_verbs},
    {NULL, NULL},
};

extern NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_verbs;
NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_verbs = {
    .abi = NG_PLUGIN_ABI,
    .name = "verbs",
    .ops_size = sizeof(struct ng_module_ops),
    .entries = ng_plugin_verbs_entries,
};
