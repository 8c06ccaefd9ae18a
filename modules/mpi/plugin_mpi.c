/* SPDX-License-Identifier: BSD-3-Clause */
/* ngauge-mpi.so's entries (core/plugin.h): the mpi and mpirma modules, the MPI
 * launch (bootstrap, MPI_Wtime, the library's version). */
#include "config.h"

#include "launch.h"
#include "module.h"
#include "plugin.h"

extern const struct ng_module ng_module_mpi;
extern const struct ng_module ng_module_mpirma;

static const struct ng_mpi_launch ng_mpi_launch = {
    .boot = ng_boot_mpi,
    .wtime = ng_boot_mpi_wtime,
    .version = ng_boot_mpi_version,
};

static const struct ng_plugin_entry ng_plugin_mpi_entries[] = {
    {"module:mpi", &ng_module_mpi},
    {"module:mpirma", &ng_module_mpirma},
    {"launch:mpi", &ng_mpi_launch},
    {NULL, NULL},
};

extern NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_mpi;
NG_PLUGIN_EXPORT const struct ng_plugin ng_plugin_mpi = {
    .abi = NG_PLUGIN_ABI,
    .name = "mpi",
    .module_size = sizeof(struct ng_module),
    .entries = ng_plugin_mpi_entries,
};
