/* SPDX-License-Identifier: BSD-3-Clause */
/* ngauge-verbs.so's entries (core/plugin.h): the ib modules (ibrc, ibuc, ibud)
 * and the RDMA layer's verbs backend, on the verbs core. */
#include "config.h"

#include "module.h"
#include "modules/rdmalayer/rdma.h"
#include "plugin.h"

extern const struct ng_module ng_module_ibrc;
extern const struct ng_module ng_module_ibuc;
extern const struct ng_module ng_module_ibud;
extern const struct ng_rdma_backend ng_rdma_verbs;

static const struct ng_plugin_entry ng_plugin_verbs_entries[] = {
    {"module:ibrc", &ng_module_ibrc},
    {"module:ibuc", &ng_module_ibuc},
    {"module:ibud", &ng_module_ibud},
    {"rdma:verbs", &ng_rdma_verbs},
    {NULL, NULL},
};

extern NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_verbs;
NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_verbs = {
    .abi = NG_PLUGIN_ABI,
    .name = "verbs",
    .module_size = sizeof(struct ng_module),
    .entries = ng_plugin_verbs_entries,
};
