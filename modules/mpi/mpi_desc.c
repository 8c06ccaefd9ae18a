/* SPDX-License-Identifier: BSD-3-Clause */
/* The mpi and mpirma modules' descriptors and options in the executable; their
 * operations are ngauge-mpi.so's entries "module:mpi" and "module:mpirma"
 * (mpi.c, mpirma.c; core/plugin.h). */
#include "modules/mpi/mpi_desc.h"

const struct ng_option ng_mpi_options[] = {
    {.name = "mpi-ssend",
     NG_FLAG_AT(struct ng_mpi_config, ssend),
     .help = "blocking sends use MPI_Ssend (synchronous)"},
    {.name = NULL},
};

static const struct ng_option *const ng_mpi_option_tables[] = {ng_mpi_options, NULL};
/* The mpi module's options (--mpi-ssend: mpirma's blocking sends). */
static const struct ng_option *const ng_mpirma_option_tables[] = {ng_mpi_options, NULL};

const struct ng_module ng_module_mpi = {
    .name = "mpi",
    .desc = "MPI point-to-point (MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv), MPI_Alltoall as its native "
            "alltoall and "
            "MPI's collectives (MPI_Allreduce, MPI_Bcast, ...) as its native collectives",
    .plugin = "mpi",
    .options = ng_mpi_option_tables,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MPI | NG_CAP_MULTIRANK |
            NG_CAP_ALLTOALL | NG_CAP_COLL,
    .max_msg = NG_MPI_DESC_MAX_MSG,
    .hdr_bytes = 0,
};

const struct ng_module ng_module_mpirma = {
    .name = "mpirma",
    .desc = "the MPI library's one-sided operations (MPI_Win_allocate, MPI_Put/Get/Accumulate, fence, "
            "post/start/complete/wait, lock/unlock), and MPI point-to-point, MPI_Alltoall and the "
            "collectives (the mpi module's)",
    .plugin = "mpi",
    .options = ng_mpirma_option_tables,
    .threads = true,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MPI | NG_CAP_MULTIRANK |
            NG_CAP_ONESIDED | NG_CAP_ALLTOALL | NG_CAP_COLL,
    .max_msg = NG_MPI_DESC_MAX_MSG,
    .hdr_bytes = 0,
};
