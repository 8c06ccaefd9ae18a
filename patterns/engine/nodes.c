/* SPDX-License-Identifier: BSD-3-Clause */
/* Node membership; the contract is in nodes.h. */
#include "nodes.h"

#include <stdlib.h>
#include <string.h>

#include "peer.h"

#define NG_HOST_LEN sizeof(((struct ng_boot *)0)->host)

void ng_nodes_free(struct ng_nodes *n)
{
	free(n->node_of);
	free(n->local_of);
	free(n->members);
	free(n->first);
	memset(n, 0, sizeof(*n));
}

/* Host name of rank @r in the gathered table. */
static const char *ng_nodes_host(const char *hosts, int r)
{
	return hosts + (size_t)r * NG_HOST_LEN;
}

/* Assigns node numbers: virtual nodes of @per_node ranks, or one per host.
 * Returns the number of nodes. */
static int ng_nodes_assign(struct ng_nodes *n, const char *hosts, int per_node)
{
	int nnodes = 0;

	for (int r = 0; r < n->nranks; r++) {
		if (per_node > 0) {
			n->node_of[r] = r / per_node;
			if (n->node_of[r] + 1 > nnodes)
				nnodes = n->node_of[r] + 1;
			continue;
		}
		n->node_of[r] = -1;
		for (int q = 0; q < r; q++) {
			if (strcmp(ng_nodes_host(hosts, q), ng_nodes_host(hosts, r)) == 0) {
				n->node_of[r] = n->node_of[q];
				break;
			}
		}
		if (n->node_of[r] < 0)
			n->node_of[r] = nnodes++;
	}
	return nnodes;
}

/* The gathered names are compared with strcmp and printed: each must end
 * in its field (base/peer.h). */
static ng_status ng_nodes_hosts_check(char *hosts, int nranks)
{
	for (int r = 0; r < nranks; r++) {
		if (!ng_peer_str(hosts + (size_t)r * NG_HOST_LEN, NG_HOST_LEN))
			return ng_peer_bad("host name", r, "not terminated within its field");
	}
	return NG_OK;
}

ng_status ng_nodes_build(const struct ng_run *run, long long per_node, struct ng_nodes *n)
{
	struct ng_boot *b = run->boot;
	int nranks = b->size;
	char *hosts = NULL;
	ng_status st;

	memset(n, 0, sizeof(*n));
	if (per_node < 0 || per_node > nranks) {
		if (b->rank == 0)
			ng_error("--ranks-per-node %lld: expected 0 (by host name) up to the %d ranks",
			         per_node, nranks);
		return NG_ERR_USAGE;
	}

	hosts = malloc((size_t)nranks * NG_HOST_LEN);
	n->node_of = calloc((size_t)nranks, sizeof(int));
	n->local_of = calloc((size_t)nranks, sizeof(int));
	n->members = calloc((size_t)nranks, sizeof(int));
	n->first = calloc((size_t)nranks + 1, sizeof(int));
	if (!hosts || !n->node_of || !n->local_of || !n->members || !n->first) {
		ng_error("out of memory for the node table of %d ranks", nranks);
		st = NG_ERR_NOMEM;
		goto err_free;
	}
	{
		char mine[NG_HOST_LEN];

		memcpy(mine, b->host, sizeof(mine));
		mine[sizeof(mine) - 1] = '\0';
		st = ng_boot_allgather(b, mine, sizeof(mine), hosts);
		if (st != NG_OK)
			goto err_free;
	}
	st = ng_nodes_hosts_check(hosts, nranks);
	if (st != NG_OK)
		goto err_free;

	n->nranks = nranks;
	n->per_node = (int)per_node;
	n->nnodes = ng_nodes_assign(n, hosts, (int)per_node);

	/* A virtual node shares memory, so it must live on one host. */
	for (int r = 1; r < nranks && per_node > 0; r++) {
		int q = r - 1;

		if (n->node_of[q] == n->node_of[r] &&
		    strcmp(ng_nodes_host(hosts, q), ng_nodes_host(hosts, r)) != 0) {
			if (b->rank == 0)
				ng_error(
				    "--ranks-per-node %lld puts rank %d (host %s) and rank %d (host %s) in "
				    "one node; the ranks of a node must share a host",
				    per_node, q, ng_nodes_host(hosts, q), r, ng_nodes_host(hosts, r));
			st = NG_ERR_USAGE;
			goto err_free;
		}
	}

	/* Counting sort by node; ranks stay ascending within a node. */
	for (int r = 0; r < nranks; r++)
		n->first[n->node_of[r] + 1]++;
	for (int k = 0; k < n->nnodes; k++)
		n->first[k + 1] += n->first[k];
	{
		int *fill = calloc((size_t)n->nnodes, sizeof(int));

		if (!fill) {
			ng_error("out of memory for the node table of %d ranks", nranks);
			st = NG_ERR_NOMEM;
			goto err_free;
		}
		for (int r = 0; r < nranks; r++) {
			int k = n->node_of[r];

			n->local_of[r] = fill[k];
			n->members[n->first[k] + fill[k]++] = r;
		}
		free(fill);
	}
	free(hosts);
	return NG_OK;

err_free:
	free(hosts);
	ng_nodes_free(n);
	return st;
}

int ng_nodes_max_size(const struct ng_nodes *n)
{
	int max = 0;

	for (int k = 0; k < n->nnodes; k++)
		if (ng_nodes_size(n, k) > max)
			max = ng_nodes_size(n, k);
	return max;
}

bool ng_nodes_consecutive(const struct ng_nodes *n, int node)
{
	int base = ng_nodes_rank(n, node, 0);

	for (int x = 1; x < ng_nodes_size(n, node); x++)
		if (ng_nodes_rank(n, node, x) != base + x)
			return false;
	return true;
}
