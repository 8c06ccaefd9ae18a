/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emu module's private parts, shared by emu.c (the data path, open and
 * the report) and emu_conf.c (its options and their checks): the instance,
 * the per-request state and the options as read.  Nothing outside
 * modules/emu includes it.
 */
#ifndef NG_EMU_INT_H
#define NG_EMU_INT_H

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "options.h"
#include "queue.h"
#include "status.h"
#include "timers/timer.h"

#define NG_EMU_TRAILER 8u   /* bytes: the injection time, timer ticks, host order */
#define NG_EMU_CAL     63   /* spins timed by the calibration at open */
#define NG_EMU_PATH_US 20.0 /* us: the injected cost of ng_emu_path's calls */
#define NG_EMU_LATE_NS 250  /* a spin that ends later than this past its target was disturbed */

/* Where a receive request is (test() moves it on without blocking). */
enum ng_emu_rstate {
	NG_EMU_QUEUED,  /* in its peer's queue, nothing asked of the base yet */
	NG_EMU_POSTED,  /* the base's receive for it is in ng_emu.breq */
	NG_EMU_ARRIVED, /* the base delivered it; it completes at t_done */
};

/* Per-request state kept in struct ng_req.priv. */
struct ng_emu_req {
	struct ng_qlink link; /* in its peer's receive queue */
	void *buf;
	size_t len;
	uint64_t t_done; /* NG_EMU_ARRIVED: end of its receive processing (ticks) */
	int peer;
	bool is_recv;
	bool done;
	unsigned char state;                /* enum ng_emu_rstate */
	unsigned char save[NG_EMU_TRAILER]; /* NG_EMU_POSTED: the bytes the trailer lands on */
	ng_status status;
};

static_assert(sizeof(struct ng_emu_req) <= sizeof(((struct ng_req *)0)->priv),
              "struct ng_emu_req does not fit in struct ng_req.priv");
static_assert(alignof(struct ng_emu_req) <= alignof(struct ng_req),
              "struct ng_emu_req needs more alignment than struct ng_req");

struct ng_emu {
	struct ng_comm base;               /* first: container_of */
	const struct ng_module *bm;        /* the wrapped module */
	const struct ng_module_ops *bops;  /* its operations (ng_module_impl) */
	struct ng_comm *bc;                /* its instance */
	struct ng_timer clk;               /* invariant TSC, else CLOCK_MONOTONIC_RAW */
	uint64_t os_ns, or_ns, g_ns, L_ns; /* as given */
	double G_ns, G2_ns;                /* per byte, as given */
	uint64_t os_t, or_t, g_t, L_t;     /* the same in timer ticks */
	double G_t, G2_t;
	double drift_ns, drift_t;              /* --emu-os-drift: o_s grows by this per send */
	double add_ns, addG_ns, add_t, addG_t; /* --emu-add, --emu-add-G: ns, ns per byte; in ticks */
	double drift_acc;                      /* ticks o_s has grown by so far */
	uint64_t add_late, nadd; /* undisturbed --emu-add spins: ticks past their aim, summed; how many */
	size_t threshold;        /* G2 above this size; 0: never */
	bool deadline;           /* deliver at t_inj + L + w (one host) */
	uint64_t corrupt_every;  /* 0: never */
	size_t max;              /* --emu-max: largest message sent; 0: the base's */
	uint64_t nrecv, ncorrupt;
	uint64_t next_inj;       /* earliest injection of the next send */
	uint64_t early_t;        /* inline spins (calibration, report) stop this much early */
	uint64_t early_s;        /* send spins stop this much early (the real path's lateness) */
	uint64_t early_r;        /* receive spins likewise */
	uint64_t late_t;         /* a spin ending later than this past its target was disturbed */
	uint64_t debt_s, debt_r; /* what disturbed send / receive spins owe (ticks) */
	/* How long the calls' spins really took past what they aimed at (ticks,
	 * signed): at the calibration (each call kept, their median the
	 * reference) and over the run (summed); report()'s "dev_*" (doc/emu.md). */
	bool cal;
	uint64_t cal_s[NG_EMU_CAL], cal_r[NG_EMU_CAL]; /* the calibration's spins, from t_in */
	uint64_t aim_s, aim_r;                         /* and what they aimed at */
	size_t ncal_s, ncal_r;
	int64_t dev_s, dev_r;
	uint64_t ndev_s, ndev_r;
	struct ng_queue *rq;     /* [size] queued irecvs per peer */
	bool poll;               /* the base is non-blocking: poll it */
	uint64_t timeout_t;      /* give up polling after this long; 0: never */
	struct ng_req breq;      /* the base's receive being polled */
	struct ng_emu_req *bcur; /* the request whose base receive test() left in breq; NULL: none */
	uint64_t rdone;          /* end of the latest receive's processing (ticks): the next starts after */
};

/* The module's options (ng_emu_options), as ng_config_read gives them. */
struct ng_emu_config {
	const char *base;     /* --emu-base: the module it wraps */
	double os, or_, g, L; /* --emu-os, --emu-or, --emu-g, --emu-L: microseconds */
	double G, G2;         /* --emu-G, --emu-G2: microseconds per byte */
	bool G2_given;        /* --emu-G2 given (else G2 is G) */
	size_t threshold;     /* --emu-threshold */
	long long corrupt;    /* --emu-corrupt */
	double os_drift;      /* --emu-os-drift: microseconds per send */
	double add, addG;     /* --emu-add (us), --emu-add-G (us per byte) */
	size_t max;           /* --emu-max */
};

/* The options' table, for ng_config_read and --help (emu_conf.c). */
extern const struct ng_option ng_emu_options[];

/* Checks the options @o and takes them into @e (as given and in ns; the
 * ticks are derived at open).  NG_ERR_USAGE, reported by rank 0 only when
 * @loud (every rank reads the same options), on a bad one. */
ng_status ng_emu_conf(struct ng_emu *e, const struct ng_emu_config *o, bool loud);

/* Decides whether the delivery deadline can be used (e->deadline): only
 * when every rank is on this host; NG_ERR_USAGE (said by rank 0) for
 * --emu-L or --emu-G across hosts.  Collective. */
ng_status ng_emu_hosts(struct ng_emu *e, struct ng_boot *b);

#endif
