/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The options of the verbs core's device selection and addressing: --ib-dev,
 * --ib-port, --ib-gid, --ib-sl, --ib-tclass (namespace "ib").  The ib modules list this table first, the RDMA
 * layer's verbs backend reads it.  Data of the executable (core/plugin.h):
 * includes no verbs header.
 */
#ifndef NG_VERBS_OPTIONS_H
#define NG_VERBS_OPTIONS_H

#include "options.h"

extern const struct ng_option ng_verbs_options[];

#endif
