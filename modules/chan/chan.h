/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one-sided channel (the Netgauge paper's Fig. 4) over the RDMA layer:
 * two-sided messages made of RDMA writes into rings at the receiver.  It is
 * the "rdma" module, and the data path of ibrc/ibuc --ib-mode write (the
 * same code over the verbs backend with the --ib-* settings).
 *
 * Layering: modules/chan/ is built on the RDMA layer only (this header
 * includes rdma.h, whose helpers, such as the credit widening of ring
 * messages, its users share); the ib modules (--ib-mode write), rma and
 * spipe are built on it.  Patterns never include it.
 */
#ifndef NG_CHAN_CHAN_H
#define NG_CHAN_CHAN_H

#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "modules/rdmalayer/rdma.h"

/* Bytes a ring message adds to its payload (header and trailing word). */
#define NG_CHAN_MSG_HDR 24u

/* Bytes a ring message of at most @eager payload bytes stages from
 * unregistered memory at most (header, payload padded to 8, trailer): what
 * the channel asks the layer to stage (struct ng_rdma_conf .stage). */
static inline size_t ng_chan_stage_need(size_t eager)
{
	return NG_CHAN_MSG_HDR + ((eager + 7) & ~(size_t)7);
}

/* Registered (pinned) bytes per rank of a channel with @ring slots of
 * @eager bytes once it has exchanged messages with every one of @ranks
 * ranks (a ring per peer in whole pages, control words and the layer's
 * staging rings on verbs and ofi; the documentation's table, doc/rdma.md).
 * Pure. */
size_t ng_chan_pinned_bytes(size_t ranks, size_t ring, size_t eager);

/*
 * A rendezvous over an unreliable connection (UC: ibuc --ib-mode write).
 * UC drops the rest of a write after a lost packet and tells nobody, while
 * the FIN, a write of its own, still arrives: the receive would complete
 * with old bytes.  So on a lossy channel (ng_chan_set_lossy) the payload is
 * written in pieces cut by ng_chan_piece (at most @max bytes, the smallest
 * largest write of all ranks; the last never shorter than 8 bytes), the
 * receiver marks the last 8 bytes of every piece with values of its own
 * before its CTS goes out (ng_chan_tails_mark), the sender's FIN carries the
 * XOR of the last 8 bytes of every piece of its payload (ng_chan_tails), and
 * the receiver compares that with the same XOR over its buffer once the FIN
 * came.  A piece with a lost packet lacks its last packet (UC places no
 * packet of a message after a loss), so its mark is still there and the XOR
 * differs: the receive fails with NG_ERR_IO, naming the peer, instead of
 * completing.  It cannot tell only when a lost piece's data equals the mark
 * in the bytes its last packet carried (marks are 64-bit values of a key
 * drawn at open: a chance of 2^-64 when the last packet holds the whole
 * word, 2^-8k when it holds only k < 8 of its bytes, a piece whose length
 * is a multiple of the MTU plus k).  Cost: an 8-byte store per
 * piece at the receiver before the CTS, an 8-byte load per piece on each
 * side, 8 bytes more in the FIN; reliable channels do none of it.
 */
/* The length of the piece of a rendezvous payload of @len (>= 8) bytes that
 * starts at @at (< @len), pieces of at most @max (>= 16; 0: unlimited)
 * bytes.  Pure. */
static inline size_t ng_chan_piece(size_t len, size_t at, size_t max)
{
	return ng_rdma_split_len(len - at, max ? max : len - at, NG_RDMA_NOTIFY);
}
/* The XOR of the last 8 bytes of every piece of @buf (@len >= 8 bytes).
 * Pure. */
uint64_t ng_chan_tails(const void *buf, size_t len, size_t max);
/* Writes the mark of piece i under @key into the last 8 bytes of every
 * piece i of @buf. */
void ng_chan_tails_mark(void *buf, size_t len, size_t max, uint64_t key);

/* Limits of the ring and the eager size. */
#define NG_CHAN_RING_MIN  4u
#define NG_CHAN_RING_MAX  4096u
#define NG_CHAN_EAGER_MIN 64u
#define NG_CHAN_EAGER_MAX ((size_t)1 << 20)

/* What a channel module opens: the layer (its backend and how it opens:
 * who, cancel and timeout_s are the module's, filled by ng_chan_mod_init)
 * and the channel on it. */
struct ng_chan_conf {
	const char *backend;      /* "auto", "verbs", "shm", "ofi" */
	struct ng_rdma_conf rdma; /* .yield: --rdma-poll yield */
	size_t ring;              /* slots per peer */
	size_t eager;             /* largest message through the ring */
};

/* The channel's options (namespace "rdma"): --rdma-ring, --rdma-eager and
 * --rdma-poll (how the modules on it wait).  A module on the channel lists
 * the layer's table (ng_rdma_options), this one, then its own, and reads
 * ng_rdma_reads. */
extern const struct ng_option ng_chan_options[];
/* ng_chan_options as ng_config_read gives them. */
struct ng_chan_config {
	long long ring; /* --rdma-ring */
	size_t eager;   /* --rdma-eager */
	int poll;       /* --rdma-poll: spin, yield (its word's index) */
};

/* Reads the layer's options (ng_rdma_conf_read) and the channel's (a bad
 * value is reported: NG_ERR_USAGE). */
ng_status ng_chan_conf_read(const struct ng_module_env *env, struct ng_chan_conf *cf);

/* ---- the channel over an opened layer ---------------------------------- */

struct ng_rdma;
struct ng_rdma_mr;
struct ng_chan;

/*
 * Collective: a channel with rings of @ring slots of @eager bytes over @r.
 * Several channels may share one layer instance (each has its own rings,
 * so their messages never mix).  Only the 64 bytes of control words per
 * peer are allocated here; a peer's ring at its first use (chan.c: its
 * first receive, or its ask), so the first message to a peer completes
 * once that peer made progress on the channel.  Errors are reported.
 */
ng_status ng_chan_new(struct ng_rdma *r, struct ng_boot *b, size_t ring, size_t eager, struct ng_chan **ch_p);
/* Frees the rings (not the blocks added, not the layer). */
void ng_chan_destroy(struct ng_chan *ch);

/*
 * Rendezvous protocols: how a message above the eager size moves once its
 * receive is posted.  The channel keeps the matching, the order, the CTS
 * (sent when the receive is posted) and the FIN (sent after the payload's
 * writes, whose visibility its notice orders); the protocol decides where
 * the sender writes and how the payload reaches the receive buffer.  The
 * channel's own (the default) writes from the send block straight into the
 * receive block the CTS names.  A protocol set with ng_chan_set_rndv()
 * (spipe's) takes any memory: buffers need not be blocks, and eager
 * messages from other memory are staged by the layer (so the eager size
 * must not exceed its stage_max).
 *
 * One rendezvous transfer per peer and direction is active at a time: the
 * oldest send not fully posted (before and after its CTS came), and the
 * oldest receive, once its CTS went out.  @h is the protocol's handle of one
 * request (NULL: none), kept by the channel and given back to release()
 * once the request has completed or failed.  The calls are made from the
 * channel's progress (test, wait, the blocking calls): no allocation or
 * logging on success, errors reported by the protocol.
 */
struct ng_rdma_rmr;

struct ng_chan_rndv {
	/* Receiver, before the CTS of a receive of @len bytes at @buf goes out:
	 * where the sender is to write (*@rm_p, offset *@off_p). */
	ng_status (*rx_begin)(void *ctx, int peer, void *buf, size_t len, struct ng_rdma_rmr *rm_p,
	                      uint64_t *off_p, void **h_p);
	/* Optional.  Receiver, the active receive: moves what has arrived into
	 * @buf.  @fin: its FIN came, so everything written is visible, and the
	 * whole message must be in @buf on return (else an error). */
	ng_status (*rx_step)(void *ctx, int peer, void *buf, size_t len, void *h, bool fin);
	/* Sender, the active send: posts what it can.  @rm is NULL until the
	 * CTS came (the protocol may prepare, never write), then the CTS's
	 * buffer at offset @off.  Sets *@done_p once every write of the payload
	 * is posted, with *@ticket_p the ticket after which @buf may be reused
	 * (0: at once). */
	ng_status (*tx_step)(void *ctx, int peer, const void *buf, size_t len, const struct ng_rdma_rmr *rm,
	                     uint64_t off, void **h_p, bool *done_p, uint64_t *ticket_p);
	/* Optional: a request with a handle has completed or failed. */
	void (*release)(void *ctx, int peer, void *h, bool recv);
};

/* Plugs @rv (with @ctx) into a channel before it carries any message.
 * NG_ERR_USAGE (reported) when the eager size exceeds what the layer
 * stages. */
ng_status ng_chan_set_rndv(struct ng_chan *ch, const struct ng_chan_rndv *rv, void *ctx);

/*
 * Marks a channel as running over a transport that may lose a write without
 * telling anyone (verbs UC), before it carries any message: rendezvous
 * payloads are checked (see above: a loss fails the receive with
 * NG_ERR_IO), and the credits are told again while a wait hears nothing
 * (ng_chan_idle).  A lossy channel takes no rendezvous protocol of a
 * module's own (ng_chan_set_rndv refuses it).
 */
void ng_chan_set_lossy(struct ng_chan *ch);

/* Makes @mr's memory usable as a send or rendezvous receive buffer. */
ng_status ng_chan_block_add(struct ng_chan *ch, struct ng_rdma_mr *mr);
/* Forgets the block at @base; returns its registration (NULL: none). */
struct ng_rdma_mr *ng_chan_block_remove(struct ng_chan *ch, void *base);
/* Frees the registration of every block added and forgets them all. */
void ng_chan_blocks_free(struct ng_chan *ch);

/* The two-sided operations' semantics (core/module.h, struct ng_msg_ops),
 * on a channel. */
ng_status ng_chan_isend(struct ng_chan *ch, int peer, const void *buf, size_t len, struct ng_req *req);
ng_status ng_chan_irecv(struct ng_chan *ch, int peer, void *buf, size_t len, struct ng_req *req);
/* A receive of any message of at most min(@cap, eager) bytes; its length is
 * ng_chan_req_len() once complete. */
ng_status ng_chan_irecv_upto(struct ng_chan *ch, int peer, void *buf, size_t cap, struct ng_req *req);
size_t ng_chan_req_len(struct ng_req *req);
ng_status ng_chan_test(struct ng_chan *ch, struct ng_req *req, bool *done_p);
ng_status ng_chan_wait(struct ng_chan *ch, struct ng_req *req);
/* One round of progress (*@seen_p set when anything arrived); and the idle
 * step of a wait loop (NG_ERR_PEER_LOST, reported, naming @peer on silence).
 * On a lossy channel the idle step also tells every peer its credits again
 * (an absolute count, one write per peer that was given any) once the
 * silence has lasted 50 ms and every 50 ms while it lasts: a lost credit
 * write would leave a sender waiting for ever.  Those writes are no sign of
 * a peer (NG_RDMA_QUIET): a lost peer is still named after --timeout. */
ng_status ng_chan_progress(struct ng_chan *ch, bool *seen_p);
ng_status ng_chan_idle(struct ng_chan *ch, int peer);

/* ---- a module on the channel ------------------------------------------- */

/* Instance base of a module whose two-sided operations are the channel's
 * (rdma, rma, ibrc/ibuc --ib-mode write); embedded first. */
struct ng_chan_mod {
	struct ng_comm base;
	struct ng_rdma *r;
	struct ng_chan *ch;
};

/* Opens the layer with @cf and the channel on it; the instance is of module
 * @m (name, capabilities) and served by the operations @ops.  The layer's
 * connections follow env->connect_lazy (the verbs backend's queue pairs on
 * first use).  Errors are reported. */
ng_status ng_chan_mod_init(struct ng_chan_mod *cm, const struct ng_module *m, const struct ng_module_ops *ops,
                           const struct ng_module_env *env, const struct ng_chan_conf *cf);
/* Frees the alloc() blocks left, the channel and the layer. */
void ng_chan_mod_fini(struct ng_chan_mod *cm);
/* close() of a module on the channel whose instance is a struct ng_chan_mod
 * of its own (ng_chan_mod_fini, then the instance freed). */
void ng_chan_mod_close(struct ng_comm *c);
/* report() of a module on the channel: the layer's connections ("connect",
 * "qps", "qps_at_open", "connect_ms"), where the backend keeps them (verbs),
 * and the backend's "setup" where it has one (ucx: rdma.h, setup); NULL
 * when there is neither. */
struct json_t *ng_chan_mod_report(struct ng_comm *c);

/* The two-sided operations of a module on the channel (rdma, rma, spipe):
 * isend, irecv, test and wait of its channel; blocking send and receive are
 * the core's (isend/irecv + wait). */
extern const struct ng_msg_ops ng_chan_msg_ops;

/* alloc() and free() of a module on the channel: layer memory, made a block
 * of the channel. */
ng_status ng_chan_mod_alloc(struct ng_comm *c, size_t len, void **buf_p);
void ng_chan_mod_free(struct ng_comm *c, void *buf);

/*
 * Collective: a module instance of @m that is the rdma module's channel
 * with @cf (ibrc/ibuc --ib-mode write: the verbs backend).  Errors are
 * reported; nothing is left open.
 */
ng_status ng_chan_open(const struct ng_module *m, const struct ng_module_env *env,
                       const struct ng_chan_conf *cf, struct ng_comm **comm_p);

#endif
