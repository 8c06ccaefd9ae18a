/* SPDX-License-Identifier: BSD-3-Clause */
/* The one list of modules and patterns.  One line each. */
#include "config.h"

#include <stdio.h>
#include <string.h>

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

extern const struct ng_pattern ng_pattern_pingpong;
extern const struct ng_pattern ng_pattern_1n;
extern const struct ng_pattern ng_pattern_n1;
extern const struct ng_pattern ng_pattern_loggp;
extern const struct ng_pattern ng_pattern_plogp;
extern const struct ng_pattern ng_pattern_alltoall;
extern const struct ng_pattern ng_pattern_mpbibw;
extern const struct ng_pattern ng_pattern_bw;
extern const struct ng_pattern ng_pattern_bibw;
extern const struct ng_pattern ng_pattern_rma;
extern const struct ng_pattern ng_pattern_overlap;
extern const struct ng_pattern ng_pattern_skew;
extern const struct ng_pattern ng_pattern_noise;
extern const struct ng_pattern ng_pattern_ebb;
extern const struct ng_pattern ng_pattern_matrix;

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
    &ng_pattern_pingpong, &ng_pattern_1n,       &ng_pattern_n1,      &ng_pattern_loggp,
    &ng_pattern_plogp,    &ng_pattern_alltoall, &ng_pattern_mpbibw,  &ng_pattern_bw,
    &ng_pattern_bibw,     &ng_pattern_rma,      &ng_pattern_overlap, &ng_pattern_skew,
    &ng_pattern_noise,    &ng_pattern_ebb,      &ng_pattern_matrix,  NULL,
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
