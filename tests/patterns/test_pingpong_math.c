/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pure logic behind pingpong, 1n and n1 (patterns/engine/common.c): seeded
 * pairing and server choice, slot strides, statistics helpers and the
 * --verify message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "patterns/engine/common.h"
#include "tests/check.h"

/* Every rank in exactly one pair, client != server, sorted by client. */
static void check_matching(const struct ng_pair *p, int n, uint64_t seed)
{
	int *seen = calloc((size_t)n, sizeof(*seen));

	for (int i = 0; i < n / 2; i++) {
		CHECK(p[i].client >= 0 && p[i].client < n && p[i].server >= 0 && p[i].server < n,
		      "n %d seed %llu: pair %d out of range", n, (unsigned long long)seed, i);
		if (p[i].client < 0 || p[i].client >= n || p[i].server < 0 || p[i].server >= n)
			continue;
		seen[p[i].client]++;
		seen[p[i].server]++;
		if (i > 0)
			CHECK(p[i - 1].client < p[i].client, "n %d: pairs not sorted by client", n);
	}
	for (int r = 0; r < n; r++)
		CHECK(seen[r] == 1, "n %d seed %llu: rank %d appears %d times", n, (unsigned long long)seed,
		      r, seen[r]);
	free(seen);
}

static void test_pairs(void)
{
	static const int sizes[] = {2, 4, 6, 8, 16, 64, 1000};
	static const uint64_t seeds[] = {0, 1, 2, 3, 12345, UINT64_MAX};

	for (size_t a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++) {
		int n = sizes[a];
		size_t np = (size_t)n / 2;
		struct ng_pair *p = calloc(np, sizeof(*p)), *q = calloc(np, sizeof(*q));

		for (size_t b = 0; b < sizeof(seeds) / sizeof(seeds[0]); b++) {
			ng_pairs_random(seeds[b], n, p);
			check_matching(p, n, seeds[b]);
			ng_pairs_random(seeds[b], n, q);
			CHECK(memcmp(p, q, np * sizeof(*p)) == 0, "n %d: same seed, different pairs", n);

			for (int r = 0; r < n; r++) {
				int peer = -1, back = -1;
				bool client = false, back_client = false;
				int i = ng_pairs_find(p, np, r, &peer, &client);

				CHECK(i >= 0, "rank %d not found", r);
				ng_pairs_find(p, np, peer, &back, &back_client);
				CHECK(back == r && client != back_client, "rank %d and %d disagree", r, peer);
			}
		}
		/* Distinct seeds give distinct pairings (n >= 16: a clash has a
		 * probability below 1e-9). */
		if (n >= 16) {
			ng_pairs_random(1, n, p);
			ng_pairs_random(2, n, q);
			CHECK(memcmp(p, q, np * sizeof(*p)) != 0, "n %d: seeds 1 and 2 pair alike", n);
		}
		free(q);
		free(p);
	}
}

/* Over many seeds, with 4 ranks: each rank is a client about half the time
 * and meets each of the other three about a third of the time. */
static void test_pairs_uniform(void)
{
	enum { N = 4, SEEDS = 6000 };
	int clients[N] = {0}, met[N][N] = {{0}};
	struct ng_pair p[N / 2];

	for (uint64_t s = 0; s < SEEDS; s++) {
		ng_pairs_random(s, N, p);
		for (int i = 0; i < N / 2; i++) {
			clients[p[i].client]++;
			met[p[i].client][p[i].server]++;
			met[p[i].server][p[i].client]++;
		}
	}
	for (int r = 0; r < N; r++) {
		CHECK(clients[r] > SEEDS * 45 / 100 && clients[r] < SEEDS * 55 / 100, "rank %d client %d/%d",
		      r, clients[r], SEEDS);
		for (int k = 0; k < N; k++)
			if (k != r)
				CHECK(met[r][k] > SEEDS * 30 / 100 && met[r][k] < SEEDS * 37 / 100,
				      "ranks %d,%d paired %d/%d", r, k, met[r][k], SEEDS);
	}
}

static void test_server(void)
{
	int hits[7] = {0};

	for (uint64_t s = 0; s < 7000; s++) {
		int r = ng_server_pick(s, 7);

		CHECK(r >= 0 && r < 7, "server %d out of range", r);
		if (r >= 0 && r < 7)
			hits[r]++;
		CHECK(r == ng_server_pick(s, 7), "seed %llu: server not deterministic",
		      (unsigned long long)s);
	}
	for (int r = 0; r < 7; r++)
		CHECK(hits[r] > 850 && hits[r] < 1150, "rank %d is the server %d/7000 times", r, hits[r]);
	CHECK(ng_server_pick(42, 1) == 0, "a single rank must be the server");
}

static void test_rng(void)
{
	struct ng_rng a, b;
	bool differ = false;

	ng_rng_seed(&a, 7, NG_RNG_STREAM_PAIRS);
	ng_rng_seed(&b, 7, NG_RNG_STREAM_SERVER);
	for (int i = 0; i < 16; i++)
		differ |= ng_rng_next(&a) != ng_rng_next(&b);
	CHECK(differ, "streams of one seed coincide");
	for (int i = 0; i < 10000; i++) {
		uint64_t v = ng_rng_below(&a, 3);

		CHECK(v < 3, "below(3) gave %llu", (unsigned long long)v);
	}
	CHECK(ng_rng_below(&a, 1) == 0, "below(1) must be 0");
}

static void test_stride(void)
{
	CHECK(ng_slot_stride(0) == 64, "stride(0) %zu", ng_slot_stride(0));
	CHECK(ng_slot_stride(1) == 64, "stride(1) %zu", ng_slot_stride(1));
	CHECK(ng_slot_stride(64) == 64, "stride(64) %zu", ng_slot_stride(64));
	CHECK(ng_slot_stride(65) == 128, "stride(65) %zu", ng_slot_stride(65));
	CHECK(ng_slot_stride(1 << 20) == 1 << 20, "stride(1M) %zu", ng_slot_stride(1 << 20));
}

static void test_stats(void)
{
	const double us[] = {4.0, 1.0, 2.0, 0.0, 3.0};
	double scratch[5], packed[NG_STATS_PACKED];
	struct ng_stats st, back;

	ng_samples_stats(us, 5, scratch, &st);
	CHECK(us[0] == 4.0 && us[1] == 1.0, "input reordered");
	CHECK(st.n == 5 && st.min == 0.0 && st.max == 4.0 && st.median == 2.0,
	      "stats n %zu min %g max %g med %g", st.n, st.min, st.max, st.median);

	/* 100 bytes in 2 us = 50 MB/s; a zero time gives 0, not infinity. */
	ng_samples_bw(us, 5, 100.0, scratch, &st);
	CHECK(st.min == 0.0, "bandwidth of a zero time is %g", st.min);
	CHECK(st.max == 100.0, "bandwidth max %g, want 100", st.max);
	CHECK(st.median == 100.0 / 3.0, "bandwidth median %g, want %g", st.median, 100.0 / 3.0);

	ng_stats_pack(&st, packed);
	ng_stats_unpack(packed, &back);
	CHECK(back.n == st.n && back.min == st.min && back.median == st.median && back.mean == st.mean &&
	          back.stddev == st.stddev && back.p99 == st.p99 && back.max == st.max &&
	          back.ci_lo == st.ci_lo && back.ci_hi == st.ci_hi && back.ci_exact == st.ci_exact,
	      "pack/unpack round trip differs");
}

/* Runs ng_verify_check with stderr captured; returns its status and the text. */
static ng_status verify_captured(const void *buf, size_t len, uint64_t tag, int from, char *out,
                                 size_t outlen)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	ng_status st;
	size_t n;

	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	st = ng_verify_check(buf, len, tag, from);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, outlen - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	return st;
}

static void test_verify(void)
{
	enum { LEN = 1000 };
	unsigned char buf[LEN], ref[LEN];
	uint64_t tag = ng_verify_tag(LEN, 3, 17);
	char msg[512], want[160];
	ng_status st;

	CHECK(tag != ng_verify_tag(LEN, 3, 18), "tag ignores the iteration");
	CHECK(tag != ng_verify_tag(LEN, 2, 17), "tag ignores the sender");
	CHECK(tag != ng_verify_tag(LEN - 1, 3, 17), "tag ignores the size");

	ng_verify_fill(buf, LEN, tag);
	memcpy(ref, buf, LEN);
	st = verify_captured(buf, LEN, tag, 3, msg, sizeof(msg));
	CHECK(st == NG_OK && msg[0] == '\0', "clean payload: status %d, message '%s'", st, msg);

	buf[777] ^= 0x5a;
	st = verify_captured(buf, LEN, tag, 3, msg, sizeof(msg));
	CHECK(st == NG_ERR_VERIFY, "corrupt payload: status %d", st);
	snprintf(want, sizeof(want),
	         "verify: size 1000 from rank 3: byte at offset 777 is 0x%02x, expected 0x%02x\n", buf[777],
	         ref[777]);
	CHECK(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg, want);
	CHECK(strchr(msg, '\n') == msg + strlen(msg) - 1, "message is not one line: '%s'", msg);
}

int main(void)
{
	test_pairs();
	test_pairs_uniform();
	test_server();
	test_rng();
	test_stride();
	test_stats();
	test_verify();
	return check_exit();
}
