/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ucx module's endpoints on first use and its error reports
 * (ucx_int.h): the floor the rest of modules/ucx stands on.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "module.h"
#include "modules/ucx/ucx_int.h"
#include "status.h"

ng_status ng_ucx_fail(const char *call, int peer, ucs_status_t s)
{
	if (peer >= 0)
		ng_error("ucx: %s with rank %d: %s", call, peer, ucs_status_string(s));
	else
		ng_error("ucx: %s: %s", call, ucs_status_string(s));
	switch (s) {
	case UCS_ERR_MESSAGE_TRUNCATED:
		return NG_ERR_TRUNCATED;
	case UCS_ERR_NO_MEMORY:
		return NG_ERR_NOMEM;
	case UCS_ERR_CONNECTION_RESET:
	case UCS_ERR_ENDPOINT_TIMEOUT:
	case UCS_ERR_UNREACHABLE:
		return NG_ERR_PEER_LOST;
	case UCS_ERR_CANCELED:
		return NG_ERR_CANCELLED;
	default:
		return NG_ERR_IO;
	}
}

ng_status ng_ucx_connect(struct ng_ucx *u, int peer, ucp_ep_h *ep_p)
{
	const unsigned char *slot;
	ucp_ep_params_t ep = {0};
	uint64_t len;
	ucs_status_t s;

	if ((unsigned)peer >= (unsigned)u->base.size) {
		ng_error("ucx: rank %d out of range (0..%d)", peer, u->base.size - 1);
		return NG_ERR_USAGE;
	}
	slot = u->peer_addrs + (size_t)peer * u->slot;
	memcpy(&len, slot, sizeof(len));
	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
	ep.address = (const ucp_address_t *)(const void *)(slot + sizeof(len));
	s = ucp_ep_create(u->worker, &ep, &u->eps[peer]);
	if (s != UCS_OK) {
		u->eps[peer] = NULL;
		return ng_ucx_fail("ucp_ep_create", peer, s);
	}
	u->neps++;
	*ep_p = u->eps[peer];
	return NG_OK;
}
