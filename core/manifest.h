/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run's manifest (the env block's "hosts", "ranks" and "versions") and
 * the validity warnings drawn from it (the result's "warnings"); keys in
 * doc/result-format.md.
 *
 * Everything is read from procfs and sysfs, under the root directory
 * $NGAUGE_TEST_SYSROOT when that is set (tests give a fake tree; nothing
 * else sets it), else "/".  A field that cannot be read is null; reading
 * never warns.  Gathered once, before the first measurement: every rank
 * reads its own CPU, NUMA node and frequency, the first rank of each host
 * that host's CPU, NUMA, hugepages and RDMA devices, and rank 0 gets it all
 * through the bootstrap.
 */
#ifndef NG_MANIFEST_H
#define NG_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "bootstrap.h"
#include "status.h"
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

/* The manifest on rank 0 (every pointer NULL on the other ranks). */
struct ng_manifest {
	json_t *hosts;    /* env "hosts": one object per host, in order of their first rank */
	json_t *ranks;    /* env "ranks": one object per rank */
	json_t *versions; /* env "versions" */
	json_t *warnings; /* "warnings": [{"kind", "message"}], possibly empty */
};

/*
 * Collective.  Gathers the manifest of every rank's host and, on rank 0,
 * draws the warnings (oversubscription is the driver's: ng_env_oversub).
 * Allocates nothing on ranks other than 0.  Returns NG_OK or the
 * bootstrap's error (or NG_ERR_NOMEM, reported); *m_p is then empty.
 */
ng_status ng_manifest_gather(struct ng_boot *boot, const struct ng_manifest_in *in, struct ng_manifest *m_p);

/* Adds a warning of @kind to @m (rank 0): appended to m->warnings. */
void ng_manifest_warn(struct ng_manifest *m, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Drops the references of @m (the driver moves them into the result first
 * with json_incref, or leaves them). */
void ng_manifest_free(struct ng_manifest *m);

/* ---- the pieces, for manifest_warn.c and the unit tests ---- */

/* The root directory of procfs and sysfs reads ("" for "/"); never NULL. */
const char *ng_manifest_root(void);

/* Reads the first line of ROOT/@path (without its newline) into @buf;
 * false when it cannot be read or is empty. */
bool ng_manifest_read(const char *path, char *buf, size_t len);

/* A CPU list ("0-3,8,10-11") into @set (bit c for CPU c < @n); the number
 * of CPUs in it, or -1 when it does not parse. */
int ng_manifest_cpulist(const char *list, bool *set, int n);

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

/* The warnings of the gathered run (rank 0): appends to m->warnings. */
void ng_manifest_check(struct ng_manifest *m, const struct ng_manifest_in *in,
                       const struct ng_manifest_rank *all, size_t n);

#endif
