/* SPDX-License-Identifier: BSD-3-Clause */
/* Whole-buffer reads and writes on blocking descriptors (bootstrap use). */
#ifndef NG_FDIO_H
#define NG_FDIO_H

#include <stddef.h>

/* Return 0 on success, -1 on error (errno set), 1 on EOF before @len bytes.
 * EINTR is retried unless *cancel is set (then -1 with errno EINTR). */
int ng_fd_write_all(int fd, const void *buf, size_t len);
int ng_fd_read_all(int fd, void *buf, size_t len);
/* Like read_all, but gives up when @timeout_ms pass without data (returns
 * -1, errno ETIMEDOUT): the peer is silent, not slow. */
int ng_fd_read_all_timeout(int fd, void *buf, size_t len, int timeout_ms);
/* Like write_all, but gives up when @timeout_ms pass without any of @buf
 * going out (a peer that stopped reading): -1, errno ETIMEDOUT. */
int ng_fd_write_all_timeout(int fd, const void *buf, size_t len, int timeout_ms);

#endif
