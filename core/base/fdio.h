/* SPDX-License-Identifier: BSD-3-Clause */
/* Whole-buffer reads and writes on blocking descriptors (bootstrap use). */
#ifndef NG_FDIO_H
#define NG_FDIO_H

#include <stddef.h>

/* Return 0 on success, -1 on error (errno set), 1 on EOF before @len bytes.
 * EINTR is retried unless *cancel is set (then -1 with errno EINTR). */
int ng_fd_write_all(int fd, const void *buf, size_t len);
int ng_fd_read_all(int fd, void *buf, size_t len);
/* Like read_all, but gives up after @timeout_ms without data (returns -1,
 * errno ETIMEDOUT). */
int ng_fd_read_all_timeout(int fd, void *buf, size_t len, int timeout_ms);
/* Like write_all, but gives up when the whole of @buf has not gone out
 * within @timeout_ms (a peer that stopped reading): -1, errno ETIMEDOUT. */
int ng_fd_write_all_timeout(int fd, const void *buf, size_t len, int timeout_ms);

#endif
