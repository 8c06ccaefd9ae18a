/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One intrusive FIFO, for the modules' queues of requests (a peer's sends
 * and receives in posting order).
 *
 * An element embeds a struct ng_qlink, at any place in it, and reaches the
 * queue through that link; NG_QUEUE_ENTRY() turns a link back into its
 * element.  Usage:
 *
 *	struct my_req {
 *		...
 *		struct ng_qlink link;
 *	};
 *	struct ng_queue q = NG_QUEUE_INIT;    (or zeroed memory, or ng_queue_init)
 *
 *	ng_queue_push(&q, &r->link);
 *	struct my_req *first = NG_QUEUE_ENTRY(ng_queue_first(&q), struct my_req, link);
 *	struct my_req *done = NG_QUEUE_ENTRY(ng_queue_pop(&q), struct my_req, link);
 *
 * Contract:
 * - Ownership: the queue owns nothing.  It never allocates or frees; the
 *   caller keeps an element alive (and its link untouched) while it is
 *   queued.  An element is in at most one queue at a time through one link.
 * - Order: first in, first out; elements leave only at the head (a queue of
 *   requests completes in order), so there is no removal from the middle.
 * - Cost: every operation is O(1), inline, never blocks and cannot fail.
 * - Threads: none of it is thread-safe; a queue belongs to one thread.
 * - An empty queue is all zeroes: zeroed memory (calloc, a designated
 *   initializer) is a valid empty queue.
 */
#ifndef NG_QUEUE_H
#define NG_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

/* Converts a pointer to @member of a @type into a pointer to the @type. */
#ifndef ng_container_of
#define ng_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#endif

/* The link an element embeds.  Its content is the queue's while the element
 * is queued; NULL in an element that is not. */
struct ng_qlink {
	struct ng_qlink *next;
};

struct ng_queue {
	struct ng_qlink *head; /* NULL when empty */
	struct ng_qlink *tail; /* NULL when empty */
	size_t len;            /* elements queued */
};

#define NG_QUEUE_INIT                                                                                        \
	{                                                                                                    \
		NULL, NULL, 0                                                                                \
	}

/* Makes @q empty (forgets its elements: their links are left as they are). */
static inline void ng_queue_init(struct ng_queue *q)
{
	q->head = q->tail = NULL;
	q->len = 0;
}

static inline bool ng_queue_empty(const struct ng_queue *q)
{
	return q->head == NULL;
}

/* The number of elements queued. */
static inline size_t ng_queue_len(const struct ng_queue *q)
{
	return q->len;
}

/* The head's link (the oldest element), or NULL when @q is empty.  The
 * element stays queued. */
static inline struct ng_qlink *ng_queue_first(const struct ng_queue *q)
{
	return q->head;
}

/* The link queued after @l (an element of some queue), or NULL when @l is
 * that queue's tail: for walking a queue from its head without changing it. */
static inline struct ng_qlink *ng_queue_next(const struct ng_qlink *l)
{
	return l->next;
}

/* Appends the element of link @l, which must not be queued, at the tail. */
static inline void ng_queue_push(struct ng_queue *q, struct ng_qlink *l)
{
	l->next = NULL;
	if (q->tail)
		q->tail->next = l;
	else
		q->head = l;
	q->tail = l;
	q->len++;
}

/* Removes the head and returns its link (->next NULL again), or returns NULL
 * when @q is empty. */
static inline struct ng_qlink *ng_queue_pop(struct ng_queue *q)
{
	struct ng_qlink *l = q->head;

	if (!l)
		return NULL;
	q->head = l->next;
	if (!q->head)
		q->tail = NULL;
	q->len--;
	l->next = NULL;
	return l;
}

/* NG_QUEUE_ENTRY's helper: the address @off bytes before @l, NULL for NULL. */
static inline void *ng_queue_entry_at(struct ng_qlink *l, size_t off)
{
	return l ? (void *)((char *)l - off) : NULL;
}

/* The @type whose @member is the link @l (a struct ng_qlink *, evaluated
 * once), or NULL when @l is NULL: NG_QUEUE_ENTRY(ng_queue_pop(q), ...) is
 * NULL on an empty queue. */
#define NG_QUEUE_ENTRY(l, type, member) ((type *)ng_queue_entry_at((l), offsetof(type, member)))

#endif
