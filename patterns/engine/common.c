/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the patterns; the contract is in common.h. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#include "payload.h"
#include "peer.h"
/* ng_stats_json(): the one writer of STATS objects, shared with the rows. */

/* ---- seeded choices ---------------------------------------------------- */

static uint64_t ng_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void ng_rng_seed(struct ng_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t s = seed;

	/* Mix seed and stream so that neighbouring seeds or streams do not give
	 * shifted copies of one sequence. */
	r->s = ng_splitmix64(&s);
	s = r->s ^ (stream * 0xd1b54a32d192ed03ull);
	r->s = ng_splitmix64(&s);
}

uint64_t ng_rng_next(struct ng_rng *r)
{
	return ng_splitmix64(&r->s);
}

uint64_t ng_rng_below(struct ng_rng *r, uint64_t n)
{
	/* Reject the top partial block of the 64-bit range: no modulo bias. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t v;

	do {
		v = ng_rng_next(r);
	} while (v >= limit);
	return v % n;
}

/* Element @i of the sequence client0, server0, client1, server1, ... */
static int *ng_pairs_slot(struct ng_pair *pairs, size_t i)
{
	return (i % 2) ? &pairs[i / 2].server : &pairs[i / 2].client;
}

void ng_pairs_random(uint64_t seed, int nranks, struct ng_pair *pairs)
{
	size_t n = (size_t)nranks, npairs = n / 2;
	struct ng_rng rng;

	ng_rng_seed(&rng, seed, NG_RNG_STREAM_PAIRS);

	/* Fisher-Yates over the ranks, kept in the pairs array itself (read as
	 * the sequence client0, server0, client1, ...) to need no scratch. */
	for (size_t i = 0; i < npairs; i++) {
		pairs[i].client = (int)(2 * i);
		pairs[i].server = (int)(2 * i + 1);
	}
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)ng_rng_below(&rng, i + 1);
		int *a = ng_pairs_slot(pairs, i), *b = ng_pairs_slot(pairs, j);
		int t = *a;

		*a = *b;
		*b = t;
	}

	/* Sort by client rank (insertion sort: a few thousand pairs at most), so
	 * reports list pairs in a readable order. */
	for (size_t i = 1; i < npairs; i++) {
		struct ng_pair p = pairs[i];
		size_t k = i;

		while (k > 0 && pairs[k - 1].client > p.client) {
			pairs[k] = pairs[k - 1];
			k--;
		}
		pairs[k] = p;
	}
}

void ng_pairs_choose(uint64_t seed, int nranks, struct ng_pair *pairs)
{
	if (nranks == 2) {
		pairs[0].client = 0;
		pairs[0].server = 1;
	} else {
		ng_pairs_random(seed, nranks, pairs);
	}
}

int ng_pairs_find(const struct ng_pair *pairs, size_t npairs, int rank, int *peer_p, bool *client_p)
{
	for (size_t i = 0; i < npairs; i++) {
		if (pairs[i].client == rank || pairs[i].server == rank) {
			*client_p = pairs[i].client == rank;
			*peer_p = *client_p ? pairs[i].server : pairs[i].client;
			return (int)i;
		}
	}
	return -1;
}

int ng_server_pick(uint64_t seed, int nranks)
{
	struct ng_rng rng;

	ng_rng_seed(&rng, seed, NG_RNG_STREAM_SERVER);
	return (int)ng_rng_below(&rng, (uint64_t)nranks);
}

size_t ng_sizes_max(const struct ng_run *run)
{
	size_t max = 0;

	for (size_t i = 0; i < run->nsizes; i++)
		if (run->sizes[i] > max)
			max = run->sizes[i];
	return max;
}

ng_status ng_sizes_check(const struct ng_run *run)
{
	size_t limit = run->comm->max_msg, max = ng_sizes_max(run);

	if (limit == 0 || max <= limit)
		return NG_OK;
	if (run->boot->rank == 0)
		ng_error("size %zu exceeds the largest message %s can send (%zu bytes); use -s up to %zu",
		         max, run->comm->mod->name, limit, limit);
	return NG_ERR_USAGE;
}

ng_status ng_sizes_sync(const struct ng_run *run)
{
	double stop = ng_cancelled(run) ? 1.0 : 0.0;
	ng_status st;

	/* An all-gather cannot complete before every rank has entered it, so
	 * this is a barrier too. */
	st = ng_boot_max(run->boot, &stop, 1);
	if (st != NG_OK)
		return st;
	return stop > 0.0 ? NG_ERR_CANCELLED : NG_OK;
}

/* ---- buffers ----------------------------------------------------------- */

ng_status ng_buf_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	ng_status st;

	/* A 0-byte message still needs a valid pointer. */
	if (len == 0)
		len = 1;
	st = ng_alloc(c, len, buf_p);
	if (st != NG_OK) {
		*buf_p = NULL;
		return st;
	}
	memset(*buf_p, 0, len);
	return NG_OK;
}

ng_status ng_bufs_alloc(struct ng_comm *c, size_t send_len, size_t recv_len, struct ng_bufs *b)
{
	ng_status st;

	memset(b, 0, sizeof(*b));
	st = ng_buf_alloc(c, send_len, &b->send);
	if (st != NG_OK)
		return st;
	st = ng_buf_alloc(c, recv_len, &b->recv);
	if (st != NG_OK)
		goto err_free_send;
	b->send_len = send_len;
	b->recv_len = recv_len;
	return NG_OK;

err_free_send:
	ng_free(c, b->send);
	b->send = NULL;
	return st;
}

void ng_bufs_free(struct ng_comm *c, struct ng_bufs *b)
{
	ng_free(c, b->send);
	ng_free(c, b->recv);
	memset(b, 0, sizeof(*b));
}

size_t ng_slot_stride(size_t len)
{
	if (len < 64)
		return 64;
	return (len + 63) & ~(size_t)63;
}

/* ---- --verify ---------------------------------------------------------- */

uint64_t ng_verify_tag(size_t size, int sender, uint64_t iter)
{
	return ng_payload_tag((uint64_t)size, (uint64_t)(unsigned)sender, iter);
}

void ng_verify_fill(void *buf, size_t len, uint64_t tag)
{
	ng_payload_fill(buf, len, tag);
}

ng_status ng_verify_check(const void *buf, size_t len, uint64_t tag, int from)
{
	const unsigned char *p = buf;
	size_t off;

	if (ng_payload_check(buf, len, tag, &off))
		return NG_OK;
	ng_error("verify: size %zu from rank %d: byte at offset %zu is 0x%02x, expected 0x%02x", len, from,
	         off, p[off], ng_payload_byte(tag, off));
	return NG_ERR_VERIFY;
}

/* ---- statistics -------------------------------------------------------- */

void ng_samples_stats(const double *x, size_t n, double *scratch, struct ng_stats *st_p)
{
	if (n)
		memcpy(scratch, x, n * sizeof(*x));
	ng_stats_compute(scratch, n, st_p);
}

void ng_samples_bw(const double *us, size_t n, double bytes, double *scratch, struct ng_stats *st_p)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = us[i] > 0.0 ? bytes / us[i] : 0.0;
	ng_stats_compute(scratch, n, st_p);
}

/* ---- gathering --------------------------------------------------------- */

ng_status ng_samples_gather(struct ng_boot *b, const double *mine, size_t n, double *all)
{
	return ng_boot_allgather(b, mine, n * sizeof(*mine), all);
}

void ng_stats_pack(const struct ng_stats *st, double *out)
{
	out[0] = (double)st->n;
	out[1] = st->min;
	out[2] = st->median;
	out[3] = st->mean;
	out[4] = st->stddev;
	out[5] = st->p99;
	out[6] = st->max;
	out[7] = st->ci_lo;
	out[8] = st->ci_hi;
	out[9] = st->ci_exact ? 1.0 : 0.0;
	out[10] = (st->alternating ? 1.0 : 0.0) + (st->unstable ? 2.0 : 0.0);
	out[11] = (double)st->npct;
	for (size_t i = 0; i < NG_STATS_PCT_MAX; i++) {
		out[12 + i] = i < st->npct ? st->pct_q[i] : 0.0;
		out[12 + NG_STATS_PCT_MAX + i] = i < st->npct ? st->pct[i] : 0.0;
	}
}

void ng_stats_unpack(const double *in, struct ng_stats *st_p)
{
	st_p->n = (size_t)in[0];
	st_p->min = in[1];
	st_p->median = in[2];
	st_p->mean = in[3];
	st_p->stddev = in[4];
	st_p->p99 = in[5];
	st_p->max = in[6];
	st_p->ci_lo = in[7];
	st_p->ci_hi = in[8];
	st_p->ci_exact = in[9] != 0.0;
	st_p->alternating = ((int)in[10] & 1) != 0;
	st_p->unstable = ((int)in[10] & 2) != 0;
	st_p->npct = (size_t)in[11];
	for (size_t i = 0; i < NG_STATS_PCT_MAX; i++) {
		st_p->pct_q[i] = in[12 + i];
		st_p->pct[i] = in[12 + NG_STATS_PCT_MAX + i];
	}
}

void ng_stats_unpack_n(const double *in, size_t n, struct ng_stats *sts)
{
	for (size_t i = 0; i < n; i++)
		ng_stats_unpack(in + i * NG_STATS_PACKED, &sts[i]);
}

/* A zero-filled buffer for a bootstrap collective: the @n statistics of @sts
 * packed, then @extra doubles.  NULL when out of memory (reported as "out of
 * memory @doing statistics"). */
static double *ng_stats_stage(const struct ng_stats *sts, size_t n, size_t extra, const char *doing)
{
	double *buf = calloc(n * NG_STATS_PACKED + extra + 1, sizeof(*buf));

	if (!buf) {
		ng_error("out of memory %s statistics", doing);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		ng_stats_pack(&sts[i], buf + i * NG_STATS_PACKED);
	return buf;
}

/*
 * Whether the @n packed statistics at @in, which rank @peer sent, unpack
 * into a struct ng_stats (a count, flags and a number of percentiles that
 * index pct[]); otherwise reported, and NG_ERR_PROTO (base/peer.h).
 */
static ng_status ng_stats_packed_check(const double *in, size_t n, int peer)
{
	for (size_t i = 0; i < n; i++, in += NG_STATS_PACKED) {
		if (!(in[0] >= 0 && in[0] <= 9007199254740992.0) || !(in[10] >= 0 && in[10] <= 3) ||
		    !(in[11] >= 0 && in[11] <= NG_STATS_PCT_MAX))
			return ng_peer_bad("statistics", peer,
			                   "a count, flag or number of percentiles out of range");
	}
	return NG_OK;
}

ng_status ng_stats_gather(struct ng_boot *b, const struct ng_stats *mine, size_t k, struct ng_stats *all)
{
	size_t nranks = (size_t)b->size, per = k * NG_STATS_PACKED;
	double *buf;
	ng_status st;

	/* [0, per): this rank's packed stats; [per, per + nranks * per): all. */
	buf = ng_stats_stage(mine, k, nranks * per, "gathering");
	if (!buf)
		return NG_ERR_NOMEM;
	st = ng_boot_allgather(b, buf, per * sizeof(*buf), buf + per);
	for (size_t r = 0; st == NG_OK && r < nranks; r++)
		st = ng_stats_packed_check(buf + per + r * per, k, (int)r);
	if (st == NG_OK)
		ng_stats_unpack_n(buf + per, nranks * k, all);
	free(buf);
	return st;
}

ng_status ng_stats_bcast(struct ng_boot *b, int root, struct ng_stats *sts, size_t n)
{
	double *buf;
	ng_status st;

	buf = ng_stats_stage(sts, n, 0, "sharing");
	if (!buf)
		return NG_ERR_NOMEM;
	st = ng_boot_bcast(b, root, buf, n * NG_STATS_PACKED * sizeof(*buf));
	if (st == NG_OK)
		st = ng_stats_packed_check(buf, n, root);
	if (st == NG_OK)
		ng_stats_unpack_n(buf, n, sts);
	free(buf);
	return st;
}
