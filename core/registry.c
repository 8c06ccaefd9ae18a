/* SPDX-License-Identifier: BSD-3-Clause */
/* The one list of modules, one line each, and the patterns' (patterns/meson.build). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "patterns/ng_patterns.h"
#include "registry.h"

extern const struct ng_module ng_module_tcp;
extern const struct ng_module ng_module_emu;
extern const struct ng_module ng_module_rdma;
extern const struct ng_module ng_module_rma;
extern const struct ng_module ng_module_spipe;
#if NG_HAVE_MPI
extern const struct ng_module ng_module_mpi;
extern const struct ng_module ng_module_mpirma;
#endif
#if NG_HAVE_VERBS
extern const struct ng_module ng_module_ibrc;
extern const struct ng_module ng_module_ibuc;
extern const struct ng_module ng_module_ibud;
#endif

/* The patterns: the list patterns/meson.build generates (NG_PATTERNS). */
#define NG_PATTERN(name) extern const struct ng_pattern ng_pattern_##name;
NG_PATTERNS
#undef NG_PATTERN

const char ng_pattern_default[] = NG_PATTERN_DEFAULT;

const struct ng_module *const ng_modules[] = {
    &ng_module_tcp,
    &ng_module_emu,
    &ng_module_rdma,
    &ng_module_rma,
    &ng_module_spipe,
#if NG_HAVE_MPI
    &ng_module_mpi,
    &ng_module_mpirma,
#endif
#if NG_HAVE_VERBS
    &ng_module_ibrc,
    &ng_module_ibuc,
    &ng_module_ibud,
#endif
    NULL,
};

const struct ng_missing ng_missing_modules[] = {
#if !NG_HAVE_MPI
    {"mpi", "built without MPI (install mpich libmpich-dev and rebuild)"},
    {"mpirma", "built without MPI (install mpich libmpich-dev and rebuild)"},
#endif
#if !NG_HAVE_VERBS
    {"ibrc", "built without libibverbs (install libibverbs-dev and rebuild)"},
    {"ibuc", "built without libibverbs (install libibverbs-dev and rebuild)"},
    {"ibud", "built without libibverbs (install libibverbs-dev and rebuild)"},
#endif
    {NULL, NULL},
};

const struct ng_pattern *const ng_patterns[] = {
#define NG_PATTERN(name) &ng_pattern_##name,
    NG_PATTERNS
#undef NG_PATTERN
        NULL,
};

const struct ng_module *ng_module_find(const char *name)
{
	for (size_t i = 0; ng_modules[i]; i++)
		if (strcmp(ng_modules[i]->name, name) == 0)
			return ng_modules[i];
	return NULL;
}

const struct ng_pattern *ng_pattern_find(const char *name)
{
	for (size_t i = 0; ng_patterns[i]; i++)
		if (strcmp(ng_patterns[i]->name, name) == 0)
			return ng_patterns[i];
	return NULL;
}

void ng_modules_offering(unsigned caps, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; ng_modules[i] && used < len; i++) {
		if ((ng_modules[i]->caps & caps) != caps)
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", ng_modules[i]->name);
		used += n > 0 ? (size_t)n : 0;
	}
}
