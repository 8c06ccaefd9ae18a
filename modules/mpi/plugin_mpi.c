/* SPDX-License-Identifier: BSD-3-Clause */
/* ngauge-mpi.so's entries (core/plugin.h): the mpi and mpirma modules, the MPI
 * launch (bootstrap, MPI_Wtime, the library's version). */
#include "config.h"

#include "launch.h"
#include "module.h"
#include "modules/ng_modules.h"
#include "plugin.h"

/* The modules whose operations it holds (modules/meson.build's list). */
#define NG_MODULE(name) extern const struct ng_module_ops ng_module_ops_##name;
NG_PLUGIN_MODULES_mpi
#undef NG_MODULE

    static const struct ng_mpi_launch ng_mpi_launch = {
        .boot = ng_boot_mpi,
        .wtime = ng_boot_mpi_wtime,
        .version = ng_boot_mpi_version,
};

static const struct ng_plugin_entry ng_plugin_mpi_entries[] = {
#define NG_MODULE(name) {"module:" #name, &ng_module_ops_##name},
    NG_PLUGIN_MODULES_mpi
#undef NG_MODULE
    {"launch:mpi", &ng_mpi_launch},
    {NULL, NULL},
};

extern NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_mpi;
NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_mpi = {
    .abi = NG_PLUGIN_ABI,
    .name = "mpi",
    .ops_size = sizeof(struct ng_module_ops),
    .entries = ng_plugin_mpi_entries,
};
