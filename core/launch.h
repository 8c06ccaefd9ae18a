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
 *   128 + the signal, when SIGINT, SIGTERM or SIGHUP reached it: it passes
 *       them on to the ranks (130, 143, 129),
 *   the first non-zero exit status otherwise (1 when a rank was killed; a
 *   failure outweighs an interruption of a rank alone).
 * When one rank dies, the survivors get @grace_s seconds to notice and write
 * what they measured, then the parent terminates them.
 */
ng_status ng_boot_local(int np, double grace_s, struct ng_boot **b_p);

/*
 * Two hosts without MPI (core/boot_tcp.c has the protocol).  The server
 * listens on @bind:@port (ng_boot_tcp_listen: a non-blocking socket) and
 * reads each connection's handshake without blocking, many at once
 * (core/server.c): ng_boot_tcp_hs_new() for an accepted @fd from numeric
 * address @peer, then ng_boot_tcp_hs_step() whenever it is readable: 0 wants
 * more, 1 done (hello, the --auth proof when @auth is on, the arguments), -1
 * failed with the reason in @why (the peer has been told where it should
 * be).  A done handshake is then told the server is busy
 * (ng_boot_tcp_hs_busy), refused (ng_boot_tcp_hs_refuse), or welcomed in
 * the child that serves it (ng_boot_tcp_hs_welcome: rank 1, every read and
 * write with a deadline of @timeout_s, peer_addr and @allow set; *args_p and
 * *len_p the client's NUL-separated arguments).  The child answers with
 * ng_boot_tcp_verdict(): 0 before it runs, or the exit status and the one
 * line that says why it will not.  ng_boot_tcp_hs_free() closes a handshake
 * that was not welcomed.
 *
 * The client connects to @host:@port, retrying for @timeout_s, proves @auth
 * (NULL or off: no key), sends @args (@len bytes), and waits for the
 * verdict: then it is rank 0 (it measures and reports).  A busy server, a
 * refusal or a failed proof fails it with one line saying so (NG_ERR_USAGE
 * for a refusal of the run or a key mismatch).
 */
struct ng_auth;
struct ng_allow;
struct ng_boot_tcp_hs;
ng_status ng_boot_tcp_listen(const char *bind, int port, int *lfd_p);
struct ng_boot_tcp_hs *ng_boot_tcp_hs_new(int fd, const char *peer, const struct ng_auth *auth);
int ng_boot_tcp_hs_step(struct ng_boot_tcp_hs *h, char *why, size_t whylen);
int ng_boot_tcp_hs_fd(const struct ng_boot_tcp_hs *h);
const char *ng_boot_tcp_hs_peer(const struct ng_boot_tcp_hs *h);
void ng_boot_tcp_hs_busy(struct ng_boot_tcp_hs *h);
void ng_boot_tcp_hs_refuse(struct ng_boot_tcp_hs *h, const char *text);
void ng_boot_tcp_hs_free(struct ng_boot_tcp_hs *h);
ng_status ng_boot_tcp_hs_welcome(struct ng_boot_tcp_hs *h, double timeout_s, const struct ng_allow *allow,
                                 struct ng_boot **b_p, const char **args_p, size_t *len_p);
ng_status ng_boot_tcp_verdict(struct ng_boot *b, int code, const char *text);
ng_status ng_boot_tcp_client(const char *host, int port, double timeout_s, const struct ng_auth *auth,
                             const char *args, size_t len, struct ng_boot **b_p);

/*
 * --server: listens on @bind:@port and serves ngauge clients one after
 * another, each in a process of its own (forked) that runs
 * @serve(boot, args, len, @arg) as rank 1 and exits with what it returns.
 * Handshakes are read many at once, each within @timeout_s of its accept;
 * a connection from outside @allow is closed at once.  A client whose
 * handshake completes while another is served is told the server is busy.
 * A client's run still going after @max_time_s is stopped (SIGTERM, then
 * SIGKILL 5 s later).  @once: only the first client; returns its exit
 * status.  Otherwise serves until SIGINT, SIGTERM or SIGHUP, which it
 * passes on to the client being served, and returns 128 + the signal's
 * number once that client has ended.  Returns 1 or 2 (reported) when it
 * cannot listen.
 */
struct ng_server_conf {
	const char *bind; /* NULL: every interface */
	int port;
	bool once;
	double timeout_s;             /* a handshake's deadline; the child's bootstrap reads and writes */
	double max_time_s;            /* --server-max-time */
	const struct ng_auth *auth;   /* NULL: no key asked */
	const struct ng_allow *allow; /* NULL: every address */
	int (*serve)(struct ng_boot *b, const char *args, size_t len, void *arg);
	void *arg;
};
int ng_server_run(const struct ng_server_conf *c);

/*
 * Slurm.  ng_slurm_step_tasks(): the number of tasks of the job step this
 * process is one of (SLURM_STEP_NUM_TASKS, with SLURM_STEP_ID and
 * SLURM_PROCID), 0 outside a step.  ng_launched_by_mpiexec(): started by an
 * MPI library's own launcher (MPICH's Hydra, Open MPI's mpirun), which
 * inside an allocation runs its daemons as a step of their own: then that
 * step is not the ranks'.
 */
int ng_slurm_step_tasks(void);
bool ng_launched_by_mpiexec(void);
/* Fills @b's host (gethostname) and addr: the first non-loopback IPv4
 * address the host name resolves to, else of an interface that is up, else
 * 127.0.0.1. */
void ng_boot_identity(struct ng_boot *b);

/*
 * A job step's tasks without MPI, through the launcher's process-management
 * interface: PMI-2 (Slurm's libpmi2: srun --mpi=pmi2, PMI_FD set) and PMIx
 * (srun --mpi=pmix, PMIX_RANK set).  Rank and size are the launcher's;
 * allgather goes through its key-value space.  Abort ends the whole step.
 * Fail (reported) when the library cannot reach the launcher.
 *
 * Each is a plugin (core/plugin.h), so that the executable links neither
 * library and runs where one is not installed: ngauge-pmi2.so exports
 * "launch:pmi2", ngauge-pmix.so "launch:pmix", a struct ng_pmi_launch each.
 */
struct ng_pmi_launch {
	ng_status (*boot)(struct ng_boot **b_p);
};

#if NG_HAVE_PMI2
ng_status ng_boot_pmi2(struct ng_boot **b_p);
#endif
#if NG_HAVE_PMIX
ng_status ng_boot_pmix(struct ng_boot **b_p);
#endif

/*
 * The MPI launch's entry points: ngauge-mpi.so's "launch:mpi" (core/plugin.h),
 * the functions below.  The driver finds them with ng_plugin_entry("mpi",
 * "launch:mpi", ...) once it sees an MPI launcher.
 */
struct ng_mpi_launch {
	ng_status (*boot)(int *argc, char ***argv, bool threads, struct ng_boot **b_p);
	double (*wtime)(void);
	void (*version)(char *buf, size_t len);
};

#if NG_HAVE_MPI
/* In ngauge-mpi.so (core/boot_mpi.c), called through struct ng_mpi_launch
 * from the executable. */
/* MPI launch: MPI_Init_thread and the bootstrap over MPI_COMM_WORLD.  With
 * @threads (the module's .threads) it asks MPI_THREAD_FUNNELED, else
 * MPI_THREAD_SINGLE. */
ng_status ng_boot_mpi(int *argc, char ***argv, bool threads, struct ng_boot **b_p);
/* MPI_Wtime, for the "mpi" timer. */
double ng_boot_mpi_wtime(void);
/* MPI_Get_library_version, first line. */
void ng_boot_mpi_version(char *buf, size_t len);
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
