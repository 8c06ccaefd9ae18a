/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The intrusive FIFO (base/queue.h): order, length, the walk from the
 * head, the empty queue (zeroed, NULL from pop and first), a link anywhere
 * in its element, an element that goes round several queues, and a long
 * mixed sequence against a plain array model.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "queue.h"
#include "tests/check.h"

/* The link deliberately not the first member. */
struct item {
	int id;
	double pad;
	struct ng_qlink link;
	char tail;
};

static struct item *item_of(struct ng_qlink *l)
{
	return NG_QUEUE_ENTRY(l, struct item, link);
}

/* The queue's ids from head to tail, by walking; returns their number. */
static size_t ids(const struct ng_queue *q, int *out, size_t max)
{
	size_t n = 0;

	for (struct ng_qlink *l = ng_queue_first(q); l && n < max; l = ng_queue_next(l))
		out[n++] = item_of(l)->id;
	return n;
}

static void test_empty(void)
{
	struct ng_queue zeroed;
	struct ng_queue init = NG_QUEUE_INIT;

	memset(&zeroed, 0, sizeof(zeroed));
	CHECK(ng_queue_empty(&zeroed), "zeroed memory is not an empty queue");
	CHECK(ng_queue_empty(&init), "NG_QUEUE_INIT is not an empty queue");
	CHECK(ng_queue_len(&init) == 0, "empty queue has length %zu", ng_queue_len(&init));
	CHECK(ng_queue_first(&init) == NULL, "first of an empty queue is not NULL");
	CHECK(ng_queue_pop(&init) == NULL, "pop of an empty queue is not NULL");
	CHECK(item_of(ng_queue_pop(&init)) == NULL, "NG_QUEUE_ENTRY(NULL) is not NULL");
	CHECK(ng_queue_empty(&init) && ng_queue_len(&init) == 0, "pop of an empty queue changed it");
}

static void test_order(void)
{
	struct item it[5];
	struct ng_queue q = NG_QUEUE_INIT;
	int got[8];
	size_t n;

	for (int i = 0; i < 5; i++) {
		it[i] = (struct item){.id = i, .tail = 'x'};
		ng_queue_push(&q, &it[i].link);
		CHECK(ng_queue_len(&q) == (size_t)i + 1, "length %zu after %d pushes", ng_queue_len(&q),
		      i + 1);
	}
	CHECK(!ng_queue_empty(&q), "queue of five is empty");
	CHECK(item_of(ng_queue_first(&q)) == &it[0], "first is not the oldest");
	CHECK(ng_queue_len(&q) == 5, "first changed the length");
	n = ids(&q, got, 8);
	CHECK(n == 5, "walk sees %zu elements, want 5", n);
	for (size_t i = 0; i < n; i++)
		CHECK(got[i] == (int)i, "walk: element %zu is %d", i, got[i]);
	CHECK(ng_queue_next(&it[4].link) == NULL, "the tail has a next");

	for (int i = 0; i < 5; i++) {
		struct item *r = item_of(ng_queue_pop(&q));

		CHECK(r == &it[i], "pop %d gives item %d", i, r ? r->id : -1);
		CHECK(r && r->link.next == NULL, "popped item %d keeps a link", i);
		CHECK(r && r->tail == 'x' && r->id == i, "popped item %d damaged", i);
		CHECK(ng_queue_len(&q) == (size_t)(4 - i), "length %zu after pop %d", ng_queue_len(&q), i);
	}
	CHECK(ng_queue_empty(&q) && ng_queue_first(&q) == NULL, "queue not empty after popping all");

	/* Empty again, the queue takes new elements (the tail was reset). */
	ng_queue_push(&q, &it[3].link);
	ng_queue_push(&q, &it[1].link);
	n = ids(&q, got, 8);
	CHECK(n == 2 && got[0] == 3 && got[1] == 1, "refilled queue holds %zu: %d %d", n, got[0], got[1]);
	ng_queue_init(&q);
	CHECK(ng_queue_empty(&q) && ng_queue_len(&q) == 0, "init does not empty the queue");
}

/* An element leaves one queue and joins another, as a request moves from a
 * send queue to being posted and back. */
static void test_two_queues(void)
{
	struct item it[4];
	struct ng_queue a = NG_QUEUE_INIT, b = NG_QUEUE_INIT;
	int got[8];
	size_t n;

	for (int i = 0; i < 4; i++) {
		it[i] = (struct item){.id = i};
		ng_queue_push(&a, &it[i].link);
	}
	ng_queue_push(&b, ng_queue_pop(&a));
	ng_queue_push(&b, ng_queue_pop(&a));
	ng_queue_push(&a, ng_queue_pop(&b));
	n = ids(&a, got, 8);
	CHECK(n == 3 && got[0] == 2 && got[1] == 3 && got[2] == 0, "queue a holds %zu: %d %d %d", n, got[0],
	      got[1], got[2]);
	n = ids(&b, got, 8);
	CHECK(n == 1 && got[0] == 1, "queue b holds %zu: %d", n, got[0]);
	CHECK(ng_queue_len(&a) == 3 && ng_queue_len(&b) == 1, "lengths %zu and %zu", ng_queue_len(&a),
	      ng_queue_len(&b));
}

/* A long mixed sequence against an array model (deterministic). */
static void test_model(void)
{
	enum { N = 64, STEPS = 20000 };
	struct item it[N];
	int model[N], mhead = 0, mlen = 0, next_id = 0;
	struct ng_queue q = NG_QUEUE_INIT;
	uint64_t x = 88172645463325252ull;
	int bad = 0;

	for (int s = 0; s < STEPS && !bad; s++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (mlen < N && (mlen == 0 || x % 3 != 0)) {
			/* Slot of the new element: the one the model frees in turn. */
			int slot = (mhead + mlen) % N;

			it[slot] = (struct item){.id = next_id};
			ng_queue_push(&q, &it[slot].link);
			model[slot] = next_id++;
			mlen++;
		} else {
			struct item *r = item_of(ng_queue_pop(&q));

			if (!r || r->id != model[mhead]) {
				CHECK(0, "step %d: pop gives %d, want %d", s, r ? r->id : -1, model[mhead]);
				bad = 1;
			}
			mhead = (mhead + 1) % N;
			mlen--;
		}
		if (ng_queue_len(&q) != (size_t)mlen) {
			CHECK(0, "step %d: length %zu, want %d", s, ng_queue_len(&q), mlen);
			bad = 1;
		}
		if (mlen && item_of(ng_queue_first(&q))->id != model[mhead]) {
			CHECK(0, "step %d: first is %d, want %d", s, item_of(ng_queue_first(&q))->id,
			      model[mhead]);
			bad = 1;
		}
	}
	CHECK(next_id > STEPS / 2, "the sequence pushed only %d elements", next_id);
}

int main(void)
{
	test_empty();
	test_order();
	test_two_queues();
	test_model();
	if (!failures)
		printf("ok: queue.h\n");
	return check_exit();
}
