/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall: personalised all-to-all exchange, one algorithm after another.
 *
 * Every rank r holds P blocks of @size bytes in its send buffer, block j
 * meant for rank j; afterwards block j of r's receive buffer is what rank j
 * sent for r (the layout of MPI_Alltoall with a contiguous datatype).  The
 * algorithms (--a2a-algo NAME[,NAME...], or "all"):
 *
 *   bruck     Bruck et al.: local rotation, ceil(log2 P) steps in which the
 *             blocks whose index has bit k set travel to rank r + 2^k, then
 *             the inverse rotation.  Few messages, each block moves several
 *             times: for small sizes.
 *   isend     Irecv-Isend: all P-1 receives posted, then all P-1 sends, then
 *             wait for everything.  Every block moves once, straight between
 *             the user buffers.
 *   pairwise  P-1 steps; step k exchanges with r XOR k when P is a power of
 *             two, else sends to r + k and receives from r - k.
 *   leader    one leader per node (its lowest rank) gathers the node's send
 *             buffers through shared memory, the leaders exchange one
 *             aggregated message per pair of nodes, and each leader scatters
 *             what it received through shared memory.
 *   sa        the paper's two-step scheme (send-side aggregation): step 1,
 *             in shared memory, the rank with local index a collects from
 *             every rank of its node the blocks for local index a of every
 *             other node; step 2, an alltoall among the ranks with the same
 *             local index, one message per node, received straight into the
 *             receive buffer.
 *   rd        receive-side distribution: the inter-node step first (each rank
 *             sends its blocks for node B in one message to the rank of B with
 *             its own local index), then the receivers distribute through
 *             shared memory.
 *   mpi       the module's own alltoall (ng_alltoall, NG_CAP_ALLTOALL; the
 *             mpi module's is MPI_Alltoall), the reference line.
 *
 * Nodes with different rank counts are allowed: local index x of node B is
 * served by local index x mod |A| of node A (sa, rd).  Node membership comes
 * from patterns/nodes.h (host names, or --ranks-per-node K virtual nodes).
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
 *
 * Measurement, per algorithm and size: one untimed iteration whose every
 * block is checked (always), --warmup untimed iterations, then --count timed
 * ones, back to back.  Each rank times each of its iterations; the row's
 * "time_us" sample of an iteration is the largest time any rank measured
 * (gathered after the size, never during it).  "algbw_MBps" is
 * size * (P - 1) / time.  With --verify every iteration is checked, after
 * its timer stopped: payloads depend on size, sender, receiver and
 * iteration, and the receive buffer is filled with the complement of the
 * expected bytes before, so a block nobody wrote cannot pass.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/registry.h"
#include "nodes.h"
#include "payload.h"
#include "sampler.h"

enum ng_a2a_algo {
	NG_A2A_BRUCK,
	NG_A2A_ISEND,
	NG_A2A_PAIRWISE,
	NG_A2A_LEADER,
	NG_A2A_SA,
	NG_A2A_RD,
	NG_A2A_MPI,
	NG_A2A_NALGOS,
};

static const char *const ng_a2a_names[NG_A2A_NALGOS] = {
    "bruck", "isend", "pairwise", "leader", "sa", "rd", "mpi",
};

/* Spins of the shared-memory wait before it starts yielding the CPU. */
#define NG_A2A_SPINS 256

/* One step of a shift exchange (pairwise, bruck). */
struct ng_a2a_step {
	int dst, src;
	bool send_first; /* blocking order: send then receive, else the reverse */
	size_t nblk;     /* bruck: blocks moved in this step */
};

/* One message of an aggregated exchange (leader, sa, rd). */
struct ng_a2a_msg {
	int peer;
	int node;    /* the peer's node */
	size_t blk;  /* first block in the staging buffer, or in the user buffer when direct */
	size_t nblk; /* message length in blocks */
	bool direct; /* straight from the send / into the receive buffer */
};

struct ng_a2a_plan {
	struct ng_a2a_msg *send, *recv;
	size_t nsend, nrecv;
	size_t stage_s, stage_r; /* staging blocks needed */
};

/* Control block at the start of a node's segment, one cache line each. */
struct ng_a2a_ctl {
	_Alignas(64) atomic_uint count; /* ranks arrived at the current barrier */
	_Alignas(64) atomic_uint gen;   /* barriers completed */
};

struct ng_a2a_shm {
	void *base;
	size_t len;
	struct ng_a2a_ctl *ctl;
	unsigned char *g[2]; /* gather / aggregation area, by iteration parity */
	unsigned char *d[2]; /* distribution area, by iteration parity */
	unsigned gen;        /* barriers this rank has passed */
	unsigned epoch;      /* iterations of the shared-memory algorithms */
};

/* Everything one run needs; lives on run()'s stack. */
struct ng_a2a {
	struct ng_run *run;
	struct ng_comm *c;
	int me, P;
	bool nb;       /* the module has isend/irecv/test/wait */
	bool nb_steps; /* bruck and pairwise use them */
	struct ng_nodes nodes;
	int node, local, ln; /* this rank's node, local index, node size */

	int order[NG_A2A_NALGOS]; /* algorithms to run, in order */
	size_t nalgos;
	const char *skipped[NG_A2A_NALGOS]; /* why an algorithm of "all" did not run */
	char native_why[256];               /* why the module's own alltoall cannot run */

	size_t smax;
	unsigned char *sbuf, *rbuf;       /* P blocks each */
	unsigned char *tmp;               /* bruck: P blocks */
	unsigned char *stage_s, *stage_r; /* staging for packed messages */
	struct ng_req *reqs;
	size_t nreqs;

	struct ng_a2a_step *pw; /* [P - 1] pairwise steps */
	struct ng_a2a_step *bk; /* [nbk] bruck steps */
	size_t nbk;
	struct ng_a2a_plan sa, rd, ld;
	size_t *sa_wpos; /* [P] sa: where this rank writes its block for rank j */
	size_t sa_agg;   /* sa: first block of this rank's aggregation area */
	size_t sa_intra; /* sa: first block of the intra-node blocks for this rank */
	int *rd_fromd;   /* rd: ranks whose block this rank takes from the segment */
	size_t nrd_fromd;
	bool shm_g, shm_d; /* which areas the selected algorithms need */
	struct ng_a2a_shm shm;

	struct ng_sampler smp; /* one stream, this rank's times; the tail: its verify flag */
	double *medians;       /* [NG_A2A_NALGOS * nsizes] for the summary (reporter) */
	size_t checked;        /* iterations verified in the current measurement */
};

static inline unsigned char *ng_a2a_blk(unsigned char *base, size_t i, size_t s)
{
	return base + i * s;
}

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
static void ng_a2a_pairwise_plan(struct ng_a2a *a)
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
static size_t ng_a2a_bruck_plan(struct ng_a2a *a)
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
static void ng_a2a_sa_plan(struct ng_a2a *a)
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
static void ng_a2a_rd_plan(struct ng_a2a *a)
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
static void ng_a2a_leader_plan(struct ng_a2a *a)
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

static void ng_a2a_shm_unmap(struct ng_a2a_shm *s)
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
static ng_status ng_a2a_agree(struct ng_a2a *a, bool failed)
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
static ng_status ng_a2a_shm_setup(struct ng_a2a *a)
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

static ng_status (*const ng_a2a_fns[NG_A2A_NALGOS])(struct ng_a2a *, size_t) = {
    [NG_A2A_BRUCK] = ng_a2a_bruck,   [NG_A2A_ISEND] = ng_a2a_isend, [NG_A2A_PAIRWISE] = ng_a2a_pairwise,
    [NG_A2A_LEADER] = ng_a2a_leader, [NG_A2A_SA] = ng_a2a_sa,       [NG_A2A_RD] = ng_a2a_rd,
    [NG_A2A_MPI] = ng_a2a_mpi,
};

/* ---- selection --------------------------------------------------------- */

/* Largest message of @algo in blocks on any rank (for the module's max_msg;
 * the same on every rank, so all ranks select alike). */
static size_t ng_a2a_max_blocks(const struct ng_a2a *a, int algo)
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

/* Why @algo cannot run here, or NULL. */
static const char *ng_a2a_unavailable(struct ng_a2a *a, int algo)
{
	char offered[128];

	size_t lim = a->c->max_msg;

	switch (algo) {
	case NG_A2A_ISEND:
	case NG_A2A_LEADER:
	case NG_A2A_SA:
	case NG_A2A_RD:
		if (!a->nb)
			return "needs non-blocking operations (isend/irecv), which the module lacks";
		break;
	case NG_A2A_MPI:
		if (a->c->caps & NG_CAP_ALLTOALL)
			break;
		ng_modules_offering(NG_CAP_ALLTOALL, offered, sizeof(offered));
		snprintf(a->native_why, sizeof(a->native_why),
		         "needs %s, which module '%s' does not offer (%s%s)", ng_cap_name(NG_CAP_ALLTOALL),
		         a->c->mod->name, offered[0] ? "modules that do: " : "no module of this build does",
		         offered);
		return a->native_why;
	default:
		break;
	}
	if (lim && a->smax && ng_a2a_max_blocks(a, algo) > lim / a->smax)
		return "its aggregated messages exceed the module's largest message";
	return NULL;
}

/* Appends @algo to the run order unless it is there already. */
static void ng_a2a_add(struct ng_a2a *a, int algo)
{
	for (size_t i = 0; i < a->nalgos; i++)
		if (a->order[i] == algo)
			return;
	a->order[a->nalgos++] = algo;
}

/*
 * Parses --a2a-algo into a->order, in the order given ("all" adds, in its
 * place, every algorithm that can run here and notes why the others
 * cannot).  NG_ERR_USAGE (reported by rank 0) for an unknown name, or a
 * named algorithm that cannot run here.  Every rank decides alike.
 */
static ng_status ng_a2a_select(struct ng_a2a *a)
{
	const char *p = ng_args_str(a->run->args, "a2a-algo");
	bool loud = a->me == 0;

	if (!p)
		p = "all";
	a->nalgos = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		bool all = len == 3 && strncmp(p, "all", 3) == 0;
		int found = -1;

		for (int k = 0; k < NG_A2A_NALGOS; k++)
			if (strlen(ng_a2a_names[k]) == len && strncmp(p, ng_a2a_names[k], len) == 0)
				found = k;
		if (!all && found < 0) {
			if (loud)
				ng_error("--a2a-algo: unknown algorithm '%.*s' (bruck, isend, pairwise, "
				         "leader, sa, rd, mpi, all)",
				         (int)len, p);
			return NG_ERR_USAGE;
		}
		for (int k = all ? 0 : found; k < (all ? NG_A2A_NALGOS : found + 1); k++) {
			const char *why = ng_a2a_unavailable(a, k);

			if (why && !all) {
				if (loud)
					ng_error("--a2a-algo %s: %s", ng_a2a_names[k], why);
				return NG_ERR_USAGE;
			}
			if (why)
				a->skipped[k] = why;
			else
				ng_a2a_add(a, k);
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (a->nalgos == 0) {
		if (loud)
			ng_error("--a2a-algo: no algorithm selected");
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

static bool ng_a2a_selected(const struct ng_a2a *a, int algo)
{
	for (size_t i = 0; i < a->nalgos; i++)
		if (a->order[i] == algo)
			return true;
	return false;
}

/* ---- setup and teardown ------------------------------------------------- */

static ng_status ng_a2a_plans_alloc(struct ng_a2a *a)
{
	size_t P = (size_t)a->P, nn = (size_t)a->nodes.nnodes;
	struct ng_a2a_plan *plans[] = {&a->sa, &a->rd, &a->ld};

	a->pw = calloc(P, sizeof(*a->pw));
	a->bk = calloc(8 * sizeof(int), sizeof(*a->bk));
	a->sa_wpos = calloc(P, sizeof(*a->sa_wpos));
	a->rd_fromd = calloc(P, sizeof(*a->rd_fromd));
	if (!a->pw || !a->bk || !a->sa_wpos || !a->rd_fromd)
		return NG_ERR_NOMEM;
	/* At most one message per rank each way, and per node for leader. */
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		plans[i]->send = calloc(P + nn, sizeof(struct ng_a2a_msg));
		plans[i]->recv = calloc(P + nn, sizeof(struct ng_a2a_msg));
		if (!plans[i]->send || !plans[i]->recv)
			return NG_ERR_NOMEM;
	}
	return NG_OK;
}

static size_t ng_a2a_max(size_t x, size_t y)
{
	return x > y ? x : y;
}

/* This rank's buffers, schedules and sample arrays, once per run (not
 * collective). */
static ng_status ng_a2a_setup(struct ng_a2a *a)
{
	struct ng_run *run = a->run;
	size_t P = (size_t)a->P, count = run->count, s = a->smax, bk_max = 0;
	size_t stage_s = 0, stage_r = 0, nreqs = 2 * P;
	struct ng_a2a_plan *plans[] = {&a->sa, &a->rd, &a->ld};
	const int plan_algo[] = {NG_A2A_SA, NG_A2A_RD, NG_A2A_LEADER};
	struct ng_sampler_spec spec = {
	    .name = "alltoall", .cap = count, .tail = 1, .flags = NG_SAMPLER_GATHER};
	ng_status st;

	st = ng_a2a_plans_alloc(a);
	if (st != NG_OK)
		goto err_nomem;
	ng_a2a_pairwise_plan(a);
	bk_max = ng_a2a_bruck_plan(a);
	ng_a2a_sa_plan(a);
	ng_a2a_rd_plan(a);
	ng_a2a_leader_plan(a);

	if (ng_a2a_selected(a, NG_A2A_BRUCK)) {
		stage_s = stage_r = bk_max;
		st = ng_buf_alloc(a->c, P * s, (void **)&a->tmp);
		if (st != NG_OK)
			return st;
	}
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		if (!ng_a2a_selected(a, plan_algo[i]))
			continue;
		stage_s = ng_a2a_max(stage_s, plans[i]->stage_s);
		stage_r = ng_a2a_max(stage_r, plans[i]->stage_r);
		nreqs = ng_a2a_max(nreqs, plans[i]->nsend + plans[i]->nrecv);
	}
	st = ng_buf_alloc(a->c, P * s, (void **)&a->sbuf);
	if (st == NG_OK)
		st = ng_buf_alloc(a->c, P * s, (void **)&a->rbuf);
	if (st == NG_OK)
		st = ng_buf_alloc(a->c, stage_s * s, (void **)&a->stage_s);
	if (st == NG_OK)
		st = ng_buf_alloc(a->c, stage_r * s, (void **)&a->stage_r);
	if (st != NG_OK)
		return st;

	a->nreqs = nreqs;
	a->reqs = calloc(nreqs, sizeof(*a->reqs));
	if (!a->reqs)
		goto err_nomem;
	st = ng_sampler_init(&a->smp, run, &spec);
	if (st != NG_OK)
		return st;
	if (ng_results_active(run->results)) {
		a->medians = calloc(NG_A2A_NALGOS * (run->nsizes + 1), sizeof(*a->medians));
		if (!a->medians)
			goto err_nomem;
	}
	return NG_OK;

err_nomem:
	ng_error("alltoall: out of memory setting up %d ranks", a->P);
	return NG_ERR_NOMEM;
}

/* Collective: the node segments, once every rank has set up its own part. */
static ng_status ng_a2a_setup_shared(struct ng_a2a *a)
{
	ng_status st;

	a->shm_g = ng_a2a_selected(a, NG_A2A_SA) || ng_a2a_selected(a, NG_A2A_LEADER);
	a->shm_d = ng_a2a_selected(a, NG_A2A_RD) || ng_a2a_selected(a, NG_A2A_LEADER);
	if (a->shm_g || a->shm_d) {
		st = ng_a2a_shm_setup(a);
		if (st != NG_OK)
			return st;
	}
	return NG_OK;
}

/* Frees what ng_a2a_setup made; safe after a partial setup. */
static void ng_a2a_teardown(struct ng_a2a *a)
{
	struct ng_a2a_plan *plans[] = {&a->sa, &a->rd, &a->ld};

	ng_a2a_shm_unmap(&a->shm);
	ng_free(a->c, a->sbuf);
	ng_free(a->c, a->rbuf);
	ng_free(a->c, a->tmp);
	ng_free(a->c, a->stage_s);
	ng_free(a->c, a->stage_r);
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		free(plans[i]->send);
		free(plans[i]->recv);
	}
	free(a->pw);
	free(a->bk);
	free(a->sa_wpos);
	free(a->rd_fromd);
	free(a->reqs);
	ng_sampler_free(&a->smp);
	free(a->medians);
	ng_nodes_free(&a->nodes);
}

/* ---- measurement ------------------------------------------------------- */

/* Payload of the block rank @from sends rank @to in iteration @it. */
static uint64_t ng_a2a_tag(const struct ng_a2a *a, size_t s, int from, int to, uint64_t it)
{
	return ng_verify_tag(s, from, it * (uint64_t)a->P + (uint64_t)to);
}

/* Before a checked iteration: the send payloads, and the complement of
 * the expected bytes in the receive buffer. */
static void ng_a2a_fill(struct ng_a2a *a, size_t s, uint64_t it)
{
	for (int j = 0; j < a->P; j++) {
		unsigned char *r = ng_a2a_blk(a->rbuf, (size_t)j, s);

		ng_verify_fill(ng_a2a_blk(a->sbuf, (size_t)j, s), s, ng_a2a_tag(a, s, a->me, j, it));
		ng_verify_fill(r, s, ng_a2a_tag(a, s, j, a->me, it));
		for (size_t i = 0; i < s; i++)
			r[i] = (unsigned char)~r[i];
	}
}

/* After a checked iteration: every block; reports the first bad one. */
static bool ng_a2a_check(const struct ng_a2a *a, int algo, size_t s, uint64_t it)
{
	for (int j = 0; j < a->P; j++) {
		const unsigned char *r = ng_a2a_blk(a->rbuf, (size_t)j, s);
		uint64_t tag = ng_a2a_tag(a, s, j, a->me, it);
		size_t off;

		if (ng_payload_check(r, s, tag, &off))
			continue;
		ng_error("alltoall %s: verify: size %zu, iteration %" PRIu64
		         ": block from rank %d, byte %zu is 0x%02x, expected 0x%02x",
		         ng_a2a_names[algo], s, it, j, off, r[off], ng_payload_byte(tag, off));
		return false;
	}
	return true;
}

/*
 * One algorithm at one size on this rank: the checked iteration, the
 * warm-up, the timed iterations.  Leaves the times in the sampler's stream
 * and the verify outcome in its tail (1: a block was wrong).
 */
static ng_status ng_a2a_measure(struct ng_a2a *a, int algo, size_t s)
{
	const struct ng_run *run = a->run;
	const struct ng_timer *tm = run->timer;
	struct ng_sampler *smp = &a->smp;
	ng_status (*fn)(struct ng_a2a *, size_t) = ng_a2a_fns[algo];
	bool bad = false;
	ng_status st;

	a->checked = 0;
	ng_sampler_start(smp, 1 + run->warmup, run->count);
	for (uint64_t it = 0; ng_sampler_more(smp, it); it++) {
		bool check = it == 0 || run->verify;
		uint64_t t0, t1;

		if (check)
			ng_a2a_fill(a, s, it);
		t0 = ng_timer_now(tm);
		st = fn(a, s);
		t1 = ng_timer_now(tm);
		if (st != NG_OK)
			return st;
		ng_sampler_add(smp, 0, it, ng_timer_us(tm, t1 - t0));
		if (check) {
			/* Report the first wrong block only; finish the size so
			 * every rank reaches the gather. */
			if (!bad && !ng_a2a_check(a, algo, s, it))
				bad = true;
			a->checked++;
		}
	}
	ng_sampler_tail(smp)[0] = bad ? 1.0 : 0.0;
	return NG_OK;
}

/* Gathers one measurement to the reporter and commits its row. */
static ng_status ng_a2a_report(struct ng_a2a *a, int algo, size_t isize, size_t s)
{
	struct ng_run *run = a->run;
	struct ng_sampler *smp = &a->smp;
	size_t count = ng_sampler_count(smp);
	const double *iter;
	struct ng_stats t;
	struct ng_row *row;
	ng_status st;

	st = ng_sampler_gather(smp);
	if (st != NG_OK)
		return st;
	for (int r = 0; r < a->P; r++)
		if (ng_sampler_tail_of(smp, r)[0] != 0.0)
			return NG_ERR_VERIFY; /* reported by the rank that saw it */
	if (!ng_results_active(run->results))
		return NG_OK;

	/* An iteration takes as long as its slowest rank. */
	iter = ng_sampler_max(smp, 0);
	row = ng_sampler_row(smp, s);
	ng_row_json(row, "algorithm", json_string(ng_a2a_names[algo]));
	ng_sampler_row_stats(smp, row, "time_us", iter, count, &t);
	ng_sampler_row_bw(smp, row, "algbw_MBps", iter, count, (double)s * (double)(a->P - 1), NULL);
	a->medians[(size_t)algo * run->nsizes + isize] = t.median;
	ng_row_number(row, "verified", (double)a->checked);
	ng_sampler_row_raw(smp, row, "time_us", iter, count);
	return ng_row_commit(run->results, row);
}

/* The top-level "alltoall" block. */
static ng_status ng_a2a_block(struct ng_a2a *a)
{
	const struct ng_nodes *n = &a->nodes;
	json_t *blk, *algos, *sizes, *skipped;

	if (!ng_results_active(a->run->results))
		return NG_OK;
	blk = json_object();
	algos = json_array();
	sizes = json_array();
	skipped = json_object();
	if (!blk || !algos || !sizes || !skipped)
		goto err_nomem;
	for (size_t i = 0; i < a->nalgos; i++)
		json_array_append_new(algos, json_string(ng_a2a_names[a->order[i]]));
	for (int k = 0; k < n->nnodes; k++)
		json_array_append_new(sizes, json_integer(ng_nodes_size(n, k)));
	for (int k = 0; k < NG_A2A_NALGOS; k++)
		if (a->skipped[k])
			json_object_set_new(skipped, ng_a2a_names[k], json_string(a->skipped[k]));
	json_object_set_new(blk, "algorithms", algos);
	json_object_set_new(blk, "ranks_per_node",
	                    json_integer(n->per_node ? n->per_node : ng_nodes_max_size(n)));
	json_object_set_new(blk, "nodes", json_integer(n->nnodes));
	json_object_set_new(blk, "membership", json_string(n->per_node ? "virtual" : "host"));
	json_object_set_new(blk, "node_sizes", sizes);
	json_object_set_new(blk, "skipped", skipped);
	json_object_set_new(blk, "blocking_steps", json_boolean(!a->nb_steps));
	return ng_results_block(a->run->results, "alltoall", blk);

err_nomem:
	json_decref(blk);
	json_decref(algos);
	json_decref(sizes);
	json_decref(skipped);
	ng_error("alltoall: out of memory building the result block");
	return NG_ERR_NOMEM;
}

/* Side by side on stdout, after the rows: median time per size and algorithm. */
static void ng_a2a_summary(const struct ng_a2a *a, size_t nsizes_done)
{
	const struct ng_run *run = a->run;
	int best_algo;

	if (!ng_results_active(run->results) || nsizes_done == 0 || a->nalgos < 2)
		return;
	printf("# alltoall: median time per alltoall [us], %d ranks on %d node%s\n", a->P, a->nodes.nnodes,
	       a->nodes.nnodes == 1 ? "" : "s");
	printf("#%9s", "size");
	for (size_t i = 0; i < a->nalgos; i++)
		printf(" %10s", ng_a2a_names[a->order[i]]);
	printf(" %10s\n", "best");
	for (size_t k = 0; k < nsizes_done; k++) {
		double best = 0.0;

		best_algo = -1;
		printf("%10zu", run->sizes[k]);
		for (size_t i = 0; i < a->nalgos; i++) {
			int algo = a->order[i];
			double m = a->medians[(size_t)algo * run->nsizes + k];

			printf(" %10.2f", m);
			if (best_algo < 0 || m < best) {
				best = m;
				best_algo = algo;
			}
		}
		printf(" %10s\n", ng_a2a_names[best_algo]);
	}
	fflush(stdout);
}

static ng_status ng_a2a_run(const struct ng_pattern *p, struct ng_run *run)
{
	struct ng_a2a a = {
	    .run = run,
	    .c = run->comm,
	    .me = run->boot->rank,
	    .P = run->boot->size,
	    .nb = (run->comm->caps & NG_CAP_NONBLOCK) != 0,
	};
	size_t done = 0, nsizes_done = run->nsizes;
	ng_status st;

	(void)p;
	a.nb_steps = a.nb && !ng_args_flag(run->args, "a2a-blocking");
	a.smax = ng_sizes_max(run);
	st = ng_sizes_check(run);
	if (st != NG_OK)
		return st;
	st = ng_nodes_build(run, ng_args_int(run->args, "ranks-per-node"), &a.nodes);
	if (st != NG_OK)
		return st;
	a.node = a.nodes.node_of[a.me];
	a.local = a.nodes.local_of[a.me];
	a.ln = ng_nodes_size(&a.nodes, a.node);

	st = ng_a2a_select(&a);
	if (st != NG_OK)
		goto out_teardown;
	st = ng_a2a_setup(&a);
	/* Local failures differ between ranks: agree before the collective
	 * part, so that no rank waits in it for one that gave up. */
	if (ng_a2a_agree(&a, st != NG_OK) != NG_OK && st == NG_OK)
		st = NG_ERR_SYS;
	if (st == NG_OK)
		st = ng_a2a_setup_shared(&a);
	if (st != NG_OK)
		goto out_teardown;
	st = ng_a2a_block(&a);
	if (st != NG_OK)
		goto out_teardown;

	for (size_t i = 0; i < a.nalgos && st == NG_OK; i++) {
		int algo = a.order[i];

		for (size_t k = 0; k < run->nsizes; k++) {
			size_t s = run->sizes[k];

			st = ng_sizes_sync(run);
			if (st == NG_OK)
				st = ng_a2a_measure(&a, algo, s);
			if (st == NG_OK)
				st = ng_a2a_report(&a, algo, k, s);
			if (st != NG_OK) {
				nsizes_done = 0;
				break;
			}
			if (a.me == 0)
				ng_progress(run, ++done, a.nalgos * run->nsizes, s);
		}
	}
	ng_a2a_summary(&a, nsizes_done);

out_teardown:
	ng_a2a_teardown(&a);
	return st;
}

static const struct ng_option ng_a2a_options[] = {
    {.name = "a2a-algo",
     .type = NG_OPT_STRING,
     .def = "all",
     .help =
         "alltoall algorithms, comma-separated: bruck, isend, pairwise, leader, sa, rd, mpi (the module's "
         "own alltoall, MPI_Alltoall with -x mpi), or all",
     .metavar = "NAME[,NAME...]"},
    {.name = "a2a-blocking",
     .type = NG_OPT_FLAG,
     .help = "alltoall: bruck and pairwise use blocking send/recv even where isend/irecv exist"},
    {.name = "ranks-per-node",
     .type = NG_OPT_INT,
     .def = "0",
     .help = "alltoall, mpbibw: group K consecutive ranks into a virtual node (0: by host name)",
     .metavar = "K"},
    {.name = NULL},
};

const struct ng_pattern ng_pattern_alltoall = {
    .name = "alltoall",
    .desc =
        "personalised all-to-all: bruck, isend, pairwise, leader, sa, rd and the module's own (MPI_Alltoall) "
        "side by side",
    .options = ng_a2a_options,
    .needs = NG_CAP_CHANNEL | NG_CAP_RELIABLE,
    .min_ranks = 2,
    .max_ranks = 0,
    .even_ranks = false,
    .default_sizes = "8-64K",
    .run = ng_a2a_run,
};
