/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ib modules as data (modules/ib/ib_desc.c): their option tables, and the
 * descriptors' data fields, which the executable's descriptors (no
 * operations: .plugin = "verbs", core/plugin.h) and ngauge-verbs.so's
 * (rc.c, ud.c: the operations) both take from the macros below, so they
 * cannot differ.  Includes no verbs header.
 */
#ifndef NG_IB_IB_DESC_H
#define NG_IB_IB_DESC_H

#include "module.h"
#include "options.h"

/* The option tables of ibrc and ibuc (the connected modules) and of ibud:
 * the verbs core's device options (ng_verbs_options), then their own --ib-*
 * options. */
extern const struct ng_option *const ng_ib_conn_options[];
extern const struct ng_option *const ng_ib_ud_options[];

/* ibud's largest message: a 4096-byte MTU less the 40-byte GRH (ud.c). */
#define NG_IBUD_MAX_MSG (4096u - 40u)

/* clang-format off */
#define NG_MODULE_IBRC_DATA                                                                                    \
	.name = "ibrc",                                                                                        \
	.desc = "InfiniBand/RoCE verbs, reliable connection (send/receive, or --ib-mode write: the rdma "      \
	        "module's channel over the verbs backend)",                                                    \
	.plugin = "verbs",                                                                                     \
	.caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,         \
	.options = ng_ib_conn_options,                                                                         \
	.max_msg = 0,                                                                                          \
	.hdr_bytes = 0

#define NG_MODULE_IBUC_DATA                                                                                    \
	.name = "ibuc",                                                                                        \
	.desc = "InfiniBand/RoCE verbs, unreliable connection (a lost message fails the run after --timeout)", \
	.plugin = "verbs",                                                                                     \
	.caps = NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,                           \
	.options = ng_ib_conn_options,                                                                         \
	.max_msg = 0,                                                                                          \
	.hdr_bytes = 0

#define NG_MODULE_IBUD_DATA                                                                                    \
	.name = "ibud",                                                                                        \
	.desc = "InfiniBand/RoCE verbs, unreliable datagrams (messages up to the MTU minus the 40-byte GRH)",  \
	.plugin = "verbs",                                                                                     \
	.caps = NG_CAP_CHANNEL | NG_CAP_REGMEM | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,                           \
	.options = ng_ib_ud_options,                                                                           \
	.max_msg = NG_IBUD_MAX_MSG,                                                                            \
	.hdr_bytes = 0
/* clang-format on */

#endif
