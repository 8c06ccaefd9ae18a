/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --repeat N (stages.h): the measurement as N independent runs, each a new
 * launch of this program with the same command line (without --repeat and
 * -o): new ranks (--np), a new mpiexec (a module that needs MPI relaunches
 * itself), a new open of the module, a new timer calibration.  The runs'
 * files are merged into one: the first run's document, with every run's
 * rows in "repeat.blocks" and the spread of the runs' medians beside the
 * runs' own intervals in "repeat.between_runs" (doc/result-format.md).
 * Where another launcher started this process (mpiexec, srun, a
 * --server/--client pair) it cannot start it again: refused (exit 2).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmdline.h"
#include "launch.h"
#include "safefile.h"
#include "stages.h"

/* The keys that, with the size, name a row (as ngauge compare pairs them). */
static const char *const ng_repeat_ident[] = {"test", "sync", "algorithm", "mode", "side", NULL};

/* Whether this process may start the runs itself: not under a launcher
 * that started it (which cannot be asked for another launch). */
static bool repeat_refused(const struct ng_args *a)
{
	const char *who = ng_args_flag(a, "server")    ? "--server"
	                  : ng_args_given(a, "client") ? "--client"
	                  : ng_launched_by_mpi()       ? "mpiexec"
	                  : ng_slurm_step_tasks() > 1  ? "srun"
	                                               : NULL;

	if (!who)
		return false;
	ng_error("--repeat: %s started this run and cannot be asked for new launches: start ngauge without "
	         "it (a module that needs MPI relaunches itself under mpiexec for every run), or run it N "
	         "times and compare the files (ngauge compare A1.json A2.json -- B1.json B2.json)",
	         who);
	return true;
}

/* The command line of one run: @self, the user's options without --repeat
 * and -o (and their values), then -o @out.  NULL-terminated, malloc'ed (the
 * strings are borrowed). */
static char **run_argv(const struct ng_args *a, int argc, char **argv, char *self, char *out)
{
	static char dash_o[] = "-o";
	char **v = calloc((size_t)argc + 4, sizeof(*v));
	int k = 0;

	if (!v)
		return NULL;
	v[k++] = self;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *name = NULL;
		char nb[128];
		bool inline_val = false;
		const struct ng_arg_ent *e;

		if (arg[0] == '-' && arg[1] == '-') {
			const char *eq = strchr(arg + 2, '=');
			size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);

			snprintf(nb, sizeof(nb), "%.*s", (int)(n < sizeof(nb) ? n : sizeof(nb) - 1), arg + 2);
			name = nb;
			inline_val = eq != NULL;
		} else if (arg[0] == '-') {
			for (size_t s = 0; s < ng_cmdline_nshort; s++)
				if (ng_cmdline_short[s].c == arg[1])
					name = ng_cmdline_short[s].name;
			inline_val = arg[1] && arg[2];
		}
		e = name ? ng_args_find(a, name) : NULL;
		bool takes = e && e->opt->type != NG_OPT_FLAG && !inline_val && i + 1 < argc;
		bool drop = name && (strcmp(name, "repeat") == 0 || strcmp(name, "output") == 0);

		if (!drop) {
			v[k++] = argv[i];
			if (takes)
				v[k++] = argv[i + 1];
		}
		if (takes)
			i++;
	}
	v[k++] = dash_o;
	v[k++] = out;
	v[k] = NULL;
	return v;
}

/* Runs @v to its end, passing on a stop signal this process gets alone;
 * returns its exit status (128 + the signal that ended it). */
static int run_child(char **v)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ng_error("--repeat: fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execv(v[0], v);
		ng_error("--repeat: cannot run %s: %s", v[0], strerror(errno));
		_exit(1);
	}
	return ng_cancel_wait_child(pid, "--repeat");
}

/* The row's identity: its size and the identity keys it has. */
static void row_id(const json_t *row, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "%.17g", json_number_value(json_object_get(row, "size")));

	for (size_t k = 0; ng_repeat_ident[k] && o < len; k++) {
		const json_t *v = json_object_get(row, ng_repeat_ident[k]);

		if (json_is_string(v))
			o += (size_t)snprintf(buf + o, len - o, " %s=%s", ng_repeat_ident[k],
			                      json_string_value(v));
	}
}

/* The row's first statistics key (the table's main column), or NULL. */
static const char *first_stats(const json_t *row)
{
	const char *k;
	const json_t *v;

	json_object_foreach((json_t *)row, k, v)
	{
		if (json_is_object(v) && json_is_number(json_object_get(v, "median")))
			return k;
	}
	return NULL;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static double median_sorted(const double *x, size_t n)
{
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

/* One entry of "between_runs": @key of the rows of every run with @row's identity. */
static json_t *between(const json_t *row, const char *key, json_t *const *docs, size_t n)
{
	double *m = calloc(n, sizeof(*m)), *hw = calloc(n, sizeof(*hw)), sum = 0, ss = 0, md;
	json_t *e = json_object(), *meds = json_array();
	char id[200], other[200];
	size_t nm = 0, nh = 0;

	if (!m || !hw || !e || !meds) {
		free(m);
		free(hw);
		json_decref(e);
		json_decref(meds);
		return NULL;
	}
	row_id(row, id, sizeof(id));
	for (size_t r = 0; r < n; r++) {
		const json_t *rows = json_object_get(docs[r], "results"), *x, *hit = NULL;
		size_t i;

		json_array_foreach(rows, i, x)
		{
			row_id(x, other, sizeof(other));
			if (strcmp(id, other) == 0) {
				hit = json_object_get(x, key);
				break;
			}
		}
		double med = json_number_value(json_object_get(hit, "median"));
		const json_t *ci = json_object_get(hit, "ci95");

		json_array_append_new(meds, hit ? json_real(med) : json_null());
		if (!hit || !isfinite(med))
			continue;
		m[nm++] = med;
		if (json_array_size(ci) == 2 && med > 0)
			hw[nh++] = 100.0 *
			           (json_number_value(json_array_get(ci, 1)) -
			            json_number_value(json_array_get(ci, 0))) /
			           (2.0 * med);
	}
	json_object_set_new(e, "size", json_copy(json_object_get(row, "size")));
	for (size_t k = 0; ng_repeat_ident[k]; k++)
		if (json_is_string(json_object_get(row, ng_repeat_ident[k])))
			json_object_set(e, ng_repeat_ident[k], json_object_get(row, ng_repeat_ident[k]));
	json_object_set_new(e, "key", json_string(key));
	json_object_set_new(e, "runs", json_integer((json_int_t)nm));
	json_object_set_new(e, "medians", meds);
	for (size_t i = 0; i < nm; i++)
		sum += m[i];
	qsort(m, nm, sizeof(*m), cmp_double);
	qsort(hw, nh, sizeof(*hw), cmp_double);
	md = nm ? median_sorted(m, nm) : NAN;
	for (size_t i = 0; i < nm; i++)
		ss += (m[i] - sum / (double)nm) * (m[i] - sum / (double)nm);
	json_object_set_new(e, "median", nm ? json_real(md) : json_null());
	json_object_set_new(e, "min", nm ? json_real(m[0]) : json_null());
	json_object_set_new(e, "max", nm ? json_real(m[nm - 1]) : json_null());
	json_object_set_new(e, "spread_pct",
	                    nm > 1 && md > 0 ? json_real(100.0 * (m[nm - 1] - m[0]) / md) : json_null());
	json_object_set_new(e, "cv_pct",
	                    nm > 1 && sum > 0
	                        ? json_real(100.0 * sqrt(ss / (double)(nm - 1)) / (sum / (double)nm))
	                        : json_null());
	json_object_set_new(e, "within_ci_pct", nh ? json_real(median_sorted(hw, nh)) : json_null());
	free(m);
	free(hw);
	return e;
}

/* The merged document of the @n runs' @docs (n >= 1), or NULL. */
static json_t *merge(json_t *const *docs, size_t n, long long want, const char *cmd, const char *output)
{
	static const char *const keep[] = {"started",  "finished", "complete", "stopped",
	                                   "warnings", "results",  NULL};
	json_t *doc = json_deep_copy(docs[0]), *blocks = json_array(), *spread = json_array(), *row;
	const json_t *params;
	bool complete = (long long)n == want;
	size_t i;

	if (!doc || !blocks || !spread) {
		json_decref(doc);
		json_decref(blocks);
		json_decref(spread);
		return NULL;
	}
	for (size_t r = 0; r < n; r++) {
		json_t *b = json_pack("{s:I}", "run", (json_int_t)(r + 1));

		for (size_t k = 0; keep[k]; k++)
			if (json_object_get(docs[r], keep[k]))
				json_object_set(b, keep[k], json_object_get(docs[r], keep[k]));
		complete = complete && json_is_true(json_object_get(docs[r], "complete"));
		json_array_append_new(blocks, b);
	}
	json_array_foreach(json_object_get(doc, "results"), i, row)
	{
		const char *key = first_stats(row);
		json_t *e = key ? between(row, key, docs, n) : NULL;

		if (e)
			json_array_append_new(spread, e);
	}
	json_object_set_new(doc, "complete", json_boolean(complete));
	json_object_set_new(doc, "command", json_string(cmd));
	params = json_object_get(doc, "parameters");
	if (json_is_object(params)) {
		json_object_set_new((json_t *)params, "repeat", json_integer((json_int_t)want));
		json_object_set_new((json_t *)params, "output", output ? json_string(output) : json_null());
	}
	json_object_set_new(doc, "repeat",
	                    json_pack("{s:I,s:I,s:s,s:o,s:o}", "runs", (json_int_t)want, "completed",
	                              (json_int_t)n, "how", "launch", "blocks", blocks, "between_runs",
	                              spread));
	return doc;
}

/* The table of the spread between runs, beside the runs' own intervals. */
static void print_spread(const json_t *doc)
{
	const json_t *sp = json_object_get(json_object_get(doc, "repeat"), "between_runs"), *e;
	size_t i;

	printf("# between runs: %lld runs, each a new launch; the within-run ci95 is the median of the runs' "
	       "half-widths\n",
	       (long long)json_integer_value(json_object_get(json_object_get(doc, "repeat"), "completed")));
	printf("#%9s %-16s %-16s %14s %16s %12s %10s\n", "size", "row", "measure", "median of runs",
	       "within ci95 +-%", "spread %", "cv %");
	json_array_foreach(sp, i, e)
	{
		char id[200] = "";
		size_t o = 0;

		for (size_t k = 0; ng_repeat_ident[k] && o < sizeof(id); k++)
			if (json_is_string(json_object_get(e, ng_repeat_ident[k])))
				o += (size_t)snprintf(
				    id + o, sizeof(id) - o, "%s%s", o ? "," : "",
				    json_string_value(json_object_get(e, ng_repeat_ident[k])));
		printf("%10.17g %-16s %-16s %14.5g %16.3g %12.3g %10.3g\n",
		       json_number_value(json_object_get(e, "size")), id[0] ? id : "-",
		       json_string_value(json_object_get(e, "key")),
		       json_number_value(json_object_get(e, "median")),
		       json_number_value(json_object_get(e, "within_ci_pct")),
		       json_number_value(json_object_get(e, "spread_pct")),
		       json_number_value(json_object_get(e, "cv_pct")));
	}
	fflush(stdout);
}

static int dump_doc(FILE *f, const void *doc)
{
	return json_dumpf(doc, f, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
}

static int write_doc(const json_t *doc, const char *out)
{
	if (ng_safefile_write(out, dump_doc, doc) == 0)
		return 0;
	ng_error("--repeat: %s: cannot write: %s", out, strerror(errno));
	return 1;
}

/* The command line as the result file records it (argv[0] as "ngauge"). */
static void command_line(int argc, char **argv, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; i < argc; i++) {
		strncat(buf, i ? " " : "", len - strlen(buf) - 1);
		strncat(buf, i ? argv[i] : "ngauge", len - strlen(buf) - 1);
	}
}

int ng_driver_repeat(const struct ng_driver_plan *p, const struct ng_args *a, int argc, char **argv)
{
	long long n = ng_args_int(a, "repeat");
	const char *tmpdir = getenv("TMPDIR");
	char self[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32], cmd[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	json_t **docs = calloc((size_t)n, sizeof(*docs)), *doc = NULL;
	size_t done = 0;
	int code = 0;

	if (!docs) {
		ng_error("out of memory");
		return 1;
	}
	if (repeat_refused(a)) {
		free(docs);
		return EXIT_USAGE;
	}
	if (p->output && (strlen(p->output) < 5 || strcmp(p->output + strlen(p->output) - 5, ".json") != 0)) {
		ng_error("--repeat: -o %s: the runs go into one JSON file (.json)", p->output);
		free(docs);
		return EXIT_USAGE;
	}
	snprintf(dir, sizeof(dir), "%s/ngauge-repeat.XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
	if (sl <= 0 || !mkdtemp(dir)) {
		ng_error("--repeat: cannot make a directory for the runs' files (%s): %s", dir,
		         strerror(errno));
		free(docs);
		return 1;
	}
	self[sl] = '\0';
	for (long long k = 1; k <= n && code == 0; k++) {
		char **v;
		json_error_t jerr;

		snprintf(path, sizeof(path), "%s/run-%lld.json", dir, k);
		v = run_argv(a, argc, argv, self, path);
		if (!v) {
			ng_error("out of memory");
			code = 1;
			break;
		}
		printf("# run %lld of %lld\n", k, n);
		code = run_child(v);
		free(v);
		docs[done] = json_load_file(path, 0, &jerr);
		if (docs[done] && json_is_array(json_object_get(docs[done], "results")))
			done++;
		else
			json_decref(docs[done]);
		(void)unlink(path);
		if (code == 0 && ng_cancel_requested())
			code = 128 + ng_cancel_signal();
	}
	(void)rmdir(dir);
	if (done) {
		command_line(argc, argv, cmd, sizeof(cmd));
		doc = merge(docs, done, n, cmd, p->output);
		if (!doc) {
			ng_error("out of memory");
			code = code ? code : 1;
		} else {
			print_spread(doc);
			if (p->output && write_doc(doc, p->output) != 0 && code == 0)
				code = 1;
		}
	}
	if (code && p->output && done)
		fprintf(stderr, "ngauge: --repeat: %zu of %lld runs kept in '%s'\n", done, n, p->output);
	json_decref(doc);
	for (size_t i = 0; i < done; i++)
		json_decref(docs[i]);
	free(docs);
	return code;
}
