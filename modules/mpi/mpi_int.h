/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mpi module's instance and operations (modules/mpi/mpi.c), for a module
 * whose two-sided operations are the mpi module's: mpirma embeds struct
 * ng_mpi first and puts these functions in its descriptor, so one run
 * compares MPI's one-sided operations against its point-to-point ones with
 * one implementation of the latter.  Internal to modules/.
 */
#ifndef NG_MODULES_MPI_MPI_INT_H
#define NG_MODULES_MPI_MPI_INT_H

#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "module.h"
#include "modules/mpi/mpi_desc.h"
#include "options.h"
#include "status.h"

/* MPI-4 has large-count calls (MPI_Send_c ...); without them a message is at
 * most INT_MAX bytes. */
#if MPI_VERSION >= 4
#define NG_MPI_LARGE_COUNT 1
#define NG_MPI_MAX_MSG     0
#else
#define NG_MPI_LARGE_COUNT 0
#define NG_MPI_MAX_MSG     ((size_t)INT_MAX)
#endif

/* Requests waitall() hands MPI in one call; a longer array goes in chunks. */
#define NG_MPI_WAITALL 256

struct ng_mpi {
	struct ng_comm base; /* first: container_of */
	MPI_Comm comm;       /* private duplicate of MPI_COMM_WORLD */
	/* MPI_COMM_WORLD's and MPI_COMM_SELF's error handlers before open(),
	 * put back by close(): calls on several requests (MPI_Testall) raise
	 * their errors there, not on @comm */
	MPI_Errhandler world_eh, self_eh;
	bool ssend;  /* --mpi-ssend: blocking sends are MPI_Ssend */
	void **bufs; /* live alloc() blocks, released by close() */
	size_t nbufs, capbufs;
	/* waitall()'s scratch: a chunk's handles and statuses (MPI wants them
	 * contiguous; the handles live in the callers' struct ng_req) */
	MPI_Request wreq[NG_MPI_WAITALL];
	MPI_Status wst[NG_MPI_WAITALL];
};

/* The operations of the two modules (mpi.c, mpirma.c): ngauge-mpi.so's
 * entries "module:mpi" and "module:mpirma" (core/plugin.h). */
extern const struct ng_module_ops ng_module_ops_mpi;
extern const struct ng_module_ops ng_module_ops_mpirma;

/*
 * Fills @m (zeroed by the caller) for an instance of module @mod served by
 * the operations @ops: the communicator (a duplicate of MPI_COMM_WORLD,
 * errors returned), rank, size, --mpi-ssend (env->args may be NULL:
 * defaults) and the device string (the MPI library's version).  Until
 * ng_mpi_fini, MPI_COMM_WORLD and MPI_COMM_SELF return errors too.  MPI
 * must be initialised (the MPI launch): otherwise NG_ERR_USAGE.  Errors
 * are reported; nothing is left allocated.
 */
ng_status ng_mpi_init(struct ng_mpi *m, const struct ng_module *mod, const struct ng_module_ops *ops,
                      const struct ng_module_env *env);
/* Frees the alloc() blocks left and the communicator (not @m), and puts
 * back the error handlers of MPI_COMM_WORLD and MPI_COMM_SELF. */
void ng_mpi_fini(struct ng_mpi *m);

/* Reports the failed MPI call @call (with rank @peer; < 0: none) once, as
 * "@who: @call ...: MPI's message", and maps its error class to a status
 * (launch.h, ng_mpi_error).  Cold path. */
ng_status ng_mpi_report(const char *who, const char *call, int peer, int rc) __attribute__((cold));

/* The module operations (core/module.h) of an instance embedding struct
 * ng_mpi first: the two-sided ones (MPI_Send, MPI_Recv, MPI_Isend,
 * MPI_Irecv, MPI_Test, MPI_Testall), MPI_Alltoall, alloc and free. */
extern const struct ng_msg_ops ng_mpi_msg_ops;
ng_status ng_mpi_alltoall(struct ng_comm *c, const void *sbuf, void *rbuf, size_t block);
/* The native collectives (module.h's .coll): MPI_Allreduce and the rest on
 * the instance's communicator, counts within INT_MAX. */
ng_status ng_mpi_coll(struct ng_comm *c, enum ng_coll_op op, enum ng_coll_type type, const void *sbuf,
                      void *rbuf, size_t count, int root);
ng_status ng_mpi_alloc(struct ng_comm *c, size_t len, void **buf_p);
void ng_mpi_free(struct ng_comm *c, void *buf);

#endif
