/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NG_ENV_H
#define NG_ENV_H

#include <jansson.h>
#include <stdbool.h>

#include "bootstrap.h"
#include "status.h"

/* {"host", "kernel", "cpu", "mpi" (or null), "device", "ngauge", "cores"}. */
json_t *ng_env_json(const char *device, const char *mpi);

/* How busy-polling ranks share the cores of their hosts. */
struct ng_oversub {
	bool over;     /* on some host, spinning ranks outnumber the cores they may run on */
	int ranks;     /* spinning ranks on the most crowded host */
	int cores;     /* the cores they may run on there */
	char host[64]; /* that host */
};

/*
 * Collective.  Every rank says whether it spins (ng_comm.spins) and on which
 * CPUs it may run (its affinity mask, after --pin); per host, the spinning
 * ranks are counted against the CPUs in the union of their masks, and the
 * host where they exceed them most is reported in *o_p.  Returns NG_OK or
 * the bootstrap's error.
 */
ng_status ng_env_oversub(struct ng_boot *boot, bool spins, struct ng_oversub *o_p);

#endif
