/* SPDX-License-Identifier: BSD-3-Clause */
/* The options of the modules on the RDMA layer (rdma, rma, spipe): one
 * table, owner "rdma", declared once.  The layer's and the channel's options
 * (--rdma-*, --ofi-provider) apply to every module; --rma-* to the rma
 * module only, --spipe-* to spipe only (.modules). */
#include <stddef.h>

#include "options.h"

/* clang-format off */
const struct ng_option ng_rdma_options[] = {
	{ .name = "rdma-backend", .type = NG_OPT_CHOICE, .def = "auto", .choices = "auto|verbs|shm|ofi",
	  .help = "RDMA layer backend: verbs (HCA, Soft-RoCE), shm (ranks on one host), ofi (libfabric); auto: the "
	          "first that opens, in that order" },
	{ .name = "ofi-provider", .type = NG_OPT_STRING, .metavar = "NAME",
	  .help = "libfabric provider of the ofi backend, e.g. shm, tcp;ofi_rxm, efa, cxi, psm3 (default: the "
	          "first that works)" },
	{ .name = "rdma-ring", .type = NG_OPT_INT, .def = "32", .metavar = "N",
	  .help = "ring slots per peer of the two-sided channel (4-4096)" },
	{ .name = "rdma-eager", .type = NG_OPT_SIZE, .def = "8K",
	  .help = "largest message written through the ring; larger ones are written into the receive buffer "
	          "(64-1M)" },
	{ .name = "rdma-poll", .type = NG_OPT_CHOICE, .def = "spin", .choices = "spin|yield",
	  .help = "waiting: spin, or yield the CPU after every empty poll (more ranks than cores)" },
	{ .name = "rma-design", .type = NG_OPT_CHOICE, .def = "direct", .choices = "direct|sendrecv",
	  .help = "rma: direct (put = RDMA write, get = RDMA read, flags by RDMA; no target involvement), or "
	          "sendrecv (operations shipped as messages, applied by the target in its synchronisation calls)",
	  .modules = "rma" },
	{ .name = "rma-sched", .type = NG_OPT_CHOICE, .def = "none", .choices = "none|reorder|aggregate|all",
	  .help = "rma direct: scheduling within an epoch: reorder (gets first, reads and writes interleaved), "
	          "aggregate (small operations travel with the epoch's completion message), all (both)",
	  .modules = "rma" },
	{ .name = "rma-aggregate", .type = NG_OPT_SIZE, .def = "256",
	  .help = "rma: operations up to this many bytes are aggregated (--rma-sched aggregate|all)",
	  .modules = "rma" },
	{ .name = "spipe-mode", .type = NG_OPT_CHOICE, .def = "super", .choices = "reg|rcache|copy|pipeline|super",
	  .help = "spipe: messages above --rdma-eager: reg (register the buffers on the fly), rcache (keep the "
	          "registrations), copy (whole messages through a registered buffer), pipeline (fixed chunks "
	          "C_opt), super (the superpipeline)",
	  .modules = "spipe" },
	{ .name = "spipe-block", .type = NG_OPT_SIZE, .def = "4K",
	  .help = "spipe super: sub-block bytes (a power of two, 64 B-1M), each ending in an 8-byte flag",
	  .modules = "spipe" },
	{ .name = "spipe-buffers", .type = NG_OPT_INT, .def = "3", .metavar = "N",
	  .help = "spipe pipeline/super: registered buffers per peer a message is folded onto (1-16)",
	  .modules = "spipe" },
	{ .name = "spipe-bufsize", .type = NG_OPT_SIZE, .def = "1M",
	  .help = "spipe pipeline/super: bytes per buffer, the largest chunk (a multiple of --spipe-block)",
	  .modules = "spipe" },
	{ .name = "spipe-c0", .type = NG_OPT_SIZE, .metavar = "BYTES",
	  .help = "spipe super: first chunk (default from the model: B_copy x 2 lambda_net)",
	  .modules = "spipe" },
	{ .name = "spipe-q", .type = NG_OPT_DOUBLE, .metavar = "Q",
	  .help = "spipe super: chunk growth factor (default from the model: B_copy / B_net, at least 1.5)",
	  .modules = "spipe" },
	{ .name = "spipe-fresh", .type = NG_OPT_FLAG,
	  .help = "spipe: every message on memory the protocol has never seen (the registration cache forgets "
	          "the buffers before each message, as when they were freed and allocated anew)",
	  .modules = "spipe" },
	{ .name = NULL },
};
/* clang-format on */
