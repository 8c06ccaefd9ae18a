/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "mpi" module: two-sided messages over MPI point-to-point.
 *
 * The data path is MPI itself, with nothing around it: send is MPI_Send (or
 * MPI_Ssend with --mpi-ssend), recv is MPI_Recv, isend/irecv/test/wait are
 * MPI_Isend/MPI_Irecv/MPI_Test, and waitall hands a window's requests to
 * MPI_Testall in one call (chunks of NG_MPI_WAITALL), as osu_bw's and
 * osu_mbw_mr's MPI_Waitall does, instead of a test loop per request.
 * Every message uses tag 0 on the instance's own duplicate of
 * MPI_COMM_WORLD, so MPI's non-overtaking rule between two ranks is
 * exactly ngauge's "message order is the match".  Ranks are MPI_COMM_WORLD
 * ranks.  The native collective (NG_CAP_ALLTOALL) is MPI_Alltoall of bytes
 * on the same communicator; the native collectives of NG_CAP_COLL are
 * MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather,
 * MPI_Reduce_scatter_block, MPI_Barrier, MPI_Gather and MPI_Scatter there,
 * with MPI_SUM and MPI_INT32_T, MPI_INT64_T, MPI_FLOAT or MPI_DOUBLE.
 *
 * MPI is initialised by the MPI bootstrap (core/boot_mpi.c): NG_CAP_MPI makes
 * the driver use the MPI launch, and open() refuses to run without it.
 *
 * Sizes: counts above INT_MAX use the MPI-4 large-count calls (MPI_Send_c ...)
 * where the library has them; otherwise max_msg is INT_MAX.
 *
 * Errors: the communicator returns errors (MPI_ERRORS_RETURN), and so do
 * MPI_COMM_WORLD and MPI_COMM_SELF while the module is open (MPICH raises
 * MPI_Testall's errors there; close() puts their handlers back); they are
 * reported once with MPI_Error_string.  MPI_ERR_TRUNCATE and a short message
 * give NG_ERR_TRUNCATED, a failed process (MPIX_ERR_PROC_FAILED) gives
 * NG_ERR_PEER_LOST naming the peer, anything else NG_ERR_IO.
 *
 * Cancellation: MPI_Send/MPI_Recv cannot be interrupted, so a blocking call
 * ignores the cancel flag (the driver falls back to ending the job).  wait()
 * polls with MPI_Test and honours the flag: a pending receive is cancelled
 * with MPI_Cancel; a pending send is released with MPI_Request_free (MPI
 * finishes it in the background) and NG_ERR_CANCELLED is returned.
 * env->timeout_s is not applied: MPI has no per-call timeout, and a lost rank
 * is detected (or the job ended) by the MPI library and its launcher.
 *
 * Memory: alloc() is aligned_alloc (MPI needs no registration from us; UCX
 * and friends register on first use and cache it); close() frees leftovers.
 *
 * The instance and the operations are exported to modules/ (mpi_int.h): the
 * mpirma module's two-sided operations are these.
 */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <mpi.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "module.h"
#include "modules/mpi/mpi_desc.h"
#include "modules/mpi/mpi_int.h"
#include "options.h"
#include "status.h"

#define NG_MPI_TAG 0

/* Per-request state kept in struct ng_req.priv. */
struct ng_mpi_req {
	MPI_Request req;
	size_t len; /* expected bytes (receives) */
	int peer;
	bool is_recv;
};

static_assert(sizeof(struct ng_mpi_req) <= sizeof(((struct ng_req *)0)->priv),
              "struct ng_mpi_req does not fit in struct ng_req.priv");
static_assert(alignof(struct ng_mpi_req) <= alignof(struct ng_req),
              "struct ng_mpi_req needs more alignment than struct ng_req");

static inline struct ng_mpi *ng_mpi_of(struct ng_comm *c)
{
	return ng_container_of(c, struct ng_mpi, base);
}

static inline struct ng_mpi_req *ng_mpi_req_of(struct ng_req *r)
{
	return (struct ng_mpi_req *)(void *)r->priv;
}

ng_status ng_mpi_report(const char *who, const char *call, int peer, int rc)
{
	char msg[MPI_MAX_ERROR_STRING];
	ng_status st = ng_mpi_error(rc, msg, sizeof(msg));

	if (st == NG_ERR_PEER_LOST)
		ng_error("%s: %s: peer rank %d lost: %s", who, call, peer, msg);
	else if (peer >= 0)
		ng_error("%s: %s with rank %d: %s", who, call, peer, msg);
	else
		ng_error("%s: %s: %s", who, call, msg);
	return st;
}

static ng_status __attribute__((noinline, cold)) ng_mpi_fail(const char *call, int peer, int rc)
{
	return ng_mpi_report("mpi", call, peer, rc);
}

static ng_status __attribute__((noinline, cold)) ng_mpi_short(int peer, size_t got, size_t len)
{
	ng_error("mpi: message from rank %d has %zu bytes, expected %zu", peer, got, len);
	return NG_ERR_TRUNCATED;
}

/*
 * Number of bytes a completed receive delivered.
 *
 * MPICH (3.0 on, its own ABI) keeps the byte count in the public fields
 * count_lo and count_hi_and_cancelled of MPI_Status (MPIR_STATUS_GET_COUNT in
 * src/include/mpir_status.h).  Reading them directly instead of calling
 * MPI_Get_count saves about 1-2% of a 1-byte shared-memory ping-pong, which
 * the "within 3% of a bare MPI ping-pong" requirement cannot afford.
 * Open MPI (1.7 to 5.0, its own ABI) keeps the byte count in _ucount
 * (OMPI_STATUS_SET_COUNT in ompi/request/request.h); MPI_Get_count there
 * checks its arguments and divides by the type's size, twice per round trip
 * on the critical path (the client's and the echoing rank's receive).  Other
 * libraries (and either built for the MPI-5 standard ABI) use MPI_Get_count.
 */
static inline size_t ng_mpi_count(const MPI_Status *st)
{
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 30000000 && !defined(MPI_ABI_VERSION)
	return ((size_t)((unsigned int)st->count_hi_and_cancelled >> 1) << (8 * sizeof(int))) +
	       (unsigned int)st->count_lo;
#elif defined(OMPI_MAJOR_VERSION) && (OMPI_MAJOR_VERSION > 1 || OMPI_MINOR_VERSION >= 7) &&                  \
    OMPI_MAJOR_VERSION <= 5 && !defined(MPI_ABI_VERSION)
	return st->_ucount;
#elif NG_MPI_LARGE_COUNT
	MPI_Count n = 0;

	MPI_Get_count_c(st, MPI_BYTE, &n);
	return n < 0 ? 0 : (size_t)n;
#else
	int n = 0;

	MPI_Get_count(st, MPI_BYTE, &n);
	return n < 0 ? 0 : (size_t)n;
#endif
}

/* Checks the delivered size of a completed receive. */
static inline ng_status ng_mpi_check_count(const MPI_Status *st, int peer, size_t len)
{
	size_t got = ng_mpi_count(st);

	return got == len ? NG_OK : ng_mpi_short(peer, got, len);
}

static ng_status ng_mpi_send(struct ng_comm *c, int peer, const void *buf, size_t len)
{
	struct ng_mpi *m = ng_mpi_of(c);
	int rc;

#if NG_MPI_LARGE_COUNT
	if (__builtin_expect(len > INT_MAX, 0)) {
		rc = m->ssend ? MPI_Ssend_c(buf, (MPI_Count)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm)
		              : MPI_Send_c(buf, (MPI_Count)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm);
		return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail("MPI_Send_c", peer, rc);
	}
#endif
	if (__builtin_expect(m->ssend, 0))
		rc = MPI_Ssend(buf, (int)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm);
	else
		rc = MPI_Send(buf, (int)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm);
	return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail("MPI_Send", peer, rc);
}

static ng_status ng_mpi_recv(struct ng_comm *c, int peer, void *buf, size_t len)
{
	struct ng_mpi *m = ng_mpi_of(c);
	MPI_Status st;
	int rc;

#if NG_MPI_LARGE_COUNT
	if (__builtin_expect(len > INT_MAX, 0)) {
		rc = MPI_Recv_c(buf, (MPI_Count)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm, &st);
		if (rc != MPI_SUCCESS)
			return ng_mpi_fail("MPI_Recv_c", peer, rc);
		return ng_mpi_check_count(&st, peer, len);
	}
#endif
	rc = MPI_Recv(buf, (int)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm, &st);
	if (rc != MPI_SUCCESS)
		return ng_mpi_fail("MPI_Recv", peer, rc);
	return ng_mpi_check_count(&st, peer, len);
}

ng_status ng_mpi_alltoall(struct ng_comm *c, const void *sbuf, void *rbuf, size_t block)
{
	struct ng_mpi *m = ng_mpi_of(c);
	int rc;

#if NG_MPI_LARGE_COUNT
	if (__builtin_expect(block > INT_MAX, 0)) {
		rc = MPI_Alltoall_c(sbuf, (MPI_Count)block, MPI_BYTE, rbuf, (MPI_Count)block, MPI_BYTE,
		                    m->comm);
		return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail("MPI_Alltoall_c", -1, rc);
	}
#endif
	rc = MPI_Alltoall(sbuf, (int)block, MPI_BYTE, rbuf, (int)block, MPI_BYTE, m->comm);
	return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail("MPI_Alltoall", -1, rc);
}

ng_status ng_mpi_coll(struct ng_comm *c, enum ng_coll_op op, enum ng_coll_type type, const void *sbuf,
                      void *rbuf, size_t count, int root)
{
	static const char *const names[NG_COLL_NOPS] = {
	    "MPI_Allreduce", "MPI_Bcast",  "MPI_Reduce",  "MPI_Allgather", "MPI_Reduce_scatter_block",
	    "MPI_Barrier",   "MPI_Gather", "MPI_Scatter",
	};
	struct ng_mpi *m = ng_mpi_of(c);
	MPI_Datatype dt = type == NG_COLL_INT32   ? MPI_INT32_T
	                  : type == NG_COLL_INT64 ? MPI_INT64_T
	                  : type == NG_COLL_FLOAT ? MPI_FLOAT
	                                          : MPI_DOUBLE;
	int n = (int)count, rc = MPI_SUCCESS;

	switch (op) {
	case NG_COLL_ALLREDUCE:
		rc = MPI_Allreduce(sbuf, rbuf, n, dt, MPI_SUM, m->comm);
		break;
	case NG_COLL_BCAST:
		rc = MPI_Bcast(rbuf, n, dt, root, m->comm);
		break;
	case NG_COLL_REDUCE:
		rc = MPI_Reduce(sbuf, rbuf, n, dt, MPI_SUM, root, m->comm);
		break;
	case NG_COLL_ALLGATHER:
		rc = MPI_Allgather(sbuf, n, dt, rbuf, n, dt, m->comm);
		break;
	case NG_COLL_REDUCE_SCATTER:
		rc = MPI_Reduce_scatter_block(sbuf, rbuf, n, dt, MPI_SUM, m->comm);
		break;
	case NG_COLL_BARRIER:
		rc = MPI_Barrier(m->comm);
		break;
	case NG_COLL_GATHER:
		rc = MPI_Gather(sbuf, n, dt, rbuf, n, dt, root, m->comm);
		break;
	case NG_COLL_SCATTER:
		rc = MPI_Scatter(sbuf, n, dt, rbuf, n, dt, root, m->comm);
		break;
	default:
		return NG_ERR_USAGE;
	}
	return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail(names[op], -1, rc);
}

static ng_status ng_mpi_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *r)
{
	struct ng_mpi *m = ng_mpi_of(c);
	struct ng_mpi_req *q = ng_mpi_req_of(r);
	int rc;

	q->len = len;
	q->peer = peer;
	q->is_recv = false;
#if NG_MPI_LARGE_COUNT
	if (__builtin_expect(len > INT_MAX, 0)) {
		rc = MPI_Isend_c(buf, (MPI_Count)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm, &q->req);
		return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail("MPI_Isend_c", peer, rc);
	}
#endif
	rc = MPI_Isend(buf, (int)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm, &q->req);
	return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail("MPI_Isend", peer, rc);
}

static ng_status ng_mpi_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *r)
{
	struct ng_mpi *m = ng_mpi_of(c);
	struct ng_mpi_req *q = ng_mpi_req_of(r);
	int rc;

	q->len = len;
	q->peer = peer;
	q->is_recv = true;
#if NG_MPI_LARGE_COUNT
	if (__builtin_expect(len > INT_MAX, 0)) {
		rc = MPI_Irecv_c(buf, (MPI_Count)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm, &q->req);
		return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail("MPI_Irecv_c", peer, rc);
	}
#endif
	rc = MPI_Irecv(buf, (int)len, MPI_BYTE, peer, NG_MPI_TAG, m->comm, &q->req);
	return rc == MPI_SUCCESS ? NG_OK : ng_mpi_fail("MPI_Irecv", peer, rc);
}

/* Result of a completed request. */
static inline ng_status ng_mpi_done(struct ng_mpi_req *q, int rc, const MPI_Status *st)
{
	if (rc != MPI_SUCCESS)
		return ng_mpi_fail(q->is_recv ? "MPI_Test (receive)" : "MPI_Test (send)", q->peer, rc);
	if (q->is_recv)
		return ng_mpi_check_count(st, q->peer, q->len);
	return NG_OK;
}

static ng_status ng_mpi_test(struct ng_comm *c, struct ng_req *r, bool *done_p)
{
	struct ng_mpi_req *q = ng_mpi_req_of(r);
	MPI_Status st;
	int flag = 0;
	int rc;

	(void)c; /* MPI progresses on its own */
	rc = MPI_Test(&q->req, &flag, &st);
	if (rc != MPI_SUCCESS) {
		*done_p = true;
		return ng_mpi_done(q, rc, &st);
	}
	*done_p = flag != 0;
	return flag ? ng_mpi_done(q, rc, &st) : NG_OK;
}

/* wait() saw the cancel flag: end @q so the caller may free its buffer. */
static ng_status __attribute__((noinline, cold)) ng_mpi_abandon(struct ng_mpi_req *q)
{
	if (q->is_recv) {
		/* Completes promptly: cancelled, or delivered meanwhile. */
		MPI_Cancel(&q->req);
		MPI_Wait(&q->req, MPI_STATUS_IGNORE);
	} else {
		/* Cancelling sends is deprecated; MPI completes it on its own. */
		MPI_Request_free(&q->req);
	}
	return NG_ERR_CANCELLED;
}

static ng_status ng_mpi_wait(struct ng_comm *c, struct ng_req *r)
{
	struct ng_mpi_req *q = ng_mpi_req_of(r);
	const volatile sig_atomic_t *cancel = c->cancel;
	MPI_Status st;
	int flag = 0;
	int rc;

	for (;;) {
		rc = MPI_Test(&q->req, &flag, &st);
		if (rc != MPI_SUCCESS || flag)
			return ng_mpi_done(q, rc, &st);
		if (cancel && *cancel)
			return ng_mpi_abandon(q);
	}
}

/* waitall()'s chunk @k of requests from @r failed in MPI_Testall (rc):
 * each request's own error from its status, a pending one waited for
 * alone.  Cold path. */
static ng_status __attribute__((noinline, cold))
ng_mpi_waitall_failed(struct ng_comm *c, struct ng_mpi *m, struct ng_req *r, size_t k, int rc)
{
	ng_status first = NG_OK, st;

	for (size_t i = 0; i < k; i++) {
		struct ng_mpi_req *q = ng_mpi_req_of(&r[i]);
		int e = rc == MPI_ERR_IN_STATUS ? m->wst[i].MPI_ERROR : rc;

		q->req = m->wreq[i];
		if (e == MPI_ERR_PENDING || (rc != MPI_ERR_IN_STATUS && q->req != MPI_REQUEST_NULL))
			st = ng_mpi_wait(c, &r[i]);
		else
			st = ng_mpi_done(q, e, &m->wst[i]);
		if (st != NG_OK && first == NG_OK)
			first = st;
	}
	return first;
}

/* MPI_Testall over chunks of the requests; the cancel flag ends every
 * request still pending as wait() does. */
static ng_status ng_mpi_waitall(struct ng_comm *c, struct ng_req *r, size_t n)
{
	struct ng_mpi *m = ng_mpi_of(c);
	const volatile sig_atomic_t *cancel = c->cancel;
	ng_status first = NG_OK, st;

	for (size_t at = 0; at < n; at += NG_MPI_WAITALL) {
		size_t k = n - at < NG_MPI_WAITALL ? n - at : NG_MPI_WAITALL;
		int flag = 0, rc;

		for (size_t i = 0; i < k; i++)
			m->wreq[i] = ng_mpi_req_of(&r[at + i])->req;
		for (;;) {
			rc = MPI_Testall((int)k, m->wreq, &flag, m->wst);
			if (rc != MPI_SUCCESS || flag)
				break;
			if (cancel && *cancel) {
				/* nothing was modified: every handle is still the caller's */
				for (size_t i = at; i < n; i++)
					ng_mpi_abandon(ng_mpi_req_of(&r[i]));
				return NG_ERR_CANCELLED;
			}
		}
		if (rc != MPI_SUCCESS) {
			st = ng_mpi_waitall_failed(c, m, r + at, k, rc);
		} else {
			st = NG_OK;
			for (size_t i = 0; i < k; i++) {
				struct ng_mpi_req *q = ng_mpi_req_of(&r[at + i]);

				q->req = m->wreq[i];
				if (q->is_recv && st == NG_OK)
					st = ng_mpi_check_count(&m->wst[i], q->peer, q->len);
			}
		}
		if (st != NG_OK && first == NG_OK)
			first = st;
	}
	return first;
}

ng_status ng_mpi_alloc(struct ng_comm *c, size_t len, void **buf_p)
{
	struct ng_mpi *m = ng_mpi_of(c);
	size_t align = len >= 4096 ? (size_t)sysconf(_SC_PAGESIZE) : 64;
	size_t rounded;
	void *buf;

	if (len > SIZE_MAX - align) {
		ng_error("mpi: cannot allocate %zu bytes", len);
		return NG_ERR_NOMEM;
	}
	/* aligned_alloc wants a multiple of the alignment; 0 bytes gives a block. */
	rounded = (len + align - 1) / align * align;
	if (!rounded)
		rounded = align;

	if (m->nbufs == m->capbufs) {
		size_t cap = m->capbufs ? 2 * m->capbufs : 8;
		void **bufs = realloc(m->bufs, cap * sizeof(*bufs));

		if (!bufs) {
			ng_error("mpi: out of memory");
			return NG_ERR_NOMEM;
		}
		m->bufs = bufs;
		m->capbufs = cap;
	}
	buf = aligned_alloc(align, rounded);
	if (!buf) {
		ng_error("mpi: cannot allocate %zu bytes", len);
		return NG_ERR_NOMEM;
	}
	m->bufs[m->nbufs++] = buf;
	*buf_p = buf;
	return NG_OK;
}

void ng_mpi_free(struct ng_comm *c, void *buf)
{
	struct ng_mpi *m = ng_mpi_of(c);

	for (size_t i = m->nbufs; i-- > 0;) {
		if (m->bufs[i] == buf) {
			m->bufs[i] = m->bufs[--m->nbufs];
			free(buf);
			return;
		}
	}
	ng_error("mpi: free of %p, which this instance did not allocate", buf);
	assert(!"foreign buffer");
}

/* Puts back the handlers of MPI_COMM_WORLD and MPI_COMM_SELF that open()
 * found, and frees open()'s references to them. */
static void ng_mpi_errhandlers_restore(struct ng_mpi *m)
{
	if (m->world_eh != MPI_ERRHANDLER_NULL) {
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, m->world_eh);
		MPI_Errhandler_free(&m->world_eh);
	}
	if (m->self_eh != MPI_ERRHANDLER_NULL) {
		MPI_Comm_set_errhandler(MPI_COMM_SELF, m->self_eh);
		MPI_Errhandler_free(&m->self_eh);
	}
}

void ng_mpi_fini(struct ng_mpi *m)
{
	int finalized = 0;

	for (size_t i = 0; i < m->nbufs; i++)
		free(m->bufs[i]);
	free(m->bufs);
	m->bufs = NULL;
	m->nbufs = m->capbufs = 0;
	MPI_Finalized(&finalized);
	if (finalized)
		return;
	if (m->comm != MPI_COMM_NULL)
		MPI_Comm_free(&m->comm);
	ng_mpi_errhandlers_restore(m);
}

static void ng_mpi_close(struct ng_comm *c)
{
	struct ng_mpi *m = ng_mpi_of(c);

	ng_mpi_fini(m);
	free(m);
}

ng_status ng_mpi_init(struct ng_mpi *m, const struct ng_module *mod, const struct ng_module_ops *ops,
                      const struct ng_module_env *env)
{
	int initialized = 0, finalized = 0;
	int rank, size, rc;
	ng_status st;

	m->comm = MPI_COMM_NULL;
	m->world_eh = m->self_eh = MPI_ERRHANDLER_NULL;
	MPI_Initialized(&initialized);
	MPI_Finalized(&finalized);
	if (!initialized || finalized) {
		ng_error("%s: MPI is not initialised; run under mpiexec or srun", mod->name);
		return NG_ERR_USAGE;
	}

	rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
	if (rc != MPI_SUCCESS) {
		m->comm = MPI_COMM_NULL;
		return ng_mpi_fail("MPI_Comm_dup", -1, rc);
	}
	MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
	/* MPICH raises MPI_Testall's errors on a communicator of its own
	 * choosing (MPI_COMM_WORLD's handler, fatal by default): returned too
	 * while the module is open */
	MPI_Comm_get_errhandler(MPI_COMM_WORLD, &m->world_eh);
	MPI_Comm_get_errhandler(MPI_COMM_SELF, &m->self_eh);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Comm_rank(m->comm, &rank);
	MPI_Comm_size(m->comm, &size);
	if (env->boot && (env->boot->rank != rank || env->boot->size != size)) {
		ng_error("%s: bootstrap says rank %d of %d, MPI_COMM_WORLD says %d of %d", mod->name,
		         env->boot->rank, env->boot->size, rank, size);
		st = NG_ERR_INTERNAL;
		goto err_free_comm;
	}

	/* env->args may be NULL (unit tests): defaults apply. */
	if (env->args) {
		struct ng_mpi_config mc;

		ng_config_read(env->args, ng_mpi_options, &mc);
		m->ssend = mc.ssend;
	}
	ng_comm_init(&m->base, mod, ops, rank, size, env->cancel);
	ng_boot_mpi_version(m->base.device, sizeof(m->base.device));
	return NG_OK;

err_free_comm:
	MPI_Comm_free(&m->comm);
	ng_mpi_errhandlers_restore(m);
	return st;
}

static ng_status ng_mpi_open(const struct ng_module *mod, const struct ng_module_env *env,
                             struct ng_comm **comm_p)
{
	struct ng_mpi *m = calloc(1, sizeof(*m));
	ng_status st;

	if (!m) {
		ng_error("mpi: out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_mpi_init(m, mod, &ng_module_ops_mpi, env);
	if (st != NG_OK) {
		free(m);
		return st;
	}
	*comm_p = &m->base;
	return NG_OK;
}

const struct ng_msg_ops ng_mpi_msg_ops = {
    .send = ng_mpi_send,
    .recv = ng_mpi_recv,
    .isend = ng_mpi_isend,
    .irecv = ng_mpi_irecv,
    .test = ng_mpi_test,
    .wait = ng_mpi_wait,
    .waitall = ng_mpi_waitall,
};

/* The operations of the executable's descriptor ng_module_mpi
 * (mpi_desc.c), ngauge-mpi.so's entry "module:mpi". */
_Static_assert(NG_MPI_MAX_MSG == NG_MPI_DESC_MAX_MSG,
               "mpi_desc.h and mpi_int.h agree on the largest message");

const struct ng_module_ops ng_module_ops_mpi = {
    .open = ng_mpi_open,
    .close = ng_mpi_close,
    .alloc = ng_mpi_alloc,
    .free = ng_mpi_free,
    .msg = &ng_mpi_msg_ops,
    .alltoall = ng_mpi_alltoall,
    .coll = ng_mpi_coll,
};
