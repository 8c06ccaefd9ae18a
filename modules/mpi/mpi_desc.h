/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mpi and mpirma modules' data in the executable (modules/mpi/mpi_desc.c:
 * their descriptors, the one copy, core/module.h) and what their code in
 * ngauge-mpi.so (mpi.c, mpirma.c: the operations, modules/mpi/mpi_int.h)
 * shares with it: the option tables and the largest message.  Includes no
 * MPI header: the executable does not link MPI.
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

/* The mpi module's options (owner "mpi"): --mpi-ssend, read into struct
 * ng_mpi_config by ng_config_read. */
extern const struct ng_option ng_mpi_options[];

struct ng_mpi_config {
	bool ssend; /* --mpi-ssend: blocking sends are MPI_Ssend */
};

#endif
