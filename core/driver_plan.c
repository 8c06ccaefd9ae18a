/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's plan (stages.h): what a parsed command line asks for
 * and every check that can be made before a rank exists.  The module and
 * the pattern, their capabilities, who reads each option given, the
 * sizes, the counts, runs by time and adaptive stopping, --pin, the
 * results file, the module's plugin.  Also the checks the launch and the
 * ranks repeat against the plan: rank counts, the largest message.
 *
 * The option table (cmdline.c) refuses what it can express while the
 * command line is parsed: the ranges of --count, --warmup, --np, --seed
 * (.min, .max), the choices, and where an option applies (.applies).
 * What is checked here is what the table cannot say: ranges of the
 * floating-point options, options that exclude or need each other, and
 * what the chosen pattern accepts.
 */
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "launch.h"
#include "plugin.h"
#include "readers.h"
#include "registry.h"
#include "results_priv.h"
#include "sizes.h"
#include "stages.h"

int ng_driver_check_ranks(const struct ng_driver_plan *p, int size, int rank, const char *how)
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

int ng_driver_max_size_why(const struct ng_driver_plan *p, size_t max, const char *what, char *why,
                           size_t len)
{
	if (max && p->nsizes && p->sizes[p->nsizes - 1] > max) {
		snprintf(why, len, "message size %zu is above the maximum of module '%s' (%zu bytes%s)",
		         p->sizes[p->nsizes - 1], p->mod->name, max, what);
		return -1;
	}
	return 0;
}

int ng_driver_pin_parse(const char *list, int *cpus, int max)
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

/*
 * The names of this build's patterns that measure by --time, then, with
 * @adaptive, those that sample adaptively in loops of their own (struct
 * ng_pattern: by_time, adaptive), ", " separated into @buf: the registry
 * says which, never a list of names here.
 */
static void patterns_by_time(bool adaptive, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int pass = 0; pass < (adaptive ? 2 : 1); pass++) {
		for (size_t i = 0; ng_patterns[i]; i++) {
			const struct ng_pattern *q = ng_patterns[i];

			if (pass == 0 ? !q->by_time : (!q->adaptive || q->by_time))
				continue;
			strncat(buf, buf[0] ? ", " : "", len - strlen(buf) - 1);
			strncat(buf, q->name, len - strlen(buf) - 1);
		}
	}
}

/* The module and the pattern the command line names, and whether the
 * module offers what the pattern needs. */
static int pick(struct ng_driver_plan *p, const struct ng_args *a)
{
	const char *mname = ng_args_str(a, "module"), *pname = ng_args_str(a, "pattern");
	char names[512];
	unsigned missing;

	p->mod = ng_module_find(mname);
	if (!p->mod) {
		for (size_t i = 0; ng_missing_modules[i].name; i++) {
			if (strcmp(ng_missing_modules[i].name, mname) == 0) {
				ng_error("module '%s' is not available: %s", mname,
				         ng_missing_modules[i].why);
				return -1;
			}
		}
		ng_cmdline_names(names, sizeof(names), 1);
		ng_error("unknown module '%s' (valid: %s)", mname, names);
		return -1;
	}
	p->pat = ng_pattern_find(pname);
	if (!p->pat) {
		ng_cmdline_names(names, sizeof(names), 0);
		ng_error("unknown pattern '%s' (valid: %s)", pname, names);
		return -1;
	}
	missing = p->pat->needs & ~p->mod->caps;
	if (missing) {
		unsigned bit = missing & -missing;
		ng_modules_offering(p->pat->needs, names, sizeof(names));
		ng_error("pattern '%s' needs %s, which module '%s' does not offer (%s%s)", p->pat->name,
		         ng_cap_name(bit), p->mod->name,
		         names[0] ? "modules that do: " : "no module of this build does", names);
		return -1;
	}
	return 0;
}

/* Every option given is read by this run (readers.h), under the launch it
 * will have. */
static int check_read(const struct ng_driver_plan *p, const struct ng_args *a, const struct ng_boot *preboot)
{
	char err[512];
	const char *how = preboot || ng_args_flag(a, "server") || ng_args_given(a, "client") ? "tcp"
	                  : ng_launched_by_mpi() || (p->mod->caps & NG_CAP_MPI)              ? "mpi"
	                                                                                     : "local";

	if (ng_args_check_read(a, p->mod, p->pat, how, ng_driver_find_option, err, sizeof(err))) {
		ng_error("%s", err);
		return -1;
	}
	return 0;
}

/* The sizes: -s, else the pattern's default list. */
static int read_sizes(struct ng_driver_plan *p, const struct ng_args *a)
{
	char err[512];

	p->sizes_default = !ng_args_given(a, "sizes");
	p->sizes_spec = !p->sizes_default ? ng_args_str(a, "sizes")
	                                  : (p->pat->default_sizes ? p->pat->default_sizes : "1-1M");
	if (ng_sizes_parse(p->sizes_spec, &p->sizes, &p->nsizes, err, sizeof(err))) {
		ng_error("%s", err);
		return -1;
	}
	/* Sizes given with -s must fit; the default list is cut once the
	 * instance's own limit is known (driver_open.c). */
	if (!p->sizes_default && ng_driver_max_size_why(p, p->mod->max_msg, "", err, sizeof(err))) {
		ng_error("%s", err);
		return -1;
	}
	return 0;
}

/*
 * The counts, the seed, the timeout, the percentiles.  The ranges of -c,
 * -w and --np are their table's (.min, .max, or the type's 0 ..
 * 2147483647), refused with the table's message while parsing; --timeout
 * is a floating-point number, which a table gives no range: checked here.
 */
static int read_numbers(struct ng_driver_plan *p, const struct ng_args *a)
{
	char err[512];

	p->count = ng_args_int(a, "count");
	p->warmup = ng_args_int(a, "warmup");
	p->np = ng_args_int(a, "np");
	p->seed = ng_args_int(a, "seed");
	p->timeout = ng_args_double(a, "timeout");
	p->npct = ng_stats_parse_percentiles(ng_args_str(a, "percentiles"), p->pct, err, sizeof(err));
	if (p->npct == 0) {
		ng_error("--percentiles: %s", err);
		return -1;
	}
	if (!(p->timeout > 0)) {
		ng_error("--timeout must be positive");
		return -1;
	}
	return 0;
}

/*
 * Runs by time (patterns/engine/sampler.h): a positive duration of at most a day,
 * measured instead of --count; intervals only within one.  The ranges are
 * of floating-point options, which a table gives none (options.h), and
 * --interval's condition is on a number, which .applies cannot name: both
 * checked here, with messages of their own.
 */
static int read_time(struct ng_driver_plan *p, const struct ng_args *a)
{
	char names[512];

	p->time_s = ng_args_double(a, "time");
	p->interval_s = ng_args_double(a, "interval");
	if (ng_args_given(a, "time") && !(p->time_s > 0 && p->time_s <= 86400)) {
		ng_error("--time must be above 0 and at most 86400 seconds, got %s", ng_args_str(a, "time"));
		return -1;
	}
	if (ng_args_given(a, "time") && ng_args_given(a, "count")) {
		ng_error("--time replaces --count: give one of them");
		return -1;
	}
	if (ng_args_given(a, "time") && !p->pat->by_time) {
		patterns_by_time(false, names, sizeof(names));
		ng_error("pattern '%s' does not measure by --time (patterns that do: %s); use --count",
		         p->pat->name, names);
		return -1;
	}
	if (ng_args_given(a, "interval") && !ng_args_given(a, "time")) {
		ng_error("--interval applies to runs by --time only");
		return -1;
	}
	if (ng_args_given(a, "interval") && !(p->interval_s >= 0.01 && p->interval_s <= 86400)) {
		ng_error("--interval must be between 0.01 and 86400 seconds, got %s",
		         ng_args_str(a, "interval"));
		return -1;
	}
	return 0;
}

/*
 * Adaptive stopping (patterns/engine/sampler.h): a target above 0 and below 1, a
 * bound per size of at most a day; not with --time.  As for --time: ranges
 * of floating-point options and a condition on a number, checked here.
 */
static int read_ci(struct ng_driver_plan *p, const struct ng_args *a)
{
	char names[512];

	p->ci_target = ng_args_given(a, "ci-target") ? ng_args_double(a, "ci-target") : 0.0;
	p->max_time_s = ng_args_given(a, "max-time") ? ng_args_double(a, "max-time") : 10.0;
	if (ng_args_given(a, "ci-target") && !(p->ci_target > 0 && p->ci_target < 1)) {
		ng_error("--ci-target must be above 0 and below 1 (a fraction of the median), got %s",
		         ng_args_str(a, "ci-target"));
		return -1;
	}
	if (ng_args_given(a, "max-time") && !(p->max_time_s > 0 && p->max_time_s <= 86400)) {
		ng_error("--max-time must be above 0 and at most 86400 seconds, got %s",
		         ng_args_str(a, "max-time"));
		return -1;
	}
	if (ng_args_given(a, "max-time") && !ng_args_given(a, "ci-target")) {
		ng_error("--max-time applies to --ci-target only");
		return -1;
	}
	if (ng_args_given(a, "ci-target") && ng_args_given(a, "time")) {
		ng_error("--time and --ci-target exclude each other (--max-time bounds --ci-target)");
		return -1;
	}
	if (ng_args_given(a, "ci-target") && !p->pat->by_time && !p->pat->adaptive) {
		patterns_by_time(true, names, sizeof(names));
		ng_error("pattern '%s' does not sample adaptively by --ci-target (patterns that do: %s)",
		         p->pat->name, names);
		return -1;
	}
	return 0;
}

/*
 * --pin's list, the results file (probed where it will be written: not on
 * the server's side of a pair), and --once, which --server alone reads: its
 * .applies says "launch=tcp", which --client satisfies too, so the flag
 * it needs is checked here.
 */
static int read_rest(struct ng_driver_plan *p, const struct ng_args *a, const struct ng_boot *preboot)
{
	char err[512];

	if (ng_args_str(a, "pin")) {
		int cpus[256];
		if (ng_driver_pin_parse(ng_args_str(a, "pin"), cpus, 256) < 0)
			return -1;
	}
	p->output = ng_args_str(a, "output");
	if (p->output && !(preboot && preboot->rank != 0) && ng_results_probe(p->output, err, sizeof(err))) {
		ng_error("%s", err);
		return -1;
	}
	if (ng_args_flag(a, "once") && !ng_args_flag(a, "server")) {
		ng_error("--once applies to --server only");
		return -1;
	}
	return 0;
}

int ng_driver_plan(struct ng_driver_plan *p, const struct ng_args *a, const struct ng_boot *preboot)
{
	if (pick(p, a) || check_read(p, a, preboot) || read_sizes(p, a) || read_numbers(p, a) ||
	    read_time(p, a) || read_ci(p, a) || read_rest(p, a, preboot))
		return EXIT_USAGE;
	if (ng_cancel_requested()) { /* a stop signal before anything ran */
		ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
		return 128 + ng_cancel_signal();
	}
	/* The module's operations, from its plugin when they are in one: a
	 * missing plugin is found here, before anything runs. */
	if (ng_module_impl(p->mod, &p->ops))
		return EXIT_USAGE;
	return 0;
}

void ng_driver_plan_free(struct ng_driver_plan *p)
{
	free(p->sizes);
	free(p->sizes_cut);
	p->sizes = NULL;
	p->sizes_cut = NULL;
}
