/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One rank's run (stages.h), once driver_open.c has opened it: rank
 * 0's result file and table head, the pattern's run, the checks after it,
 * the result file's end, and the exit status.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "results_priv.h"
#include "stages.h"
#include "watchdog.h"

/* The command line as the result file records it (argv[0] as "ngauge"). */
static void command_line(int argc, char **argv, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; i < argc; i++) {
		const char *w = i == 0 ? "ngauge" : argv[i];
		strncat(buf, i ? " " : "", len - strlen(buf) - 1);
		strncat(buf, w, len - strlen(buf) - 1);
	}
}

/* The parameters block: run settings and the options of the module and
 * pattern in use, with those it reads of another pattern (the driver-only
 * switches are left out). */
static json_t *parameters(const struct ng_driver_plan *p, const struct ng_args *a)
{
	static const char *const drop[] = {"list",   "help",    "version", "timer-info",
	                                   "module", "pattern", "man",     "completion"};
	json_t *params = ng_args_json(a, "");

	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		json_object_del(params, drop[i]);
	json_object_set_new(params, "sizes", json_string(p->sizes_spec));
	for (const struct ng_option *const *tab = p->mod->options; tab && *tab; tab++)
		ng_args_json_table(a, *tab, params);
	ng_args_json_table(a, p->pat->options, params);
	/* what it reads of another pattern's (bibw: bw-window; bw: rate, load) */
	ng_args_json_table(a, p->pat->reads, params);
	return params;
}

/* The result document's head (schema, module, env, timer, parameters...). */
static json_t *doc_head(struct ng_driver_rank *r, const struct ng_driver_plan *p, const struct ng_args *a,
                        const char *cmd)
{
	const struct ng_timer *t = &r->timer;
	struct ng_manifest *m = &r->man;
	json_t *env = ng_env_json(r->comm->device, r->mpi_ver);
	char started[64];
	json_t *params = parameters(p, a);

	json_object_set_new(env, "oversubscribed", json_boolean(r->over.over));
	if (r->over.over)
		json_object_set_new(env, "oversubscription",
		                    json_pack("{s:s,s:i,s:i}", "host", r->over.host, "spinning_ranks",
		                              r->over.ranks, "cores", r->over.cores));
	/* The manifest (manifest.h) moves into the document. */
	json_object_set_new(env, "hosts", m->hosts);
	json_object_set_new(env, "placement", json_null()); /* its place: results_open fills it */
	json_object_set_new(env, "versions", m->versions);
	m->hosts = m->versions = NULL;
	ng_iso_time(started, sizeof(started));
	return json_pack("{s:s,s:b,s:s,s:s,s:i,s:s,s:s,s:s,s:o,s:{s:s,s:f,s:f,s:b,s:f},s:o,s:O}", "schema",
	                 "ngauge-result/1", "complete", 0, "module", p->mod->name, "pattern", p->pat->name,
	                 "ranks", r->boot->size, "command", cmd, "started", started, "launch",
	                 r->boot->ops->name, "env", env, "timer", "name", t->name, "resolution_ns",
	                 t->resolution_ns, "overhead_ns", t->overhead_ns, "invariant_tsc", t->invariant_tsc,
	                 "tsc_ghz", t->tsc_ghz, "parameters", params, "warnings", m->warnings);
}

/* The validity warnings (manifest.h), a line each on stderr unless @quiet
 * or the table's head on the same stream said them (never twice). */
static void print_warnings(const json_t *w, bool quiet)
{
	if (ng_fd_shown_with(STDOUT_FILENO, STDERR_FILENO))
		return;
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
		/* what the module's block says bounds every time over it (core/module.h) */
		if (c->mod->bound_key)
			ng_results_widen(res, c->mod->bound_name,
			                 json_number_value(json_object_get(b, c->mod->bound_key)), 0.0);
		ng_results_block(res, c->mod->name, b);
	}
}

/* The table's head on stdout: the run, its validity warnings, the clock. */
static void print_head(const struct ng_driver_rank *r, const struct ng_driver_plan *p, const char *mark)
{
	const json_t *w = r->man.warnings;

	printf("# ngauge %s: pattern %s, module %s (%s), %d ranks (%s launch), timer %s (resolution "
	       "%.1f "
	       "ns, overhead %.1f ns)%s%s\n",
	       NG_VERSION, p->pat->name, p->mod->name, r->comm->device, r->boot->size, r->boot->ops->name,
	       r->timer.name, r->timer.resolution_ns, r->timer.overhead_ns, mark[0] ? "; " : "", mark);
	for (size_t i = 0; i < json_array_size(w); i++)
		printf("# warning (%s): %s\n",
		       json_string_value(json_object_get(json_array_get(w, i), "kind")),
		       json_string_value(json_object_get(json_array_get(w, i), "message")));
	if (r->clk.fitted)
		printf("# clock: model of %d ranks fitted in %.3f s, bound %.2f us\n", r->boot->size,
		       r->clk.sync_s, ng_clock_bound_us(&r->clk));
	else if (r->clk.mode != NG_SYNC_OFF)
		printf("# clock: no model (%s)\n", r->clk.why ? r->clk.why : "one rank");
	fflush(stdout);
}

/* Rank 0's result sink (r->res) and the table's head. */
static void results_open(struct ng_driver_rank *r, const struct ng_driver_plan *p, const struct ng_args *a,
                         int argc, char **argv)
{
	const struct ng_oversub *over = &r->over;
	char cmd[4096], mark[128] = "";
	json_t *doc;

	command_line(argc, argv, cmd, sizeof(cmd));
	if (over->over)
		ng_manifest_warn(
		    &r->man, "oversubscribed",
		    "%d busy-polling ranks share %d core%s of host %s: the times include "
		    "waiting for the CPU (results marked \"oversubscribed\"; use fewer ranks, or "
		    "a module's sleep/yield mode)",
		    over->ranks, over->cores, over->cores == 1 ? "" : "s", over->host);
	doc = doc_head(r, p, a, cmd);
	r->res = ng_results_new(doc, p->output, ng_args_flag(a, "raw"), p->pat->name);
	/* The placement, one element per rank, kept as text by the results
	 * (results.h), in the place doc_head left for it. */
	json_object_set_new(json_object_get(doc, "env"), "placement",
	                    ng_results_text_value(r->res, &r->man.ranks));
	if (ng_args_given(a, "percentiles"))
		ng_results_percentiles(r->res, p->pct, p->npct);
	ng_results_verbose(r->res, ng_args_flag(a, "verbose"));
	/* a difference of two reads: off by a tick and by one read */
	ng_results_systematic(r->res, "timer_resolution", r->timer.resolution_ns * 1e-3);
	ng_results_systematic(r->res, "timer_overhead", r->timer.overhead_ns * 1e-3);
	module_block(r->res, r->comm);
	if (r->clk.mode != NG_SYNC_OFF)
		ng_results_block(r->res, "clock", ng_clock_json(&r->clk));
	if (r->comm->ops->report_row)
		ng_results_row_hook(r->res, module_row, r->comm);
	if (over->over) {
		snprintf(mark, sizeof(mark), "OVERSUBSCRIBED: %d busy-polling ranks on %d core%s",
		         over->ranks, over->cores, over->cores == 1 ? "" : "s");
		ng_results_mark(r->res, mark);
	}
	print_head(r, p, mark);
}

/* The pattern's run on every rank, and the clock's check after it. */
static ng_status run_pattern(struct ng_driver_rank *r, const struct ng_driver_plan *p, struct ng_args *a)
{
	struct ng_run run = {
	    .comm = r->comm,
	    .boot = r->boot,
	    .args = a,
	    .timer = &r->timer,
	    .sizes = p->sizes,
	    .nsizes = p->nsizes,
	    .count = p->time_s > 0 ? NG_TIME_SAMPLES : (size_t)p->count,
	    .time_s = p->time_s,
	    .interval_s = p->interval_s,
	    .ci_target = p->ci_target,
	    .max_time_s = p->max_time_s,
	    .warmup = (size_t)p->warmup,
	    .count_given = ng_args_given(a, "count"),
	    .warmup_given = ng_args_given(a, "warmup"),
	    .sizes_given = ng_args_given(a, "sizes"),
	    .verify = ng_args_flag(a, "verify"),
	    .raw = ng_args_flag(a, "raw"),
	    .pct = p->pct,
	    .npct = p->npct,
	    .histogram = ng_args_flag(a, "histogram"),
	    .seed = (uint64_t)p->seed,
	    .timeout_s = p->timeout,
	    .cancel = ng_cancel_flag(),
	    .results = r->res,
	    .clock = &r->clk,
	};
	struct ng_watchdog *wd = NULL;
	ng_status st;

	/* From here every wait is marked, and bounded by the run's watchdog
	 * (watchdog.h). */
	atomic_store_explicit(&r->comm->where.pattern, p->pat->name, memory_order_relaxed);
	atomic_store_explicit(&r->comm->where.phase, "starting", memory_order_relaxed);
	r->boot->where = &r->comm->where;
	st = ng_watchdog_start(&wd, r->comm, p->timeout, r->res);
	if (st == NG_OK)
		st = ng_boot_barrier(r->boot);
	if (st == NG_OK)
		st = p->pat->run(p->pat, &run);
	ng_watchdog_stop(wd);
	r->boot->where = NULL;
	/* Once stopped by a signal, a failure that follows (a peer that left
	 * first) is the interruption's. */
	if (ng_cancel_requested() && st != NG_ERR_USAGE)
		st = NG_ERR_CANCELLED;
	if (st == NG_OK && ng_args_flag(a, "sync-check"))
		st = ng_clock_check(&r->clk, r->comm, r->boot, &r->timer);
	if (st == NG_ERR_CANCELLED && !ng_cancel_requested())
		st = NG_ERR_PEER_LOST;
	return st;
}

/* Rank 0's result file, finished: the blocks known at the end, the file
 * written for the last time (or removed when the pattern refused its
 * options before measuring anything).  Returns @st, or NG_ERR_IO when the
 * file of a good run could not be written. */
static ng_status results_close(struct ng_driver_rank *r, const struct ng_driver_plan *p,
                               const struct ng_args *a, ng_status st)
{
	struct ng_results *res = r->res;

	if (ng_args_given(a, "percentiles"))
		ng_results_percentiles(res, p->pct, p->npct);
	module_block(res, r->comm);
	if (r->clk.checked)
		ng_results_block(res, "clock", ng_clock_json(&r->clk));
	if (r->timer.kind == NG_TIMER_TSC && st == NG_OK) {
		ng_timer_recheck(&r->timer);
		ng_results_widen(res, "timer_drift", 0.0, r->timer.drift_ppm * 1e-6);
		ng_results_block(res, "timer_check", json_pack("{s:f}", "drift_ppm", r->timer.drift_ppm));
	}
	if (st != NG_OK)
		ng_results_stopped(res, ng_status_msg(st));
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
	r->res = NULL;
	return st;
}

/* The measurement of an opened rank: returns its exit status. */
static int measure(struct ng_driver_rank *r, const struct ng_driver_plan *p, struct ng_args *a, int argc,
                   char **argv)
{
	ng_status st;
	int code;

	if (r->boot->rank == 0)
		results_open(r, p, a, argc, argv);
	st = run_pattern(r, p, a);
	/* The validity warnings on stderr once the measurement is over (the
	 * table's head and the file have them from the start): a run its
	 * pattern refused for its options, or one interrupted, says that one
	 * line only. */
	if (r->boot->rank == 0 && st != NG_ERR_USAGE && st != NG_ERR_CANCELLED)
		print_warnings(r->man.warnings, ng_args_flag(a, "quiet-warnings"));
	/* A pattern refuses its options on every rank alike (pattern.h): all
	 * leave together, without an abort. */
	if (st == NG_ERR_USAGE)
		r->agreed = true;
	if (r->res)
		st = results_close(r, p, a, st);
	/* One line for the interruption: rank 0's, and the server's child's
	 * (on the server's terminal). */
	if (st == NG_ERR_CANCELLED && (r->boot->rank == 0 || strcmp(r->how, "--server/--client") == 0))
		ng_error("interrupted (%s)", ng_stop_signal_name(ng_cancel_signal()));
	code = ng_driver_exit(st);
	if (st == NG_OK)
		(void)ng_boot_barrier(r->boot);
	return code;
}

int ng_driver_run(struct ng_driver_plan *p, struct ng_args *a, int argc, char **argv,
                  const struct ng_driver_launched *l)
{
	struct ng_driver_rank r;
	int code = ng_driver_open(&r, p, a, l);

	if (code == 0)
		code = measure(&r, p, a, argc, argv);
	return ng_driver_close(&r, p, code);
}
