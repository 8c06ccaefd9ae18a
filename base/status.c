/* SPDX-License-Identifier: BSD-3-Clause */
#include "status.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[] = {
#define NG_STATUS_NAME(n, m) #n,
    NG_STATUS_MAP(NG_STATUS_NAME)
#undef NG_STATUS_NAME
};

static const char *const status_msgs[] = {
#define NG_STATUS_MSG(n, m) m,
    NG_STATUS_MAP(NG_STATUS_MSG)
#undef NG_STATUS_MSG
};

const char *ng_status_name(ng_status s)
{
	return (unsigned)s < NG_STATUS_COUNT ? status_names[s] : "UNKNOWN";
}

const char *ng_status_msg(ng_status s)
{
	return (unsigned)s < NG_STATUS_COUNT ? status_msgs[s] : "unknown status";
}

/* The log prefix is process state of the driver, not of a module: it is set
 * once after launch and only read afterwards. */
static int log_rank = -1;

void ng_log_set_rank(int rank)
{
	log_rank = rank;
}

/* ng_log_hold_when_stopping's depth (process state of the driver, as above). */
static int log_hold;

void ng_log_hold_when_stopping(bool on)
{
	log_hold += on ? 1 : -1;
}

/* ng_log_keep_first's buffer (process state of the driver, as above). */
static char *keep_buf;
static size_t keep_len;

void ng_log_keep_first(char *buf, size_t len)
{
	keep_buf = buf;
	keep_len = len;
}

/* A stop signal pending (blocked, not yet handled). */
static bool stop_pending(void)
{
	sigset_t p;

	return sigpending(&p) == 0 && (sigismember(&p, SIGINT) == 1 || sigismember(&p, SIGTERM) == 1 ||
	                               sigismember(&p, SIGHUP) == 1);
}

/* The length of the well-formed, printable UTF-8 character at @p; 0 for a
 * control character or a byte that starts none. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned cp;

	if (p[0] < 0x20 || p[0] == 0x7f)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1fu;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0fu;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07u;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3fu);
	}
	/* overlong forms, surrogates, beyond U+10FFFF, and C1 controls */
	if ((n == 2 && cp < 0xa0) || (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

static void vlog(const char *kind, const char *fmt, va_list ap)
{
	char line[1024];
	int n = 0;

	if (log_rank == NG_LOG_QUIET || (log_hold > 0 && stop_pending()))
		return;
	if (log_rank >= 0)
		n = snprintf(line, sizeof(line), "ngauge: rank %d: %s", log_rank, kind);
	else
		n = snprintf(line, sizeof(line), "ngauge: %s", kind);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (keep_buf && !keep_buf[0] && kind[0] == '\0')
		snprintf(keep_buf, keep_len, "%s", line + n);
	/* A message is one line whatever it quotes (a result file's strings, a
	 * peer's words): control characters become spaces, and bytes that are
	 * no UTF-8 (or C1 controls, which some terminals obey) '?'. */
	for (unsigned char *p = (unsigned char *)line; *p;) {
		size_t cl = utf8_len(p);

		if (cl == 0) {
			*p = *p < 0x80 ? ' ' : '?';
			cl = 1;
		}
		p += cl;
	}
	/* One write per line so that lines of several ranks do not interleave. */
	size_t len = strlen(line);
	if (len + 1 < sizeof(line)) {
		line[len++] = '\n';
		line[len] = '\0';
	}
	fputs(line, stderr);
	fflush(stderr);
}

void ng_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void ng_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}
