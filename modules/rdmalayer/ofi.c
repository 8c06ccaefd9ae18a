/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "ofi" backend of the RDMA layer (rdma.h): libfabric, one reliable
 * datagram endpoint (FI_EP_RDM) per rank with FI_RMA | FI_ATOMIC, so one
 * code path reaches EFA, Slingshot (cxi), Omni-Path (psm3), verbs;ofi_rxm,
 * and here the shm and tcp;ofi_rxm providers.
 *
 * Provider.  --ofi-provider NAME, else the first provider fi_getinfo lists
 * that is not sockets, net or udp;ofi_rxd (they claim RMA but do not
 * progress usefully: a busy thread per endpoint, atomics that return
 * -FI_ENOSYS), and not shm when the ranks are on several hosts.  Every rank
 * must end on the same provider (checked).  When all ranks share one host,
 * the endpoint is bound to 127.0.0.1 (FI_SOURCE), so that a network
 * provider never sends a byte off the machine.
 *
 * Hints: every memory-registration mode bit this code honours (FI_MR_LOCAL:
 * local buffers are registered or staged; VIRT_ADDR: remote address is the
 * virtual address, else the offset; ALLOCATED; PROV_KEY; ENDPOINT: bound and
 * enabled), FI_CONTEXT/FI_CONTEXT2 (every operation carries its own context),
 * and automatic data progress where the provider grants it (tcp;ofi_rxm does
 * with FI_ATOMIC in the caps; shm refuses it, then manual progress).
 * NG_RDMA_CAP_PROGRESS is set only when automatic progress was granted
 * (never for shm: its atomics, first contacts and, once ordering is asked
 * for, its writes wait for the target's progress).
 *
 * Semantics.  A notice must land after the data it covers and flush must
 * mean placed: asked for, never assumed.  First ordered writes and reads
 * (FI_ORDER_WAW | FI_ORDER_RAW in tx_attr and rx_attr->msg_order, checked
 * as granted: shm grants them); else delivery completion
 * (FI_DELIVERY_COMPLETE in tx_attr->op_flags, checked: tcp;ofi_rxm, whose
 * own order is only RAS/WAS/SAS); a provider with neither is refused, naming
 * it and what it lacks.  The mode is in the description ("ordered",
 * "delivery-complete").
 *
 * Registrations.  libfabric's own registration cache (FI_MR_CACHE_MAX_COUNT,
 * on by default for verbs and others) is turned off at open, before the
 * first libfabric call, unless the user set that variable to something else
 * (then the description says so).  Two reasons: a registration is what
 * spipe's reg mode measures and what its rcache mode caches itself, so a
 * cache below would report a lookup as a registration; and verbs;ofi_rxm
 * with FI_ATOMIC refuses a second registration of memory the cache already
 * holds ("MR map insert for atomic verification failed", -FI_ENOKEY: the
 * rma pattern's windows inside allocated memory hit it).  A libfabric that
 * an MPI library of the same process initialised earlier keeps its cache.
 *
 * Connection: the first operation to a peer returns -FI_EAGAIN until the
 * peer progresses, so open() ends with two rounds in which every rank writes
 * a word at every other rank and progresses until it has everybody's.
 *
 * The files: this one picks the provider and opens, exchanges the
 * addresses, connects and closes; ofi_data.c is the data path (Completion,
 * Notices, flush, Keys and the test fault: see there); ofi_mem.c registers
 * memory; ofi_int.h is what they share.
 */
#include "config.h"

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "module.h"
#include "modules/rdmalayer/ofi_int.h"
#include "modules/rdmalayer/ofi_name.h"
#include "modules/rdmalayer/rdma.h"
#include "peer.h"

static const char *const ofi_sem_names[] = {"ordered", "delivery-complete", "assumed order"};

/* ---- open and close --------------------------------------------------- */

static void ofi_close(struct ng_rdma *r)
{
	struct ofi *o = ofi_of(r);

	for (int p = 0; o->stage && p < r->size; p++)
		ng_rdma_stage_free(r, &o->stage[p]);
	if (o->arena)
		ng_ofi_dereg(r, &o->arena->pub);
	if (o->ctl)
		ng_ofi_dereg(r, &o->ctl->pub);
	if (o->ep)
		fi_close(&o->ep->fid);
	if (o->av)
		fi_close(&o->av->fid);
	if (o->cq)
		fi_close(&o->cq->fid);
	if (o->domain)
		fi_close(&o->domain->fid);
	if (o->fabric)
		fi_close(&o->fabric->fid);
	if (o->info)
		fi_freeinfo(o->info);
	free(o->addr);
	free(o->ops);
	free(o->fops);
	free(o->stage);
	free(o->rctl);
	ng_rdma_base_fini(r);
	free(o);
}

/* Whether provider @prov ("tcp;ofi_rxm", "verbs;ofi_rxm", "shm", ...) pins
 * what it registers: a provider for a device does (verbs, efa, cxi, psm3,
 * opx ...); the software providers (and utility layers) over sockets or
 * shared memory register keys only. */
static bool ofi_pins(const char *prov)
{
	static const char *const soft[] = {"tcp",     "udp", "shm",     "sm2",
	                                   "sockets", "net", "ofi_rxm", "ofi_rxd"};
	const char *p = prov;

	while (*p) {
		size_t n = strcspn(p, ";"), i;

		for (i = 0; i < sizeof(soft) / sizeof(soft[0]); i++)
			if (strlen(soft[i]) == n && strncmp(p, soft[i], n) == 0)
				break;
		if (n && i == sizeof(soft) / sizeof(soft[0]))
			return true;
		p += n + (p[n] == ';');
	}
	return false;
}

/* Whether @i is bound to 127.0.0.1. */
static bool ofi_loopback(const struct fi_info *i)
{
	const struct sockaddr_in *a = i->src_addr;

	return i->addr_format == FI_SOCKADDR_IN && a && i->src_addrlen >= sizeof(*a) &&
	       a->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
}

static bool ofi_useless(const char *prov)
{
	return strcmp(prov, "sockets") == 0 || strcmp(prov, "net") == 0 || strncmp(prov, "udp", 3) == 0;
}

/* The fi_info of provider @prov (NULL: the first useful one) with or
 * without automatic progress, not shm unless @shm_ok when none is named,
 * asking for the semantics @sem (ordered:
 * FI_ORDER_WAW | FI_ORDER_RAW; delivery-complete: FI_DELIVERY_COMPLETE;
 * assumed: nothing) (a copy), or NULL with *@why_p. */
static struct fi_info *ofi_pick(const char *prov, bool one_host, bool shm_ok, bool autoprog, enum ofi_sem sem,
                                const char **why_p)
{
	struct fi_info *hints = fi_allocinfo(), *list = NULL, *pick = NULL;
	int rc;

	if (!hints) {
		*why_p = "out of memory";
		return NULL;
	}
	hints->caps = FI_RMA | FI_ATOMIC;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode =
	    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	if (autoprog)
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	if (sem == OFI_SEM_ORDERED) {
		hints->tx_attr->msg_order = OFI_ORDER;
		hints->rx_attr->msg_order = OFI_ORDER;
	} else if (sem == OFI_SEM_DELIVERY) {
		hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	}
	if (prov)
		hints->fabric_attr->prov_name = strdup(prov);
	/* Socket providers on one host: bound to loopback (shm has no
	 * address; it would give every rank the same name; an RDMA device
	 * such as verbs' has no loopback address and loops back itself). */
	rc = one_host && prov && strncmp(prov, "tcp", 3) == 0
	         ? fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", NULL, FI_SOURCE, hints, &list)
	         : -FI_ENODATA;
	if (rc)
		rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &list);
	fi_freeinfo(hints);
	if (rc) {
		*why_p = fi_strerror(-rc);
		return NULL;
	}
	for (struct fi_info *i = list; i && !pick; i = i->next) {
		const char *p = i->fabric_attr->prov_name;

		if (!prov && (ofi_useless(p) || (!shm_ok && strcmp(p, "shm") == 0)))
			continue;
		/* What was asked must have been granted. */
		if (sem == OFI_SEM_ORDERED && ((i->tx_attr->msg_order & OFI_ORDER) != OFI_ORDER ||
		                               (i->rx_attr->msg_order & OFI_ORDER) != OFI_ORDER))
			continue;
		if (sem == OFI_SEM_DELIVERY && !(i->tx_attr->op_flags & FI_DELIVERY_COMPLETE))
			continue;
		pick = fi_dupinfo(i);
	}
	fi_freeinfo(list);
	if (!pick)
		*why_p = "no provider offers RDMA and atomics here";
	return pick;
}

/* "shm, tcp;ofi_rxm, ...": the providers with RDMA and atomics here. */
static void ofi_names(char *buf, size_t len)
{
	struct fi_info *hints = fi_allocinfo(), *list = NULL;
	size_t at = 0;

	buf[0] = 0;
	if (!hints)
		return;
	hints->caps = FI_RMA | FI_ATOMIC;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode =
	    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	if (fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &list) == 0) {
		for (struct fi_info *i = list; i; i = i->next) {
			const char *p = i->fabric_attr->prov_name;

			if (strstr(buf, p))
				continue;
			at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s", at ? ", " : "", p);
		}
	}
	fi_freeinfo(list);
	fi_freeinfo(hints);
}

/* Writes a word at every peer, progressing until every peer's word arrived
 * (value @round): the connection rounds. */
static ng_status ofi_round(struct ofi *o, uint64_t round)
{
	struct ng_rdma *r = &o->base;
	volatile uint64_t *mine = o->ctl->pub.base;
	ng_status st = NG_OK;
	uint64_t t;

	for (int p = 0; p < r->size && st == NG_OK; p++)
		if (p != r->rank)
			st = ng_ofi_write(r, p, &(struct ng_rdma_iov){&round, 8, NULL}, 1, &o->rctl[p],
			                  (uint64_t)r->rank * 8, 0, &t);
	for (int p = 0; p < r->size && st == NG_OK; p++) {
		if (p == r->rank)
			continue;
		st = ng_rdma_wait_all(r, p);
		if (st == NG_OK)
			st = ng_rdma_wait_word(r, &mine[p], round, p);
	}
	return st;
}

/* A peer's status from the exchange: one of ng_status, else NG_ERR_PROTO
 * (reported). */
static ng_status ofi_peer_status(size_t peer, int64_t status)
{
	size_t v;

	if (ng_peer_slen("ofi status", (int)peer, status, 0, NG_STATUS_COUNT - 1, &v) != NG_OK)
		return NG_ERR_PROTO;
	return (ng_status)v;
}

/* What every rank tells the others once it has chosen: its status, its
 * provider, its host and its endpoint's name. */
struct ofi_hello {
	int32_t status;
	uint32_t len;
	char prov[64];
	char host[64];
	unsigned char name[OFI_NAMELEN];
};

/* libfabric's environment, before its first call. */
static void ofi_env(struct ofi *o, size_t n)
{
	/* libfabric sizes per-peer resources by its universe size (256 unless
	 * told): verbs;ofi_rxm's completion queue of (tx + rx) x 256 entries is
	 * above what Soft-RoCE and many HCAs create.  The job's size, unless the
	 * user set it. */
	{
		char u[24];

		snprintf(u, sizeof(u), "%zu", n < 2 ? (size_t)2 : n);
		setenv("FI_UNIVERSE_SIZE", u, 0);
	}
	/* libfabric's registration cache off, unless the user set it (see the
	 * top: Registrations). */
	{
		const char *cache = getenv("FI_MR_CACHE_MAX_COUNT");

		if (cache && strcmp(cache, "0") != 0)
			snprintf(o->cache, sizeof(o->cache), "%.8s", cache);
		else
			setenv("FI_MR_CACHE_MAX_COUNT", "0", 1);
	}
}

/* The provider (@prov, NULL: the first useful one) and the semantics: sets
 * o->info, o->prov, o->sem and *@autoprog_p.  Without a provider: an error
 * status, with *@why_p what to report (NULL: reported here). */
static ng_status ofi_choose(struct ofi *o, const struct ng_rdma_conf *cf, const struct ng_boot *boot,
                            const char *prov, bool one_host, bool shm_ok, bool nodc, bool *autoprog_p,
                            const char **why_p)
{
	const char *force = getenv("NGAUGE_OFI_SEM");
	bool autoprog = false, lacks = false;

	/* The provider first; then the semantics the notices and flush need,
	 * ordered before delivery-complete, each with (bound to loopback on
	 * one host) automatic progress where it has it. */
	o->info = ofi_pick(prov, one_host, shm_ok, false, OFI_SEM_ASSUME, why_p);
	if (o->info) {
		enum ofi_sem try[2] = {OFI_SEM_ORDERED, OFI_SEM_DELIVERY};
		size_t ntry = 2;

		snprintf(o->prov, sizeof(o->prov), "%s", o->info->fabric_attr->prov_name);
		fi_freeinfo(o->info);
		o->info = NULL;
		if (force && strcmp(force, "assume") == 0) {
			try[0] = OFI_SEM_ASSUME;
			ntry = 1;
		} else if (force && strcmp(force, "ordered") == 0) {
			try[0] = OFI_SEM_ORDERED;
			ntry = 1;
		} else if (force && strcmp(force, "delivery") == 0) {
			try[0] = OFI_SEM_DELIVERY;
			ntry = 1;
		}
		for (size_t k = 0; k < ntry && !o->info; k++)
			for (int ap = 1; ap >= 0 && !o->info; ap--) {
				/* Tests: the faulty provider grants no ordering ("late") and
				 * no delivery completion either ("late-nodc"). */
				if ((o->fault && try[k] == OFI_SEM_ORDERED) ||
				    (nodc && try[k] == OFI_SEM_DELIVERY))
					break;
				o->info = ofi_pick(o->prov, one_host, shm_ok, ap, try[k], why_p);
				autoprog = ap;
				o->sem = try[k];
			}
		if (!o->info) {
			lacks = true;
			if (boot->rank == 0 && !cf->quiet)
				ng_error(
				    "%s: ofi: provider %s%s grants neither ordered writes and reads "
				    "(FI_ORDER_WAW and FI_ORDER_RAW) nor delivery completion "
				    "(FI_DELIVERY_COMPLETE): a notice or a flush could overtake the data "
				    "it covers, so it is not used",
				    cf->who, o->prov, o->fault ? " (with NGAUGE_OFI_FAULT)" : "");
		}
	}
	*autoprog_p = autoprog;
	if (o->info) {
		return NG_OK;
	} else if (lacks) {
		*why_p = NULL;
		return NG_ERR_UNSUPPORTED;
	} else if (cf->provider && *cf->provider) {
		char names[512];

		ofi_names(names, sizeof(names));
		if (boot->rank == 0)
			ng_error(
			    "%s: ofi: provider '%s' offers no RDMA with atomics here (providers that do: %s)",
			    cf->who, cf->provider, *names ? names : "none");
		*why_p = NULL;
		return NG_ERR_USAGE;
	} else {
		return NG_ERR_NODEV;
	}
}

/*
 * libfabric's shm provider names an endpoint's shared-memory region after
 * the process id unless told otherwise, and a rank killed before its close
 * leaves the region behind in /dev/shm: a later process that gets the same
 * id (pids wrap at pid_max, 32,768 by default) fails fi_enable with
 * "Device or resource busy".  Each endpoint is named here instead, after the
 * process id and 64 random bits.  0 or a negative fi_errno.
 */
static int ofi_shm_name(struct ofi *o)
{
	uint64_t nonce = 0;
	char name[64];

	if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
		nonce = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	snprintf(name, sizeof(name), "ngauge_%ld_%016llx", (long)getpid(), (unsigned long long)nonce);
	return fi_setname(&o->ep->fid, name, strlen(name) + 1);
}

/* Opens the fabric, domain, completion queue, address vector and endpoint
 * of o->info, and puts the endpoint's name into @mine (*@len_p bytes);
 * NG_ERR_NODEV with *@why_p (in @whybuf) on a failure. */
static ng_status ofi_endpoint(struct ofi *o, size_t n, struct ofi_hello *mine, size_t *len_p, char *whybuf,
                              size_t wlen, const char **why_p)
{
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
	struct fi_av_attr ava = {.type = FI_AV_TABLE};
	const char *call = "";
	int rc = 0;

	snprintf(o->prov, sizeof(o->prov), "%s", o->info->fabric_attr->prov_name);
	o->virt = o->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
	o->prov_key = o->info->domain_attr->mr_mode & FI_MR_PROV_KEY;
	o->ep_bind = o->info->domain_attr->mr_mode & FI_MR_ENDPOINT;
	o->local = o->info->domain_attr->mr_mode & FI_MR_LOCAL;
	o->wflags = o->sem == OFI_SEM_DELIVERY ? FI_DELIVERY_COMPLETE : 0;
	o->iov_limit = o->info->tx_attr->iov_limit ? o->info->tx_attr->iov_limit : 1;
	if (o->iov_limit > NG_RDMA_IOV_MAX)
		o->iov_limit = NG_RDMA_IOV_MAX;
	cqa.size = n * OFI_DEPTH;
	ava.count = n;
	call = "fi_fabric";
	rc = fi_fabric(o->info->fabric_attr, &o->fabric, NULL);
	if (!rc) {
		call = "fi_domain";
		rc = fi_domain(o->fabric, o->info, &o->domain, NULL);
	}
	if (!rc) {
		call = "fi_cq_open";
		rc = fi_cq_open(o->domain, &cqa, &o->cq, NULL);
	}
	if (!rc) {
		call = "fi_av_open";
		rc = fi_av_open(o->domain, &ava, &o->av, NULL);
	}
	if (!rc) {
		call = "fi_endpoint";
		rc = fi_endpoint(o->domain, o->info, &o->ep, NULL);
	}
	if (!rc) {
		call = "fi_ep_bind (the address vector)";
		rc = fi_ep_bind(o->ep, &o->av->fid, 0);
	}
	if (!rc) {
		call = "fi_ep_bind (the completion queue)";
		rc = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV);
	}
	if (!rc && strcmp(o->prov, "shm") == 0) {
		call = "fi_setname";
		rc = ofi_shm_name(o);
	}
	if (!rc) {
		call = "fi_enable";
		rc = fi_enable(o->ep);
	}
	if (!rc) {
		call = "fi_getname";
		rc = fi_getname(&o->ep->fid, mine->name, len_p);
	}
	if (rc) {
		snprintf(whybuf, wlen, "%s: %s", call, fi_strerror(-rc));
		*why_p = whybuf;
		return NG_ERR_NODEV;
	}
	return NG_OK;
}

/* The per-peer arrays, the test fault's arena and the control words;
 * *@why_p when out of memory. */
static ng_status ofi_arrays(struct ofi *o, size_t n, const char **why_p)
{
	ng_status st = NG_OK;

	o->addr = calloc(n, sizeof(*o->addr));
	o->ops = calloc(n * OFI_DEPTH, sizeof(*o->ops));
	o->rctl = calloc(n, sizeof(*o->rctl));
	o->stage = calloc(n, sizeof(*o->stage));
	o->fops = o->fault ? calloc(OFI_FOPS, sizeof(*o->fops)) : NULL;
	if (!o->addr || !o->ops || !o->rctl || !o->stage || (o->fault && !o->fops)) {
		*why_p = "out of memory";
		st = NG_ERR_NOMEM;
	}
	if (st == NG_OK && o->fault)
		st = ng_ofi_mem_alloc(&o->base, OFI_ARENA, (struct ng_rdma_mr **)&o->arena);
	if (st == NG_OK)
		st = ng_ofi_mem_alloc(&o->base, 2 * n * 8, (struct ng_rdma_mr **)&o->ctl);
	return st;
}

/* What every rank told (@all) checked, and every peer's name inserted into
 * the address vector; @st is this rank's status. */
static ng_status ofi_peers(struct ofi *o, const struct ng_rdma_conf *cf, const struct ng_boot *boot,
                           struct ofi_hello *all, size_t n, ng_status st)
{
	size_t nlen;

	for (size_t i = 0; i < n && st == NG_OK; i++) {
		/* What a peer sent: its status indexes the status names, its
		 * provider is a string for strcmp and the message, its name's
		 * length is at most the field (peer.h). */
		if (all[i].status != NG_OK) {
			st = ofi_peer_status(i, all[i].status);
		} else if (!ng_peer_str(all[i].prov, sizeof(all[i].prov))) {
			st = ng_peer_bad("ofi provider name", (int)i, "not terminated");
		} else if (ng_peer_len("ofi endpoint address length", (int)i, all[i].len, 1, OFI_NAMELEN,
		                       &nlen) != NG_OK) {
			st = NG_ERR_PROTO;
		} else if (strcmp(all[i].prov, all[0].prov) != 0) {
			if (boot->rank == 0 && !cf->quiet)
				ng_error("%s: ofi: rank %zu chose provider %s, rank 0 %s", cf->who, i,
				         all[i].prov, all[0].prov);
			st = NG_ERR_NODEV;
		}
	}
	/* Every peer's name is one this rank may send to before any is
	 * inserted (the first operation connects: none is posted unless all
	 * ranks agree below). */
	for (size_t i = 0; i < n && st == NG_OK; i++)
		if (i != (size_t)boot->rank)
			st = ng_ofi_name_check(boot, o->info->addr_format, i, all[i].name, all[i].len);
	for (size_t i = 0; i < n && st == NG_OK; i++)
		if (fi_av_insert(o->av, all[i].name, 1, &o->addr[i], 0, NULL) != 1) {
			if (!cf->quiet)
				ng_error("%s: ofi: cannot insert the address of rank %zu", cf->who, i);
			st = NG_ERR_NODEV;
		}
	return st;
}

/* The control words' descriptors every rank told (@rc_all) kept, and the
 * first status a rank other than this one failed with (@st: this rank's). */
static ng_status ofi_agree(struct ofi *o, const struct ng_rdma_rmr *rc_all, size_t n, ng_status st)
{
	size_t nlen;

	for (size_t i = 0; i < n; i++) {
		if (rc_all[i].aux != NG_OK && st == NG_OK)
			st = ng_peer_len("ofi status", (int)i, rc_all[i].aux, 0, NG_STATUS_COUNT - 1,
			                 &nlen) == NG_OK
			         ? (ng_status)nlen
			         : NG_ERR_PROTO;
		if (o->rctl) {
			o->rctl[i] = rc_all[i];
			o->rctl[i].aux = 0;
		}
	}
	return st;
}

/* The capabilities and the description of an opened backend. */
static void ofi_describe(struct ofi *o, bool autoprog)
{
	bool shm;

	/* Keys: checked at the target by network providers (a wrong key is
	 * refused there, though the origin may see success); the shm provider
	 * ignores them. */
	shm = strcmp(o->prov, "shm") == 0;
	o->base.caps = NG_RDMA_CAP_READ | NG_RDMA_CAP_ATOMIC | NG_RDMA_CAP_ANYMEM |
	               (shm ? 0 : NG_RDMA_CAP_HWKEY | NG_RDMA_CAP_KEYS) |
	               (autoprog && !shm ? NG_RDMA_CAP_PROGRESS : 0) |
	               (ofi_pins(o->prov) ? NG_RDMA_CAP_PINS : 0);
	o->base.max_write = ng_rdma_max_join(o->base.max_write, o->info->ep_attr->max_msg_size);
	snprintf(o->base.desc, sizeof(o->base.desc), "ofi %s%s, %s progress, %s%s%s", o->prov,
	         ofi_loopback(o->info) ? " 127.0.0.1" : "", autoprog ? "auto" : "manual",
	         ofi_sem_names[o->sem], *o->cache ? ", MR cache " : "", o->cache);
}

static ng_status ofi_open(const struct ng_rdma_backend *be, const struct ng_rdma_conf *cf,
                          struct ng_boot *boot, struct ng_rdma **r_p)
{
	struct ofi *o = calloc(1, sizeof(*o));
	struct ofi_hello mine, *all = NULL;
	size_t n = (size_t)boot->size, len = OFI_NAMELEN;
	const char *why = NULL;
	char whybuf[160];
	struct ng_rdma_rmr rc_mine, *rc_all = NULL;
	const char *prov = cf->provider && *cf->provider ? cf->provider : NULL;
	const char *fault = getenv("NGAUGE_OFI_FAULT");
	bool one_host = true, autoprog = false, nodc, shm_ok;
	ng_status st = NG_OK;

	*r_p = NULL;
	if (!o) {
		ng_error("%s: out of memory", cf->who);
		return NG_ERR_NOMEM;
	}
	st = ng_rdma_base_init(&o->base, be, cf, boot->rank, boot->size);
	if (st != NG_OK) {
		free(o);
		return st;
	}
	o->fault = fault && strncmp(fault, "late", 4) == 0;
	nodc = fault && strcmp(fault, "late-nodc") == 0;
	memset(&mine, 0, sizeof(mine));
	snprintf(mine.host, sizeof(mine.host), "%.63s", boot->host);
	all = calloc(n, sizeof(*all));
	rc_all = calloc(n, sizeof(*rc_all));
	if (!all || !rc_all) {
		free(all);
		free(rc_all);
		ofi_close(&o->base);
		return NG_ERR_NOMEM;
	}
	/* Which hosts: one, or several (then no shm, no loopback binding). */
	if (ng_boot_allgather(boot, &mine, sizeof(mine), all) != NG_OK)
		goto err_lost;
	/* The peers' host names are strings for strcmp (a peer's field may lack
	 * its NUL: then only compared, truncated, and so another host). */
	for (size_t i = 0; i < n; i++) {
		(void)ng_peer_str(all[i].host, sizeof(all[i].host));
		one_host = one_host && strcmp(all[i].host, all[0].host) == 0;
	}
	/* The shm provider is never picked by itself for a --server's client:
	 * it reaches a peer by its process id (see ofi_name.h). */
	shm_ok = one_host && !boot->peer_addr[0];

	ofi_env(o, n);
	st = ofi_choose(o, cf, boot, prov, one_host, shm_ok, nodc, &autoprog, &why);
	if (st == NG_OK)
		st = ofi_endpoint(o, n, &mine, &len, whybuf, sizeof(whybuf), &why);
	if (st == NG_OK)
		st = ofi_arrays(o, n, &why);
	mine.status = st;
	mine.len = (uint32_t)len;
	snprintf(mine.prov, sizeof(mine.prov), "%s", o->prov);
	if (st != NG_OK && why && !cf->quiet)
		ng_error("%s: ofi backend%s%s: %s", cf->who, cf->provider ? " with provider " : "",
		         cf->provider ? cf->provider : "", why);
	if (ng_boot_allgather(boot, &mine, sizeof(mine), all) != NG_OK)
		goto err_lost;
	st = ofi_peers(o, cf, boot, all, n, st);
	/* The control words' descriptors, and one more round to agree. */
	rc_mine = st == NG_OK ? o->ctl->pub.remote : (struct ng_rdma_rmr){0};
	rc_mine.aux = (uint64_t)st;
	if (ng_boot_allgather(boot, &rc_mine, sizeof(rc_mine), rc_all) != NG_OK)
		goto err_lost;
	st = ofi_agree(o, rc_all, n, st);
	free(all);
	free(rc_all);
	if (st == NG_OK)
		st = ofi_round(o, 1);
	if (st == NG_OK)
		st = ofi_round(o, 2);
	if (st != NG_OK) {
		ofi_close(&o->base);
		return st;
	}
	ofi_describe(o, autoprog);
	*r_p = &o->base;
	return NG_OK;

err_lost:
	free(all);
	free(rc_all);
	ofi_close(&o->base);
	return NG_ERR_PEER_LOST;
}

const struct ng_rdma_backend ng_rdma_ofi = {
    .name = "ofi",
    .desc = "libfabric (--ofi-provider): EFA, cxi, psm3, verbs;ofi_rxm, shm, tcp;ofi_rxm",
    .open = ofi_open,
    .close = ofi_close,
    .mem_alloc = ng_ofi_mem_alloc,
    .mem_free = ng_ofi_dereg,
    .reg = ng_ofi_reg,
    .dereg = ng_ofi_dereg,
    .write = ng_ofi_write,
    .read = ng_ofi_read,
    .atomic = ng_ofi_atomic,
    .progress = ng_ofi_progress,
    .flush = ng_ofi_flush,
};
