/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The alltoall algorithms: schedules, the node's shared memory and the
 * exchanges (what the pattern measures is described in alltoall.c, the
 * interface between the two halves in alltoall_algos.h).
 *
 * Point-to-point: isend, leader, sa and rd need NG_CAP_NONBLOCK.  bruck and
 * pairwise use irecv+isend per step where the module has them (or blocking
 * calls with --a2a-blocking) and otherwise blocking send/recv in an order
 * that cannot deadlock even when a send blocks until its receive is posted
 * (TCP with messages beyond the socket buffers): along each cycle of the
 * shift permutation, ranks at even positions send first and ranks at odd
 * positions receive first.  Nobody sends to itself: the own block is copied.
 *
 * Shared memory: one POSIX segment per node (shm_open + mmap), named after a
 * random token rank 0 broadcasts and the node number, created by the node's
 * lowest rank and unlinked as soon as every rank of the node has mapped it
 * (or failed to), so no /dev/shm file survives the setup, whatever happens
 * later.  Buffers handed to the module always come from its alloc(): the
 * segment is a staging area only, never passed to send/recv.  Ranks of a
 * node synchronise with a counter barrier in the segment (C11 atomics,
 * acquire/release); the data areas are double-buffered by iteration parity,
 * so one barrier per iteration suffices (two for leader).  A waiting rank
 * spins with a pause and yields the CPU after a while, so oversubscribed
 * runs still progress; it gives up after --timeout seconds.  That
 * sched_yield() is the one system call in a timed region besides the
 * module's operations: it is the shared-memory transport's own way of
 * waiting, as a module's poll() is its own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "alltoall_algos.h"

/* Spins of the shared-memory wait before it starts yielding the CPU. */
#define NG_A2A_SPINS 256

/* ---- schedules ------------------------------------------------------- */

static int ng_a2a_gcd(int a, int b)
{
	while (b) {
		int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Step "send to me + k, receive from me - k" of a shift by @k.  The shift is
 * a permutation made of gcd(P, k) cycles; along a cycle, ranks at even
 * positions send first and ranks at odd positions receive first, which
 * completes with blocking calls whatever the message size: the rank at
 * position 0 sends to position 1, which receives first.
 */
static void ng_a2a_shift(int me, int P, int k, struct ng_a2a_step *sp)
{
	int g = ng_a2a_gcd(P, k), x = me % g, pos = 0;

	while (x != me) {
		x = (x + k) % P;
		pos++;
	}
	sp->dst = (me + k) % P;
	sp->src = (me - k + P) % P;
	sp->send_first = pos % 2 == 0;
	sp->nblk = 1;
}

static bool ng_a2a_pof2(int P)
{
	return (P & (P - 1)) == 0;
}

/* Pairwise steps 1..P-1: XOR partners for a power of two, else shifts. */
void ng_a2a_pairwise_plan(struct ng_a2a *a)
{
	for (int k = 1; k < a->P; k++) {
		struct ng_a2a_step *sp = &a->pw[k - 1];

		if (ng_a2a_pof2(a->P)) {
			sp->dst = sp->src = a->me ^ k;
			sp->send_first = a->me < sp->dst;
			sp->nblk = 1;
		} else {
			ng_a2a_shift(a->me, a->P, k, sp);
		}
	}
}

/* Bruck steps: shifts by 1, 2, 4, ... < P; step k moves the blocks whose
 * index has bit k set.  Returns the largest step in blocks. */
size_t ng_a2a_bruck_plan(struct ng_a2a *a)
{
	size_t max = 0;

	a->nbk = 0;
	for (int k = 1; k < a->P; k *= 2) {
		struct ng_a2a_step *sp = &a->bk[a->nbk++];

		ng_a2a_shift(a->me, a->P, k, sp);
		sp->nblk = 0;
		for (int i = 1; i < a->P; i++)
			sp->nblk += (i & k) != 0;
		if (sp->nblk > max)
			max = sp->nblk;
	}
	return max;
}

/* Node visited at step k (1 <= k < nnodes): sends go up, receives come from below. */
static int ng_a2a_node_up(const struct ng_a2a *a, int k)
{
	return (a->node + k) % a->nodes.nnodes;
}
static int ng_a2a_node_down(const struct ng_a2a *a, int k)
{
	return (a->node - k + a->nodes.nnodes) % a->nodes.nnodes;
}

static struct ng_a2a_msg *ng_a2a_msg_add(struct ng_a2a_msg *list, size_t *n_p, int peer, int node,
                                         size_t nblk)
{
	struct ng_a2a_msg *m = &list[(*n_p)++];

	m->peer = peer;
	m->node = node;
	m->nblk = nblk;
	m->blk = 0;
	m->direct = false;
	return m;
}

/* Lays staging blocks out one after the other for the messages that are not
 * direct; returns the blocks needed. */
static size_t ng_a2a_stage(struct ng_a2a_msg *list, size_t n)
{
	size_t blk = 0;

	for (size_t i = 0; i < n; i++) {
		if (list[i].direct)
			continue;
		list[i].blk = blk;
		blk += list[i].nblk;
	}
	return blk;
}

/*
 * sa.  Segment area g (per parity), in blocks: the aggregation area of each
 * local index a in turn, then the intra-node area.  Aggregator a serves the
 * off-node ranks d with local(d) mod ln == a, in the order node A+1, A+2, ...
 * and local index within a node; each gets a chunk of ln blocks indexed by
 * the source's local index.  Intra-node: block [x * ln + y] goes from local
 * y to local x.  Every rank of the node computes the same layout.
 */
void ng_a2a_sa_plan(struct ng_a2a *a)
{
	const struct ng_nodes *n = &a->nodes;
	size_t ln = (size_t)a->ln, area = 0, chunk = 0;
	struct ng_a2a_plan *p = &a->sa;

	for (int agg = 0; agg < a->ln; agg++) {
		if (agg == a->local)
			a->sa_agg = area;
		chunk = 0;
		for (int k = 1; k < n->nnodes; k++) {
			int B = ng_a2a_node_up(a, k);

			for (int x = agg; x < ng_nodes_size(n, B); x += a->ln) {
				int d = ng_nodes_rank(n, B, x);

				a->sa_wpos[d] = area + chunk * ln + (size_t)a->local;
				if (agg == a->local)
					ng_a2a_msg_add(p->send, &p->nsend, d, B, ln)->blk = chunk * ln;
				chunk++;
			}
		}
		area += chunk * ln;
	}
	p->stage_s = 0;
	for (size_t i = 0; i < p->nsend; i++)
		p->stage_s += p->send[i].nblk;
	for (int x = 0; x < a->ln; x++)
		a->sa_wpos[ng_nodes_rank(n, a->node, x)] = area + (size_t)x * ln + (size_t)a->local;
	a->sa_intra = area + (size_t)a->local * ln;

	for (int k = 1; k < n->nnodes; k++) {
		int B = ng_a2a_node_down(a, k), lb = ng_nodes_size(n, B);
		struct ng_a2a_msg *m;

		m = ng_a2a_msg_add(p->recv, &p->nrecv, ng_nodes_rank(n, B, a->local % lb), B, (size_t)lb);
		if (ng_nodes_consecutive(n, B)) {
			m->direct = true;
			m->blk = (size_t)ng_nodes_rank(n, B, 0);
		}
	}
	p->stage_r = ng_a2a_stage(p->recv, p->nrecv);
}

/*
 * rd.  Each rank sends its ln_B blocks for node B to the rank of B with local
 * index local mod ln_B (straight from the send buffer when B's ranks are
 * consecutive) and receives ln blocks from every rank b of every other node
 * with b mod ln == local.  Segment area d (per parity): [x * P + j] is the
 * block from rank j for local index x.
 */
void ng_a2a_rd_plan(struct ng_a2a *a)
{
	const struct ng_nodes *n = &a->nodes;
	struct ng_a2a_plan *p = &a->rd;

	for (int k = 1; k < n->nnodes; k++) {
		int B = ng_a2a_node_up(a, k), lb = ng_nodes_size(n, B);
		struct ng_a2a_msg *m;

		m = ng_a2a_msg_add(p->send, &p->nsend, ng_nodes_rank(n, B, a->local % lb), B, (size_t)lb);
		if (ng_nodes_consecutive(n, B)) {
			m->direct = true;
			m->blk = (size_t)ng_nodes_rank(n, B, 0);
		}
	}
	p->stage_s = ng_a2a_stage(p->send, p->nsend);

	for (int k = 1; k < n->nnodes; k++) {
		int B = ng_a2a_node_down(a, k);

		for (int b = a->local; b < ng_nodes_size(n, B); b += a->ln)
			ng_a2a_msg_add(p->recv, &p->nrecv, ng_nodes_rank(n, B, b), B, (size_t)a->ln);
	}
	p->stage_r = ng_a2a_stage(p->recv, p->nrecv);

	a->nrd_fromd = 0;
	for (int j = 0; j < a->P; j++) {
		bool mine = n->node_of[j] != a->node && n->local_of[j] % a->ln == a->local;

		if (j != a->me && !mine)
			a->rd_fromd[a->nrd_fromd++] = j;
	}
}

/*
 * leader.  Segment areas g and d (per parity) both hold [x * P + j]: in g
 * the send buffer of local x (block for rank j), in d the block from rank j
 * for local x.  The leader (local 0) sends node B one message of ln * ln_B
 * blocks, [y * ln + a] = from local a to local y of B, and receives the
 * mirror image.
 */
void ng_a2a_leader_plan(struct ng_a2a *a)
{
	const struct ng_nodes *n = &a->nodes;
	struct ng_a2a_plan *p = &a->ld;

	if (a->local != 0)
		return;
	for (int k = 1; k < n->nnodes; k++) {
		int B = ng_a2a_node_up(a, k);

		ng_a2a_msg_add(p->send, &p->nsend, ng_nodes_rank(n, B, 0), B,
		               (size_t)a->ln * (size_t)ng_nodes_size(n, B));
	}
	for (int k = 1; k < n->nnodes; k++) {
		int B = ng_a2a_node_down(a, k);

		ng_a2a_msg_add(p->recv, &p->nrecv, ng_nodes_rank(n, B, 0), B,
		               (size_t)a->ln * (size_t)ng_nodes_size(n, B));
	}
	p->stage_s = ng_a2a_stage(p->send, p->nsend);
	p->stage_r = ng_a2a_stage(p->recv, p->nrecv);
}

/* Largest message of @algo in blocks on any rank (for the module's max_msg;
 * the same on every rank, so all ranks select alike). */
size_t ng_a2a_max_blocks(const struct ng_a2a *a, int algo)
{
	int P = a->P, maxln = ng_nodes_max_size(&a->nodes);

	switch (algo) {
	case NG_A2A_BRUCK:
		return (size_t)(P / 2 + 1);
	case NG_A2A_LEADER:
		return (size_t)maxln * (size_t)maxln;
	case NG_A2A_SA:
	case NG_A2A_RD:
		return (size_t)maxln;
	default:
		return 1;
	}
}

/* ---- shared memory within a node --------------------------------------- */

static inline void ng_a2a_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Slow path of the barrier wait: cancellation, timeout, yielding. */
static ng_status __attribute__((noinline)) ng_a2a_wait_slow(const struct ng_a2a *a, uint64_t *since_p)
{
	const struct ng_timer *tm = a->run->timer;
	uint64_t now = ng_timer_now(tm);

	if (ng_cancelled(a->run))
		return NG_ERR_CANCELLED;
	if (!*since_p)
		*since_p = now;
	else if (ng_timer_us(tm, now - *since_p) > a->run->timeout_s * 1e6) {
		ng_error("alltoall: the ranks of node %d did not meet in shared memory within %g s", a->node,
		         a->run->timeout_s);
		return NG_ERR_TIMEOUT;
	}
	/* Another rank of the node needs this CPU more (oversubscribed runs). */
	sched_yield();
	return NG_OK;
}

/*
 * Barrier of the ranks of this node (counter and generation in the
 * segment).  The last to arrive resets the counter and publishes the next
 * generation with release semantics; the others acquire it, so everything
 * written to the segment before the barrier is visible after it.
 */
static ng_status ng_a2a_barrier(struct ng_a2a *a)
{
	struct ng_a2a_ctl *ctl = a->shm.ctl;
	unsigned g = a->shm.gen;
	uint64_t since = 0;
	unsigned spins = 0;
	ng_status st;

	a->shm.gen = g + 1;
	if (a->ln == 1)
		return NG_OK;
	if (atomic_fetch_add_explicit(&ctl->count, 1, memory_order_acq_rel) == (unsigned)a->ln - 1) {
		atomic_store_explicit(&ctl->count, 0, memory_order_relaxed);
		atomic_store_explicit(&ctl->gen, g + 1, memory_order_release);
		return NG_OK;
	}
	while (atomic_load_explicit(&ctl->gen, memory_order_acquire) == g) {
		if (++spins < NG_A2A_SPINS) {
			ng_a2a_relax();
			continue;
		}
		spins = 0;
		st = ng_a2a_wait_slow(a, &since);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

void ng_a2a_shm_unmap(struct ng_a2a_shm *s)
{
	if (s->base)
		munmap(s->base, s->len);
	memset(s, 0, sizeof(*s));
}

/* Creates (node's lowest rank) or opens the segment @name of @len bytes and
 * maps it; reports its own failure. */
static ng_status ng_a2a_shm_map(struct ng_a2a *a, const char *name, size_t len, bool create)
{
	int fd, err;
	void *p;

	fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
	if (fd < 0) {
		ng_error("alltoall: shm_open %s: %s", name, strerror(errno));
		return NG_ERR_SYS;
	}
	if (create) {
		/* Reserve the pages now: a full /dev/shm must fail here, not
		 * with SIGBUS on first touch. */
		err = ftruncate(fd, (off_t)len) ? errno : posix_fallocate(fd, 0, (off_t)len);
		if (err) {
			ng_error("alltoall: cannot reserve %zu MiB of shared memory in /dev/shm (%s); "
			         "leader, sa and rd need 2 x node ranks x ranks x largest size per area",
			         len >> 20, strerror(err));
			close(fd);
			shm_unlink(name);
			return NG_ERR_NOMEM;
		}
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		ng_error("alltoall: mmap of %zu bytes of %s: %s", len, name, strerror(err));
		if (create)
			shm_unlink(name);
		return NG_ERR_SYS;
	}
	a->shm.base = p;
	a->shm.len = len;
	return NG_OK;
}

/* Agrees over the bootstrap whether every rank succeeded; @failed is this
 * rank's part.  Returns the bootstrap's error, NG_ERR_SYS when some rank
 * failed (that rank reported why), or NG_OK. */
ng_status ng_a2a_agree(struct ng_a2a *a, bool failed)
{
	double f = failed ? 1.0 : 0.0;
	ng_status st = ng_boot_max(a->run->boot, &f, 1);

	if (st != NG_OK)
		return st;
	return f > 0.0 ? NG_ERR_SYS : NG_OK;
}

/*
 * Collective: one segment per node, holding the control block and the areas
 * the selected algorithms need, each ln * P * smax bytes per parity.  The
 * node's lowest rank creates it; every rank maps it; then the creator
 * unlinks it, success or not, so the name lives only during this call.
 */
ng_status ng_a2a_shm_setup(struct ng_a2a *a)
{
	size_t area = (size_t)a->ln * (size_t)a->P * (a->smax ? a->smax : 1);
	size_t nareas = 2 * ((size_t)a->shm_g + (size_t)a->shm_d);
	size_t head = 4096, len = head + nareas * area;
	uint64_t token = 0;
	bool creator = a->local == 0;
	char name[96];
	ng_status st, mine = NG_OK;
	unsigned char *p;

	if (a->me == 0 && getrandom(&token, sizeof(token), 0) != (ssize_t)sizeof(token))
		token = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	st = ng_boot_bcast(a->run->boot, 0, &token, sizeof(token));
	if (st != NG_OK)
		return st;
	snprintf(name, sizeof(name), "/ngauge-a2a-%016" PRIx64 "-%d", token, a->node);

	if (creator)
		mine = ng_a2a_shm_map(a, name, len, true);
	st = ng_a2a_agree(a, mine != NG_OK);
	if (st == NG_OK && !creator)
		mine = ng_a2a_shm_map(a, name, len, false);
	if (st == NG_OK)
		st = ng_a2a_agree(a, mine != NG_OK);
	/* Every rank of the node has mapped the segment or given up. */
	if (creator && mine == NG_OK)
		shm_unlink(name);
	if (st != NG_OK) {
		ng_a2a_shm_unmap(&a->shm);
		return mine != NG_OK ? mine : st;
	}

	p = a->shm.base;
	a->shm.ctl = (struct ng_a2a_ctl *)(void *)p;
	p += head;
	for (int h = 0; h < 2 && a->shm_g; h++, p += area)
		a->shm.g[h] = p;
	for (int h = 0; h < 2 && a->shm_d; h++, p += area)
		a->shm.d[h] = p;
	return NG_OK;
}

/* ---- the algorithms ------------------------------------------------------ */

static inline void ng_a2a_self(struct ng_a2a *a, size_t s)
{
	memcpy(ng_a2a_blk(a->rbuf, (size_t)a->me, s), ng_a2a_blk(a->sbuf, (size_t)a->me, s), s);
}

/* One exchange of a shift step: @len bytes from @sb to sp->dst, into @rb
 * from sp->src. */
static ng_status ng_a2a_sendrecv(struct ng_a2a *a, const struct ng_a2a_step *sp, const void *sb, void *rb,
                                 size_t len)
{
	struct ng_comm *c = a->c;
	ng_status st;

	if (a->nb_steps) {
		st = ng_irecv(c, sp->src, rb, len, &a->reqs[0]);
		if (st == NG_OK)
			st = ng_isend(c, sp->dst, sb, len, &a->reqs[1]);
		if (st != NG_OK)
			return st;
		return ng_waitall(c, a->reqs, 2);
	}
	if (sp->send_first) {
		st = ng_send(c, sp->dst, sb, len);
		return st != NG_OK ? st : ng_recv(c, sp->src, rb, len);
	}
	st = ng_recv(c, sp->src, rb, len);
	return st != NG_OK ? st : ng_send(c, sp->dst, sb, len);
}

static ng_status ng_a2a_bruck(struct ng_a2a *a, size_t s)
{
	size_t P = (size_t)a->P, me = (size_t)a->me;
	ng_status st;

	/* tmp[i] = block for rank me + i. */
	memcpy(a->tmp, ng_a2a_blk(a->sbuf, me, s), (P - me) * s);
	memcpy(ng_a2a_blk(a->tmp, P - me, s), a->sbuf, me * s);

	for (size_t k = 0; k < a->nbk; k++) {
		const struct ng_a2a_step *sp = &a->bk[k];
		size_t bit = (size_t)1 << k, n = 0;

		for (size_t i = 1; i < P; i++)
			if (i & bit)
				memcpy(ng_a2a_blk(a->stage_s, n++, s), ng_a2a_blk(a->tmp, i, s), s);
		st = ng_a2a_sendrecv(a, sp, a->stage_s, a->stage_r, sp->nblk * s);
		if (st != NG_OK)
			return st;
		n = 0;
		for (size_t i = 1; i < P; i++)
			if (i & bit)
				memcpy(ng_a2a_blk(a->tmp, i, s), ng_a2a_blk(a->stage_r, n++, s), s);
	}

	/* tmp[i] now holds the block from rank me - i. */
	for (size_t i = 0; i < P; i++)
		memcpy(ng_a2a_blk(a->rbuf, (me + P - i) % P, s), ng_a2a_blk(a->tmp, i, s), s);
	return NG_OK;
}

static ng_status ng_a2a_isend(struct ng_a2a *a, size_t s)
{
	struct ng_comm *c = a->c;
	int P = a->P, me = a->me;
	size_t n = 0;
	ng_status st;

	for (int i = 1; i < P; i++) {
		int src = (me - i + P) % P;

		st = ng_irecv(c, src, ng_a2a_blk(a->rbuf, (size_t)src, s), s, &a->reqs[n++]);
		if (st != NG_OK)
			return st;
	}
	for (int i = 1; i < P; i++) {
		int dst = (me + i) % P;

		st = ng_isend(c, dst, ng_a2a_blk(a->sbuf, (size_t)dst, s), s, &a->reqs[n++]);
		if (st != NG_OK)
			return st;
	}
	ng_a2a_self(a, s);
	return ng_waitall(c, a->reqs, n);
}

static ng_status ng_a2a_pairwise(struct ng_a2a *a, size_t s)
{
	ng_status st;

	ng_a2a_self(a, s);
	for (int k = 0; k < a->P - 1; k++) {
		const struct ng_a2a_step *sp = &a->pw[k];

		st = ng_a2a_sendrecv(a, sp, ng_a2a_blk(a->sbuf, (size_t)sp->dst, s),
		                     ng_a2a_blk(a->rbuf, (size_t)sp->src, s), s);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* Posts the receives of @p; direct ones land in the receive buffer. */
static ng_status ng_a2a_post_recvs(struct ng_a2a *a, const struct ng_a2a_plan *p, size_t s, size_t *n_p)
{
	ng_status st;

	for (size_t i = 0; i < p->nrecv; i++) {
		const struct ng_a2a_msg *m = &p->recv[i];
		unsigned char *base = m->direct ? a->rbuf : a->stage_r;

		st = ng_irecv(a->c, m->peer, ng_a2a_blk(base, m->blk, s), m->nblk * s, &a->reqs[(*n_p)++]);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

static ng_status ng_a2a_sa(struct ng_a2a *a, size_t s)
{
	const struct ng_nodes *nd = &a->nodes;
	unsigned char *g = a->shm.g[a->shm.epoch++ & 1];
	size_t n = 0;
	ng_status st;

	/* Step 1: every block for another rank into its aggregation slot. */
	for (int j = 0; j < a->P; j++)
		if (j != a->me)
			memcpy(ng_a2a_blk(g, a->sa_wpos[j], s), ng_a2a_blk(a->sbuf, (size_t)j, s), s);
	ng_a2a_self(a, s);
	st = ng_a2a_post_recvs(a, &a->sa, s, &n);
	if (st != NG_OK)
		return st;
	st = ng_a2a_barrier(a);
	if (st != NG_OK)
		return st;

	/* Step 2: this rank's aggregated chunks out, one per destination. */
	for (size_t i = 0; i < a->sa.nsend; i++) {
		const struct ng_a2a_msg *m = &a->sa.send[i];
		unsigned char *out = ng_a2a_blk(a->stage_s, m->blk, s);

		memcpy(out, ng_a2a_blk(g, a->sa_agg + m->blk, s), m->nblk * s);
		st = ng_isend(a->c, m->peer, out, m->nblk * s, &a->reqs[n++]);
		if (st != NG_OK)
			return st;
	}
	/* Meanwhile: the blocks from the own node. */
	for (int y = 0; y < a->ln; y++)
		if (y != a->local)
			memcpy(ng_a2a_blk(a->rbuf, (size_t)ng_nodes_rank(nd, a->node, y), s),
			       ng_a2a_blk(g, a->sa_intra + (size_t)y, s), s);
	st = ng_waitall(a->c, a->reqs, n);
	if (st != NG_OK)
		return st;

	for (size_t i = 0; i < a->sa.nrecv; i++) {
		const struct ng_a2a_msg *m = &a->sa.recv[i];

		if (m->direct)
			continue;
		for (size_t b = 0; b < m->nblk; b++)
			memcpy(ng_a2a_blk(a->rbuf, (size_t)ng_nodes_rank(nd, m->node, (int)b), s),
			       ng_a2a_blk(a->stage_r, m->blk + b, s), s);
	}
	return NG_OK;
}

static ng_status ng_a2a_rd(struct ng_a2a *a, size_t s)
{
	const struct ng_nodes *nd = &a->nodes;
	unsigned char *d = a->shm.d[a->shm.epoch++ & 1];
	size_t P = (size_t)a->P, n = 0;
	ng_status st;

	st = ng_a2a_post_recvs(a, &a->rd, s, &n);
	if (st != NG_OK)
		return st;
	for (size_t i = 0; i < a->rd.nsend; i++) {
		const struct ng_a2a_msg *m = &a->rd.send[i];
		unsigned char *out;

		if (m->direct) {
			out = ng_a2a_blk(a->sbuf, m->blk, s);
		} else {
			out = ng_a2a_blk(a->stage_s, m->blk, s);
			for (size_t y = 0; y < m->nblk; y++)
				memcpy(ng_a2a_blk(out, y, s),
				       ng_a2a_blk(a->sbuf, (size_t)ng_nodes_rank(nd, m->node, (int)y), s), s);
		}
		st = ng_isend(a->c, m->peer, out, m->nblk * s, &a->reqs[n++]);
		if (st != NG_OK)
			return st;
	}
	/* Meanwhile: the blocks for the own node into the distribution area. */
	for (int x = 0; x < a->ln; x++)
		if (x != a->local)
			memcpy(ng_a2a_blk(d, (size_t)x * P + (size_t)a->me, s),
			       ng_a2a_blk(a->sbuf, (size_t)ng_nodes_rank(nd, a->node, x), s), s);
	ng_a2a_self(a, s);
	st = ng_waitall(a->c, a->reqs, n);
	if (st != NG_OK)
		return st;

	/* Distribution: chunk [x] of a message from rank j goes to local x. */
	for (size_t i = 0; i < a->rd.nrecv; i++) {
		const struct ng_a2a_msg *m = &a->rd.recv[i];
		size_t j = (size_t)m->peer;

		for (size_t x = 0; x < m->nblk; x++) {
			unsigned char *to =
			    (int)x == a->local ? ng_a2a_blk(a->rbuf, j, s) : ng_a2a_blk(d, x * P + j, s);

			memcpy(to, ng_a2a_blk(a->stage_r, m->blk + x, s), s);
		}
	}
	st = ng_a2a_barrier(a);
	if (st != NG_OK)
		return st;
	for (size_t i = 0; i < a->nrd_fromd; i++) {
		size_t j = (size_t)a->rd_fromd[i];

		memcpy(ng_a2a_blk(a->rbuf, j, s), ng_a2a_blk(d, (size_t)a->local * P + j, s), s);
	}
	return NG_OK;
}

/* The leader's part of leader: pack, exchange with the other leaders,
 * unpack into the distribution area (its own blocks straight home). */
static ng_status ng_a2a_leader_net(struct ng_a2a *a, size_t s, const unsigned char *g, unsigned char *d,
                                   size_t n)
{
	const struct ng_nodes *nd = &a->nodes;
	size_t P = (size_t)a->P, ln = (size_t)a->ln;
	ng_status st;

	for (size_t i = 0; i < a->ld.nsend; i++) {
		const struct ng_a2a_msg *m = &a->ld.send[i];
		size_t lb = m->nblk / ln;
		unsigned char *out = ng_a2a_blk(a->stage_s, m->blk, s);

		for (size_t y = 0; y < lb; y++) {
			size_t dst = (size_t)ng_nodes_rank(nd, m->node, (int)y);

			for (size_t x = 0; x < ln; x++)
				memcpy(ng_a2a_blk(out, y * ln + x, s), g + (x * P + dst) * s, s);
		}
		st = ng_isend(a->c, m->peer, out, m->nblk * s, &a->reqs[n++]);
		if (st != NG_OK)
			return st;
	}
	st = ng_waitall(a->c, a->reqs, n);
	if (st != NG_OK)
		return st;
	for (size_t i = 0; i < a->ld.nrecv; i++) {
		const struct ng_a2a_msg *m = &a->ld.recv[i];
		size_t lb = m->nblk / ln;
		const unsigned char *in = ng_a2a_blk(a->stage_r, m->blk, s);

		for (size_t x = 0; x < ln; x++) {
			for (size_t b = 0; b < lb; b++) {
				size_t src = (size_t)ng_nodes_rank(nd, m->node, (int)b);
				unsigned char *to =
				    x == 0 ? ng_a2a_blk(a->rbuf, src, s) : d + (x * P + src) * s;

				memcpy(to, in + (x * lb + b) * s, s);
			}
		}
	}
	return NG_OK;
}

static ng_status ng_a2a_leader(struct ng_a2a *a, size_t s)
{
	const struct ng_nodes *nd = &a->nodes;
	unsigned h = a->shm.epoch++ & 1;
	unsigned char *g = a->shm.g[h], *d = a->shm.d[h];
	size_t P = (size_t)a->P, n = 0;
	ng_status st;

	memcpy(g + (size_t)a->local * P * s, a->sbuf, P * s);
	ng_a2a_self(a, s);
	if (a->local == 0) {
		st = ng_a2a_post_recvs(a, &a->ld, s, &n);
		if (st != NG_OK)
			return st;
	}
	st = ng_a2a_barrier(a);
	if (st != NG_OK)
		return st;
	if (a->local == 0) {
		st = ng_a2a_leader_net(a, s, g, d, n);
		if (st != NG_OK)
			return st;
	}
	for (int y = 0; y < a->ln; y++) {
		size_t src = (size_t)ng_nodes_rank(nd, a->node, y);

		if (y != a->local)
			memcpy(ng_a2a_blk(a->rbuf, src, s), g + ((size_t)y * P + (size_t)a->me) * s, s);
	}
	st = ng_a2a_barrier(a);
	if (st != NG_OK || a->local == 0)
		return st;
	for (size_t j = 0; j < P; j++)
		if (nd->node_of[j] != a->node)
			memcpy(ng_a2a_blk(a->rbuf, j, s), d + ((size_t)a->local * P + j) * s, s);
	return NG_OK;
}

/* The reference line: the module's own collective (MPI_Alltoall in the mpi
 * module), the line every other algorithm is compared with. */
static ng_status ng_a2a_mpi(struct ng_a2a *a, size_t s)
{
	return ng_alltoall(a->c, a->sbuf, a->rbuf, s);
}

ng_status (*const ng_a2a_fns[NG_A2A_NALGOS])(struct ng_a2a *a, size_t s) = {
    [NG_A2A_BRUCK] = ng_a2a_bruck,   [NG_A2A_ISEND] = ng_a2a_isend, [NG_A2A_PAIRWISE] = ng_a2a_pairwise,
    [NG_A2A_LEADER] = ng_a2a_leader, [NG_A2A_SA] = ng_a2a_sa,       [NG_A2A_RD] = ng_a2a_rd,
    [NG_A2A_MPI] = ng_a2a_mpi,
};
