/* SPDX-License-Identifier: BSD-3-Clause */
#include "module.h"

ng_status ng_waitall(struct ng_comm *c, struct ng_req *reqs, size_t n)
{
	ng_status first = NG_OK;
	for (size_t i = 0; i < n; i++) {
		ng_status st = ng_wait(c, &reqs[i]);
		if (st != NG_OK && first == NG_OK)
			first = st;
	}
	return first;
}
