/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The global clock as the patterns use it (doc/clock.md): rank 0's clock,
 * read through run->clock (core/clocksync.h) either as one counter the
 * ranks share or through the fitted model of every rank's clock.  One piece
 * of code for pingpong's --one-way timestamps and for the synchronised
 * starts of the patterns that measure concurrent traffic.
 *
 * Times on the global clock are microseconds on rank 0's clock, counted
 * from an origin every rank agrees on: rank 0's reading at the set-up on a
 * shared clock (on rank 0's calibration: two ranks' TSC calibrations
 * differ by parts per million, which over the ticks since boot would be
 * seconds), the model's epoch on a fitted one.
 *
 * Window starts (ng_gclock_begin): instead of a barrier before a
 * measurement, rank 0 sets a start time T on its clock a margin ahead of
 * its own reading and broadcasts it over the bootstrap; every rank converts
 * T into its own ticks (ng_gclock_local), sleeps (nanosleep) until
 * NG_GCLOCK_SPIN_US before T and spins on the timer for the rest (timer
 * reads only: no system call, no allocation in the spin), noting its
 * actual start (the first reading at or after T, or, "late", its arrival
 * or its wake-up when either came after T).  The sleep is for hosts with
 * fewer cores than ranks: ranks spinning through the whole margin kept the
 * broadcast from the ranks still waiting for it (4 ranks on 2 cores: every
 * window late with a margin of 0.6-10 ms; none late with the sleep); the
 * spin's 200 µs cover a sleep's usual wake-up latency.  A start can still
 * come late where the host does not run a rank at T: a wake-up slower
 * than the spin (an idle virtual CPU), two unpinned ranks woken onto one
 * core while the other idles (tens to hundreds of µs), a kernel thread
 * taking the core; the row says so (start_late) and --pin removes the
 * second.  After the measurement (ng_gclock_end, outside every
 * timed region) the starts are gathered on the global clock; the row says
 * how far apart they were (start_spread_us, max - min over all ranks),
 * whether any rank arrived after T (start_late) and how far the clock can
 * be trusted (start_bound_us, ng_gclock_bound_us).  A rank the pattern
 * marks idle for the measurement (g->idle) takes part in the broadcast but
 * neither spins nor counts.
 *
 * The margin: at the set-up rank 0 times a broadcast followed by a barrier
 * over the bootstrap (a round trip to every rank, at least the broadcast's
 * one-way time) and takes four times that, at least NG_GCLOCK_MARGIN_MIN_US.
 * Whenever T reached a rank after T, the next window's margin is doubled
 * (at most NG_GCLOCK_MARGIN_MAX_US), so a run adapts to a slow bootstrap or
 * a loaded host; it never shrinks within a run (a sleep that ends after T
 * marks the start late but leaves the margin: a longer margin is a longer
 * sleep).  Every rank keeps the same
 * margin (the late flags are gathered by all), though only rank 0's is used.
 *
 * What the spread covers: the starts are converted through the same clock
 * the start time was, so on a fitted model an error of the model moves a
 * rank's true start and its recorded start alike: the recorded spread does
 * not see it.  The true spread lies within start_spread_us plus
 * start_bound_us (the two largest offset bounds of the model, grown by
 * their drift bounds to the start; the timer's resolution on a shared
 * clock).
 *
 * Without a common clock (--sync off, or ranks on several hosts without a
 * model) ng_gclock_begin is the barrier it replaces and ng_gclock_end and
 * ng_gclock_row do nothing: --sync off leaves a pattern as it was.
 *
 * No mutable state outside the struct, which lives in the measurement
 * session (struct ng_session, session.h) or in a pattern's state block.
 */
#ifndef NG_PATTERNS_GCLOCK_H
#define NG_PATTERNS_GCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

#define NG_GCLOCK_MARGIN_MIN_US 100.0
#define NG_GCLOCK_MARGIN_MAX_US 1e6
#define NG_GCLOCK_SPIN_US       200.0

/* What ng_gclock_setup sets up (flags). */
enum {
	/* under --sync off, still use a clock the ranks share (a bootstrap
	 * allgather asks; pingpong --one-way).  Without it --sync off means no
	 * clock and no communication at all */
	NG_GCLOCK_OFF_SHARED = 1u << 0,
	/* window starts: allocates the gathering area and measures the margin */
	NG_GCLOCK_WINDOWS = 1u << 1,
};

struct ng_gclock {
	const struct ng_run *run;
	int me, nranks;
	bool on;         /* the ranks have a common clock */
	bool model;      /* ... through the fitted model (else one shared counter) */
	bool windows;    /* NG_GCLOCK_WINDOWS and a common clock: ng_gclock_begin starts windows */
	const char *why; /* without a common clock: why not (NULL when unknown) */
	uint64_t
	    base;   /* shared: rank 0's reading the times count from; model: this rank's reading at set-up */
	double ns0; /* shared: rank 0's ns per tick */
	/* window starts */
	bool idle;         /* set by the pattern: this rank takes no part in the next measurement
	                    * (mpbibw's ranks outside the pairs): it does not spin, its start is not counted */
	double margin_us;  /* how far ahead rank 0 sets the next start */
	double target_us;  /* the last start T on the global clock */
	uint64_t start;    /* this rank's actual start, ticks of ng_timer_now */
	bool late;         /* this rank started after T (arrived or woke after it) */
	bool late_arrival; /* ... because T reached it after T */
	bool started;      /* a window began and was not yet ended */
	bool have;         /* the last ng_gclock_end followed a window: the figures below are its */
	double spread_us;  /* the last window's spread, after ng_gclock_end */
	bool any_late;     /* the last window had a late rank */
	double bound_us;   /* the clock's bound at the last window */
	double *all;       /* [3 * nranks] gathered starts, late and idle flags (owned) */
};

/*
 * Decides which clock the ranks share and the origin of the times: a fitted
 * model when run->clock has one, else a shared counter when run->clock says
 * so (or, with NG_GCLOCK_OFF_SHARED under --sync off, when the ranks share
 * one), else none (g->on false, g->why says why).  With NG_GCLOCK_WINDOWS
 * and a clock, allocates the gathering area and measures the first margin.
 * Collective (bootstrap only) unless the clock is off without
 * NG_GCLOCK_OFF_SHARED.  NG_OK, or the bootstrap's status or NG_ERR_NOMEM
 * (reported).  Free with ng_gclock_free.
 */
ng_status ng_gclock_setup(struct ng_gclock *g, const struct ng_run *run, unsigned flags);

/* Frees what ng_gclock_setup allocated; safe on a zeroed struct. */
void ng_gclock_free(struct ng_gclock *g);

/* This rank's reading @raw (ticks of ng_timer_now) on the global clock, µs
 * after the origin; g->on must hold.  Pure arithmetic: for after a timed
 * loop (it is cheap, but not one subtraction). */
double ng_gclock_us(const struct ng_gclock *g, uint64_t raw);

/* Readings kept as ticks after @base (signed, as doubles: a sampler's
 * stream), @x[0..n), put on the global clock in place, each as
 * ng_gclock_us(base + x).  After the timed loop. */
void ng_gclock_us_all(const struct ng_gclock *g, uint64_t base, double *x, size_t n);

/* The inverse: the reading of this rank's ng_timer_now at @t_us on the
 * global clock (the test-only skew undone).  g->on must hold. */
uint64_t ng_gclock_local(const struct ng_gclock *g, double t_us);

/* The bound of the offset between any two ranks' clocks at @t_us on the
 * global clock: on a fitted model the sum of the two largest offset
 * bounds, each grown by its drift bound since the epoch
 * (ng_clock_pair_bound_us); on a shared clock the timer's resolution.  µs. */
double ng_gclock_bound_us(const struct ng_gclock *g, double t_us);

/*
 * Before a measurement, in place of a barrier: with windows, rank 0 sets
 * the start T a margin ahead and broadcasts it, every rank spins until T on
 * its own clock and notes its actual start; without, ng_boot_barrier.
 * Collective, blocking; returns the bootstrap's status.  Every rank must
 * have done what must precede everyone's first send before the call, as
 * before a barrier: a rank that arrives late may find messages waiting.
 */
ng_status ng_gclock_begin(struct ng_gclock *g);

/*
 * After the measurement (outside its timed region): gathers the ranks'
 * starts and late flags to every rank (bootstrap allgather) and sets
 * g->spread_us, g->any_late and g->bound_us; doubles the margin after a
 * window that T reached a rank too late for.  Collective; nothing (NG_OK) without windows.
 */
ng_status ng_gclock_end(struct ng_gclock *g);

/* Adds the last window's start_spread_us, start_late and start_bound_us to
 * @row (the reporting rank); nothing without windows, or when the
 * measurement began without one (ng_gclock_end found no window begun). */
void ng_gclock_row(const struct ng_gclock *g, struct ng_row *row);

#endif
