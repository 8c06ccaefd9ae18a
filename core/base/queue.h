/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one intrusive FIFO: a singly linked queue of nodes embedded in the
 * caller's structures (requests of the tcp, ib and emu modules and of the
 * RDMA channel), so that queueing allocates nothing.
 *
 * A node belongs to at most one queue at a time; the queue does not own
 * what it links.  Convert a node back to its structure with
 * ng_queue_entry().  ng_queue_init() must run before first use (an
 * all-zero queue is not empty, it is broken: its tail points nowhere), and
 * an initialised queue must not be moved or copied (its tail may point into
 * it).  All operations are O(1) and never fail.  No locking: a queue
 * belongs to one thread.
 */
#ifndef NG_QUEUE_H
#define NG_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#ifndef ng_container_of
#define ng_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#endif

struct ng_queue_node {
	struct ng_queue_node *next; /* the node queued after this one, NULL at the tail */
};

struct ng_queue {
	struct ng_queue_node *head;  /* oldest, NULL when empty */
	struct ng_queue_node **tail; /* the link the next push fills */
};

/* The structure of type @type whose member @member is @node (not NULL). */
#define ng_queue_entry(node, type, member) ng_container_of(node, type, member)

static inline void ng_queue_init(struct ng_queue *q)
{
	q->head = NULL;
	q->tail = &q->head;
}

static inline bool ng_queue_empty(const struct ng_queue *q)
{
	return q->head == NULL;
}

/* Appends @n (not in any queue) at the tail. */
static inline void ng_queue_push(struct ng_queue *q, struct ng_queue_node *n)
{
	n->next = NULL;
	*q->tail = n;
	q->tail = &n->next;
}

/* The oldest node, left in the queue; NULL when empty. */
static inline struct ng_queue_node *ng_queue_peek(const struct ng_queue *q)
{
	return q->head;
}

/* Removes and returns the oldest node (its link cleared); NULL when empty. */
static inline struct ng_queue_node *ng_queue_pop(struct ng_queue *q)
{
	struct ng_queue_node *n = q->head;

	if (!n)
		return NULL;
	q->head = n->next;
	if (!q->head)
		q->tail = &q->head;
	n->next = NULL;
	return n;
}

#endif
