/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The modules and patterns of this build (core/registry.c), from the lists
 * modules/meson.build and patterns/meson.build generate: adding a module or
 * a pattern is one line there (a module in a plugin is left out, and named
 * in ng_missing_modules, when the plugin's library was not found).
 */
#ifndef NG_REGISTRY_H
#define NG_REGISTRY_H

#include "module.h"
#include "pattern.h"

/* NULL-terminated lists of what this build contains. */
extern const struct ng_module *const ng_modules[];
extern const struct ng_pattern *const ng_patterns[];
/* -p's and -x's defaults, named in patterns/meson.build and
 * modules/meson.build beside their lists. */
extern const char ng_pattern_default[];
extern const char ng_module_default[];

/* What this build lacks, and why ("mpi: built without MPI (install
 * libmpich-dev and rebuild)"); NULL-name terminated. */
struct ng_missing {
	const char *name;
	const char *why;
};
extern const struct ng_missing ng_missing_modules[];

const struct ng_module *ng_module_find(const char *name);
const struct ng_pattern *ng_pattern_find(const char *name);

/* The names of this build's modules that offer every capability of @caps,
 * comma-separated, into @buf ("" when none does), for messages that say
 * where a missing capability is found. */
void ng_modules_offering(unsigned caps, char *buf, size_t len);

#endif
