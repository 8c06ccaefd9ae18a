/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "emu" module: another module (--emu-base, default tcp) made to behave
 * like a LogGP machine with known parameters, by busy-waiting.  It is the
 * ground truth for the loggp and plogp patterns: they must find what emu was
 * told to inject.
 *
 * The model (all times on one timer set up once at open: the TSC where it is
 * invariant, else CLOCK_MONOTONIC_RAW; a message of s bytes has a wire time
 * w(s) = (s - 1) G, with G2 instead of G when s > --emu-threshold):
 *
 *   send   The call starts at t0.  The message is injected at
 *          t_inj = max(t0 + o_s, next), where next = t_inj(previous send)
 *          + g + w(previous size), so consecutive injections are at least
 *          g + w apart (the gap, per rank, over all peers).  The base sends
 *          the payload with t_inj in an 8-byte trailer; then the call spins
 *          until t_inj.  So a send costs max(o_s, base send) when nothing
 *          queues, and a back-to-back train runs at max(o_s, g + w(s)) per
 *          message.
 *   recv   The call starts at t_a; the base receives payload and trailer.
 *          The message is delivered at t_del = t_inj + L + w(s); receive
 *          processing starts at max(t_a, t_del) and the call spins until
 *          o_r after that.  So a receive whose message is long there costs
 *          max(o_r, base receive), and one whose receiver waits returns at
 *          t_inj + L + w(s) + o_r (or later, when the base is slower).
 *
 * The injected values are therefore floors: wherever they exceed the base's
 * own costs (loopback TCP: a few microseconds; size them well above), a
 * message's one-way time is o_s + L + (s - 1) G + o_r, a train's gap is
 * g + (s - 1) G, and the loggp pattern's formulas give back exactly o_s,
 * o_r, g, G and L, with nothing of the base to subtract.  Defaults are 0: a
 * plain emu is the base plus the trailer.
 *
 * Precision.  A call's cost counts from emu's first timer read in it.  At
 * open, after the base is connected, pairs of ranks time real sends and
 * receives through the instance's entry points, as a caller times them
 * (ng_emu_path): the way in before that read and the way back out of the
 * spin, cold after the base's system call, make a call end later than its
 * target, and the spins of each kind then stop that much early.  What is
 * left varies from call to call: a call after a long busy-wait in the
 * caller can miss the caches (a timer interrupt in the wait leaves the
 * caches and TLB cold: measured on a 2-core VM, microseconds after waits of
 * milliseconds), so the patterns' delays should stay short: inject tens of
 * microseconds, not milliseconds.  Two things make
 * single calls longer than injected, and emu evens them out over the calls
 * whose cost is the overhead alone (see ng_emu_spin_until): a base call that
 * now and then takes longer than the floor (loopback TCP: single receives of
 * 50 us where the median is 3), and the host taking the CPU away near the end
 * of a spin.  Such a call owes its excess, and the next calls of its kind end
 * earlier by as much, so the injected o_s and o_r hold on average over a
 * train, as the estimators' averages see them; a per-call median sees one
 * call late and one early.
 * Every rank needs a CPU of its own: busy-waiting ranks that share one steal
 * time from each other, and the emulated machine is then not the injected
 * one.
 *
 * One host only for L and G: the receiver compares the sender's trailer time
 * with its own clock (the invariant TSC or CLOCK_MONOTONIC_RAW), which ranks
 * share only on one host.  open() compares the ranks' host names; across
 * hosts it refuses --emu-L and --emu-G/--emu-G2 and otherwise delivers at
 * arrival (o_s, o_r and g still work: they use one clock each).
 *
 * Trailer: alloc() asks the base for 8 bytes more than requested, so the 8
 * bytes after any message in an emu buffer exist.  send and recv save them,
 * let the base move len + 8 bytes, and restore them, so the caller's memory
 * is unchanged (the const of send's buffer is cast away for this; the memory
 * is emu's own).  The base therefore carries len + 8 bytes per message, and
 * max_msg is the base's minus 8.
 *
 * Non-blocking: emu's requests do not map to the base's (a request would
 * need the base's request and emu's state, which do not both fit in struct
 * ng_req).  isend is the blocking send (it spins o_s, and until the gap
 * lets the message in) and completes.  irecv queues the request in its
 * peer's FIFO.  test() never blocks: it asks the base for the first queued
 * message (one base irecv at a time, in a request of emu's own, polled with
 * the base's test where it is non-blocking), and reports a receive done
 * only once the model's end of its processing has passed: o_r after the
 * later of its delivery and the first look for it, and after the previous
 * receive's processing (the receiver handles one message at a time, so
 * messages coming faster than o_r, or sent faster than the gap, queue and
 * their latency grows).  wait, and a blocking recv from that peer, complete
 * the queued receives in order by busy-waiting as recv does.  A pattern that
 * pre-posts receives and then waits works unchanged; a symmetric exchange of
 * messages larger than the base's socket buffers (both ranks isend before
 * either waits) can deadlock over emu.
 * Capabilities are the base's (reliable, channel, multi-rank, registered
 * memory, MPI launch) plus non-blocking, computed at open; the descriptor
 * declares the union that a typical base gives.  An emu over mpi must be
 * started with mpiexec (the driver only sees emu's descriptor).
 *
 * --emu-max BYTES: the emulated network carries messages of at most BYTES
 * (as a datagram network's MTU): the instance's max_msg, and a longer send
 * fails (NG_ERR_USAGE).
 *
 * --emu-add US, --emu-add-G US_PER_BYTE: every send first spins US + len * US_PER_BYTE,
 *          a cost added to the base's, not a floor (a slowdown at every size).
 * --emu-os-drift US: the send overhead grows by US with every send of a
 * rank (o_s + k US for its k-th send): a measurement that drifts, planted
 * for the tests of the stationarity check (sampler.h, "unstable").
 *
 * --emu-corrupt N: every N-th message a rank receives (all peers counted,
 * empty ones skipped for the flip) has one payload byte XORed with 0x5a at
 * offset (s / 2 + 7919 k) mod s, k = 0, 1, ... - after the base delivered it
 * intact, as a faulty network would.  For testing --verify.
 */
#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "module.h"
#include "options.h"
#include "plugin.h"
#include "queue.h"
#include "registry.h"
#include "status.h"
#include "timers/timer.h"

extern const struct ng_module ng_module_emu;

#include "emu_int.h"

static inline struct ng_emu *ng_emu_of(struct ng_comm *c)
{
	return ng_container_of(c, struct ng_emu, base);
}

static inline struct ng_emu_req *ng_emu_req_of(struct ng_req *r)
{
	return (struct ng_emu_req *)(void *)r->priv;
}

static inline uint64_t ng_emu_now(const struct ng_emu *e)
{
	return ng_timer_now(&e->clk);
}

/* Wire time of @len bytes, ticks. */
static inline uint64_t ng_emu_wire(const struct ng_emu *e, size_t len)
{
	double per = e->threshold && len > e->threshold ? e->G2_t : e->G_t;

	return len ? (uint64_t)((double)(len - 1) * per + 0.5) : 0;
}

/*
 * Busy-waits until @t (ticks), less what this kind of call owes when
 * @debt_p is not NULL; NG_ERR_CANCELLED when the run is interrupted.
 *
 * The loop sees the time once per timer read, and the way out of the spin,
 * out of emu and back into the caller costs a little, as does the way in
 * before emu's first timer read: the spin stops @early ticks before @t, what
 * the calibration at open measured for this kind of call (ng_emu_path), so
 * that an emulated cost comes out as injected for a caller timing the call.
 *
 * Debt (@debt_p, for calls whose cost is the overhead alone: a send not held
 * back by the gap, a receive of a message already delivered): a call that
 * ends more than NG_EMU_LATE_NS past its target - the base call took longer
 * than the injected floor, or the host took the CPU away near the end of the
 * spin - owes the excess, up to @cap (one call's injected cost); the next
 * such calls of the same kind end earlier by as much as they can without
 * ending before their base call returned, until it is paid.  So the
 * injected overheads hold on average over any run of calls (what the
 * estimators' phase averages see) even on a host that sometimes delays one;
 * delivery times and gaps never pay or owe.
 */
static inline ng_status ng_emu_spin_until(const struct ng_emu *e, uint64_t t, uint64_t early,
                                          uint64_t *debt_p, uint64_t cap, uint64_t *end_p)
{
	const volatile sig_atomic_t *cancel = e->base.cancel;
	uint64_t now = ng_emu_now(e);

	t -= early;
	if (debt_p && *debt_p && now < t) {
		uint64_t pay = *debt_p < t - now ? *debt_p : t - now;

		*debt_p -= pay;
		t -= pay;
	}
	while (now < t) {
		if (cancel && *cancel)
			return NG_ERR_CANCELLED;
		now = ng_emu_now(e);
	}
	if (debt_p && now - t > e->late_t) {
		*debt_p += now - t;
		if (*debt_p > cap)
			*debt_p = cap;
	}
	if (end_p)
		*end_p = now;
	return NG_OK;
}

/* Accounts a call's spin from @t_in (the call's first timer read) to @end
 * against the @aim it had (ticks): at the calibration kept one by one, over
 * the run summed. */
static inline void ng_emu_dev(struct ng_emu *e, bool send, uint64_t t_in, uint64_t end, uint64_t aim)
{
	if (__builtin_expect(e->cal, 0)) {
		if (send && e->ncal_s < NG_EMU_CAL) {
			e->cal_s[e->ncal_s++] = end - t_in;
			e->aim_s = aim;
		} else if (!send && e->ncal_r < NG_EMU_CAL) {
			e->cal_r[e->ncal_r++] = end - t_in;
			e->aim_r = aim;
		}
	} else if (send) {
		e->dev_s += (int64_t)(end - t_in) - (int64_t)aim;
		e->ndev_s++;
	} else {
		e->dev_r += (int64_t)(end - t_in) - (int64_t)aim;
		e->ndev_r++;
	}
}

/* The median of @n tick counts (sorted in place: a few dozen values). */
static uint64_t ng_emu_median(uint64_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t tmp = v[i];
		size_t k = i;

		for (; k > 0 && v[k - 1] > tmp; k--)
			v[k] = v[k - 1];
		v[k] = tmp;
	}
	return v[n / 2];
}

/* A lateness in ticks less the caller's own timer read, never below 0. */
static uint64_t ng_emu_less_read(const struct ng_emu *e, uint64_t late)
{
	uint64_t read = (uint64_t)(e->clk.overhead_ns / e->clk.ns_per_tick + 0.5);

	return late > read ? late - read : 0;
}

/*
 * How much later than its target a spin returns, as a caller that reads the
 * timer around it sees it (less that caller's own read): the median over a
 * few short spins in a tight loop.  The report's overshoot (below) times the
 * same spins; the calls' own lateness is ng_emu_path's.
 */
static void ng_emu_calibrate(struct ng_emu *e)
{
	uint64_t over[NG_EMU_CAL], wait = (uint64_t)(2000.0 / e->clk.ns_per_tick);

	e->early_t = 0;
	for (size_t i = 0; i < NG_EMU_CAL; i++) {
		uint64_t a = ng_emu_now(e), b;

		ng_emu_spin_until(e, ng_emu_now(e) + wait, 0, NULL, 0, NULL);
		b = ng_emu_now(e);
		over[i] = b - a > wait ? b - a - wait : 0;
	}
	e->early_t = ng_emu_less_read(e, ng_emu_median(over, NG_EMU_CAL));
	e->early_s = e->early_r = e->early_t;
}

/* ---- data path ------------------------------------------------------- */

static ng_status __attribute__((noinline, cold)) ng_emu_too_long(const struct ng_emu *e, size_t len)
{
	ng_error("emu: a message of %zu bytes is above --emu-max %zu", len, e->max);
	return NG_ERR_USAGE;
}

static ng_status ng_emu_send(struct ng_comm *c, int peer, const void *buf, size_t len)
{
	struct ng_emu *e = ng_emu_of(c);
	/* emu's own memory (alloc() made room for the trailer): writable. */
	unsigned char *tail = (unsigned char *)(uintptr_t)buf + len;
	unsigned char save[NG_EMU_TRAILER];
	uint64_t os_t = e->os_t + (uint64_t)e->drift_acc;
	uint64_t t_in = ng_emu_now(e), t_inj, end;
	bool held;
	ng_status st = NG_OK;

	if (e->add_t > 0.0 || e->addG_t > 0.0) { /* --emu-add: before the message leaves, delaying delivery */
		uint64_t aim = t_in + (uint64_t)(e->add_t + e->addG_t * (double)len);

		st = ng_emu_spin_until(e, aim, 0, NULL, 0, &t_in);
		if (st != NG_OK)
			return st;
		/* what the spin really added past its aim (one loop's lateness), so a
		 * test knows the slowdown it planted: report()'s "add_late_us", over
		 * the spins the host left alone (a disturbed one is the host's, as
		 * it would be without the spin) */
		if (t_in - aim <= e->late_t) {
			e->add_late += t_in - aim;
			e->nadd++;
		}
	}
	t_inj = t_in + os_t;
	held = t_inj < e->next_inj; /* by the gap */

	e->drift_acc += e->drift_t;
	if (__builtin_expect(e->max && len > e->max, 0))
		return ng_emu_too_long(e, len);
	if (held)
		t_inj = e->next_inj;
	memcpy(save, tail, sizeof(save));
	memcpy(tail, &t_inj, sizeof(t_inj));
	st = ng_send(e->bc, peer, buf, len + NG_EMU_TRAILER);
	memcpy(tail, save, sizeof(save));
	if (st != NG_OK)
		return st;
	e->next_inj = t_inj + e->g_t + ng_emu_wire(e, len);
	if (held)
		return ng_emu_spin_until(e, t_inj, e->early_s, NULL, os_t, NULL);
	st = ng_emu_spin_until(e, t_inj, e->early_s, &e->debt_s, os_t, &end);
	if (st == NG_OK)
		ng_emu_dev(e, true, t_in, end, os_t - e->early_s);
	return st;
}

/* XORs one byte of every corrupt_every-th received message. */
static void ng_emu_corrupt(struct ng_emu *e, unsigned char *buf, size_t len)
{
	if (++e->nrecv % e->corrupt_every || !len)
		return;
	buf[(len / 2 + (size_t)(e->ncorrupt * 7919u)) % len] ^= 0x5a;
	e->ncorrupt++;
}

/* A failed receive: the bytes the trailer would land on put back, and it
 * completes at once with @st. */
static void ng_emu_fail(struct ng_emu_req *r, ng_status st)
{
	memcpy((unsigned char *)r->buf + r->len, r->save, sizeof(r->save));
	r->status = st;
	r->t_done = 0;
	r->state = NG_EMU_ARRIVED;
}

/*
 * The base delivered @r (payload and trailer in r->buf; seen at @now): the
 * injection time from the trailer, the bytes it landed on put back, and the
 * end of its receive processing set.  Processing starts at the later of the
 * delivery (t_inj + L + w) and the time the receiver asked for the message
 * (r->t_done while posted), as a blocking recv called then would start it,
 * and not before the previous receive's processing has ended (e->rdone:
 * one receiver, one message at a time, so messages that come faster than
 * o_r queue); it ends o_r later.  Without a shared clock it starts at @now.
 */
static void ng_emu_arrive(struct ng_emu *e, struct ng_emu_req *r, uint64_t now)
{
	unsigned char *tail = (unsigned char *)r->buf + r->len;
	uint64_t t_inj, start = now;

	memcpy(&t_inj, tail, sizeof(t_inj));
	memcpy(tail, r->save, sizeof(r->save));
	if (e->deadline) {
		uint64_t t_del = t_inj + e->L_t + ng_emu_wire(e, r->len);

		start = t_del > r->t_done ? t_del : r->t_done;
	}
	if (e->rdone > start)
		start = e->rdone;
	r->t_done = e->rdone = start + e->or_t;
	r->status = NG_OK;
	r->state = NG_EMU_ARRIVED;
}

/* One look at the base's receive that test() posted for e->bcur: once the
 * base has it, the request arrives (ng_emu_arrive, or fails) and breq is
 * free.  *busy_p: the base still has it. */
static ng_status ng_emu_bpoll(struct ng_emu *e, bool *busy_p)
{
	struct ng_emu_req *r = e->bcur;
	bool done = false;
	ng_status st = ng_test(e->bc, &e->breq, &done);

	*busy_p = st == NG_OK && !done;
	if (*busy_p)
		return NG_OK;
	e->bcur = NULL;
	if (st != NG_OK)
		ng_emu_fail(r, st);
	else
		ng_emu_arrive(e, r, ng_emu_now(e));
	return st;
}

/* Waits for the base's receive that test() left posted (e->bcur), so that
 * breq is free; as ng_emu_base_recv, it stops on an interrupt or after the
 * run's timeout. */
static ng_status ng_emu_settle(struct ng_emu *e)
{
	const volatile sig_atomic_t *cancel = e->base.cancel;
	const int peer = e->bcur->peer;
	uint64_t t0 = ng_emu_now(e);
	bool busy = true;
	ng_status st;

	while ((st = ng_emu_bpoll(e, &busy)) == NG_OK && busy) {
		if (cancel && *cancel)
			return NG_ERR_CANCELLED;
		if (e->timeout_t && ng_emu_now(e) - t0 > e->timeout_t) {
			ng_error("emu: nothing from rank %d for %.0f s", peer,
			         (double)e->timeout_t * e->clk.ns_per_tick * 1e-9);
			return NG_ERR_TIMEOUT;
		}
	}
	return st;
}

/* Asks the base for @r's message (@r first in its peer's queue and breq
 * free), the receiver asking at @t_ask: the base's irecv, polled by later
 * looks; a base without one receives at once (blocking). */
static void ng_emu_post(struct ng_emu *e, struct ng_emu_req *r, uint64_t t_ask)
{
	unsigned char *tail = (unsigned char *)r->buf + r->len;
	ng_status st;

	memcpy(r->save, tail, sizeof(r->save));
	r->t_done = t_ask;
	if (!e->poll) {
		st = ng_recv(e->bc, r->peer, r->buf, r->len + NG_EMU_TRAILER);
		if (st != NG_OK)
			ng_emu_fail(r, st);
		else
			ng_emu_arrive(e, r, ng_emu_now(e));
		return;
	}
	st = ng_irecv(e->bc, r->peer, r->buf, r->len + NG_EMU_TRAILER, &e->breq);
	if (st != NG_OK) {
		ng_emu_fail(r, st);
		return;
	}
	e->bcur = r;
	r->state = NG_EMU_POSTED;
}

/*
 * The base's receive: polled through its non-blocking calls where it has
 * them, else its blocking recv.  A rank of emu busy-waits anyway; sleeping in
 * the kernel instead would add a wake-up to every message's delivery (tens of
 * microseconds on a virtual machine), a base cost that the floors would have
 * to be sized above.  Interrupted or timed out, the base's request stays
 * posted: the instance is then only good for close().
 */
static ng_status ng_emu_base_recv(struct ng_emu *e, int peer, void *buf, size_t len)
{
	const volatile sig_atomic_t *cancel = e->base.cancel;
	uint64_t t0;
	bool done = false;
	ng_status st;

	if (!e->poll)
		return ng_recv(e->bc, peer, buf, len);
	if (e->bcur) { /* test() left a base receive in breq: finish it first */
		st = ng_emu_settle(e);
		if (st != NG_OK)
			return st;
	}
	st = ng_irecv(e->bc, peer, buf, len, &e->breq);
	if (st != NG_OK)
		return st;
	t0 = ng_emu_now(e);
	while ((st = ng_test(e->bc, &e->breq, &done)) == NG_OK && !done) {
		if (cancel && *cancel)
			return NG_ERR_CANCELLED;
		if (e->timeout_t && ng_emu_now(e) - t0 > e->timeout_t) {
			ng_error("emu: nothing from rank %d for %.0f s", peer,
			         (double)e->timeout_t * e->clk.ns_per_tick * 1e-9);
			return NG_ERR_TIMEOUT;
		}
	}
	return st;
}

/* One receive; the caller called at @t_a. */
static ng_status ng_emu_recv_now(struct ng_emu *e, int peer, void *buf, size_t len, uint64_t t_a)
{
	unsigned char *tail = (unsigned char *)buf + len;
	unsigned char save[NG_EMU_TRAILER];
	uint64_t t_inj, start, end;
	bool waited = false; /* for the delivery */
	ng_status st;

	memcpy(save, tail, sizeof(save));
	st = ng_emu_base_recv(e, peer, buf, len + NG_EMU_TRAILER);
	memcpy(&t_inj, tail, sizeof(t_inj));
	memcpy(tail, save, sizeof(save));
	if (st != NG_OK)
		return st;
	if (e->deadline) {
		uint64_t t_del = t_inj + e->L_t + ng_emu_wire(e, len);

		waited = t_del > t_a;
		start = waited ? t_del : t_a;
	} else {
		start = ng_emu_now(e);
	}
	e->rdone = start + e->or_t;
	st = ng_emu_spin_until(e, start + e->or_t, e->early_r, waited ? NULL : &e->debt_r, e->or_t, &end);
	if (st == NG_OK && !waited && e->deadline)
		ng_emu_dev(e, false, t_a, end, e->or_t - e->early_r);
	if (e->corrupt_every)
		ng_emu_corrupt(e, buf, len);
	return st;
}

/* Blocks until @r, which test() has moved on (posted or arrived), has
 * completed: the base's receive finished, then a spin to the end of its
 * processing. */
static ng_status ng_emu_finish(struct ng_emu *e, struct ng_emu_req *r)
{
	ng_status st = NG_OK;

	if (r->state == NG_EMU_POSTED) {
		st = ng_emu_settle(e);
		if (st != NG_OK)
			return st;
	}
	if (r->status != NG_OK)
		return r->status;
	st = ng_emu_spin_until(e, r->t_done, e->early_r, NULL, 0, NULL);
	if (st == NG_OK && e->corrupt_every)
		ng_emu_corrupt(e, r->buf, r->len);
	return st;
}

/* Completes the queued receives from @peer up to and including @upto (all of
 * them when NULL), in posting order; the caller called at @t_a. */
static ng_status ng_emu_drain(struct ng_emu *e, int peer, const struct ng_emu_req *upto, uint64_t t_a)
{
	struct ng_qlink *n;

	while ((n = ng_queue_pop(&e->rq[peer]))) {
		struct ng_emu_req *r = NG_QUEUE_ENTRY(n, struct ng_emu_req, link);

		if (r->state == NG_EMU_QUEUED)
			r->status = ng_emu_recv_now(e, peer, r->buf, r->len, t_a);
		else
			r->status = ng_emu_finish(e, r);
		r->done = true;
		t_a = ng_emu_now(e);
		if (r == upto)
			return r->status;
		if (r->status != NG_OK)
			return r->status;
	}
	return NG_OK;
}

static ng_status ng_emu_recv(struct ng_comm *c, int peer, void *buf, size_t len)
{
	struct ng_emu *e = ng_emu_of(c);
	uint64_t t_a = ng_emu_now(e); /* first: the call's cost counts from here */
	ng_status st;

	if (!ng_queue_empty(&e->rq[peer])) {
		st = ng_emu_drain(e, peer, NULL, t_a);
		if (st != NG_OK)
			return st;
		t_a = ng_emu_now(e);
	}
	return ng_emu_recv_now(e, peer, buf, len, t_a);
}

static ng_status ng_emu_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *req)
{
	struct ng_emu_req *r = ng_emu_req_of(req);

	*r = (struct ng_emu_req){.peer = peer, .len = len, .done = true};
	r->status = ng_emu_send(c, peer, buf, len);
	return r->status;
}

static ng_status ng_emu_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *req)
{
	struct ng_emu *e = ng_emu_of(c);
	struct ng_emu_req *r = ng_emu_req_of(req);

	*r = (struct ng_emu_req){.buf = buf, .len = len, .peer = peer, .is_recv = true};
	ng_queue_push(&e->rq[peer], &r->link);
	return NG_OK;
}

static ng_status ng_emu_wait(struct ng_comm *c, struct ng_req *req)
{
	struct ng_emu *e = ng_emu_of(c);
	uint64_t t_a = ng_emu_now(e);
	struct ng_emu_req *r = ng_emu_req_of(req);

	if (!r->done)
		return ng_emu_drain(e, r->peer, r, t_a);
	return r->status;
}

/*
 * One non-blocking look at @h, the first receive queued for its peer, at
 * @now: asks the base for its message when nothing has been asked (once
 * breq is free: a base receive test() posted for another peer is looked at
 * first), looks at the base's receive, and completes @h once the end of its
 * processing has come (less the path out of the call, as a spin stops).
 * *done_p: @h completed (its status returned).
 */
static ng_status ng_emu_step(struct ng_emu *e, struct ng_emu_req *h, uint64_t now, bool *done_p)
{
	bool busy = false;
	ng_status st;

	*done_p = false;
	if (h->state == NG_EMU_QUEUED) {
		if (e->bcur) {
			st = ng_emu_bpoll(e, &busy);
			if (st != NG_OK || busy)
				return st;
		}
		ng_emu_post(e, h, now);
	}
	if (h->state == NG_EMU_POSTED) {
		ng_emu_bpoll(e, &busy); /* a failure completes @h with it */
		if (busy)
			return NG_OK;
		now = ng_emu_now(e);
	}
	if (now + e->early_r < h->t_done)
		return NG_OK;
	ng_queue_pop(&e->rq[h->peer]);
	h->done = true;
	*done_p = true;
	if (h->status == NG_OK && e->corrupt_every)
		ng_emu_corrupt(e, h->buf, h->len);
	return h->status;
}

/* Never blocks: a send completed in isend; a receive is moved on by one
 * look at it and the receives queued before it (ng_emu_step), done once the
 * model's time of its completion has passed. */
static ng_status ng_emu_test(struct ng_comm *c, struct ng_req *req, bool *done_p)
{
	struct ng_emu *e = ng_emu_of(c);
	struct ng_emu_req *r = ng_emu_req_of(req);

	*done_p = r->done;
	if (r->done)
		return r->status;
	for (;;) {
		struct ng_emu_req *h =
		    NG_QUEUE_ENTRY(ng_queue_first(&e->rq[r->peer]), struct ng_emu_req, link);
		bool done;
		ng_status st = ng_emu_step(e, h, ng_emu_now(e), &done);

		if (!done || h == r || st != NG_OK) {
			*done_p = done && h == r;
			return st;
		}
	}
}

/* ---- memory -------------------------------------------------------------- */

static ng_status ng_emu_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	struct ng_emu *e = ng_emu_of(c);

	if (len > SIZE_MAX - NG_EMU_TRAILER) {
		ng_error("emu: cannot allocate %zu bytes", len);
		return NG_ERR_NOMEM;
	}
	return ng_alloc(e->bc, len + NG_EMU_TRAILER, buf_p);
}

static void ng_emu_free(struct ng_comm *c, void *buf)
{
	struct ng_emu *e = ng_emu_of(c);

	ng_free(e->bc, buf);
}

/* ---- setup ----------------------------------------------------------------- */

/*
 * The real calls' lateness, send and receive apart.  A pattern times a call
 * from its timer read before it to its read after it: that holds the way
 * into emu (an indirect call) before emu's first read, and the way out of
 * the spin and back, which runs cold after the base's system call (measured
 * on a 2-core VM: 10-20 ns more than the tight loop of ng_emu_calibrate, and
 * o_s, o_r came out 30-45 ns long without this).  So ranks 2k and 2k + 1
 * time NG_EMU_CAL calls each way through the instance's own entry points,
 * as a pattern calls them (ng_send, ng_recv: the function pointers, the
 * base's real calls inside), the lower rank sending first: each call costs
 * NG_EMU_PATH_US by injection, and the median of (the call as timed, less
 * that, less one read) is how early that kind of call's spin then stops.  A
 * receive is timed only once its message is surely there (the receiver
 * waits 5x longer between calls than the sender), and only where ranks
 * share a clock (e->deadline): elsewhere its cost counts from the base's
 * return, and the tight loop's figure stays.  A rank without a partner (the
 * last of an odd number) keeps that figure too.  Called at the end of open,
 * when the instance is complete; the injected parameters are put back after.
 */
static ng_status ng_emu_path(struct ng_emu *e)
{
	struct ng_comm *c = &e->base;
	const int rank = c->rank, peer = rank ^ 1;
	const uint64_t cost = (uint64_t)(NG_EMU_PATH_US * 1e3 / e->clk.ns_per_tick);
	uint64_t late_s[NG_EMU_CAL], late_r[NG_EMU_CAL];
	size_t ns = 0, nr = 0;
	/* what the calibration changes, put back after it */
	const uint64_t os_t = e->os_t, or_t = e->or_t, g_t = e->g_t, L_t = e->L_t;
	const double G_t = e->G_t, G2_t = e->G2_t, drift_t = e->drift_t, add_t = e->add_t, addG_t = e->addG_t;
	const uint64_t corrupt = e->corrupt_every;
	ng_status st = NG_OK;
	void *buf;

	if (peer >= c->size)
		return NG_OK;
	st = ng_alloc(c, 1, &buf);
	if (st != NG_OK)
		return st;
	memset(buf, 0, 1);
	e->os_t = e->or_t = cost;
	e->g_t = e->L_t = 0;
	e->G_t = e->G2_t = e->drift_t = e->add_t = e->addG_t = 0.0;
	e->corrupt_every = 0;
	e->early_s = e->early_r = 0;
	e->cal = true;
	for (int phase = 0; phase < 2 && st == NG_OK; phase++) {
		bool sending = (phase == 0) == (rank < peer);
		/* between calls: the sender as long as a call, the receiver 5x */
		uint64_t pause = sending ? cost : 5 * cost;

		for (size_t i = 0; i < NG_EMU_CAL && st == NG_OK; i++) {
			uint64_t a, b;

			if (i)
				ng_emu_spin_until(e, ng_emu_now(e) + pause, 0, NULL, 0, NULL);
			a = ng_emu_now(e);
			st = sending ? ng_send(c, peer, buf, 1) : ng_recv(c, peer, buf, 1);
			b = ng_emu_now(e);
			/* the first receive waited for its message */
			if (st != NG_OK || (!sending && !i))
				continue;
			if (sending)
				late_s[ns++] = b - a > cost ? b - a - cost : 0;
			else
				late_r[nr++] = b - a > cost ? b - a - cost : 0;
		}
	}
	ng_free(c, buf);
	e->cal = false;
	e->os_t = os_t;
	e->or_t = or_t;
	e->g_t = g_t;
	e->L_t = L_t;
	e->G_t = G_t;
	e->G2_t = G2_t;
	e->drift_t = drift_t;
	e->add_t = add_t;
	e->addG_t = addG_t;
	e->drift_acc = 0.0;
	e->corrupt_every = corrupt;
	e->nrecv = 0;
	e->next_inj = 0;
	e->debt_s = e->debt_r = 0;
	e->early_s = ns ? ng_emu_less_read(e, ng_emu_median(late_s, ns)) : e->early_t;
	e->early_r = nr && e->deadline ? ng_emu_less_read(e, ng_emu_median(late_r, nr)) : e->early_t;
	return st;
}

/*
 * Overshoot: how late an injected delay really ends, as a caller timing it
 * sees it, measured again after the run (report() is never called inside a
 * timed region): NG_EMU_CAL spins as long as the injected o_s (2 us when
 * none), each timed around the call less one timer read, less the delay.
 * The median of |lateness| is the bound an emulated call's cost may be off
 * by (doc/emu.md; not the mean: a call the host delays is repaid by the
 * next ones, see ng_emu_spin_until): a figure over emu carries it as
 * "emu_overshoot".
 */
/* How much longer than at the calibration the run's calls of one kind
 * spun past their aim, on average (ns; 0 without calls or calibration). */
static double ng_emu_run_dev(const struct ng_emu *e, int64_t sum, uint64_t n, const uint64_t *cal,
                             size_t ncal, uint64_t aim)
{
	uint64_t v[NG_EMU_CAL];

	if (!n || !ncal)
		return 0.0;
	memcpy(v, cal, ncal * sizeof(*v));
	return ((double)sum / (double)n - ((double)ng_emu_median(v, ncal) - (double)aim)) *
	       e->clk.ns_per_tick;
}

static json_t *ng_emu_report(struct ng_comm *c)
{
	struct ng_emu *e = ng_emu_of(c);
	uint64_t wait = e->os_t ? e->os_t : (uint64_t)(2000.0 / e->clk.ns_per_tick);
	double late_ns[NG_EMU_CAL], mx = 0.0, read = e->clk.overhead_ns;

	for (size_t i = 0; i < NG_EMU_CAL; i++) {
		uint64_t a = ng_emu_now(e), b;
		double late;

		/* the spin of ng_emu_spin_until, without its stop on an
		 * interrupted run (which would return at once and count as
		 * early by the whole delay): at most the injected o_s long */
		for (uint64_t t = a + wait - e->early_t, now = a; now < t;)
			now = ng_emu_now(e);
		b = ng_emu_now(e);
		late = fabs(((double)(b - a) - (double)wait) * e->clk.ns_per_tick - read);
		/* insertion sort: a few dozen values */
		size_t k = i;

		for (; k > 0 && late_ns[k - 1] > late; k--)
			late_ns[k] = late_ns[k - 1];
		late_ns[k] = late;
		if (late > mx)
			mx = late;
	}
	double dev_s = ng_emu_run_dev(e, e->dev_s, e->ndev_s, e->cal_s, e->ncal_s, e->aim_s),
	       dev_r = ng_emu_run_dev(e, e->dev_r, e->ndev_r, e->cal_r, e->ncal_r, e->aim_r),
	       over = fmax(late_ns[NG_EMU_CAL / 2], fmax(fabs(dev_s), fabs(dev_r)));

	json_t *b = json_pack("{s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:f}", "overshoot_us", over * 1e-3,
	                      "overshoot_max_us", fmax(mx, over) * 1e-3, "early_us",
	                      (double)e->early_t * e->clk.ns_per_tick * 1e-3, "early_send_us",
	                      (double)e->early_s * e->clk.ns_per_tick * 1e-3, "early_recv_us",
	                      (double)e->early_r * e->clk.ns_per_tick * 1e-3, "spins", NG_EMU_CAL,
	                      "dev_send_us", dev_s * 1e-3, "dev_recv_us", dev_r * 1e-3);

	if (b && e->nadd)
		json_object_set_new(
		    b, "add_late_us",
		    json_real((double)e->add_late / (double)e->nadd * e->clk.ns_per_tick * 1e-3));
	return b;
}

static void ng_emu_close(struct ng_comm *c)
{
	struct ng_emu *e = ng_emu_of(c);

	if (e->bc)
		e->bc->ops->close(e->bc);
	free(e->rq);
	free(e);
}

/* The module's operations (below). */
static const struct ng_module_ops ng_emu_ops;

static ng_status ng_emu_open(const struct ng_module *m, const struct ng_module_env *env,
                             struct ng_comm **comm_p)
{
	struct ng_emu_config o;
	const char *bname;
	const unsigned pass =
	    NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_MULTIRANK | NG_CAP_REGMEM | NG_CAP_MPI;
	bool loud = env->boot->rank == 0; /* option errors: every rank finds them */
	struct ng_emu *e;
	ng_status st;

	ng_config_read(env->args, ng_emu_options, &o);
	bname = o.base;
	e = calloc(1, sizeof(*e));
	if (!e) {
		ng_error("emu: out of memory");
		return NG_ERR_NOMEM;
	}
	e->bm = bname ? ng_module_find(bname) : NULL;
	if (!e->bm || e->bm == m) {
		if (loud)
			ng_error("emu: --emu-base '%s' is %s", bname ? bname : "",
			         e->bm ? "emu itself" : "not a module of this build (see ngauge --list)");
		st = NG_ERR_USAGE;
		goto err_free;
	}
	if (!(e->bm->caps & NG_CAP_CHANNEL)) {
		if (loud)
			ng_error("emu: base module '%s' has no two-sided send/recv", e->bm->name);
		st = NG_ERR_USAGE;
		goto err_free;
	}
	st = ng_module_impl(e->bm, &e->bops);
	if (st != NG_OK)
		goto err_free;
	st = ng_emu_conf(e, &o, loud);
	if (st != NG_OK)
		goto err_free;
	e->rq = calloc((size_t)env->boot->size, sizeof(*e->rq));
	if (!e->rq) {
		ng_error("emu: out of memory");
		st = NG_ERR_NOMEM;
		goto err_free;
	}
	for (int i = 0; i < env->boot->size; i++)
		ng_queue_init(&e->rq[i]);
	/* The TSC where it is invariant: reading it touches no memory, where
	 * CLOCK_MONOTONIC_RAW's first read after a while can miss the cache
	 * (measured: +0.3 us on every emulated call). */
	st = ng_timer_init(&e->clk, ng_timer_tsc_invariant() ? "tsc" : "clock", NULL);
	if (st != NG_OK)
		goto err_free;
	{
		double tpn = 1.0 / e->clk.ns_per_tick; /* ticks per ns */

		e->os_t = (uint64_t)((double)e->os_ns * tpn + 0.5);
		e->drift_t = e->drift_ns * tpn;
		e->add_t = e->add_ns * tpn;
		e->addG_t = e->addG_ns * tpn;
		e->or_t = (uint64_t)((double)e->or_ns * tpn + 0.5);
		e->g_t = (uint64_t)((double)e->g_ns * tpn + 0.5);
		e->L_t = (uint64_t)((double)e->L_ns * tpn + 0.5);
		e->G_t = e->G_ns * tpn;
		e->G2_t = e->G2_ns * tpn;
		e->late_t = (uint64_t)((double)NG_EMU_LATE_NS * tpn + 0.5);
	}
	ng_emu_calibrate(e);
	st = ng_emu_hosts(e, env->boot);
	if (st != NG_OK)
		goto err_free;

	st = e->bops->open(e->bm, env, &e->bc);
	if (st != NG_OK) {
		e->bc = NULL;
		goto err_free;
	}
	if (e->bc->max_msg && e->bc->max_msg <= NG_EMU_TRAILER) {
		ng_error("emu: base module '%s' carries at most %zu bytes per message", e->bm->name,
		         e->bc->max_msg);
		st = NG_ERR_UNSUPPORTED;
		goto err_close_base;
	}

	e->poll = (e->bc->caps & NG_CAP_NONBLOCK) != 0;
	if (env->timeout_s > 0.0)
		e->timeout_t = (uint64_t)(env->timeout_s * 1e9 / e->clk.ns_per_tick);
	ng_comm_init(&e->base, m, &ng_emu_ops, e->bc->rank, e->bc->size, env->cancel);
	e->base.caps = (e->bc->caps & pass) | NG_CAP_NONBLOCK;
	e->base.spins = true; /* it busy-waits the injected costs */
	e->base.pins = e->bc->pins;
	e->base.max_msg = e->bc->max_msg ? e->bc->max_msg - NG_EMU_TRAILER : 0;
	if (e->max && (!e->base.max_msg || e->max < e->base.max_msg))
		e->base.max_msg = e->max;
	e->max = e->base.max_msg;
	st = ng_emu_path(e);
	if (st != NG_OK)
		goto err_close_base;
	snprintf(e->base.device, sizeof(e->base.device),
	         "emu over %.48s: o_s %.4g o_r %.4g g %.4g L %.4g us, G %.4g us/B%s", e->bc->device,
	         (double)e->os_ns / 1e3, (double)e->or_ns / 1e3, (double)e->g_ns / 1e3, (double)e->L_ns / 1e3,
	         e->G_ns / 1e3, e->threshold ? " (G2 above threshold)" : "");
	*comm_p = &e->base;
	return NG_OK;

err_close_base:
	e->bc->ops->close(e->bc);
	e->bc = NULL;
err_free:
	free(e->rq);
	free(e);
	return st;
}

static const struct ng_option *const ng_emu_option_tables[] = {ng_emu_options, NULL};

static const struct ng_msg_ops ng_emu_msg_ops = {
    .send = ng_emu_send,
    .recv = ng_emu_recv,
    .isend = ng_emu_isend,
    .irecv = ng_emu_irecv,
    .test = ng_emu_test,
    .wait = ng_emu_wait,
};

static const struct ng_module_ops ng_emu_ops = {
    .open = ng_emu_open,
    .close = ng_emu_close,
    .report = ng_emu_report,
    .alloc = ng_emu_alloc,
    .free = ng_emu_free,
    .msg = &ng_emu_msg_ops,
};

const struct ng_module ng_module_emu = {
    .name = "emu",
    .desc = "wraps another module and injects known LogGP costs o_s, o_r, g, G, L by busy-waiting",
    .options = ng_emu_option_tables,
    .wraps = "emu-base",
    .caps = NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK,
    .max_msg = 0,
    .hdr_bytes = NG_EMU_TRAILER,
    .bound_key = "overshoot_us",
    .bound_name = "emu_overshoot",
    .ops = &ng_emu_ops,
};
