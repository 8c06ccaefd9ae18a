/* SPDX-License-Identifier: BSD-3-Clause */
/* The RDMA layer's options (rdma.h): which backend, and how the backends
 * open (the ofi backend's provider; the verbs backend's device, by the
 * verbs core's options). */
#include "config.h"

#include <stddef.h>

#include "modules/rdmalayer/rdma.h"
#include "options.h"
#if NG_HAVE_VERBS
#include "modules/verbs/verbs_options.h"
#endif

/* clang-format off */
const struct ng_option ng_rdma_options[] = {
	{ .name = "rdma-backend", NG_CHOICE_AT(struct ng_rdma_config, backend),
	  .def = "auto", .choices = "auto|verbs|shm|ofi|ucx",
	  .help = "RDMA layer backend: verbs (HCA, Soft-RoCE), shm (ranks on one host), ofi (libfabric), ucx (UCX "
	          "UCP, transports by UCX_TLS); auto: the first that opens, in that order" },
	{ .name = "ofi-provider", NG_STRING_AT(struct ng_rdma_config, provider),
	  .metavar = "NAME", .applies = "rdma-backend=ofi|auto",
	  .help = "libfabric provider of the ofi backend, e.g. shm, tcp;ofi_rxm, efa, cxi, psm3 (default: the "
	          "first that works)" },
	{ .name = NULL },
};
/* clang-format on */

const struct ng_option *const ng_rdma_reads[] = {
#if NG_HAVE_VERBS
    ng_verbs_options,
#endif
    NULL,
};

/* The words of --rdma-backend, in the order of its .choices. */
static const char *const ng_rdma_backend_words[] = {"auto", "verbs", "shm", "ofi", "ucx"};

void ng_rdma_conf_read(const struct ng_args *a, const char **backend_p, struct ng_rdma_conf *cf)
{
	struct ng_rdma_config o;
#if NG_HAVE_VERBS
	struct ng_verbs_config v;
#endif

	ng_config_read(a, ng_rdma_options, &o);
	*backend_p = o.backend >= 0 && (size_t)o.backend < sizeof(ng_rdma_backend_words) / sizeof(char *)
	                 ? ng_rdma_backend_words[o.backend]
	                 : NULL;
	cf->provider = o.provider;
	cf->gid_index = -1;
#if NG_HAVE_VERBS
	ng_config_read(a, ng_verbs_options, &v);
	cf->dev = v.dev;
	cf->port = (int)v.port;
	if (v.gid_given)
		cf->gid_index = (int)v.gid;
	cf->sl = (int)v.sl;
	cf->tclass = (int)v.tclass;
#endif
}
