/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command line: one input is an argv, one argument a line.  The options
 * are declared as the driver declares them (its own table, every module's
 * and every pattern's: core/registry.h) and the arguments parsed as the
 * driver's parse_cmdline does (static in core/driver.c: its loop is copied
 * here, over the public ng_args_find and ng_args_set, with the short options
 * of core/cmdline.h).  A command line that parses is then checked and read
 * as the driver does before it launches anything: the module and pattern,
 * who reads each option (ng_args_check_read under each launch), the size
 * specification (ng_sizes_parse, ng_sizes_cap, and ng_sizes_format, which
 * must parse back to the same list), --percentiles, the typed getters of
 * every option, and the parameters blocks (ng_args_json).  Nothing is
 * launched, written or connected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "args.h"
#include "cmdline.h"
#include "driver.h"
#include "fuzz.h"
#include "readers.h"
#include "registry.h"
#include "sizes.h"
#include "status.h"

#define NG_FUZZ_MAXARGS 64

/* The size specification, as the driver reads it, and its text. */
static void ng_fuzz_sizes(const char *spec, size_t max)
{
	size_t *sizes, *back, n, nback, i;
	char err[512], *text;

	if (ng_sizes_parse(spec, &sizes, &n, err, sizeof(err)))
		return;
	for (i = 1; i < n; i++)
		if (sizes[i - 1] >= sizes[i])
			abort(); /* ascending, no repeats (sizes.h) */
	(void)ng_sizes_cap(sizes, &n, max);
	text = ng_sizes_format(sizes, n);
	if (!text)
		abort();
	if (ng_sizes_parse(text, &back, &nback, err, sizeof(err)))
		abort(); /* its text parses back (sizes.h) */
	if (nback != n || memcmp(back, sizes, n * sizeof(*sizes)) != 0)
		abort(); /* ... to the same list */
	free(back);
	free(text);
	free(sizes);
}

/* Every option's value through its typed getter, as modules and patterns
 * read them. */
static void ng_fuzz_getters(const struct ng_args *a)
{
	char buf[512];

	for (size_t i = 0; i < a->n; i++) {
		const struct ng_option *o = a->ents[i].opt;

		switch (o->type) {
		case NG_OPT_FLAG:
			(void)ng_args_flag(a, o->name);
			break;
		case NG_OPT_INT:
			(void)ng_args_int(a, o->name);
			break;
		case NG_OPT_SIZE:
			(void)ng_args_size(a, o->name);
			break;
		case NG_OPT_DOUBLE:
			(void)ng_args_double(a, o->name);
			break;
		case NG_OPT_CHOICE:
			(void)ng_args_choice(a, o->name);
			break;
		case NG_OPT_STRING:
			(void)ng_args_str(a, o->name);
			break;
		}
		(void)ng_args_given(a, o->name);
		if (a->ents[i].given)
			ng_option_readers(o->name, buf, sizeof(buf));
	}
}

/* The parameters blocks of the result file, owner by owner. */
static void ng_fuzz_json(const struct ng_args *a)
{
	for (size_t i = 0; i < a->n; i++) {
		const char *owner = a->ents[i].owner;
		json_t *o;
		char *text;

		if (i > 0 && strcmp(a->ents[i - 1].owner, owner) == 0)
			continue;
		o = ng_args_json(a, owner);
		text = json_dumps(o, JSON_COMPACT);
		free(text);
		json_decref(o);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const launches[] = {"local", "mpi", "tcp"};
	char *argv[NG_FUZZ_MAXARGS + 1], *text = ng_fuzz_strndup(data, size), *line = text, err[512];
	double pct[NG_STATS_PCT_MAX];
	const struct ng_module *m;
	const struct ng_pattern *p;
	struct ng_args a = {0};
	int argc = 0;

	argv[argc++] = (char *)"ngauge";
	while (line && argc < NG_FUZZ_MAXARGS) {
		char *nl = strchr(line, '\n');

		if (!nl && !*line)
			break; /* the input's last newline ends the last argument */
		if (nl)
			*nl = '\0';
		argv[argc++] = line;
		line = nl ? nl + 1 : NULL;
	}
	argv[argc] = NULL;
	ng_log_set_rank(NG_LOG_QUIET); /* the parser's one line per refusal: not here */
	if (ng_cmdline_declare(&a))
		abort();
	if (ng_cmdline_parse(&a, argc, argv))
		goto out;

	m = ng_module_find(ng_args_str(&a, "module"));
	p = ng_pattern_find(ng_args_str(&a, "pattern"));
	if (m && p) {
		for (size_t i = 0; i < sizeof(launches) / sizeof(launches[0]); i++)
			(void)ng_args_check_read(&a, m, p, launches[i], ng_driver_find_option, err,
			                         sizeof(err));
	}
	if (ng_args_given(&a, "sizes"))
		ng_fuzz_sizes(ng_args_str(&a, "sizes"), m ? m->max_msg : 0);
	else if (p && p->default_sizes)
		ng_fuzz_sizes(p->default_sizes, m ? m->max_msg : 0);
	(void)ng_stats_parse_percentiles(ng_args_str(&a, "percentiles"), pct, err, sizeof(err));
	ng_fuzz_getters(&a);
	ng_fuzz_json(&a);
out:
	ng_args_release(&a);
	free(text);
	return 0;
}
