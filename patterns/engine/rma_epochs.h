/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The epoch machinery of the rma pattern (rma_epochs.c: the tests'
 * descriptors, the windows, the timed loops of each shape of test and their
 * --verify) as the driver (rma.c: options, the plan of measurements, the
 * report) sees it, and the run's state they share, struct rp, which the
 * driver sets up; the timed loops write their samples into its sampler.
 * Private to the two; the driver calls down, never the machinery up.
 */
#ifndef NG_PATTERNS_RMA_EPOCHS_H
#define NG_PATTERNS_RMA_EPOCHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gclock.h"
#include "sampler.h"

enum rp_test {
	RP_PUT_PP,
	RP_GET_PP,
	RP_ACC_PP,
	RP_BIDIR,
	RP_PUT_BW,
	RP_GET_BW,
	RP_SYNC,
	RP_MULTI,
	RP_SCHED1,
	RP_SCHED2,
	RP_LOCK,
	RP_NTESTS
};

enum rp_sync { RP_PSCW, RP_FENCE, RP_LOCK_EXCL, RP_LOCK_SHARED, RP_TWOSIDED, RP_NSYNCS };

#define RP_BIT(s) (1u << (s))

/* The modes' names, as rows and messages give them. */
extern const char *const ng_rp_sync_names[RP_NSYNCS];

/* How a test's epochs run. */
enum rp_shape {
	RP_ALTERNATE, /* 0 -> 1, then 1 -> 0, per iteration */
	RP_BOTH,      /* 0 <-> 1 in one epoch */
	RP_FAN,       /* origins -> targets: one to one, one to n, n to one */
};

struct rp_desc {
	const char *name;
	enum rp_shape shape;
	unsigned syncs;   /* choosable: RP_BIT(RP_PSCW | RP_FENCE | RP_LOCK_EXCL) */
	enum rp_sync def; /* --rma-sync auto */
	bool burst;       /* W operations per epoch, else one */
	bool put, get, acc;
	int min_ranks;
};

/* Every test, by enum rp_test. */
extern const struct rp_desc ng_rp_tests[RP_NTESTS];

/* The slot of a get area's content in its tag (puts use slot 0). */
#define RP_GET_SLOT 1000
/* The iteration number of contents that do not change between iterations. */
#define RP_FIXED UINT64_MAX
/* multi-origin's size without -s (the paper's 64 KiB). */
#define RP_MULTI_SIZE ((size_t)64 << 10)

/* The sampler's streams: the time of a sample, and when it began
 * (microseconds of the timer: how the lock modes' origins overlapped). */
enum { RP_S_TIME, RP_S_START, RP_NSTREAMS };

/* One measurement: one row. */
struct rp_meas {
	enum rp_test test;
	enum rp_sync sync;
	size_t size;
	bool fan_in; /* RP_FAN: origins 1..n into target 0, else origin 0 into targets 1..n */
	int n;       /* RP_FAN: origins (fan_in) or targets */
	int origins, targets;
	size_t nput, nget; /* operations per access epoch and target */
	size_t burst;      /* operations per access epoch */
	double bytes;      /* moved per timed unit */
	double epochs;     /* access epochs per timed unit */
	bool half;         /* RP_ALTERNATE: the sample is half an iteration */
	size_t pair;       /* timed units per sample: 2 where they alternate (rma.c), else 1 */
};

/* rma's options (patterns/rma.c's table). */
struct rp_config {
	const char *tests; /* --rma-test */
	const char *syncs; /* --rma-sync */
	long long burst;   /* --rma-burst */
	long long origins; /* --rma-origins */
};

struct rp {
	struct rp_config cfg; /* read by the session */
	struct ng_run *run;
	struct ng_comm *c;
	const struct ng_rma_ops *o;
	const struct ng_timer *tm;
	int me, P;
	size_t W; /* --rma-burst */
	int nmax; /* --rma-origins */
	bool twoside;
	bool one_host; /* every rank on one host: one clock */
	struct rp_meas *plan;
	size_t nplan;
	json_t *skipped; /* reporter: test -> why */
	/* the current test's window */
	struct ng_win *w;
	struct ng_win *meet; /* lock modes: the window the ranks meet in (fence) */
	unsigned char *base;
	size_t stride; /* between slots */
	size_t half;   /* bytes of one parity half of the put area */
	size_t get_off, src_off, dst_off;
	struct ng_bufs bufs; /* bidir two-sided */
	struct ng_req reqs[2];
	int *ogrp, *tgrp; /* [P] groups of the current measurement */
	/* the streams RP_S_TIME and RP_S_START, gathered and pooled over the
	 * origins in the lock modes */
	struct ng_sampler smp;
	struct ng_gclock gc;  /* the window starts of measurements with several origins or
	                       * targets, and the clock the ranks' times are compared on */
	uint64_t first, last; /* start of the first timed sample, end of the last (ticks) */
	uint64_t tbase;       /* rank 0's reading at set-up: rp_time_us without a global clock */
	double *med;          /* [nplan] reporter: the median of each measurement's main figure */
	/* --verify of the current measurement */
	bool bad;  /* this rank saw wrong content */
	bool told; /* ... and reported it */
	size_t checked;
};

/*
 * A reading of this rank's timer in microseconds that other ranks' readings
 * can be compared with: on the global clock where the ranks have one
 * (rp->gc.on: a counter they share, or the fitted model across hosts;
 * patterns/engine/gclock.h), else from rank 0's reading at set-up on this rank's
 * own calibration, which compares across ranks on one host only (--sync
 * off).  Counted from a common reading, the calibrations' difference (parts
 * per million) applies to the run's time, not to the ticks since boot (one
 * host, 18 hours up: two ranks' calibrations 0.008 ppm apart, 500 us over
 * the ticks since boot).  Pure arithmetic.
 */
static inline double rp_time_us(const struct rp *rp, uint64_t raw)
{
	if (rp->gc.on)
		return ng_gclock_us(&rp->gc, raw);
	return (double)(int64_t)(raw - rp->tbase) * rp->tm->ns_per_tick * 1e-3;
}

/* Whether rp_time_us compares across ranks: a global clock, or one host. */
static inline bool rp_one_clock(const struct rp *rp)
{
	return rp->gc.on || rp->one_host;
}

/* ---- the epoch machinery (rma_epochs.c) ---------------------------------- */

/* Collective: allocates the window for the measurements plan[first..last)
 * of one test (and the small window the lock modes meet in, and the
 * two-sided buffers of bidir); errors reported by the module. */
ng_status ng_rp_win_open(struct rp *rp, size_t first, size_t last);
/* Collective: frees them; safe when none is open. */
void ng_rp_win_close(struct rp *rp);

/* Before a measurement, outside every epoch, on this rank as a target: the
 * get area's content, the accumulate base, the put slots spoiled for the
 * first two iterations (--verify only). */
void ng_rp_verify_setup(struct rp *rp, const struct rp_meas *m);

/*
 * The measurement @m, collectively, by the shape of its test: the sampler
 * started for it, every iteration back to back; samples of the timing ranks
 * in the sampler (RP_S_TIME, RP_S_START), rp->first / rp->last, --verify
 * outcomes in rp->bad, rp->told, rp->checked.  Returns the first module
 * error.
 */
ng_status ng_rp_alternate(struct rp *rp, const struct rp_meas *m);
ng_status ng_rp_both(struct rp *rp, const struct rp_meas *m);
ng_status ng_rp_fan(struct rp *rp, const struct rp_meas *m);

#endif
