/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_pingpong_ref: the smallest honest TCP ping-pong, the reference that
 * `ngauge -x tcp -p pingpong` is compared against.  It uses nothing of ngauge.
 *
 *   tcp_pingpong_ref SIZE COUNT [WARMUP]
 *
 * With REF_SPIN=1 in the environment both sides spin instead of sleeping:
 * every send() and recv() is MSG_DONTWAIT, repeated while it would block
 * (the reference of `--tcp-poll spin`).
 *
 * SIZE accepts K/M/G suffixes (binary).  The process listens on an ephemeral
 * port of 127.0.0.1 and forks; the child connects and echoes.  Buffers as in
 * ngauge's pingpong: the parent sends from a send buffer and receives into a
 * separate receive buffer; the child answers from its own send buffer, or
 * with REF_ECHO=same from the buffer it received into (--pp-echo same).  Both sockets
 * have TCP_NODELAY and stay in blocking mode; a message is one send() loop
 * and one recv(MSG_WAITALL) loop, nothing else (the calls a TCP program that
 * knows the message length makes).  WARMUP untimed round trips (default
 * COUNT/10, at least 10) are followed by COUNT timed ones, each timed on its
 * own with clock_gettime(CLOCK_MONOTONIC_RAW) (vDSO, the clock ngauge's
 * "clock" timer uses).  The parent prints one line,
 *
 *   median_us X
 *
 * the median half round-trip time in microseconds (mean of the two middle
 * values for an even COUNT, as GSL defines it).  Buffers are page aligned,
 * like the tcp module's alloc() for sizes >= 4 KiB.  Exit status 0, 1 on a
 * failure, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "ref_common.h"
#include <unistd.h>

/* @dontwait: 0 to block, MSG_DONTWAIT to spin. */
static int ref_write(int fd, const char *p, size_t len, int dontwait)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | dontwait);

		if (n < 0 && (errno == EINTR || (dontwait && (errno == EAGAIN || errno == EWOULDBLOCK))))
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int ref_read(int fd, char *p, size_t len, int dontwait)
{
	while (len) {
		ssize_t n = recv(fd, p, len, dontwait ? dontwait : MSG_WAITALL);

		if (n < 0 && (errno == EINTR || (dontwait && (errno == EAGAIN || errno == EWOULDBLOCK))))
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int ref_nodelay(int fd)
{
	const int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* The child: connect, answer every message (received into @rbuf) from
 * @sbuf, exit. */
static int ref_echo(const struct sockaddr_in *sin, char *rbuf, const char *sbuf, size_t size, size_t total,
                    int dw)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t i;

	if (fd < 0 || connect(fd, (const struct sockaddr *)sin, sizeof(*sin)) || ref_nodelay(fd)) {
		perror("tcp_pingpong_ref: child: connect");
		return 1;
	}
	for (i = 0; i < total; i++) {
		if (ref_read(fd, rbuf, size, dw) || ref_write(fd, sbuf, size, dw)) {
			perror("tcp_pingpong_ref: child: echo");
			return 1;
		}
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t slen = sizeof(sin);
	size_t size, count, warmup, i;
	double *samples, median;
	int lfd, fd, status, rc = 1, dw, same = ref_echo_same();
	const char *spin = getenv("REF_SPIN");
	char *sbuf, *rbuf;
	pid_t pid;

	if (argc < 3 || argc > 4 || ref_parse_size(argv[1], SIZE_MAX / 2, &size) ||
	    ref_parse_size(argv[2], SIZE_MAX / 2, &count) || count == 0 ||
	    (argc == 4 && ref_parse_size(argv[3], SIZE_MAX / 2, &warmup)) || same < 0) {
		fprintf(stderr, "usage: [REF_ECHO=separate|same] [REF_SPIN=1] %s SIZE COUNT [WARMUP]\n",
		        argv[0]);
		return 2;
	}
	dw = spin && strcmp(spin, "1") == 0 ? MSG_DONTWAIT : 0;
	if (argc < 4)
		warmup = count / 10 < 10 ? 10 : count / 10;

	sbuf = aligned_alloc(4096, (size + 4095) / 4096 * 4096 + 4096);
	rbuf = aligned_alloc(4096, (size + 4095) / 4096 * 4096 + 4096);
	samples = malloc(count * sizeof(*samples));
	if (!sbuf || !rbuf || !samples) {
		fprintf(stderr, "tcp_pingpong_ref: out of memory\n");
		return 1;
	}
	memset(sbuf, 0x5a, size);
	memset(rbuf, 0, size);
	signal(SIGPIPE, SIG_IGN);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen)) {
		perror("tcp_pingpong_ref: listen");
		return 1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("tcp_pingpong_ref: fork");
		return 1;
	}
	if (pid == 0) {
		ref_pin(1);
		close(lfd);
		_exit(ref_echo(&sin, rbuf, same ? rbuf : sbuf, size, warmup + count, dw));
	}
	ref_pin(0);
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0 || ref_nodelay(fd)) {
		perror("tcp_pingpong_ref: accept");
		goto out_wait;
	}

	for (i = 0; i < warmup; i++) {
		if (ref_write(fd, sbuf, size, dw) || ref_read(fd, rbuf, size, dw))
			goto out_io;
	}
	for (i = 0; i < count; i++) {
		uint64_t t0 = ref_now_ns();

		if (ref_write(fd, sbuf, size, dw) || ref_read(fd, rbuf, size, dw))
			goto out_io;
		samples[i] = (double)(ref_now_ns() - t0) * 1e-3 / 2;
	}
	median = ref_median(samples, count);
	printf("median_us %.4f\n", median);
	rc = 0;
	goto out_close;

out_io:
	perror("tcp_pingpong_ref: ping-pong");
out_close:
	close(fd);
out_wait:
	if (waitpid(pid, &status, 0) == pid && (!WIFEXITED(status) || WEXITSTATUS(status)))
		rc = 1;
	free(samples);
	free(rbuf);
	free(sbuf);
	return rc;
}
