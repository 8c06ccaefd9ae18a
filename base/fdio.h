/* SPDX-License-Identifier: BSD-3-Clause */
/* Whole-buffer reads and writes on blocking descriptors (bootstrap use). */
#ifndef NG_FDIO_H
#define NG_FDIO_H

#include <stdbool.h>
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
/* Whether what @out says reaches the reader of @err, so that @err need not
 * repeat it: one open file (a terminal, a log), or both terminals.  False
 * otherwise: a file, /dev/null, a pipe (the table kept aside, or an MPI
 * launcher's forwarding of unknown destination: the warnings belong on @err
 * too), and @out a terminal beside an @err that is not one (Open MPI gives
 * its ranks a pseudo-terminal for stdout and a pipe for stderr, whatever
 * the user redirected them to).  NGAUGE_STDOUT_SHOWN=1 or 0 in the environment decides instead:
 * ngauge sets it for the ranks it starts under mpiexec, from its own
 * descriptors. */
bool ng_fd_shown_with(int out, int err);

#endif
