/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "ucx" module: two-sided messages over UCX's UCP layer (ucx_int.h).
 *
 * Setup.  open() reads the UCX configuration of the environment (UCX_TLS,
 * UCX_NET_DEVICES, ...: ucp_config_read), creates a context with the one
 * feature the chosen API needs (UCP_FEATURE_TAG, _AM or _STREAM, plus
 * _WAKEUP for --ucx-poll wait: as ucx_perftest does, so that UCX selects
 * transports for what is used) and one worker (UCS_THREAD_MODE_SINGLE), and
 * exchanges the workers' addresses over the bootstrap (two all-gathers: the
 * lengths, then the addresses in slots of the longest).  An endpoint to a
 * peer is created when an operation first names it (ng_ucx_ep); with
 * --connect eager every endpoint is created in open().  Rank 0 creates its
 * endpoint to rank 1 in open() in any case, so that the transports UCX
 * picked for it are known for the device string (the table's head line and
 * the result's env.device).
 *
 * Memory.  alloc() is aligned_alloc, mapped with ucp_mem_map (registered
 * with every memory domain of the context, as a UCX application that
 * pre-registers does); free() unmaps and frees; close() releases the
 * leftovers.
 *
 * Close.  Each endpoint is closed with a flush (ucp_ep_close_nbx), bounded
 * by one second of progress (a peer that already left cannot acknowledge),
 * then forced; then the worker and the context are destroyed.
 *
 * Report.  The module's block of the result (core/module.h, report): the
 * UCX version, the API and the waiting, and under "setup" the UCX_*
 * variables of the environment and, for every endpoint rank 0 made, the
 * transports of its lanes and the protocol thresholds UCX printed for it
 * (ucx_info.c).  ngauge compare flags any difference in a module's "setup"
 * (plots/compare.c).
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "bootstrap.h"
#include "module.h"
#include "modules/ucx/ucx_desc.h"
#include "modules/ucx/ucx_int.h"
#include "options.h"
#include "status.h"

/* The longest worker address a rank may publish (UCX 1.13's are a few
 * hundred bytes: a device and its address per transport). */
#define NG_UCX_ADDR_MAX 65536

static const char *const ng_ucx_api_names[] = {"tag", "am", "stream"};
static const char *const ng_ucx_poll_names[] = {"spin", "wait"};

/* Seconds of CLOCK_MONOTONIC (close's bound). */
static double ng_ucx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Closes @ep with a flush bounded by one second of progress, then by force. */
static void ng_ucx_ep_close(struct ng_ucx *u, ucp_ep_h ep)
{
	ucp_request_param_t prm = {0};
	ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &prm);
	double end = ng_ucx_now() + 1.0;

	if (!UCS_PTR_IS_PTR(req))
		return;
	while (ucp_request_check_status(req) == UCS_INPROGRESS && ng_ucx_now() < end)
		ucp_worker_progress(u->worker);
	if (ucp_request_check_status(req) == UCS_INPROGRESS) {
		/* The peer is gone: the forced close releases what the flush
		 * waits for. */
		ucp_request_param_t force = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
		                             .flags = UCP_EP_CLOSE_FLAG_FORCE};
		ucs_status_ptr_t r2 = ucp_ep_close_nbx(ep, &force);

		while (UCS_PTR_IS_PTR(r2) && ucp_request_check_status(r2) == UCS_INPROGRESS)
			ucp_worker_progress(u->worker);
		if (UCS_PTR_IS_PTR(r2))
			ucp_request_free(r2);
	}
	ucp_request_free(req);
}

static void ng_ucx_release(struct ng_ucx *u)
{
	for (int r = 0; u->eps && r < u->base.size; r++)
		if (u->eps[r])
			ng_ucx_ep_close(u, u->eps[r]);
	free(u->eps);
	u->eps = NULL;
	ng_ucx_am_release(u);
	for (size_t i = 0; i < u->nmems; i++) {
		ucp_mem_unmap(u->ctx, u->mems[i].memh);
		free(u->mems[i].buf);
	}
	free(u->mems);
	u->mems = NULL;
	u->nmems = u->capmems = 0;
	free(u->peer_addrs);
	u->peer_addrs = NULL;
	if (u->addr)
		ucp_worker_release_address(u->worker, u->addr);
	u->addr = NULL;
	if (u->worker)
		ucp_worker_destroy(u->worker);
	u->worker = NULL;
	if (u->ctx)
		ucp_cleanup(u->ctx);
	u->ctx = NULL;
}

static void ng_ucx_close(struct ng_comm *c)
{
	struct ng_ucx *u = ng_ucx_of(c);

	ng_ucx_release(u);
	free(u);
}

/* The context and the worker of @u, of the features its API needs. */
static ng_status ng_ucx_setup(struct ng_ucx *u, int size)
{
	static const uint64_t features[] = {UCP_FEATURE_TAG, UCP_FEATURE_AM, UCP_FEATURE_STREAM};
	ucp_params_t params = {0};
	ucp_worker_params_t wp = {0};
	ucp_config_t *cfg;
	ucs_status_t s;

	s = ucp_config_read(NULL, NULL, &cfg);
	if (s != UCS_OK)
		return ng_ucx_fail("ucp_config_read (the UCX_* environment)", -1, s);
	params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
	params.features = features[u->api] | (u->poll == NG_UCX_POLL_WAIT ? UCP_FEATURE_WAKEUP : 0);
	params.estimated_num_eps = (size_t)size;
	s = ucp_init(&params, cfg, &u->ctx);
	ucp_config_release(cfg);
	if (s != UCS_OK) {
		u->ctx = NULL;
		return ng_ucx_fail("ucp_init", -1, s);
	}
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	s = ucp_worker_create(u->ctx, &wp, &u->worker);
	if (s != UCS_OK) {
		u->worker = NULL;
		return ng_ucx_fail("ucp_worker_create", -1, s);
	}
	s = ucp_worker_get_address(u->worker, &u->addr, &u->addr_len);
	if (s != UCS_OK) {
		u->addr = NULL;
		return ng_ucx_fail("ucp_worker_get_address", -1, s);
	}
	if (u->poll == NG_UCX_POLL_WAIT) {
		s = ucp_worker_get_efd(u->worker, &u->efd);
		if (s != UCS_OK)
			return ng_ucx_fail("ucp_worker_get_efd (--ucx-poll wait)", -1, s);
	}
	return NG_OK;
}

/* Every rank's worker address into u->peer_addrs (collective). */
static ng_status ng_ucx_exchange(struct ng_ucx *u, struct ng_boot *boot)
{
	size_t n = (size_t)boot->size;
	uint64_t mine = u->addr_len, *lens = calloc(n, sizeof(*lens)), longest = 0;
	unsigned char *me = NULL;
	ng_status st;

	if (!lens)
		goto err_nomem;
	st = ng_boot_allgather(boot, &mine, sizeof(mine), lens);
	if (st != NG_OK)
		goto err_free_lens;
	for (size_t r = 0; r < n; r++) {
		if (lens[r] == 0 && r != (size_t)boot->rank) {
			/* the --server's child refused (ng_ucx_refuse): said there */
			ng_error("ucx: rank %zu refuses the ucx module (a --server offers it to no client: "
			         "doc/security.md)",
			         r);
			st = NG_ERR_USAGE;
			goto err_free_lens;
		}
		if (lens[r] == 0 || lens[r] > NG_UCX_ADDR_MAX) {
			ng_error("ucx: rank %zu published a worker address of %llu bytes (1..%d expected)", r,
			         (unsigned long long)lens[r], NG_UCX_ADDR_MAX);
			st = NG_ERR_PROTO;
			goto err_free_lens;
		}
		longest = lens[r] > longest ? lens[r] : longest;
	}
	u->slot = (size_t)longest + sizeof(uint64_t);
	me = calloc(1, u->slot);
	u->peer_addrs = calloc(n, u->slot);
	if (!me || !u->peer_addrs) {
		free(me);
		free(lens);
		goto err_nomem;
	}
	memcpy(me, &mine, sizeof(mine));
	memcpy(me + sizeof(mine), u->addr, u->addr_len);
	st = ng_boot_allgather(boot, me, u->slot, u->peer_addrs);
	free(me);
err_free_lens:
	free(lens);
	return st;
err_nomem:
	ng_error("ucx: out of memory");
	return NG_ERR_NOMEM;
}

/*
 * A --server's child: the client's worker address holds the addresses UCX
 * would connect to, in UCX's packed format, which ng_boot_may_connect cannot
 * check (doc/security.md).  Refused before UCX is opened; the refusal (a
 * worker address of 0 bytes) still goes through the exchange, so that the
 * client says it too (ng_ucx_exchange).
 */
static ng_status ng_ucx_refuse(struct ng_boot *boot)
{
	uint64_t none = 0, *lens = calloc((size_t)boot->size, sizeof(*lens));

	ng_error("ucx: not offered to --server clients: UCX connects to the addresses inside a peer's worker "
	         "address, which --allow cannot check");
	if (lens)
		(void)ng_boot_allgather(boot, &none, sizeof(none), lens);
	free(lens);
	return NG_ERR_USAGE;
}

/* The device string: "UCX 1.13.1 tag spin UCX_TLS=sm,self; to rank 1:
 * posix/memory cma/memory". */
static void ng_ucx_device(struct ng_ucx *u)
{
	const char *tls = getenv("UCX_TLS");
	char *d = u->base.device;
	size_t len = sizeof(u->base.device);
	int n = snprintf(d, len, "UCX %s %s %s UCX_TLS=%s", ucp_get_version_string(),
	                 ng_ucx_api_names[u->api], ng_ucx_poll_names[u->poll], tls ? tls : "(default: all)");

	if (n > 0 && (size_t)n < len && u->base.rank == 0 && u->base.size > 1 && u->eps[1]) {
		char line[128];

		ng_ucx_ep_tls_line(u->eps[1], line, sizeof(line));
		snprintf(d + n, len - (size_t)n, "; to rank 1: %s", line);
	}
}

static ng_status ng_ucx_open(const struct ng_module *mod, const struct ng_module_env *env,
                             struct ng_comm **comm_p)
{
	struct ng_ucx *u = calloc(1, sizeof(*u));
	struct ng_ucx_config cf = {.api = NG_UCX_API_TAG, .poll = NG_UCX_POLL_SPIN};
	struct ng_boot *boot = env->boot;
	ucp_ep_h ep;
	ng_status st;

	if (!u) {
		ng_error("ucx: out of memory");
		return NG_ERR_NOMEM;
	}
	u->efd = -1;
	if (env->args)
		ng_config_read(env->args, ng_ucx_options, &cf);
	if (boot->peer_addr[0]) {
		st = ng_ucx_refuse(boot);
		goto err_free;
	}
	u->api = cf.api;
	u->poll = cf.poll;
	ng_comm_init(&u->base, mod, &ng_module_ops_ucx, boot->rank, boot->size, env->cancel);
	u->base.spins = u->poll == NG_UCX_POLL_SPIN;
	u->eps = calloc((size_t)boot->size, sizeof(*u->eps));
	if (!u->eps) {
		ng_error("ucx: out of memory");
		st = NG_ERR_NOMEM;
		goto err_free;
	}
	st = ng_ucx_setup(u, boot->size);
	if (st == NG_OK && u->api == NG_UCX_API_AM)
		st = ng_ucx_am_setup(u);
	if (st != NG_OK)
		goto err_release;
	st = ng_ucx_exchange(u, boot);
	if (st != NG_OK)
		goto err_release;
	for (int r = 0; r < boot->size; r++) {
		bool now = r != boot->rank && (!env->connect_lazy || (boot->rank == 0 && r == 1));

		if (now && (st = ng_ucx_connect(u, r, &ep)) != NG_OK)
			goto err_release;
	}
	ng_ucx_device(u);
	*comm_p = &u->base;
	return NG_OK;

err_release:
	ng_ucx_release(u);
err_free:
	free(u);
	return st;
}

static ng_status ng_ucx_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	struct ng_ucx *u = ng_ucx_of(c);
	size_t align = len >= 4096 ? (size_t)sysconf(_SC_PAGESIZE) : 64;
	ucp_mem_map_params_t mp = {0};
	size_t rounded;
	ucs_status_t s;
	void *buf;

	if (len > SIZE_MAX - align) {
		ng_error("ucx: cannot allocate %zu bytes", len);
		return NG_ERR_NOMEM;
	}
	rounded = (len + align - 1) / align * align;
	if (!rounded)
		rounded = align;
	if (u->nmems == u->capmems) {
		size_t cap = u->capmems ? 2 * u->capmems : 8;
		struct ng_ucx_mem *mems = realloc(u->mems, cap * sizeof(*mems));

		if (!mems) {
			ng_error("ucx: out of memory");
			return NG_ERR_NOMEM;
		}
		u->mems = mems;
		u->capmems = cap;
	}
	buf = aligned_alloc(align, rounded);
	if (!buf) {
		ng_error("ucx: cannot allocate %zu bytes", len);
		return NG_ERR_NOMEM;
	}
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	mp.address = buf;
	mp.length = rounded;
	s = ucp_mem_map(u->ctx, &mp, &u->mems[u->nmems].memh);
	if (s != UCS_OK) {
		free(buf);
		return ng_ucx_fail("ucp_mem_map", -1, s);
	}
	u->mems[u->nmems++].buf = buf;
	*buf_p = buf;
	return NG_OK;
}

static void ng_ucx_free(struct ng_comm *c, void *buf)
{
	struct ng_ucx *u = ng_ucx_of(c);

	for (size_t i = u->nmems; i-- > 0;) {
		if (u->mems[i].buf == buf) {
			ucp_mem_unmap(u->ctx, u->mems[i].memh);
			free(buf);
			u->mems[i] = u->mems[--u->nmems];
			return;
		}
	}
	ng_error("ucx: free of %p, which this instance did not allocate", buf);
}

/* The module's block of the result (see the top of the file). */
static json_t *ng_ucx_report(struct ng_comm *c)
{
	struct ng_ucx *u = ng_ucx_of(c);
	json_t *peers = json_object(), *setup;

	for (int r = 0; r < c->size; r++) {
		json_t *tls, *protos;
		char key[16];

		if (!u->eps[r])
			continue;
		tls = json_array();
		protos = json_object();
		ng_ucx_ep_info(u->eps[r], tls, protos);
		snprintf(key, sizeof(key), "%d", r);
		json_object_set_new(peers, key,
		                    json_pack("{s:o,s:o}", "transports", tls, "protocols", protos));
	}
	setup = json_pack("{s:s,s:s,s:s,s:o,s:o}", "version", ucp_get_version_string(), "api",
	                  ng_ucx_api_names[u->api], "poll", ng_ucx_poll_names[u->poll], "env",
	                  ng_ucx_env_json(), "peers", peers);
	return json_pack("{s:o,s:i,s:I,s:I}", "setup", setup, "endpoints", u->neps, "sent",
	                 (json_int_t)u->nsent, "received", (json_int_t)u->nrecvd);
}

/* The instance's state for the watchdog: plain counters only. */
static void ng_ucx_stall(struct ng_comm *c, char *buf, size_t len)
{
	const struct ng_ucx *u = ng_ucx_of(c);

	snprintf(buf, len, "%llu messages sent, %llu received, %d endpoint%s", (unsigned long long)u->nsent,
	         (unsigned long long)u->nrecvd, u->neps, u->neps == 1 ? "" : "s");
}

const struct ng_module_ops ng_module_ops_ucx = {
    .open = ng_ucx_open,
    .close = ng_ucx_close,
    .alloc = ng_ucx_alloc,
    .free = ng_ucx_free,
    .msg = &ng_ucx_msg_ops,
    .report = ng_ucx_report,
    .stall = ng_ucx_stall,
};
