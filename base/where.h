/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a rank stands: the call it waits in, the peer it waits for, and the
 * measurement it is in, for the run's watchdog (core/watchdog.h) to read
 * from its own thread and to say when the rank stops making progress.
 *
 * One writer, the rank's main thread; one reader, the watchdog.  Every
 * field is an atomic written with relaxed stores (a store, no fence, no
 * system call: the module wrappers of core/module.h make two per call, the
 * only cost the watchdog adds inside a timed loop; the cache line stays
 * this core's but for the watchdog's read every quarter second).
 *
 * The call word is seq << 28 | (peer + 1) << 8 | op, one store: the
 * sequence number (36 bits; only its changes count), the peer (20 bits,
 * ranks below 2^20 - 1; 0 for none) and the op.  ng_where_enter starts a
 * call with a new sequence number, ng_where_leave ends it (op NG_AT_IDLE,
 * same sequence), ng_where_poll marks a poll that found nothing (a test
 * that did not complete) without a new number, so that a loop of tests on
 * a request that never completes reads as one long wait.  The watchdog fires when the
 * word has not changed for its bound while op is not NG_AT_IDLE: a rank
 * that computes, or waits nowhere, is never ended by it.
 *
 * The position (phase, size, index, sizes, variant, expected time of a
 * call) is written between measurements by the driver and the session.
 */
#ifndef NG_WHERE_H
#define NG_WHERE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum ng_at {
	NG_AT_IDLE,
	NG_AT_SEND,
	NG_AT_RECV,
	NG_AT_ISEND,
	NG_AT_IRECV,
	NG_AT_TEST,
	NG_AT_WAIT,
	NG_AT_ALLTOALL,
	NG_AT_COLL,
	NG_AT_BARRIER,   /* the bootstrap's */
	NG_AT_ALLGATHER, /* the bootstrap's */
	NG_AT_COUNT
};

struct ng_where {
	_Atomic uint64_t call; /* seq << 28 | (peer + 1) << 8 | enum ng_at */
	uint64_t seq;          /* the writer's own count */
	uint64_t peer_bits;    /* the writer's: (peer + 1) << 8 of the last call naming one (a
	                        * wait's request was posted to the last isend's or irecv's) */
	/* the position */
	_Atomic(const char *) phase; /* static string: "measuring", "clock synchronisation" */
	_Atomic(const char *) pattern;
	_Atomic size_t size, index, nsizes, variant, variants;
	_Atomic uint64_t calls0;    /* seq at the start of the measurement */
	_Atomic uint64_t expect_ns; /* expected time of one call at this size; 0: unknown */
};

/* A where at rest: op idle, no position. */
static inline void ng_where_init(struct ng_where *w)
{
	atomic_init(&w->call, 0);
	w->seq = 0;
	w->peer_bits = 0;
	atomic_init(&w->phase, NULL);
	atomic_init(&w->pattern, NULL);
	atomic_init(&w->size, 0);
	atomic_init(&w->index, 0);
	atomic_init(&w->nsizes, 0);
	atomic_init(&w->variant, 0);
	atomic_init(&w->variants, 0);
	atomic_init(&w->calls0, 0);
	atomic_init(&w->expect_ns, 0);
}

#define NG_WHERE_SEQ_SHIFT 28

/* @peer -1: every rank (a collective). */
static inline void ng_where_enter(struct ng_where *w, enum ng_at op, int peer)
{
	w->peer_bits = ((uint64_t)(uint32_t)(peer + 1) & 0xfffffu) << 8;
	atomic_store_explicit(&w->call, ++w->seq << NG_WHERE_SEQ_SHIFT | w->peer_bits | op,
	                      memory_order_relaxed);
}

/* A call on a request (wait): the peer stays the last one named. */
static inline void ng_where_enter_req(struct ng_where *w, enum ng_at op)
{
	atomic_store_explicit(&w->call, ++w->seq << NG_WHERE_SEQ_SHIFT | w->peer_bits | op,
	                      memory_order_relaxed);
}

static inline void ng_where_leave(struct ng_where *w)
{
	atomic_store_explicit(&w->call, w->seq << NG_WHERE_SEQ_SHIFT, memory_order_relaxed);
}

/* A poll that found nothing: the wait goes on (a new one starts when the
 * rank was not waiting). */
static inline void ng_where_poll(struct ng_where *w, enum ng_at op)
{
	if ((atomic_load_explicit(&w->call, memory_order_relaxed) & 0xff) == NG_AT_IDLE)
		atomic_store_explicit(&w->call, ++w->seq << NG_WHERE_SEQ_SHIFT | w->peer_bits | op,
		                      memory_order_relaxed);
}

/* The op, the peer (-1: none or every rank) and the sequence number of a
 * call word. */
static inline enum ng_at ng_where_op(uint64_t call)
{
	return (enum ng_at)(call & 0xff);
}
static inline int ng_where_peer(uint64_t call)
{
	return (int)((call >> 8) & 0xfffffu) - 1;
}
static inline uint64_t ng_where_seq(uint64_t call)
{
	return call >> NG_WHERE_SEQ_SHIFT;
}

/* The name of @op ("recv", "the bootstrap's barrier"). */
static inline const char *ng_at_name(enum ng_at op)
{
	static const char *const n[NG_AT_COUNT] = {
	    [NG_AT_IDLE] = "no call",
	    [NG_AT_SEND] = "send",
	    [NG_AT_RECV] = "recv",
	    [NG_AT_ISEND] = "isend",
	    [NG_AT_IRECV] = "irecv",
	    [NG_AT_TEST] = "test (polling a request)",
	    [NG_AT_WAIT] = "wait (for a request)",
	    [NG_AT_ALLTOALL] = "the module's alltoall",
	    [NG_AT_COLL] = "the module's collective",
	    [NG_AT_BARRIER] = "the bootstrap's barrier",
	    [NG_AT_ALLGATHER] = "the bootstrap's allgather",
	};
	return op < NG_AT_COUNT ? n[op] : "?";
}

#endif
