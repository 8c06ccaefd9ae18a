/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The words of a figure (contract in legend.h): the facets of a run read
 * from its result file, the legend of each file from the facets that differ
 * between the figure's files, the title from those they share.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "legend.h"

/* A facet of a run that names its series: "module", "ranks", or a
 * parameter; @name is how the text calls it (NULL: the value alone). */
struct ng_facet {
	const char *key;
	const char *name;
};

/* The facets a reader tells runs apart by, in the order the texts give them. */
static const struct ng_facet ng_facets[] = {
    {"module", NULL},    {"rma-design", "design"},    {"rma-sched", "scheduling"},  {"spipe-mode", "mode"},
    {"ib-mode", "mode"}, {"rdma-backend", "backend"}, {"ofi-provider", "provider"}, {"emu-base", "base"},
    {"ranks", NULL},
};
#define NG_NFACETS (sizeof(ng_facets) / sizeof(ng_facets[0]))

/* Parameters that say how a run was done, not what ran, or which of its
 * measurements were made (each row says which it is): never a legend. */
static const char *const ng_bookkeeping[] = {
    "sizes",  "count",    "warmup",   "output",   "np",       "seed",        "server",
    "once",   "client",   "port",     "bind",     "pin",      "timeout",     "raw",
    "verify", "tcp-port", "tcp-bind", "rma-test", "rma-sync", "rma-origins", NULL,
};

/* Other parameters that differ, at most this many in a legend. */
#define NG_LEGEND_OTHERS 3
/* The longest value of a parameter quoted (characters, then "..."). */
#define NG_VALUE_MAX 24

static bool ng_in(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static bool ng_is_facet(const char *key)
{
	for (size_t k = 0; k < NG_NFACETS; k++)
		if (strcmp(ng_facets[k].key, key) == 0)
			return true;
	return false;
}

/* "NAME VALUE" of a parameter (NULL name: the value alone); a flag is
 * "NAME" or "no NAME". */
static char *ng_param_text(const char *name, const json_t *v)
{
	char *s;

	if (json_is_string(v)) {
		const char *t = json_string_value(v);
		size_t len = strlen(t);

		if (len > NG_VALUE_MAX)
			s = ng_plot_xasprintf("%.*s...", NG_VALUE_MAX - 3, t);
		else
			s = ng_plot_xasprintf("%s", t);
	} else if (json_is_true(v)) {
		return ng_plot_xasprintf("%s", name ? name : "yes");
	} else if (json_is_false(v)) {
		return ng_plot_xasprintf("no %s", name ? name : "");
	} else if (json_is_integer(v)) {
		s = ng_plot_xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	} else if (json_is_real(v)) {
		s = ng_plot_xasprintf("%g", json_real_value(v));
	} else {
		s = ng_plot_xasprintf("?");
	}
	if (name) {
		char *named = ng_plot_xasprintf("%s %s", name, s);

		free(s);
		s = named;
	}
	return s;
}

/* The text of facet @key of file @pf (malloc'ed), or NULL when the run has
 * none. */
static char *ng_facet_of(const struct ng_plot_file *pf, const char *key, const char *name)
{
	const json_t *params = json_object_get(pf->doc, "parameters"), *v;

	if (strcmp(key, "module") == 0)
		return strcmp(pf->module, "?") ? ng_plot_xasprintf("%s", pf->module) : NULL;
	if (strcmp(key, "ranks") == 0)
		return pf->ranks > 0 ? ng_plot_xasprintf("%lld ranks", pf->ranks) : NULL;
	if (!json_is_object(params) || !(v = json_object_get(params, key)) || json_is_null(v))
		return NULL; /* not set: nothing to tell */
	/* the sendrecv design does not schedule: its scheduling is none of the run */
	if (strcmp(key, "rma-sched") == 0 && ng_plot_row_is(params, "rma-design", "sendrecv"))
		return NULL;
	if (!name) {
		const char *dash = strchr(key, '-');

		name = dash && dash[1] ? dash + 1 : key;
	}
	return ng_param_text(name, v);
}

/* Appends @text to the list in @buf ("A, B"); takes @text. */
static void ng_list_add(char **buf, char *text)
{
	char *joined;

	if (!text)
		return;
	if (!**buf) {
		free(*buf);
		*buf = text;
		return;
	}
	joined = ng_plot_xasprintf("%s, %s", *buf, text);
	free(*buf);
	free(text);
	*buf = joined;
}

/* Whether two of @files have facet @key (named @name) with different texts
 * (a facet only some files have tells nothing more than their module);
 * *all_p: every file has it.  The first file's text into *first_p. */
static bool ng_facet_differs(const struct ng_plot_file *const *files, size_t n, const char *key,
                             const char *name, bool *all_p, char **first_p)
{
	char *seen = NULL;
	bool differs = false;
	size_t i;

	*first_p = ng_facet_of(files[0], key, name);
	*all_p = true;
	for (i = 0; i < n; i++) {
		char *v = i ? ng_facet_of(files[i], key, name) : NULL;
		const char *text = i ? v : *first_p;

		*all_p = *all_p && text;
		if (text && seen && strcmp(text, seen) != 0)
			differs = true;
		if (text && !seen)
			seen = ng_plot_xasprintf("%s", text);
		free(v);
	}
	free(seen);
	return differs;
}

/* Adds facet @key to the legends of the files that have it. */
static void ng_legend_add(const struct ng_plot_file *const *files, size_t n, char **legend, const char *key,
                          const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!files[i]->user)
			ng_list_add(&legend[i], ng_facet_of(files[i], key, name));
}

/* Whether two files without a --label share a legend. */
static bool ng_legend_clash(const struct ng_plot_file *const *files, size_t n, char **legend)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (!files[i]->user && !files[j]->user && strcmp(legend[i], legend[j]) == 0)
				return true;
	return false;
}

static const char *ng_host_of(const struct ng_plot_file *pf)
{
	const char *h = json_string_value(json_object_get(json_object_get(pf->doc, "env"), "host"));

	return h ? h : "";
}

/* The other parameters that differ between the files, in the order of the
 * first file's block, then the others'. */
static void ng_legend_others(const struct ng_plot_file *const *files, size_t n, char **legend)
{
	const char **seen = ng_plot_xcalloc(64, sizeof(*seen));
	size_t nseen = 0, i, k, added = 0;
	const char *key;
	json_t *v;

	for (i = 0; i < n && added < NG_LEGEND_OTHERS; i++) {
		json_object_foreach(json_object_get(files[i]->doc, "parameters"), key, v)
		{
			bool all;
			char *first;

			for (k = 0; k < nseen && strcmp(seen[k], key) != 0; k++)
				;
			if (k < nseen || nseen == 64 || ng_in(ng_bookkeeping, key) || ng_is_facet(key))
				continue;
			seen[nseen++] = key;
			if (ng_facet_differs(files, n, key, NULL, &all, &first)) {
				ng_legend_add(files, n, legend, key, NULL);
				added++;
			}
			free(first);
			if (added == NG_LEGEND_OTHERS)
				break;
		}
	}
	free(seen);
}

void ng_legend_make(const struct ng_plot_file *const *files, size_t n, const char *sub, char ***legend_p,
                    char **caption_p)
{
	char **legend = ng_plot_xcalloc(n, sizeof(*legend));
	char *caption, *common = ng_plot_xasprintf("%s", ""), *module = NULL, *first;
	bool all, hosts = false;
	size_t i, k;

	for (i = 0; i < n; i++)
		legend[i] = ng_plot_xasprintf("%s", files[i]->user ? files[i]->user : "");
	for (k = 0; k < NG_NFACETS; k++) {
		const struct ng_facet *fc = &ng_facets[k];

		if (ng_facet_differs(files, n, fc->key, fc->name, &all, &first)) {
			ng_legend_add(files, n, legend, fc->key, fc->name);
			free(first);
		} else if (!all) {
			free(first);
		} else if (strcmp(fc->key, "module") == 0) {
			module = first;
		} else if (strcmp(fc->key, "ranks") == 0 && files[0]->ranks == 2) {
			free(first); /* two ranks: the usual, not worth a word */
		} else {
			ng_list_add(&common, first);
		}
	}
	ng_legend_others(files, n, legend);
	for (i = 1; i < n; i++)
		hosts = hosts || strcmp(ng_host_of(files[i]), ng_host_of(files[0])) != 0;
	if (hosts && ng_legend_clash(files, n, legend))
		for (i = 0; i < n; i++)
			if (!files[i]->user)
				ng_list_add(&legend[i], ng_plot_xasprintf("host %s", ng_host_of(files[i])));
	if (ng_legend_clash(files, n, legend))
		for (i = 0; i < n; i++)
			if (!files[i]->user)
				ng_list_add(&legend[i],
				            ng_plot_xasprintf("%s", ng_plot_basename(files[i]->path)));
	/* times of ranks that waited for a core are no figures of the network */
	for (i = 0; i < n; i++) {
		if (files[i]->oversubscribed) {
			char *marked =
			    ng_plot_xasprintf("%s%s(oversubscribed)", legend[i], legend[i][0] ? " " : "");

			free(legend[i]);
			legend[i] = marked;
		}
	}
	/* ... and a run with validity warnings (doc/result-format.md) is marked
	 * with their number (the report names them) */
	for (i = 0; i < n; i++) {
		size_t nw = ng_plot_warnings(files[i]);

		if (nw) {
			char *marked = ng_plot_xasprintf("%s%s(%zu warning%s)", legend[i],
			                                 legend[i][0] ? " " : "", nw, nw == 1 ? "" : "s");

			free(legend[i]);
			legend[i] = marked;
		}
	}

	/* the title: "PART: MODULE, COMMON" or "MODULE PATTERN, COMMON" */
	if (sub)
		caption = ng_plot_xasprintf("%s%s%s%s%s", sub, module || common[0] ? ": " : "",
		                            module ? module : "", module && common[0] ? ", " : "", common);
	else
		caption = ng_plot_xasprintf("%s%s%s%s%s", module ? module : "", module ? " " : "",
		                            files[0]->pattern, common[0] ? ", " : "", common);
	free(module);
	free(common);
	*legend_p = legend;
	*caption_p = caption;
}

void ng_legend_free(char **legend, size_t n, char *caption)
{
	for (size_t i = 0; legend && i < n; i++)
		free(legend[i]);
	free(legend);
	free(caption);
}
