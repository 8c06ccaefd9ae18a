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
	{ .name = "rdma-backend", .type = NG_OPT_CHOICE, .def = "auto", .choices = "auto|verbs|shm|ofi",
	  .help = "RDMA layer backend: verbs (HCA, Soft-RoCE), shm (ranks on one host), ofi (libfabric); auto: the "
	          "first that opens, in that order" },
	{ .name = "ofi-provider", .type = NG_OPT_STRING, .metavar = "NAME", .applies = "rdma-backend=ofi|auto",
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

void ng_rdma_conf_read(const struct ng_args *a, const char **backend_p, struct ng_rdma_conf *cf)
{
	*backend_p = ng_args_str(a, "rdma-backend");
	cf->provider = ng_args_str(a, "ofi-provider");
	cf->gid_index = -1;
#if NG_HAVE_VERBS
	cf->dev = ng_args_str(a, "ib-dev");
	cf->port = (int)ng_args_int(a, "ib-port");
	if (ng_args_given(a, "ib-gid"))
		cf->gid_index = (int)ng_args_int(a, "ib-gid");
	cf->sl = (int)ng_args_int(a, "ib-sl");
	cf->tclass = (int)ng_args_int(a, "ib-tclass");
#endif
}
