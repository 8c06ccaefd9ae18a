/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bootstrap constructors, one per launch mode (used by the driver only).
 */
#ifndef NG_LAUNCH_H
#define NG_LAUNCH_H

#include "config.h"

#include <stdbool.h>
#include <stddef.h>

#include "bootstrap.h"
#include "status.h"

/*
 * Local launch: forks @np ranks on this machine.  Returns in each child with
 * its bootstrap (rank 0..np-1).  The parent never returns: it serves as the
 * ranks' hub for barrier/allgather, supervises them, and exits with
 *   0   all ranks exited 0,
 *   130 a rank was interrupted (SIGINT) and none failed otherwise,
 *   the first non-zero exit status otherwise (1 when a rank was killed).
 * When one rank dies, the survivors get @grace_s seconds to notice and write
 * what they measured, then the parent terminates them.
 */
ng_status ng_boot_local(int np, double grace_s, struct ng_boot **b_p);

/*
 * Two hosts without MPI.  The server listens on @bind:@port and becomes rank
 * 1; the client connects to @host:@port and becomes rank 0 (it measures and
 * reports).  The connection starts with a magic/version handshake.
 * @timeout_s bounds the wait for the peer.
 */
ng_status ng_boot_tcp_server(const char *bind, int port, double timeout_s, struct ng_boot **b_p);
ng_status ng_boot_tcp_client(const char *host, int port, double timeout_s, struct ng_boot **b_p);

/* True when the environment says we were started by mpiexec/srun
 * (PMI_RANK, PMI_SIZE, PMIX_RANK, OMPI_COMM_WORLD_SIZE, SLURM_PROCID with
 * SLURM_NTASKS > 1). */
bool ng_launched_by_mpi(void);

#if NG_HAVE_MPI
/* MPI launch: MPI_Init_thread and the bootstrap over MPI_COMM_WORLD. */
ng_status ng_boot_mpi(int *argc, char ***argv, struct ng_boot **b_p);
/* MPI_Wtime, for the "mpi" timer. */
double ng_boot_mpi_wtime(void);
/* MPI_Get_library_version, first line. */
void ng_boot_mpi_version(char *buf, size_t len);
/* MPI_Abort(MPI_COMM_WORLD, code). */
void ng_boot_mpi_abort(int code);
/*
 * The text of MPI error code @rc on one line (MPICH's error stacks span
 * several) in @msg (@len bytes, MPI_MAX_ERROR_STRING is enough), and the
 * status it maps to: NG_ERR_PEER_LOST for a failed process (where the MPI
 * library reports it), NG_ERR_TRUNCATED for a truncated message, else
 * NG_ERR_IO.
 */
ng_status ng_mpi_error(int rc, char *msg, size_t len);
#endif

#endif
