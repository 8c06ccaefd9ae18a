/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emu module's options and their checks (the module: emu.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "emu_int.h"
#include "status.h"

/* clang-format off */
const struct ng_option ng_emu_options[] = {
	{ .name = "emu-base", NG_STRING_AT(struct ng_emu_config, base), .def = "tcp", .metavar = "MODULE",
	  .help = "module to wrap" },
	{ .name = "emu-os", NG_DOUBLE_AT(struct ng_emu_config, os), .def = "0", .metavar = "US",
	  .help = "send overhead: a send call takes at least this long" },
	{ .name = "emu-or", NG_DOUBLE_AT(struct ng_emu_config, or_), .def = "0", .metavar = "US",
	  .help = "receive overhead: at least this long after delivery in every receive" },
	{ .name = "emu-g", NG_DOUBLE_AT(struct ng_emu_config, g), .def = "0", .metavar = "US",
	  .help = "gap: consecutive sends of a rank are injected at least g + (s-1)G apart" },
	{ .name = "emu-L", NG_DOUBLE_AT(struct ng_emu_config, L), .def = "0", .metavar = "US",
	  .help = "latency: delivery at injection + L + (s-1)G (ranks on one host)" },
	{ .name = "emu-G", NG_DOUBLE_AT(struct ng_emu_config, G), .def = "0", .metavar = "US_PER_BYTE",
	  .help = "gap per byte" },
	{ .name = "emu-G2", NG_DOUBLE_AT(struct ng_emu_config, G2), .metavar = "US_PER_BYTE",
	  NG_GIVEN_AT(struct ng_emu_config, G2_given),
	  .help = "gap per byte for messages above --emu-threshold (a protocol change)" },
	{ .name = "emu-threshold", NG_SIZE_AT(struct ng_emu_config, threshold), .def = "0",
	  .metavar = "BYTES",
	  .help = "size above which --emu-G2 applies" },
	{ .name = "emu-corrupt", NG_INT_AT(struct ng_emu_config, corrupt), .def = "0", .metavar = "N",
	  .help = "flip one byte of every N-th received message (tests --verify); 0: never" },
	{ .name = "emu-os-drift", NG_DOUBLE_AT(struct ng_emu_config, os_drift), .def = "0", .metavar = "US",
	  .help = "o_s grows by this much with every send: a planted drift, for tests of the stationarity check" },
	{ .name = "emu-add", NG_DOUBLE_AT(struct ng_emu_config, add), .def = "0", .metavar = "US",
	  .help = "every send spins this long more after the rest: a cost added to the base's, not a floor" },
	{ .name = "emu-add-G", NG_DOUBLE_AT(struct ng_emu_config, addG), .def = "0", .metavar = "US_PER_BYTE",
	  .help = "every send spins this long more per byte, with --emu-add (a slowdown at every size)" },
	{ .name = "emu-max", NG_SIZE_AT(struct ng_emu_config, max), .def = "0", .metavar = "BYTES",
	  .help = "largest message of the emulated network, as a datagram network's MTU (0: the base's)" },
	{ .name = NULL },
};
/* clang-format on */

/* Microseconds (option --@name, value @v) to nanoseconds; -1 for a bad
 * value (reported by rank 0 only when @loud: every rank reads the same
 * options). */
static int64_t ng_emu_us_opt(double v, const char *name, bool loud)
{
	if (!(v >= 0.0) || v > 1e9) {
		if (loud)
			ng_error("emu: --%s must be between 0 and 1e9 microseconds, got %g", name, v);
		return -1;
	}
	return (int64_t)(v * 1e3 + 0.5);
}

static double ng_emu_per_byte_opt(double v, const char *name, bool loud)
{
	if (!(v >= 0.0) || v > 1e6) {
		if (loud)
			ng_error("emu: --%s must be between 0 and 1e6 microseconds per byte, got %g", name,
			         v);
		return -1.0;
	}
	return v * 1e3;
}

/* Checks the options @o and takes them into @e.  NG_ERR_USAGE (reported)
 * on a bad one. */
ng_status ng_emu_conf(struct ng_emu *e, const struct ng_emu_config *o, bool loud)
{
	int64_t os = ng_emu_us_opt(o->os, "emu-os", loud), orr = ng_emu_us_opt(o->or_, "emu-or", loud);
	int64_t g = ng_emu_us_opt(o->g, "emu-g", loud), L = ng_emu_us_opt(o->L, "emu-L", loud);
	long long corrupt = o->corrupt;

	if (os < 0 || orr < 0 || g < 0 || L < 0)
		return NG_ERR_USAGE;
	e->os_ns = (uint64_t)os;
	e->or_ns = (uint64_t)orr;
	e->g_ns = (uint64_t)g;
	e->L_ns = (uint64_t)L;
	e->G_ns = ng_emu_per_byte_opt(o->G, "emu-G", loud);
	if (e->G_ns < 0.0)
		return NG_ERR_USAGE;
	e->threshold = o->threshold;
	if (o->G2_given) {
		e->G2_ns = ng_emu_per_byte_opt(o->G2, "emu-G2", loud);
		if (e->G2_ns < 0.0)
			return NG_ERR_USAGE;
		if (!e->threshold) {
			if (loud)
				ng_error("emu: --emu-G2 needs --emu-threshold BYTES (the size above which it "
				         "applies)");
			return NG_ERR_USAGE;
		}
	} else {
		e->G2_ns = e->G_ns;
	}
	if (corrupt < 0) {
		if (loud)
			ng_error("emu: --emu-corrupt must not be negative, got %lld", corrupt);
		return NG_ERR_USAGE;
	}
	e->corrupt_every = (uint64_t)corrupt;
	e->max = o->max;
	e->add_ns = o->add * 1e3;
	e->addG_ns = ng_emu_per_byte_opt(o->addG, "emu-add-G", loud);
	if (ng_emu_us_opt(o->add, "emu-add", loud) < 0 || e->addG_ns < 0.0)
		return NG_ERR_USAGE;
	e->drift_ns = o->os_drift * 1e3;
	if (!(e->drift_ns >= 0.0 && e->drift_ns <= 1e6)) {
		if (loud)
			ng_error("emu: --emu-os-drift must be 0 to 1000 us per send, got %g", o->os_drift);
		return NG_ERR_USAGE;
	}
	return NG_OK;
}

/* Decides whether the delivery deadline can be used: only when every rank is
 * on this host.  Collective. */
ng_status ng_emu_hosts(struct ng_emu *e, struct ng_boot *b)
{
	size_t hl = sizeof(b->host);
	char *all = calloc((size_t)b->size, hl);
	ng_status st;
	int other = -1;

	if (!all) {
		ng_error("emu: out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_boot_allgather(b, b->host, hl, all);
	if (st != NG_OK)
		goto out_free;
	for (int i = 0; i < b->size && other < 0; i++) {
		if (strncmp(all + (size_t)i * hl, b->host, hl) != 0)
			other = i;
	}
	e->deadline = other < 0;
	if (other >= 0 && (e->L_ns || e->G_ns > 0.0 || e->G2_ns > 0.0)) {
		/* Every rank sees the same list: rank 0 reports for all. */
		if (b->rank == 0)
			ng_error(
			    "emu: --emu-L and --emu-G need all ranks on one host (the receiver compares the "
			    "sender's CLOCK_MONOTONIC_RAW); rank %d is on %.*s, rank 0 on %.*s",
			    other, (int)hl, all + (size_t)other * hl, (int)hl, all);
		st = NG_ERR_USAGE;
	}
out_free:
	free(all);
	return st;
}
