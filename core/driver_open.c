/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One rank's opening and closing (stages.h): --pin, the rank checks,
 * the timer, the module's instance and what every rank checks of it, the
 * oversubscription check, the manifest and the global clock; then, at the
 * end of the run, closing them in reverse and leaving together or ending
 * the job.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "sizes.h"
#include "stages.h"

/* Binds this rank to its CPU of the --pin list. */
static int pin_rank(const char *list, int rank)
{
	int cpus[256], n = ng_driver_pin_parse(list, cpus, 256);
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

/*
 * What every rank checks of its own opened instance: the capabilities the
 * pattern needs and the largest size.  Devices may differ between nodes, so
 * the ranks agree on the verdict: when any rank fails, the first failing rank
 * says why and all leave together (*agreed_p set: no abort, no rank left
 * waiting in the pattern).  Returns 0, EXIT_USAGE, or 1 when a peer was lost
 * while agreeing.
 */
static int check_instance(const struct ng_driver_plan *p, const struct ng_comm *comm, struct ng_boot *boot,
                          bool *agreed_p)
{
	unsigned lacking = p->pat->needs & ~comm->caps;
	char why[512] = "";
	double first;

	if (lacking)
		snprintf(why, sizeof(why), "pattern '%s' needs %s, which module '%s' does not offer here",
		         p->pat->name, ng_cap_name(lacking & -lacking), p->mod->name);
	else
		(void)ng_driver_max_size_why(p, comm->max_msg,
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
static int fit_default_sizes(struct ng_driver_plan *p, const struct ng_comm *comm, struct ng_boot *boot)
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

/* What the rank can check before it opens anything: --pin, the rank count,
 * an MPI launch where the module needs one, the timer.  0 or the exit
 * status. */
static int check_rank(struct ng_driver_rank *r, const struct ng_driver_plan *p, const struct ng_args *a)
{
	ng_status st;

	if (ng_args_str(a, "pin") && pin_rank(ng_args_str(a, "pin"), r->boot->rank))
		return EXIT_USAGE;
	if (ng_driver_check_ranks(p, r->boot->size, r->boot->rank, r->how)) {
		r->agreed = true;
		return EXIT_USAGE;
	}
	if ((p->mod->caps & NG_CAP_MPI) && !r->mpi) {
		ng_error("module '%s' needs an MPI launch (mpiexec/srun)", p->mod->name);
		r->agreed = true;
		return EXIT_USAGE;
	}
	if (r->timer0) {
		r->timer = *r->timer0;
		st = NG_OK;
	} else {
		st = ng_timer_init(&r->timer, ng_args_str(a, "timer"), r->wtime);
	}
	if (st == NG_OK)
		st = ng_timer_skew_env(&r->timer, r->boot->rank);
	return st ? ng_driver_exit(st) : 0;
}

/* The module's instance (r->comm once open).  0 or the exit status. */
static int open_module(struct ng_driver_rank *r, const struct ng_driver_plan *p, struct ng_args *a)
{
	struct ng_module_env menv = {.boot = r->boot,
	                             .args = a,
	                             .cancel = ng_cancel_flag(),
	                             .timeout_s = p->timeout,
	                             .connect_lazy = strcmp(ng_args_str(a, "connect"), "lazy") == 0};
	struct ng_comm *comm = NULL;
	ng_status st;

	if (p->mod->plugin) { /* its library may take the stop signals while it starts (plugin.h) */
		struct ng_plugin_guard g;
		ng_plugin_guard_enter(&g);
		st = p->ops->open(p->mod, &menv, &comm);
		ng_plugin_guard_leave(&g);
	} else {
		st = p->ops->open(p->mod, &menv, &comm);
	}
	if (st) {
		/* Stopped while it opened (a stop signal held back by the guard
		 * comes in as the guard ends): the interruption, said once. */
		if (ng_cancel_requested() && st != NG_ERR_USAGE) {
			st = NG_ERR_CANCELLED;
			if (r->boot->rank == 0 || strcmp(r->how, "--server/--client") == 0)
				ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
		}
		return ng_driver_exit(st);
	}
	comm->cancel = ng_cancel_flag();
	r->comm = comm;
	return 0;
}

/* A step after the open that failed with exit status @code: when a stop
 * signal ended it (a module's wait returns NG_ERR_CANCELLED to the clock
 * fit, the manifest's gathering, ...), the interruption, said once by rank 0
 * (or the server's child) as everywhere else, and its status 128 + the
 * signal; otherwise @code, the step having said why. */
static int stopped_or(const struct ng_driver_rank *r, int code)
{
	if (!ng_cancel_requested() || code == EXIT_USAGE)
		return code;
	if (r->boot->rank == 0 || strcmp(r->how, "--server/--client") == 0)
		ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
	return ng_driver_exit(NG_ERR_CANCELLED);
}

int ng_driver_open(struct ng_driver_rank *r, struct ng_driver_plan *p, struct ng_args *a,
                   const struct ng_driver_launched *l)
{
	int code;

	*r = (struct ng_driver_rank){.boot = l->boot,
	                             .how = l->how,
	                             .mpi_ver = l->mpi ? l->mpi_version : NULL,
	                             .wtime = l->wtime,
	                             .timer0 = l->timer_ready ? &l->timer : NULL,
	                             .mpi = l->mpi};
	if (r->boot->size > 1)
		ng_log_set_rank(r->boot->rank);
	code = check_rank(r, p, a);
	if (code == 0)
		code = open_module(r, p, a);
	if (code)
		return code;
	if (p->sizes_default && fit_default_sizes(p, r->comm, r->boot))
		return stopped_or(r, 1);
	/* An instance may offer less than its descriptor (a wrapper over a base
	 * module, a device without some feature). */
	code = check_instance(p, r->comm, r->boot, &r->agreed);
	if (code)
		return stopped_or(r, code);
	if (ng_env_oversub(r->boot, r->comm->spins, &r->over))
		return stopped_or(r, 1);
	struct ng_manifest_in min = {
	    .device = r->comm->device,
	    .mpi = r->mpi_ver,
	    .spins = r->comm->spins,
	    .pin_given = ng_args_str(a, "pin") != NULL,
	    .regmem = r->comm->pins,
	    .max_bytes = p->nsizes ? p->sizes[p->nsizes - 1] : 0,
	    .t = &r->timer,
	};
	if (ng_manifest_gather(r->boot, &min, &r->man))
		return stopped_or(r, 1);
	if (ng_clock_sync(&r->clk, (enum ng_sync_mode)ng_args_choice(a, "sync"), r->comm, r->boot, &r->timer))
		return stopped_or(r, 1);
	return 0;
}

int ng_driver_close(struct ng_driver_rank *r, const struct ng_driver_plan *p, int code)
{
	struct ng_boot *boot = r->boot;

	/* After a failure a peer may be gone: where the launch would leave the
	 * others waiting (bootstrap.h, abort), end the job; do not finalize. */
	if (r->comm) {
		if (code != 0 && !r->agreed && boot->ops->abort) {
			fflush(stdout);
			boot->ops->abort(boot, code);
		}
		r->comm->ops->close(r->comm);
		r->comm = NULL;
		ng_clock_free(&r->clk);
		ng_manifest_free(&r->man);
	}
	if (r->agreed) {
		fflush(stderr);
		(void)ng_boot_barrier(boot);
	}
	if (code != 0 && !r->agreed && boot->ops->abort) {
		fflush(stdout);
		boot->ops->abort(boot, code);
	}
	boot->exit_code = code;
	boot->fini_limit_s = p->timeout;
	boot->ops->fini(boot);
	return code;
}
