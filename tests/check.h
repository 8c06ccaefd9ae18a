/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The counting check of the single-process unit tests: CHECK(cond, fmt, ...)
 * reports a failed condition with its place and a message and goes on;
 * check_exit() prints the count and gives the exit status (0 or 1).
 * A test program includes this once (it defines the counter).
 */
#ifndef NG_TESTS_CHECK_H
#define NG_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);             \
			fprintf(stderr, __VA_ARGS__);                                                        \
			fputc('\n', stderr);                                                                 \
			failures++;                                                                          \
		}                                                                                            \
	} while (0)

static inline int check_exit(void)
{
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}

#endif
