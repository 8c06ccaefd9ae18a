/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The validity warnings (the result's "warnings", kinds in
 * doc/result-format.md): what in the gathered manifest makes the times of the
 * run doubtful, one warning per kind naming every rank, CPU or host
 * concerned.  The manifest's data is here with them, so that drawing a
 * warning needs nothing of gathering one (core/manifest.h, which includes
 * this header, gathers).
 */
#ifndef NG_MANIFEST_WARN_H
#define NG_MANIFEST_WARN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results.h"
#include "timers/timer.h"

/* What the driver knows of the run that the warnings need. */
struct ng_manifest_in {
	const char *device;       /* the instance's device string (module.h), which names the NIC */
	const char *mpi;          /* the MPI library's version string, or NULL */
	bool spins;               /* this rank busy-polls (module.h) */
	bool pin_given;           /* --pin was given */
	bool regmem;              /* the module's registrations pin memory (ng_comm.pins) */
	size_t max_bytes;         /* the largest message size of the run */
	const struct ng_timer *t; /* the timer in use */
};

/* The manifest on rank 0 (every pointer NULL, ranks empty, on the other ranks). */
struct ng_manifest {
	json_t *hosts;                /* env "hosts": one object per host, in order of their first rank */
	struct ng_results_text ranks; /* env "placement": one object per rank, kept as text (results.h) */
	json_t *versions;             /* env "versions" */
	json_t *warnings;             /* "warnings": [{"kind", "message"}], possibly empty */
};

/* What each rank contributes (fixed size: exchanged as bytes). */
struct ng_manifest_rank {
	char host[64];
	int32_t cpu;       /* sched_getcpu(), -1 unknown */
	int32_t node;      /* the CPU's NUMA node, -1 unknown */
	int32_t ncpus;     /* CPUs in its affinity mask */
	int32_t spins;     /* busy-polls */
	int32_t first;     /* the first rank of its host */
	char governor[32]; /* "" unknown */
	int64_t khz[3];    /* current, min, max frequency of its CPU; -1 unknown */
	char siblings[64]; /* its CPU's thread_siblings_list, "" unknown */
};

/* Adds a warning of @kind to @m (rank 0): appended to m->warnings. */
void ng_manifest_warn(struct ng_manifest *m, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A CPU list ("0-3,8,10-11") into @set (bit c for CPU c < @n); the number
 * of CPUs in it, or -1 when it does not parse. */
int ng_manifest_cpulist(const char *list, bool *set, int n);

/* The warnings of the gathered run (rank 0): appends to m->warnings. */
void ng_manifest_check(struct ng_manifest *m, const struct ng_manifest_in *in,
                       const struct ng_manifest_rank *all, size_t n);

#endif
