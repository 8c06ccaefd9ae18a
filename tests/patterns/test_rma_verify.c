/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rma pattern's --verify catches a module that moves the wrong data.
 *
 * Two local ranks run the pattern (patterns/rma.c) over the rma module on
 * the shm backend, seen through a one-sided table that breaks one thing at
 * a time: a put dropped, a put that writes one byte wrong, a get that reads
 * 64 bytes off, an accumulate applied as a put (replace, not sum), a put
 * inside a passive-target epoch dropped, a put that lands 64 bytes from its
 * place; each with a test it breaks (put-pingpong, bidir, put-bw, get-bw,
 * get-pingpong, acc-pingpong, lock, sched-1, sched-2; multi-origin needs a
 * third rank and checks puts the way put-bw does).  Each must end the run
 * with NG_ERR_VERIFY on every rank (the ranks
 * agree, so none is left waiting); the same runs through the faithful table
 * pass, with every epoch counted.  Before that, the content functions
 * (patterns/engine/rma_check.h) on data with a known answer.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/args.h"
#include "core/bootstrap.h"
#include "core/launch.h"
#include "core/module.h"
#include "core/pattern.h"
#include "patterns/engine/rma_check.h"
#include "timers/timer.h"

#include "../check.h"

extern const struct ng_module ng_module_rma;
extern const struct ng_pattern ng_pattern_rma;

enum fault { F_NONE, F_DROP_PUT, F_BAD_BYTE, F_GET_OFF, F_ACC_AS_PUT, F_DROP_LOCKED_PUT, F_WRONG_SLOT, F_N };

static const char *const fault_names[F_N] = {"none",
                                             "a put dropped",
                                             "a byte wrong",
                                             "a get 64 bytes off",
                                             "accumulate as put",
                                             "a put under lock dropped",
                                             "a put 64 bytes off"};

/* The runs: a fault and the test it is run with (sizes 24, 4 KiB, 70000). */
static const struct {
	enum fault f;
	const char *test;
} cases[] = {
    {F_NONE, "all"},
    {F_DROP_PUT, "put-pingpong"},
    {F_DROP_PUT, "bidir"},
    {F_BAD_BYTE, "put-bw"},
    {F_GET_OFF, "get-bw"},
    {F_GET_OFF, "get-pingpong"},
    {F_ACC_AS_PUT, "acc-pingpong"},
    {F_DROP_LOCKED_PUT, "lock"},
    {F_WRONG_SLOT, "sched-1"},
    {F_WRONG_SLOT, "sched-2"},
};

/* The faulty table's state (this is a test program: one instance). */
static enum fault mode;
static unsigned long nputs;
static bool locked;
static const struct ng_rma_ops *real;

static ng_status f_put(struct ng_comm *c, struct ng_win *w, int t, size_t off, const void *o, size_t len)
{
	unsigned long k = ++nputs;

	if (k == 7 && (mode == F_DROP_PUT || (mode == F_DROP_LOCKED_PUT && locked)))
		return NG_OK;
	if (k == 7 && mode == F_BAD_BYTE && len > 0) {
		unsigned char tmp[8192];
		size_t n = len < sizeof(tmp) ? len : sizeof(tmp);

		memcpy(tmp, o, n);
		tmp[n / 2] ^= 0x10;
		return real->put(c, w, t, off, tmp, n);
	}
	if (mode == F_WRONG_SLOT && k == 7)
		off = off >= 64 ? off - 64 : off + 64;
	return real->put(c, w, t, off, o, len);
}

static ng_status f_get(struct ng_comm *c, struct ng_win *w, int t, size_t off, void *o, size_t len)
{
	return real->get(c, w, t, off + (mode == F_GET_OFF ? 64 : 0), o, len);
}

static ng_status f_acc(struct ng_comm *c, struct ng_win *w, int t, size_t off, const void *o, size_t count,
                       enum ng_rma_type type, enum ng_rma_op op)
{
	return real->accumulate(c, w, t, off, o, count, type, mode == F_ACC_AS_PUT ? NG_RMA_REPLACE : op);
}

static ng_status f_lock(struct ng_comm *c, struct ng_win *w, int t, bool excl)
{
	locked = true;
	return real->lock(c, w, t, excl);
}

static ng_status f_unlock(struct ng_comm *c, struct ng_win *w, int t)
{
	locked = false;
	return real->unlock(c, w, t);
}

static ng_status f_win_allocate(struct ng_comm *c, size_t len, void **base_p, struct ng_win **win_p)
{
	return real->win_allocate(c, len, base_p, win_p);
}

static void f_win_free(struct ng_comm *c, struct ng_win *w)
{
	real->win_free(c, w);
}

static ng_status f_fence(struct ng_comm *c, struct ng_win *w)
{
	return real->fence(c, w);
}

static ng_status f_post(struct ng_comm *c, struct ng_win *w, const int *g, int n)
{
	return real->post(c, w, g, n);
}

static ng_status f_start(struct ng_comm *c, struct ng_win *w, const int *g, int n)
{
	return real->start(c, w, g, n);
}

static ng_status f_complete(struct ng_comm *c, struct ng_win *w)
{
	return real->complete(c, w);
}

static ng_status f_wait(struct ng_comm *c, struct ng_win *w)
{
	return real->wait(c, w);
}

static const struct ng_rma_ops faulty = {
    .win_allocate = f_win_allocate,
    .win_free = f_win_free,
    .put = f_put,
    .get = f_get,
    .accumulate = f_acc,
    .fence = f_fence,
    .post = f_post,
    .start = f_start,
    .complete = f_complete,
    .wait = f_wait,
    .lock = f_lock,
    .unlock = f_unlock,
};

/* The content functions on data with a known answer (one process). */
static void t_check(void)
{
	unsigned char a[100], b[100];
	size_t off = 0;
	unsigned char want = 0;
	uint64_t t1 = ng_rma_tag(0, 100, 1, 0, 5), t2 = ng_rma_tag(0, 100, 1, 0, 6);
	int64_t x, y, z;

	CHECK(t1 != t2 && t1 != ng_rma_tag(1, 100, 1, 0, 5) && t1 != ng_rma_tag(0, 100, 2, 0, 5) &&
	          t1 != ng_rma_tag(0, 100, 1, 1, 5) && t1 != ng_rma_tag(0, 99, 1, 0, 5),
	      "tags of different test, size, rank, slot or iteration differ");
	ng_rma_fill(a, sizeof(a), t1, false);
	CHECK(ng_rma_check(a, sizeof(a), t1, false, &off, &want), "a payload passes its own check");
	CHECK(!ng_rma_check(a, sizeof(a), t2, false, &off, &want), "the next iteration's tag fails");
	a[37] ^= 1;
	CHECK(!ng_rma_check(a, sizeof(a), t1, false, &off, &want) && off == 37 && want == (a[37] ^ 1),
	      "one bit flipped: offset 37 reported, got %zu", off);
	ng_rma_spoil(b, sizeof(b), t1, false);
	ng_rma_fill(a, sizeof(a), t1, false);
	for (size_t i = 0; i < sizeof(a); i++)
		CHECK(a[i] == (unsigned char)~b[i], "spoiled byte %zu is the complement", i);
	CHECK(!ng_rma_check(b, 1, t1, false, &off, &want) && off == 0, "a spoiled byte never passes");
	/* accumulate elements: 48 bits, sums exact */
	ng_rma_fill(a, 96, t1, true);
	ng_rma_fill(b, 96, t2, true);
	for (size_t k = 0; k < 12; k++) {
		memcpy(&x, a + 8 * k, 8);
		memcpy(&y, b + 8 * k, 8);
		CHECK(x >= 0 && x < (INT64_C(1) << 48) && y >= 0 && y < (INT64_C(1) << 48),
		      "element %zu in range", k);
		z = x + y;
		memcpy(a + 8 * k, &z, 8);
	}
	CHECK(ng_rma_check_sum(a, 96, t1, t2, &off, &want), "base + contribution passes");
	CHECK(!ng_rma_check_sum(b, 96, t1, t2, &off, &want), "the contribution alone (a put) fails");
	a[8 * 5 + 2] ^= 4;
	CHECK(!ng_rma_check_sum(a, 96, t1, t2, &off, &want) && off == 42, "a wrong element byte: offset %zu",
	      off);
}

int main(void)
{
	static const struct ng_option core_opts[] = {
	    {.name = "sizes", .type = NG_OPT_STRING, .def = "1-1M"},
	    {.name = NULL},
	};
	static const size_t sizes[] = {24, 4096, 70000};
	struct ng_args args = {0};
	struct ng_module_ops fmod;
	struct ng_timer tm;
	struct ng_boot *b;
	struct ng_comm *c;
	volatile sig_atomic_t cancel = 0;
	char err[200];
	ng_status st;
	int me;

	t_check();
	ng_args_declare(&args, core_opts, "");
	ng_module_declare(&args, &ng_module_rma);
	ng_args_declare(&args, ng_pattern_rma.options, "rma");
	ng_args_set(&args, ng_args_find(&args, "rdma-backend"), "shm", err, sizeof(err));
	ng_args_set(&args, ng_args_find(&args, "rdma-poll"), "yield", err, sizeof(err));
	ng_args_set(&args, ng_args_find(&args, "sizes"), "24,4K,70000", err, sizeof(err));
	ng_args_set(&args, ng_args_find(&args, "rma-sync"), "pscw,fence,lock", err, sizeof(err));
	if (ng_timer_init(&tm, "clock", NULL) != NG_OK)
		return 1;
	if (ng_boot_local(2, 5.0, &b) != NG_OK)
		return 1;
	me = b->rank;
	ng_log_set_rank(me);
	{
		struct ng_module_env env = {.boot = b, .args = &args, .cancel = &cancel, .timeout_s = 5};

		st = ng_module_rma.ops->open(&ng_module_rma, &env, &c);
	}
	if (st != NG_OK)
		return 77;
	/* the module seen through the faulty table */
	real = ng_rma(c);
	fmod = *c->ops;
	fmod.rma = &faulty;
	c->ops = &fmod;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum fault f = cases[i].f;
		struct ng_run run = {
		    .comm = c,
		    .boot = b,
		    .args = &args,
		    .timer = &tm,
		    .sizes = sizes,
		    .nsizes = 3,
		    .count = 12,
		    .warmup = 2,
		    .verify = true,
		    .seed = 1,
		    .timeout_s = 5,
		    .cancel = &cancel,
		};

		mode = f;
		nputs = 0;
		ng_args_set(&args, ng_args_find(&args, "rma-test"), cases[i].test, err, sizeof(err));
		st = ng_pattern_rma.run(&ng_pattern_rma, &run);
		if (f == F_NONE)
			CHECK(st == NG_OK, "rank %d: every test without a fault: %s", me, ng_status_name(st));
		else
			CHECK(st == NG_ERR_VERIFY, "rank %d: %s (%s): %s, expected a verification failure",
			      me, fault_names[f], cases[i].test, ng_status_name(st));
		if (me == 0)
			printf("%s (%s): %s\n", fault_names[f], cases[i].test, ng_status_name(st));
		if (ng_boot_barrier(b) != NG_OK)
			return 1;
	}
	c->ops = ng_module_rma.ops;
	c->ops->close(c);
	ng_args_release(&args);
	b->ops->fini(b);
	return check_exit();
}
