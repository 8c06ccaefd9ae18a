/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA layer's backends under --server (modules/rdmalayer/rdma.h, shm.c,
 * ofi.c; core/bootstrap.h: boot->peer_addr, ng_boot_may_connect): a rank
 * whose bootstrap names the address a client connected from trusts neither
 * the process ids nor the endpoint addresses its peer publishes.
 *
 *   test_rdma_peer
 *
 * forks 2 ranks with the local bootstrap; rank 1 plays the --server's child
 * (boot->peer_addr set), rank 0 its client.  The parent is their hub and
 * exits 0 when both passed, 1 otherwise.  Scenarios:
 *   shm        the shm backend refuses at open on rank 1 (NG_ERR_USAGE), and
 *              rank 0 gets the same status from the exchange; with no peer
 *              address both open it (the control)
 *   ofi_far    ofi over tcp;ofi_rxm, rank 1's peer address 192.0.2.7 (a
 *              documentation address: rank 0's endpoint is at 127.0.0.1):
 *              both ranks' open fails (NG_ERR_PROTO: rank 1's refusal, told
 *              to rank 0) and neither rank calls connect() to an IP address
 *              during the open (counted by a connect() of this program that
 *              libfabric's calls resolve to)
 *   ofi_allow  the same with --allow 127.0.0.0/8 on rank 1: the open
 *              succeeds, and the ranks do connect (the control of the count)
 *   ofi_own    rank 1's peer address 127.0.0.1, the client's own: opens
 *   auto       "auto" with rank 1's peer address 127.0.0.1: not shm (refused
 *              on rank 1, skipped together by both ranks), then a backend
 *              both ranks agree on
 * The ofi scenarios are left out (said, not failed) in a build without
 * libfabric or where tcp;ofi_rxm does not open with trusted peers.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "allow.h"
#include "bootstrap.h"
#include "launch.h"
#include "modules/rdmalayer/rdma.h"

#include "../check.h"

/* connect() calls of this process to an IPv4 or IPv6 address. */
static volatile int ip_connects;

/* Every connect() of this process (libfabric's included: the executable
 * exports its symbols) goes through here and on to the C library's. */
#ifdef __USE_GNU
/* glibc's prototype under _GNU_SOURCE: a transparent union of the address
 * types. */
int connect(int fd, __CONST_SOCKADDR_ARG arg, socklen_t len)
{
	const struct sockaddr *a = arg.__sockaddr__;
	int (*next)(int, __CONST_SOCKADDR_ARG, socklen_t);
#else
int connect(int fd, const struct sockaddr *a, socklen_t len)
{
	int (*next)(int, const struct sockaddr *, socklen_t);
#endif
	void *sym = dlsym(RTLD_NEXT, "connect");

	if (a && (a->sa_family == AF_INET || a->sa_family == AF_INET6))
		ip_connects++;
	if (!sym)
		return -1;
	memcpy(&next, &sym, sizeof(next));
#ifdef __USE_GNU
	return next(fd, arg, len);
#else
	return next(fd, a, len);
#endif
}

/* Opens @backend (@provider) with rank 1's peer address @peer_addr ("":
 * trusted) and --allow @allow (NULL: none); returns the status and, into
 * *@connects_p, connect() calls to IP addresses during the open (and the
 * connection rounds it ends with).  Closes what opened; @name gets its
 * backend's name ("": none). */
static ng_status open_as(struct ng_boot *b, const char *backend, const char *provider, const char *peer_addr,
                         const char *allow, int *connects_p, char *name, size_t name_len)
{
	struct ng_rdma_conf cf = {
	    .who = "rdma-peer-test", .provider = provider, .gid_index = -1, .timeout_s = 20};
	struct ng_allow al = {0};
	struct ng_rdma *r = NULL;
	char err[128];
	ng_status st;
	int before;

	snprintf(b->peer_addr, sizeof(b->peer_addr), "%s", b->rank == 1 ? peer_addr : "");
	b->allow = NULL;
	if (allow && b->rank == 1) {
		CHECK(ng_allow_parse(allow, &al, err, sizeof(err)) == 0, "--allow %s: %s", allow, err);
		b->allow = &al;
	}
	before = ip_connects;
	st = ng_rdma_open(backend, &cf, b, &r);
	*connects_p = ip_connects - before;
	if (name)
		snprintf(name, name_len, "%s", r ? r->be->name : "");
	CHECK((st == NG_OK) == (r != NULL), "open %s: status %s with instance %p", backend,
	      ng_status_name(st), (void *)r);
	ng_rdma_close(r);
	b->peer_addr[0] = 0;
	b->allow = NULL;
	CHECK(ng_boot_barrier(b) == NG_OK, "barrier");
	return st;
}

static void scen_shm(struct ng_boot *b)
{
	int connects;
	ng_status st = open_as(b, "shm", NULL, "192.0.2.7", NULL, &connects, NULL, 0);

	CHECK(st == NG_ERR_USAGE, "shm with a --server's client: %s on rank %d, not ERR_USAGE",
	      ng_status_name(st), b->rank);
	st = open_as(b, "shm", NULL, "", NULL, &connects, NULL, 0);
	CHECK(st == NG_OK, "shm with trusted peers: %s on rank %d", ng_status_name(st), b->rank);
}

/* Sum of @v over the ranks. */
static int sum_ranks(struct ng_boot *b, int v)
{
	int all[2] = {0, 0};

	CHECK(ng_boot_allgather(b, &v, sizeof(v), all) == NG_OK, "allgather");
	return all[0] + all[1];
}

static void scen_ofi(struct ng_boot *b)
{
	const char *prov = "tcp;ofi_rxm";
	int connects, total;
	ng_status st;

	st = open_as(b, "ofi", prov, "", NULL, &connects, NULL, 0);
	if (sum_ranks(b, st != NG_OK)) {
		if (b->rank == 0)
			printf("ofi scenarios left out: ofi with %s does not open here (%s)\n", prov,
			       ng_status_name(st));
		return;
	}
	total = sum_ranks(b, connects);
	CHECK(total > 0, "trusted ofi open: no connect() seen on either rank (the count does not work)");

	/* ofi_far: refused before any connection. */
	st = open_as(b, "ofi", prov, "192.0.2.7", NULL, &connects, NULL, 0);
	CHECK(st == NG_ERR_PROTO,
	      "ofi, rank 0's endpoint not at the client's address: %s on rank %d, not "
	      "ERR_PROTO",
	      ng_status_name(st), b->rank);
	CHECK(connects == 0, "ofi, refused: rank %d called connect() %d time(s)", b->rank, connects);

	/* ofi_allow: --allow admits loopback. */
	st = open_as(b, "ofi", prov, "192.0.2.7", "127.0.0.0/8", &connects, NULL, 0);
	CHECK(st == NG_OK, "ofi, --allow 127.0.0.0/8: %s on rank %d", ng_status_name(st), b->rank);
	total = sum_ranks(b, connects);
	CHECK(total > 0, "ofi, --allow 127.0.0.0/8: no connect() on either rank");

	/* ofi_own: the client's own address. */
	st = open_as(b, "ofi", prov, "127.0.0.1", NULL, &connects, NULL, 0);
	CHECK(st == NG_OK, "ofi, the client's own address: %s on rank %d", ng_status_name(st), b->rank);
}

static void scen_auto(struct ng_boot *b)
{
	char name[16], all[2][16];
	int connects;
	ng_status st = open_as(b, "auto", NULL, "127.0.0.1", NULL, &connects, name, sizeof(name));

	if (st != NG_OK) {
		CHECK(st != NG_ERR_PEER_LOST && st != NG_ERR_CANCELLED, "auto under --server: %s on rank %d",
		      ng_status_name(st), b->rank);
		if (b->rank == 0)
			printf("auto under --server: no backend besides shm opens here (%s)\n",
			       ng_status_name(st));
		return;
	}
	CHECK(strcmp(name, "shm") != 0, "auto under --server opened shm on rank %d", b->rank);
	CHECK(ng_boot_allgather(b, name, sizeof(name), all) == NG_OK, "allgather");
	CHECK(strcmp(all[0], all[1]) == 0, "auto: rank 0 opened %s, rank 1 %s", all[0], all[1]);
	if (b->rank == 0)
		printf("auto under --server: %s\n", name);
}

int main(void)
{
	struct ng_boot *b;

	if (ng_boot_local(2, 5.0, &b) != NG_OK)
		return 1;
	ng_log_set_rank(b->rank);
	scen_shm(b);
#if NG_HAVE_LIBFABRIC
	scen_ofi(b);
#else
	if (b->rank == 0)
		printf("ofi scenarios left out: built without libfabric\n");
#endif
	scen_auto(b);
	if (b->rank == 0)
		printf("shm, ofi, auto under a --server's peer address: %d check(s) failed on rank 0\n",
		       failures);
	b->ops->fini(b);
	return check_exit();
}
