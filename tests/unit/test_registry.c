/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry's contents keep the plug-in contracts: names unique, options
 * namespaced by their owner, capability flags consistent with the operations
 * a module fills in, patterns' needs satisfiable by some module.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "plugin.h"
#include "registry.h"
#include "tests/check.h"

/* Names the documentation promises: the alltoall pattern's options use
 * the short prefix "a2a", pingpong's "pp", and --ranks-per-node groups
 * ranks for any pattern that knows nodes; pingpong's --one-way is the name
 * doc/clock.md documents.  A module's options are its own or
 * those of the layers it is built on: the verbs core's and the ib modules'
 * "ib", the RDMA layer's and the channel's "rdma", the ofi backend's "ofi",
 * the mpi module's "mpi". */
static const struct {
	const char *owner, *prefix;
} short_prefixes[] = {{"alltoall", "a2a"},
                      {"alltoall", "ranks-per-node"},
                      {"mpbibw", "ranks-per-node"},
                      {"congestion", "cong"},
                      {"pingpong", "pp"},
                      {"pingpong", "one-way"},
                      {"pingpong", "rate"},
                      {"pingpong", "load"},
                      {"ibrc", "ib"},
                      {"ibuc", "ib"},
                      {"ibud", "ib"},
                      {"rdma", "ofi"},
                      {"rdma", "ib"},
                      {"rma", "rdma"},
                      {"rma", "ofi"},
                      {"rma", "ib"},
                      {"spipe", "rdma"},
                      {"spipe", "ofi"},
                      {"spipe", "ib"},
                      {"mpirma", "mpi"}};

static bool namespaced(const char *owner, const char *name)
{
	size_t n = strlen(owner);
	if (strncmp(name, owner, n) == 0 && name[n] == '-')
		return true;
	for (size_t i = 0; i < sizeof(short_prefixes) / sizeof(short_prefixes[0]); i++) {
		size_t k = strlen(short_prefixes[i].prefix);
		if (strcmp(owner, short_prefixes[i].owner) == 0 &&
		    strncmp(name, short_prefixes[i].prefix, k) == 0 && (name[k] == '-' || name[k] == '\0'))
			return true;
	}
	return false;
}

static void check_options(const char *owner, const struct ng_option *t)
{
	char err[256];
	for (; t && t->name; t++) {
		CHECK(namespaced(owner, t->name), "option --%s of '%s' is not namespaced", t->name, owner);
		CHECK(t->help && *t->help, "option --%s has no help", t->name);
		CHECK(t->type != NG_OPT_CHOICE || t->choices, "choice option --%s has no choices", t->name);
		if (t->def)
			CHECK(ng_opt_check(t, t->def, err, sizeof(err)) == 0,
			      "default of --%s is invalid: %s", t->name, err);
	}
}

/* A module's tables (.options, .reads): every one has options, none is
 * listed twice (its options would show twice), and each is namespaced. */
static void check_tables(const struct ng_module *m)
{
	const struct ng_option *const *lists[] = {m->options, m->reads};

	for (size_t l = 0; l < 2; l++)
		for (const struct ng_option *const *t = lists[l]; t && *t; t++) {
			CHECK((*t)->name, "module '%s' lists an empty option table", m->name);
			check_options(m->name, *t);
			for (size_t k = 0; k <= l; k++)
				for (const struct ng_option *const *u = lists[k]; u && *u && u != t; u++)
					CHECK(*u != *t, "module '%s' lists the table of --%s twice", m->name,
					      (*t)->name);
		}
}

/* Whether module @mod reads option @opt, by its tables (.options). */
static bool reads(const char *mod, const char *opt)
{
	const struct ng_module *m = ng_module_find(mod);
	for (const struct ng_option *const *t = m ? m->options : NULL; t && *t; t++)
		for (const struct ng_option *o = *t; o->name; o++)
			if (strcmp(o->name, opt) == 0)
				return true;
	return false;
}

int main(void)
{
	size_t nmod = 0, npat = 0;
	struct ng_args all = {0};

	for (size_t i = 0; ng_modules[i]; i++, nmod++) {
		const struct ng_module *m = ng_modules[i];
		const struct ng_module_ops *o = NULL;
		/* The descriptor: the data, once; its operations at .ops, or,
		 * for a module in a plugin, the plugin's entry (never both). */
		CHECK(!m->plugin != !m->ops, "module '%s': operations %s", m->name,
		      m->plugin ? "in the executable and a plugin" : "nowhere");
		CHECK(m->name && m->desc, "module %zu incomplete", i);
		CHECK(ng_module_find(m->name) == m, "module '%s' not found by name", m->name);
		CHECK(ng_module_impl(m, &o) == NG_OK && o, "module '%s': its operations", m->name);
		if (!o)
			continue;
		CHECK(o->open && o->close && o->alloc && o->free, "module '%s': operations incomplete",
		      m->name);
		/* Blocking send/recv: the module's own, or the core's isend/irecv + wait. */
		if (m->caps & NG_CAP_CHANNEL)
			CHECK(o->msg && (o->msg->send || (o->msg->isend && o->msg->wait)) &&
			          (o->msg->recv || (o->msg->irecv && o->msg->wait)),
			      "module '%s' claims send/recv without them", m->name);
		CHECK(!(m->caps & NG_CAP_NONBLOCK) ==
		          !(o->msg && o->msg->isend && o->msg->irecv && o->msg->test && o->msg->wait),
		      "module '%s': non-blocking flag and operations disagree", m->name);
		CHECK(!(m->caps & NG_CAP_ONESIDED) == !o->rma, "module '%s': one-sided flag and rma disagree",
		      m->name);
		CHECK(!(m->caps & NG_CAP_ALLTOALL) == !o->alltoall,
		      "module '%s': alltoall flag and operation disagree", m->name);
		CHECK(!(m->caps & NG_CAP_COLL) == !o->coll, "module '%s': coll flag and operation disagree",
		      m->name);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(ng_modules[j]->name, m->name) != 0, "module name '%s' twice", m->name);
		check_tables(m);
		CHECK(ng_module_declare(&all, m) == 0, "declare");
	}
	/* Typed options (core/options.h): every option of a module's tables,
	 * its own and those it reads, has its member (NG_*_AT), and an entry
	 * that names an option (the first declaration of the name: a table of
	 * another owner) has that declaration's type. */
	for (size_t i = 0; ng_modules[i]; i++) {
		const struct ng_module *m = ng_modules[i];
		const struct ng_option *const *lists[] = {m->options, m->reads};

		for (size_t l = 0; l < 2; l++)
			for (const struct ng_option *const *t = lists[l]; t && *t; t++)
				for (const struct ng_option *o = *t; o->name; o++) {
					const struct ng_arg_ent *e = ng_args_find(&all, o->name);

					CHECK(o->slot > 0, "module '%s': --%s has no member (NG_*_AT)",
					      m->name, o->name);
					CHECK(e && e->opt->type == o->type,
					      "module '%s' reads --%s, declared %s", m->name, o->name,
					      e ? "with another type" : "nowhere");
				}
	}
	for (size_t i = 0; ng_patterns[i]; i++, npat++) {
		const struct ng_pattern *p = ng_patterns[i];
		int usable = 0;
		CHECK(p->name && p->desc && p->run && p->min_ranks >= 1, "pattern %zu incomplete", i);
		CHECK(ng_pattern_find(p->name) == p, "pattern '%s' not found by name", p->name);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(ng_patterns[j]->name, p->name) != 0, "pattern name '%s' twice", p->name);
		for (size_t j = 0; ng_modules[j]; j++)
			usable |= (p->needs & ~ng_modules[j]->caps) == 0;
		CHECK(usable, "no module offers what pattern '%s' needs", p->name);
		check_options(p->name, p->options);
		/* Typed options (core/options.h): every option a pattern
		 * declares or reads has its member (NG_*_AT). */
		for (const struct ng_option *o = p->options; o && o->name; o++)
			CHECK(o->slot > 0, "pattern '%s': --%s has no member (NG_*_AT)", p->name, o->name);
		for (const struct ng_option *o = p->reads; o && o->name; o++)
			CHECK(o->slot > 0, "pattern '%s' reads --%s into no member", p->name, o->name);
		CHECK(ng_args_declare(&all, p->options, p->name) == 0, "declare");
	}
	/* What a pattern reads another declares, with the type it reads. */
	for (size_t i = 0; ng_patterns[i]; i++)
		for (const struct ng_option *o = ng_patterns[i]->reads; o && o->name; o++) {
			const struct ng_arg_ent *e = ng_args_find(&all, o->name);
			CHECK(e && e->opt->type == o->type, "pattern '%s' reads --%s, declared %s",
			      ng_patterns[i]->name, o->name, e ? "with another type" : "nowhere");
		}
	/* No option name is declared twice across all tables. */
	for (size_t i = 0; i < all.n; i++)
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(all.ents[i].opt->name, all.ents[j].opt->name) != 0,
			      "option --%s declared twice", all.ents[i].opt->name);
	CHECK(ng_module_find("tcp") != NULL, "tcp module missing");
	CHECK(ng_module_find(ng_module_default) && ng_pattern_find(ng_pattern_default),
	      "-x's default '%s' and -p's '%s' are registered", ng_module_default, ng_pattern_default);
	CHECK(ng_pattern_find("pingpong") && ng_pattern_find("1n") && ng_pattern_find("n1"), "core patterns");
	CHECK(ng_module_find("no-such-module") == NULL, "lookup of an unknown name");
	/* Tables of a layer: each module reads only what applies to it. */
	CHECK(reads("rma", "rma-design") && !reads("rdma", "rma-design") && reads("rdma", "rdma-ring"),
	      "rdma/rma readers of the shared table");
	if (ng_module_find("ibud"))
		CHECK(!reads("ibud", "ib-mode") && !reads("ibud", "ib-eager") && reads("ibud", "ib-ring") &&
		          reads("ibrc", "ib-mode") && reads("ibuc", "ib-eager"),
		      "ib readers of the shared table");
	ng_args_release(&all);
	printf("%zu modules, %zu patterns checked\n", nmod, npat);
	return check_exit();
}
