/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mpi and mpirma modules as data (modules/mpi/mpi_desc.c): their option
 * tables, and the descriptors' data fields, which the executable's
 * descriptors (no operations: .plugin = "mpi", core/plugin.h) and
 * ngauge-mpi.so's (modules/mpi/mpi.c, modules/mpi/mpirma.c: the operations) both
 * take from the macros below, so they cannot differ.  Includes no MPI
 * header: the executable does not link MPI.
 */
#ifndef NG_MODULES_MPI_DESC_H
#define NG_MODULES_MPI_DESC_H

#include "config.h"

#include <limits.h>

#include "module.h"
#include "options.h"

/* MPI-4 has large-count calls: no limit; otherwise INT_MAX bytes
 * (NG_MPI_VERSION: MPI_VERSION of the MPI the build found). */
#if NG_MPI_VERSION >= 4
#define NG_MPI_DESC_MAX_MSG 0
#else
#define NG_MPI_DESC_MAX_MSG ((size_t)INT_MAX)
#endif

/* The mpi module's options (owner "mpi"): --mpi-ssend; the option lists of
 * the two modules. */
extern const struct ng_option ng_mpi_options[];
extern const struct ng_option *const ng_mpi_option_tables[];
extern const struct ng_option *const ng_mpirma_option_tables[];

/* clang-format off */
#define NG_MODULE_MPI_DATA                                                                                     \
	.name = "mpi",                                                                                         \
	.desc = "MPI point-to-point (MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv) and MPI_Alltoall as its native "  \
	        "alltoall",                                                                                    \
	.plugin = "mpi",                                                                                       \
	.options = ng_mpi_option_tables,                                                                       \
	.caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MPI | NG_CAP_MULTIRANK |           \
	        NG_CAP_ALLTOALL,                                                                               \
	.max_msg = NG_MPI_DESC_MAX_MSG,                                                                        \
	.hdr_bytes = 0

#define NG_MODULE_MPIRMA_DATA                                                                                  \
	.name = "mpirma",                                                                                      \
	.desc = "the MPI library's one-sided operations (MPI_Win_allocate, MPI_Put/Get/Accumulate, fence, "    \
	        "post/start/complete/wait, lock/unlock), and MPI point-to-point and MPI_Alltoall (the mpi "     \
	        "module's)",                                                                                   \
	.plugin = "mpi",                                                                                       \
	.options = ng_mpirma_option_tables,                                                                    \
	.threads = true,                                                                                       \
	.caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MPI | NG_CAP_MULTIRANK |           \
	        NG_CAP_ONESIDED | NG_CAP_ALLTOALL,                                                             \
	.max_msg = NG_MPI_DESC_MAX_MSG,                                                                        \
	.hdr_bytes = 0
/* clang-format on */

#endif
