/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the "tcp" module without the driver.
 *
 * Built from this file, the tcp module's sources (modules/tcp/tcp_data.c,
 * tcp_conn.c, tcp_setup.c) and the core's bootstrap helpers (core/bootstrap.c
 * for ng_boot_bcast and ng_boot_may_connect, core/allow.c) only, not
 * libngauge: it provides the few core functions they call (ng_error,
 * ng_warn; ng_config_read: tcp_unit_config.c) and a fake bootstrap.  Each scenario forks its ranks; the
 * test process itself is their hub: every rank has a socketpair to it, and an
 * allgather is "send my bytes, get everyone's".  The hub can act between the
 * parts of a collective, which the stray-connection scenario uses to connect
 * to the ranks' listening sockets after they published them and before the
 * ranks connect to each other.
 *
 * Scenarios:
 *   blocking     sizes 0, 1, 7, 4093, 65537, 1M+3 there and back, every byte checked
 *   nonblocking  the same sizes exchanged both ways at once with isend/irecv
 *   many         64 isends of 64 KiB each way before any irecv is posted,
 *                then the sends are waited for first (needs both directions
 *                to progress inside wait)
 *   order        blocking calls issued while non-blocking ones are queued
 *                complete after them
 *   n1           ranks 1 and 2 each isend 16 x 256 KiB to rank 0, which
 *                waits on rank 2's receives first (wait must progress rank 1)
 *   mesh         4 ranks, every pair exchanges both ways
 *   stray        garbage, a silent connection, a wrong token, a half hello
 *                and hellos with the run's token but a rank that is not a
 *                higher rank of the run (its own, the size, 2^31, 2^32 - 1)
 *                at each listener during connection setup: setup succeeds
 *                without waiting for the stray's deadline, strays are closed
 *   flood        48 silent connections at each listener before the ranks
 *                connect (more than the 16 + expected slots): setup still
 *                takes less than the strays' 2 s deadline, strays are closed
 *   refused      rank 1's bootstrap peer is 127.0.0.2 (as in a --server's
 *                child) and rank 0's published listener is the hub's, at
 *                127.0.0.1: rank 1's open fails with NG_ERR_PROTO, its error
 *                names "the tcp listener of rank 0", and the hub's listener
 *                has no connection waiting
 *   redirected   the same listener and no peer address (every other launch):
 *                rank 1 connects and the hub's listener answers its hello
 *                (checked: rank 1, the run's token) with a hostile one: a
 *                rank of 2^32 - 1 with the right token, then 200 random
 *                bytes: NG_ERR_PROTO, an error naming the rank, no crash
 *   allowed      peer address 127.0.0.1 (the listener's own), then
 *                127.0.0.2 with --allow 127.0.0.0/8: the mesh connects
 *   death        a peer killed (SIGKILL) during a blocking recv, a wait, and
 *                a stream of sends: NG_ERR_PEER_LOST each time
 *   timeout      a silent peer with timeout_s = 0.3: NG_ERR_TIMEOUT from a
 *                blocking recv and from a wait (poll)
 *   cancel       SIGALRM (no SA_RESTART) sets the cancel flag during a
 *                blocking recv and during a wait: NG_ERR_CANCELLED
 *   memory       alloc alignment and size; close() frees unfreed blocks
 *   simultaneous both ranks send first (8 isends each, a simultaneous
 *                connect when lazy), then take turns with blocking calls of
 *                odd sizes: every byte checked, one connection open at the
 *                end, none made at open when lazy
 *   cycle        3 ranks: rank 0 sends to 1 while 1 waits for 2, which
 *                waits for 0 before it sends to 1: a first send waits for
 *                nobody (lazy); rank 0 ends with 2 connections
 *
 * Every scenario runs four times: --connect eager and lazy (connections on
 * first use; the death scenarios first make one round trip so that the
 * pair is connected, and refused/redirected expect the failure at first
 * use instead of at open), each with --tcp-poll sleep (blocking calls,
 * poll()) and with --tcp-poll spin (non-blocking calls in a loop).
 *
 * Output: one "ok"/"not ok" line per scenario and mode; exit 0 when all pass, 1 when
 * one fails, 77 (skipped) when no loopback TCP is available.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "allow.h"
#include "bootstrap.h"
#include "module.h"
#include "options.h"
#include "status.h"

extern const struct ng_module ng_module_tcp;

#define MAXRANKS 4

/* ---- what the module needs from the core ------------------------------ */

struct ng_args {
	const char *bind;
	const char *port;
};

static const char *const status_names[] = {
#define X(n, m) #n,
    NG_STATUS_MAP(X)
#undef X
};

const char *ng_status_name(ng_status s)
{
	return (unsigned)s < NG_STATUS_COUNT ? status_names[s] : "?";
}

static void vlog(const char *kind, const char *fmt, va_list ap, char *line, size_t len)
{
	vsnprintf(line, len, fmt, ap);
	fprintf(stderr, "test_tcp_unit[%d]: %s%s\n", (int)getpid(), kind, line);
}

/* This process's last error line, for the scenarios that check what was said. */
static char last_error[512];

void ng_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error: ", fmt, ap, last_error, sizeof(last_error));
	va_end(ap);
}

void ng_warn(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap, line, sizeof(line));
	va_end(ap);
}

/* --tcp-poll of every instance, and --connect lazy: main() runs the
 * scenarios once per combination. */
static const char *poll_mode = "sleep";
static bool lazy;

/* The value of option @name as text, NULL when not given: what
 * tcp_unit_config.c's ng_config_read reads. */
const char *tcp_unit_arg(const struct ng_args *a, const char *name);
const char *tcp_unit_arg(const struct ng_args *a, const char *name)
{
	if (!strcmp(name, "tcp-bind"))
		return a->bind;
	if (!strcmp(name, "tcp-port"))
		return a->port;
	if (!strcmp(name, "tcp-poll"))
		return poll_mode;
	return NULL;
}

/* ---- fake bootstrap: a socketpair to the hub per rank ------------------ */

struct fake_boot {
	struct ng_boot base;
	int fd;
};

static int xwrite(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int xread(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static ng_status fake_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	struct fake_boot *f = ng_container_of(b, struct fake_boot, base);
	uint32_t l = (uint32_t)len;

	if (xwrite(f->fd, &l, sizeof(l)) || xwrite(f->fd, mine, len) ||
	    xread(f->fd, all, len * (size_t)b->size)) {
		ng_error("fake bootstrap: hub lost");
		return NG_ERR_PEER_LOST;
	}
	return NG_OK;
}

static ng_status fake_barrier(struct ng_boot *b)
{
	char one = 0, all[MAXRANKS];

	return fake_allgather(b, &one, 1, all);
}

static void fake_fini(struct ng_boot *b)
{
	close(ng_container_of(b, struct fake_boot, base)->fd);
}

static const struct ng_boot_ops fake_ops = {
    .name = "fake",
    .barrier = fake_barrier,
    .allgather = fake_allgather,
    .fini = fake_fini,
};

/* ---- scenario plumbing ------------------------------------------------- */

/* What the hub keeps between the collectives of a scenario. */
struct hub_ctx {
	int fds[256]; /* stray connections */
	int n;
	uint64_t token; /* the run's, from collective 0 */
	int lfd;        /* the hub's own listener, -1 for none */
	pid_t helper;   /* the process that serves it, -1 for none */
};

/* Called by the hub with every collective's gathered bytes before it
 * releases them (it may change them); @idx counts collectives from 0. */
typedef void (*hub_hook)(struct hub_ctx *h, int idx, size_t len, unsigned char *all, int size);

struct scenario {
	const char *name;
	int size;
	int (*rank_main)(struct ng_boot *b);
	hub_hook hook;
	int killed_rank; /* rank expected to die of SIGKILL, -1 for none */
	/* Checks of the hub once the ranks are gone: 0 when good. */
	int (*hub_check)(struct hub_ctx *h);
};

static volatile sig_atomic_t cancel_flag;

static void on_alarm(int sig)
{
	(void)sig;
	cancel_flag = 1;
}

#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "test_tcp_unit: rank %d: %s:%d: ", b->rank, __func__, __LINE__);     \
			fprintf(stderr, __VA_ARGS__);                                                        \
			fputc('\n', stderr);                                                                 \
			return 1;                                                                            \
		}                                                                                            \
	} while (0)

#define CHECK_ST(expr, want)                                                                                 \
	do {                                                                                                 \
		ng_status st_ = (expr);                                                                      \
		CHECK(st_ == (want), "%s = %s, expected %s", #expr, ng_status_name(st_),                     \
		      ng_status_name(want));                                                                 \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ng_status open_tcp(struct ng_boot *b, const struct ng_args *a, double timeout_s, struct ng_comm **c_p)
{
	struct ng_module_env env = {
	    .boot = b,
	    .args = a,
	    .cancel = &cancel_flag,
	    .timeout_s = timeout_s,
	    .connect_lazy = lazy,
	};

	return ng_module_tcp.ops->open(&ng_module_tcp, &env, c_p);
}

/* The module's counter @key (its report block), -1 when absent. */
static long long tcp_counter(struct ng_comm *c, const char *key)
{
	json_t *j = ng_module_tcp.ops->report(c);
	long long v = -1;

	if (j && json_is_integer(json_object_get(j, key)))
		v = (long long)json_integer_value(json_object_get(j, key));
	json_decref(j);
	return v;
}

/* Lazy connections: one round trip between ranks 0 and 1 connects them,
 * so that what follows starts from a connected pair. */
static ng_status warm_pair(struct ng_boot *b, struct ng_comm *c)
{
	unsigned char x = 1;
	ng_status st = NG_OK;

	if (!lazy || b->rank > 1)
		return NG_OK;
	if (b->rank == 0) {
		st = ng_send(c, 1, &x, 1);
		if (!st)
			st = ng_recv(c, 1, &x, 1);
	} else {
		st = ng_recv(c, 0, &x, 1);
		if (!st)
			st = ng_send(c, 0, &x, 1);
	}
	return st;
}

static const struct ng_args default_args = {.bind = NULL, .port = NULL};

static void fill(unsigned char *p, size_t n, uint64_t tag)
{
	uint64_t x = tag * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 32);
	}
}

/* Index of the first wrong byte, or n when all match. */
static size_t check(const unsigned char *p, size_t n, uint64_t tag)
{
	uint64_t x = tag * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (p[i] != (unsigned char)(x >> 32))
			return i;
	}
	return n;
}

static uint64_t tag_of(int from, int to, size_t size, size_t i)
{
	return ((uint64_t)from << 56) ^ ((uint64_t)to << 48) ^ ((uint64_t)size << 16) ^ i;
}

static const size_t sizes[] = {0, 1, 7, 4093, 65537, (1u << 20) + 3};
#define NSIZES  (sizeof(sizes) / sizeof(sizes[0]))
#define MAXSIZE ((1u << 20) + 3)

/* ---- scenarios ---------------------------------------------------------- */

static int t_blocking(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *buf;
	int peer = 1 - b->rank;
	size_t i, bad;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK(!strncmp(c->device, "tcp 127.0.0.1", 13), "device \"%s\"", c->device);
	CHECK_ST(ng_alloc(c, MAXSIZE, (void **)&buf), NG_OK);
	for (i = 0; i < NSIZES; i++) {
		size_t n = sizes[i];

		if (b->rank == 0) {
			fill(buf, n, tag_of(0, 1, n, i));
			CHECK_ST(ng_send(c, peer, buf, n), NG_OK);
			memset(buf, 0, n);
			CHECK_ST(ng_recv(c, peer, buf, n), NG_OK);
			bad = check(buf, n, tag_of(1, 0, n, i));
		} else {
			memset(buf, 0, n);
			CHECK_ST(ng_recv(c, peer, buf, n), NG_OK);
			bad = check(buf, n, tag_of(0, 1, n, i));
			fill(buf, n, tag_of(1, 0, n, i));
			CHECK_ST(ng_send(c, peer, buf, n), NG_OK);
		}
		CHECK(bad == n, "size %zu: byte %zu wrong", n, bad);
	}
	ng_free(c, buf);
	ng_module_tcp.ops->close(c);
	return 0;
}

static int t_nonblocking(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *sbuf, *rbuf;
	struct ng_req sr, rr;
	int peer = 1 - b->rank;
	size_t i, bad;
	bool done;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, MAXSIZE, (void **)&sbuf), NG_OK);
	CHECK_ST(ng_alloc(c, MAXSIZE, (void **)&rbuf), NG_OK);
	for (int round = 0; round < 3; round++) {
		for (i = 0; i < NSIZES; i++) {
			size_t n = sizes[i];

			fill(sbuf, n, tag_of(b->rank, peer, n, i));
			memset(rbuf, 0, n);
			if (round == 0) { /* receive posted first, wait on the send first */
				CHECK_ST(ng_irecv(c, peer, rbuf, n, &rr), NG_OK);
				CHECK_ST(ng_isend(c, peer, sbuf, n, &sr), NG_OK);
				CHECK_ST(ng_wait(c, &sr), NG_OK);
				CHECK_ST(ng_wait(c, &rr), NG_OK);
			} else if (round == 1) { /* send posted first, wait on the receive first */
				CHECK_ST(ng_isend(c, peer, sbuf, n, &sr), NG_OK);
				CHECK_ST(ng_irecv(c, peer, rbuf, n, &rr), NG_OK);
				CHECK_ST(ng_wait(c, &rr), NG_OK);
				CHECK_ST(ng_wait(c, &sr), NG_OK);
			} else { /* test() loops */
				CHECK_ST(ng_isend(c, peer, sbuf, n, &sr), NG_OK);
				CHECK_ST(ng_irecv(c, peer, rbuf, n, &rr), NG_OK);
				do
					CHECK_ST(ng_test(c, &rr, &done), NG_OK);
				while (!done);
				do
					CHECK_ST(ng_test(c, &sr, &done), NG_OK);
				while (!done);
			}
			bad = check(rbuf, n, tag_of(peer, b->rank, n, i));
			CHECK(bad == n, "round %d size %zu: byte %zu wrong", round, n, bad);
		}
	}
	ng_free(c, sbuf);
	ng_free(c, rbuf);
	ng_module_tcp.ops->close(c);
	return 0;
}

#define MANY_N   64
#define MANY_LEN (64u << 10)

static int t_many(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *sbuf, *rbuf;
	struct ng_req sr[MANY_N], rr[MANY_N];
	int peer = 1 - b->rank;
	size_t i, bad;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, MANY_N * MANY_LEN, (void **)&sbuf), NG_OK);
	CHECK_ST(ng_alloc(c, MANY_N * MANY_LEN, (void **)&rbuf), NG_OK);
	for (i = 0; i < MANY_N; i++)
		fill(sbuf + i * MANY_LEN, MANY_LEN, tag_of(b->rank, peer, MANY_LEN, i));
	memset(rbuf, 0, MANY_N * MANY_LEN);
	for (i = 0; i < MANY_N; i++)
		CHECK_ST(ng_isend(c, peer, sbuf + i * MANY_LEN, MANY_LEN, &sr[i]), NG_OK);
	for (i = 0; i < MANY_N; i++)
		CHECK_ST(ng_irecv(c, peer, rbuf + i * MANY_LEN, MANY_LEN, &rr[i]), NG_OK);
	for (i = 0; i < MANY_N; i++)
		CHECK_ST(ng_wait(c, &sr[i]), NG_OK);
	for (i = MANY_N; i-- > 0;)
		CHECK_ST(ng_wait(c, &rr[i]), NG_OK);
	for (i = 0; i < MANY_N; i++) {
		bad = check(rbuf + i * MANY_LEN, MANY_LEN, tag_of(peer, b->rank, MANY_LEN, i));
		CHECK(bad == MANY_LEN, "message %zu: byte %zu wrong", i, bad);
	}
	ng_free(c, sbuf);
	ng_free(c, rbuf);
	ng_module_tcp.ops->close(c);
	return 0;
}

static int t_order(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *a, *bb, *big, *d;
	struct ng_req ra, rd;
	size_t big_len = 4u << 20;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 100, (void **)&a), NG_OK);
	CHECK_ST(ng_alloc(c, 50, (void **)&bb), NG_OK);
	CHECK_ST(ng_alloc(c, 300, (void **)&d), NG_OK);
	CHECK_ST(ng_alloc(c, big_len, (void **)&big), NG_OK);
	if (b->rank == 0) {
		/* A queued irecv; a large blocking send that needs rank 1 to read
		 * while we must read (progress) too; a blocking recv that must
		 * take the message after A. */
		CHECK_ST(ng_irecv(c, 1, a, 100, &ra), NG_OK);
		fill(big, big_len, 7);
		CHECK_ST(ng_send(c, 1, big, big_len), NG_OK);
		CHECK_ST(ng_recv(c, 1, bb, 50), NG_OK);
		CHECK_ST(ng_wait(c, &ra), NG_OK);
		CHECK(check(a, 100, 1) == 100, "message A wrong");
		CHECK(check(bb, 50, 2) == 50, "message B wrong");
		/* Two queued receives and a blocking one behind them. */
		CHECK_ST(ng_irecv(c, 1, a, 100, &ra), NG_OK);
		CHECK_ST(ng_irecv(c, 1, d, 300, &rd), NG_OK);
		CHECK_ST(ng_recv(c, 1, bb, 50), NG_OK);
		CHECK_ST(ng_wait(c, &rd), NG_OK);
		CHECK_ST(ng_wait(c, &ra), NG_OK);
		CHECK(check(a, 100, 3) == 100, "message 3 wrong");
		CHECK(check(d, 300, 4) == 300, "message 4 wrong");
		CHECK(check(bb, 50, 5) == 50, "message 5 wrong");
	} else {
		fill(a, 100, 1);
		fill(bb, 50, 2);
		/* An isend queued before blocking sends. */
		CHECK_ST(ng_isend(c, 0, a, 100, &ra), NG_OK);
		CHECK_ST(ng_send(c, 0, bb, 50), NG_OK);
		CHECK_ST(ng_wait(c, &ra), NG_OK);
		CHECK_ST(ng_recv(c, 0, big, big_len), NG_OK);
		CHECK(check(big, big_len, 7) == big_len, "big message wrong");
		fill(a, 100, 3);
		fill(d, 300, 4);
		fill(bb, 50, 5);
		CHECK_ST(ng_send(c, 0, a, 100), NG_OK);
		CHECK_ST(ng_send(c, 0, d, 300), NG_OK);
		CHECK_ST(ng_send(c, 0, bb, 50), NG_OK);
	}
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	ng_module_tcp.ops->close(c); /* frees the four blocks */
	return 0;
}

#define N1_N   16
#define N1_LEN (256u << 10)

static int t_n1(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *buf;
	struct ng_req r[2 * N1_N];
	size_t i, bad;
	int k;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 2 * N1_N * N1_LEN, (void **)&buf), NG_OK);
	if (b->rank == 0) {
		memset(buf, 0, 2 * N1_N * N1_LEN);
		for (k = 1; k <= 2; k++) {
			for (i = 0; i < N1_N; i++) {
				size_t j = (size_t)(k - 1) * N1_N + i;

				CHECK_ST(ng_irecv(c, k, buf + j * N1_LEN, N1_LEN, &r[j]), NG_OK);
			}
		}
		for (i = N1_N; i < 2 * N1_N; i++) /* rank 2's first */
			CHECK_ST(ng_wait(c, &r[i]), NG_OK);
		for (i = 0; i < N1_N; i++)
			CHECK_ST(ng_wait(c, &r[i]), NG_OK);
		for (i = 0; i < 2 * N1_N; i++) {
			bad =
			    check(buf + i * N1_LEN, N1_LEN, tag_of((int)(1 + i / N1_N), 0, N1_LEN, i % N1_N));
			CHECK(bad == N1_LEN, "message %zu: byte %zu wrong", i, bad);
		}
		for (k = 1; k <= 2; k++)
			CHECK_ST(ng_send(c, k, buf, 1), NG_OK);
	} else {
		for (i = 0; i < N1_N; i++) {
			fill(buf + i * N1_LEN, N1_LEN, tag_of(b->rank, 0, N1_LEN, i));
			CHECK_ST(ng_isend(c, 0, buf + i * N1_LEN, N1_LEN, &r[i]), NG_OK);
		}
		for (i = 0; i < N1_N; i++)
			CHECK_ST(ng_wait(c, &r[i]), NG_OK);
		CHECK_ST(ng_recv(c, 0, buf, 1), NG_OK);
	}
	ng_free(c, buf);
	ng_module_tcp.ops->close(c);
	return 0;
}

static int t_mesh(struct ng_boot *b)
{
	enum { LEN = 100000 };
	struct ng_comm *c;
	unsigned char *sbuf, *rbuf;
	struct ng_req sr[MAXRANKS], rr[MAXRANKS];
	int p;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, (size_t)MAXRANKS * LEN, (void **)&sbuf), NG_OK);
	CHECK_ST(ng_alloc(c, (size_t)MAXRANKS * LEN, (void **)&rbuf), NG_OK);
	for (p = 0; p < b->size; p++) {
		if (p == b->rank)
			continue;
		fill(sbuf + (size_t)p * LEN, LEN, tag_of(b->rank, p, LEN, 0));
		CHECK_ST(ng_irecv(c, p, rbuf + (size_t)p * LEN, LEN, &rr[p]), NG_OK);
		CHECK_ST(ng_isend(c, p, sbuf + (size_t)p * LEN, LEN, &sr[p]), NG_OK);
	}
	for (p = b->size; p-- > 0;) {
		if (p == b->rank)
			continue;
		CHECK_ST(ng_wait(c, &rr[p]), NG_OK);
		CHECK(check(rbuf + (size_t)p * LEN, LEN, tag_of(p, b->rank, LEN, 0)) == LEN, "from rank %d",
		      p);
	}
	for (p = 0; p < b->size; p++) {
		if (p != b->rank)
			CHECK_ST(ng_wait(c, &sr[p]), NG_OK);
	}
	/* And blocking, in a fixed order that cannot deadlock. */
	for (p = 0; p < b->size; p++) {
		if (p == b->rank)
			continue;
		if (p < b->rank) {
			CHECK_ST(ng_recv(c, p, rbuf, 7), NG_OK);
			CHECK_ST(ng_send(c, p, rbuf, 7), NG_OK);
		} else {
			fill(sbuf, 7, (uint64_t)p);
			CHECK_ST(ng_send(c, p, sbuf, 7), NG_OK);
			CHECK_ST(ng_recv(c, p, rbuf, 7), NG_OK);
			CHECK(check(rbuf, 7, (uint64_t)p) == 7, "echo from rank %d", p);
		}
	}
	ng_module_tcp.ops->close(c);
	return 0;
}

/* Stray connections: the hub connects to every listener as soon as the
 * addresses are gathered (collective 1: 0 is the token broadcast). */
static int stray_connect(const unsigned char *rec)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memcpy(&sin.sin_addr.s_addr, rec, 4);
	memcpy(&sin.sin_port, rec + 4, 2);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("test_tcp_unit: stray connect");
		exit(1);
	}
	return fd;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A hello as the module sends it (modules/tcp/tcp.h): magic, version 1, rank, token. */
static void hello_pack(unsigned char *h, uint32_t rank, uint64_t token)
{
	memcpy(h, "NGAUGTCP", 8);
	put32(h + 8, 1);
	put32(h + 12, rank);
	put32(h + 16, (uint32_t)(token >> 32));
	put32(h + 20, (uint32_t)token);
}

/* The run's token: rank 0's part of the broadcast (collective 0). */
static void keep_token(struct hub_ctx *h, int idx, size_t len, const unsigned char *all)
{
	if (idx == 0 && len == sizeof(h->token))
		memcpy(&h->token, all, sizeof(h->token));
}

static void stray_hook(struct hub_ctx *h, int idx, size_t len, unsigned char *all, int size)
{
	unsigned char junk[200], hello[24];

	keep_token(h, idx, len, all);
	if (idx != 1 || len != 8)
		return;
	for (int r = 0; r < size; r++) {
		const unsigned char *rec = all + (size_t)r * len;
		/* the run's token, and a rank that no connection to rank r may claim */
		const uint32_t bad_ranks[] = {(uint32_t)r, (uint32_t)size, 0x80000000u, 0xffffffffu};
		int fd;

		/* random bytes */
		fill(junk, sizeof(junk), (uint64_t)r);
		fd = stray_connect(rec);
		(void)!write(fd, junk, sizeof(junk));
		h->fds[h->n++] = fd;
		/* silent */
		h->fds[h->n++] = stray_connect(rec);
		/* magic and version right, token wrong, claiming a valid rank */
		hello_pack(hello, (uint32_t)(size - 1), 0);
		fd = stray_connect(rec);
		(void)!write(fd, hello, sizeof(hello));
		h->fds[h->n++] = fd;
		/* half a hello, then nothing */
		fd = stray_connect(rec);
		(void)!write(fd, hello, 10);
		h->fds[h->n++] = fd;
		for (size_t k = 0; k < sizeof(bad_ranks) / sizeof(bad_ranks[0]); k++) {
			hello_pack(hello, bad_ranks[k], h->token);
			fd = stray_connect(rec);
			(void)!write(fd, hello, sizeof(hello));
			h->fds[h->n++] = fd;
		}
	}
}

/* More silent connections than a listener has slots (16 + the expected
 * ranks), all in its backlog before any rank connects. */
#define FLOOD_N 48

static void flood_hook(struct hub_ctx *h, int idx, size_t len, unsigned char *all, int size)
{
	if (idx != 1 || len != 8)
		return;
	for (int r = 0; r < size; r++)
		for (int k = 0; k < FLOOD_N; k++)
			h->fds[h->n++] = stray_connect(all + (size_t)r * len);
}

static int t_stray(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *buf;
	double t0 = now_s(), dt;
	int p;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	dt = now_s() - t0;
	CHECK(dt < 1.5, "connection setup took %.2f s: it waited for a stray", dt);
	CHECK_ST(ng_alloc(c, 64, (void **)&buf), NG_OK);
	for (p = 0; p < b->size; p++) {
		if (p == b->rank)
			continue;
		if (p < b->rank) {
			CHECK_ST(ng_recv(c, p, buf, 64), NG_OK);
			CHECK(check(buf, 64, (uint64_t)p) == 64, "from rank %d", p);
		} else {
			fill(buf, 64, (uint64_t)b->rank);
			CHECK_ST(ng_send(c, p, buf, 64), NG_OK);
		}
	}
	ng_module_tcp.ops->close(c);
	return 0;
}

/* The hub-side check of the stray scenarios: every stray was closed. */
static int stray_closed(struct hub_ctx *h)
{
	int bad = 0;

	for (int i = 0; i < h->n; i++) {
		struct pollfd pfd = {.fd = h->fds[i], .events = POLLIN};
		char x[256];
		ssize_t n = 1;

		while (n > 0 && poll(&pfd, 1, 3000) == 1)
			n = read(h->fds[i], x, sizeof(x));
		if (n > 0) {
			fprintf(stderr, "test_tcp_unit: stray connection %d not closed\n", i);
			bad = 1;
		}
		close(h->fds[i]);
	}
	return bad;
}

/* ---- where a rank connects to (ng_boot_may_connect) --------------------- */

/* A listener of the hub's on 127.0.0.1, an ephemeral port. */
static int hub_listen(struct sockaddr_in *sin_p)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t slen = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen)) {
		perror("test_tcp_unit: hub listener");
		exit(1);
	}
	*sin_p = sin;
	return fd;
}

/* Rank 0's published listener replaced with the hub's (collective 1). */
static void redirect(struct hub_ctx *h, int idx, size_t len, unsigned char *all)
{
	struct sockaddr_in sin;

	keep_token(h, idx, len, all);
	if (idx != 1 || len != 8)
		return;
	h->lfd = hub_listen(&sin);
	memcpy(all, &sin.sin_addr.s_addr, 4);
	memcpy(all + 4, &sin.sin_port, 2);
}

static void refused_hook(struct hub_ctx *h, int idx, size_t len, unsigned char *all, int size)
{
	(void)size;
	redirect(h, idx, len, all);
}

/* Rank 1 was refused before connecting: nothing waits at the hub's listener. */
static int refused_check(struct hub_ctx *h)
{
	struct pollfd pfd = {.fd = h->lfd, .events = POLLIN};
	int n;

	if (h->lfd < 0) {
		fprintf(stderr, "test_tcp_unit: the hub never published its listener\n");
		return 1;
	}
	n = poll(&pfd, 1, 200);
	close(h->lfd);
	if (n != 0) {
		fprintf(stderr, "test_tcp_unit: a connection reached the refused listener\n");
		return 1;
	}
	return 0;
}

static int t_refused(struct ng_boot *b)
{
	struct ng_comm *c = NULL;

	if (b->rank == 1) {
		/* As in a --server's child whose client connected from 127.0.0.2. */
		snprintf(b->peer_addr, sizeof(b->peer_addr), "127.0.0.2");
		last_error[0] = '\0';
		CHECK_ST(open_tcp(b, &default_args, 1.0, &c), NG_ERR_PROTO);
		CHECK(strstr(last_error, "the tcp listener of rank 0") && strstr(last_error, "127.0.0.1") &&
		          strstr(last_error, "127.0.0.2"),
		      "error \"%s\"", last_error);
		CHECK(c == NULL, "no instance");
	} else if (!lazy) {
		/* Nobody connects to rank 0's own listener either. */
		CHECK_ST(open_tcp(b, &default_args, 0.5, &c), NG_ERR_TIMEOUT);
		CHECK(strstr(last_error, "timed out waiting for ranks 1 to connect"), "error \"%s\"",
		      last_error);
	} else {
		/* Nothing to wait for at open. */
		CHECK_ST(open_tcp(b, &default_args, 0.5, &c), NG_OK);
		ng_module_tcp.ops->close(c);
	}
	return 0;
}

/*
 * The hub's listener, served in a process of its own: checks the hello of
 * the first connection (rank 1, the first open's token) and answers with a
 * hello of rank 2^32 - 1 and that token; checks the second's (rank 1: the
 * token is the second open's, drawn after this process was forked) and
 * answers with 200 random bytes.  Exits 0 when both came with good hellos.
 */
static _Noreturn void redirect_serve(int lfd, uint64_t token)
{
	for (int k = 0; k < 2; k++) {
		struct pollfd pfd = {.fd = lfd, .events = POLLIN};
		unsigned char hello[24], junk[200];
		int fd;

		if (poll(&pfd, 1, 5000) != 1 || (fd = accept(lfd, NULL, NULL)) < 0)
			_exit(3);
		if (xread(fd, hello, sizeof(hello)) || memcmp(hello, "NGAUGTCP", 8) ||
		    get32(hello + 12) != 1 ||
		    (k == 0 && ((uint64_t)get32(hello + 16) << 32 | get32(hello + 20)) != token))
			_exit(4);
		if (k == 0) {
			hello_pack(hello, 0xffffffffu, token);
			(void)xwrite(fd, hello, sizeof(hello));
		} else {
			fill(junk, sizeof(junk), 99);
			(void)xwrite(fd, junk, sizeof(junk));
		}
		/* until rank 1 hangs up */
		while (read(fd, junk, sizeof(junk)) > 0)
			;
		close(fd);
	}
	_exit(0);
}

/* Both of rank 1's opens go to the hub's listener (collectives 1 and 3; 0
 * and 2 are their tokens). */
static void redirected_hook(struct hub_ctx *h, int idx, size_t len, unsigned char *all, int size)
{
	(void)size;
	if (idx == 3 && len == 8 && h->lfd >= 0) {
		struct sockaddr_in sin;
		socklen_t slen = sizeof(sin);

		if (getsockname(h->lfd, (struct sockaddr *)&sin, &slen) == 0) {
			memcpy(all, &sin.sin_addr.s_addr, 4);
			memcpy(all + 4, &sin.sin_port, 2);
		}
		return;
	}
	redirect(h, idx, len, all);
	if (idx == 1 && h->lfd >= 0) {
		h->helper = fork();
		if (h->helper == 0)
			redirect_serve(h->lfd, h->token);
	}
}

static int redirected_check(struct hub_ctx *h)
{
	int ws = 0;

	if (h->helper < 0) {
		fprintf(stderr, "test_tcp_unit: the hub never served its listener\n");
		return 1;
	}
	close(h->lfd);
	waitpid(h->helper, &ws, 0);
	if (!WIFEXITED(ws) || WEXITSTATUS(ws)) {
		fprintf(stderr, "test_tcp_unit: the hub's listener saw no good hello from rank 1 (%d)\n",
		        WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
		return 1;
	}
	return 0;
}

/* Lazy: the open succeeds; the first send goes out (it waits for nothing),
 * the first receive reads the answer and fails. */
static int t_redirected_lazy(struct ng_boot *b)
{
	struct ng_comm *c = NULL;
	unsigned char x = 0;

	for (int k = 0; k < 2; k++) {
		CHECK_ST(open_tcp(b, &default_args, 1.0, &c), NG_OK);
		if (b->rank == 1) {
			last_error[0] = '\0';
			CHECK_ST(ng_send(c, 0, &x, 1), NG_OK);
			CHECK_ST(ng_recv(c, 0, &x, 1), NG_ERR_PROTO);
			CHECK(strstr(last_error, "bad handshake") && strstr(last_error, "expected rank 0") &&
			          strstr(last_error, k ? "not an ngauge tcp connection" : "wrong rank"),
			      "error \"%s\"", last_error);
		}
		ng_module_tcp.ops->close(c);
	}
	return 0;
}

static int t_redirected(struct ng_boot *b)
{
	struct ng_comm *c = NULL;

	if (lazy)
		return t_redirected_lazy(b);
	if (b->rank == 1) {
		last_error[0] = '\0';
		CHECK_ST(open_tcp(b, &default_args, 1.0, &c), NG_ERR_PROTO);
		CHECK(strstr(last_error, "bad handshake") && strstr(last_error, "expected rank 0") &&
		          strstr(last_error, "wrong rank"),
		      "error \"%s\"", last_error);
		last_error[0] = '\0';
		CHECK_ST(open_tcp(b, &default_args, 1.0, &c), NG_ERR_PROTO);
		CHECK(strstr(last_error, "bad handshake") &&
		          strstr(last_error, "not an ngauge tcp connection"),
		      "error \"%s\"", last_error);
		CHECK(c == NULL, "no instance");
	} else {
		CHECK_ST(open_tcp(b, &default_args, 0.5, &c), NG_ERR_TIMEOUT);
		CHECK_ST(open_tcp(b, &default_args, 0.5, &c), NG_ERR_TIMEOUT);
	}
	return 0;
}

static int t_allowed(struct ng_boot *b)
{
	struct ng_comm *c;
	struct ng_allow allow;
	unsigned char buf[8];
	char err[128];

	for (int k = 0; k < 2; k++) {
		if (b->rank == 1 && k == 0) /* the listener's own address */
			snprintf(b->peer_addr, sizeof(b->peer_addr), "127.0.0.1");
		if (b->rank == 1 && k == 1) { /* another one, and --allow admits the listener's */
			CHECK(ng_allow_parse("10.0.0.0/8,127.0.0.0/8", &allow, err, sizeof(err)) == 0, "%s",
			      err);
			snprintf(b->peer_addr, sizeof(b->peer_addr), "127.0.0.2");
			b->allow = &allow;
		}
		CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
		fill(buf, sizeof(buf), (uint64_t)k);
		if (b->rank == 0) {
			CHECK_ST(ng_send(c, 1, buf, sizeof(buf)), NG_OK);
		} else {
			memset(buf, 0, sizeof(buf));
			CHECK_ST(ng_recv(c, 0, buf, sizeof(buf)), NG_OK);
			CHECK(check(buf, sizeof(buf), (uint64_t)k) == sizeof(buf), "message %d", k);
		}
		ng_module_tcp.ops->close(c);
	}
	b->allow = NULL;
	return 0;
}

static int t_death_recv(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *buf;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 1000, (void **)&buf), NG_OK);
	CHECK_ST(warm_pair(b, c), NG_OK);
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	if (b->rank == 1)
		raise(SIGKILL);
	CHECK_ST(ng_recv(c, 1, buf, 1000), NG_ERR_PEER_LOST);
	CHECK_ST(ng_recv(c, 1, buf, 1000), NG_ERR_PEER_LOST);
	CHECK_ST(ng_send(c, 1, buf, 1000), NG_ERR_PEER_LOST);
	ng_module_tcp.ops->close(c);
	return 0;
}

static int t_death_wait(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *buf;
	struct ng_req rr, sr;
	ng_status st;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 8u << 20, (void **)&buf), NG_OK);
	memset(buf, 0, 8u << 20);
	CHECK_ST(warm_pair(b, c), NG_OK);
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	if (b->rank == 1)
		raise(SIGKILL);
	CHECK_ST(ng_irecv(c, 1, buf, 1000, &rr), NG_OK);
	/* The eager attempt of isend may already see the loss. */
	st = ng_isend(c, 1, buf, 8u << 20, &sr);
	CHECK(st == NG_OK || st == NG_ERR_PEER_LOST, "isend = %s", ng_status_name(st));
	CHECK_ST(ng_wait(c, &rr), NG_ERR_PEER_LOST);
	CHECK_ST(ng_wait(c, &sr), NG_ERR_PEER_LOST);
	CHECK_ST(ng_irecv(c, 1, buf, 1000, &rr), NG_ERR_PEER_LOST);
	ng_module_tcp.ops->close(c);
	return 0;
}

static int t_death_send(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *buf;
	ng_status st = NG_OK;
	int i;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 65536, (void **)&buf), NG_OK);
	memset(buf, 0, 65536);
	CHECK_ST(warm_pair(b, c), NG_OK);
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	if (b->rank == 1)
		raise(SIGKILL);
	for (i = 0; i < 100000 && !st; i++)
		st = ng_send(c, 1, buf, 65536);
	CHECK(st == NG_ERR_PEER_LOST, "send loop ended with %s after %d sends", ng_status_name(st), i);
	ng_module_tcp.ops->close(c);
	return 0;
}

static int t_timeout(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *buf;
	struct ng_req rr, sr;
	double t0, dt;

	CHECK_ST(open_tcp(b, &default_args, 0.3, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 16u << 20, (void **)&buf), NG_OK);
	memset(buf, 0, 16u << 20);
	if (b->rank == 0) {
		t0 = now_s();
		CHECK_ST(ng_recv(c, 1, buf, 10), NG_ERR_TIMEOUT);
		dt = now_s() - t0;
		CHECK(dt > 0.25 && dt < 2, "blocking recv timed out after %.2f s", dt);
	}
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	ng_module_tcp.ops->close(c);

	/* A second instance in the same process: a wait() that polls. */
	CHECK_ST(open_tcp(b, &default_args, 0.3, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 16u << 20, (void **)&buf), NG_OK);
	memset(buf, 0, 16u << 20);
	if (b->rank == 0) {
		t0 = now_s();
		CHECK_ST(ng_irecv(c, 1, buf, 10, &rr), NG_OK);
		CHECK_ST(ng_isend(c, 1, buf, 16u << 20, &sr), NG_OK);
		CHECK_ST(ng_wait(c, &rr), NG_ERR_TIMEOUT);
		CHECK_ST(ng_wait(c, &sr), NG_ERR_TIMEOUT);
		dt = now_s() - t0;
		CHECK(dt > 0.25 && dt < 2, "wait timed out after %.2f s", dt);
	}
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	ng_module_tcp.ops->close(c);
	return 0;
}

static int arm_alarm_ms(int ms)
{
	/* Repeating, as a user presses Ctrl-C again: a signal that lands between
	 * two system calls is not lost. */
	struct itimerval it = {.it_value = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000},
	                       .it_interval = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000}};

	cancel_flag = 0;
	return setitimer(ITIMER_REAL, &it, NULL);
}

static int t_cancel(struct ng_boot *b)
{
	struct sigaction sa;
	struct ng_comm *c;
	unsigned char *buf;
	struct ng_req rr, sr;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART, as the driver installs its handlers */
	sigaction(SIGALRM, &sa, NULL);

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 16u << 20, (void **)&buf), NG_OK);
	memset(buf, 0, 16u << 20);
	if (b->rank == 0) {
		CHECK(!arm_alarm_ms(100), "setitimer: %s", strerror(errno));
		CHECK_ST(ng_recv(c, 1, buf, 10), NG_ERR_CANCELLED);
		CHECK(!arm_alarm_ms(100), "setitimer: %s", strerror(errno));
		CHECK_ST(ng_irecv(c, 1, buf, 10, &rr), NG_OK);
		CHECK_ST(ng_isend(c, 1, buf, 16u << 20, &sr), NG_OK);
		CHECK_ST(ng_wait(c, &rr), NG_ERR_CANCELLED);
		CHECK_ST(ng_wait(c, &sr), NG_ERR_CANCELLED);
		CHECK(!arm_alarm_ms(0), "setitimer: %s", strerror(errno));
	}
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	ng_module_tcp.ops->close(c);
	return 0;
}

static int t_memory(struct ng_boot *b)
{
	static const size_t lens[] = {0, 1, 63, 64, 100, 4095, 4096, 5000, (1u << 20) + 3};
	long page = sysconf(_SC_PAGESIZE);
	struct ng_comm *c;
	void *p[sizeof(lens) / sizeof(lens[0])];
	size_t i;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK(c->caps == (NG_CAP_RELIABLE | NG_CAP_CHANNEL | NG_CAP_NONBLOCK | NG_CAP_MULTIRANK), "caps %#x",
	      c->caps);
	CHECK(c->max_msg == 0 && ng_module_tcp.hdr_bytes == 0, "max_msg/hdr_bytes");
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t align = lens[i] >= 4096 ? (size_t)page : 64;

		CHECK_ST(ng_alloc(c, lens[i], &p[i]), NG_OK);
		CHECK((uintptr_t)p[i] % align == 0, "alloc(%zu) = %p not %zu-aligned", lens[i], p[i], align);
		memset(p[i], 0xa5, lens[i]);
	}
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i += 2)
		ng_free(c, p[i]);
	ng_free(c, NULL);
	ng_module_tcp.ops->close(c); /* releases the odd ones */
	return 0;
}

/* Lazy: both ranks send first (a simultaneous connect), blocking and
 * non-blocking, then take turns; the pair ends with one connection. */
static int t_simultaneous(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char *sbuf, *rbuf;
	struct ng_req sr[8], rr[8];
	int peer = 1 - b->rank;
	size_t i, n = 4096;

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	CHECK_ST(ng_alloc(c, 8 * n, (void **)&sbuf), NG_OK);
	CHECK_ST(ng_alloc(c, 8 * n, (void **)&rbuf), NG_OK);
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	for (i = 0; i < 8; i++) {
		fill(sbuf + i * n, n, tag_of(b->rank, peer, n, i));
		CHECK_ST(ng_isend(c, peer, sbuf + i * n, n, &sr[i]), NG_OK);
	}
	for (i = 0; i < 8; i++)
		CHECK_ST(ng_irecv(c, peer, rbuf + i * n, n, &rr[i]), NG_OK);
	for (i = 0; i < 8; i++)
		CHECK_ST(ng_wait(c, &rr[i]), NG_OK);
	for (i = 0; i < 8; i++)
		CHECK_ST(ng_wait(c, &sr[i]), NG_OK);
	for (i = 0; i < 8; i++)
		CHECK(check(rbuf + i * n, n, tag_of(peer, b->rank, n, i)) == n, "message %zu", i);
	/* Turns: the higher rank's sends move to the kept connection, the
	 * lower rank reads the other to its end. */
	for (i = 0; i < 20; i++) {
		size_t len = 1 + i * 997;

		if (b->rank == (int)(i % 2)) {
			fill(sbuf, len, tag_of(b->rank, peer, len, i));
			CHECK_ST(ng_send(c, peer, sbuf, len), NG_OK);
		} else {
			CHECK_ST(ng_recv(c, peer, rbuf, len), NG_OK);
			CHECK(check(rbuf, len, tag_of(peer, b->rank, len, i)) == len, "turn %zu", i);
		}
	}
	CHECK(tcp_counter(c, "open") == 1, "%lld connections open at the end, expected 1",
	      tcp_counter(c, "open"));
	CHECK(tcp_counter(c, "connections_at_open") == (lazy ? 0 : 1), "connections at open");
	ng_module_tcp.ops->close(c);
	return 0;
}

/* Lazy: a first send waits for nobody.  Rank 0 sends to 1, then to 2; rank
 * 1 waits for 2 first; rank 2 waits for 0 before it sends to 1.  Rank 1 is
 * busy elsewhere when rank 0 connects to it. */
static int t_cycle(struct ng_boot *b)
{
	struct ng_comm *c;
	unsigned char buf[64];

	CHECK_ST(open_tcp(b, &default_args, 0, &c), NG_OK);
	switch (b->rank) {
	case 0:
		fill(buf, sizeof(buf), 1);
		CHECK_ST(ng_send(c, 1, buf, sizeof(buf)), NG_OK);
		fill(buf, sizeof(buf), 2);
		CHECK_ST(ng_send(c, 2, buf, sizeof(buf)), NG_OK);
		break;
	case 1:
		CHECK_ST(ng_recv(c, 2, buf, sizeof(buf)), NG_OK);
		CHECK(check(buf, sizeof(buf), 21) == sizeof(buf), "from rank 2");
		CHECK_ST(ng_recv(c, 0, buf, sizeof(buf)), NG_OK);
		CHECK(check(buf, sizeof(buf), 1) == sizeof(buf), "from rank 0");
		break;
	default:
		CHECK_ST(ng_recv(c, 0, buf, sizeof(buf)), NG_OK);
		CHECK(check(buf, sizeof(buf), 2) == sizeof(buf), "from rank 0");
		fill(buf, sizeof(buf), 21);
		CHECK_ST(ng_send(c, 1, buf, sizeof(buf)), NG_OK);
		break;
	}
	CHECK_ST(ng_boot_barrier(b), NG_OK);
	/* Descriptors follow the peers used: rank 0 talked to 2, rank 1 to 2. */
	CHECK(tcp_counter(c, "open") == 2 || b->rank != 0, "rank 0: %lld open", tcp_counter(c, "open"));
	ng_module_tcp.ops->close(c);
	return 0;
}

/* ---- the hub ------------------------------------------------------------ */

static int run(const struct scenario *sc)
{
	struct hub_ctx h = {.n = 0, .lfd = -1, .helper = -1};
	int fds[MAXRANKS], size = sc->size, bad = 0, idx = 0, r;
	pid_t pids[MAXRANKS];
	unsigned char *all = NULL;

	for (r = 0; r < size; r++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			perror("socketpair");
			exit(1);
		}
		pids[r] = fork();
		if (pids[r] < 0) {
			perror("fork");
			exit(1);
		}
		if (pids[r] == 0) {
			struct fake_boot f = {.base = {.ops = &fake_ops, .rank = r, .size = size},
			                      .fd = sv[1]};
			int rc;

			for (int k = 0; k < r; k++)
				close(fds[k]);
			close(sv[0]);
			snprintf(f.base.host, sizeof(f.base.host), "localhost");
			snprintf(f.base.addr, sizeof(f.base.addr), "127.0.0.1");
			rc = sc->rank_main(&f.base);
			f.base.ops->fini(&f.base);
			fflush(NULL);
			_exit(rc);
		}
		close(sv[1]);
		fds[r] = sv[0];
	}

	/* Serve collectives until a rank hangs up. */
	for (;;) {
		uint32_t len = 0, l;

		for (r = 0; r < size; r++) {
			if (xread(fds[r], &l, sizeof(l)))
				goto done;
			if (r == 0) {
				len = l;
				free(all);
				all = malloc((size_t)len * (size_t)size + 1);
			}
			if (l != len || xread(fds[r], all + (size_t)r * len, len)) {
				fprintf(stderr, "test_tcp_unit: collective mismatch\n");
				bad = 1;
				goto done;
			}
		}
		if (sc->hook)
			sc->hook(&h, idx, len, all, size);
		idx++;
		for (r = 0; r < size; r++)
			(void)xwrite(fds[r], all, (size_t)len * (size_t)size);
	}
done:
	free(all);
	for (r = 0; r < size; r++)
		close(fds[r]);
	for (r = 0; r < size; r++) {
		int ws;

		waitpid(pids[r], &ws, 0);
		if (r == sc->killed_rank) {
			if (!WIFSIGNALED(ws) || WTERMSIG(ws) != SIGKILL) {
				fprintf(stderr, "test_tcp_unit: rank %d was expected to be killed\n", r);
				bad = 1;
			}
		} else if (!WIFEXITED(ws) || WEXITSTATUS(ws)) {
			if (WIFSIGNALED(ws))
				fprintf(stderr, "test_tcp_unit: rank %d died of signal %d\n", r,
				        WTERMSIG(ws));
			bad = 1;
		}
	}
	if (sc->hub_check && sc->hub_check(&h))
		bad = 1;
	return bad;
}

static bool loopback_ok(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok = fd >= 0 && !bind(fd, (struct sockaddr *)&sin, sizeof(sin)) && !listen(fd, 1);

	if (fd >= 0)
		close(fd);
	return ok;
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
	    {"blocking", 2, t_blocking, NULL, -1, NULL},
	    {"nonblocking", 2, t_nonblocking, NULL, -1, NULL},
	    {"many", 2, t_many, NULL, -1, NULL},
	    {"order", 2, t_order, NULL, -1, NULL},
	    {"n1", 3, t_n1, NULL, -1, NULL},
	    {"mesh", 4, t_mesh, NULL, -1, NULL},
	    {"stray", 3, t_stray, stray_hook, -1, stray_closed},
	    {"flood", 3, t_stray, flood_hook, -1, stray_closed},
	    {"refused", 2, t_refused, refused_hook, -1, refused_check},
	    {"redirected", 2, t_redirected, redirected_hook, -1, redirected_check},
	    {"allowed", 2, t_allowed, NULL, -1, NULL},
	    {"death-recv", 2, t_death_recv, NULL, 1, NULL},
	    {"death-wait", 2, t_death_wait, NULL, 1, NULL},
	    {"death-send", 2, t_death_send, NULL, 1, NULL},
	    {"timeout", 2, t_timeout, NULL, -1, NULL},
	    {"cancel", 2, t_cancel, NULL, -1, NULL},
	    {"memory", 2, t_memory, NULL, -1, NULL},
	    {"simultaneous", 2, t_simultaneous, NULL, -1, NULL},
	    {"cycle", 3, t_cycle, NULL, -1, NULL},
	};
	static const char *const modes[] = {"sleep", "spin", "sleep", "spin"};
	static const char *const connects[] = {"eager", "eager", "lazy", "lazy"};
	size_t i, n = sizeof(scenarios) / sizeof(scenarios[0]), k = 0;
	int failed = 0;

	if (!loopback_ok()) {
		printf("1..0 # SKIP no loopback TCP\n");
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("1..%zu\n", 4 * n);
	fflush(stdout);
	for (size_t m = 0; m < 4; m++) {
		poll_mode = modes[m];
		lazy = !strcmp(connects[m], "lazy");
		for (i = 0; i < n; i++) {
			double t0 = now_s();
			int bad;

			k++;
			if (argc > 1 && strcmp(argv[1], scenarios[i].name)) {
				printf("ok %zu - %s %s %s # SKIP not selected\n", k, connects[m], modes[m],
				       scenarios[i].name);
				continue;
			}
			bad = run(&scenarios[i]);
			failed |= bad;
			printf("%s %zu - %s %s %s (%.2f s)\n", bad ? "not ok" : "ok", k, connects[m],
			       modes[m], scenarios[i].name, now_s() - t0);
			fflush(stdout);
		}
	}
	return failed ? 1 : 0;
}
