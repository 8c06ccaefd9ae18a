/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "shm" backend of the RDMA layer (rdma.h): ranks on one host.
 *
 * Memory.  mem_alloc() memory lives in a memfd segment of its own, mapped
 * MAP_SHARED.  Every rank also keeps a control segment: a table of its
 * segments (fd number, length, generation) and a table of its registrations
 * (kind, segment, address, length, generation).  At open every rank gets a
 * descriptor of each peer's control segment with pidfd_getfd() (or, where
 * that system call is missing, by opening /proc/PID/fd/N) and maps it; a
 * peer's data segment is mapped the same way the first time it is accessed
 * (and again when its generation shows it was replaced).
 *
 * Registrations.  reg() of memory inside a segment refers to the segment;
 * any other memory is reached with process_vm_writev/readv (cross-memory
 * attach, CMA), which open() probes (it fails under Yama ptrace_scope >= 1
 * or a container's default seccomp profile: then NG_RDMA_CAP_ANYMEM is
 * off and reg() of such memory says why).  A remote descriptor is (address
 * or offset, length, key = table index << 32 | generation, segment).  Every
 * access checks the key against the target's own registration table (a
 * live entry with that generation) and the range against the entry's
 * length: a stale, forged or out-of-bounds access is refused and touches
 * nothing.  Generations are odd while an entry is live, even after dereg.
 *
 * Operations complete when they return (copies, or one CMA system call):
 * every ticket is complete at once, flush is a memory fence, and the target
 * is never involved (NG_RDMA_CAP_PROGRESS).  The notice of a write is a
 * release store of its last 8 bytes after the copy of the rest (on CMA
 * memory: a second process_vm_writev of those 8 bytes); a write of blocks
 * does so piece by piece.  Atomics are
 * __atomic operations on the mapped words (segment memory only).
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "module.h"
#include "modules/rdmalayer/rdma.h"
#include "peer.h"

#define SHM_NSEG  1024u
#define SHM_NREG  16384u
#define SHM_MAGIC 0x6e67726d73686d31ull /* "ngrmshm1" */
#define SHM_CMA   UINT32_MAX            /* segment index of CMA registrations */

struct shm_seg_ent {
	uint64_t gen; /* odd: live */
	uint64_t len;
	int32_t fd; /* in the owner's process */
	uint32_t pad;
	uint64_t pad2;
};

struct shm_reg_ent {
	uint64_t gen;  /* odd: live */
	uint64_t addr; /* segment offset, or virtual address (CMA) */
	uint64_t len;
	uint32_t seg; /* SHM_CMA: CMA */
	uint32_t pad;
};

struct shm_ctl {
	uint64_t magic;
	uint64_t pad[7];
	struct shm_seg_ent seg[SHM_NSEG];
	struct shm_reg_ent reg[SHM_NREG];
};

/* A local segment. */
struct shm_lseg {
	unsigned char *base;
	size_t len;
	int fd;
};

/* A mapping of a peer's segment. */
struct shm_map {
	unsigned char *base;
	size_t len;
	uint64_t gen;
};

struct shm_peer {
	pid_t pid;
	int pidfd;                 /* -1: none (pidfd_open missing) */
	const struct shm_ctl *ctl; /* its control segment, mapped */
	struct shm_map *maps;      /* [SHM_NSEG] */
};

struct shm_mr {
	struct ng_rdma_mr pub; /* first */
	uint32_t reg;          /* index in my registration table */
	uint32_t seg;          /* segment it lies in, SHM_CMA */
	bool owns_seg;         /* made by mem_alloc */
};

struct shm {
	struct ng_rdma base; /* first */
	struct shm_ctl *ctl; /* mine */
	int ctl_fd;
	struct shm_lseg lseg[SHM_NSEG];
	uint32_t *free_reg; /* stack of free registration indices */
	uint32_t nfree_reg;
	struct shm_peer *peers; /* [size] */
	size_t page;
};

/* What every rank publishes at open. */
struct shm_addr {
	int64_t pid;
	int32_t ctl_fd;
	int32_t status;
	uint64_t probe; /* address of a word for the CMA probe */
	char host[256];
};

static inline struct shm *shm_of(struct ng_rdma *r)
{
	return ng_container_of(r, struct shm, base);
}

/* ---- descriptors of a peer's files ---------------------------------- */

static int shm_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* A descriptor of file @fd of process @p. */
static int shm_peer_fd(const struct shm_peer *p, int fd)
{
	char path[64];
	int rc = -1;

#ifdef SYS_pidfd_getfd
	if (p->pidfd >= 0) {
		rc = (int)syscall(SYS_pidfd_getfd, p->pidfd, fd, 0);
		if (rc >= 0 || errno != ENOSYS)
			return rc;
	}
#endif
	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)p->pid, fd);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* Maps @len bytes of the peer's file @fd. */
static void *shm_peer_map(const struct shm_peer *p, int fd, size_t len, int prot)
{
	int lfd = shm_peer_fd(p, fd);
	void *m;

	if (lfd < 0)
		return NULL;
	m = mmap(NULL, len, prot, MAP_SHARED, lfd, 0);
	close(lfd);
	return m == MAP_FAILED ? NULL : m;
}

/* ---- memory ----------------------------------------------------------- */

static int shm_memfd(struct shm *s, size_t len, void **base_p)
{
	int fd = memfd_create("ngauge-rdma", MFD_CLOEXEC);
	void *m;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len) != 0) {
		close(fd);
		return -1;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return -1;
	}
	*base_p = m;
	return fd;
}

/* Enters a registration; NG_ERR_NOMEM (reported) when the table is full. */
static ng_status shm_reg_enter(struct shm *s, uint32_t seg, uint64_t addr, void *base, size_t len,
                               struct shm_mr **mr_p)
{
	struct shm_mr *mr;
	struct shm_reg_ent *e;
	uint64_t gen;

	if (!s->nfree_reg) {
		ng_error("%s: more than %u registrations at once", s->base.who, SHM_NREG);
		return NG_ERR_NOMEM;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		ng_error("%s: out of memory", s->base.who);
		return NG_ERR_NOMEM;
	}
	mr->reg = s->free_reg[--s->nfree_reg];
	mr->seg = seg;
	e = &s->ctl->reg[mr->reg];
	/* A seqlock's writer: the entry's even generation (left) is visible
	 * before any of its new fields, which readers check again after
	 * reading them (shm_target). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->addr, addr, __ATOMIC_RELAXED);
	__atomic_store_n(&e->len, len, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seg, seg, __ATOMIC_RELAXED);
	gen = e->gen + 1; /* odd: live */
	__atomic_store_n(&e->gen, gen, __ATOMIC_RELEASE);
	mr->pub.base = base;
	mr->pub.len = len;
	mr->pub.remote = (struct ng_rdma_rmr){
	    .addr = addr, .len = len, .key = (uint64_t)mr->reg << 32 | (uint32_t)gen, .aux = seg};
	*mr_p = mr;
	return NG_OK;
}

static void shm_reg_leave(struct shm *s, struct shm_mr *mr)
{
	struct shm_reg_ent *e = &s->ctl->reg[mr->reg];

	__atomic_store_n(&e->gen, e->gen + 1, __ATOMIC_RELEASE); /* even: gone */
	s->free_reg[s->nfree_reg++] = mr->reg;
	free(mr);
}

static ng_status shm_mem_alloc(struct ng_rdma *r, size_t len, struct ng_rdma_mr **mr_p)
{
	struct shm *s = shm_of(r);
	size_t plen = (len + s->page - 1) / s->page * s->page;
	struct shm_mr *mr;
	struct shm_seg_ent *e;
	uint32_t i;
	void *base;
	int fd;
	ng_status st;

	if (!plen)
		plen = s->page;
	for (i = 0; i < SHM_NSEG && s->lseg[i].base; i++)
		;
	if (i == SHM_NSEG) {
		ng_error("%s: more than %u memory segments", r->who, SHM_NSEG);
		return NG_ERR_NOMEM;
	}
	fd = shm_memfd(s, plen, &base);
	if (fd < 0) {
		ng_error("%s: shared memory of %zu bytes: %s", r->who, plen, strerror(errno));
		return NG_ERR_NOMEM;
	}
	s->lseg[i] = (struct shm_lseg){.base = base, .len = plen, .fd = fd};
	e = &s->ctl->seg[i];
	e->len = plen;
	e->fd = fd;
	__atomic_store_n(&e->gen, e->gen + 1, __ATOMIC_RELEASE);
	st = shm_reg_enter(s, i, 0, base, plen, &mr);
	if (st != NG_OK) {
		__atomic_store_n(&e->gen, e->gen + 1, __ATOMIC_RELEASE);
		munmap(base, plen);
		close(fd);
		s->lseg[i].base = NULL;
		return st;
	}
	mr->owns_seg = true;
	*mr_p = &mr->pub;
	return NG_OK;
}

/*
 * An interrupted rank leaves its memory published (registrations, segments):
 * the other ranks get the stop signal too, but may still be accessing it
 * until they see it, and a revoked key would end them with a fault the
 * interruption caused.  The process's end releases it.
 */
static bool shm_keep_published(const struct ng_rdma *r)
{
	return ng_watch_cancelled(&r->watch);
}

static void shm_mem_free(struct ng_rdma *r, struct ng_rdma_mr *pub)
{
	struct shm *s = shm_of(r);
	struct shm_mr *mr = (struct shm_mr *)pub;
	uint32_t i = mr->seg;
	struct shm_seg_ent *e = &s->ctl->seg[i];

	if (shm_keep_published(r))
		return;
	shm_reg_leave(s, mr);
	__atomic_store_n(&e->gen, e->gen + 1, __ATOMIC_RELEASE);
	munmap(s->lseg[i].base, s->lseg[i].len);
	close(s->lseg[i].fd);
	s->lseg[i] = (struct shm_lseg){.fd = -1};
}

static ng_status shm_reg(struct ng_rdma *r, void *buf, size_t len, struct ng_rdma_mr **mr_p)
{
	struct shm *s = shm_of(r);
	unsigned char *p = buf;
	struct shm_mr *mr;
	ng_status st;

	for (uint32_t i = 0; i < SHM_NSEG; i++) {
		const struct shm_lseg *g = &s->lseg[i];

		if (g->base && p >= g->base && len <= g->len && (size_t)(p - g->base) <= g->len - len) {
			st = shm_reg_enter(s, i, (uint64_t)(p - g->base), buf, len, &mr);
			if (st == NG_OK)
				*mr_p = &mr->pub;
			return st;
		}
	}
	if (!(r->caps & NG_RDMA_CAP_ANYMEM)) {
		ng_error("%s: memory outside the backend's segments needs cross-memory attach, which this "
		         "host forbids (ptrace restrictions)",
		         r->who);
		return NG_ERR_UNSUPPORTED;
	}
	st = shm_reg_enter(s, SHM_CMA, (uint64_t)(uintptr_t)buf, buf, len, &mr);
	if (st == NG_OK)
		*mr_p = &mr->pub;
	return st;
}

static void shm_dereg(struct ng_rdma *r, struct ng_rdma_mr *pub)
{
	if (shm_keep_published(r))
		return;
	shm_reg_leave(shm_of(r), (struct shm_mr *)pub);
}

/* ---- reaching a peer's memory ----------------------------------------- */

/* Where an access to [off, off + len) of @rm at @peer goes: *@addr_p is a
 * local mapping, or NULL with *@va_p the address for CMA.  Checks the key
 * against the peer's table and the range against the entry.  Cold parts
 * (first mapping of a segment, errors) are out of line. */
static ng_status shm_map_seg(struct shm *s, int peer, uint32_t seg);
static ng_status shm_refuse(struct shm *s, int peer, const struct ng_rdma_rmr *rm, uint64_t off,
                            uint64_t len);

static inline ng_status shm_target(struct shm *s, int peer, const struct ng_rdma_rmr *rm, uint64_t off,
                                   uint64_t len, unsigned char **addr_p, uint64_t *va_p)
{
	struct shm_peer *p = &s->peers[peer];
	uint64_t idx = rm->key >> 32;
	const struct shm_reg_ent *e;
	uint64_t gen, base, elen;
	uint32_t seg;
	ng_status st;

	if (idx >= SHM_NREG)
		return shm_refuse(s, peer, rm, off, len);
	e = &p->ctl->reg[idx];
	gen = __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE);
	base = __atomic_load_n(&e->addr, __ATOMIC_RELAXED);
	elen = __atomic_load_n(&e->len, __ATOMIC_RELAXED);
	seg = __atomic_load_n(&e->seg, __ATOMIC_RELAXED);
	/* The seqlock's reader: fields read while the entry was replaced
	 * (another generation by now) belong to no key. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&e->gen, __ATOMIC_RELAXED) != gen)
		return shm_refuse(s, peer, rm, off, len);
	if (!(gen & 1) || (uint32_t)gen != (uint32_t)rm->key || seg != (uint32_t)rm->aux || off > elen ||
	    len > elen - off)
		return shm_refuse(s, peer, rm, off, len);
	if (seg == SHM_CMA) {
		*addr_p = NULL;
		*va_p = base + off;
		return NG_OK;
	}
	if (p->maps[seg].gen != __atomic_load_n(&p->ctl->seg[seg].gen, __ATOMIC_ACQUIRE)) {
		st = shm_map_seg(s, peer, seg);
		if (st != NG_OK)
			return st;
	}
	if (base + elen > p->maps[seg].len)
		return shm_refuse(s, peer, rm, off, len);
	*addr_p = p->maps[seg].base + base + off;
	return NG_OK;
}

static ng_status shm_refuse(struct shm *s, int peer, const struct ng_rdma_rmr *rm, uint64_t off, uint64_t len)
{
	uint64_t idx = rm->key >> 32;
	const struct shm_reg_ent *e = idx < SHM_NREG ? &s->peers[peer].ctl->reg[idx] : NULL;
	uint64_t gen = e ? __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) : 0;

	if (!e || !(gen & 1) || (uint32_t)gen != (uint32_t)rm->key || e->seg != (uint32_t)rm->aux) {
		/* A peer that stopped first, interrupted, is no fault. */
		if (ng_watch_cancelled(&s->base.watch))
			return NG_ERR_CANCELLED;
		ng_error("%s: access to rank %d with a key it has not registered (stale or invalid)",
		         s->base.who, peer);
		return NG_ERR_USAGE;
	}
	return ng_rdma_bounds_error(&s->base, peer, &(struct ng_rdma_rmr){.len = e->len}, off, len);
}

static ng_status shm_map_seg(struct shm *s, int peer, uint32_t seg)
{
	struct shm_peer *p = &s->peers[peer];
	struct shm_map *m = &p->maps[seg];
	const struct shm_seg_ent *e = &p->ctl->seg[seg];
	uint64_t gen = __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE);
	size_t len = e->len;
	void *base;

	if (!(gen & 1)) {
		if (ng_watch_cancelled(&s->base.watch))
			return NG_ERR_CANCELLED;
		ng_error("%s: rank %d freed the memory being accessed", s->base.who, peer);
		return NG_ERR_USAGE;
	}
	base = shm_peer_map(p, e->fd, len, PROT_READ | PROT_WRITE);
	if (!base) {
		if (ng_watch_cancelled(&s->base.watch)) /* a peer that stopped first, interrupted */
			return NG_ERR_CANCELLED;
		ng_error("%s: cannot map a memory segment of rank %d: %s", s->base.who, peer,
		         strerror(errno));
		return NG_ERR_SYS;
	}
	if (m->base)
		munmap(m->base, m->len);
	*m = (struct shm_map){.base = base, .len = len, .gen = gen};
	return NG_OK;
}

static ng_status shm_cma_error(struct shm *s, int peer, const char *what)
{
	if (ng_watch_cancelled(&s->base.watch)) /* a peer that stopped first, interrupted */
		return NG_ERR_CANCELLED;
	ng_error("%s: %s rank %d's memory: %s", s->base.who, what, peer, strerror(errno));
	return errno == ESRCH ? NG_ERR_PEER_LOST : NG_ERR_SYS;
}

/* ---- operations ------------------------------------------------------- */

static inline uint64_t shm_ticket(struct shm *s, int peer)
{
	uint64_t t = ++s->base.issued[peer];

	s->base.completed[peer] = t;
	return t;
}

/* A write of blocks (NG_RDMA_BLOCKS): piece by piece, each body copied
 * before its notice word is stored (released). */
static ng_status shm_write_blocks(struct shm *s, int peer, const unsigned char *src, size_t total,
                                  unsigned char *dst, uint64_t va, size_t piece)
{
	for (size_t at = 0; at < total; at += piece) {
		size_t k = total - at < piece ? total - at : piece;
		uint64_t word;

		memcpy(&word, src + at + k - 8, 8);
		if (dst) {
			memcpy(dst + at, src + at, k - 8);
			__atomic_store_n((uint64_t *)(void *)(dst + at + k - 8), word, __ATOMIC_RELEASE);
		} else {
			struct iovec l = {(void *)(uintptr_t)(src + at), k - 8},
			             rv = {(void *)(uintptr_t)(va + at), k - 8};
			struct iovec lw = {&word, 8}, rw = {(void *)(uintptr_t)(va + at + k - 8), 8};

			if (k > 8 &&
			    process_vm_writev(s->peers[peer].pid, &l, 1, &rv, 1, 0) != (ssize_t)(k - 8))
				return shm_cma_error(s, peer, "cannot write to");
			if (process_vm_writev(s->peers[peer].pid, &lw, 1, &rw, 1, 0) != 8)
				return shm_cma_error(s, peer, "cannot write to");
		}
	}
	return NG_OK;
}

static ng_status shm_write(struct ng_rdma *r, int peer, const struct ng_rdma_iov *iov, unsigned n,
                           const struct ng_rdma_rmr *rm, uint64_t off, unsigned flags, uint64_t *t_p)
{
	struct shm *s = shm_of(r);
	size_t total = 0, body;
	unsigned char *dst = NULL;
	uint64_t va = 0, word = 0;
	ng_status st;

	for (unsigned i = 0; i < n; i++)
		total += iov[i].len;
	st = shm_target(s, peer, rm, off, total, &dst, &va);
	if (st != NG_OK)
		return st;
	if (flags & NG_RDMA_F_BLOCKS) {
		assert(n == 1 && total >= 8 && total % 8 == 0 && NG_RDMA_BLOCK_SHIFT(flags) >= 4);
		st = shm_write_blocks(s, peer, iov[0].addr, total, dst, va,
		                      (size_t)1 << NG_RDMA_BLOCK_SHIFT(flags));
		if (st == NG_OK)
			*t_p = shm_ticket(s, peer);
		return st;
	}
	assert(!(flags & NG_RDMA_NOTIFY) || total >= 8);
	body = (flags & NG_RDMA_NOTIFY) ? total - 8 : total;
	if (dst) {
		size_t at = 0;

		for (unsigned i = 0; i < n; i++) {
			size_t k = iov[i].len;

			if (at + k > body) {
				size_t head = at < body ? body - at : 0;

				memcpy(dst + at, iov[i].addr, head);
				memcpy((unsigned char *)&word + (at + head - body),
				       (const unsigned char *)iov[i].addr + head, k - head);
			} else {
				memcpy(dst + at, iov[i].addr, k);
			}
			at += k;
		}
		if (flags & NG_RDMA_NOTIFY)
			__atomic_store_n((uint64_t *)(void *)(dst + body), word, __ATOMIC_RELEASE);
	} else {
		struct iovec liov[NG_RDMA_IOV_MAX + 1];
		struct iovec riov;
		size_t at = 0, nl = 0;

		for (unsigned i = 0; i < n; i++) {
			size_t k = iov[i].len;

			if (at + k > body) {
				size_t head = at < body ? body - at : 0;

				if (head)
					liov[nl++] = (struct iovec){(void *)(uintptr_t)iov[i].addr, head};
				memcpy((unsigned char *)&word + (at + head - body),
				       (const unsigned char *)iov[i].addr + head, k - head);
			} else if (k) {
				liov[nl++] = (struct iovec){(void *)(uintptr_t)iov[i].addr, k};
			}
			at += k;
		}
		riov = (struct iovec){(void *)(uintptr_t)va, body};
		if (body && process_vm_writev(s->peers[peer].pid, liov, nl, &riov, 1, 0) != (ssize_t)body)
			return shm_cma_error(s, peer, "cannot write to");
		if (flags & NG_RDMA_NOTIFY) {
			struct iovec l = {&word, 8}, rv = {(void *)(uintptr_t)(va + body), 8};

			if (process_vm_writev(s->peers[peer].pid, &l, 1, &rv, 1, 0) != 8)
				return shm_cma_error(s, peer, "cannot write to");
		}
	}
	*t_p = shm_ticket(s, peer);
	return NG_OK;
}

static ng_status shm_read(struct ng_rdma *r, int peer, void *dst, const struct ng_rdma_mr *mr, size_t len,
                          const struct ng_rdma_rmr *rm, uint64_t off, uint64_t *t_p)
{
	struct shm *s = shm_of(r);
	unsigned char *src = NULL;
	uint64_t va = 0;
	ng_status st;

	st = shm_target(s, peer, rm, off, len, &src, &va);
	if (st != NG_OK)
		return st;
	if (src) {
		memcpy(dst, src, len);
	} else if (len) {
		struct iovec l = {dst, len}, rv = {(void *)(uintptr_t)va, len};

		if (process_vm_readv(s->peers[peer].pid, &l, 1, &rv, 1, 0) != (ssize_t)len)
			return shm_cma_error(s, peer, "cannot read from");
	}
	*t_p = shm_ticket(s, peer);
	return NG_OK;
}

static ng_status shm_atomic(struct ng_rdma *r, int peer, enum ng_rdma_aop aop, const struct ng_rdma_rmr *rm,
                            uint64_t off, uint64_t operand, uint64_t compare, uint64_t *old_p, uint64_t *t_p)
{
	struct shm *s = shm_of(r);
	unsigned char *a = NULL;
	uint64_t va = 0, *w;
	ng_status st;

	st = shm_target(s, peer, rm, off, 8, &a, &va);
	if (st != NG_OK)
		return st;
	if (!a || ((uintptr_t)a & 7)) {
		ng_error("%s: atomics need an aligned word of memory rank %d got from the backend", r->who,
		         peer);
		return NG_ERR_UNSUPPORTED;
	}
	w = (uint64_t *)(void *)a;
	if (aop == NG_RDMA_CAS) {
		uint64_t expected = compare;

		__atomic_compare_exchange_n(w, &expected, operand, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		*old_p = expected;
	} else {
		*old_p = __atomic_fetch_add(w, operand, __ATOMIC_ACQ_REL);
	}
	*t_p = shm_ticket(s, peer);
	return NG_OK;
}

static ng_status shm_progress(struct ng_rdma *r)
{
	(void)r;
	return NG_OK;
}

static ng_status shm_flush(struct ng_rdma *r, int peer)
{
	(void)r;
	(void)peer;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return NG_OK;
}

/* ---- open and close --------------------------------------------------- */

static void shm_be_close(struct ng_rdma *r)
{
	struct shm *s = shm_of(r);

	for (uint32_t i = 0; i < SHM_NSEG; i++)
		if (s->lseg[i].base) {
			munmap(s->lseg[i].base, s->lseg[i].len);
			close(s->lseg[i].fd);
		}
	for (int i = 0; s->peers && i < r->size; i++) {
		struct shm_peer *p = &s->peers[i];

		for (uint32_t k = 0; p->maps && k < SHM_NSEG; k++)
			if (p->maps[k].base)
				munmap(p->maps[k].base, p->maps[k].len);
		free(p->maps);
		if (p->ctl && i != r->rank)
			munmap((void *)(uintptr_t)p->ctl, sizeof(struct shm_ctl));
		if (p->pidfd >= 0)
			close(p->pidfd);
	}
	free(s->peers);
	if (s->ctl)
		munmap(s->ctl, sizeof(*s->ctl));
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	free(s->free_reg);
	ng_rdma_base_fini(r);
	free(s);
}

/* Connects to the peer of @a: its control segment and a CMA probe.
 * Reports nothing; *@why_p says what failed. */
static ng_status shm_connect(struct shm *s, int i, const struct shm_addr *a, bool *cma_p, const char **why_p)
{
	struct shm_peer *p = &s->peers[i];
	uint64_t word = 0;
	struct iovec l = {&word, 8}, rv = {(void *)(uintptr_t)a->probe, 8};

	p->pid = (pid_t)a->pid;
	p->pidfd = shm_pidfd_open(p->pid);
	p->maps = calloc(SHM_NSEG, sizeof(*p->maps));
	if (!p->maps) {
		*why_p = "out of memory";
		return NG_ERR_NOMEM;
	}
	p->ctl = shm_peer_map(p, a->ctl_fd, sizeof(struct shm_ctl), PROT_READ);
	if (!p->ctl) {
		*why_p = strerror(errno);
		return NG_ERR_SYS;
	}
	if (p->ctl->magic != SHM_MAGIC) {
		*why_p = "its control segment is not ngauge's";
		return NG_ERR_PROTO;
	}
	if (process_vm_readv(p->pid, &l, 1, &rv, 1, 0) != 8 || word != SHM_MAGIC)
		*cma_p = false;
	return NG_OK;
}

/* A peer's status from the exchange: one of ng_status, else NG_ERR_PROTO
 * (reported). */
static ng_status shm_peer_status(int peer, int32_t status)
{
	size_t v;

	if (ng_peer_slen("shm status", peer, status, 0, NG_STATUS_COUNT - 1, &v) != NG_OK)
		return NG_ERR_PROTO;
	return (ng_status)v;
}

static ng_status shm_be_open(const struct ng_rdma_backend *be, const struct ng_rdma_conf *cf,
                             struct ng_boot *boot, struct ng_rdma **r_p)
{
	struct shm *s = calloc(1, sizeof(*s));
	struct shm_addr mine = {0}, *all = NULL;
	const char *why = NULL;
	bool cma = true, untrusted;
	ng_status st = NG_OK;

	*r_p = NULL;
	if (!s) {
		ng_error("%s: out of memory", cf->who);
		return NG_ERR_NOMEM;
	}
	s->ctl_fd = -1;
	for (uint32_t i = 0; i < SHM_NSEG; i++)
		s->lseg[i].fd = -1;
	st = ng_rdma_base_init(&s->base, be, cf, boot->rank, boot->size);
	if (st != NG_OK) {
		free(s);
		return st;
	}
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	/* A peer is reached by the process id it publishes (pidfd_getfd,
	 * /proc/PID/fd, process_vm_readv/writev): a peer that publishes another
	 * process's id would have this rank take that process's descriptors or
	 * memory.  Under --server (boot->peer_addr set) the peer is a client
	 * nobody vouched for: refused before anything is published or taken,
	 * and the refusal still goes through the exchange below so that the
	 * client learns it (and "auto" moves on to the next backend on both
	 * sides). */
	untrusted = boot->peer_addr[0] != 0;
	s->base.caps = NG_RDMA_CAP_READ | NG_RDMA_CAP_ATOMIC | NG_RDMA_CAP_PROGRESS | NG_RDMA_CAP_KEYS |
	               NG_RDMA_CAP_BLOCKS;
	s->base.stage_max = SIZE_MAX;
	s->peers = calloc((size_t)boot->size, sizeof(*s->peers));
	s->free_reg = malloc(SHM_NREG * sizeof(*s->free_reg));
	all = calloc((size_t)boot->size, sizeof(*all));
	if (!s->peers || !s->free_reg || !all) {
		why = "out of memory";
		st = NG_ERR_NOMEM;
	} else if (untrusted) {
		why = "the shm backend reaches its peers by process id, which a --server cannot trust: not "
		      "with a --server client";
		st = NG_ERR_USAGE;
	} else {
		for (int i = 0; i < boot->size; i++)
			s->peers[i].pidfd = -1;
		for (uint32_t i = 0; i < SHM_NREG; i++)
			s->free_reg[i] = SHM_NREG - 1 - i;
		s->nfree_reg = SHM_NREG;
		s->ctl_fd = shm_memfd(s, sizeof(*s->ctl), (void **)&s->ctl);
		if (s->ctl_fd < 0) {
			s->ctl = NULL;
			why = strerror(errno);
			st = NG_ERR_SYS;
		} else {
			s->ctl->magic = SHM_MAGIC;
		}
	}
	mine.pid = untrusted ? 0 : getpid();
	mine.ctl_fd = s->ctl_fd;
	mine.status = st;
	mine.probe = s->ctl ? (uint64_t)(uintptr_t)&s->ctl->magic : 0;
	snprintf(mine.host, sizeof(mine.host), "%s", boot->host);
	if (st != NG_OK && !cf->quiet)
		ng_error("%s: %s%s", cf->who, untrusted ? "" : "shm backend: ", why);
	if (!all) {
		shm_be_close(&s->base);
		return NG_ERR_NOMEM;
	}
	if (ng_boot_allgather(boot, &mine, sizeof(mine), all) != NG_OK) {
		free(all);
		shm_be_close(&s->base);
		return NG_ERR_PEER_LOST;
	}
	for (int i = 0; i < boot->size; i++) {
		/* Peers' fields: the status an index into the status names, the
		 * host a string for strcmp and the message (peer.h). */
		if (all[i].status != NG_OK && st == NG_OK)
			st = shm_peer_status(i, all[i].status);
		if (!ng_peer_str(all[i].host, sizeof(all[i].host)) && st == NG_OK)
			st = ng_peer_bad("shm host name", i, "not terminated");
		if (st == NG_OK && strcmp(all[i].host, all[0].host) != 0) {
			if (boot->rank == 0 && !cf->quiet)
				ng_error("%s: the shm backend needs all ranks on one host (rank %d is on %s, "
				         "rank 0 on %s)",
				         cf->who, i, all[i].host, all[0].host);
			st = NG_ERR_NODEV;
		}
	}
	/* Second round: connect to every peer, then agree. */
	if (st == NG_OK) {
		for (int i = 0; i < boot->size && st == NG_OK; i++) {
			if (i == boot->rank) {
				s->peers[i].pid = getpid();
				s->peers[i].ctl = s->ctl;
				s->peers[i].maps = calloc(SHM_NSEG, sizeof(*s->peers[i].maps));
				if (!s->peers[i].maps) {
					why = "out of memory";
					st = NG_ERR_NOMEM;
				}
				continue;
			}
			st = shm_connect(s, i, &all[i], &cma, &why);
			if (st != NG_OK && !cf->quiet)
				ng_error("%s: shm backend cannot reach rank %d's memory: %s (ptrace "
				         "restrictions such as "
				         "Yama ptrace_scope >= 1 or a container's seccomp profile forbid it)",
				         cf->who, i, why);
		}
		mine.status = st;
		mine.probe = cma;
		if (ng_boot_allgather(boot, &mine, sizeof(mine), all) != NG_OK) {
			free(all);
			shm_be_close(&s->base);
			return NG_ERR_PEER_LOST;
		}
		for (int i = 0; i < boot->size; i++) {
			if (all[i].status != NG_OK && st == NG_OK)
				st = shm_peer_status(i, all[i].status);
			cma = cma && all[i].probe;
		}
	}
	free(all);
	if (st != NG_OK) {
		shm_be_close(&s->base);
		return st;
	}
	if (cma)
		s->base.caps |= NG_RDMA_CAP_ANYMEM;
	snprintf(s->base.desc, sizeof(s->base.desc), "shm (memfd segments%s)",
	         cma ? ", cross-memory attach" : ", no cross-memory attach");
	*r_p = &s->base;
	return NG_OK;
}

const struct ng_rdma_backend ng_rdma_shm = {
    .name = "shm",
    .desc = "ranks on one host: shared memory segments and cross-memory attach, no target involvement",
    .open = shm_be_open,
    .close = shm_be_close,
    .mem_alloc = shm_mem_alloc,
    .mem_free = shm_mem_free,
    .reg = shm_reg,
    .dereg = shm_dereg,
    .write = shm_write,
    .read = shm_read,
    .atomic = shm_atomic,
    .progress = shm_progress,
    .flush = shm_flush,
};
