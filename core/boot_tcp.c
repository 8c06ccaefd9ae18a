/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-host bootstrap without MPI: --server on one host, --client HOST on the
 * other.  One TCP connection carries the collectives; it opens with a
 * handshake (magic, version) so that a stray connection is turned away, and
 * the server answers with its magic, or "busy" while it serves another
 * client (core/server.c).
 * Allgather with two ranks: each side sends its part, then reads the other's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cancel.h"
#include "fdio.h"
#include "launch.h"

#define BOOT_MAGIC "NGBOOT01"
#define BUSY_MAGIC "NGBUSY01" /* the server's answer while it serves another client */

struct boot_tcp {
	struct ng_boot base;
	int fd;
};

static ng_status tcp_allgather(struct ng_boot *b, const void *mine, size_t len, void *all)
{
	struct boot_tcp *t = (struct boot_tcp *)b;
	uint64_t mylen = len, theirs;
	char *dst = all;
	int rc;

	if (ng_fd_write_all(t->fd, &mylen, sizeof(mylen)) || ng_fd_write_all(t->fd, mine, len))
		goto err_lost;
	rc = ng_fd_read_all(t->fd, &theirs, sizeof(theirs));
	if (rc)
		goto err_lost;
	if (theirs != mylen) {
		ng_error("bootstrap: peer disagrees on the size of an exchange (%llu vs %zu bytes)",
		         (unsigned long long)theirs, len);
		return NG_ERR_PROTO;
	}
	memcpy(dst + (size_t)b->rank * len, mine, len);
	if (ng_fd_read_all(t->fd, dst + (size_t)(1 - b->rank) * len, len))
		goto err_lost;
	return NG_OK;
err_lost:
	if (ng_cancel_requested())
		return NG_ERR_CANCELLED;
	ng_error("bootstrap: connection to rank %d lost", 1 - b->rank);
	return NG_ERR_PEER_LOST;
}

static ng_status tcp_barrier(struct ng_boot *b)
{
	char d = 0;
	return tcp_allgather(b, &d, 0, &d);
}

static void tcp_fini(struct ng_boot *b)
{
	struct boot_tcp *t = (struct boot_tcp *)b;
	close(t->fd);
	free(t);
}

/* No .abort: the peer sees the connection close (bootstrap.h). */
static const struct ng_boot_ops tcp_boot_ops = {
    .name = "tcp",
    .barrier = tcp_barrier,
    .allgather = tcp_allgather,
    .fini = tcp_fini,
};

static ng_status finish(int fd, int rank, struct ng_boot **b_p)
{
	struct boot_tcp *t = calloc(1, sizeof(*t));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int one = 1;

	if (!t) {
		close(fd);
		return NG_ERR_NOMEM;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t->base.ops = &tcp_boot_ops;
	t->base.rank = rank;
	t->base.size = 2;
	t->fd = fd;
	gethostname(t->base.host, sizeof(t->base.host) - 1);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, t->base.addr, sizeof(t->base.addr), NULL, 0,
		            NI_NUMERICHOST);
	*b_p = &t->base;
	return NG_OK;
}

ng_status ng_boot_tcp_listen(const char *bind_addr, int port, int *lfd_p)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE},
	                *ai = NULL;
	char portstr[16];
	int lfd, one = 1, rc;

	snprintf(portstr, sizeof(portstr), "%d", port);
	rc = getaddrinfo(bind_addr, portstr, &hints, &ai);
	if (rc) {
		ng_error("--server: cannot resolve '%s': %s", bind_addr ? bind_addr : "*", gai_strerror(rc));
		return NG_ERR_USAGE;
	}
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		ng_error("--server: socket: %s", strerror(errno));
		freeaddrinfo(ai);
		return NG_ERR_SYS;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 8)) {
		ng_error("--server: cannot listen on port %d: %s", port, strerror(errno));
		close(lfd);
		freeaddrinfo(ai);
		return NG_ERR_SYS;
	}
	freeaddrinfo(ai);
	*lfd_p = lfd;
	return NG_OK;
}

int ng_boot_tcp_accept(int lfd)
{
	char magic[8];
	uint32_t ver;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ng_fd_read_all_timeout(fd, magic, sizeof(magic), 2000) || memcmp(magic, BOOT_MAGIC, 8) != 0 ||
	    ng_fd_read_all_timeout(fd, &ver, 4, 2000) || ver != 1) {
		ng_warn("--server: turned away a connection that is not an ngauge client");
		close(fd);
		return -1;
	}
	return fd;
}

ng_status ng_boot_tcp_welcome(int fd, struct ng_boot **b_p)
{
	if (ng_fd_write_all(fd, BOOT_MAGIC, 8)) {
		ng_error("--server: the client went away during the handshake");
		close(fd);
		return NG_ERR_PEER_LOST;
	}
	return finish(fd, 1, b_p);
}

void ng_boot_tcp_busy(int fd)
{
	(void)ng_fd_write_all(fd, BUSY_MAGIC, 8);
	close(fd);
}

ng_status ng_boot_tcp_client(const char *host, int port, double timeout_s, struct ng_boot **b_p)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	char portstr[16], magic[8] = "";
	uint32_t ver = 1;
	int fd = -1, rc;
	struct timespec t0;

	snprintf(portstr, sizeof(portstr), "%d", port);
	rc = getaddrinfo(host, portstr, &hints, &ai);
	if (rc) {
		ng_error("--client: cannot resolve '%s': %s", host, gai_strerror(rc));
		return NG_ERR_USAGE;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The server may start a moment later: retry until the timeout. */
	for (;;) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		int err = errno;
		close(fd);
		fd = -1;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ng_cancel_requested() || (double)(now.tv_sec - t0.tv_sec) >= timeout_s) {
			ng_error("--client: cannot connect to %s:%d: %s", host, port, strerror(err));
			freeaddrinfo(ai);
			return NG_ERR_PEER_LOST;
		}
		struct timespec d = {0, 100000000};
		nanosleep(&d, NULL);
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		ng_error("--client: socket: %s", strerror(errno));
		return NG_ERR_SYS;
	}
	if (ng_fd_write_all(fd, BOOT_MAGIC, 8) || ng_fd_write_all(fd, &ver, 4) ||
	    ng_fd_read_all_timeout(fd, magic, 8, (int)(timeout_s * 1000)) || memcmp(magic, BOOT_MAGIC, 8)) {
		/* A server busy with another client says so at once. */
		if (memcmp(magic, BUSY_MAGIC, 8) == 0)
			ng_error("--client: the server at %s:%d is busy with another client", host, port);
		else
			ng_error("--client: %s:%d did not answer as an ngauge server", host, port);
		close(fd);
		return NG_ERR_PROTO;
	}
	return finish(fd, 0, b_p);
}
