/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One status type for all of ngauge, generated from one list so that the
 * enum, its name and its message cannot drift apart.
 *
 * Rule: an error is reported once, where it is decided (ng_error() with the
 * exact cause: errno text, device, peer); callers only pass the status up.
 */
#ifndef NG_STATUS_H
#define NG_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#define NG_STATUS_MAP(X)                                                                                     \
	X(OK, "success")                                                                                     \
	X(ERR_USAGE, "invalid usage")                                                                        \
	X(ERR_NOMEM, "out of memory")                                                                        \
	X(ERR_SYS, "system call failed")                                                                     \
	X(ERR_IO, "input/output error")                                                                      \
	X(ERR_PEER_LOST, "peer lost")                                                                        \
	X(ERR_TIMEOUT, "timed out")                                                                          \
	X(ERR_UNSUPPORTED, "operation not supported")                                                        \
	X(ERR_NODEV, "no device")                                                                            \
	X(ERR_PROTO, "protocol error")                                                                       \
	X(ERR_VERIFY, "payload verification failed")                                                         \
	X(ERR_CANCELLED, "interrupted")                                                                      \
	X(ERR_TRUNCATED, "message size mismatch")                                                            \
	X(ERR_INTERNAL, "internal error")

typedef enum {
#define NG_STATUS_ENUM(n, m) NG_##n,
	NG_STATUS_MAP(NG_STATUS_ENUM)
#undef NG_STATUS_ENUM
	    NG_STATUS_COUNT
} ng_status;

/* "ERR_PEER_LOST" etc.; never NULL. */
const char *ng_status_name(ng_status s);
/* Human message ("peer lost"); never NULL. */
const char *ng_status_msg(ng_status s);

/*
 * Diagnostics: one line on stderr, prefixed "ngauge: " and, in a multi-rank
 * run, "rank R: ". Never call these inside a timed loop.
 */
void ng_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ng_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* While @buf is set: the first error said is also kept in @buf (@len bytes),
 * without the prefix (the --server's child tells its client why it refuses
 * a run).  NULL stops keeping. */
void ng_log_keep_first(char *buf, size_t len);
/* Sets the rank shown in the prefix (-1: none). Called by the driver. */
void ng_log_set_rank(int rank);
/* Until the next ng_log_set_rank(): say nothing (ranks of an MPI launch other
 * than the first, before the bootstrap: they parse the same command line as
 * rank 0, which reports its errors once). */
#define NG_LOG_QUIET (-2)
/* While held (calls nest; core/plugin.h's guard holds it around a library's
 * start with the stop signals blocked): a message is left unsaid when a stop
 * signal (SIGINT, SIGTERM, SIGHUP) is pending, as the fault it reports is the
 * interruption's (a peer that stopped first). */
void ng_log_hold_when_stopping(bool on);

#endif
