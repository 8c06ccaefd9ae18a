/* SPDX-License-Identifier: BSD-3-Clause */
/* The names of the capability flags of the module contract (module.h). */
#include "module.h"

const char *ng_cap_name(unsigned cap)
{
	switch (cap) {
	case NG_CAP_RELIABLE:
		return "reliable delivery";
	case NG_CAP_CHANNEL:
		return "two-sided send/recv";
	case NG_CAP_REGMEM:
		return "registered memory";
	case NG_CAP_NONBLOCK:
		return "non-blocking operations";
	case NG_CAP_ONESIDED:
		return "one-sided operations";
	case NG_CAP_MPI:
		return "MPI launch";
	case NG_CAP_MULTIRANK:
		return "more than two ranks";
	case NG_CAP_ALLTOALL:
		return "a native alltoall collective";
	case NG_CAP_COLL:
		return "native collectives";
	default:
		return "unknown capability";
	}
}
