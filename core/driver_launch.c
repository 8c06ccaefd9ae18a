/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's launch (stages.h): how this process becomes one rank of
 * a run, or the process that starts them.  The choice is made here and
 * nowhere else: a --server/--client pair, a Slurm step's PMI, an MPI
 * launcher (with its singleton checks), the relaunch under mpiexec, or
 * --np ranks forked on this machine.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cancel.h"
#include "fdio.h"
#include "launch.h"
#include "plugin.h"
#include "registry.h"
#include "stages.h"

/* How to start a step's tasks so that they find each other (one line, below). */
#define SLURM_FIX "run 'srun --mpi=pmi2 ...' (or --mpi=pmix), or mpiexec inside the allocation"

/* Re-runs this command under mpiexec for modules that need an MPI launch. */
static int relaunch_mpi(const struct ng_driver_plan *p, int argc, char **argv)
{
	static char mpiexec[] = NG_MPIEXEC, dash_n[] = "-n";
	char np[32], self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char **nargv = calloc((size_t)argc + 8, sizeof(*nargv));
	int k = 0;

	if (!nargv || sl <= 0) {
		free(nargv);
		ng_error("cannot find this program's path to re-run it under mpiexec");
		return 1;
	}
	self[sl] = '\0';
	snprintf(np, sizeof(np), "%lld", p->np);
	nargv[k++] = mpiexec;
	nargv[k++] = dash_n;
	nargv[k++] = np;
	nargv[k++] = self;
	for (int i = 1; i < argc; i++)
		nargv[k++] = argv[i];
	nargv[k] = NULL;
	setenv("NGAUGE_RELAUNCHED", "1", 1);
	/* mpiexec forwards the ranks' output through pipes to this process's
	 * own: whether the table reaches the reader of stderr is decided here
	 * (fdio.h, ng_fd_shown_with) */
	setenv("NGAUGE_STDOUT_SHOWN", ng_fd_shown_with(STDOUT_FILENO, STDERR_FILENO) ? "1" : "0", 1);
	fflush(stdout);
	execvp(mpiexec, nargv);
	ng_error("module '%s' needs an MPI launch and mpiexec could not be started (%s): run it as "
	         "'mpiexec -n %s ngauge ...'",
	         p->mod->name, strerror(errno), np);
	free(nargv);
	return 1;
}

/* The bootstrap of srun's PMI (@pmix: PMIx, else PMI-2) from its plugin:
 * NG_ERR_USAGE where that plugin is not built or cannot be loaded here. */
static ng_status pmi_boot(bool pmix, struct ng_driver_launched *l)
{
	ng_status st = NG_ERR_USAGE;

	/* ngauge-pmix.so or ngauge-pmi2.so; absent (not built) or not loadable (its
	 * library not installed here): the MPI bootstrap where there is one. */
	if ((pmix && NG_HAVE_PMIX) || (!pmix && NG_HAVE_PMI2)) {
		const void *entry;

		if (ng_plugin_entry(pmix ? "pmix" : "pmi2", pmix ? "launch:pmix" : "launch:pmi2",
		                    pmix ? "the PMIx launch (srun --mpi=pmix)"
		                         : "the PMI-2 launch (srun --mpi=pmi2)",
		                    NG_HAVE_MPI, &entry) == NG_OK) {
			struct ng_plugin_guard g;

			ng_plugin_guard_enter(&g);
			st = ((const struct ng_pmi_launch *)entry)->boot(&l->boot);
			ng_plugin_guard_leave(&g);
		}
	}
	return st;
}

/*
 * A Slurm step's tasks and a module that needs no MPI: the bootstrap
 * through the PMI srun gave them (PMIx, PMI-2).  Returns -1 where srun gave
 * one this build lacks and MPI can take over (the MPI bootstrap then);
 * otherwise as ng_driver_launch().
 */
static int launch_slurm(const struct ng_driver_plan *p, const struct ng_args *a, struct ng_driver_launched *l)
{
	int tasks = ng_slurm_step_tasks();
	bool pmix = getenv("PMIX_RANK") != NULL, pmi2 = !pmix && getenv("PMI_FD") != NULL;
	ng_status st;

	if (!pmix && !pmi2) {
		ng_error("srun started %d tasks with no process-management interface to find each other "
		         "(srun --mpi=none, the cluster's MpiDefault): " SLURM_FIX,
		         tasks);
		return EXIT_USAGE;
	}
	st = pmi_boot(pmix, l);
	if (st == NG_ERR_USAGE) {
#if NG_HAVE_MPI
		return -1;
#else
		ng_error(
		    "srun gave its tasks %s, which this ngauge cannot use (without MPI): "
		    "%s, or run 'srun --mpi=%s ...'",
		    pmix ? "PMIx" : "PMI-2",
		    (pmix ? NG_HAVE_PMIX : NG_HAVE_PMI2)
		        ? (pmix ? "install libpmix2" : "install libpmi2-0")
		        : (pmix ? "install libpmix-dev and rebuild" : "install libpmi2-0-dev and rebuild"),
		    pmix ? "pmi2" : "pmix");
		return EXIT_USAGE;
#endif
	}
	if (st)
		return 1;
	l->how = "srun";
	if (ng_args_given(a, "np") && p->np != l->boot->size && l->boot->rank == 0)
		ng_warn("--np %lld ignored: srun started %d ranks", p->np, l->boot->size);
	return 0;
}

#if NG_HAVE_MPI
/* A Slurm step's tasks that srun gave no PMI (neither PMI_FD nor PMIX_RANK):
 * MPI would come up as a singleton in each (MPICH) or abort in MPI_Init
 * (Open MPI).  One line saying so before MPI is initialised, true. */
static bool refuse_without_pmi(void)
{
	int tasks = ng_slurm_step_tasks();

	if (tasks < 2 || ng_launched_by_mpiexec() || getenv("PMI_FD") || getenv("PMIX_RANK"))
		return false;
	ng_error("srun started %d tasks with no process-management interface (srun --mpi=none, the "
	         "cluster's MpiDefault), so MPI would come up in each as a singleton: " SLURM_FIX,
	         tasks);
	return true;
}

/* MPI came up as a singleton in each of a Slurm step's tasks (a PMI the
 * library does not speak, e.g. MPICH under --mpi=pmix): one line saying so,
 * true.  The bootstrap is released then. */
static bool refuse_singletons(struct ng_driver_launched *l)
{
	int tasks = ng_slurm_step_tasks();
	const char *given = getenv("PMIX_RANK") ? "PMIx, srun --mpi=pmix"
	                    : getenv("PMI_FD")  ? "PMI-2, srun --mpi=pmi2"
	                                        : "none, srun --mpi=none or the cluster's MpiDefault";

	if (l->boot->size != 1 || tasks < 2 || ng_launched_by_mpiexec())
		return false;
	ng_error("srun started %d tasks, but MPI came up in each as a singleton (MPI size 1): it did not "
	         "find the process-management interface srun gave the tasks (%s); " SLURM_FIX,
	         tasks, given);
	l->boot->ops->fini(l->boot);
	l->boot = NULL;
	return true;
}

/* Whether the module, or the module it wraps (emu's --emu-base), runs a
 * thread of its own: MPI_THREAD_FUNNELED then. */
static bool module_threads(const struct ng_driver_plan *p, const struct ng_args *a)
{
	const char *wrapped = p->mod->wraps ? ng_args_str(a, p->mod->wraps) : NULL;
	const struct ng_module *wm = wrapped ? ng_module_find(wrapped) : NULL;

	return p->mod->threads || (wm && wm->threads);
}

/* Started by an MPI launcher: the MPI bootstrap from its plugin, refused
 * where MPI came up as singletons in a step of several tasks.  As
 * ng_driver_launch(). */
static int launch_mpi(const struct ng_driver_plan *p, const struct ng_args *a, int *argc_p, char ***argv_p,
                      struct ng_driver_launched *l)
{
	const void *entry;
	const struct ng_mpi_launch *ml;
	struct ng_plugin_guard g;
	ng_status bst;

	if (refuse_without_pmi())
		return EXIT_USAGE;
	if (ng_plugin_entry("mpi", "launch:mpi", "the MPI launch (mpiexec/srun)", false, &entry))
		return EXIT_USAGE;
	ml = entry;
	/* MPI_Init may start a library that takes the stop signals. */
	ng_plugin_guard_enter(&g);
	bst = ml->boot(argc_p, argv_p, module_threads(p, a), &l->boot);
	ng_plugin_guard_leave(&g);
	if (bst)
		return 1;
	if (refuse_singletons(l))
		return EXIT_USAGE;
	l->how = "mpiexec";
	l->mpi = true;
	l->wtime = ml->wtime;
	ml->version(l->mpi_version, sizeof(l->mpi_version));
	if (ng_args_given(a, "np") && !getenv("NGAUGE_RELAUNCHED") && p->np != l->boot->size &&
	    l->boot->rank == 0)
		ng_warn("--np %lld ignored: mpiexec started %d ranks", p->np, l->boot->size);
	return 0;
}
#else
static int launch_mpi(const struct ng_driver_plan *p, const struct ng_args *a, int *argc_p, char ***argv_p,
                      struct ng_driver_launched *l)
{
	(void)p, (void)a, (void)argc_p, (void)argv_p, (void)l;
	ng_error("started by mpiexec/srun, but this ngauge was built without MPI (install libmpich-dev "
	         "and rebuild)");
	return EXIT_USAGE;
}
#endif

/*
 * In this order:
 *   @preboot      a --server/--client pair, connected: rank 0 is the client,
 *                 rank 1 the server's child serving it;
 *   --server      serve clients one after another (ng_server_run), each in
 *                 a child that comes back through @again with a preboot;
 *   --client      connect, send the command line, and come back through
 *                 @again with a preboot;
 *   srun          a Slurm step's tasks (not mpiexec's daemons) and a module
 *                 that needs no MPI: the PMIx or PMI-2 bootstrap, whichever
 *                 srun gave (--mpi=pmix, --mpi=pmi2); with neither, refused;
 *   mpiexec/srun  started by an MPI launcher: the MPI bootstrap (refused when
 *                 MPI came up as singletons in a step of several tasks);
 *   NG_CAP_MPI    a module that needs MPI, started without a launcher: this
 *                 command again under mpiexec -n NP;
 *   otherwise     fork --np ranks on this machine, this process their hub.
 * --np's range (1 .. 1000000: the watchdog's call word names a peer below 2^20 - 1, base/where.h)
 * is its table's, refused while parsing; the machine refuses what it cannot hold (descriptors of
 * the hub, fork).
 */
int ng_driver_launch(const struct ng_driver_plan *p, struct ng_args *a, int *argc_p, char ***argv_p,
                     struct ng_boot *preboot, ng_pair_run_fn again, struct ng_driver_launched *l)
{
	const char *timer;

	*l = (struct ng_driver_launched){.how = "--np"};
	ng_cancel_install();
	if (preboot) {
		l->boot = preboot;
		l->how = "--server/--client";
		return 0;
	}
	if (ng_args_flag(a, "server") || ng_args_given(a, "client")) {
		if (ng_driver_check_ranks(p, 2, -1, "--server/--client"))
			return EXIT_USAGE;
		return ng_pair_up(a, *argc_p, *argv_p, again);
	}
	if (!(p->mod->caps & NG_CAP_MPI) && ng_slurm_step_tasks() > 1 && !ng_launched_by_mpiexec()) {
		int code = launch_slurm(p, a, l);

		if (code >= 0)
			return code;
	}
	if (ng_launched_by_mpi())
		return launch_mpi(p, a, argc_p, argv_p, l);
	if (ng_driver_check_ranks(p, (int)p->np, -1, "--np"))
		return EXIT_USAGE;
	if (p->mod->caps & NG_CAP_MPI)
		return relaunch_mpi(p, *argc_p, *argv_p);
	/* One calibration of the TSC for every rank of this host (stages.h). */
	timer = ng_args_str(a, "timer");
	if (p->np > 1 && (!timer || !strcmp(timer, "tsc")) && ng_timer_tsc_invariant())
		l->timer_ready = ng_timer_init(&l->timer, timer, NULL) == NG_OK;
	/* Stopped while it calibrated: said here, once, before any rank
	 * exists (a rank would inherit the request and leave unheard). */
	if (ng_cancel_requested()) {
		ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
		return 128 + ng_cancel_signal();
	}
	if (ng_boot_local((int)p->np, p->timeout + 2.0, &l->boot))
		return 1;
	return 0;
}
