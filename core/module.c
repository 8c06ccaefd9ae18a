/* SPDX-License-Identifier: BSD-3-Clause */
#include "module.h"
#include "args.h"

ng_status ng_waitall(struct ng_comm *c, struct ng_req *reqs, size_t n)
{
	ng_status first = NG_OK;

	if (c->msg.waitall && n > 1) {
		ng_where_enter_req(&c->where, NG_AT_WAIT);
		first = c->msg.waitall(c, reqs, n);
		ng_where_leave(&c->where);
		return first;
	}
	for (size_t i = 0; i < n; i++) {
		ng_status st = ng_wait(c, &reqs[i]);
		if (st != NG_OK && first == NG_OK)
			first = st;
	}
	return first;
}

/* Declares @tables (a NULL-terminated list), skipping those declared already. */
static int declare_tables(struct ng_args *a, const struct ng_option *const *tables, const char *owner)
{
	for (; tables && *tables; tables++)
		if (!ng_args_declared(a, *tables) && ng_args_declare(a, *tables, owner))
			return -1;
	return 0;
}

int ng_module_declare(struct ng_args *a, const struct ng_module *m)
{
	if (declare_tables(a, m->options, m->name))
		return -1;
	return declare_tables(a, m->reads, m->name);
}
