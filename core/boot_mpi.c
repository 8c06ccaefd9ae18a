/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI bootstrap: rank, size, barrier and all-gather over a private duplicate
 * of MPI_COMM_WORLD, for runs launched by mpiexec/srun.
 *
 * This is the only place in ngauge that initialises MPI (MPI_Init_thread:
 * ngauge calls MPI from the main thread only; MPI_THREAD_FUNNELED for a
 * module that runs a thread of its own that never calls MPI, as mpirma's
 * watchdog does (struct ng_module's .threads), MPI_THREAD_SINGLE otherwise,
 * which is what a minimal MPI program gets from MPI_Init: under Open MPI 4.1
 * FUNNELED adds 25 ns to a 1 B half round trip of 135 ns) and, in fini(),
 * the only place that finalises it.  The mpi
 * module relies on this: its NG_CAP_MPI flag makes the driver choose this
 * launch.
 *
 * Errors on the bootstrap's communicator return (MPI_ERRORS_RETURN) and are
 * reported once here: a failed process (MPIX_ERR_PROC_FAILED, where the MPI
 * library detects it) becomes NG_ERR_PEER_LOST, anything else NG_ERR_IO.
 * Most MPI libraries still abort the whole job when a rank dies.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "launch.h"
#include "module.h"
#include "status.h"

struct ng_boot_mpi {
	struct ng_boot base; /* first: container_of */
	MPI_Comm comm;       /* private duplicate of MPI_COMM_WORLD */
	bool owns_init;      /* we called MPI_Init_thread, so fini finalises */
};

static struct ng_boot_mpi *ng_boot_mpi_of(struct ng_boot *b)
{
	return ng_container_of(b, struct ng_boot_mpi, base);
}

ng_status ng_mpi_error(int rc, char *msg, size_t len)
{
	char text[MPI_MAX_ERROR_STRING];
	int n = 0, cls = MPI_ERR_OTHER;

	if (MPI_Error_string(rc, text, &n) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "MPI error %d", rc);
	for (char *p = text; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ' ' : '\0';
	snprintf(msg, len, "%s", text);
	MPI_Error_class(rc, &cls);
#ifdef MPIX_ERR_PROC_FAILED
	if (cls == MPIX_ERR_PROC_FAILED)
		return NG_ERR_PEER_LOST;
#endif
	return cls == MPI_ERR_TRUNCATE ? NG_ERR_TRUNCATED : NG_ERR_IO;
}

/* Reports the failed MPI call once and maps its error class to a status. */
static ng_status ng_boot_mpi_fail(const char *call, int rc)
{
	char msg[MPI_MAX_ERROR_STRING];
	ng_status st = ng_mpi_error(rc, msg, sizeof(msg));

	ng_error("mpi bootstrap: %s: %s", call, msg);
	return st == NG_ERR_PEER_LOST ? st : NG_ERR_IO;
}

static ng_status ng_boot_mpi_barrier(struct ng_boot *b)
{
	int rc = MPI_Barrier(ng_boot_mpi_of(b)->comm);

	return rc == MPI_SUCCESS ? NG_OK : ng_boot_mpi_fail("MPI_Barrier", rc);
}

static ng_status ng_boot_mpi_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	int rc;

	/* Control data only; every rank passes the same len, so all refuse. */
	if (len > INT_MAX) {
		ng_error("mpi bootstrap: allgather of %zu bytes exceeds %d", len, INT_MAX);
		return NG_ERR_USAGE;
	}
	rc = MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, ng_boot_mpi_of(b)->comm);
	return rc == MPI_SUCCESS ? NG_OK : ng_boot_mpi_fail("MPI_Allgather", rc);
}

/*
 * MPI_Finalize bounded by b->fini_limit_s.  MPICH 4.0 over UCX 1.13's tcp
 * transport can hang in it: one rank's endpoint close waits for an answer
 * from a peer that has already closed its own and sits in the PMI barrier
 * (under mpiexec with -x tcp on a loaded node, about one run in five).  The
 * results are written by then, so past the limit the process ends with the
 * run's status, saying why, instead of holding the job until its wall time.
 * A signal handler reaches only a file-scope object: the status is one.
 */
static volatile sig_atomic_t fini_exit_code;

static void fini_expired(int sig)
{
	static const char msg[] = "ngauge: warning: MPI_Finalize did not return within --timeout after the "
	                          "results were written (the MPI library's teardown hangs); ending the "
	                          "process\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
		/* nothing left to say it on */
	}
	_exit(fini_exit_code);
}

static void ng_boot_mpi_finalize(const struct ng_boot *b)
{
	struct sigaction sa = {.sa_handler = fini_expired}, old;
	unsigned limit = b->fini_limit_s > 0 ? (unsigned)ceil(b->fini_limit_s) : 0;

	if (limit == 0) {
		MPI_Finalize();
		return;
	}
	fini_exit_code = b->exit_code;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarm(limit);
	MPI_Finalize();
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
}

static void ng_boot_mpi_fini(struct ng_boot *b)
{
	struct ng_boot_mpi *m = ng_boot_mpi_of(b);

	MPI_Comm_free(&m->comm);
	if (m->owns_init)
		ng_boot_mpi_finalize(b);
	free(m);
}

/* MPI_Abort(MPI_COMM_WORLD, code); a plain exit once MPI is finalised. */
static void ng_boot_mpi_abort(struct ng_boot *b, int code)
{
	int initialized = 0, finalized = 0;

	(void)b;
	MPI_Initialized(&initialized);
	MPI_Finalized(&finalized);
	if (initialized && !finalized)
		MPI_Abort(MPI_COMM_WORLD, code);
	exit(code);
}

static const struct ng_boot_ops ng_boot_mpi_ops = {
    .name = "mpi",
    .barrier = ng_boot_mpi_barrier,
    .allgather = ng_boot_mpi_allgather,
    .fini = ng_boot_mpi_fini,
    .abort = ng_boot_mpi_abort,
};

ng_status ng_boot_mpi(int *argc, char ***argv, bool threads, struct ng_boot **b_p)
{
	struct ng_boot_mpi *m;
	int initialized = 0;
	int provided, rc;
	ng_status st;

	m = calloc(1, sizeof(*m));
	if (!m) {
		ng_error("mpi bootstrap: out of memory");
		return NG_ERR_NOMEM;
	}
	m->base.ops = &ng_boot_mpi_ops;
	m->comm = MPI_COMM_NULL;

	MPI_Initialized(&initialized);
	if (!initialized) {
		rc =
		    MPI_Init_thread(argc, argv, threads ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE, &provided);
		if (rc != MPI_SUCCESS) {
			st = ng_boot_mpi_fail("MPI_Init_thread", rc);
			goto err_free;
		}
		m->owns_init = true;
	}

	rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
	if (rc != MPI_SUCCESS) {
		st = ng_boot_mpi_fail("MPI_Comm_dup", rc);
		goto err_finalize;
	}
	MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
	MPI_Comm_rank(m->comm, &m->base.rank);
	MPI_Comm_size(m->comm, &m->base.size);
	ng_boot_identity(&m->base);

	*b_p = &m->base;
	return NG_OK;

err_finalize:
	if (m->owns_init)
		MPI_Finalize();
err_free:
	free(m);
	return st;
}

double ng_boot_mpi_wtime(void)
{
	return MPI_Wtime();
}

void ng_boot_mpi_version(char *buf, size_t len)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int vlen = 0;
	size_t o = 0;
	bool space = false;

	if (!len)
		return;
	/* Allowed before MPI_Init and after MPI_Finalize. */
	if (MPI_Get_library_version(v, &vlen) != MPI_SUCCESS)
		vlen = 0;
	if (vlen < 0 || vlen >= (int)sizeof(v))
		vlen = (int)sizeof(v) - 1;
	v[vlen] = '\0';

	/* First line, runs of blanks folded to one space ("MPICH Version: 4.0.2"). */
	for (const char *s = v; *s && *s != '\n' && *s != '\r' && o + 1 < len; s++) {
		if (*s == ' ' || *s == '\t') {
			space = o > 0;
			continue;
		}
		if (space && o + 2 < len)
			buf[o++] = ' ';
		space = false;
		buf[o++] = *s;
	}
	buf[o] = '\0';
	if (o == 0)
		snprintf(buf, len, "MPI %d.%d", MPI_VERSION, MPI_SUBVERSION);
}
