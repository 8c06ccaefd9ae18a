/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ucx module's data in the executable (modules/ucx/ucx_desc.c: its
 * descriptor, the one copy, core/module.h) and what its code in
 * ngauge-ucx.so (ucx.c, ucx_data.c, ucx_info.c: modules/ucx/ucx_int.h)
 * shares with it: the option table and the configuration it is read into.
 * Includes no UCX header: the executable does not link UCX.
 */
#ifndef NG_MODULES_UCX_DESC_H
#define NG_MODULES_UCX_DESC_H

#include <stdbool.h>

#include "module.h"
#include "options.h"

/* --ucx-api's words, in the order of its .choices. */
enum ng_ucx_api { NG_UCX_API_TAG, NG_UCX_API_AM, NG_UCX_API_STREAM };
/* --ucx-poll's words, in the order of its .choices. */
enum ng_ucx_poll { NG_UCX_POLL_SPIN, NG_UCX_POLL_WAIT };

/* The module's options (owner "ucx"), read into struct ng_ucx_config by
 * ng_config_read at open. */
extern const struct ng_option ng_ucx_options[];

struct ng_ucx_config {
	int api;  /* --ucx-api: enum ng_ucx_api */
	int poll; /* --ucx-poll: enum ng_ucx_poll */
};

#endif
