/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA layer: one-sided access to the registered memory of other ranks,
 * over interchangeable backends.  Internal to modules/: the modules built on
 * it (rdma, the two-sided channel; rma, MPI-2 one-sided; spipe, the
 * superpipeline; ibrc/ibuc --ib-mode write) include it, patterns never do.
 *
 * Layering: modules/rdmalayer/ holds the layer (rdma.c), its options
 * (options.c), a registration cache over it (rcache.h) and its backends
 * (shm.c; verbs.c on the verbs core, modules/verbs/verbs.h; ofi.c; ucx.c).  It
 * includes core and modules/watch/watch.h, and the verbs core in verbs.c and
 * options.c only; the channel (modules/chan/) is built on it.
 *
 * A backend is one `const struct ng_rdma_backend` (name, description, ops),
 * listed once in ng_rdma_backends[] (rdma.c), in the order "auto" tries
 * them: verbs, shm, ofi, ucx.  Its open() creates an instance that embeds
 * `struct ng_rdma` first; every operation takes the instance first.  No
 * global state: two instances can live in one process.
 *
 * Backends:
 *   verbs  RC (or UC) queue pairs on the verbs core (modules/verbs/verbs.h);
 *          hardware keys, true one-sided progress; UC has no read/atomics.
 *   shm    ranks on one host.  Memory from mem_alloc() lives in memfd
 *          segments that every local rank maps; write/read are copies,
 *          atomics are __atomic operations on the mapped words, the notice of
 *          a write is a release store.  Other registered memory is reached
 *          with process_vm_readv/writev (cross-memory attach).  The target is
 *          never involved; keys and bounds are checked by the layer itself
 *          against the target's registration table (in shared memory).
 *   ofi    libfabric (FI_RMA | FI_ATOMIC, FI_EP_RDM), any provider:
 *          --ofi-provider NAME.  Progress as the provider offers it.
 *   ucx    UCX's UCP (RMA, AMO64), the transports UCX picks (UCX_TLS):
 *          ucp_put_nbx/ucp_get_nbx/ucp_atomic_op_nbx; keys through a
 *          directory of packed keys per rank (ucx_int.h).  No true
 *          one-sided progress claimed (tcp is served by the target's
 *          progress), no key check (a peer keeps the keys it unpacked).
 *
 * ---- Memory --------------------------------------------------------------
 * mem_alloc() gives memory the backend serves best (shm: in a shared segment,
 * so even atomics and true one-sided progress work on it), registered.
 * reg() registers any buffer the caller owns; it is cheap to call repeatedly
 * (the superpipeline's registration model measures it: shm a table entry,
 * verbs ibv_reg_mr, which pins pages, ofi fi_mr_reg).  Every registration is
 * open to remote write, read and atomics.  Its handle (struct ng_rdma_mr)
 * carries the remote descriptor (struct ng_rdma_rmr, 32 bytes, plain data)
 * that the owner sends to its peers; peers address the region by that
 * descriptor plus a byte offset.  dereg()/mem_free() end remote access at
 * once: a later access through the old descriptor is refused (NG_RDMA_CAP_KEYS:
 * the shm backend's own table, the HCA's or a network provider's key check),
 * never served from reused memory; libfabric's shm provider ignores keys, so
 * there only the bounds of the descriptor are enforced; the ucx backend's
 * peers keep the keys they unpacked, so there an old descriptor is refused
 * only once its directory slot holds a new registration (ucx_int.h).
 *
 * ---- Operations ----------------------------------------------------------
 * write, read, 64-bit compare-and-swap and fetch-and-add on a peer's
 * registered memory, all non-blocking.  Each operation to peer p gets the
 * next ticket of p (1, 2, ...), returned in *t_p, or 0 when the operation
 * needs no completion (a write whose sources were all copied or inlined at
 * post time: they may be reused on return; ticket 0 is always done, though
 * the write still counts for flush).  ng_rdma_done(r, p, t) is
 * true once every operation to p with a ticket up to t has completed
 * (backends that complete out of order advance the count over the completed
 * prefix).  Completion means: a write's source may be reused; a read's
 * destination holds the data; an atomic's old value is in *old_p.  A write's
 * completion does NOT mean it is visible at the target (tcp;ofi_rxm completes
 * on handing data to a socket): flush() says that.
 *
 * The queue of a peer never refuses an operation for lack of room: a post
 * with the queue full makes progress until there is room.
 *
 * Local buffers.  A write's source (iov) and a read's destination must lie
 * in a registration of this rank and name it (mr), except that a write's
 * sources may have mr NULL for a total of at most r->stage_max bytes (the
 * backend copies them at post time: they may be reused on return).  shm
 * accepts any memory.  The target range [off, off + len) must lie inside
 * the remote descriptor's region: an access outside it is refused
 * (NG_ERR_USAGE, reported) on every backend before anything is sent.
 * Atomics work on 8-byte aligned words of memory the target got from
 * mem_alloc() (shm cannot reach other memory atomically: NG_ERR_UNSUPPORTED).
 *
 * Staging memory (verbs, ofi) is a byte ring per peer, registered when the
 * first staged operation to that peer is posted and sized to what its user
 * stages: ng_rdma_stage_bytes(stage_max), four of the largest staged writes
 * (conf->stage: the channel asks for its eager size plus the ring message's
 * header and trailer).  Its bytes are reused once the operation that used
 * them has completed; a post waits (making progress) until there is room.
 *
 * Lengths.  A write or read longer than r->max_write (the device's or the
 * provider's largest message) is split by the backend into several of at
 * most that many bytes, in order (a notice stays the last 8 bytes of the
 * last one); no length is ever cut to 32 bits.  What cannot be split is
 * refused (NG_ERR_USAGE, reported): unregistered sources above stage_max.
 *
 * ---- Ordering ------------------------------------------------------------
 * Operations to different peers are unordered.  To one peer:
 *   - writes may be placed at the target in any order relative to each
 *     other, and reads/atomics may pass writes;
 *   - except the notice: a write with NG_RDMA_NOTIFY makes its last 8 bytes
 *     (an aligned 64-bit word, written as one store) visible at the target
 *     only after all its other bytes and every byte of every write issued to
 *     that peer before it.  The target detects the write by polling that
 *     word in its own memory (ng_rdma_load64, or ng_rdma_wait_word) and may
 *     then read everything those writes carried.  This is the notification
 *     of the one-sided channel, of PSCW flags and of superpipeline blocks.
 *     (verbs: one RDMA write, relying on RC/UC in-order execution and the
 *     last bytes of a write being placed last, as every HCA does and perftest
 *     and MPI fast paths rely on; shm: copy, then a release store; ofi: per
 *     provider, see ofi.c; ucx: the body, the endpoint flushed, the word.)
 *   - a write with NG_RDMA_BLOCKS(k) is cut into pieces of 2^k bytes
 *     counted from its start (the last piece may be shorter, at least 8
 *     bytes), and the last 8 bytes of EVERY piece are a notice: visible at
 *     the target only after the other bytes of that piece, every earlier
 *     piece of the write and every write issued to that peer before it.
 *     The target consumes the pieces one after the other while the rest is
 *     still arriving: the superpipeline's sub-blocks, in one write.  (verbs:
 *     one RDMA write, as for the notice; shm: copy and release store piece
 *     by piece; ofi: one notified write per piece, see ofi_data.c.)  Off and the total are multiples of 8 and
 *     2^k >= 16; one source piece (n == 1).
 *   - flush(p) returns once every operation issued to p before it is
 *     complete and its effects visible at p: the fence between a window of
 *     writes and anything that must follow them.
 *   - atomics are atomic with respect to other atomics of the same instance
 *     on the same word (and, on shm, to the target's own __atomic calls),
 *     and to nothing else: a word that atomics target is changed only by
 *     atomics.  A write to it may be lost under a concurrent atomic (the
 *     InfiniBand rule; Soft-RoCE stores the word back on every
 *     compare-and-swap, a failed one too, so a lock released by a write
 *     while another rank tries it can stay taken forever).
 *
 * ---- Progress ------------------------------------------------------------
 * NG_RDMA_CAP_PROGRESS says whether operations complete and become visible
 * without the target calling into the layer (true one-sided progress): verbs
 * and shm always; ofi per provider (tcp;ofi_rxm with automatic progress;
 * never the shm provider, whose ordered path places writes when the target
 * progresses).  Code that waits
 * for a peer's writes in its own memory still calls ng_rdma_progress() (the
 * wait helpers do): without the capability, remote writes land only then.
 *
 * ---- Errors --------------------------------------------------------------
 * Operations and progress return NG_OK or an error already reported (once,
 * naming the peer): NG_ERR_PEER_LOST for a dead peer (verbs error
 * completion, ofi error entry, or silence for the timeout in a wait),
 * NG_ERR_CANCELLED on SIGINT/SIGTERM.  After an error the instance may only
 * be closed.
 *
 * Silence alone does not tell a dead peer from a live one that is not
 * running: a rank starved of CPU by a busy host (on an emulated device, a
 * guest whose virtual CPU the host does not schedule, for seconds) or one
 * whose long write is still on the wire looks the same from the other side.
 * So once a wait has heard nothing for half the timeout, the watchdog asks
 * the backend's transport whether the peer still holds its end (alive():
 * verbs RC, whose queue pairs die with their process), and gives the answer
 * until the timeout is up.  No answer by then: the peer is gone, lost
 * within the timeout as with the plain rule.  Answered: the silence starts
 * again, and the peer is asked again at its half.  A peer is thus lost when
 * it is gone, never for being slow; the price is that a live peer that will
 * never send (a deadlock, a rendezvous send to an eager-sized receive) is
 * waited for until the run is cancelled (SIGINT/SIGTERM, the launcher).
 * Backends that cannot tell (shm, ofi, verbs UC) keep the plain rule:
 * silence for the timeout.
 *
 * Hot path contract: write/read/atomic/progress/done do no allocation, no
 * logging and no system call beyond the transport's own (shm on memory
 * outside segments: one process_vm_writev/readv; the first access to a peer's
 * segment maps it).  Threading: none; an instance belongs to one thread.
 */
#ifndef NG_RDMA_H
#define NG_RDMA_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "modules/watch/watch.h"
#include "options.h"
#include "status.h"

/* Capabilities of an opened instance (struct ng_rdma .caps). */
enum {
	NG_RDMA_CAP_READ = 1u << 0,     /* read() */
	NG_RDMA_CAP_ATOMIC = 1u << 1,   /* cas/fadd */
	NG_RDMA_CAP_PROGRESS = 1u << 2, /* completes without target calls */
	NG_RDMA_CAP_HWKEY = 1u << 3,    /* keys checked at the target (HCA, provider):
	                                 * a wrong key is refused there, though the
	                                 * origin may see success */
	NG_RDMA_CAP_ANYMEM = 1u << 4,   /* reg() of any memory works (shm: CMA) */
	NG_RDMA_CAP_KEYS = 1u << 5,     /* a stale or forged key is refused (at the
	                                 * target, or by the layer at the origin);
	                                 * without it (libfabric's shm provider)
	                                 * only bounds are checked */
	NG_RDMA_CAP_BLOCKS = 1u << 6,   /* a write of blocks (NG_RDMA_BLOCKS) is one
	                                 * operation (verbs: one RDMA write; shm);
	                                 * without it every piece is a notified
	                                 * write of its own (ofi), which costs an
	                                 * operation or two per piece */
	NG_RDMA_CAP_PINS = 1u << 7,     /* registrations pin memory, counted
	                                 * against RLIMIT_MEMLOCK (verbs; ofi over
	                                 * a provider for a device); shm and
	                                 * libfabric's software providers pin
	                                 * nothing */
};

/* Flags of write(). */
enum {
	NG_RDMA_NOTIFY = 1u << 0,   /* last 8 bytes land last (see Ordering) */
	NG_RDMA_F_BLOCKS = 1u << 1, /* a notice per piece: use NG_RDMA_BLOCKS(k) */
	NG_RDMA_QUIET = 1u << 2,    /* its completion is no sign of the peer (credits
	                             * told again over UC): the watchdog does not
	                             * count it as an event (verbs, the one backend
	                             * with UC; the others ignore it) */
};

/* A write whose every piece of 2^@k bytes ends in a notice (see Ordering). */
#define NG_RDMA_BLOCKS(k)          (NG_RDMA_F_BLOCKS | ((unsigned)(k) << 8))
#define NG_RDMA_BLOCK_SHIFT(flags) (((flags) >> 8) & 63u)

/* What a backend is opened with. */
struct ng_rdma_conf {
	const char *who;      /* module name, prefixes every message ("rdma") */
	const char *provider; /* ofi: provider name, NULL: first that works */
	const char *dev;      /* verbs: device name, NULL: automatic */
	int port;             /* verbs: 0 automatic */
	int gid_index;        /* verbs: -1 automatic */
	int sl, tclass;       /* verbs: --ib-sl, --ib-tclass of every address */
	bool unreliable;      /* verbs: UC queue pairs (write only) */
	bool lazy;            /* verbs: a peer's queue pair made on first use
	                       * (--connect lazy, modules/verbs/verbs_conn.h);
	                       * false: every pair at open */
	bool yield;           /* sched_yield() in idle poll rounds */
	bool quiet;           /* "auto" probing: a backend that cannot open says nothing */
	size_t depth;         /* operations in flight per peer (0: 128) */
	size_t stage;         /* the largest write its user stages from unregistered
	                       * memory (0: NG_RDMA_STAGE_DEF); becomes stage_max */
	size_t max_write;     /* tests: a largest write or read below the device's
	                       * (0: the device's or provider's own) */
	const volatile sig_atomic_t *cancel;
	double timeout_s; /* a peer silent this long while awaited is lost */
};

/* Remote descriptor of a registration: plain data, sent to peers as is.
 * Its meaning is the backend's (verbs: address and rkey; shm: segment or
 * CMA address, registration index and generation; ofi: address or offset
 * and key; ucx: address, and the key directory's slot and generation). */
struct ng_rdma_rmr {
	uint64_t addr;
	uint64_t len; /* bytes a peer may access from addr */
	uint64_t key;
	uint64_t aux;
};

/* Local handle of a registration; backends embed it first. */
struct ng_rdma_mr {
	void *base; /* first registered byte */
	size_t len;
	struct ng_rdma_rmr remote; /* what peers need */
};

/* One piece of a write's source. */
struct ng_rdma_iov {
	const void *addr;
	size_t len;
	const struct ng_rdma_mr *mr; /* holding addr; NULL: staged (see Memory) */
};

#define NG_RDMA_IOV_MAX 4

enum ng_rdma_aop { NG_RDMA_CAS, NG_RDMA_FADD };

struct ng_rdma;
struct json_t;

struct ng_rdma_backend {
	const char *name; /* "shm" */
	const char *desc; /* one line */
	/* The plugin that holds the operations below (core/plugin.h):
	 * "verbs", "ofi", "ucx"; NULL: the executable does.  The executable's
	 * descriptor of a backend in a plugin has a name only; ng_rdma_open
	 * opens the plugin's. */
	const char *plugin;

	/* Collective over all ranks of @boot: opens the backend and connects
	 * every pair of ranks.  When any rank fails, all fail (the failing rank
	 * reports why unless cf->quiet; the others return its status quietly). */
	ng_status (*open)(const struct ng_rdma_backend *be, const struct ng_rdma_conf *cf,
	                  struct ng_boot *boot, struct ng_rdma **r_p);
	/* Not collective; releases every registration left. */
	void (*close)(struct ng_rdma *r);

	/* Registered memory of at least @len bytes, page aligned, zeroed. */
	ng_status (*mem_alloc)(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p);
	void (*mem_free)(struct ng_rdma *r, struct ng_rdma_mr *mr);
	/* Registers [buf, buf + len) (len > 0) of this process. */
	ng_status (*reg)(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p);
	void (*dereg)(struct ng_rdma *r, struct ng_rdma_mr *mr);

	/* Writes the concatenation of @iov[0..n) (1 <= n <= NG_RDMA_IOV_MAX) to
	 * [off, off + total) of @rm at @peer.  NG_RDMA_NOTIFY: see Ordering
	 * (total >= 8, off + total 8-byte aligned); NG_RDMA_BLOCKS(k): a notice
	 * per piece (see Ordering). */
	ng_status (*write)(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
	                   const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags, uint64_t *t_p);
	/* Reads [off, off + len) of @rm at @peer into @dst (inside @mr). */
	ng_status (*read)(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
	                  const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p);
	/* CAS: if word == @compare then word = @operand; FADD: word += @operand.
	 * The old value goes to *@old_p (any memory, valid until completion). */
	ng_status (*atomic)(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
	                    uint64_t off, uint64_t operand, uint64_t compare, uint64_t *old_p, uint64_t *t_p);

	/* Polls completions (and, without NG_RDMA_CAP_PROGRESS, serves peers'
	 * operations on this rank's memory).  Never blocks. */
	ng_status (*progress)(struct ng_rdma *r);
	/* Returns once everything issued to @peer is complete and visible there. */
	ng_status (*flush)(struct ng_rdma *r, int peer);
	/* Optional (NULL: the transport cannot tell).  Whether @peer's end of the
	 * transport is still there, asked in a way that takes no CPU of the peer
	 * (see Errors).  Blocks until the answer or until CLOCK_MONOTONIC reaches
	 * @deadline_ns (ng_watch_now_ns): NG_OK when it answers (or shows it is
	 * moving earlier work), NG_ERR_TIMEOUT (not reported) when it gives no
	 * answer by then, NG_ERR_UNSUPPORTED (not reported) when this instance
	 * cannot tell, or an error already reported (NG_ERR_PEER_LOST: the
	 * transport says it is gone; NG_ERR_CANCELLED not reported). */
	ng_status (*alive)(struct ng_rdma *r, int peer, uint64_t deadline_ns);
	/* Optional (NULL: nothing).  What configures the backend's data path
	 * beyond the layer's options (ucx: UCX's version, the UCX_* environment
	 * and the transports of every endpoint), as a new JSON object: the
	 * modules on the layer put it under "setup" in their block of the
	 * result, so that ngauge compare flags a change.  Cold; allocates. */
	struct json_t *(*setup)(struct ng_rdma *r);
};

/* Instance base; a backend's instance embeds it first. */
struct ng_rdma {
	const struct ng_rdma_backend *be;
	const char *who;
	int rank;
	int size;
	unsigned caps;         /* NG_RDMA_CAP_* */
	size_t stage_max;      /* bytes a write may take from unregistered memory */
	size_t max_write;      /* largest single write or read the device or
	                        * provider takes (0: unlimited); longer ones are
	                        * split by the backend, never truncated */
	uint64_t *issued;      /* [size]: tickets handed out per peer */
	uint64_t *completed;   /* [size]: operations completed per peer (a prefix) */
	struct ng_watch watch; /* timeout and cancellation of the wait helpers */
	char desc[160];        /* what was opened, for the result's env */
	/* Connections, for the modules' reports (verbs; the others leave them
	 * zero, qps_kept false): queue pairs towards peers made so far and at
	 * open, and the time this rank spent connecting on first use. */
	bool qps_kept;
	bool lazy;
	size_t qps, qps_at_open;
	uint64_t connect_ns;
};

/* ---- options (options.c) ----------------------------------------------- */

/* The layer's options (namespace "rdma"): --rdma-backend, and the ofi
 * backend's --ofi-provider.  The modules on the layer list this table
 * before the channel's and their own. */
extern const struct ng_option ng_rdma_options[];
/* ng_rdma_options as ng_config_read gives them. */
struct ng_rdma_config {
	int backend;          /* --rdma-backend: auto, verbs, shm, ofi, ucx (its word's index) */
	const char *provider; /* --ofi-provider: NULL for the first that works */
};
/* The option tables of another family that the layer reads, for the .reads
 * of the modules on it (NULL-terminated): the verbs core's device options
 * (ng_verbs_options), which the verbs backend selects by, in a build with
 * verbs; none without. */
extern const struct ng_option *const ng_rdma_reads[];
/* Reads the layer's options: the backend to open into *@backend_p ("auto",
 * "verbs", "shm", "ofi", "ucx"; ng_rdma_open checks it) and, into @cf, the ofi
 * provider and the verbs backend's device, port and GID (0, -1: automatic).
 * The rest of @cf is left alone. */
void ng_rdma_conf_read(const struct ng_args *a, const char **backend_p, struct ng_rdma_conf *cf);

/* The backends built in, NULL-terminated, in the order "auto" tries them. */
extern const struct ng_rdma_backend *const ng_rdma_backends[];

/* "verbs|shm|ofi|ucx": the names of the built-in backends. */
const char *ng_rdma_backend_names(void);

/*
 * Collective: opens backend @name ("auto" or NULL: the first that opens, in
 * ng_rdma_backends[] order, quietly; when none does, says why each failed).
 * An unknown name is NG_ERR_USAGE with one line naming the choices.
 */
ng_status ng_rdma_open(const char *name, const struct ng_rdma_conf *cf, struct ng_boot *boot,
                       struct ng_rdma **r_p);

static inline void ng_rdma_close(struct ng_rdma *r)
{
	if (r)
		r->be->close(r);
}

/* Helpers for backends: fill the base (allocating the counters; stage_max
 * and max_write from @cf, which the backend may lower) and free it. */
ng_status ng_rdma_base_init(struct ng_rdma *r, const struct ng_rdma_backend *be,
                            const struct ng_rdma_conf *cf, int rank, int size);
void ng_rdma_base_fini(struct ng_rdma *r);
/* The smaller of two largest lengths, 0 meaning unlimited. */
size_t ng_rdma_max_join(size_t a, size_t b);

/* For backends that cannot place the pieces of a write of blocks in order:
 * writes @iov (one source piece) as one notified write per piece of
 * 2^@shift bytes; *t_p is the last one's ticket. */
ng_status ng_rdma_write_pieces(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov,
                               const struct ng_rdma_rmr *rm, uint64_t off, unsigned shift, uint64_t *t_p);

/* For backends whose device or provider takes at most r->max_write bytes
 * per operation: writes @iov[0..n) (@total bytes, above max_write) as
 * consecutive writes through r->be->write of at most max_write bytes each,
 * cut at multiples of the piece size of NG_RDMA_BLOCKS and leaving the
 * last at least 8 bytes (its notice: NOTIFY goes with the last write only;
 * BLOCKS with every one).  *t_p is the highest ticket. */
ng_status ng_rdma_write_split(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                              size_t total, const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags,
                              uint64_t *t_p);
/* The pieces of bytes [@at, @at + @len) of the concatenation of
 * @iov[0..n) into @out (at most n entries); returns how many.  Pure. */
unsigned ng_rdma_iov_slice(const struct ng_rdma_iov *iov, unsigned n, size_t at, size_t len,
                           struct ng_rdma_iov *out);
/* The cut points of a split write: how many bytes, at most @max, the next
 * write of a split takes when @left bytes are left (flags as write()'s).
 * 0 when @max cannot carry the write (a block piece or the last 8 bytes
 * would not fit).  Pure. */
size_t ng_rdma_split_len(size_t left, size_t max, unsigned flags);

/* ---- staging (backends) --------------------------------------------- */

/* Default stage_max: what a user that says nothing may stage per write. */
#define NG_RDMA_STAGE_DEF 16384u

/* Pinned bytes of one peer's staging ring for writes that stage at most
 * @stage_max bytes: four of them, rounded up to 4 KiB pages.  Pure. */
size_t ng_rdma_stage_bytes(size_t stage_max);

/* One peer's staging ring (see Memory). */
struct ng_rdma_stage {
	struct ng_rdma_mr *mr; /* NULL until the first staged operation */
	uint64_t tail;         /* bytes handed out, ever */
	uint64_t *mark;        /* [depth + 1]: tail after operation t, at t % (depth + 1) */
};

/* @len bytes of @peer's staging ring for its next operation, 8-byte
 * aligned, into *@p_p: allocates the ring (r->be->mem_alloc) at the first
 * call, makes progress while the bytes are still in use.  @depth: the most
 * operations in flight to a peer.  NG_ERR_USAGE (reported) above
 * stage_max; errors of progress and the watchdog. */
ng_status ng_rdma_stage_take(struct ng_rdma *r, struct ng_rdma_stage *s, int peer, size_t depth, size_t len,
                             unsigned char **p_p);
/* Records operation @t (posted now) as holding what was taken so far:
 * every operation to the peer is recorded, staged or not. */
static inline void ng_rdma_stage_mark(struct ng_rdma_stage *s, size_t depth, uint64_t t)
{
	if (s->mark)
		s->mark[t % (depth + 1)] = s->tail;
}
/* Frees the ring (r->be->mem_free) and its marks. */
void ng_rdma_stage_free(struct ng_rdma *r, struct ng_rdma_stage *s);

/* Refuses (NG_ERR_USAGE, reported) an access to [off, off + len) outside
 * @rm: every backend calls it before it posts. */
ng_status ng_rdma_bounds_error(const struct ng_rdma *r, int peer, const struct ng_rdma_rmr *rm, uint64_t off,
                               uint64_t len);
static inline ng_status ng_rdma_bounds(const struct ng_rdma *r, int peer, const struct ng_rdma_rmr *rm,
                                       uint64_t off, uint64_t len)
{
	if (off <= rm->len && len <= rm->len - off)
		return NG_OK;
	return ng_rdma_bounds_error(r, peer, rm, off, len);
}

/* ---- convenience wrappers (hot path) ---------------------------------- */

static inline ng_status ng_rdma_mem_alloc(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p)
{
	return r->be->mem_alloc(r, len, mr_p);
}
static inline void ng_rdma_mem_free(struct ng_rdma *r, struct ng_rdma_mr *mr)
{
	if (mr)
		r->be->mem_free(r, mr);
}
static inline ng_status ng_rdma_reg(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p)
{
	return r->be->reg(r, buf, len, mr_p);
}
static inline void ng_rdma_dereg(struct ng_rdma *r, struct ng_rdma_mr *mr)
{
	if (mr)
		r->be->dereg(r, mr);
}
static inline ng_status ng_rdma_writev(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                                       const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags,
                                       uint64_t *t_p)
{
	return r->be->write(r, peer, iov, n, rm, off, flags, t_p);
}
static inline ng_status ng_rdma_write(struct ng_rdma *r, int peer, const void *src,
                                      const struct ng_rdma_mr *mr, size_t len, const struct ng_rdma_rmr *rm,
                                      uint64_t off, unsigned flags, uint64_t *t_p)
{
	struct ng_rdma_iov iov = {src, len, mr};

	return r->be->write(r, peer, &iov, 1, rm, off, flags, t_p);
}
static inline ng_status ng_rdma_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr,
                                     size_t len, const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	return r->be->read(r, peer, dst, mr, len, rm, off, t_p);
}
static inline ng_status ng_rdma_cas(struct ng_rdma *r, int peer, const struct ng_rdma_rmr *rm, uint64_t off,
                                    uint64_t compare, uint64_t swap, uint64_t *old_p, uint64_t *t_p)
{
	return r->be->atomic(r, peer, NG_RDMA_CAS, rm, off, swap, compare, old_p, t_p);
}
static inline ng_status ng_rdma_fadd(struct ng_rdma *r, int peer, const struct ng_rdma_rmr *rm, uint64_t off,
                                     uint64_t add, uint64_t *old_p, uint64_t *t_p)
{
	return r->be->atomic(r, peer, NG_RDMA_FADD, rm, off, add, 0, old_p, t_p);
}
static inline ng_status ng_rdma_progress(struct ng_rdma *r)
{
	return r->be->progress(r);
}
static inline ng_status ng_rdma_flush(struct ng_rdma *r, int peer)
{
	return r->be->flush(r, peer);
}

/* True once every operation to @peer up to ticket @t has completed (no
 * progress made: call ng_rdma_progress or use ng_rdma_wait). */
static inline bool ng_rdma_done(const struct ng_rdma *r, int peer, uint64_t t)
{
	return r->completed[peer] >= t;
}

/*
 * For ring protocols on the layer and beside it (the channel, ibrc's send
 * mode, ibud): credits carried by a ring message or a datagram.  @low holds
 * the low bits (@mask) of the peer's release count of my messages when it
 * posted.  That count is never above @sent (the messages I sent it), so it
 * is at most @sent - *@seen ahead of *@seen, the highest known; a count
 * behind *@seen (a credit word written later was read first; a datagram
 * reordered or duplicated) widens to a huge delta and is ignored, at the
 * wrap of the low bits too.  Raises *@seen to the carried count when it is
 * ahead; returns whether it was.
 */
static inline bool ng_rdma_credit_widen(uint64_t *seen, uint64_t low, uint64_t mask, uint64_t sent)
{
	uint64_t delta = (low - *seen) & mask;

	if (!delta || delta > sent - *seen)
		return false;
	*seen += delta;
	return true;
}

/*
 * The same for a whole 64-bit release count read from a credit word the
 * peer writes: taken when above *@seen and at most @sent (a count beyond
 * what was sent is a torn or stale read, never a credit); returns whether it
 * was taken.
 */
static inline bool ng_rdma_credit_word(uint64_t *seen, uint64_t word, uint64_t sent)
{
	if (word <= *seen || word > sent)
		return false;
	*seen = word;
	return true;
}

/*
 * Self-healing credits over unreliable transports (UC, UD), where a credit
 * write or datagram can be lost without anyone being told and a sender
 * waiting for it would wait for ever: a poll loop that has seen nothing for
 * @after_ns (its watchdog @w, just after a clock read) tells its peers
 * their credits again, and again every @after_ns of the silence (*@healed
 * holds the time it last did).  A credit is an absolute count, so a repeat
 * is harmless; the completions of those posts must not count as events, or
 * a lost peer would never be silent.  Returns whether to tell them now.
 */
static inline bool ng_rdma_credit_heal_due(const struct ng_watch *w, uint64_t *healed, uint64_t after_ns)
{
	if (w->spin || w->last_ns - w->since_ns < after_ns || w->last_ns - *healed < after_ns)
		return false;
	*healed = w->last_ns;
	return true;
}

/* Acquire load of a word of this rank's registered memory that peers write
 * (a notice, a flag, a counter). */
static inline uint64_t ng_rdma_load64(const volatile uint64_t *w)
{
	return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

/*
 * Blocking helpers built on progress and the watchdog (rdma.c).  They return
 * NG_OK, NG_ERR_CANCELLED (not reported) or an error from progress; silence
 * for the timeout gives NG_ERR_PEER_LOST, reported as "WHO: rank P lost (...)".
 */
/* Until ticket @t of @peer has completed. */
ng_status ng_rdma_wait(struct ng_rdma *r, int peer, uint64_t t);
/* Until every operation issued to @peer so far has completed. */
ng_status ng_rdma_wait_all(struct ng_rdma *r, int peer);
/* Until the word @w of this rank's memory is at least @v (a counter that
 * @peer advances; @peer only names whom we wait for). */
ng_status ng_rdma_wait_word(struct ng_rdma *r, const volatile uint64_t *w, uint64_t v, int peer);
/* The idle step of a wait loop for @peer (the helpers above use it; so do
 * the modules' own loops): the watchdog's verdict on a silent peer (see
 * Errors).  NG_OK (keep waiting), NG_ERR_CANCELLED (not reported),
 * NG_ERR_PEER_LOST (reported). */
ng_status ng_rdma_idle(struct ng_rdma *r, int peer);

#endif
