/* SPDX-License-Identifier: BSD-3-Clause */
/* The mpi and mpirma modules' descriptors and options in the executable; their
 * operations are in ngauge-mpi.so (mpi_desc.h). */
#include "modules/mpi/mpi_desc.h"

const struct ng_option ng_mpi_options[] = {
    {.name = "mpi-ssend", .type = NG_OPT_FLAG, .help = "blocking sends use MPI_Ssend (synchronous)"},
    {.name = NULL},
};

const struct ng_option *const ng_mpi_option_tables[] = {ng_mpi_options, NULL};
/* The mpi module's options (--mpi-ssend: mpirma's blocking sends). */
const struct ng_option *const ng_mpirma_option_tables[] = {ng_mpi_options, NULL};

const struct ng_module ng_module_mpi = {NG_MODULE_MPI_DATA};
const struct ng_module ng_module_mpirma = {NG_MODULE_MPIRMA_DATA};
