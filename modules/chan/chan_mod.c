/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A module on the channel (chan.h): the instance base that the rdma, rma
 * and spipe modules and ibrc/ibuc --ib-mode write share (the layer opened
 * with the channel's options, the channel on it, alloc/free as blocks of
 * the channel, the channel's two-sided operations), and the channel's
 * options.  The channel's protocol is chan.c's; the "rdma" module is
 * modules/rdma/rdma_module.c.
 */
#include "config.h"

#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "module.h"
#include "modules/chan/chan.h"
#include "modules/rdmalayer/rdma.h"
#include "options.h"

/* ---- a module on the channel ------------------------------------------ */

static inline struct ng_chan_mod *cm_of(struct ng_comm *c)
{
	return ng_container_of(c, struct ng_chan_mod, base);
}

static ng_status cm_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *req)
{
	return ng_chan_isend(cm_of(c)->ch, peer, buf, len, req);
}

static ng_status cm_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *req)
{
	return ng_chan_irecv(cm_of(c)->ch, peer, buf, len, req);
}

static ng_status cm_test(struct ng_comm *c, struct ng_req *req, bool *done_p)
{
	return ng_chan_test(cm_of(c)->ch, req, done_p);
}

static ng_status cm_wait(struct ng_comm *c, struct ng_req *req)
{
	return ng_chan_wait(cm_of(c)->ch, req);
}

const struct ng_msg_ops ng_chan_msg_ops = {
    .isend = cm_isend,
    .irecv = cm_irecv,
    .test = cm_test,
    .wait = cm_wait,
};

ng_status ng_chan_mod_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	struct ng_chan_mod *cm = cm_of(c);
	struct ng_rdma_mr *mr;
	ng_status st = ng_rdma_mem_alloc(cm->r, len ? len : 1, &mr);

	if (st != NG_OK)
		return st;
	st = ng_chan_block_add(cm->ch, mr);
	if (st != NG_OK) {
		ng_rdma_mem_free(cm->r, mr);
		return st;
	}
	*buf_p = mr->base;
	return NG_OK;
}

void ng_chan_mod_free(struct ng_comm *c, void *buf)
{
	struct ng_chan_mod *cm = cm_of(c);
	struct ng_rdma_mr *mr = ng_chan_block_remove(cm->ch, buf);

	assert(mr && "free of memory that alloc did not give");
	ng_rdma_mem_free(cm->r, mr);
}

void ng_chan_mod_fini(struct ng_chan_mod *cm)
{
	if (cm->ch)
		ng_chan_blocks_free(cm->ch);
	ng_chan_destroy(cm->ch);
	cm->ch = NULL;
	ng_rdma_close(cm->r);
	cm->r = NULL;
}

ng_status ng_chan_mod_init(struct ng_chan_mod *cm, const struct ng_module *m, const struct ng_module_ops *ops,
                           const struct ng_module_env *env, const struct ng_chan_conf *cf)
{
	struct ng_boot *b = env->boot;
	struct ng_rdma_conf rc = cf->rdma;
	ng_status st;

	ng_comm_init(&cm->base, m, ops, b->rank, b->size, env->cancel);
	cm->base.spins = !rc.yield;
	rc.who = m->name;
	rc.stage = ng_chan_stage_need(cf->eager);
	rc.cancel = env->cancel;
	rc.timeout_s = env->timeout_s;
	rc.lazy = env->connect_lazy;
	st = ng_rdma_open(cf->backend, &rc, b, &cm->r);
	if (st != NG_OK)
		return st;
	if (rc.unreliable)
		cm->base.caps &= ~(unsigned)NG_CAP_RELIABLE;
	cm->base.pins = (cm->r->caps & NG_RDMA_CAP_PINS) != 0;
	st = ng_chan_new(cm->r, b, cf->ring, cf->eager, &cm->ch);
	if (st != NG_OK) {
		ng_chan_mod_fini(cm);
		return st;
	}
	if (rc.unreliable)
		ng_chan_set_lossy(cm->ch);
	snprintf(cm->base.device, sizeof(cm->base.device), "%.120s, ring %zu x %zu B", cm->r->desc, cf->ring,
	         cf->eager);
	return NG_OK;
}

void ng_chan_mod_close(struct ng_comm *c)
{
	struct ng_chan_mod *cm = cm_of(c);

	ng_chan_mod_fini(cm);
	free(cm);
}

json_t *ng_chan_mod_report(struct ng_comm *c)
{
	struct ng_rdma *r = cm_of(c)->r;
	json_t *o, *setup;

	if (!r)
		return NULL;
	o = r->qps_kept ? json_pack("{s:s,s:I,s:I,s:f}", "connect", r->lazy ? "lazy" : "eager", "qps",
	                            (json_int_t)r->qps, "qps_at_open", (json_int_t)r->qps_at_open,
	                            "connect_ms", (double)r->connect_ns * 1e-6)
	                : NULL;
	setup = r->be->setup ? r->be->setup(r) : NULL;
	if (!setup)
		return o;
	if (!o)
		o = json_object();
	json_object_set_new(o, "setup", setup);
	return o;
}

/* What serves an instance of ng_chan_open: the rdma module's operations
 * (modules/rdma/rdma_module.c) but open. */
static const struct ng_module_ops chan_ops = {
    .close = ng_chan_mod_close,
    .alloc = ng_chan_mod_alloc,
    .free = ng_chan_mod_free,
    .msg = &ng_chan_msg_ops,
    .report = ng_chan_mod_report,
};

ng_status ng_chan_open(const struct ng_module *m, const struct ng_module_env *env,
                       const struct ng_chan_conf *cf, struct ng_comm **comm_p)
{
	struct ng_chan_mod *cm = calloc(1, sizeof(*cm));
	ng_status st;

	*comm_p = NULL;
	if (!cm) {
		ng_error("%s: out of memory", m->name);
		return NG_ERR_NOMEM;
	}
	st = ng_chan_mod_init(cm, m, &chan_ops, env, cf);
	if (st != NG_OK) {
		free(cm);
		return st;
	}
	*comm_p = &cm->base;
	return NG_OK;
}

/* ---- the channel's options -------------------------------------------- */

/* clang-format off */
const struct ng_option ng_chan_options[] = {
	{ .name = "rdma-ring", NG_INT_AT(struct ng_chan_config, ring),
	  .def = "32", .metavar = "N", .min = 4, .max = 4096,
	  .help = "ring slots per peer of the two-sided channel (4-4096)" },
	{ .name = "rdma-eager", NG_SIZE_AT(struct ng_chan_config, eager),
	  .def = "8K", .min = 64, .max = 1 << 20,
	  .help = "largest message written through the ring; larger ones are written into the receive buffer "
	          "(64-1M)" },
	{ .name = "rdma-poll", NG_CHOICE_AT(struct ng_chan_config, poll),
	  .def = "spin", .choices = "spin|yield",
	  .help = "waiting: spin, or yield the CPU after every empty poll (more ranks than cores)" },
	{ .name = NULL },
};
/* clang-format on */

/* The word index of --rdma-poll yield. */
#define CH_POLL_YIELD 1

ng_status ng_chan_conf_read(const struct ng_module_env *env, struct ng_chan_conf *cf)
{
	struct ng_chan_config o;
	long long ring;
	size_t eager;

	ng_config_read(env->args, ng_chan_options, &o);
	ring = o.ring;
	eager = o.eager;
	*cf = (struct ng_chan_conf){.ring = (size_t)ring, .eager = eager};
	ng_rdma_conf_read(env->args, &cf->backend, &cf->rdma);
	cf->rdma.yield = o.poll == CH_POLL_YIELD;
	if (ring < NG_CHAN_RING_MIN || ring > NG_CHAN_RING_MAX) {
		if (env->boot->rank == 0)
			ng_error("--rdma-ring %lld is outside %u-%u", ring, NG_CHAN_RING_MIN,
			         NG_CHAN_RING_MAX);
		return NG_ERR_USAGE;
	}
	if (eager < NG_CHAN_EAGER_MIN || eager > NG_CHAN_EAGER_MAX) {
		if (env->boot->rank == 0)
			ng_error("--rdma-eager %zu is outside %u-%zu", eager, NG_CHAN_EAGER_MIN,
			         NG_CHAN_EAGER_MAX);
		return NG_ERR_USAGE;
	}
	return NG_OK;
}
