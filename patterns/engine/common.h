/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the patterns: seeded choices of roles, communication
 * buffers, --verify payloads, sample statistics and gathering figures to
 * the reporting rank.  A pattern keeps its samples in a sampler
 * (sampler.h), which is built on the statistics and gathering helpers here;
 * it calls those directly only for figures that are not samples.
 *
 * None of these is meant for a timed region: call them before the timer
 * starts or after it stops.  They keep no state of their own; everything
 * lives in what the caller passes.
 */
#ifndef NG_PATTERNS_COMMON_H
#define NG_PATTERNS_COMMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pattern.h"

/* ---- seeded choices ---------------------------------------------------- */

/*
 * A small deterministic generator (splitmix64).  The same seed and stream
 * give the same sequence on every rank and every machine, so ranks agree on
 * pairings and roles without exchanging anything.  Distinct @stream values
 * give independent sequences from one --seed (one stream per purpose).
 */
struct ng_rng {
	uint64_t s;
};

enum {
	NG_RNG_STREAM_PAIRS = 1,  /* ng_pairs_random */
	NG_RNG_STREAM_SERVER = 2, /* ng_server_pick */
	NG_RNG_STREAM_MATRIX = 3, /* matrix: the ring offsets of a sampled run */
};

void ng_rng_seed(struct ng_rng *r, uint64_t seed, uint64_t stream);
uint64_t ng_rng_next(struct ng_rng *r);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t ng_rng_below(struct ng_rng *r, uint64_t n);

/* One client/server pair of ranks. */
struct ng_pair {
	int client;
	int server;
};

/*
 * Random perfect matching of the ranks 0..nranks-1 (nranks even, >= 2),
 * seeded with @seed: a Fisher-Yates shuffle, consecutive ranks of the
 * permutation form a pair and the first of the two is the client.  Writes
 * nranks / 2 pairs into @pairs, sorted by client rank.  Every rank appears in
 * exactly one pair; the result depends only on (seed, nranks).
 */
void ng_pairs_random(uint64_t seed, int nranks, struct ng_pair *pairs);

/* The pairs of a paired pattern (pingpong, bw, bibw): with two ranks, rank 0
 * is the client of rank 1; with more, ng_pairs_random(). */
void ng_pairs_choose(uint64_t seed, int nranks, struct ng_pair *pairs);

/* Index of the pair holding @rank (or -1), its partner in *peer_p and whether
 * it is the client in *client_p. */
int ng_pairs_find(const struct ng_pair *pairs, size_t npairs, int rank, int *peer_p, bool *client_p);

/* The server rank of a 1:n / n:1 pattern: uniform in [0, nranks), seeded. */
int ng_server_pick(uint64_t seed, int nranks);

/* Rejects (on every rank, reported once by rank 0) a run whose sizes exceed
 * the module's max_msg.  NG_ERR_USAGE. */
ng_status ng_sizes_check(const struct ng_run *run);

/* Largest of run->sizes (0 when there are none). */
size_t ng_sizes_max(const struct ng_run *run);

/*
 * Collective step between two measurements: a barrier over the bootstrap that
 * also agrees on cancellation.  Every rank learns whether any rank saw
 * SIGINT/SIGTERM, so all stop at the same size instead of leaving the others
 * blocked.  Returns NG_ERR_CANCELLED (not reported: the driver reports the
 * interruption) when some rank was cancelled, the bootstrap's error, or NG_OK.
 */
ng_status ng_sizes_sync(const struct ng_run *run);

/* ---- buffers ----------------------------------------------------------- */

/*
 * A send and a receive buffer from the module's alloc() (registered memory),
 * separate so that --verify cannot be fooled by a module that leaves the
 * receive buffer alone.  Both are zero-filled once here, so their pages are
 * faulted in before any timing.  A length of 0 still gives a (1-byte) block,
 * so 0-byte messages have a valid pointer.
 */
struct ng_bufs {
	void *send;
	void *recv;
	size_t send_len;
	size_t recv_len;
};

/* On failure (reported by the module) nothing is left allocated and *b is
 * zeroed. */
ng_status ng_bufs_alloc(struct ng_comm *c, size_t send_len, size_t recv_len, struct ng_bufs *b);
/* Frees both buffers; safe on a zeroed or already freed struct. */
void ng_bufs_free(struct ng_comm *c, struct ng_bufs *b);

/* One zero-filled block of communication memory (same rules); free it with
 * ng_free(). */
ng_status ng_buf_alloc(struct ng_comm *c, size_t len, void **buf_p);

/* Stride between per-peer slots of one buffer: @len rounded up to 64 bytes
 * (at least 64), so slots never share a cache line. */
size_t ng_slot_stride(size_t len);

/* ---- --verify ---------------------------------------------------------- */

/* The payload tag of the message of @size bytes sent by rank @sender in
 * iteration @iter (warm-up iterations included) of a measurement. */
uint64_t ng_verify_tag(size_t size, int sender, uint64_t iter);

/* Fills @buf[0..len) with the payload of @tag. */
void ng_verify_fill(void *buf, size_t len, uint64_t tag);

/*
 * Checks @buf[0..len) against @tag.  On the first wrong byte reports, once:
 *   verify: size S from rank R: byte at offset O is 0xXX, expected 0xYY
 * and returns NG_ERR_VERIFY.
 */
ng_status ng_verify_check(const void *buf, size_t len, uint64_t tag, int from);

/* ---- statistics -------------------------------------------------------- */

/* Statistics of @x[0..n) without reordering it: @x is copied into @scratch
 * (n doubles), which is sorted. */
void ng_samples_stats(const double *x, size_t n, double *scratch, struct ng_stats *st_p);

/*
 * Bandwidth in MB/s (10^6 bytes per second, i.e. bytes per microsecond) of
 * moving @bytes in each of the times @us[0..n), and its statistics; @scratch
 * (n doubles) receives the bandwidth samples (sorted).  A non-positive time
 * (below the timer's resolution) counts as bandwidth 0, never infinity.
 */
void ng_samples_bw(const double *us, size_t n, double bytes, double *scratch, struct ng_stats *st_p);

/* ---- gathering to the reporting rank ---------------------------------- */

/*
 * Collective: every rank contributes @n doubles from @mine; @all
 * (boot->size * n doubles, ordered by rank) receives them on every rank.
 * The caller allocates @all once, before its size loop.
 */
ng_status ng_samples_gather(struct ng_boot *b, const double *mine, size_t n, double *all);

/* Number of doubles one ng_stats packs into. */
#define NG_STATS_PACKED (12 + 2 * NG_STATS_PCT_MAX)

void ng_stats_pack(const struct ng_stats *st, double *out);
void ng_stats_unpack(const double *in, struct ng_stats *st_p);
/* @n statistics packed one after the other at @in into @sts[0..n). */
void ng_stats_unpack_n(const double *in, size_t n, struct ng_stats *sts);

/*
 * Collective: every rank contributes @k statistics from @mine; @all
 * (boot->size * k entries, ordered by rank) receives them on every rank.
 * Allocates a small staging buffer (NG_ERR_NOMEM, reported).
 */
ng_status ng_stats_gather(struct ng_boot *b, const struct ng_stats *mine, size_t k, struct ng_stats *all);

/*
 * Collective: the @n statistics of rank @root copied into @sts on every rank
 * (through the bootstrap; for small data).  NG_ERR_NOMEM is reported.
 */
ng_status ng_stats_bcast(struct ng_boot *b, int root, struct ng_stats *sts, size_t n);

#endif
