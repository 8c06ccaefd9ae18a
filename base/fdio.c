/* SPDX-License-Identifier: BSD-3-Clause */
#include "fdio.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cancel.h"

int ng_fd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR && !ng_cancel_requested())
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ng_fd_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n == 0)
			return 1;
		if (n < 0) {
			if (errno == EINTR && !ng_cancel_requested())
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until @fd is ready for @events or @timeout_ms pass: 1 ready, -1 on
 * an error or the timeout (errno ETIMEDOUT). */
static int wait_ready(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		struct pollfd pfd = {.fd = fd, .events = events};
		int r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&pfd, 1, (int)left);
		if (r > 0)
			return 1;
		if (r < 0 && (errno != EINTR || ng_cancel_requested()))
			return -1;
	}
}

int ng_fd_read_all_timeout(int fd, void *buf, size_t len, int timeout_ms)
{
	char *p = buf;

	while (len) {
		if (wait_ready(fd, POLLIN, now_ms() + timeout_ms) < 0)
			return -1;
		ssize_t n = read(fd, p, len);
		if (n == 0)
			return 1;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ng_fd_write_all_timeout(int fd, const void *buf, size_t len, int timeout_ms)
{
	const char *p = buf;

	while (len) {
		if (wait_ready(fd, POLLOUT, now_ms() + timeout_ms) < 0)
			return -1;
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

bool ng_fd_shown_with(int out, int err)
{
	const char *said = getenv("NGAUGE_STDOUT_SHOWN");
	struct stat so, se;

	if (said && (said[0] == '0' || said[0] == '1') && !said[1])
		return said[0] == '1';
	if (fstat(out, &so) != 0)
		return false;
	if (fstat(err, &se) == 0 && so.st_dev == se.st_dev && so.st_ino == se.st_ino)
		return true;
	return isatty(out) != 0 && isatty(err) != 0;
}
