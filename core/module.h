/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The communication module interface.
 *
 * A module is one `const struct ng_module` of the executable (the
 * descriptor: identity, options, capabilities, limits; registered by one
 * line of modules/meson.build) and one `struct ng_module_ops` (its
 * operations).  The descriptor points at its operations (.ops), or, for a
 * module whose code is in a plugin (core/plugin.h), names the plugin
 * (.plugin) that exports them as "module:NAME": the data is then the
 * executable's alone, once, and the plugin holds only code.
 * ng_module_impl() gives the operations either way.  open() creates an
 * instance, a module-private struct that embeds `struct ng_comm` as its
 * first member (convert back with container_of / ng_container_of).  Every
 * operation takes the instance first; a module keeps no global or
 * function-static state, so two instances can live in one process.
 *
 * Patterns see only this interface: they never include a module's header,
 * and they call a module only through the inline wrappers at the end
 * (ng_send, ng_isend, ng_rma, ...).  Optional operations are NULL; callers
 * check the capability flags (the driver has already checked what the
 * pattern declared it needs).
 *
 * Operations come in sub-tables that several modules may share: the
 * two-sided ones (.msg, struct ng_msg_ops: mpirma's are the mpi module's,
 * rma's and spipe's the channel's) and the one-sided ones (.rma, struct
 * ng_rma_ops).
 *
 * Messages: send(peer, buf, len) is matched by recv(peer, buf, len) on the
 * peer with the same length; between two ranks, messages are matched in the
 * order they were posted (no tags).  Buffers given to send/recv/isend/irecv
 * must come from the module's alloc() (registered memory where the network
 * needs it), at any offset inside such a block.
 *
 * Hot path contract: send/recv/isend/irecv/test/wait do no allocation, no
 * logging and no option lookup on success; their only system calls are the
 * transport's own.
 */
#ifndef NG_MODULE_H
#define NG_MODULE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "options.h"
#include "status.h"
#include "where.h"

#ifndef ng_container_of
#define ng_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#endif

/* Capability flags (module descriptor .caps, pattern .needs). */
enum {
	NG_CAP_RELIABLE = 1u << 0,  /* delivered intact and in order, or an error */
	NG_CAP_CHANNEL = 1u << 1,   /* two-sided send/recv */
	NG_CAP_REGMEM = 1u << 2,    /* buffers must come from alloc() */
	NG_CAP_NONBLOCK = 1u << 3,  /* isend/irecv/test/wait */
	NG_CAP_ONESIDED = 1u << 4,  /* .rma operations */
	NG_CAP_MPI = 1u << 5,       /* needs an MPI launch (mpiexec/srun) */
	NG_CAP_MULTIRANK = 1u << 6, /* more than two ranks at once */
	NG_CAP_ALLTOALL = 1u << 7,  /* .alltoall: the network's own all-to-all collective */
	NG_CAP_COLL = 1u << 8,      /* .coll: the network's own collectives (enum ng_coll_op) */
};

/* The collectives of .coll (the coll pattern's operations, in its order). */
enum ng_coll_op {
	NG_COLL_ALLREDUCE,
	NG_COLL_BCAST,
	NG_COLL_REDUCE,
	NG_COLL_ALLGATHER,
	NG_COLL_REDUCE_SCATTER,
	NG_COLL_BARRIER,
	NG_COLL_GATHER,
	NG_COLL_SCATTER,
	NG_COLL_NOPS
};

/* Element types of .coll (reductions are sums). */
enum ng_coll_type { NG_COLL_INT32, NG_COLL_INT64, NG_COLL_FLOAT, NG_COLL_DOUBLE, NG_COLL_NTYPES };

/* Name of one capability bit ("non-blocking"), for error messages. */
const char *ng_cap_name(unsigned cap);

/*
 * Request handle for non-blocking operations.  Storage belongs to the caller
 * (no allocation on the hot path); the module keeps its per-request state in
 * .priv.  A request is in flight from isend/irecv until test reports done or
 * wait returns; the caller must not move, reuse or free it (nor the buffer)
 * while it is in flight.
 */
struct ng_req {
	_Alignas(16) unsigned char priv[112];
};

struct ng_comm;
struct ng_module;
struct ng_module_ops;
struct ng_rma_ops;
struct ng_row;
struct json_t;

/*
 * Two-sided operations (NG_CAP_CHANNEL; isend, irecv, test and wait with
 * NG_CAP_NONBLOCK).  A module points .msg at its table, or at the table of
 * the module whose messages it carries (mpirma: the mpi module's; rma and
 * spipe: the channel's).
 */
struct ng_msg_ops {
	/* Blocking: returns when @buf may be reused (send) or holds the message
	 * (recv).  NG_ERR_PEER_LOST names the peer in its report;
	 * NG_ERR_TRUNCATED when the incoming message is not @len bytes.
	 * Optional where isend/irecv and wait exist: an instance of a module
	 * that leaves them NULL gets isend/irecv followed by wait (set once,
	 * by ng_comm_init). */
	ng_status (*send)(struct ng_comm *c, int peer, const void *buf, size_t len);
	ng_status (*recv)(struct ng_comm *c, int peer, void *buf, size_t len);

	/* Optional (NG_CAP_NONBLOCK): start an operation, complete it with test or
	 * wait.  Operations to one peer complete in the order they were posted
	 * relative to the blocking ones. */
	ng_status (*isend)(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *req);
	ng_status (*irecv)(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *req);
	/* Makes progress; *done_p = true once @req has completed. */
	ng_status (*test)(struct ng_comm *c, struct ng_req *req, bool *done_p);
	/* Blocks until @req has completed. */
	ng_status (*wait)(struct ng_comm *c, struct ng_req *req);
	/* Optional: blocks until all @n requests of @reqs have completed, as
	 * wait() on each in turn would, and returns the first error; with the
	 * cancel flag set it ends every pending one as wait() does
	 * (NG_ERR_CANCELLED).  One call into the library for a window of
	 * requests (MPI_Waitall) instead of n, which is what a window of small
	 * messages costs.  NULL: ng_waitall() waits on each in turn. */
	ng_status (*waitall)(struct ng_comm *c, struct ng_req *reqs, size_t n);
};

/* Instance base; a module's private instance embeds it first. */
struct ng_comm {
	const struct ng_module *mod; /* what the user chose: name, options, capabilities */
	/* The operations that serve this instance: @mod's (ng_comm_init sets
	 * them), or those of what it is built on (ibrc --ib-mode write is the
	 * rdma module's channel over the verbs backend).  Every call goes
	 * through them; the driver closes the instance with ops->close.  Set by
	 * ng_comm_init, changed only with ng_comm_set_ops. */
	const struct ng_module_ops *ops;
	/* The two-sided operations of this instance: ops->msg, with send and
	 * recv that it leaves NULL made of isend/irecv + wait.  ng_send and the
	 * other wrappers call through it: one indirect call. */
	struct ng_msg_ops msg;
	int rank;
	int size;
	unsigned caps;  /* effective capabilities of this instance */
	size_t max_msg; /* effective maximum message size, 0 = unlimited */
	/* Waits by polling (busy-waiting, sched_yield() aside never asleep in
	 * the kernel), so that a rank needs a core of its own: the driver warns
	 * and marks the results "oversubscribed" when such ranks outnumber the
	 * cores of their host.  Set by open(): tcp --tcp-poll spin, the verbs
	 * modules and the RDMA layer's unless they yield (--ib-poll/--rdma-poll
	 * yield), emu always; ng_comm_init presets it for modules with an MPI
	 * launch (MPI libraries poll in their blocking calls). */
	bool spins;
	/* Its registrations pin memory, counted against RLIMIT_MEMLOCK (the
	 * run's memlock warning looks at these only).  ng_comm_init presets it
	 * from NG_CAP_REGMEM; the RDMA layer's modules clear it over a backend
	 * that pins nothing (NG_RDMA_CAP_PINS), emu over a base that pins
	 * nothing. */
	bool pins;
	/* Set (non-zero) by the driver on SIGINT/SIGTERM.  Modules that busy-poll
	 * check it in their poll loops and return NG_ERR_CANCELLED; modules that
	 * block in system calls see EINTR and check it then. */
	const volatile sig_atomic_t *cancel;
	/* Where this rank stands (base/where.h): the wrappers below mark
	 * every call in it, the run's watchdog reads it. */
	struct ng_where where;
	/* Filled by open(): what was opened, for the result's env block, e.g.
	 * "rxe0 port 1 gid 1 mtu 1024" or "127.0.0.1". */
	char device[160];
};

/* Fills an instance's base in open(): module @m's capabilities and maximum
 * message size (the instance may narrow them afterwards), its rank and
 * size, the driver's cancellation flag, and the operations that serve it,
 * @ops: the module's own table (open() names it; a plugin's module has no
 * other way to it), ng_comm_set_ops. */
static inline void ng_comm_init(struct ng_comm *c, const struct ng_module *m, const struct ng_module_ops *ops,
                                int rank, int size, const volatile sig_atomic_t *cancel);
/* Makes the operations @ops serve instance @c (ng_comm.ops), and resolves
 * its two-sided ones (ng_comm.msg). */
static inline void ng_comm_set_ops(struct ng_comm *c, const struct ng_module_ops *ops);

/* What open() receives. */
struct ng_module_env {
	struct ng_boot *boot;       /* rank, size, address exchange */
	const struct ng_args *args; /* parsed options (module's own and others) */
	const volatile sig_atomic_t *cancel;
	double timeout_s; /* a peer silent for this long is lost */
	/* --connect lazy: connect to a peer when a pattern first talks to it
	 * (where the module can; the others connect at open).  false (eager,
	 * also what a zeroed env says): every connection at open. */
	bool connect_lazy;
};

/*
 * The descriptor: what a module is, data only, in the executable (so that
 * --help, --list, --version and usage errors need no plugin), one per
 * module: `const struct ng_module ng_module_NAME`, NAME as -x names it,
 * registered by its line in modules/meson.build (core/registry.c lists what
 * that generates and names no module).
 */
struct ng_module {
	const char *name; /* "tcp" */
	const char *desc; /* one line */
	/* The plugin that holds the module's operations (core/plugin.h): "mpi",
	 * "verbs"; .ops is NULL then, and the plugin exports the operations as
	 * its entry "module:NAME" (a struct ng_module_ops).  NULL: the
	 * executable holds them, at .ops. */
	const char *plugin;
	/*
	 * The module's options: a NULL-terminated list of option tables
	 * (core/options.h), its own and those of the layers and backends it is
	 * built on (rma: the RDMA layer's, the channel's, its own), in the order
	 * --list shows them; the result's parameters block records their values
	 * in that order.  A table that several modules list is one table,
	 * declared once.  May be NULL.
	 */
	const struct ng_option *const *options;
	/* Optional: tables of another family of modules that this module reads
	 * too (the RDMA layer's verbs backend chooses its device with the verbs
	 * core's --ib-dev, --ib-port, --ib-gid).  --list shows them after
	 * .options; the parameters block leaves them out (the env block's device
	 * names what they chose). */
	const struct ng_option *const *reads;
	/* Optional: the (string) option naming a module this one wraps (emu:
	 * "emu-base"); the wrapped module's options are read too. */
	const char *wraps;
	unsigned caps; /* NG_CAP_* */
	/* An instance runs a thread of its own that never calls MPI (mpirma's
	 * watchdog): under an MPI launch, MPI is initialised with
	 * MPI_THREAD_FUNNELED for it, otherwise with MPI_THREAD_SINGLE (Open MPI
	 * 4.1's point-to-point path is 25 ns longer under FUNNELED). */
	bool threads;
	size_t max_msg;   /* 0 = unlimited; an instance may lower it */
	size_t hdr_bytes; /* per-message header bytes on the wire (informative) */
	/* Optional: the number of report()'s block that bounds every time
	 * measured over the module (emu: "overshoot_us", how late its injected
	 * delays end), and that bound's name in the rows' uncertainty
	 * ("emu_overshoot"): the driver widens every time by it. */
	const char *bound_key, *bound_name;
	/* The operations, when the executable holds them (.plugin NULL); NULL
	 * otherwise.  Whoever opens the module takes them from
	 * ng_module_impl() (core/plugin.h), which covers both. */
	const struct ng_module_ops *ops;
};

/*
 * A module's operations: its code, which a plugin exports (by name,
 * "module:NAME") when the module's libraries are not the executable's.
 * open, close, alloc and free are required; the rest as the capabilities
 * say.  Several modules may share a table (or its sub-tables).
 */
struct ng_module_ops {
	/* Collective over all ranks.  Creates the instance of module @m (the
	 * executable's descriptor) and connects it to every other rank
	 * (exchanging addresses over env->boot), or, with env->connect_lazy and
	 * a module that can, only exchanges the addresses and connects to a
	 * peer when an operation first names it (tcp).  On failure the error is
	 * already reported and nothing is left allocated. */
	ng_status (*open)(const struct ng_module *m, const struct ng_module_env *env,
	                  struct ng_comm **comm_p);
	/* Releases everything the instance holds; not collective; c is invalid
	 * afterwards.  Buffers not yet freed are released too. */
	void (*close)(struct ng_comm *c);

	/* Communication memory of at least @len bytes, aligned to 64 bytes (page
	 * aligned for @len >= 4096), registered where the network needs it.
	 * Contents undefined. */
	ng_status (*alloc)(struct ng_comm *c, size_t len, void **buf_p);
	void (*free)(struct ng_comm *c, void *buf);

	/* Two-sided operations (NG_CAP_CHANNEL): struct ng_msg_ops. */
	const struct ng_msg_ops *msg;

	/* Optional (NG_CAP_ONESIDED): MPI-2 style one-sided operations. */
	const struct ng_rma_ops *rma;

	/* Optional: what the module adds to the result file, called on the
	 * reporting rank only, never inside a timed region, not collective.
	 * report() returns a new JSON object that the driver stores under the
	 * module's name (e.g. the parameters of a performance model the module
	 * measured in open(), its counters), or NULL; it is called after open()
	 * and again before the file is finished.  A key "setup" of the block,
	 * an object, holds what configures the module's data path beyond its
	 * options (ucx: the UCX_* environment, the transports and protocol
	 * thresholds UCX chose): ngauge compare flags every difference in it
	 * between two results, as it does the env block's.  report_row() adds keys to the
	 * row of @size before the pattern commits it (ng_row_number,
	 * ng_row_json of core/results.h), e.g. that model's prediction next to
	 * what the pattern measured. */
	struct json_t *(*report)(struct ng_comm *c);
	void (*report_row)(struct ng_comm *c, size_t size, struct ng_row *row);
	/* Optional (NG_CAP_ALLTOALL): the module's own personalised all-to-all,
	 * a native collective (the mpi module: MPI_Alltoall), for patterns that
	 * compare their algorithms with it.  Collective over all ranks, blocking.
	 * @sbuf holds size blocks of @block bytes, block j for rank j; on return
	 * block j of @rbuf holds the block rank j sent for this rank (the layout
	 * of MPI_Alltoall with a contiguous type); the own block is copied.
	 * Both buffers come from alloc(), hold size * @block bytes and do not
	 * overlap.  @block is at most max_msg.  Errors as send/recv, reported
	 * once.  Hot path rules apply. */
	ng_status (*alltoall)(struct ng_comm *c, const void *sbuf, void *rbuf, size_t block);
	/* Optional (NG_CAP_COLL): the module's own collective @op (the mpi
	 * module: MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather,
	 * MPI_Reduce_scatter_block, MPI_Barrier, MPI_Gather, MPI_Scatter), for
	 * patterns that compare their algorithms with it.  Collective over all
	 * ranks, blocking.  @count elements of @type per block, reductions are
	 * sums, rooted operations have root @root:
	 *   allreduce       @sbuf: count elements -> @rbuf: their sum, every rank
	 *   bcast           @rbuf: count elements, the root's on return (in place;
	 *                   @sbuf unused)
	 *   reduce          @sbuf: count elements -> the root's @rbuf: their sum
	 *   allgather       @sbuf: count elements -> @rbuf: size blocks, block j
	 *                   rank j's
	 *   reduce_scatter  @sbuf: size blocks -> @rbuf: the sum of block (this
	 *                   rank) over all ranks
	 *   barrier         no data (@count 0, buffers unused)
	 *   gather          @sbuf: count elements -> the root's @rbuf: size blocks
	 *   scatter         the root's @sbuf: size blocks -> @rbuf: block (this rank)
	 * Buffers come from alloc() and do not overlap; a block's bytes are at
	 * most max_msg.  Errors as send/recv, reported once.  Hot path rules
	 * apply. */
	ng_status (*coll)(struct ng_comm *c, enum ng_coll_op op, enum ng_coll_type type, const void *sbuf,
	                  void *rbuf, size_t count, int root);
	/* Optional: the instance's own state in one short phrase into @buf
	 * ("2 of 8 receive buffers posted, 16384 bytes unsent to rank 1"), for
	 * the run's watchdog (core/watchdog.h) when the rank waits without
	 * progress.  Called from the watchdog's thread while the main thread
	 * is inside the module: it reads plain counters only, takes no lock,
	 * calls no library and allocates nothing. */
	void (*stall)(struct ng_comm *c, char *buf, size_t len);
};

/*
 * One-sided operations (MPI-2 semantics) for modules that offer them
 * (NG_CAP_ONESIDED): the rma module over ngauge's RDMA layer and mpirma over
 * the MPI library's own.  Patterns see only this table.
 *
 * Windows.  win_allocate() is collective over all ranks: every rank gets
 * @len bytes of window memory (zeroed, 8-byte aligned; it may differ per
 * rank, 0 allowed) that the module allocates and registers once, and the
 * window's handle.  win_free() is collective and frees the memory.  Several
 * windows may exist at once.
 *
 * Operations.  put/get/accumulate address [target_off, target_off + len) of
 * @target's window (bytes); they are legal only inside an access epoch to
 * @target (start..complete with @target in the group, fence..fence, or
 * lock..unlock) and complete at the epoch's closing call: the origin buffer
 * may be reused (put, accumulate) or holds the data (get) only then, and
 * the target sees the data after its matching closing call (wait, the
 * fence, or its own lock of the window after the unlock).  Origin buffers
 * may be any memory (the module copies small ones into registered memory or
 * registers large ones).  accumulate combines @count elements of @type with
 * @op element-wise and atomically per element with respect to other
 * accumulates to the same location (MPI's rule); a put is never torn with
 * respect to the target's reads after the epoch.
 *
 * Synchronisation.  Active target: fence (collective; it opens the next epoch
 * and closes the previous), or post(group)/wait for the exposure epoch at the
 * target and start(group)/complete for the access epoch at the origins;
 * @group lists @n distinct ranks, never the caller.  Passive target:
 * lock(target, exclusive)/unlock(target); shared locks of several origins
 * overlap, an exclusive one excludes all others.
 *
 * Errors, reported once with one line naming the problem: NG_ERR_USAGE for a
 * range outside the target's window, a rank outside the epoch's group or
 * outside 0..size-1, an operation outside an epoch, unlock without lock,
 * complete without start, wait without post; NG_ERR_TIMEOUT (the rma
 * module) when a peer stays silent for the run's timeout (start without a
 * matching post); NG_ERR_CANCELLED on SIGINT/SIGTERM.
 *
 * Bounds.  Where a module cannot return from a call that waits for a peer,
 * it ends the process instead once the run's timeout has passed, with one
 * line naming the call and the peers, exit status 1.  mpirma does so: MPI
 * has no timed or cancellable MPI_Win_start/complete/wait/fence/lock/
 * unlock (MPICH's MPI_Win_start waits for every post of its group), so a
 * watchdog thread of the instance ends it.  Patterns must not count on
 * getting NG_ERR_TIMEOUT back.
 *
 * Progress.  A passive-target epoch (lock, operations, unlock) may progress
 * only while its target is inside a call of the module: mpirma over MPICH
 * 4.0.2 (no passive-target progress) and rma --rma-design sendrecv.  A
 * pattern keeps a rank that others lock inside a call of the module
 * meanwhile (waiting in a fence of another window, say), never computing
 * outside it for longer than it means to delay them.
 *
 * mpirma needed no operation beyond these: MPI-2's calls map one to one
 * (assert arguments 0; groups as lists of ranks, which mpirma turns into
 * MPI groups once and keeps).
 *
 * Hot path: put/get/accumulate and the synchronisation calls do no
 * allocation, logging or option lookup on success.
 */
struct ng_win;

enum ng_rma_op { NG_RMA_SUM, NG_RMA_REPLACE, NG_RMA_MAX, NG_RMA_MIN };
enum ng_rma_type { NG_RMA_INT32, NG_RMA_INT64, NG_RMA_DOUBLE };

struct ng_rma_ops {
	ng_status (*win_allocate)(struct ng_comm *c, size_t len, void **base_p, struct ng_win **win_p);
	void (*win_free)(struct ng_comm *c, struct ng_win *w);
	ng_status (*put)(struct ng_comm *c, struct ng_win *w, int target, size_t target_off,
	                 const void *origin, size_t len);
	ng_status (*get)(struct ng_comm *c, struct ng_win *w, int target, size_t target_off, void *origin,
	                 size_t len);
	ng_status (*accumulate)(struct ng_comm *c, struct ng_win *w, int target, size_t target_off,
	                        const void *origin, size_t count, enum ng_rma_type type, enum ng_rma_op op);
	ng_status (*fence)(struct ng_comm *c, struct ng_win *w);
	ng_status (*post)(struct ng_comm *c, struct ng_win *w, const int *group, int n);
	ng_status (*start)(struct ng_comm *c, struct ng_win *w, const int *group, int n);
	ng_status (*complete)(struct ng_comm *c, struct ng_win *w);
	ng_status (*wait)(struct ng_comm *c, struct ng_win *w);
	ng_status (*lock)(struct ng_comm *c, struct ng_win *w, int target, bool exclusive);
	ng_status (*unlock)(struct ng_comm *c, struct ng_win *w, int target);
};

/* The one-sided table of an instance (NULL without NG_CAP_ONESIDED). */
static inline const struct ng_rma_ops *ng_rma(const struct ng_comm *c)
{
	return c->ops->rma;
}

/* Blocking send and receive of an instance whose module leaves them NULL:
 * isend/irecv, then wait (what ng_comm_set_ops puts into ng_comm.msg). */
static inline ng_status ng_msg_send_by_wait(struct ng_comm *c, int peer, const void *buf, size_t len)
{
	struct ng_req req;
	ng_status st = c->msg.isend(c, peer, buf, len, &req);

	return st != NG_OK ? st : c->msg.wait(c, &req);
}
static inline ng_status ng_msg_recv_by_wait(struct ng_comm *c, int peer, void *buf, size_t len)
{
	struct ng_req req;
	ng_status st = c->msg.irecv(c, peer, buf, len, &req);

	return st != NG_OK ? st : c->msg.wait(c, &req);
}

static inline void ng_comm_set_ops(struct ng_comm *c, const struct ng_module_ops *ops)
{
	c->ops = ops;
	c->msg = ops->msg ? *ops->msg : (struct ng_msg_ops){0};
	if (!c->msg.send && c->msg.isend && c->msg.wait)
		c->msg.send = ng_msg_send_by_wait;
	if (!c->msg.recv && c->msg.irecv && c->msg.wait)
		c->msg.recv = ng_msg_recv_by_wait;
}

static inline void ng_comm_init(struct ng_comm *c, const struct ng_module *m, const struct ng_module_ops *ops,
                                int rank, int size, const volatile sig_atomic_t *cancel)
{
	c->mod = m;
	ng_comm_set_ops(c, ops);
	c->rank = rank;
	c->size = size;
	c->caps = m->caps;
	c->max_msg = m->max_msg;
	c->spins = (m->caps & NG_CAP_MPI) != 0;
	c->pins = (m->caps & NG_CAP_REGMEM) != 0;
	c->cancel = cancel;
	ng_where_init(&c->where);
}

/* Convenience wrappers: the only way patterns call a module.  Each marks
 * the call in c->where for the run's watchdog (base/where.h: two relaxed
 * stores, nothing else). */
static inline ng_status ng_send(struct ng_comm *c, int peer, const void *buf, size_t len)
{
	ng_where_enter(&c->where, NG_AT_SEND, peer);
	ng_status st = c->msg.send(c, peer, buf, len);
	ng_where_leave(&c->where);
	return st;
}
static inline ng_status ng_recv(struct ng_comm *c, int peer, void *buf, size_t len)
{
	ng_where_enter(&c->where, NG_AT_RECV, peer);
	ng_status st = c->msg.recv(c, peer, buf, len);
	ng_where_leave(&c->where);
	return st;
}
static inline ng_status ng_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *r)
{
	ng_where_enter(&c->where, NG_AT_ISEND, peer);
	ng_status st = c->msg.isend(c, peer, buf, len, r);
	ng_where_leave(&c->where);
	return st;
}
static inline ng_status ng_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *r)
{
	ng_where_enter(&c->where, NG_AT_IRECV, peer);
	ng_status st = c->msg.irecv(c, peer, buf, len, r);
	ng_where_leave(&c->where);
	return st;
}
/* A test that finds nothing leaves the rank waiting (ng_where_poll): a
 * loop of them on a request that never completes is one wait. */
static inline ng_status ng_test(struct ng_comm *c, struct ng_req *r, bool *done_p)
{
	ng_status st = c->msg.test(c, r, done_p);
	if (st == NG_OK && !*done_p)
		ng_where_poll(&c->where, NG_AT_TEST);
	else
		ng_where_leave(&c->where);
	return st;
}
static inline ng_status ng_wait(struct ng_comm *c, struct ng_req *r)
{
	ng_where_enter_req(&c->where, NG_AT_WAIT);
	ng_status st = c->msg.wait(c, r);
	ng_where_leave(&c->where);
	return st;
}
static inline ng_status ng_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	return c->ops->alloc(c, len, buf_p);
}
static inline void ng_free(struct ng_comm *c, void *buf)
{
	if (buf)
		c->ops->free(c, buf);
}

static inline ng_status ng_alltoall(struct ng_comm *c, const void *sbuf, void *rbuf, size_t block)
{
	ng_where_enter(&c->where, NG_AT_ALLTOALL, -1);
	ng_status st = c->ops->alltoall(c, sbuf, rbuf, block);
	ng_where_leave(&c->where);
	return st;
}

static inline ng_status ng_coll(struct ng_comm *c, enum ng_coll_op op, enum ng_coll_type type,
                                const void *sbuf, void *rbuf, size_t count, int root)
{
	ng_where_enter(&c->where, NG_AT_COLL, -1);
	ng_status st = c->ops->coll(c, op, type, sbuf, rbuf, count, root);
	ng_where_leave(&c->where);
	return st;
}

/* Waits for @n requests (the module's waitall, else each in order); returns
 * the first error. */
ng_status ng_waitall(struct ng_comm *c, struct ng_req *reqs, size_t n);

/* Driver side: declares the options of @m in @a, its .options and .reads
 * tables, each table once however many modules list it.  Returns -1 on
 * out-of-memory. */
int ng_module_declare(struct ng_args *a, const struct ng_module *m);

#endif
