/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libFuzzer harnesses of the parsers that read untrusted input
 * (tests/fuzz/libfuzzer/): each fuzz_NAME.c defines the entry point below.
 * Built with clang's -fsanitize=fuzzer, libFuzzer calls it; built with any
 * other compiler, standalone.c calls it once per file of the committed
 * corpus, as a regression test.  A harness writes no file outside the
 * private directory of ng_fuzz_dir(), starts no process and opens no socket.
 */
#ifndef NG_FUZZ_H
#define NG_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* One input: @data[0..size) (not NUL-terminated; libFuzzer's buffer).
 * Returns 0; a bug is a crash or a sanitizer's report. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The private directory of this process (mode 0700, made once under
 * $TMPDIR, else /tmp, and removed with what is left in it at exit).  Never
 * NULL: aborts when it cannot be made. */
const char *ng_fuzz_dir(void);
/* Writes @data[0..size) to @name in ng_fuzz_dir(); returns its path
 * (malloc'ed).  Aborts on an error: the input is not what is tested. */
char *ng_fuzz_file(const char *name, const uint8_t *data, size_t size);
/* Removes every file of ng_fuzz_dir() (not the directory). */
void ng_fuzz_clear(void);
/* @data[0..size) as a NUL-terminated string (malloc'ed; aborts when out
 * of memory). */
char *ng_fuzz_strndup(const uint8_t *data, size_t size);

#endif
