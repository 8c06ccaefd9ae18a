/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs core (see verbs.h): device/port/GID selection, registered
 * memory, queue-pair setup and the poll-loop watchdog.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "modules/verbs/verbs.h"
#include "modules/verbs/verbs_check.h"
#include "peer.h"

#define NG_IBV_ERRLEN    248 /* one selection error line, exchanged between ranks */
#define NG_IBV_TIMEOUT   14  /* RC local ack timeout: 4.096 us * 2^14 = 67 ms */
#define NG_IBV_RETRY     7   /* retry_cnt: the largest valid value */
#define NG_IBV_RNR       7   /* rnr_retry: 7 = retry forever */
#define NG_IBV_RNR_TIMER 12  /* min_rnr_timer: 0.64 ms */
#define NG_IBV_RD_ATOM   16  /* RDMA reads/atomics in flight per QP (device limit if lower) */
#define NG_IBV_HOPS      64

static const char ng_ibv_howto[] =
    "to try ngauge without an RDMA adapter, create a Soft-RoCE device on an Ethernet interface: "
    "'rdma link add rxe0 type rxe netdev IFACE' (modprobe rdma_rxe first; see README.md)";

ng_status ng_ibv_conf_read(const struct ng_args *a, const char *who, bool say, struct ng_ibv_conf *cf)
{
	struct ng_verbs_config o;
	long long port, gid, sl, tclass;

	ng_config_read(a, ng_verbs_options, &o);
	port = o.port;
	gid = o.gid_given ? o.gid : -1;
	sl = o.sl;
	tclass = o.tclass;
	cf->dev = o.dev;
	if (o.port_given && (port < 1 || port > 255)) {
		if (say)
			ng_error("%s: --ib-port %lld: ports are numbered 1-255", who, port);
		return NG_ERR_USAGE;
	}
	cf->port = (int)port;
	if (o.gid_given && (gid < 0 || gid > 255)) {
		if (say)
			ng_error("%s: --ib-gid %lld: GID table indices are 0-255", who, gid);
		return NG_ERR_USAGE;
	}
	cf->gid_index = (int)gid;
	if (sl < 0 || sl > 15) {
		if (say)
			ng_error("%s: --ib-sl %lld: service levels are 0-15", who, sl);
		return NG_ERR_USAGE;
	}
	if (tclass < 0 || tclass > 255) {
		if (say)
			ng_error("%s: --ib-tclass %lld: traffic classes are 0-255", who, tclass);
		return NG_ERR_USAGE;
	}
	cf->sl = (int)sl;
	cf->tclass = (int)tclass;
	return NG_OK;
}

/* ---- selection -------------------------------------------------------- */

static bool ng_ibv_gid_zero(const union ibv_gid *g)
{
	for (size_t i = 0; i < sizeof(g->raw); i++)
		if (g->raw[i])
			return false;
	return true;
}

/* ::ffff:a.b.c.d */
static bool ng_ibv_gid_v4(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

/* Picks the GID (see verbs.h).  On failure writes the reason to @err. */
static ng_status ng_ibv_pick_gid(struct ng_ibv *v, int want, char *err, size_t errlen)
{
	struct ibv_gid_entry e;
	int best = -1, rank_best = 0;

	if (want >= 0) {
		if (want >= v->pattr.gid_tbl_len) {
			snprintf(err, errlen, "%s: --ib-gid %d: %s port %u has GID indices 0-%d", v->who,
			         want, v->name, v->port, v->pattr.gid_tbl_len - 1);
			return NG_ERR_USAGE;
		}
		if (ibv_query_gid_ex(v->ctx, v->port, (uint32_t)want, &e, 0) || ng_ibv_gid_zero(&e.gid)) {
			snprintf(err, errlen, "%s: --ib-gid %d: entry %d of %s port %u is empty", v->who,
			         want, want, v->name, v->port);
			return NG_ERR_USAGE;
		}
		v->gid_index = want;
		v->gid = e.gid;
		v->gid_type = e.gid_type;
		v->global = true;
		return NG_OK;
	}
	if (!ng_ibv_need_grh(&v->facts, false)) {
		/* InfiniBand: LID routing inside the subnet, no GRH. */
		v->gid_index = -1;
		v->global = false;
		if (ibv_query_gid_ex(v->ctx, v->port, 0, &e, 0) == 0) {
			v->gid = e.gid;
			v->gid_type = e.gid_type;
		}
		return NG_OK;
	}
	/* RoCE: IPv4-mapped RoCE v2 (3) > other RoCE v2 (2) > anything valid (1).
	 * A port that requires a GRH on InfiniBand (EFA): the first valid one. */
	for (int i = 0; i < v->pattr.gid_tbl_len; i++) {
		int r;

		if (ibv_query_gid_ex(v->ctx, v->port, (uint32_t)i, &e, 0) || ng_ibv_gid_zero(&e.gid))
			continue;
		r = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? (ng_ibv_gid_v4(&e.gid) ? 3 : 2) : 1;
		if (!v->roce)
			r = 3;
		if (r > rank_best) {
			rank_best = r;
			best = i;
			v->gid = e.gid;
			v->gid_type = e.gid_type;
		}
		if (r == 3)
			break;
	}
	if (best < 0) {
		snprintf(
		    err, errlen,
		    v->roce ? "%s: %s port %u (RoCE) has no GID: give its network interface an IP address "
		              "(or choose one with --ib-gid)"
		            : "%s: %s port %u requires a GRH and has no valid GID (choose one with --ib-gid)",
		    v->who, v->name, v->port);
		return NG_ERR_NODEV;
	}
	v->gid_index = best;
	v->global = true;
	return NG_OK;
}

/* The first active port of the opened device, or @want.  On failure writes
 * the reason to @err. */
static ng_status ng_ibv_pick_port(struct ng_ibv *v, int want, char *err, size_t errlen)
{
	struct ibv_port_attr pa;
	size_t len = 0;

	if (want) {
		if (want < 1 || want > v->dattr.phys_port_cnt) {
			snprintf(err, errlen, "%s: --ib-port %d: %s has %u port%s (numbered from 1)", v->who,
			         want, v->name, v->dattr.phys_port_cnt,
			         v->dattr.phys_port_cnt == 1 ? "" : "s");
			return NG_ERR_USAGE;
		}
		if (ibv_query_port(v->ctx, (uint8_t)want, &pa)) {
			snprintf(err, errlen, "%s: querying %s port %d: %s", v->who, v->name, want,
			         strerror(errno));
			return NG_ERR_SYS;
		}
		if (pa.state != IBV_PORT_ACTIVE) {
			snprintf(err, errlen, "%s: %s port %d is %s, not active", v->who, v->name, want,
			         ibv_port_state_str(pa.state));
			return NG_ERR_NODEV;
		}
		v->port = (uint8_t)want;
		v->pattr = pa;
		return NG_OK;
	}
	len = (size_t)snprintf(err, errlen, "%s: %s has no active port (", v->who, v->name);
	for (uint8_t p = 1; p <= v->dattr.phys_port_cnt; p++) {
		if (ibv_query_port(v->ctx, p, &pa))
			continue;
		if (pa.state == IBV_PORT_ACTIVE) {
			v->port = p;
			v->pattr = pa;
			err[0] = '\0';
			return NG_OK;
		}
		if (len < errlen)
			len += (size_t)snprintf(err + len, errlen - len, "%sport %u: %s", p > 1 ? ", " : "",
			                        p, ibv_port_state_str(pa.state));
	}
	if (len < errlen)
		snprintf(err + len, errlen - len, ")");
	return NG_ERR_NODEV;
}

/* Opens @dev, picks its port and checks that it takes the queue pairs of
 * @qpt (verbs_check.h); closes it again on failure. */
static ng_status ng_ibv_try_dev(struct ng_ibv *v, struct ibv_device *dev, int port, enum ibv_qp_type qpt,
                                char *err, size_t errlen)
{
	ng_status st;

	snprintf(v->name, sizeof(v->name), "%s", ibv_get_device_name(dev));
	v->ctx = ibv_open_device(dev);
	if (!v->ctx) {
		snprintf(err, errlen, "%s: cannot open RDMA device %s: %s", v->who, v->name, strerror(errno));
		return NG_ERR_SYS;
	}
	if (ibv_query_device(v->ctx, &v->dattr)) {
		snprintf(err, errlen, "%s: querying RDMA device %s: %s", v->who, v->name, strerror(errno));
		st = NG_ERR_SYS;
		goto err_close_device;
	}
	st = ng_ibv_pick_port(v, port, err, errlen);
	if (st)
		goto err_close_device;
	v->facts.name = v->name;
	v->facts.transport = dev->transport_type;
	v->facts.node = dev->node_type;
	v->facts.vendor_id = v->dattr.vendor_id;
	v->facts.link_layer = v->pattr.link_layer;
	v->facts.port_flags = v->pattr.flags;
	st = ng_ibv_check_device(&v->facts, v->who, qpt, err, errlen);
	if (st)
		goto err_close_device;
	return NG_OK;

err_close_device:
	ibv_close_device(v->ctx);
	v->ctx = NULL;
	return st;
}

/* Device and port (see verbs.h).  On failure writes the reason to @err. */
static ng_status ng_ibv_select(struct ng_ibv *v, const struct ng_ibv_conf *cf, char *err, size_t errlen)
{
	struct ibv_device **list;
	enum ibv_qp_type qpt = cf->qpt ? cf->qpt : IBV_QPT_RC;
	ng_status st = NG_ERR_NODEV;
	int n = 0;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		if (!list && errno && errno != ENOSYS && errno != ENOENT)
			snprintf(err, errlen, "%s: cannot list RDMA devices: %s", v->who, strerror(errno));
		else
			snprintf(err, errlen, "%s: no RDMA device found; %s", v->who, ng_ibv_howto);
		if (list)
			ibv_free_device_list(list);
		return list || !errno || errno == ENOSYS || errno == ENOENT ? NG_ERR_NODEV : NG_ERR_SYS;
	}
	if (cf->dev && *cf->dev) {
		size_t len;
		int i;

		for (i = 0; i < n; i++)
			if (strcmp(ibv_get_device_name(list[i]), cf->dev) == 0)
				break;
		if (i < n) {
			st = ng_ibv_try_dev(v, list[i], cf->port, qpt, err, errlen);
		} else {
			len = (size_t)snprintf(
			    err, errlen, "%s: --ib-dev %s: no such RDMA device (devices:", v->who, cf->dev);
			for (i = 0; i < n && len < errlen; i++)
				len += (size_t)snprintf(err + len, errlen - len, " %s",
				                        ibv_get_device_name(list[i]));
			if (len < errlen)
				snprintf(err + len, errlen - len, ")");
			st = NG_ERR_USAGE;
		}
	} else if (cf->port) {
		/* An explicit port on the first device. */
		st = ng_ibv_try_dev(v, list[0], cf->port, qpt, err, errlen);
	} else {
		/* The first device that works; one that cannot take these queue
		 * pairs (iWARP, EFA for RC/UC) is passed over, and named when no
		 * other one works. */
		ng_status refused = NG_OK;
		char why[NG_IBV_ERRLEN] = "";

		for (int i = 0; i < n; i++) {
			st = ng_ibv_try_dev(v, list[i], 0, qpt, err, errlen);
			if (st == NG_OK || st == NG_ERR_SYS)
				break;
			if (st == NG_ERR_UNSUPPORTED && refused == NG_OK) {
				refused = st;
				snprintf(why, sizeof(why), "%s", err);
			}
		}
		if (st != NG_OK && st != NG_ERR_SYS && refused != NG_OK) {
			snprintf(err, errlen, "%s", why);
			st = refused;
		}
		if (st == NG_ERR_NODEV && n > 1)
			snprintf(err, errlen,
			         "%s: none of the %d RDMA devices has an active port (the first is %s)",
			         v->who, n, ibv_get_device_name(list[0]));
	}
	ibv_free_device_list(list);
	return st;
}

static ng_status ng_ibv_open_local(struct ng_ibv *v, const struct ng_ibv_conf *cf, char *err, size_t errlen)
{
	ng_status st;
	long pg;

	st = ng_ibv_select(v, cf, err, errlen);
	if (st)
		return st;
	v->roce = v->pattr.link_layer == IBV_LINK_LAYER_ETHERNET;
	v->sl = (uint8_t)cf->sl;
	v->tclass = (uint8_t)cf->tclass;
	st = ng_ibv_pick_gid(v, cf->gid_index, err, errlen);
	if (st)
		goto err_close_device;
	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd) {
		snprintf(err, errlen, "%s: cannot allocate a protection domain on %s: %s", v->who, v->name,
		         strerror(errno));
		st = NG_ERR_SYS;
		goto err_close_device;
	}
	v->mem_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (v->dattr.atomic_cap != IBV_ATOMIC_NONE)
		v->mem_access |= IBV_ACCESS_REMOTE_ATOMIC;
	pg = sysconf(_SC_PAGESIZE);
	v->page = pg >= 4096 ? (size_t)pg : 4096;
	return NG_OK;

err_close_device:
	ibv_close_device(v->ctx);
	v->ctx = NULL;
	return st;
}

/* A peer's status from an exchange: one of ng_status, else NG_ERR_PROTO
 * (reported). */
static ng_status ng_ibv_peer_status(int peer, int32_t status)
{
	size_t v;

	if (ng_peer_slen("verbs status", peer, status, 0, NG_STATUS_COUNT - 1, &v) != NG_OK)
		return NG_ERR_PROTO;
	return (ng_status)v;
}

/* One rank's outcome of the selection, exchanged so that every rank fails
 * together and identical messages are printed once. */
struct ng_ibv_verdict {
	int32_t status;
	char msg[NG_IBV_ERRLEN];
};

ng_status ng_ibv_open(struct ng_ibv *v, const struct ng_ibv_conf *cf, struct ng_boot *boot)
{
	struct ng_ibv_verdict mine, *all;
	ng_status st, worst = NG_OK;
	int i, j;

	memset(v, 0, sizeof(*v));
	v->who = cf->who;
	v->quiet = cf->quiet;
	v->gid_index = -1;
	memset(&mine, 0, sizeof(mine));
	mine.status = (int32_t)ng_ibv_open_local(v, cf, mine.msg, sizeof(mine.msg));

	all = calloc((size_t)boot->size, sizeof(*all));
	if (!all) {
		ng_error("%s: out of memory", v->who);
		st = NG_ERR_NOMEM;
		goto err_close;
	}
	st = ng_boot_allgather(boot, &mine, sizeof(mine), all);
	if (st)
		goto err_free_all;
	for (i = 0; i < boot->size; i++) {
		if (!all[i].status)
			continue;
		if (worst == NG_OK)
			worst = ng_ibv_peer_status(i, all[i].status);
		if (i != boot->rank)
			continue;
		worst = (ng_status)mine.status;
		for (j = 0; j < i; j++)
			if (all[j].status && strncmp(all[j].msg, mine.msg, sizeof(mine.msg)) == 0)
				break;
		if (j == i && !cf->quiet)
			ng_error("%.*s", (int)sizeof(mine.msg), mine.msg);
	}
	free(all);
	if (worst != NG_OK) {
		st = worst;
		goto err_close;
	}
	return NG_OK;

err_free_all:
	free(all);
err_close:
	ng_ibv_close(v);
	return st;
}

void ng_ibv_close(struct ng_ibv *v)
{
	for (size_t i = 0; i < v->nmems; i++) {
		ibv_dereg_mr(v->mems[i].mr);
		free(v->mems[i].raw);
	}
	free(v->mems);
	v->mems = NULL;
	v->nmems = v->capmems = 0;
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	v->pd = NULL;
	if (v->ctx)
		ibv_close_device(v->ctx);
	v->ctx = NULL;
}

void ng_ibv_describe(const struct ng_ibv *v, enum ibv_mtu mtu, char *buf, size_t len)
{
	if (v->global)
		snprintf(buf, len, "%s port %u gid %d mtu %zu (%s)", v->name, v->port, v->gid_index,
		         ng_ibv_mtu_bytes(mtu),
		         v->roce ? ng_ibv_gid_type_str(v->gid_type) : "InfiniBand, GRH");
	else
		snprintf(buf, len, "%s port %u lid %u mtu %zu (InfiniBand)", v->name, v->port, v->pattr.lid,
		         ng_ibv_mtu_bytes(mtu));
}

void ng_ibv_ep_get(const struct ng_ibv *v, struct ng_ibv_ep *ep)
{
	memset(ep, 0, sizeof(*ep));
	memcpy(ep->gid, v->gid.raw, sizeof(ep->gid));
	ep->lid = v->pattr.lid;
	ep->mtu = (uint8_t)v->pattr.active_mtu;
	ep->global = v->global;
	ep->link_layer = v->pattr.link_layer;
	ep->gid_type = (uint8_t)v->gid_type;
	ep->rd_init = (uint8_t)(v->dattr.max_qp_init_rd_atom > 255 ? 255 : v->dattr.max_qp_init_rd_atom);
	ep->rd_resp = (uint8_t)(v->dattr.max_qp_rd_atom > 255 ? 255 : v->dattr.max_qp_rd_atom);
	ep->gid_index = (uint32_t)v->gid_index;
}

static void ng_ibv_peer_facts(const struct ng_ibv_ep *ep, struct ng_ibv_peer_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->link_layer = ep->link_layer;
	f->global = ep->global;
	f->gid_type = ep->gid_type;
	memcpy(f->gid, ep->gid, sizeof(f->gid));
	f->gid_index = ep->global ? (int32_t)ep->gid_index : -1;
}

ng_status ng_ibv_eps_check(const struct ng_ibv *v, int rank, size_t size, const struct ng_ibv_ep *eps,
                           size_t stride)
{
	struct ng_ibv_peer_facts f0, fi;
	char err[NG_IBV_ERRLEN];
	ng_status st;

	ng_ibv_peer_facts(eps, &f0);
	for (size_t i = 1; i < size; i++) {
		const struct ng_ibv_ep *e =
		    (const struct ng_ibv_ep *)(const void *)((const unsigned char *)eps + i * stride);

		ng_ibv_peer_facts(e, &fi);
		st = ng_ibv_check_peer(&f0, 0, &fi, (int)i, v->who, err, sizeof(err));
		if (st) {
			if (rank == 0 && !v->quiet)
				ng_error("%s", err);
			return st;
		}
	}
	return NG_OK;
}

ng_status ng_ibv_ep_take(const struct ng_boot *b, const struct ng_ibv_ep *ep, int peer)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	char ip[INET_ADDRSTRLEN], what[48];
	struct in_addr in;
	size_t mtu;

	if (ng_peer_len("verbs path MTU", peer, ep->mtu, IBV_MTU_256, IBV_MTU_4096, &mtu) != NG_OK)
		return NG_ERR_PROTO;
	/* InfiniBand (LID, or a GID of the subnet): no IP meaning, an
	 * InfiniBand fabric is a trusted network. */
	if (!b->peer_addr[0] || ep->link_layer != IBV_LINK_LAYER_ETHERNET)
		return NG_OK;
	if (memcmp(ep->gid, v4mapped, sizeof(v4mapped)) != 0)
		return ng_peer_bad(
		    "RoCE GID", peer,
		    "an IPv6 address, which a --server cannot check against the client's address "
		    "or --allow: refused to connect there");
	memcpy(&in.s_addr, ep->gid + 12, 4);
	if (!inet_ntop(AF_INET, &in, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	snprintf(what, sizeof(what), "the RoCE port of rank %d", peer);
	return ng_boot_may_connect(b, ip, what) ? NG_OK : NG_ERR_PROTO;
}

/* ---- memory ----------------------------------------------------------- */

void ng_ibv_reg_error(const struct ng_ibv *v, size_t len, const char *what, int err)
{
	if (err == ENOMEM || err == EPERM || err == EAGAIN)
		ng_error("%s: cannot register %zu bytes (%s) with %s: %s (raise the locked-memory limit: "
		         "ulimit -l unlimited, or memlock in /etc/security/limits.conf)",
		         v->who, len, what, v->name, strerror(err));
	else
		ng_error("%s: cannot register %zu bytes (%s) with %s: %s", v->who, len, what, v->name,
		         strerror(err));
}

ng_status ng_ibv_mem_alloc(struct ng_ibv *v, size_t len, void **buf_p)
{
	size_t align = len >= 4096 ? v->page : 64;
	size_t body = len ? len : 1;
	struct ng_ibv_mem *m;
	struct ibv_mr *mr;
	void *raw;

	if (body > SIZE_MAX - align) {
		ng_error("%s: cannot allocate %zu bytes: too large", v->who, len);
		return NG_ERR_NOMEM;
	}
	body = (body + align - 1) / align * align;
	if (v->nmems == v->capmems) {
		size_t cap = v->capmems ? 2 * v->capmems : 8;

		m = realloc(v->mems, cap * sizeof(*m));
		if (!m) {
			ng_error("%s: out of memory", v->who);
			return NG_ERR_NOMEM;
		}
		v->mems = m;
		v->capmems = cap;
	}
	raw = aligned_alloc(align, body);
	if (!raw) {
		ng_error("%s: cannot allocate %zu bytes: %s", v->who, len, strerror(errno));
		return NG_ERR_NOMEM;
	}
	mr = ibv_reg_mr(v->pd, raw, body, v->mem_access);
	if (!mr) {
		ng_ibv_reg_error(v, body, "communication buffer", errno);
		free(raw);
		return NG_ERR_NOMEM;
	}
	m = &v->mems[v->nmems++];
	m->base = raw;
	m->len = body;
	m->raw = raw;
	m->mr = mr;
	*buf_p = raw;
	return NG_OK;
}

void ng_ibv_mem_free(struct ng_ibv *v, void *buf)
{
	size_t i;

	for (i = 0; i < v->nmems; i++)
		if (v->mems[i].base == buf)
			break;
	assert(i < v->nmems && "free() of a block not from alloc()");
	if (i == v->nmems)
		return;
	ibv_dereg_mr(v->mems[i].mr);
	free(v->mems[i].raw);
	v->mems[i] = v->mems[--v->nmems];
	v->last = 0;
}

ng_status ng_ibv_area_alloc(struct ng_ibv *v, size_t len, int access, const char *what, struct ng_ibv_area *a)
{
	size_t body = (len ? len : 1);

	memset(a, 0, sizeof(*a));
	if (body > SIZE_MAX - v->page) {
		ng_error("%s: %s of %zu bytes is too large", v->who, what, len);
		return NG_ERR_NOMEM;
	}
	body = (body + v->page - 1) / v->page * v->page;
	a->base = aligned_alloc(v->page, body);
	if (!a->base) {
		ng_error("%s: cannot allocate %zu bytes for the %s: %s", v->who, body, what, strerror(errno));
		return NG_ERR_NOMEM;
	}
	memset(a->base, 0, body);
	a->mr = ibv_reg_mr(v->pd, a->base, body, access);
	if (!a->mr) {
		ng_ibv_reg_error(v, body, what, errno);
		free(a->base);
		a->base = NULL;
		return NG_ERR_NOMEM;
	}
	a->len = body;
	return NG_OK;
}

ng_status ng_ibv_stage_alloc(struct ng_ibv *v, size_t npeers, uint32_t depth, size_t slot,
                             struct ng_ibv_stage *s)
{
	s->slot = slot;
	s->depth = depth;
	return ng_ibv_area_alloc(v, npeers * depth * slot, IBV_ACCESS_LOCAL_WRITE, "staging", &s->area);
}

void ng_ibv_stage_free(struct ng_ibv_stage *s)
{
	ng_ibv_area_free(&s->area);
}

void ng_ibv_area_free(struct ng_ibv_area *a)
{
	if (a->mr)
		ibv_dereg_mr(a->mr);
	free(a->base);
	memset(a, 0, sizeof(*a));
}

/* ---- queue pairs ------------------------------------------------------ */

/* One attempt of ng_ibv_qp_create's inline search: a QP with @n inline
 * bytes; the one that fits best is kept in @x->qp. */
struct ng_ibv_try {
	struct ng_ibv *v;
	struct ibv_qp_init_attr ia; /* everything but the inline size */
	struct ibv_qp *qp;          /* the QP of the largest size that fitted */
	uint32_t granted;           /* its max_inline_data as the device wrote it back */
	int err;                    /* errno of the last failure */
};

static bool ng_ibv_try_inline(void *ctx, uint32_t n)
{
	struct ng_ibv_try *x = ctx;
	struct ibv_qp_init_attr ia = x->ia;
	struct ibv_qp *qp;

	ia.cap.max_inline_data = n;
	qp = ibv_create_qp(x->v->pd, &ia);
	if (!qp) {
		x->err = errno;
		return false;
	}
	if (x->qp)
		ibv_destroy_qp(x->qp);
	x->qp = qp;
	x->granted = ia.cap.max_inline_data;
	return true;
}

ng_status ng_ibv_qp_create(struct ng_ibv *v, enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
                           uint32_t sq_depth, uint32_t rq_depth, uint32_t *inline_p, struct ng_ibv_qp *q)
{
	struct ng_ibv_try x;

	memset(q, 0, sizeof(*q));
	memset(&x, 0, sizeof(x));
	x.v = v;
	x.ia.send_cq = scq;
	x.ia.recv_cq = rcq;
	x.ia.qp_type = type;
	x.ia.cap.max_send_wr = sq_depth;
	x.ia.cap.max_send_sge = 4;
	x.ia.cap.max_recv_wr = rq_depth;
	x.ia.cap.max_recv_sge = 1;
	/* The largest inline size the device takes, by bisection (a QP that
	 * fails for another reason than its size fails at 0 too), and then the
	 * size it granted, which may be more than was asked. */
	(void)ng_ibv_bisect(*inline_p, ng_ibv_try_inline, &x);
	if (!x.qp && !ng_ibv_try_inline(&x, 0)) {
		ng_error("%s: cannot create a %s queue pair on %s (%u sends, %u receives): %s", v->who,
		         ng_ibv_qpt_str(type), v->name, sq_depth, rq_depth, strerror(x.err));
		return x.err == ENOMEM ? NG_ERR_NOMEM : NG_ERR_SYS;
	}
	q->qp = x.qp;
	*inline_p = x.granted;
	q->type = type;
	q->depth = sq_depth;
	q->max_inline = x.granted;
	q->err_from = UINT64_MAX;
	return NG_OK;
}

void ng_ibv_qp_destroy(struct ng_ibv_qp *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	q->qp = NULL;
}

ng_status ng_ibv_qp_init(struct ng_ibv *v, struct ng_ibv_qp *q)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = v->port;
	switch (q->type) {
	case IBV_QPT_UD:
		a.qkey = NG_IBV_QKEY;
		mask |= IBV_QP_QKEY;
		break;
	case IBV_QPT_UC:
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
		break;
	default:
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		                    (v->dattr.atomic_cap != IBV_ATOMIC_NONE ? IBV_ACCESS_REMOTE_ATOMIC : 0);
		mask |= IBV_QP_ACCESS_FLAGS;
		break;
	}
	if (ibv_modify_qp(q->qp, &a, mask)) {
		ng_error("%s: %s queue pair to INIT on %s port %u: %s", v->who, ng_ibv_qpt_str(q->type),
		         v->name, v->port, strerror(errno));
		return NG_ERR_SYS;
	}
	return NG_OK;
}

static void ng_ibv_ah_attr(const struct ng_ibv *v, const struct ng_ibv_ep *remote, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = remote->lid;
	ah->sl = v->sl;
	ah->src_path_bits = 0;
	ah->port_num = v->port;
	if (v->global) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid.raw, remote->gid, sizeof(ah->grh.dgid.raw));
		ah->grh.sgid_index = (uint8_t)v->gid_index;
		ah->grh.hop_limit = NG_IBV_HOPS;
		ah->grh.traffic_class = v->tclass;
		ah->grh.flow_label = 0;
	}
}

ng_status ng_ibv_qp_rtr(struct ng_ibv *v, struct ng_ibv_qp *q, const struct ng_ibv_ep *remote, uint32_t rqpn,
                        enum ibv_mtu mtu, int peer)
{
	struct ibv_qp_attr a;
	uint8_t rd_init, rd_dest;
	int mask;

	ng_ibv_rd_atom_agree((uint32_t)v->dattr.max_qp_init_rd_atom, (uint32_t)v->dattr.max_qp_rd_atom,
	                     remote ? remote->rd_resp : 0, NG_IBV_RD_ATOM, &rd_init, &rd_dest);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (q->type != IBV_QPT_UD) {
		a.path_mtu = mtu;
		a.dest_qp_num = rqpn;
		a.rq_psn = ng_ibv_psn(rqpn);
		ng_ibv_ah_attr(v, remote, &a.ah_attr);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (q->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = rd_dest;
			a.min_rnr_timer = NG_IBV_RNR_TIMER;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(q->qp, &a, mask)) {
		ng_error("%s: %s queue pair to RTR (towards rank %d, QP %u, mtu %zu) on %s port %u: %s",
		         v->who, ng_ibv_qpt_str(q->type), peer, rqpn, ng_ibv_mtu_bytes(mtu), v->name, v->port,
		         strerror(errno));
		return NG_ERR_SYS;
	}
	return NG_OK;
}

ng_status ng_ibv_qp_rts(struct ng_ibv *v, struct ng_ibv_qp *q, const struct ng_ibv_ep *remote, int peer)
{
	struct ibv_qp_attr a;
	uint8_t rd_init, rd_dest;
	int mask;

	ng_ibv_rd_atom_agree((uint32_t)v->dattr.max_qp_init_rd_atom, (uint32_t)v->dattr.max_qp_rd_atom,
	                     remote ? remote->rd_resp : 0, NG_IBV_RD_ATOM, &rd_init, &rd_dest);
	(void)rd_dest;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = ng_ibv_psn(q->qp->qp_num);
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (q->type == IBV_QPT_RC) {
		a.timeout = NG_IBV_TIMEOUT;
		a.retry_cnt = NG_IBV_RETRY;
		a.rnr_retry = NG_IBV_RNR;
		a.max_rd_atomic = rd_init;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(q->qp, &a, mask)) {
		ng_error("%s: %s queue pair to RTS (towards rank %d) on %s port %u: %s", v->who,
		         ng_ibv_qpt_str(q->type), peer, v->name, v->port, strerror(errno));
		return NG_ERR_SYS;
	}
	return NG_OK;
}

ng_status ng_ibv_qp_connect(struct ng_ibv *v, struct ng_ibv_qp *q, const struct ng_ibv_ep *remote,
                            uint32_t rqpn, enum ibv_mtu mtu, int peer)
{
	ng_status st = ng_ibv_qp_rtr(v, q, remote, rqpn, mtu, peer);

	return st ? st : ng_ibv_qp_rts(v, q, remote, peer);
}

/* What ng_ibv_mesh_connect exchanges: this header, then qpn[size], then
 * the caller's extra bytes, padded to 8. */
struct ng_ibv_wire {
	struct ng_ibv_ep ep;
	int32_t status;
	uint32_t pad;
};

ng_status ng_ibv_mesh_connect(struct ng_ibv *v, struct ng_boot *b, struct ng_ibv_qp *const *qps,
                              ng_status local, const void *extra, size_t len, void *extras,
                              enum ibv_mtu *mtu_p)
{
	size_t size = (size_t)b->size, qoff = sizeof(struct ng_ibv_wire),
	       xoff = qoff + size * sizeof(uint32_t);
	size_t stride = (xoff + len + 7) / 8 * 8;
	enum ibv_mtu mtu = v->pattr.active_mtu;
	unsigned char *mine, *all;
	int32_t ok, *oks = NULL;
	ng_status st;

	mine = calloc(1, stride);
	all = calloc(size, stride);
	oks = calloc(size, sizeof(*oks));
	if (!mine || !all || !oks) {
		ng_error("%s: out of memory", v->who);
		st = NG_ERR_NOMEM;
		goto out_free;
	}
	{
		struct ng_ibv_wire *w = (struct ng_ibv_wire *)(void *)mine;
		uint32_t *qpn = (uint32_t *)(void *)(mine + qoff);

		ng_ibv_ep_get(v, &w->ep);
		w->status = (int32_t)local;
		for (size_t i = 0; !local && i < size; i++)
			qpn[i] = qps[i] && qps[i]->qp ? qps[i]->qp->qp_num : 0;
		if (len)
			memcpy(mine + xoff, extra, len);
	}
	st = ng_boot_allgather(b, mine, stride, all);
	if (st)
		goto out_free;
	st = local;
	for (size_t i = 0; !st && i < size; i++) {
		const struct ng_ibv_wire *w = (const struct ng_ibv_wire *)(const void *)(all + i * stride);

		st = w->status ? ng_ibv_peer_status((int)i, w->status) : NG_OK;
		if (!st && i != (size_t)b->rank)
			st = ng_ibv_ep_take(b, &w->ep, (int)i);
		if ((enum ibv_mtu)w->ep.mtu < mtu)
			mtu = (enum ibv_mtu)w->ep.mtu;
	}
	if (!st)
		st = ng_ibv_eps_check(v, b->rank, size, (const struct ng_ibv_ep *)(const void *)all, stride);
	if (st)
		goto out_free;

	for (size_t i = 0; !local && i < size; i++) {
		const unsigned char *r = all + i * stride;
		const struct ng_ibv_wire *w = (const struct ng_ibv_wire *)(const void *)r;
		const uint32_t *qpn = (const uint32_t *)(const void *)(r + qoff);
		enum ibv_mtu pm = (enum ibv_mtu)w->ep.mtu < v->pattr.active_mtu ? (enum ibv_mtu)w->ep.mtu
		                                                                : v->pattr.active_mtu;

		if (len)
			memcpy((unsigned char *)extras + i * len, r + xoff, len);
		if (i == (size_t)b->rank)
			continue;
		local = ng_ibv_qp_connect(v, qps[i], &w->ep, qpn[b->rank], pm, (int)i);
	}
	ok = (int32_t)local;
	st = ng_boot_allgather(b, &ok, sizeof(ok), oks);
	for (size_t i = 0; !st && i < size; i++)
		if (oks[i])
			st = local ? local : ng_ibv_peer_status((int)i, oks[i]);
	if (!st)
		*mtu_p = mtu;

out_free:
	free(oks);
	free(all);
	free(mine);
	return st;
}

ng_status ng_ibv_ah_create(struct ng_ibv *v, const struct ng_ibv_ep *remote, int peer, struct ibv_ah **ah_p)
{
	struct ibv_ah_attr ah;

	ng_ibv_ah_attr(v, remote, &ah);
	*ah_p = ibv_create_ah(v->pd, &ah);
	if (!*ah_p) {
		ng_error("%s: cannot create an address handle to rank %d on %s port %u: %s", v->who, peer,
		         v->name, v->port, strerror(errno));
		return NG_ERR_SYS;
	}
	return NG_OK;
}

ng_status ng_ibv_wc_error(const struct ng_ibv *v, const struct ibv_wc *wc, int peer, const char *what)
{
	switch (wc->status) {
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_WR_FLUSH_ERR:
		ng_error("%s: rank %d lost: %s failed: %s", v->who, peer, what,
		         ibv_wc_status_str(wc->status));
		return NG_ERR_PEER_LOST;
	default:
		ng_error("%s: %s with rank %d failed: %s (vendor error 0x%x)", v->who, what, peer,
		         ibv_wc_status_str(wc->status), wc->vendor_err);
		return NG_ERR_IO;
	}
}
