/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver: parses the command line from the option tables, checks the
 * pattern's needs against the module, launches the ranks, opens the module,
 * runs the pattern and writes the results.
 *
 * Exit status: 0 success, 1 failed run, 2 usage error, 128 + the signal when
 * interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
 *
 * Decisions:
 * - Options may come in any order.  Every option of every registered
 *   module and pattern is parsed, then one that the chosen module (with the
 *   module it wraps: --emu-base) and pattern do not read, or that the chosen
 *   configuration leaves unused (the option's .applies), is refused with
 *   exit 2 before anything runs (readers.h, doc/options.md).
 * - Without -x/-p the defaults are tcp and pingpong.
 * - A module that needs an MPI launch (mpi) started without mpiexec re-runs
 *   itself under `mpiexec -n NP`.
 * - The results file is rewritten after every measured size with
 *   "complete": false, and once more at the end; nothing measured is lost if
 *   a rank dies or the run is interrupted.
 * - On SIGINT/SIGTERM/SIGHUP the ranks stop at the next interruptible point;
 *   a rank stuck in a call that cannot be interrupted exits 3 s later (its
 *   results file already holds every completed size).  The local launcher
 *   and --server pass the signals they get on to their ranks.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cancel.h"
#include "clocksync.h"
#include "cmdline.h"
#include "docgen.h"
#include "driver.h"
#include "env.h"
#include "launch.h"
#include "manifest.h"
#include "pair.h"
#include "plugin.h"
#include "readers.h"
#include "registry.h"
#include "results_priv.h"
#include "sizes.h"

enum { EXIT_USAGE = NG_EXIT_USAGE };

/* ---- command line ---- */

const struct ng_option *ng_driver_find_option(const char *name)
{
	for (const struct ng_option *o = ng_driver_options; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return ng_option_find(name);
}

static void command_line(int argc, char **argv, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; i < argc; i++) {
		const char *w = i == 0 ? "ngauge" : argv[i];
		strncat(buf, i ? " " : "", len - strlen(buf) - 1);
		strncat(buf, w, len - strlen(buf) - 1);
	}
}

/* ---- the run ---- */

struct plan {
	const struct ng_module *mod;
	const struct ng_pattern *pat;
	size_t *sizes;
	size_t nsizes;
	const char *sizes_spec;
	bool sizes_default; /* no -s: the pattern's list, cut to the module's largest message */
	char *sizes_cut;    /* the spec of that cut list (owned) */
	long long count, warmup, np, seed;
	const char *output;
	double timeout;
	double time_s, interval_s;    /* --time, --interval (0: not given) */
	double ci_target, max_time_s; /* --ci-target (0: not given), --max-time (10 s without) */
	double pct[NG_STATS_PCT_MAX]; /* --percentiles */
	size_t npct;
};

static int check_ranks(const struct plan *p, int size, int rank, const char *how)
{
	if (size < p->pat->min_ranks) {
		if (rank <= 0)
			ng_error("pattern '%s' needs at least %d ranks, %s gives %d", p->pat->name,
			         p->pat->min_ranks, how, size);
		return -1;
	}
	if (p->pat->max_ranks && size > p->pat->max_ranks) {
		if (rank <= 0)
			ng_error("pattern '%s' runs with at most %d ranks, %s gives %d", p->pat->name,
			         p->pat->max_ranks, how, size);
		return -1;
	}
	if (p->pat->even_ranks && size % 2) {
		if (rank <= 0)
			ng_error("pattern '%s' pairs ranks and needs an even number of them, %s gives %d",
			         p->pat->name, how, size);
		return -1;
	}
	if (size > 2 && !(p->mod->caps & NG_CAP_MULTIRANK)) {
		if (rank <= 0)
			ng_error("module '%s' connects two ranks only, %s gives %d", p->mod->name, how, size);
		return -1;
	}
	return 0;
}

/* Writes why the largest size is above @max into @why and returns -1, or 0. */
static int max_size_why(const struct plan *p, size_t max, const char *what, char *why, size_t len)
{
	if (max && p->nsizes && p->sizes[p->nsizes - 1] > max) {
		snprintf(why, len, "message size %zu is above the maximum of module '%s' (%zu bytes%s)",
		         p->sizes[p->nsizes - 1], p->mod->name, max, what);
		return -1;
	}
	return 0;
}

/*
 * What every rank checks of its own opened instance: the capabilities the
 * pattern needs and the largest size.  Devices may differ between nodes, so
 * the ranks agree on the verdict: when any rank fails, the first failing rank
 * says why and all leave together (*agreed_p set: no abort, no rank left
 * waiting in the pattern).  Returns 0, EXIT_USAGE, or 1 when a peer was lost
 * while agreeing.
 */
static int check_instance(const struct plan *p, const struct ng_comm *comm, struct ng_boot *boot,
                          bool *agreed_p)
{
	unsigned lacking = p->pat->needs & ~comm->caps;
	char why[512] = "";
	double first;

	if (lacking)
		snprintf(why, sizeof(why), "pattern '%s' needs %s, which module '%s' does not offer here",
		         p->pat->name, ng_cap_name(lacking & -lacking), p->mod->name);
	else
		(void)max_size_why(p, comm->max_msg,
		                   comm->max_msg != p->mod->max_msg ? " on this device" : "", why,
		                   sizeof(why));
	/* The largest (size - rank) over the failing ranks names the first. */
	first = why[0] ? (double)(boot->size - boot->rank) : 0.0;
	if (ng_boot_max(boot, &first, 1))
		return 1;
	if (first == 0.0)
		return 0;
	*agreed_p = true;
	if ((double)(boot->size - boot->rank) == first)
		ng_error("%s", why);
	return EXIT_USAGE;
}

/*
 * Without -s the sizes stop at the instance's largest message.  Every rank
 * has its own limit (devices may differ between nodes); all take the
 * smallest, and rank 0 notes the cut once.  Returns 0, or 1 when a peer was
 * lost while agreeing.
 */
static int fit_default_sizes(struct plan *p, const struct ng_comm *comm, struct ng_boot *boot)
{
	double lim = comm->max_msg ? -(double)comm->max_msg : -HUGE_VAL;
	size_t max, last = p->sizes[p->nsizes - 1];

	if (ng_boot_max(boot, &lim, 1))
		return 1;
	if (lim == -HUGE_VAL)
		return 0;
	max = (size_t)-lim;
	if (!ng_sizes_cap(p->sizes, &p->nsizes, max))
		return 0;
	p->sizes_cut = ng_sizes_format(p->sizes, p->nsizes);
	if (p->sizes_cut)
		p->sizes_spec = p->sizes_cut;
	if (boot->rank == 0)
		fprintf(stderr,
		        "ngauge: note: sizes stop at %zu bytes, the largest message of module '%s'%s (the "
		        "default list goes on to %zu; -s chooses the sizes)\n",
		        max, p->mod->name, max != p->mod->max_msg ? " here" : "", last);
	return 0;
}

static int status_exit(ng_status st)
{
	switch (st) {
	case NG_OK:
		return 0;
	case NG_ERR_USAGE:
		return EXIT_USAGE;
	case NG_ERR_CANCELLED:
		return 128 + (ng_cancel_signal() ? ng_cancel_signal() : SIGINT);
	default:
		return 1;
	}
}

/* Parses --pin's CPU list; returns its length, or -1 (reported) when malformed. */
static int pin_parse(const char *list, int *cpus, int max)
{
	int n = 0;
	for (const char *p = list; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v >= CPU_SETSIZE || n == max || (*end && *end != ',')) {
			ng_error("--pin expects CPU numbers separated by commas, e.g. 0,1; got '%s'", list);
			return -1;
		}
		cpus[n++] = (int)v;
		p = *end ? end + 1 : end;
	}
	if (n == 0)
		ng_error("--pin expects at least one CPU number");
	return n ? n : -1;
}

/* Binds this rank to its CPU of the --pin list. */
static int pin_rank(const char *list, int rank)
{
	int cpus[256], n = pin_parse(list, cpus, 256);
	cpu_set_t set;

	if (n < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpus[rank % n], &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		ng_error("--pin: cannot run rank %d on CPU %d: %s", rank, cpus[rank % n], strerror(errno));
		return -1;
	}
	return 0;
}

/* Re-runs this command under mpiexec for modules that need an MPI launch. */
static int relaunch_mpi(const struct plan *p, int argc, char **argv)
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
	fflush(stdout);
	execvp(mpiexec, nargv);
	ng_error("module '%s' needs an MPI launch and mpiexec could not be started (%s): run it as "
	         "'mpiexec -n %s ngauge ...'",
	         p->mod->name, strerror(errno), np);
	free(nargv);
	return 1;
}

static json_t *doc_head(const struct plan *p, const struct ng_args *a, struct ng_boot *boot,
                        const struct ng_timer *t, const struct ng_comm *c, const char *cmd,
                        const char *mpi_version, const struct ng_oversub *over, struct ng_manifest *m)
{
	json_t *env = ng_env_json(c->device, mpi_version);
	char started[64];
	json_t *params = ng_args_json(a, "");

	/* The parameters block: run settings and the options of the module and
	 * pattern in use (the driver-only switches are left out). */
	static const char *const drop[] = {"list",   "help",    "version", "timer-info",
	                                   "module", "pattern", "man",     "completion"};
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		json_object_del(params, drop[i]);
	json_object_set_new(params, "sizes", json_string(p->sizes_spec));
	for (const struct ng_option *const *tab = p->mod->options; tab && *tab; tab++)
		ng_args_json_table(a, *tab, params);
	ng_args_json_table(a, p->pat->options, params);

	json_object_set_new(env, "oversubscribed", json_boolean(over->over));
	if (over->over)
		json_object_set_new(env, "oversubscription",
		                    json_pack("{s:s,s:i,s:i}", "host", over->host, "spinning_ranks",
		                              over->ranks, "cores", over->cores));
	/* The manifest (manifest.h) moves into the document. */
	json_object_set_new(env, "hosts", m->hosts);
	json_object_set_new(env, "placement", m->ranks);
	json_object_set_new(env, "versions", m->versions);
	m->hosts = m->ranks = m->versions = NULL;
	ng_iso_time(started, sizeof(started));
	return json_pack("{s:s,s:b,s:s,s:s,s:i,s:s,s:s,s:s,s:o,s:{s:s,s:f,s:f,s:b,s:f},s:o,s:O}", "schema",
	                 "ngauge-result/1", "complete", 0, "module", p->mod->name, "pattern", p->pat->name,
	                 "ranks", boot->size, "command", cmd, "started", started, "launch", boot->ops->name,
	                 "env", env, "timer", "name", t->name, "resolution_ns", t->resolution_ns,
	                 "overhead_ns", t->overhead_ns, "invariant_tsc", t->invariant_tsc, "tsc_ghz",
	                 t->tsc_ghz, "parameters", params, "warnings", m->warnings);
}

/* The validity warnings (manifest.h), a line each on stderr unless @quiet. */
static void print_warnings(const json_t *w, bool quiet)
{
	for (size_t i = 0; !quiet && i < json_array_size(w); i++)
		ng_warn("%s", json_string_value(json_object_get(json_array_get(w, i), "message")));
}

/* The module's own keys in the result file (core/module.h, report). */
static void module_row(void *ctx, size_t size, struct ng_row *row)
{
	struct ng_comm *c = ctx;

	c->ops->report_row(c, size, row);
}

static void module_block(struct ng_results *res, struct ng_comm *c)
{
	json_t *b = c->ops->report ? c->ops->report(c) : NULL;

	if (b) {
		/* an emulator's measured overshoot (modules/emu.c) bounds every time over it */
		ng_results_widen(res, "emu_overshoot", json_number_value(json_object_get(b, "overshoot_us")),
		                 0.0);
		ng_results_block(res, c->mod->name, b);
	}
}

/* ---- the launch ---- */

/* How this process's ranks came to be: launch() fills it, run() uses it. */
struct launched {
	struct ng_boot *boot;  /* this rank's bootstrap (run() releases it); NULL: no rank here */
	const char *how;       /* for messages: "--np", "mpiexec" or "--server/--client" */
	bool mpi;              /* MPI is initialised (the mpi bootstrap): NG_CAP_MPI modules can run */
	double (*wtime)(void); /* under mpi, MPI_Wtime for the mpi timer; else NULL */
	char mpi_version[256]; /* under mpi, the MPI library; else "" */
};

static int main_with(int argc, char **argv, struct ng_boot *preboot, const struct ng_server_limits *lim);

/* How to start a step's tasks so that they find each other (one line, below). */
#define SLURM_FIX "run 'srun --mpi=pmi2 ...' (or --mpi=pmix), or mpiexec inside the allocation"

/*
 * A Slurm step's tasks and a module that needs no MPI: the bootstrap
 * through the PMI srun gave them (PMIx, PMI-2).  Returns -1 where srun gave
 * one this build lacks and MPI can take over (the MPI bootstrap then);
 * otherwise as launch().
 */
static int launch_slurm(const struct plan *p, const struct ng_args *a, struct launched *l)
{
	int tasks = ng_slurm_step_tasks();
	bool pmix = getenv("PMIX_RANK") != NULL, pmi2 = !pmix && getenv("PMI_FD") != NULL;
	ng_status st = NG_ERR_USAGE;

	if (!pmix && !pmi2) {
		ng_error("srun started %d tasks with no process-management interface to find each other "
		         "(srun --mpi=none, the cluster's MpiDefault): " SLURM_FIX,
		         tasks);
		return EXIT_USAGE;
	}
	/* ngauge-pmix.so or ngauge-pmi2.so; absent (not built) or not loadable (its
	 * library not installed here): the MPI bootstrap where there is one. */
	if ((pmix && NG_HAVE_PMIX) || (pmi2 && NG_HAVE_PMI2)) {
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
static bool refuse_singletons(struct launched *l)
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
#endif

/*
 * The launch choice, made here and nowhere else.  In this order:
 *   @preboot      a --server/--client pair, connected: rank 0 is the client,
 *                 rank 1 the server's child serving it;
 *   --server      serve clients one after another (ng_server_run), each in
 *                 a child that comes back through main_with() with @preboot;
 *   --client      connect, send the command line, and come back through
 *                 main_with() with @preboot;
 *   srun          a Slurm step's tasks (not mpiexec's daemons) and a module
 *                 that needs no MPI: the PMIx or PMI-2 bootstrap, whichever
 *                 srun gave (--mpi=pmix, --mpi=pmi2); with neither, refused;
 *   mpiexec/srun  started by an MPI launcher: the MPI bootstrap (refused when
 *                 MPI came up as singletons in a step of several tasks);
 *   NG_CAP_MPI    a module that needs MPI, started without a launcher: this
 *                 command again under mpiexec -n NP;
 *   otherwise     fork --np ranks on this machine, this process their hub.
 * Takes @preboot.  Returns with l->boot set in a rank, which goes on to
 * run(); otherwise l->boot is NULL and the return value is this process's
 * exit status.  The MPI bootstrap may take arguments of its own out of
 * *argc_p / *argv_p.
 */
static int launch(const struct plan *p, struct ng_args *a, int *argc_p, char ***argv_p,
                  struct ng_boot *preboot, struct launched *l)
{
	*l = (struct launched){.how = "--np"};
	ng_cancel_install();
	if (preboot) {
		l->boot = preboot;
		l->how = "--server/--client";
		return 0;
	}
	if (ng_args_flag(a, "server") || ng_args_given(a, "client")) {
		if (check_ranks(p, 2, -1, "--server/--client"))
			return EXIT_USAGE;
		return ng_pair_up(a, *argc_p, *argv_p, main_with);
	}
	if (!(p->mod->caps & NG_CAP_MPI) && ng_slurm_step_tasks() > 1 && !ng_launched_by_mpiexec()) {
		int code = launch_slurm(p, a, l);

		if (code >= 0)
			return code;
	}
	if (ng_launched_by_mpi()) {
#if NG_HAVE_MPI
		const void *entry;
		const struct ng_mpi_launch *ml;

		if (refuse_without_pmi())
			return EXIT_USAGE;
		if (ng_plugin_entry("mpi", "launch:mpi", "the MPI launch (mpiexec/srun)", false, &entry))
			return EXIT_USAGE;
		ml = entry;
		/* MPI_Init may start a library that takes the stop signals. */
		struct ng_plugin_guard g;
		ng_plugin_guard_enter(&g);
		/* MPI_THREAD_FUNNELED where the module, or the module it wraps (emu's
		 * --emu-base), runs a thread of its own. */
		bool threads = p->mod->threads;
		const char *wrapped = p->mod->wraps ? ng_args_str(a, p->mod->wraps) : NULL;
		const struct ng_module *wm = wrapped ? ng_module_find(wrapped) : NULL;
		if (wm && wm->threads)
			threads = true;
		ng_status bst = ml->boot(argc_p, argv_p, threads, &l->boot);
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
#else
		ng_error(
		    "started by mpiexec/srun, but this ngauge was built without MPI (install libmpich-dev "
		    "and rebuild)");
		return EXIT_USAGE;
#endif
	}
	if (p->np < 1 || p->np > 1024) {
		ng_error("--np must be between 1 and 1024, got %lld", p->np);
		return EXIT_USAGE;
	}
	if (check_ranks(p, (int)p->np, -1, "--np"))
		return EXIT_USAGE;
	if (p->mod->caps & NG_CAP_MPI)
		return relaunch_mpi(p, *argc_p, *argv_p);
	if (ng_boot_local((int)p->np, p->timeout + 2.0, &l->boot))
		return 1;
	return 0;
}

/* ---- one rank's run ---- */

/* One rank's run, on the bootstrap @l gives it (released here).  Returns the
 * rank's exit status. */
static int run(struct plan *p, struct ng_args *a, int argc, char **argv, const struct launched *l)
{
	struct ng_boot *boot = l->boot;
	struct ng_comm *comm = NULL;
	struct ng_results *res = NULL;
	struct ng_timer timer;
	struct ng_clock clk = {0};
	struct ng_oversub over;
	struct ng_manifest man = {0};
	const char *how = l->how, *mpi_ver = l->mpi ? l->mpi_version : NULL;
	char cmd[4096];
	ng_status st;
	int code;
	/* Set where the ranks leave on one verdict (rank count and launch kind,
	 * which each reaches on its own; the instance checks, which they agree
	 * on): one rank says why, all meet at a barrier so that the message is
	 * out before anyone leaves, and the job ends without an abort. */
	bool agreed = false;

	if (boot->size > 1)
		ng_log_set_rank(boot->rank);
	if (ng_args_str(a, "pin") && pin_rank(ng_args_str(a, "pin"), boot->rank)) {
		code = EXIT_USAGE;
		goto out_boot;
	}
	if (check_ranks(p, boot->size, boot->rank, how)) {
		code = EXIT_USAGE;
		agreed = true;
		goto out_boot;
	}
	if ((p->mod->caps & NG_CAP_MPI) && !l->mpi) {
		ng_error("module '%s' needs an MPI launch (mpiexec/srun)", p->mod->name);
		code = EXIT_USAGE;
		agreed = true;
		goto out_boot;
	}
	st = ng_timer_init(&timer, ng_args_str(a, "timer"), l->wtime);
	if (st == NG_OK)
		st = ng_timer_skew_env(&timer, boot->rank);
	if (st) {
		code = status_exit(st);
		goto out_boot;
	}

	struct ng_module_env menv = {
	    .boot = boot, .args = a, .cancel = ng_cancel_flag(), .timeout_s = p->timeout};
	if (p->mod->plugin) { /* its library may take the stop signals while it starts (plugin.h) */
		struct ng_plugin_guard g;
		ng_plugin_guard_enter(&g);
		st = p->mod->open(p->mod, &menv, &comm);
		ng_plugin_guard_leave(&g);
	} else {
		st = p->mod->open(p->mod, &menv, &comm);
	}
	if (st) {
		/* Stopped while it opened (a stop signal held back by the guard
		 * comes in as the guard ends): the interruption, said once. */
		if (ng_cancel_requested() && st != NG_ERR_USAGE) {
			st = NG_ERR_CANCELLED;
			if (boot->rank == 0 || strcmp(how, "--server/--client") == 0)
				ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
		}
		code = status_exit(st) == EXIT_USAGE ? EXIT_USAGE : status_exit(st);
		goto out_boot;
	}
	comm->cancel = ng_cancel_flag();
	if (p->sizes_default && fit_default_sizes(p, comm, boot)) {
		code = 1;
		goto out_close;
	}
	/* An instance may offer less than its descriptor (a wrapper over a base
	 * module, a device without some feature). */
	code = check_instance(p, comm, boot, &agreed);
	if (code)
		goto out_close;
	if (ng_env_oversub(boot, comm->spins, &over)) {
		code = 1;
		goto out_close;
	}
	struct ng_manifest_in min = {
	    .device = comm->device,
	    .mpi = mpi_ver,
	    .spins = comm->spins,
	    .pin_given = ng_args_str(a, "pin") != NULL,
	    .regmem = comm->pins,
	    .max_bytes = p->nsizes ? p->sizes[p->nsizes - 1] : 0,
	    .t = &timer,
	};
	if (ng_manifest_gather(boot, &min, &man)) {
		code = 1;
		goto out_close;
	}
	if (ng_clock_sync(&clk, (enum ng_sync_mode)ng_args_choice(a, "sync"), comm, boot, &timer)) {
		code = 1;
		goto out_close;
	}

	if (boot->rank == 0) {
		char label[128], mark[128] = "";
		command_line(argc, argv, cmd, sizeof(cmd));
		snprintf(label, sizeof(label), "%s over %s", p->pat->name, p->mod->name);
		if (over.over)
			ng_manifest_warn(
			    &man, "oversubscribed",
			    "%d busy-polling ranks share %d core%s of host %s: the times include "
			    "waiting for the CPU (results marked \"oversubscribed\"; use fewer ranks, or "
			    "a module's sleep/yield mode)",
			    over.ranks, over.cores, over.cores == 1 ? "" : "s", over.host);
		res = ng_results_new(doc_head(p, a, boot, &timer, comm, cmd, mpi_ver, &over, &man), p->output,
		                     ng_args_flag(a, "raw"), p->pat->name);
		if (ng_args_given(a, "percentiles"))
			ng_results_percentiles(res, p->pct, p->npct);
		/* a difference of two reads: off by a tick and by one read */
		ng_results_systematic(res, "timer_resolution", timer.resolution_ns * 1e-3);
		ng_results_systematic(res, "timer_overhead", timer.overhead_ns * 1e-3);
		module_block(res, comm);
		if (clk.mode != NG_SYNC_OFF)
			ng_results_block(res, "clock", ng_clock_json(&clk));
		if (comm->ops->report_row)
			ng_results_row_hook(res, module_row, comm);
		if (over.over) {
			snprintf(mark, sizeof(mark), "OVERSUBSCRIBED: %d busy-polling ranks on %d core%s",
			         over.ranks, over.cores, over.cores == 1 ? "" : "s");
			ng_results_mark(res, mark);
		}
		printf("# ngauge %s: pattern %s, module %s (%s), %d ranks (%s launch), timer %s (resolution "
		       "%.1f "
		       "ns, overhead %.1f ns)%s%s\n",
		       NG_VERSION, p->pat->name, p->mod->name, comm->device, boot->size, boot->ops->name,
		       timer.name, timer.resolution_ns, timer.overhead_ns, mark[0] ? "; " : "", mark);
		for (size_t i = 0; i < json_array_size(man.warnings); i++)
			printf(
			    "# warning (%s): %s\n",
			    json_string_value(json_object_get(json_array_get(man.warnings, i), "kind")),
			    json_string_value(json_object_get(json_array_get(man.warnings, i), "message")));
		if (clk.fitted)
			printf("# clock: model of %d ranks fitted in %.3f s, bound %.2f us\n", boot->size,
			       clk.sync_s, ng_clock_bound_us(&clk));
		else if (clk.mode != NG_SYNC_OFF)
			printf("# clock: no model (%s)\n", clk.why ? clk.why : "one rank");
		fflush(stdout);
	}

	struct ng_run r = {
	    .comm = comm,
	    .boot = boot,
	    .args = a,
	    .timer = &timer,
	    .sizes = p->sizes,
	    .nsizes = p->nsizes,
	    .count = p->time_s > 0 ? NG_TIME_SAMPLES : (size_t)p->count,
	    .time_s = p->time_s,
	    .interval_s = p->interval_s,
	    .ci_target = p->ci_target,
	    .max_time_s = p->max_time_s,
	    .warmup = (size_t)p->warmup,
	    .verify = ng_args_flag(a, "verify"),
	    .raw = ng_args_flag(a, "raw"),
	    .pct = p->pct,
	    .npct = p->npct,
	    .histogram = ng_args_flag(a, "histogram"),
	    .seed = (uint64_t)p->seed,
	    .timeout_s = p->timeout,
	    .cancel = ng_cancel_flag(),
	    .results = res,
	    .clock = &clk,
	};
	st = ng_boot_barrier(boot);
	if (st == NG_OK)
		st = p->pat->run(p->pat, &r);
	/* Once stopped by a signal, a failure that follows (a peer that left
	 * first) is the interruption's. */
	if (ng_cancel_requested() && st != NG_ERR_USAGE)
		st = NG_ERR_CANCELLED;
	if (st == NG_OK && ng_args_flag(a, "sync-check"))
		st = ng_clock_check(&clk, comm, boot, &timer);
	if (st == NG_ERR_CANCELLED && !ng_cancel_requested())
		st = NG_ERR_PEER_LOST;
	/* The validity warnings on stderr once the measurement is over (the
	 * table's head and the file have them from the start): a run its
	 * pattern refused for its options, or one interrupted, says that one
	 * line only. */
	if (boot->rank == 0 && st != NG_ERR_USAGE && st != NG_ERR_CANCELLED)
		print_warnings(man.warnings, ng_args_flag(a, "quiet-warnings"));
	/* A pattern refuses its options on every rank alike (pattern.h): all
	 * leave together, without an abort. */
	if (st == NG_ERR_USAGE)
		agreed = true;

	if (res) {
		if (ng_args_given(a, "percentiles"))
			ng_results_percentiles(res, p->pct, p->npct);
		module_block(res, comm);
		if (clk.checked)
			ng_results_block(res, "clock", ng_clock_json(&clk));
		if (timer.kind == NG_TIMER_TSC && st == NG_OK) {
			ng_timer_recheck(&timer);
			ng_results_widen(res, "timer_drift", 0.0, timer.drift_ppm * 1e-6);
			ng_results_block(res, "timer_check",
			                 json_pack("{s:f}", "drift_ppm", timer.drift_ppm));
		}
		if (ng_results_finish(res, st == NG_OK) && st == NG_OK)
			st = NG_ERR_IO;
		/* Options the pattern refused before measuring anything: no
		 * result file, one line (the pattern's). */
		if (st == NG_ERR_USAGE && p->output && ng_results_rows(res) == 0)
			(void)unlink(p->output);
		else if (st != NG_OK && p->output)
			fprintf(stderr, "ngauge: %zu measured size%s kept in '%s' (\"complete\": false)\n",
			        ng_results_rows(res), ng_results_rows(res) == 1 ? "" : "s", p->output);
		ng_results_free(res);
	}
	/* One line for the interruption: rank 0's, and the server's child's
	 * (on the server's terminal). */
	if (st == NG_ERR_CANCELLED && (boot->rank == 0 || strcmp(how, "--server/--client") == 0))
		ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
	code = status_exit(st);
	if (st == NG_OK)
		(void)ng_boot_barrier(boot);
out_close:
	/* After a failure a peer may be gone: where the launch would leave the
	 * others waiting (bootstrap.h, abort), end the job; do not finalize. */
	if (code != 0 && !agreed && boot->ops->abort) {
		fflush(stdout);
		boot->ops->abort(boot, code);
	}
	comm->ops->close(comm);
	ng_clock_free(&clk);
	ng_manifest_free(&man);
out_boot:
	if (agreed) {
		fflush(stderr);
		(void)ng_boot_barrier(boot);
	}
	if (code != 0 && !agreed && boot->ops->abort) {
		fflush(stdout);
		boot->ops->abort(boot, code);
	}
	boot->exit_code = code;
	boot->fini_limit_s = p->timeout;
	boot->ops->fini(boot);
	return code;
}

int ng_driver_main(int argc, char **argv)
{
	return main_with(argc, argv, NULL, NULL);
}

static int main_with(int argc, char **argv, struct ng_boot *preboot, const struct ng_server_limits *lim)
{
	struct ng_args a = {0};
	struct plan p = {0};
	char err[512], names[512];
	struct launched l;
	char verdict[512] = ""; /* the server's child: why the client is refused */
	int code = EXIT_USAGE;

	if (lim)
		ng_log_keep_first(verdict, sizeof(verdict));
	if (ng_cmdline_declare(&a)) {
		ng_error("out of memory");
		return 1;
	}
	/* Under mpiexec every rank parses the same command line: rank 0 says
	 * what is wrong with it (the bootstrap sets the prefix afterwards). */
	if (ng_launched_by_mpi() && ng_launcher_rank() > 0)
		ng_log_set_rank(NG_LOG_QUIET);
	if (ng_cmdline_parse(&a, argc, argv))
		goto out;
	if (ng_args_flag(&a, "help")) {
		ng_cmdline_help();
		code = 0;
		goto out;
	}
	if (ng_args_flag(&a, "version")) {
		printf("ngauge %s\n", NG_VERSION);
		code = 0;
		goto out;
	}
	if (ng_args_flag(&a, "man") || ng_args_given(&a, "completion")) {
		static const char *const subcommands[] = {"plot", "report", NULL};
		const struct ng_docgen d = {ng_driver_options, ng_cmdline_short, ng_cmdline_nshort,
		                            subcommands};
		if (ng_args_flag(&a, "man"))
			ng_docgen_man(stdout, &d);
		else
			ng_docgen_completion(stdout, &d, ng_args_str(&a, "completion"));
		code = fflush(stdout) == 0 ? 0 : 1;
		goto out;
	}
	if (ng_args_flag(&a, "list")) {
		ng_cmdline_list();
		code = 0;
		goto out;
	}
	if (ng_args_flag(&a, "timer-info")) {
		struct ng_timer t;
		if (ng_timer_init(&t, ng_args_str(&a, "timer"), NULL)) {
			code = 1;
			goto out;
		}
		ng_timer_print(&t);
		code = 0;
		goto out;
	}

	const char *mname = ng_args_str(&a, "module"), *pname = ng_args_str(&a, "pattern");
	p.mod = ng_module_find(mname);
	if (!p.mod) {
		for (size_t i = 0; ng_missing_modules[i].name; i++) {
			if (strcmp(ng_missing_modules[i].name, mname) == 0) {
				ng_error("module '%s' is not available: %s", mname,
				         ng_missing_modules[i].why);
				goto out;
			}
		}
		ng_cmdline_names(names, sizeof(names), 1);
		ng_error("unknown module '%s' (valid: %s)", mname, names);
		goto out;
	}
	p.pat = ng_pattern_find(pname);
	if (!p.pat) {
		ng_cmdline_names(names, sizeof(names), 0);
		ng_error("unknown pattern '%s' (valid: %s)", pname, names);
		goto out;
	}
	unsigned missing = p.pat->needs & ~p.mod->caps;
	if (missing) {
		unsigned bit = missing & -missing;
		ng_modules_offering(p.pat->needs, names, sizeof(names));
		ng_error("pattern '%s' needs %s, which module '%s' does not offer (%s%s)", p.pat->name,
		         ng_cap_name(bit), p.mod->name,
		         names[0] ? "modules that do: " : "no module of this build does", names);
		goto out;
	}
	/* Every option given is read by this run (readers.h). */
	const char *how = preboot || ng_args_flag(&a, "server") || ng_args_given(&a, "client") ? "tcp"
	                  : ng_launched_by_mpi() || (p.mod->caps & NG_CAP_MPI)                 ? "mpi"
	                                                                                       : "local";
	if (ng_args_check_read(&a, p.mod, p.pat, how, ng_driver_find_option, err, sizeof(err))) {
		ng_error("%s", err);
		goto out;
	}
	p.sizes_default = !ng_args_given(&a, "sizes");
	p.sizes_spec = !p.sizes_default ? ng_args_str(&a, "sizes")
	                                : (p.pat->default_sizes ? p.pat->default_sizes : "1-1M");
	if (ng_sizes_parse(p.sizes_spec, &p.sizes, &p.nsizes, err, sizeof(err))) {
		ng_error("%s", err);
		goto out;
	}
	/* Sizes given with -s must fit; the default list is cut once the
	 * instance's own limit is known (fit_default_sizes). */
	if (!p.sizes_default && max_size_why(&p, p.mod->max_msg, "", err, sizeof(err))) {
		ng_error("%s", err);
		goto out;
	}
	p.count = ng_args_int(&a, "count");
	p.warmup = ng_args_int(&a, "warmup");
	p.np = ng_args_int(&a, "np");
	p.seed = ng_args_int(&a, "seed");
	p.timeout = ng_args_double(&a, "timeout");
	p.npct = ng_stats_parse_percentiles(ng_args_str(&a, "percentiles"), p.pct, err, sizeof(err));
	if (p.npct == 0) {
		ng_error("--percentiles: %s", err);
		goto out;
	}
	if (p.count < 1 || p.count > 100000000) {
		ng_error("--count must be between 1 and 100000000, got %lld", p.count);
		goto out;
	}
	if (p.warmup < 0) {
		ng_error("--warmup must not be negative, got %lld", p.warmup);
		goto out;
	}
	if (!(p.timeout > 0)) {
		ng_error("--timeout must be positive");
		goto out;
	}
	/* Runs by time (patterns/sampler.h): a positive duration of at most a
	 * day, measured instead of --count; intervals only within one. */
	p.time_s = ng_args_double(&a, "time");
	p.interval_s = ng_args_double(&a, "interval");
	if (ng_args_given(&a, "time") && !(p.time_s > 0 && p.time_s <= 86400)) {
		ng_error("--time must be above 0 and at most 86400 seconds, got %s", ng_args_str(&a, "time"));
		goto out;
	}
	if (ng_args_given(&a, "time") && ng_args_given(&a, "count")) {
		ng_error("--time replaces --count: give one of them");
		goto out;
	}
	if (ng_args_given(&a, "time") && !p.pat->by_time) {
		ng_error("pattern '%s' does not measure by --time (patterns that do: pingpong, bw, bibw, "
		         "alltoall); use --count",
		         p.pat->name);
		goto out;
	}
	if (ng_args_given(&a, "interval") && !ng_args_given(&a, "time")) {
		ng_error("--interval applies to runs by --time only");
		goto out;
	}
	if (ng_args_given(&a, "interval") && !(p.interval_s >= 0.01 && p.interval_s <= 86400)) {
		ng_error("--interval must be between 0.01 and 86400 seconds, got %s",
		         ng_args_str(&a, "interval"));
		goto out;
	}
	/* Adaptive stopping (patterns/sampler.h): a target above 0 and below 1,
	 * a bound per size of at most a day; not with --time. */
	p.ci_target = ng_args_given(&a, "ci-target") ? ng_args_double(&a, "ci-target") : 0.0;
	p.max_time_s = ng_args_given(&a, "max-time") ? ng_args_double(&a, "max-time") : 10.0;
	if (ng_args_given(&a, "ci-target") && !(p.ci_target > 0 && p.ci_target < 1)) {
		ng_error("--ci-target must be above 0 and below 1 (a fraction of the median), got %s",
		         ng_args_str(&a, "ci-target"));
		goto out;
	}
	if (ng_args_given(&a, "max-time") && !(p.max_time_s > 0 && p.max_time_s <= 86400)) {
		ng_error("--max-time must be above 0 and at most 86400 seconds, got %s",
		         ng_args_str(&a, "max-time"));
		goto out;
	}
	if (ng_args_given(&a, "max-time") && !ng_args_given(&a, "ci-target")) {
		ng_error("--max-time applies to --ci-target only");
		goto out;
	}
	if (ng_args_given(&a, "ci-target") && ng_args_given(&a, "time")) {
		ng_error("--time and --ci-target exclude each other (--max-time bounds --ci-target)");
		goto out;
	}
	if (ng_args_given(&a, "ci-target") && !p.pat->by_time && !p.pat->adaptive) {
		ng_error(
		    "pattern '%s' does not sample adaptively by --ci-target (patterns that do: pingpong, bw, "
		    "bibw, alltoall, loggp, plogp)",
		    p.pat->name);
		goto out;
	}
	if (ng_args_str(&a, "pin")) {
		int cpus[256];
		if (pin_parse(ng_args_str(&a, "pin"), cpus, 256) < 0)
			goto out;
	}
	p.output = ng_args_str(&a, "output");
	if (p.output && !(preboot && preboot->rank != 0) && ng_results_probe(p.output, err, sizeof(err))) {
		ng_error("%s", err);
		goto out;
	}
	if (ng_args_flag(&a, "once") && !ng_args_flag(&a, "server")) {
		ng_error("--once applies to --server only");
		goto out;
	}
	if (ng_cancel_requested()) { /* a stop signal before anything ran */
		ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
		code = 128 + ng_cancel_signal();
		goto out;
	}
	/* The module's operations, from its plugin when they are in one: a
	 * missing plugin is found here, before anything runs. */
	if (ng_module_impl(p.mod, &p.mod))
		goto out;
	/* The server's child: the run within the server's limits (its
	 * --timeout bounds the client's), then the answer to the client. */
	if (lim) {
		double run_s = p.time_s > 0      ? p.time_s * (double)p.nsizes
		               : p.ci_target > 0 ? p.max_time_s * (double)p.nsizes
		                                 : 0.0;

		p.timeout = p.timeout < lim->timeout_s ? p.timeout : lim->timeout_s;
		if (ng_pair_check(lim, p.nsizes ? p.sizes[p.nsizes - 1] : 0, p.count, p.warmup, run_s,
		                  verdict, sizeof(verdict))) {
			ng_error("--server: refused the client at %s: %s", preboot->peer_addr, verdict);
			goto out;
		}
		ng_log_keep_first(NULL, 0);
		if (ng_boot_tcp_verdict(preboot, 0, NULL)) {
			code = 1;
			goto out_boot;
		}
	}
	code = launch(&p, &a, &argc, &argv, preboot, &l);
	preboot = NULL; /* launch() took it */
	if (l.boot)
		code = run(&p, &a, argc, argv, &l);
out:
	/* A client refused: it hears why in the first line said here. */
	if (preboot && lim) {
		ng_log_keep_first(NULL, 0);
		(void)ng_boot_tcp_verdict(preboot, code ? code : EXIT_USAGE,
		                          verdict[0] ? verdict : "nothing to run");
	}
out_boot:
	if (preboot)
		preboot->ops->fini(preboot);
	free(p.sizes);
	free(p.sizes_cut);
	ng_args_release(&a);
	return code;
}
