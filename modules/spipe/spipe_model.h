/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The superpipeline's performance model and chunk schedules (Denis,
 * "A High Performance Superpipeline Protocol for InfiniBand", Euro-Par
 * 2011, sections 2-4).  Pure code: no I/O, no state; the spipe module
 * measures the parameters at start-up and uses these functions both to
 * cut messages into chunks (sender and receiver compute the same schedule
 * from the same parameters) and to predict the time of each mode.
 *
 * Parameters (times in microseconds, sizes in bytes, bandwidths as bytes
 * per microsecond = MB/s):
 *   T_reg(L)   = lambda_reg + L / B_reg          registration (and T_dereg)
 *   T_copy(L)  = L / B_copy(L)                   memcpy, B_copy depends on L
 *   T_net(L)   = lambda_net + L / B_net          one RDMA write, registered
 *   g                                            gap between two writes
 *
 * Predicted one-way time of a message of L bytes (eager messages aside):
 *   reg       T_reg(L) + T_dereg(L) + T_net(L)            (register, write,
 *             deregister: the naive protocol of section 2)
 *   rcache    T_net(L) on a hit; a miss costs as reg (--spipe-fresh)
 *   copy      2 L / B_copy(L) + T_net(L)                  (section 2)
 *   pipeline  eq. 1: 2 C / B_copy(L) + n g + lambda_net + L / B_net, with
 *             C = C_opt(L) = sqrt(L g B_copy(L) / 2) (eq. 3), at least one
 *             sub-block and at most the buffer, and n the number of chunks
 *   super     eq. 8: (C_0 + C_last) / B_copy(L) + n g + lambda_net + L/B_net
 *             (geometric chunks C_i = C_0 q^i, eqs. 5-7, without the
 *             sub-blocks and the rendezvous overlap);
 *             eq. 9: b / B_copy(L) + n g + lambda_net + L / B_net (with both);
 *             predicted: eq. 9 + C_0 / B_copy(L).  Eq. 9 hides the copy of
 *             the first chunk behind the rendezvous round trip; the channel's
 *             rendezvous is driven by the receiver, whose CTS is already
 *             there when the receive was posted before the send (every
 *             ping-pong after the first), so nothing hides that copy.
 *             Without sub-blocks (a layer that would need an operation per
 *             block), the receiver copies a chunk once it is complete:
 *             predicted = eq. 8.
 *   eager     lambda_net + L / B_net + L / B_copy(L) (one write into the
 *             ring, copied out)
 * n counts the chunks the schedule really cuts (folded onto buffers of
 * @slot bytes, rounded to whole sub-blocks), not the real-valued eq. 7.
 */
#ifndef NG_SPIPE_MODEL_H
#define NG_SPIPE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#define NG_SPIPE_NCOPY 8   /* sizes of the B_copy(L) table */
#define NG_SPIPE_QMIN  1.5 /* the least growth of the model's q (the paper's hardwired q) */

enum ng_spipe_mode { NG_SPIPE_REG, NG_SPIPE_RCACHE, NG_SPIPE_COPY, NG_SPIPE_PIPELINE, NG_SPIPE_SUPER };

#define NG_SPIPE_NMODES 5

/* "reg", "rcache", "copy", "pipeline", "super". */
const char *ng_spipe_mode_name(enum ng_spipe_mode m);

/* Measured parameters (a per-byte cost of 0 is an unmeasurably fast one). */
struct ng_spipe_model {
	double lambda_reg_us, reg_us_per_byte;
	double lambda_dereg_us, dereg_us_per_byte;
	double lambda_net_us, net_us_per_byte;
	double g_us;
	size_t ncopy;                     /* entries of the B_copy(L) table */
	double copy_size[NG_SPIPE_NCOPY]; /* ascending */
	double copy_MBps[NG_SPIPE_NCOPY]; /* B_copy at that size */
};

/* B_copy(L) in bytes/us: log-log interpolation in the table, its end values
 * beyond it. */
double ng_spipe_bcopy(const struct ng_spipe_model *m, size_t len);
/* B_net in bytes/us (infinite when net_us_per_byte is 0). */
double ng_spipe_bnet(const struct ng_spipe_model *m);

/* How the protocol cuts messages. */
struct ng_spipe_proto {
	enum ng_spipe_mode mode;
	size_t nbuf;    /* buffers a message is folded onto */
	size_t slot;    /* bytes per buffer (pipeline, super) */
	size_t block;   /* sub-block bytes, payload + 8-byte flag (super) */
	bool subblocks; /* super: the layer writes a chunk of sub-blocks as one
	                 * operation (NG_RDMA_CAP_BLOCKS); else one flag a chunk */
	size_t c0;      /* first chunk (super); 0: B_copy(L) 2 lambda_net */
	double q;       /* growth (super); 0: B_copy(L) / B_net, at least NG_SPIPE_QMIN */
};

/* The chunk plan of one message: sizes C_i = min(cmax, unit-rounded c q^i),
 * the last one what is left. */
struct ng_spipe_plan {
	size_t len;  /* message bytes */
	size_t unit; /* chunk sizes are multiples of it (the block payload) */
	size_t cmax; /* largest chunk */
	double c;    /* the next chunk before rounding */
	double q;
	size_t done; /* bytes planned so far */
};

/* Payload bytes of one sub-block of @block bytes (its flag word aside). */
static inline size_t ng_spipe_payload(size_t block)
{
	return block - 8;
}

/* Bytes a chunk of @c payload bytes takes in a buffer, with pieces of
 * @piece payload bytes each followed by a flag (the last one padded to 8
 * bytes before its flag). */
static inline size_t ng_spipe_wire(size_t c, size_t piece)
{
	size_t full = c / piece, rem = c % piece;

	return full * (piece + 8) + (rem ? ((rem + 7) & ~(size_t)7) + 8 : 0);
}

/* The plan of a message of @len bytes (> 0) in @p's mode (copy, pipeline or
 * super; copy is one chunk). */
void ng_spipe_plan_init(struct ng_spipe_plan *pl, const struct ng_spipe_model *m,
                        const struct ng_spipe_proto *p, size_t len);
/* The size of the next chunk (0 when the message is complete). */
size_t ng_spipe_plan_next(struct ng_spipe_plan *pl);

/* The parameters a plan used: the first chunk (C_0 or C), q, the number of
 * chunks and the last chunk's size. */
struct ng_spipe_shape {
	size_t c0, n, last, largest;
	double q;
};
void ng_spipe_plan_shape(const struct ng_spipe_model *m, const struct ng_spipe_proto *p, size_t len,
                         struct ng_spipe_shape *s);

/* Predicted one-way times (us) of a message of @len bytes above the eager
 * size, per mode; @fresh: memory the protocol has never seen (rcache
 * misses). */
struct ng_spipe_pred {
	double mode[NG_SPIPE_NMODES]; /* by enum ng_spipe_mode; super: the prediction above */
	double super_eq8, super_eq9;
	double eager;
};
void ng_spipe_predict(const struct ng_spipe_model *m, const struct ng_spipe_proto *p, size_t len, bool fresh,
                      struct ng_spipe_pred *out);

#endif
