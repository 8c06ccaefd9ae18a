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
 * through the bootstrap.  The warnings, and the manifest's data they are
 * drawn from, are core/manifest_warn.h's.
 */
#ifndef NG_MANIFEST_H
#define NG_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "bootstrap.h"
#include "manifest_warn.h"
#include "status.h"

/*
 * Collective.  Gathers the manifest of every rank's host and, on rank 0,
 * draws the warnings (oversubscription is the driver's: ng_env_oversub).
 * Allocates nothing on ranks other than 0.  Returns NG_OK or the
 * bootstrap's error (or NG_ERR_NOMEM, reported); *m_p is then empty.
 */
ng_status ng_manifest_gather(struct ng_boot *boot, const struct ng_manifest_in *in, struct ng_manifest *m_p);

/* Drops the references of @m and frees its placement text (the driver
 * moves them into the result first, or leaves them). */
void ng_manifest_free(struct ng_manifest *m);

/* ---- the pieces, for the unit tests ---- */

/* The root directory of procfs and sysfs reads ("" for "/"); never NULL. */
const char *ng_manifest_root(void);

/* Reads the first line of ROOT/@path (without its newline) into @buf;
 * false when it cannot be read or is empty. */
bool ng_manifest_read(const char *path, char *buf, size_t len);

#endif
