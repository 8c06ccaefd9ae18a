/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one-sided channel (the Netgauge paper's Fig. 4) over the RDMA layer:
 * two-sided messages made of RDMA writes into rings at the receiver.  It is
 * the "rdma" module, and the data path of ibrc/ibuc --ib-mode write (the
 * same code over the verbs backend with the --ib-* settings).  Internal to
 * modules/.
 */
#ifndef NG_RDMA_CHAN_H
#define NG_RDMA_CHAN_H

#include <stdbool.h>
#include <stddef.h>

#include "module.h"

/* Limits of the ring and the eager size. */
#define NG_CHAN_RING_MIN  4u
#define NG_CHAN_RING_MAX  4096u
#define NG_CHAN_EAGER_MIN 64u
#define NG_CHAN_EAGER_MAX ((size_t)1 << 20)

struct ng_chan_conf {
	const char *backend;  /* "auto", "verbs", "shm", "ofi" */
	const char *provider; /* ofi: provider name or NULL */
	const char *dev;      /* verbs: device, port, GID (NULL, 0, -1: automatic) */
	int port;
	int gid_index;
	bool unreliable; /* verbs: UC queue pairs */
	bool yield;      /* poll: sched_yield() when idle */
	size_t ring;     /* slots per peer */
	size_t eager;    /* largest message through the ring */
};

/*
 * Collective: opens the RDMA layer with @cf and the channel on it, an
 * instance of module @m (its name and capabilities) served by the rdma
 * module's operations (c->ops).  Errors are reported; nothing is left open.
 */
ng_status ng_chan_open(const struct ng_module *m, const struct ng_module_env *env,
                       const struct ng_chan_conf *cf, struct ng_comm **comm_p);

#endif
