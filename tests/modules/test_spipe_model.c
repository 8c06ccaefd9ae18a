/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The superpipeline's model and chunk schedules (modules/spipe/spipe_model.h)
 * against answers worked out by hand from the paper's equations.
 */
#include <math.h>
#include <stdio.h>

#include "modules/spipe/spipe_model.h"

#include "../check.h"

#define NEAR(a, b, tol) (fabs((double)(a) - (double)(b)) <= (tol)*fabs((double)(b)))

/* A machine like the paper's graphene cluster: lambda_net 2 us, B_net 1500
 * MB/s, g 0.5 us, B_copy 6000 MB/s flat, registration 68 us + 200 ns/page. */
static struct ng_spipe_model graphene(void)
{
	struct ng_spipe_model m = {
	    .lambda_reg_us = 68.0,
	    .reg_us_per_byte = 0.2 / 4096,
	    .lambda_dereg_us = 10.0,
	    .dereg_us_per_byte = 0.0,
	    .lambda_net_us = 2.0,
	    .net_us_per_byte = 1.0 / 1500.0,
	    .g_us = 0.5,
	    .ncopy = 2,
	    .copy_size = {4096, 1 << 24},
	    .copy_MBps = {6000, 6000},
	};
	return m;
}

static void t_bcopy(void)
{
	struct ng_spipe_model m = {
	    .ncopy = 3, .copy_size = {1000, 10000, 100000}, .copy_MBps = {100, 1000, 10}};

	CHECK(ng_spipe_bcopy(&m, 10) == 100, "below the table: its first value");
	CHECK(ng_spipe_bcopy(&m, 1000000) == 10, "above the table: its last value");
	CHECK(NEAR(ng_spipe_bcopy(&m, 10000), 1000, 1e-12), "at a point: %g", ng_spipe_bcopy(&m, 10000));
	/* log-log: halfway in log size is the geometric mean */
	CHECK(NEAR(ng_spipe_bcopy(&m, 3162), sqrt(100.0 * 1000.0), 1e-3), "between: %g",
	      ng_spipe_bcopy(&m, 3162));
}

/* Sum, multiples of the unit, the cap, growth by q. */
static void t_super_plan(void)
{
	struct ng_spipe_model m = graphene();
	struct ng_spipe_proto p = {
	    .mode = NG_SPIPE_SUPER, .nbuf = 3, .slot = 1 << 20, .block = 4096, .c0 = 12288, .q = 1.5};
	size_t lens[] = {8193, 16352, 16353, 100003, (size_t)16 << 20, ((size_t)16 << 20) - 1};

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct ng_spipe_plan pl;
		size_t sum = 0, c, prev = 0, n = 0, unit = 4088, cmax = (1 << 20) / 4096 * 4088;

		ng_spipe_plan_init(&pl, &m, &p, lens[k]);
		while ((c = ng_spipe_plan_next(&pl)) != 0) {
			sum += c;
			n++;
			CHECK(c <= cmax, "chunk %zu above the buffer", c);
			if (sum < lens[k])
				CHECK(c % unit == 0, "chunk %zu of %zu not whole sub-blocks", c, lens[k]);
			if (prev && sum < lens[k] && prev < cmax)
				CHECK(c >= prev && c <= (size_t)(1.5 * (double)prev) + unit,
				      "growth %zu -> %zu", prev, c);
			prev = c;
		}
		CHECK(sum == lens[k], "chunks sum to %zu, not %zu", sum, lens[k]);
		/* C0 = 12288 rounded up to whole sub-blocks: 4 x 4088 = 16352 */
		if (lens[k] == 16352 || lens[k] == 16353)
			CHECK(n == lens[k] - 16351, "%zu B: %zu chunks", lens[k], n);
	}
	/* eq. 7 without the cap: n = log_q(1 + L/C0 (q - 1)), within rounding */
	p.slot = (size_t)1 << 30;
	p.c0 = 4088 * 3;
	{
		size_t L = (size_t)8 << 20;
		struct ng_spipe_shape s;
		double n7 = log(1.0 + (double)L / (double)p.c0 * 0.5) / log(1.5);

		ng_spipe_plan_shape(&m, &p, L, &s);
		CHECK(fabs((double)s.n - n7) <= 1.0, "chunks %zu, eq. 7 says %.2f", s.n, n7);
		CHECK(s.c0 == 12264 && s.q == 1.5, "first chunk %zu, q %g", s.c0, s.q);
	}
}

/* The model's own C0 and q: C0 = B_copy 2 lambda_net, q = B_copy / B_net. */
static void t_defaults(void)
{
	struct ng_spipe_model m = graphene();
	struct ng_spipe_proto p = {.mode = NG_SPIPE_SUPER, .nbuf = 3, .slot = (size_t)1 << 30, .block = 4096};
	struct ng_spipe_shape s;

	ng_spipe_plan_shape(&m, &p, (size_t)4 << 20, &s);
	/* 6000 B/us x 4 us = 24000 B, rounded up to whole payloads: 6 x 4088 */
	CHECK(s.c0 == 6 * 4088, "C0 %zu", s.c0);
	CHECK(NEAR(s.q, 4.0, 1e-12), "q %g (6000 / 1500)", s.q);
	/* a copy barely faster than the network (or slower) still grows chunks by 1.5 */
	m.copy_MBps[0] = m.copy_MBps[1] = 1000;
	ng_spipe_plan_shape(&m, &p, (size_t)4 << 20, &s);
	CHECK(s.q == 1.5 && s.largest > s.c0, "q %g, largest %zu, first %zu", s.q, s.largest, s.c0);
	/* --spipe-q is taken as given */
	p.q = 1.0;
	ng_spipe_plan_shape(&m, &p, (size_t)4 << 20, &s);
	CHECK(s.q == 1.0 && s.largest == s.c0, "q %g, largest %zu, first %zu", s.q, s.largest, s.c0);
}

/* eq. 3 and eq. 1 by hand. */
static void t_pipeline(void)
{
	struct ng_spipe_model m = graphene();
	struct ng_spipe_proto p = {
	    .mode = NG_SPIPE_PIPELINE, .nbuf = 3, .slot = (size_t)1 << 30, .block = 4096};
	size_t L = (size_t)1 << 20;
	double copt = sqrt((double)L * 0.5 * 6000.0 / 2.0); /* 28049 B */
	struct ng_spipe_shape s;
	struct ng_spipe_pred pr;
	size_t c = ((size_t)ceil(copt / 8.0)) * 8, n = (L + c - 1) / c;

	ng_spipe_plan_shape(&m, &p, L, &s);
	CHECK(s.c0 == c && s.n == n, "C %zu n %zu, expected %zu and %zu", s.c0, s.n, c, n);
	ng_spipe_predict(&m, &p, L, false, &pr);
	{
		double eq1 = 2.0 * (double)c / 6000.0 + (double)n * 0.5 + 2.0 + (double)L / 1500.0;

		CHECK(NEAR(pr.mode[NG_SPIPE_PIPELINE], eq1, 1e-12), "eq. 1: %g, expected %g",
		      pr.mode[NG_SPIPE_PIPELINE], eq1);
	}
	/* a gap of 0 would give chunks of 8 bytes: a sub-block at least */
	m.g_us = 0;
	ng_spipe_plan_shape(&m, &p, L, &s);
	CHECK(s.c0 == 4096 && s.n == L / 4096, "g = 0: chunk %zu, %zu chunks", s.c0, s.n);
	m.g_us = 0.5;
	/* a buffer smaller than C_opt caps the chunk */
	p.slot = 8192;
	ng_spipe_plan_shape(&m, &p, L, &s);
	CHECK(s.largest == 8192 - 16, "capped chunk %zu", s.largest);
}

/* reg, rcache, copy and super by hand. */
static void t_predict(void)
{
	struct ng_spipe_model m = graphene();
	struct ng_spipe_proto p = {.mode = NG_SPIPE_SUPER,
	                           .nbuf = 3,
	                           .slot = (size_t)1 << 20,
	                           .block = 4096,
	                           .subblocks = true,
	                           .c0 = 12264,
	                           .q = 1.5};
	size_t L = 65536 * 4;
	double net = 2.0 + (double)L / 1500.0, reg = 68.0 + (double)L * 0.2 / 4096 + 10.0;
	struct ng_spipe_pred pr, fresh;
	struct ng_spipe_shape s;

	ng_spipe_predict(&m, &p, L, false, &pr);
	ng_spipe_predict(&m, &p, L, true, &fresh);
	ng_spipe_plan_shape(&m, &p, L, &s);
	CHECK(NEAR(pr.mode[NG_SPIPE_REG], reg + net, 1e-12), "reg %g", pr.mode[NG_SPIPE_REG]);
	CHECK(NEAR(pr.mode[NG_SPIPE_RCACHE], net, 1e-12), "rcache hit %g", pr.mode[NG_SPIPE_RCACHE]);
	CHECK(NEAR(fresh.mode[NG_SPIPE_RCACHE], reg + net, 1e-12), "rcache miss %g",
	      fresh.mode[NG_SPIPE_RCACHE]);
	CHECK(NEAR(pr.mode[NG_SPIPE_COPY], 2.0 * (double)L / 6000.0 + net, 1e-12), "copy %g",
	      pr.mode[NG_SPIPE_COPY]);
	CHECK(NEAR(pr.super_eq9, 4096.0 / 6000.0 + (double)s.n * 0.5 + net, 1e-12), "eq. 9 %g", pr.super_eq9);
	CHECK(NEAR(pr.super_eq8, (double)(s.c0 + s.largest) / 6000.0 + (double)s.n * 0.5 + net, 1e-12),
	      "eq. 8 %g", pr.super_eq8);
	CHECK(NEAR(pr.mode[NG_SPIPE_SUPER], pr.super_eq9 + 12264.0 / 6000.0, 1e-12), "super %g",
	      pr.mode[NG_SPIPE_SUPER]);
	/* without sub-blocks the receiver copies whole chunks: eq. 8 */
	p.subblocks = false;
	{
		struct ng_spipe_pred nb;

		ng_spipe_predict(&m, &p, L, false, &nb);
		CHECK(NEAR(nb.mode[NG_SPIPE_SUPER], pr.super_eq8, 1e-12), "super without sub-blocks %g",
		      nb.mode[NG_SPIPE_SUPER]);
	}
	p.subblocks = true;
	/* the paper's point: with B_copy > B_net the superpipeline is far closer to the network than copy */
	CHECK(pr.mode[NG_SPIPE_SUPER] < pr.mode[NG_SPIPE_COPY] &&
	          pr.mode[NG_SPIPE_SUPER] < pr.mode[NG_SPIPE_REG],
	      "super %g, copy %g, reg %g", pr.mode[NG_SPIPE_SUPER], pr.mode[NG_SPIPE_COPY],
	      pr.mode[NG_SPIPE_REG]);
	CHECK(ng_spipe_wire(4088 * 2 + 1, 4088) == 2 * 4096 + 16, "wire bytes %zu",
	      ng_spipe_wire(4088 * 2 + 1, 4088));
}

int main(void)
{
	t_bcopy();
	t_super_plan();
	t_defaults();
	t_pipeline();
	t_predict();
	return check_exit();
}
