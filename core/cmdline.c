/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's command line as data and text: its option table, the short
 * options, --help and --list (contract: cmdline.h).
 */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmdline.h"
#include "readers.h"
#include "registry.h"

const struct ng_option ng_driver_options[] = {
    {.name = "module",
     .type = NG_OPT_STRING,
     .def = ng_module_default,
     .help = "communication module (-x); see --list",
     .metavar = "NAME"},
    {.name = "pattern",
     .type = NG_OPT_STRING,
     .def = ng_pattern_default,
     .help = "benchmark pattern (-p); see --list",
     .metavar = "NAME"},
    {.name = "list", .type = NG_OPT_FLAG, .help = "list modules, patterns and their options (-l)"},
    {.name = "sizes",
     .type = NG_OPT_STRING,
     .help = "message sizes (-s): 1-1M, 1-64K:x1.5, 1,8,4K, 1K-64K:+1K",
     .metavar = "SPEC",
     .list = true},
    {.name = "count",
     .type = NG_OPT_INT,
     .def = "1000",
     .help = "timed repetitions per size (-c)",
     .metavar = "N",
     .min = 1,
     .max = 100000000},
    {.name = "repeat",
     .type = NG_OPT_INT,
     .def = "1",
     .help = "the whole measurement N times, each run a new launch; one result file with every run and the "
             "spread between them (doc/compare.md)",
     .metavar = "N",
     .min = 1,
     .max = 1000},
    {.name = "warmup",
     .type = NG_OPT_INT,
     .def = "100",
     .help = "untimed repetitions before them (-w)",
     .metavar = "N"},
    {.name = "output",
     .type = NG_OPT_STRING,
     .help = "results file (-o); .json or .csv picks the format",
     .metavar = "FILE"},
    {.name = "np",
     .type = NG_OPT_INT,
     .def = "2",
     .help = "number of local ranks when not launched by MPI",
     .metavar = "N",
     .min = 1,
     .max = 1000000,
     .applies = "launch=local|mpi"},
    {.name = "timer",
     .type = NG_OPT_CHOICE,
     .help = "timer (default: tsc where invariant, else clock)",
     .choices = "tsc|clock|mpi"},
    {.name = "sync",
     .type = NG_OPT_CHOICE,
     .def = "auto",
     .help = "global clock: auto (a model unless the ranks share a clock), off, force (always a model; "
             "doc/clock.md)",
     .choices = "auto|off|force"},
    {.name = "sync-check", .type = NG_OPT_FLAG, .help = "re-measure the clock model at the end of the run"},
    {.name = "timer-info", .type = NG_OPT_FLAG, .help = "print the timer's resolution and overhead and exit"},
    {.name = "verify", .type = NG_OPT_FLAG, .help = "check every received payload byte"},
    {.name = "raw", .type = NG_OPT_FLAG, .help = "keep raw samples in the results file"},
    {.name = "percentiles",
     .type = NG_OPT_STRING,
     .def = "50,90,99,99.9,99.99",
     .help =
         "percentiles of every STATS, in the file (null where the count cannot support one) and, when given, "
         "the table",
     .metavar = "LIST",
     .list = true},
    {.name = "histogram", .type = NG_OPT_FLAG, .help = "write the histogram of every STATS in its row"},
    {.name = "time",
     .type = NG_OPT_DOUBLE,
     .help = "measure each size for SEC seconds instead of --count repetitions (memory stays bounded)",
     .metavar = "SEC"},
    {.name = "interval",
     .type = NG_OPT_DOUBLE,
     .help = "with --time: a line on stderr every SEC seconds (samples, median, p99, the interval's median)",
     .metavar = "SEC"},
    {.name = "ci-target",
     .type = NG_OPT_DOUBLE,
     .help = "sample each size until the 95% interval of its median lies within REL of it (e.g. 0.01), at "
             "least --count and at most --max-time",
     .metavar = "REL"},
    {.name = "max-time",
     .type = NG_OPT_DOUBLE,
     .help = "with --ci-target: seconds a size samples at most (default 10)",
     .metavar = "SEC"},
    {.name = "seed",
     .type = NG_OPT_INT,
     .def = "1",
     .help = "seed for random pairings and server choice",
     .metavar = "N",
     .max = LLONG_MAX},
    {.name = "server",
     .type = NG_OPT_FLAG,
     .help = "serve --client runs, one after another, until stopped (two hosts, no MPI)",
     .applies = "launch=tcp"},
    {.name = "once",
     .type = NG_OPT_FLAG,
     .help = "with --server: serve one client, then exit with its run's status",
     .applies = "launch=tcp"},
    {.name = "client",
     .type = NG_OPT_STRING,
     .help = "connect to a --server on HOST",
     .metavar = "HOST",
     .applies = "launch=tcp"},
    {.name = "port",
     .type = NG_OPT_INT,
     .def = "5217",
     .help = "bootstrap port of --server/--client",
     .metavar = "PORT",
     .min = 1,
     .max = 65535,
     .applies = "launch=tcp"},
    {.name = "bind",
     .type = NG_OPT_STRING,
     .help = "bootstrap address --server listens on (default: all)",
     .metavar = "ADDR",
     .applies = "launch=tcp"},
    {.name = "auth",
     .type = NG_OPT_STRING,
     .help = "key file (mode 0600) that --server and --client prove to each other before anything runs",
     .metavar = "FILE",
     .applies = "launch=tcp"},
    {.name = "allow",
     .type = NG_OPT_STRING,
     .help = "with --server: admit clients from these IPv4 networks only, e.g. 198.18.0.0/15",
     .metavar = "CIDR",
     .list = true,
     .applies = "launch=tcp"},
    {.name = "server-max-time",
     .type = NG_OPT_DOUBLE,
     .def = "3600",
     .help = "with --server: the longest run a client may ask for, in seconds; longer ones are stopped",
     .metavar = "SEC",
     .applies = "launch=tcp"},
    {.name = "server-max-size",
     .type = NG_OPT_SIZE,
     .def = "1G",
     .help = "with --server: the largest message a client may ask for",
     .metavar = "BYTES",
     .min = 1,
     .max = 1LL << 40,
     .applies = "launch=tcp"},
    {.name = "server-max-count",
     .type = NG_OPT_INT,
     .def = "10000000",
     .help = "with --server: the most repetitions (-c, -w) a client may ask for",
     .metavar = "N",
     .min = 1,
     .max = 100000000,
     .applies = "launch=tcp"},
    {.name = "pin",
     .type = NG_OPT_STRING,
     .help = "run rank r on CPU LIST[r mod length], e.g. 0,1 (default: unpinned)",
     .metavar = "LIST",
     .list = true},
    {.name = "timeout",
     .type = NG_OPT_DOUBLE,
     .def = "8",
     .help = "seconds after which a silent peer counts as lost; a rank waiting without progress for this "
             "+ 1.5 s + a call's expected time ends, saying where it stood (doc/validation.md)",
     .metavar = "SEC"},
    {.name = "connect",
     .type = NG_OPT_CHOICE,
     .def = "lazy",
     .help =
         "when connections are made: lazy (when a pattern first talks to a peer, in its warm-up; tcp, the "
         "verbs modules' queue pairs, the RDMA layer's over verbs), "
         "eager (every pair at start-up, outside every measurement)",
     .choices = "lazy|eager"},
    {.name = "verbose",
     .type = NG_OPT_FLAG,
     .help = "a line for each size a per-size note concerns (drift between the halves of its samples, "
             "alternating levels), not only the count after the table (-v)"},
    {.name = "quiet-warnings",
     .type = NG_OPT_FLAG,
     .help = "keep the validity warnings off stderr (they stay in the results)"},
    {.name = "help", .type = NG_OPT_FLAG, .help = "this help (-h)"},
    {.name = "version", .type = NG_OPT_FLAG, .help = "print the version (-V)"},
    {.name = "man", .type = NG_OPT_FLAG, .help = "print the man page ngauge(1) (roff) and exit"},
    {.name = "completion",
     .type = NG_OPT_CHOICE,
     .help = "print the shell completion script for SHELL and exit",
     .choices = "bash|zsh",
     .metavar = "SHELL"},
    {.name = NULL},
};

const struct ng_option *ng_driver_find_option(const char *name)
{
	for (const struct ng_option *o = ng_driver_options; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return ng_option_find(name);
}

const struct ng_short_option ng_cmdline_short[] = {
    {'x', "module"}, {'p', "pattern"}, {'l', "list"}, {'s', "sizes"},   {'c', "count"},
    {'w', "warmup"}, {'o', "output"},  {'h', "help"}, {'V', "version"}, {'v', "verbose"},
};

const size_t ng_cmdline_nshort = sizeof(ng_cmdline_short) / sizeof(ng_cmdline_short[0]);

/* ---- help and list ---- */

static char short_of(const char *name)
{
	for (size_t i = 0; i < sizeof(ng_cmdline_short) / sizeof(ng_cmdline_short[0]); i++)
		if (strcmp(ng_cmdline_short[i].name, name) == 0)
			return ng_cmdline_short[i].c;
	return 0;
}

static void print_option(FILE *f, const struct ng_option *t, bool core)
{
	char left[96], sc = core ? short_of(t->name) : 0;
	int n = sc ? snprintf(left, sizeof(left), "-%c, --%s", sc, t->name)
	           : snprintf(left, sizeof(left), "    --%s", t->name);

	if (t->type != NG_OPT_FLAG && n > 0 && (size_t)n < sizeof(left))
		snprintf(left + n, sizeof(left) - (size_t)n, " %s", ng_option_metavar(t));
	fprintf(f, "  %-34s %s", left, t->help);
	if (t->def && t->type != NG_OPT_FLAG)
		fprintf(f, " [%s]", t->def);
	fputc('\n', f);
}

/* The options of table @t. */
static void print_options(FILE *f, const struct ng_option *t, bool core)
{
	for (; t && t->name; t++)
		print_option(f, t, core);
}

/* The options of the tables of the NULL-terminated list @tables. */
static void print_tables(FILE *f, const struct ng_option *const *tables)
{
	for (; tables && *tables; tables++)
		print_options(f, *tables, false);
}

static void caps_string(unsigned caps, char *buf, size_t len)
{
	buf[0] = '\0';
	for (unsigned bit = 1; bit && bit <= caps; bit <<= 1) {
		if (!(caps & bit))
			continue;
		if (buf[0])
			strncat(buf, ", ", len - strlen(buf) - 1);
		strncat(buf, ng_cap_name(bit), len - strlen(buf) - 1);
	}
}

void ng_cmdline_help(void)
{
	printf("ngauge %s: network benchmarks (patterns) over interchangeable communication modules\n\n"
	       "usage: ngauge [options] -x MODULE -p PATTERN\n"
	       "       mpiexec -n N ngauge [options] -x MODULE -p PATTERN\n"
	       "       ngauge --server [options]   and   ngauge --client HOST [options]\n"
	       "       ngauge plot FILE... [-o OUT.pdf|.svg|.png|.tex] [--label NAME]...\n"
	       "       ngauge report FILE... [-o OUT.html]\n"
	       "       ngauge compare A.json... [-- B.json...] [options]   (ngauge compare --help)\n"
	       "       ngauge ab [options] -- ARGS_A -- ARGS_B   (ngauge ab --help)\n\n"
	       "options:\n",
	       NG_VERSION);
	print_options(stdout, ng_driver_options, true);
	printf(
	    "\nModule and pattern options are listed by --list; an option the chosen module and pattern do\n"
	    "not read is refused.  Integers are decimal (08 is 8, no 0x); byte counts take K, M, G.\n");
}

void ng_cmdline_list(void)
{
	char caps[256];

	printf("modules:\n");
	for (size_t i = 0; ng_modules[i]; i++) {
		const struct ng_module *m = ng_modules[i];
		caps_string(m->caps, caps, sizeof(caps));
		printf("  %-10s %s\n  %-10s (%s", m->name, m->desc, "", caps);
		if (m->max_msg)
			printf("; max message %zu bytes", m->max_msg);
		printf(")\n");
		print_tables(stdout, m->options);
		print_tables(stdout, m->reads);
	}
	for (size_t i = 0; ng_missing_modules[i].name; i++)
		printf("  %-10s not available: %s\n", ng_missing_modules[i].name, ng_missing_modules[i].why);
	printf("\npatterns:\n");
	for (size_t i = 0; ng_patterns[i]; i++) {
		const struct ng_pattern *p = ng_patterns[i];
		caps_string(p->needs, caps, sizeof(caps));
		printf("  %-10s %s\n  %-10s (needs: %s; ranks >= %d%s; default sizes %s)\n", p->name, p->desc,
		       "", caps[0] ? caps : "nothing special", p->min_ranks, p->even_ranks ? ", even" : "",
		       p->default_sizes ? p->default_sizes : "1-1M");
		print_options(stdout, p->options, false);
	}
}

void ng_cmdline_names(char *buf, size_t len, int modules)
{
	buf[0] = '\0';
	if (modules) {
		for (size_t i = 0; ng_modules[i]; i++) {
			strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
			strncat(buf, ng_modules[i]->name, len - strlen(buf) - 1);
		}
	} else {
		for (size_t i = 0; ng_patterns[i]; i++) {
			strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
			strncat(buf, ng_patterns[i]->name, len - strlen(buf) - 1);
		}
	}
}

int ng_cmdline_declare(struct ng_args *a)
{
	if (ng_args_declare(a, ng_driver_options, ""))
		return -1;
	for (size_t i = 0; ng_modules[i]; i++)
		if (ng_module_declare(a, ng_modules[i]))
			return -1;
	for (size_t i = 0; ng_patterns[i]; i++)
		if (ng_args_declare(a, ng_patterns[i]->options, ng_patterns[i]->name))
			return -1;
	return 0;
}

int ng_cmdline_parse(struct ng_args *a, int argc, char **argv)
{
	char err[512];

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *name = NULL, *val = NULL;
		char namebuf[128];
		struct ng_arg_ent *e;

		if (arg[0] == '-' && arg[1] == '-' && arg[2]) {
			const char *eq = strchr(arg + 2, '=');
			if (eq) {
				size_t n = (size_t)(eq - (arg + 2));
				if (n >= sizeof(namebuf))
					n = sizeof(namebuf) - 1;
				memcpy(namebuf, arg + 2, n);
				namebuf[n] = '\0';
				name = namebuf;
				val = eq + 1;
			} else {
				name = arg + 2;
			}
		} else if (arg[0] == '-' && arg[1] && arg[1] != '-') {
			for (size_t k = 0; k < ng_cmdline_nshort; k++)
				if (ng_cmdline_short[k].c == arg[1])
					name = ng_cmdline_short[k].name;
			if (!name) {
				ng_error("unknown option '%s' (see ngauge --help)", arg);
				return -1;
			}
			if (arg[2])
				val = arg + 2;
		} else {
			ng_error("unexpected argument '%s' (options start with - or --; see ngauge --help)",
			         arg);
			return -1;
		}
		e = ng_args_find(a, name);
		if (!e) {
			ng_error("unknown option '--%s' (see ngauge --help and ngauge --list)", name);
			return -1;
		}
		if (e->opt->type == NG_OPT_FLAG) {
			if (val) {
				ng_error("option '--%s' takes no value", name);
				return -1;
			}
			val = "1";
		} else if (!val) {
			if (i + 1 >= argc) {
				ng_error("option '--%s' needs a value (%s)", name, ng_option_metavar(e->opt));
				return -1;
			}
			val = argv[++i];
		}
		if (ng_args_set(a, e, val, err, sizeof(err))) {
			ng_error("%s", err);
			return -1;
		}
	}
	return 0;
}
