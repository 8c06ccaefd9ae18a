/* SPDX-License-Identifier: BSD-3-Clause */
/* The ucx module's descriptor and options in the executable; its operations
 * are ngauge-ucx.so's entry "module:ucx" (ucx.c; core/plugin.h). */
#include "modules/ucx/ucx_desc.h"

const struct ng_option ng_ucx_options[] = {
    {.name = "ucx-api",
     NG_CHOICE_AT(struct ng_ucx_config, api),
     .def = "tag",
     .choices = "tag|am|stream",
     .help = "the UCP calls that carry a message: tag matching (ucp_tag_send_nbx/ucp_tag_recv_nbx, tag = the "
             "sender's rank), active messages (ucp_am_send_nbx and a handler), or the byte stream of an "
             "endpoint (ucp_stream_send_nbx/ucp_stream_recv_nbx)"},
    {.name = "ucx-poll",
     NG_CHOICE_AT(struct ng_ucx_config, poll),
     .def = "spin",
     .choices = "spin|wait",
     .help = "waiting: spin on ucp_worker_progress (one core per rank), or sleep in poll() on the worker's "
             "event fd (ucp_worker_arm) when a progress call finds nothing"},
    {.name = NULL},
};

static const struct ng_option *const ng_ucx_option_tables[] = {ng_ucx_options, NULL};

const struct ng_module ng_module_ucx = {
    .name = "ucx",
    .desc = "UCX's UCP layer: a context and a worker per rank, an endpoint per peer made on first use, "
            "messages by tag matching, active messages or streams (--ucx-api), memory mapped by ucp_mem_map",
    .plugin = "ucx",
    .options = ng_ucx_option_tables,
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .max_msg = 0,
    .hdr_bytes = 0,
};
