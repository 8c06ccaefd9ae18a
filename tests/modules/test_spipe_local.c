/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The spipe module on two local ranks, one protocol and one backend:
 *
 *   test_spipe_local MODE BACKEND [PROVIDER]     e.g. rcache shm
 *
 * Content is checked byte by byte everywhere:
 *   reuse     memory freed and allocated again (mostly at the same address):
 *             every message carries the new content, and in rcache mode
 *             the cache misses on the new memory (it was told of the free)
 *             and hits on the second send from the same memory
 *   foreign   memory that is not from alloc() (the heap): delivered, never
 *             cached
 *   fresh     a second instance with --spipe-fresh: rcache never hits
 *   window    3 rendezvous messages and 2 eager ones in flight at once each
 *             way (non-blocking), sizes growing (copy mode's buffers grow
 *             while earlier receives still hold the old ones)
 *   mismatch  a rendezvous send against a receive 1 byte longer, and an
 *             eager send against a rendezvous receive: NG_ERR_TRUNCATED
 *             where the channel says so, and the next message arrives intact
 * Small buffers and blocks (--spipe-bufsize 8K, --spipe-block 256,
 * --rdma-eager 512) so that messages cross many chunks and wrap the
 * buffers.  Exit 77 when the backend cannot be opened.
 */
#include "config.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/args.h"
#include "core/bootstrap.h"
#include "core/launch.h"
#include "core/module.h"

#include "../check.h"

extern const struct ng_module ng_module_spipe;

struct t {
	struct ng_comm *c;
	struct ng_boot *b;
	int me, peer;
	const char *mode;
};

static unsigned char pat(size_t i, size_t size, unsigned tag)
{
	return (unsigned char)(i * 131u + size * 7u + tag * 29u + (i >> 9) * 3u + 1u);
}

static void fill(unsigned char *p, size_t n, unsigned tag)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pat(i, n, tag);
}

static void expect(const unsigned char *p, size_t n, unsigned tag, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(i, n, tag)) {
			CHECK(0, "%s: %zu bytes, tag %u: byte %zu is %u, expected %u", what, n, tag, i, p[i],
			      pat(i, n, tag));
			return;
		}
}

#define OK(call) CHECK((st = (call)) == NG_OK, "%s: %s", #call, ng_status_name(st))

/* A number of rank 0's "spipe" result block: under @sect (or the top). */
static long long counter(struct t *t, const char *sect, const char *key)
{
	json_t *b = t->c->ops->report(t->c), *o = sect ? json_object_get(b, sect) : b;
	long long v = json_integer_value(json_object_get(o, key));

	json_decref(b);
	return v;
}

static void t_reuse(struct t *t)
{
	const size_t n = 300007;
	void *prev = NULL;
	unsigned same = 0;
	long long h0 = counter(t, "rcache", "hits"), m0 = counter(t, "rcache", "misses");
	ng_status st;

	for (unsigned it = 0; it < 6; it++) {
		unsigned char *buf;

		OK(ng_alloc(t->c, n, (void **)&buf));
		same += buf == prev;
		prev = buf;
		for (unsigned k = 0; k < 2; k++) {
			unsigned tag = it * 2 + k;

			if (t->me == 0) {
				fill(buf, n, tag);
				OK(ng_send(t->c, t->peer, buf, n));
			} else {
				memset(buf, 0, n);
				OK(ng_recv(t->c, t->peer, buf, n));
				expect(buf, n, tag, "reuse");
			}
		}
		ng_free(t->c, buf);
	}
	if (strcmp(t->mode, "rcache") == 0) {
		/* every new block misses (on both its messages' sides at most
		 * once), the second message from it hits */
		CHECK(counter(t, "rcache", "misses") - m0 == 6, "misses %lld (6 blocks)",
		      counter(t, "rcache", "misses") - m0);
		CHECK(counter(t, "rcache", "hits") - h0 == 6, "hits %lld (6 second messages)",
		      counter(t, "rcache", "hits") - h0);
		CHECK(counter(t, "rcache", "invalidations") >= 6, "invalidations %lld",
		      counter(t, "rcache", "invalidations"));
	}
	if (t->me == 0)
		printf("reuse: %u of 5 blocks came back at the same address\n", same);
}

static void t_foreign(struct t *t)
{
	const size_t n = 70001;
	unsigned char *heap = malloc(n);
	long long h0 = counter(t, "rcache", "hits"), u0 = counter(t, "rcache", "uncached");
	ng_status st;

	for (unsigned k = 0; k < 3; k++) {
		if (t->me == 0) {
			fill(heap, n, 100 + k);
			OK(ng_send(t->c, t->peer, heap, n));
		} else {
			memset(heap, 0, n);
			OK(ng_recv(t->c, t->peer, heap, n));
			expect(heap, n, 100 + k, "heap memory");
		}
	}
	if (strcmp(t->mode, "rcache") == 0) {
		CHECK(counter(t, "rcache", "hits") == h0, "memory not from alloc() was cached");
		CHECK(counter(t, "rcache", "uncached") - u0 == 3, "uncached %lld",
		      counter(t, "rcache", "uncached") - u0);
	}
	free(heap);
}

static void t_window(struct t *t)
{
	static const size_t sizes[] = {20000, 100, 300000, 511, (size_t)3 << 20};
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	struct ng_req sr[N], rr[N];
	unsigned char *sb[N], *rb[N];
	ng_status st;

	for (unsigned i = 0; i < N; i++) {
		OK(ng_alloc(t->c, sizes[i], (void **)&sb[i]));
		OK(ng_alloc(t->c, sizes[i], (void **)&rb[i]));
		fill(sb[i], sizes[i], 200 + i + 10 * (unsigned)t->me);
		memset(rb[i], 0, sizes[i]);
	}
	for (unsigned i = 0; i < N; i++)
		OK(ng_irecv(t->c, t->peer, rb[i], sizes[i], &rr[i]));
	for (unsigned i = 0; i < N; i++)
		OK(ng_isend(t->c, t->peer, sb[i], sizes[i], &sr[i]));
	OK(ng_waitall(t->c, sr, N));
	OK(ng_waitall(t->c, rr, N));
	for (unsigned i = 0; i < N; i++) {
		expect(rb[i], sizes[i], 200 + i + 10 * (unsigned)t->peer, "window");
		ng_free(t->c, sb[i]);
		ng_free(t->c, rb[i]);
	}
}

static void t_mismatch(struct t *t)
{
	const size_t n = 100003;
	unsigned char *buf;
	ng_status st;

	OK(ng_alloc(t->c, n + 1, (void **)&buf));
	if (t->me == 0) {
		fill(buf, n, 300);
		st = ng_send(t->c, t->peer, buf, n);
		CHECK(st == NG_ERR_TRUNCATED, "rendezvous send to a longer receive: %s", ng_status_name(st));
		fill(buf, 100, 301);
		st = ng_send(t->c, t->peer, buf, 100);
		CHECK(st == NG_OK, "eager send to a rendezvous receive: %s", ng_status_name(st));
		fill(buf, n, 302);
		OK(ng_send(t->c, t->peer, buf, n));
	} else {
		st = ng_recv(t->c, t->peer, buf, n + 1);
		CHECK(st == NG_ERR_TRUNCATED, "rendezvous receive 1 byte too long: %s", ng_status_name(st));
		st = ng_recv(t->c, t->peer, buf, n);
		CHECK(st == NG_ERR_TRUNCATED, "rendezvous receive of an eager message: %s",
		      ng_status_name(st));
		memset(buf, 0, n);
		OK(ng_recv(t->c, t->peer, buf, n));
		expect(buf, n, 302, "after the mismatches");
	}
	ng_free(t->c, buf);
}

static ng_status open_with(struct t *t, struct ng_args *a, bool fresh)
{
	static volatile sig_atomic_t cancel;
	struct ng_module_env env = {.boot = t->b, .args = a, .cancel = &cancel, .timeout_s = 5};
	char err[200];

	if (fresh)
		ng_args_set(a, ng_args_find(a, "spipe-fresh"), "1", err, sizeof(err));
	return ng_module_spipe.ops->open(&ng_module_spipe, &env, &t->c);
}

int main(int argc, char **argv)
{
	struct ng_args args = {0};
	struct t t = {0};
	char err[200];
	ng_status st;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s reg|rcache|copy|pipeline|super shm|ofi|verbs [PROVIDER]\n",
		        argv[0]);
		return 2;
	}
	t.mode = argv[1];
	ng_module_declare(&args, &ng_module_spipe);
	ng_args_set(&args, ng_args_find(&args, "spipe-mode"), argv[1], err, sizeof(err));
	ng_args_set(&args, ng_args_find(&args, "rdma-backend"), argv[2], err, sizeof(err));
	ng_args_set(&args, ng_args_find(&args, "rdma-poll"), "yield", err, sizeof(err));
	ng_args_set(&args, ng_args_find(&args, "rdma-eager"), "512", err, sizeof(err));
	ng_args_set(&args, ng_args_find(&args, "spipe-bufsize"), "8K", err, sizeof(err));
	ng_args_set(&args, ng_args_find(&args, "spipe-block"), "256", err, sizeof(err));
	if (argc == 4)
		ng_args_set(&args, ng_args_find(&args, "ofi-provider"), argv[3], err, sizeof(err));
	if (ng_boot_local(2, 8.0, &t.b) != NG_OK)
		return 1;
	t.me = t.b->rank;
	t.peer = 1 - t.me;
	ng_log_set_rank(t.me);
	st = open_with(&t, &args, false);
	if (st != NG_OK)
		return st == NG_ERR_USAGE ? 2 : 77;
	if (t.me == 0)
		printf("spipe %s over %s: %s\n", argv[1], argv[2], t.c->device);
	t_reuse(&t);
	t_foreign(&t);
	t_window(&t);
	t_mismatch(&t);
	CHECK(ng_boot_barrier(t.b) == NG_OK, "barrier");
	t.c->ops->close(t.c);

	/* --spipe-fresh: the same buffer every time, and rcache never hits. */
	st = open_with(&t, &args, true);
	CHECK(st == NG_OK, "open with --spipe-fresh: %s", ng_status_name(st));
	if (st == NG_OK) {
		const size_t n = 50001;
		unsigned char *buf;

		OK(ng_alloc(t.c, n, (void **)&buf));
		for (unsigned k = 0; k < 4; k++) {
			if (t.me == 0) {
				fill(buf, n, 400 + k);
				OK(ng_send(t.c, t.peer, buf, n));
			} else {
				OK(ng_recv(t.c, t.peer, buf, n));
				expect(buf, n, 400 + k, "fresh");
			}
		}
		if (strcmp(t.mode, "rcache") == 0) {
			CHECK(counter(&t, "rcache", "hits") == 0, "a hit with --spipe-fresh");
			CHECK(counter(&t, "rcache", "misses") == 4, "misses %lld (4 messages)",
			      counter(&t, "rcache", "misses"));
		}
		{
			json_t *b = t.c->ops->report(t.c);

			CHECK(strcmp(json_string_value(json_object_get(b, "memory")), "fresh") == 0,
			      "the result says fresh");
			json_decref(b);
		}
		ng_free(t.c, buf);
		CHECK(ng_boot_barrier(t.b) == NG_OK, "barrier");
		t.c->ops->close(t.c);
	}
	ng_args_release(&args);
	if (t.me == 0)
		printf("reuse, foreign, window, mismatch, fresh: %d check(s) failed on rank 0\n", failures);
	t.b->ops->fini(t.b);
	return check_exit();
}
