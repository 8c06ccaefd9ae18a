/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the ib modules' descriptors in the executable (modules/ib/ib_desc.c,
 * the one copy of their data, core/module.h) and their code in
 * ngauge-verbs.so (rc.c, ud.c: the operations) agree on: the option
 * tables and what they are read into, and ibud's largest message.  Includes
 * no verbs header.
 */
#ifndef NG_IB_IB_DESC_H
#define NG_IB_IB_DESC_H

#include <stddef.h>

#include "options.h"

/* The ib modules' own option tables (ib_desc.c; each module lists those it
 * reads), read by ng_ib_conf_read (ib.c) into one struct ng_ib_config. */
extern const struct ng_option ng_ib_mode_options[];  /* --ib-mode */
extern const struct ng_option ng_ib_ring_options[];  /* --ib-ring */
extern const struct ng_option ng_ib_eager_options[]; /* --ib-eager */
extern const struct ng_option ng_ib_poll_options[];  /* --ib-poll */

struct ng_ib_config {
	int mode;       /* --ib-mode: send, write, read (its word's index) */
	long long ring; /* --ib-ring */
	size_t eager;   /* --ib-eager */
	int poll;       /* --ib-poll: spin, yield (its word's index) */
};

/* ibud's largest message: a 4096-byte MTU less the 40-byte GRH (ud.c). */
#define NG_IBUD_MAX_MSG (4096u - 40u)

#endif
