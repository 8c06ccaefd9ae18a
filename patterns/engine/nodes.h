/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node membership for the multi-node patterns (alltoall, mpbibw).
 *
 * A node is a set of ranks that can share memory.  By default ranks are
 * grouped by the host name the bootstrap recorded (boot->host, gathered from
 * every rank).  With --ranks-per-node K (K > 0) consecutive ranks are grouped
 * into virtual nodes of K ranks (the last one may be smaller): ranks
 * 0..K-1 form node 0, K..2K-1 node 1, and so on.  That lets multi-node
 * schemes run on one machine; a virtual node must not span two hosts.
 *
 * Nodes are numbered in the order of their lowest rank; within a node the
 * ranks keep ascending order and their position is the "local index"
 * (the paper's shared-memory rank).  Every rank computes the same table.
 */
#ifndef NG_PATTERNS_NODES_H
#define NG_PATTERNS_NODES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/pattern.h"

struct ng_nodes {
	int nranks;
	int nnodes;
	int *node_of;  /* [nranks] node of each rank */
	int *local_of; /* [nranks] local index of each rank in its node */
	int *members;  /* [nranks] ranks grouped by node, ascending in a node */
	int *first;    /* [nnodes + 1] node n holds members[first[n] .. first[n + 1]) */
	int per_node;  /* --ranks-per-node as given; 0: grouped by host name */
};

/*
 * Collective: builds the table from the host names of all ranks (one
 * allgather over the bootstrap) and @per_node (0: by host name).  A negative
 * @per_node or a virtual node spanning two hosts is NG_ERR_USAGE, reported
 * once by rank 0.  On failure nothing is left allocated.
 */
ng_status ng_nodes_build(const struct ng_run *run, long long per_node, struct ng_nodes *n);
void ng_nodes_free(struct ng_nodes *n);

/* Number of ranks on node @node. */
static inline int ng_nodes_size(const struct ng_nodes *n, int node)
{
	return n->first[node + 1] - n->first[node];
}

/* The rank with local index @local on node @node. */
static inline int ng_nodes_rank(const struct ng_nodes *n, int node, int local)
{
	return n->members[n->first[node] + local];
}

/* Largest number of ranks on any node. */
int ng_nodes_max_size(const struct ng_nodes *n);

/* True when node @node's ranks are consecutive (rank(node, x) = rank(node, 0) + x). */
bool ng_nodes_consecutive(const struct ng_nodes *n, int node);

#endif
