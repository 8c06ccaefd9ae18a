/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NG_ENV_H
#define NG_ENV_H

#include <jansson.h>

/* {"host", "kernel", "cpu", "mpi" (or null), "device", "ngauge", "cores"}. */
json_t *ng_env_json(const char *device, const char *mpi);

#endif
