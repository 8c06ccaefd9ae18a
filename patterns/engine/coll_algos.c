/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The coll pattern's algorithms (what they compute: coll_algos.h; what the
 * pattern measures: patterns/coll.c; the method: doc/coll.md).
 *
 *   ring           allreduce: ring reduce-scatter then ring allgather of P
 *                  chunks (2 (P - 1) steps); allgather and reduce_scatter:
 *                  P - 1 steps to the right neighbour.
 *   rd             recursive doubling with the fold: allreduce exchanges
 *                  the whole vector with v XOR 2^k; allgather the blocks of
 *                  the group gathered so far; reduce_scatter is its mirror,
 *                  recursive halving (the half the partner keeps is sent).
 *   binomial       binomial trees rooted at 0: bcast, reduce, gather,
 *                  scatter; allreduce is the binomial reduce and bcast.
 *   rabenseifner   allreduce: recursive-halving reduce-scatter and a
 *                  recursive-doubling allgather over pof2 chunks, with the
 *                  fold.
 *   scatter_allgather  bcast (van de Geijn): a binomial scatter of P chunks,
 *                  then a ring allgather.
 *   dissemination  barrier: ceil(log2 P) rounds, rank r signals r + 2^k
 *                  and waits for r - 2^k (one byte).
 *   linear         the root sends to (receives from) every rank in turn:
 *                  bcast, reduce, gather, scatter.
 *   native         the module's own collective (core/module.h, .coll).
 *
 * Exchanges: with isend/irecv both halves of an exchange are posted, then
 * waited for; without, blocking calls in an order that completes even
 * when a send returns only once its receive is posted: pairs (XOR partners)
 * send first from the lower rank, shifts (ring, dissemination) follow
 * alltoall's rule, even positions along each cycle of the shift sending
 * first.
 */
#include <string.h>

#include "coll_algos.h"

const char *const ng_coll_algo_names[NG_CA_NALGOS] = {
    "ring", "rd", "binomial", "rabenseifner", "scatter_allgather", "dissemination", "linear", "native",
};
const char *const ng_coll_op_names[NG_COLL_NOPS] = {
    "allreduce", "bcast", "reduce", "allgather", "reduce_scatter", "barrier", "gather", "scatter",
};
const char *const ng_coll_type_names[NG_COLL_NTYPES] = {"int32", "int64", "float", "double"};
const size_t ng_coll_type_size[NG_COLL_NTYPES] = {4, 8, 4, 8};

#define NG_BIT(a) (1u << (a))

/* Which algorithms each operation has (native for all). */
static const unsigned ng_coll_algos_of[NG_COLL_NOPS] = {
    [NG_COLL_ALLREDUCE] =
        NG_BIT(NG_CA_RING) | NG_BIT(NG_CA_RD) | NG_BIT(NG_CA_BINOMIAL) | NG_BIT(NG_CA_RABENSEIFNER),
    [NG_COLL_BCAST] = NG_BIT(NG_CA_BINOMIAL) | NG_BIT(NG_CA_SAG) | NG_BIT(NG_CA_LINEAR),
    [NG_COLL_REDUCE] = NG_BIT(NG_CA_BINOMIAL) | NG_BIT(NG_CA_LINEAR),
    [NG_COLL_ALLGATHER] = NG_BIT(NG_CA_RING) | NG_BIT(NG_CA_RD),
    [NG_COLL_REDUCE_SCATTER] = NG_BIT(NG_CA_RING) | NG_BIT(NG_CA_RD),
    [NG_COLL_BARRIER] = NG_BIT(NG_CA_DISSEMINATION),
    [NG_COLL_GATHER] = NG_BIT(NG_CA_BINOMIAL) | NG_BIT(NG_CA_LINEAR),
    [NG_COLL_SCATTER] = NG_BIT(NG_CA_BINOMIAL) | NG_BIT(NG_CA_LINEAR),
};

bool ng_coll_applies(enum ng_coll_op op, int algo)
{
	return algo == NG_CA_NATIVE || (ng_coll_algos_of[op] & NG_BIT(algo)) != 0;
}

void ng_coll_exec_init(struct ng_coll_exec *x, struct ng_comm *c, enum ng_coll_type type)
{
	x->c = c;
	x->me = c->rank;
	x->P = c->size;
	x->nb = (c->caps & NG_CAP_NONBLOCK) != 0;
	x->type = type;
	x->esize = ng_coll_type_size[type];
	x->pof2 = 1;
	while (x->pof2 * 2 <= x->P)
		x->pof2 *= 2;
	x->rem = x->P - x->pof2;
	if (x->me < 2 * x->rem)
		x->vr = x->me % 2 ? x->me / 2 : -1;
	else
		x->vr = x->me - x->rem;
}

/* ---- helpers --------------------------------------------------------------- */

/* dst[i] += src[i], @n elements of @t (integers wrap: unsigned sums). */
static void ng_coll_sum(enum ng_coll_type t, void *restrict dst, const void *restrict src, size_t n)
{
	switch (t) {
	case NG_COLL_INT32: {
		uint32_t *d = dst;
		const uint32_t *s = src;

		for (size_t i = 0; i < n; i++)
			d[i] += s[i];
		break;
	}
	case NG_COLL_INT64: {
		uint64_t *d = dst;
		const uint64_t *s = src;

		for (size_t i = 0; i < n; i++)
			d[i] += s[i];
		break;
	}
	case NG_COLL_FLOAT: {
		float *d = dst;
		const float *s = src;

		for (size_t i = 0; i < n; i++)
			d[i] += s[i];
		break;
	}
	default: {
		double *d = dst;
		const double *s = src;

		for (size_t i = 0; i < n; i++)
			d[i] += s[i];
		break;
	}
	}
}

static ng_status ng_coll_send(struct ng_coll_exec *x, int peer, const void *buf, size_t len)
{
	return len ? ng_send(x->c, peer, buf, len) : NG_OK;
}

static ng_status ng_coll_recv(struct ng_coll_exec *x, int peer, void *buf, size_t len)
{
	return len ? ng_recv(x->c, peer, buf, len) : NG_OK;
}

/* Sends @slen bytes to @dst and receives @rlen from @src at once; without
 * isend/irecv in the blocking order @send_first. */
static ng_status ng_coll_sendrecv(struct ng_coll_exec *x, int dst, const void *sb, size_t slen, int src,
                                  void *rb, size_t rlen, bool send_first)
{
	ng_status st = NG_OK;

	if (x->nb && slen && rlen) {
		st = ng_irecv(x->c, src, rb, rlen, &x->reqs[0]);
		if (st == NG_OK)
			st = ng_isend(x->c, dst, sb, slen, &x->reqs[1]);
		if (st != NG_OK)
			return st;
		return ng_waitall(x->c, x->reqs, 2);
	}
	if (send_first) {
		st = ng_coll_send(x, dst, sb, slen);
		return st != NG_OK ? st : ng_coll_recv(x, src, rb, rlen);
	}
	st = ng_coll_recv(x, src, rb, rlen);
	return st != NG_OK ? st : ng_coll_send(x, dst, sb, slen);
}

static int ng_coll_gcd(int a, int b)
{
	while (b) {
		int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* In a shift by @k (send to me + k), whether this rank sends first: even
 * positions along its cycle do (alltoall_algos.c's rule). */
static bool ng_coll_shift_first(const struct ng_coll_exec *x, int k)
{
	int g = ng_coll_gcd(x->P, k), r = x->me % g, pos = 0;

	while (r != x->me) {
		r = (r + k) % x->P;
		pos++;
	}
	return pos % 2 == 0;
}

/* The real rank of virtual rank @v, and the first rank it stands for. */
static int ng_coll_real(const struct ng_coll_exec *x, int v)
{
	return v < x->rem ? 2 * v + 1 : v + x->rem;
}
static int ng_coll_first(const struct ng_coll_exec *x, int v)
{
	return v < x->rem ? 2 * v : v + x->rem;
}

/* Element offset of chunk @i of @n elements cut into @parts. */
static size_t ng_coll_cut(size_t n, size_t i, size_t parts)
{
	return n * i / parts; /* n below 2^40 elements, i at most 4096 */
}

static int ng_coll_mod(int a, int P)
{
	return ((a % P) + P) % P;
}

/* ---- building blocks --------------------------------------------------------- */

/*
 * Ring reduce-scatter over @buf (P chunks at element offsets cut(n, i, P)),
 * partial sums received into tmp: afterwards chunk me holds the sum.
 */
static ng_status ng_coll_ring_rs(struct ng_coll_exec *x, unsigned char *buf, const size_t *off, size_t es)
{
	int P = x->P, me = x->me, right = (me + 1) % P, left = (me - 1 + P) % P;
	bool first = ng_coll_shift_first(x, 1);

	for (int k = 0; k < P - 1; k++) {
		int si = ng_coll_mod(me - k - 1, P), ri = ng_coll_mod(me - k - 2, P);
		size_t sl = (off[si + 1] - off[si]) * es, rl = (off[ri + 1] - off[ri]) * es;
		ng_status st;

		st = ng_coll_sendrecv(x, right, buf + off[si] * es, sl, left, x->tmp, rl, first);
		if (st != NG_OK)
			return st;
		ng_coll_sum(x->type, buf + off[ri] * es, x->tmp, off[ri + 1] - off[ri]);
	}
	return NG_OK;
}

/* Ring allgather over @buf: chunk me is there; afterwards all P are. */
static ng_status ng_coll_ring_ag(struct ng_coll_exec *x, unsigned char *buf, const size_t *off, size_t es)
{
	int P = x->P, me = x->me, right = (me + 1) % P, left = (me - 1 + P) % P;
	bool first = ng_coll_shift_first(x, 1);

	for (int k = 0; k < P - 1; k++) {
		int si = ng_coll_mod(me - k, P), ri = ng_coll_mod(me - k - 1, P);
		ng_status st;

		st = ng_coll_sendrecv(x, right, buf + off[si] * es, (off[si + 1] - off[si]) * es, left,
		                      buf + off[ri] * es, (off[ri + 1] - off[ri]) * es, first);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* Cut points (elements) of the ring's chunks; @off has P + 1 entries.  For
 * the block operations chunk i is block i. */
static void ng_coll_ring_cuts(const struct ng_coll_exec *x, size_t n, bool blocks, size_t *off)
{
	for (int i = 0; i <= x->P; i++)
		off[i] = blocks ? n * (size_t)i : ng_coll_cut(n, (size_t)i, (size_t)x->P);
}

/* Virtual rank @v's element range starts at lo[v] (lo has pof2 + 1
 * entries). */
static void ng_coll_vcuts(const struct ng_coll_exec *x, size_t n, bool blocks, size_t *lo)
{
	for (int v = 0; v <= x->pof2; v++)
		lo[v] = blocks ? n * (size_t)(v == x->pof2 ? x->P : ng_coll_first(x, v))
		               : ng_coll_cut(n, (size_t)v, (size_t)x->pof2);
}

/* The fold: the even ranks below 2 rem send @len bytes of @buf to the odd
 * rank above, which sums them into @buf (@sum) or stores them at @at. */
static ng_status ng_coll_fold(struct ng_coll_exec *x, unsigned char *buf, size_t len, bool sum,
                              unsigned char *at)
{
	ng_status st;

	if (x->me >= 2 * x->rem)
		return NG_OK;
	if (x->vr < 0)
		return ng_coll_send(x, x->me + 1, buf, len);
	st = ng_coll_recv(x, x->me - 1, sum ? x->tmp : at, len);
	if (st == NG_OK && sum)
		ng_coll_sum(x->type, buf, x->tmp, len / x->esize);
	return st;
}

/* The unfold: the odd ranks below 2 rem send @len bytes at @buf back. */
static ng_status ng_coll_unfold(struct ng_coll_exec *x, unsigned char *buf, size_t len)
{
	if (x->me >= 2 * x->rem)
		return NG_OK;
	if (x->vr < 0)
		return ng_coll_recv(x, x->me + 1, buf, len);
	return ng_coll_send(x, x->me - 1, buf, len);
}

/* Recursive halving among the virtual ranks over @buf (ranges lo[]): this
 * virtual rank ends with the sum of [lo[vr], lo[vr + 1]). */
static ng_status ng_coll_halving(struct ng_coll_exec *x, unsigned char *buf, const size_t *lo)
{
	size_t es = x->esize;
	int vr = x->vr;

	for (int d = x->pof2 / 2; d >= 1; d /= 2) {
		int vp = vr ^ d, a = vr & ~(2 * d - 1);
		int keep = (vr & d) ? a + d : a, give = (vr & d) ? a : a + d;
		size_t k0 = lo[keep], k1 = lo[keep + d], g0 = lo[give], g1 = lo[give + d];
		ng_status st;

		st = ng_coll_sendrecv(x, ng_coll_real(x, vp), buf + g0 * es, (g1 - g0) * es,
		                      ng_coll_real(x, vp), x->tmp, (k1 - k0) * es, vr < vp);
		if (st != NG_OK)
			return st;
		ng_coll_sum(x->type, buf + k0 * es, x->tmp, k1 - k0);
	}
	return NG_OK;
}

/* Recursive doubling allgather among the virtual ranks over @buf (ranges
 * lo[]): [lo[vr], lo[vr + 1]) is there; afterwards all of [lo[0],
 * lo[pof2]). */
static ng_status ng_coll_doubling(struct ng_coll_exec *x, unsigned char *buf, const size_t *lo)
{
	size_t es = x->esize;
	int vr = x->vr;

	for (int d = 1; d < x->pof2; d *= 2) {
		int vp = vr ^ d, a = vr & ~(d - 1), b = vp & ~(d - 1);
		ng_status st;

		st = ng_coll_sendrecv(x, ng_coll_real(x, vp), buf + lo[a] * es, (lo[a + d] - lo[a]) * es,
		                      ng_coll_real(x, vp), buf + lo[b] * es, (lo[b + d] - lo[b]) * es,
		                      vr < vp);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* Binomial broadcast from 0 of @len bytes of @buf. */
static ng_status ng_coll_bino_bcast(struct ng_coll_exec *x, unsigned char *buf, size_t len)
{
	int me = x->me, mask = 1;
	ng_status st = NG_OK;

	while (mask < x->P) {
		if (me & mask) {
			st = ng_coll_recv(x, me - mask, buf, len);
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; st == NG_OK && mask > 0; mask >>= 1)
		if (me + mask < x->P)
			st = ng_coll_send(x, me + mask, buf, len);
	return st;
}

/* Binomial reduction to 0 of @n elements in @buf (overwritten with partial
 * sums). */
static ng_status ng_coll_bino_reduce(struct ng_coll_exec *x, unsigned char *buf, size_t n)
{
	size_t len = n * x->esize;

	for (int mask = 1; mask < x->P; mask <<= 1) {
		ng_status st;

		if (x->me & mask)
			return ng_coll_send(x, x->me - mask, buf, len);
		if (x->me + mask >= x->P)
			continue;
		st = ng_coll_recv(x, x->me + mask, x->tmp, len);
		if (st != NG_OK)
			return st;
		ng_coll_sum(x->type, buf, x->tmp, n);
	}
	return NG_OK;
}

/* The lowest set bit of @r, or for 0 the smallest power of two >= P: the
 * size of the binomial subtree rooted at r. */
static int ng_coll_subtree(const struct ng_coll_exec *x, int r)
{
	int s = 1;

	if (r)
		return r & -r;
	while (s < x->P)
		s *= 2;
	return s;
}

/* Binomial scatter from 0: every rank r receives [off[r], off[min(r +
 * sub(r), P)]) of @buf from its parent (the root has it all) and passes
 * its children theirs. */
static ng_status ng_coll_bino_scatter(struct ng_coll_exec *x, unsigned char *buf, const size_t *off)
{
	int me = x->me, P = x->P, sub = ng_coll_subtree(x, me);
	size_t es = x->esize;
	ng_status st = NG_OK;

	if (me) {
		int end = me + sub < P ? me + sub : P;

		st = ng_coll_recv(x, me - sub, buf + off[me] * es, (off[end] - off[me]) * es);
	}
	for (int mask = sub / 2; st == NG_OK && mask >= 1; mask /= 2) {
		int child = me + mask, end = child + mask < P ? child + mask : P;

		if (child < P)
			st = ng_coll_send(x, child, buf + off[child] * es, (off[end] - off[child]) * es);
	}
	return st;
}

/* Binomial gather to 0: the mirror image of ng_coll_bino_scatter. */
static ng_status ng_coll_bino_gather(struct ng_coll_exec *x, unsigned char *buf, const size_t *off)
{
	int me = x->me, P = x->P;
	size_t es = x->esize;

	for (int mask = 1; mask < P; mask <<= 1) {
		ng_status st;

		if (me & mask) {
			int end = me + mask < P ? me + mask : P;

			return ng_coll_send(x, me - mask, buf + off[me] * es, (off[end] - off[me]) * es);
		}
		if (me + mask < P) {
			int child = me + mask, end = child + mask < P ? child + mask : P;

			st = ng_coll_recv(x, child, buf + off[child] * es, (off[end] - off[child]) * es);
			if (st != NG_OK)
				return st;
		}
	}
	return NG_OK;
}

/* ---- the operations ---------------------------------------------------------- */

/* Cut points on the stack: at most this many ranks for the algorithms that
 * cut (the driver refuses more). */
#define NG_COLL_MAX_CUTS 4097

static ng_status ng_coll_allreduce(struct ng_coll_exec *x, int algo, size_t n)
{
	size_t es = x->esize, len = n * es, off[NG_COLL_MAX_CUTS];
	ng_status st;

	memcpy(x->rbuf, x->sbuf, len);
	switch (algo) {
	case NG_CA_RING:
		ng_coll_ring_cuts(x, n, false, off);
		st = ng_coll_ring_rs(x, x->rbuf, off, es);
		return st != NG_OK ? st : ng_coll_ring_ag(x, x->rbuf, off, es);
	case NG_CA_RD:
		st = ng_coll_fold(x, x->rbuf, len, true, NULL);
		for (int d = 1; st == NG_OK && x->vr >= 0 && d < x->pof2; d *= 2) {
			int vp = x->vr ^ d, peer = ng_coll_real(x, vp);

			st = ng_coll_sendrecv(x, peer, x->rbuf, len, peer, x->tmp, len, x->vr < vp);
			if (st == NG_OK)
				ng_coll_sum(x->type, x->rbuf, x->tmp, n);
		}
		return st != NG_OK ? st : ng_coll_unfold(x, x->rbuf, len);
	case NG_CA_RABENSEIFNER:
		ng_coll_vcuts(x, n, false, off);
		st = ng_coll_fold(x, x->rbuf, len, true, NULL);
		if (st == NG_OK && x->vr >= 0)
			st = ng_coll_halving(x, x->rbuf, off);
		if (st == NG_OK && x->vr >= 0)
			st = ng_coll_doubling(x, x->rbuf, off);
		return st != NG_OK ? st : ng_coll_unfold(x, x->rbuf, len);
	default: /* binomial */
		st = ng_coll_bino_reduce(x, x->rbuf, n);
		return st != NG_OK ? st : ng_coll_bino_bcast(x, x->rbuf, len);
	}
}

static ng_status ng_coll_bcast(struct ng_coll_exec *x, int algo, size_t n)
{
	size_t es = x->esize, off[NG_COLL_MAX_CUTS];
	ng_status st = NG_OK;

	switch (algo) {
	case NG_CA_SAG:
		ng_coll_ring_cuts(x, n, false, off);
		st = ng_coll_bino_scatter(x, x->rbuf, off);
		return st != NG_OK ? st : ng_coll_ring_ag(x, x->rbuf, off, es);
	case NG_CA_LINEAR:
		if (x->me)
			return ng_coll_recv(x, 0, x->rbuf, n * es);
		for (int r = 1; st == NG_OK && r < x->P; r++)
			st = ng_coll_send(x, r, x->rbuf, n * es);
		return st;
	default:
		return ng_coll_bino_bcast(x, x->rbuf, n * es);
	}
}

static ng_status ng_coll_reduce(struct ng_coll_exec *x, int algo, size_t n)
{
	size_t len = n * x->esize;
	ng_status st = NG_OK;

	if (algo == NG_CA_BINOMIAL) {
		memcpy(x->rbuf, x->sbuf, len);
		return ng_coll_bino_reduce(x, x->rbuf, n);
	}
	if (x->me)
		return ng_coll_send(x, 0, x->sbuf, len);
	memcpy(x->rbuf, x->sbuf, len);
	for (int r = 1; st == NG_OK && r < x->P; r++) {
		st = ng_coll_recv(x, r, x->tmp, len);
		if (st == NG_OK)
			ng_coll_sum(x->type, x->rbuf, x->tmp, n);
	}
	return st;
}

static ng_status ng_coll_allgather(struct ng_coll_exec *x, int algo, size_t n)
{
	size_t es = x->esize, len = n * es, off[NG_COLL_MAX_CUTS];
	ng_status st;

	memcpy(x->rbuf + (size_t)x->me * len, x->sbuf, len);
	if (algo == NG_CA_RING) {
		ng_coll_ring_cuts(x, n, true, off);
		return ng_coll_ring_ag(x, x->rbuf, off, es);
	}
	ng_coll_vcuts(x, n, true, off);
	st = ng_coll_fold(x, x->rbuf + (size_t)(x->me & ~1) * len, len, false,
	                  x->rbuf + (size_t)(x->me & ~1) * len);
	if (st == NG_OK && x->vr >= 0)
		st = ng_coll_doubling(x, x->rbuf, off);
	return st != NG_OK ? st : ng_coll_unfold(x, x->rbuf, (size_t)x->P * len);
}

static ng_status ng_coll_reduce_scatter(struct ng_coll_exec *x, int algo, size_t n)
{
	size_t es = x->esize, len = n * es, off[NG_COLL_MAX_CUTS];
	ng_status st;

	memcpy(x->rbuf, x->sbuf, (size_t)x->P * len);
	if (algo == NG_CA_RING) {
		ng_coll_ring_cuts(x, n, true, off);
		st = ng_coll_ring_rs(x, x->rbuf, off, es);
	} else {
		ng_coll_vcuts(x, n, true, off);
		st = ng_coll_fold(x, x->rbuf, (size_t)x->P * len, true, NULL);
		if (st == NG_OK && x->vr >= 0)
			st = ng_coll_halving(x, x->rbuf, off);
		/* the odd rank of a fold holds its even partner's block too */
		if (st == NG_OK)
			st = ng_coll_unfold(x, x->rbuf + (size_t)(x->me & ~1) * len,
			                    x->me < 2 * x->rem ? len : 0);
	}
	if (st == NG_OK && x->me)
		memmove(x->rbuf, x->rbuf + (size_t)x->me * len, len);
	return st;
}

static ng_status ng_coll_gather(struct ng_coll_exec *x, int algo, size_t n)
{
	size_t es = x->esize, len = n * es, off[NG_COLL_MAX_CUTS];
	ng_status st = NG_OK;

	if (algo == NG_CA_BINOMIAL) {
		memcpy(x->rbuf + (size_t)x->me * len, x->sbuf, len);
		ng_coll_ring_cuts(x, n, true, off);
		return ng_coll_bino_gather(x, x->rbuf, off);
	}
	if (x->me)
		return ng_coll_send(x, 0, x->sbuf, len);
	memcpy(x->rbuf, x->sbuf, len);
	for (int r = 1; st == NG_OK && r < x->P; r++)
		st = ng_coll_recv(x, r, x->rbuf + (size_t)r * len, len);
	return st;
}

static ng_status ng_coll_scatter(struct ng_coll_exec *x, int algo, size_t n)
{
	size_t es = x->esize, len = n * es, off[NG_COLL_MAX_CUTS];
	ng_status st = NG_OK;

	if (algo == NG_CA_BINOMIAL) {
		unsigned char *buf = x->me ? x->tmp : x->sbuf;

		ng_coll_ring_cuts(x, n, true, off);
		st = ng_coll_bino_scatter(x, buf, off);
		if (st == NG_OK)
			memcpy(x->rbuf, buf + (size_t)x->me * len, len);
		return st;
	}
	if (x->me)
		return ng_coll_recv(x, 0, x->rbuf, len);
	for (int r = 1; st == NG_OK && r < x->P; r++)
		st = ng_coll_send(x, r, x->sbuf + (size_t)r * len, len);
	memcpy(x->rbuf, x->sbuf, len);
	return st;
}

ng_status ng_coll_barrier(struct ng_coll_exec *x)
{
	for (int k = 1; k < x->P; k *= 2) {
		ng_status st;

		st = ng_coll_sendrecv(x, (x->me + k) % x->P, x->tmp, 1, ng_coll_mod(x->me - k, x->P),
		                      x->tmp + 64, 1, ng_coll_shift_first(x, k));
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

ng_status ng_coll_exec(struct ng_coll_exec *x, enum ng_coll_op op, int algo, size_t count)
{
	if (algo == NG_CA_NATIVE)
		return ng_coll(x->c, op, x->type, x->sbuf, x->rbuf, op == NG_COLL_BARRIER ? 0 : count, 0);
	switch (op) {
	case NG_COLL_ALLREDUCE:
		return ng_coll_allreduce(x, algo, count);
	case NG_COLL_BCAST:
		return ng_coll_bcast(x, algo, count);
	case NG_COLL_REDUCE:
		return ng_coll_reduce(x, algo, count);
	case NG_COLL_ALLGATHER:
		return ng_coll_allgather(x, algo, count);
	case NG_COLL_REDUCE_SCATTER:
		return ng_coll_reduce_scatter(x, algo, count);
	case NG_COLL_GATHER:
		return ng_coll_gather(x, algo, count);
	case NG_COLL_SCATTER:
		return ng_coll_scatter(x, algo, count);
	default:
		return ng_coll_barrier(x);
	}
}
