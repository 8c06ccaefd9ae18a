/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the ib modules' descriptors in the executable (modules/ib/ib_desc.c,
 * the one copy of their data, core/module.h) and their code in
 * ngauge-verbs.so (rc.c, ud.c: the operations) agree on: ibud's largest
 * message.  Includes no verbs header.
 */
#ifndef NG_IB_IB_DESC_H
#define NG_IB_IB_DESC_H

/* ibud's largest message: a 4096-byte MTU less the 40-byte GRH (ud.c). */
#define NG_IBUD_MAX_MSG (4096u - 40u)

#endif
