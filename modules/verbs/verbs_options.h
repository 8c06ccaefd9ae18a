/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The options of the verbs core's device selection and addressing: --ib-dev,
 * --ib-port, --ib-gid, --ib-sl, --ib-tclass (namespace "ib").  The ib modules list this table first, the RDMA
 * layer's verbs backend reads it.  Data of the executable (core/plugin.h):
 * includes no verbs header.
 */
#ifndef NG_VERBS_OPTIONS_H
#define NG_VERBS_OPTIONS_H

#include <stdbool.h>

#include "options.h"

extern const struct ng_option ng_verbs_options[];

/* ng_verbs_options as ng_config_read gives them: the verbs core's selection
 * (ng_ibv_conf_read) and the RDMA layer's verbs backend (ng_rdma_conf_read)
 * read them so. */
struct ng_verbs_config {
	const char *dev;      /* --ib-dev: NULL automatic */
	long long port;       /* --ib-port */
	long long gid;        /* --ib-gid */
	long long sl, tclass; /* --ib-sl, --ib-tclass */
	bool port_given;      /* --ib-port given (else automatic) */
	bool gid_given;       /* --ib-gid given (else automatic) */
};

#endif
