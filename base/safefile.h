/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Files written safely: every file ngauge writes (result files, figures,
 * gnuplot scripts and data, reports, comparisons) is made through this.
 *
 * A file is first a temporary in its target's directory, DIR/.NAME.XXXXXX
 * (NAME cut to 200 bytes, XXXXXX random), created by mkostemp(): O_CREAT |
 * O_EXCL, so that a name planted beforehand (a symbolic link to another
 * file, a file of someone else's) is never opened, never followed, never
 * truncated; O_CLOEXEC, so that no child inherits it by accident.  The
 * caller writes it through its descriptor or a stream, then commits it:
 * rename() puts it in place atomically, replacing whatever was there by that
 * name (a symbolic link is replaced, not followed).  A file not committed is
 * removed.  The final name is never opened for writing.
 *
 * The file gets the mode a creat() with 0666 would give (the process'
 * umask applies, read from /proc/self/status; 0600 when it cannot be
 * read).  No fsync: a crash may lose the last rewrite, never leave a half
 * one under the final name.
 *
 * Errors: the functions return -1 with errno set and report nothing; the
 * caller names the file in its own message.  Not thread-safe on one struct;
 * distinct structs are independent.
 */
#ifndef NG_SAFEFILE_H
#define NG_SAFEFILE_H

#include <stdbool.h>
#include <stdio.h>

/* One file being written.  A zeroed struct is "no file" (path NULL):
 * ng_safefile_close() on it does nothing. */
struct ng_safefile {
	char *path; /* the final name (a copy); NULL: no file */
	char *tmp;  /* the temporary's name until committed, then NULL */
	int fd;     /* the file, open for reading and writing (valid while path != NULL) */
	FILE *f;    /* the stream over fd (ng_safefile_stream()), or NULL */
};

/*
 * Creates the temporary for final name @path (which must not end in '/')
 * in @path's directory and fills *@sf.  Returns 0, or -1 with errno set
 * (the directory cannot be written, ENAMETOOLONG, ENOMEM ...; *@sf zeroed).
 */
int ng_safefile_open(struct ng_safefile *sf, const char *path);

/* A stdio stream over sf->fd, made on first call and owned by @sf (closed by
 * ng_safefile_close(); never fclose() it).  NULL with errno set when fdopen()
 * fails. */
FILE *ng_safefile_stream(struct ng_safefile *sf);

/*
 * Puts the file in place: flushes the stream (if any), checks it for an
 * earlier write error, renames the temporary to the final name.  Returns 0;
 * or -1 with errno set (EIO for an earlier write error of the stream),
 * the temporary removed.  Either way the descriptor stays open (a committed
 * file can still be read through it: /proc/self/fd/N names that very file
 * whatever happens to its name later) until ng_safefile_close().
 */
int ng_safefile_commit(struct ng_safefile *sf);

/* Removes the temporary when it was not committed, closes the file, frees
 * and zeroes *@sf.  Keeps errno.  No-op on a zeroed struct. */
void ng_safefile_close(struct ng_safefile *sf);

/*
 * A whole file in one call: opens the temporary for @path, writes it through
 * @write(stream, @ctx) (0 on success), commits and closes.  Returns 0, or -1
 * with errno set (EIO when @write failed without saying why); on failure
 * nothing is left at @path but what was there before.
 */
int ng_safefile_write(const char *path, int (*write)(FILE *f, const void *ctx), const void *ctx);

/* False when the file name @path holds a control character (a byte below
 * 0x20, or 0x7f), which ngauge refuses in the names it writes; the offset
 * of the first one into *@at_p (may be NULL). */
bool ng_safefile_name_ok(const char *path, size_t *at_p);

#endif
