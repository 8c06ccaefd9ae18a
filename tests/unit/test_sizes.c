/* SPDX-License-Identifier: BSD-3-Clause */
/* Size specifications: values, order, and errors that name the bad token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "sizes.h"
#include "tests/check.h"

static void expect(const char *spec, const size_t *want, size_t nwant)
{
	size_t *v = NULL, n = 0;
	char err[256] = "";
	int rc = ng_sizes_parse(spec, &v, &n, err, sizeof(err));
	CHECK(rc == 0, "'%s' rejected: %s", spec, err);
	if (rc)
		return;
	CHECK(n == nwant, "'%s' gives %zu sizes, want %zu", spec, n, nwant);
	for (size_t i = 0; i < n && i < nwant; i++)
		CHECK(v[i] == want[i], "'%s' size %zu is %zu, want %zu", spec, i, v[i], want[i]);
	free(v);
}

static void expect_error(const char *spec, const char *token)
{
	size_t *v = NULL, n = 0;
	char err[256] = "";
	int rc = ng_sizes_parse(spec, &v, &n, err, sizeof(err));
	CHECK(rc == -1, "'%s' accepted", spec);
	CHECK(strstr(err, token) != NULL, "error for '%s' does not name '%s': %s", spec, token, err);
	CHECK(strchr(err, '\n') == NULL, "error is not one line: %s", err);
	free(v);
}

/* Capping a default list at a module's largest message, and the spec of the result. */
static void expect_cap(const char *spec, size_t max, const char *want, bool want_changed)
{
	size_t *v = NULL, n = 0, *back = NULL, nback = 0;
	char err[256] = "", *got;
	bool changed;

	CHECK(ng_sizes_parse(spec, &v, &n, err, sizeof(err)) == 0, "'%s': %s", spec, err);
	changed = ng_sizes_cap(v, &n, max);
	got = ng_sizes_format(v, n);
	CHECK(got && strcmp(got, want) == 0, "'%s' capped at %zu gives '%s', want '%s'", spec, max,
	      got ? got : "(null)", want);
	CHECK(changed == want_changed, "'%s' capped at %zu: changed flag %d", spec, max, changed);
	/* The formatted list parses back to itself. */
	CHECK(got && ng_sizes_parse(got, &back, &nback, err, sizeof(err)) == 0 && nback == n &&
	          memcmp(back, v, n * sizeof(*v)) == 0,
	      "'%s' does not parse back", got ? got : "(null)");
	free(back);
	free(got);
	free(v);
}

int main(void)
{
	expect_cap("1-8K", 4056, "1,2,4,8,16,32,64,128,256,512,1K,2K,4056", true);
	expect_cap("1-8K", 984, "1,2,4,8,16,32,64,128,256,512,984", true);
	expect_cap("1-8K", 1024, "1,2,4,8,16,32,64,128,256,512,1K", true);
	expect_cap("1-8K", 8192, "1,2,4,8,16,32,64,128,256,512,1K,2K,4K,8K", false);
	expect_cap("1-8K", 0, "1,2,4,8,16,32,64,128,256,512,1K,2K,4K,8K", false);
	expect_cap("8-64K", 4, "4", true);
	expect_cap("1-100:x1.5", 50, "1,2,3,5,8,11,17,26,38,50", true);
	static const size_t p2[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
	expect("1-1K", p2, 11);
	static const size_t list[] = {1, 8, 4096};
	expect("4K,1,8", list, 3);
	expect("8,1,4K,8,1", list, 3);
	static const size_t lin[] = {1024, 2048, 3072, 4096};
	expect("1K-4K:+1K", lin, 4);
	static const size_t lin2[] = {0, 3, 6, 7};
	expect("0-7:+3", lin2, 4);
	static const size_t geo[] = {1, 2, 3, 5, 8, 11, 17, 26, 38, 58, 64};
	expect("1-64:x1.5", geo, 11);
	static const size_t z[] = {0, 1, 2, 4};
	expect("0-4", z, 4);
	static const size_t one[] = {1048576};
	expect("1M", one, 1);
	static const size_t mi[] = {65536, 131072};
	expect("64KiB,128KB", mi, 2);
	static const size_t upper[] = {3, 6, 10};
	expect("3-10", upper, 3);

	expect_error("1-1X", "1-1X");
	expect_error("abc", "abc");
	expect_error("1,2,zz,8", "zz");
	expect_error("64-1", "64-1");
	expect_error("1-8:x1", ":x1");
	expect_error("1-8:+0", ":+0");
	expect_error("1-8:q2", ":q2");
	expect_error("", "empty");
	expect_error("1-100000000:+1", "100000");

	size_t s = 0;
	CHECK(ng_parse_size("64K", &s) == 0 && s == 65536, "64K");
	CHECK(ng_parse_size("2g", &s) == 0 && s == (size_t)2 << 30, "2g");
	CHECK(ng_parse_size("-1", &s) == -1, "-1 accepted");
	CHECK(ng_parse_size("1KK", &s) == -1, "1KK accepted");
	CHECK(ng_parse_size("99999999999999999999", &s) == -2, "overflow accepted");
	CHECK(ng_parse_size("08", &s) == 0 && s == 8, "08 not decimal");
	CHECK(ng_parse_size("0100", &s) == 0 && s == 100, "0100 not decimal");
	CHECK(ng_parse_size("0x10", &s) == -1, "0x10 accepted");
	CHECK(ng_parse_size("", &s) == -1, "empty accepted");
	CHECK(ng_parse_size("1e300", &s) == -1, "1e300 accepted");
	CHECK(ng_parse_size("18446744073709551615", &s) == -2, "2^64-1 accepted");
	CHECK(ng_parse_size("1T", &s) == -1, "1T accepted");
	CHECK(ng_parse_size("1024G", &s) == 0 && s == (size_t)1 << 40, "1024G refused");
	CHECK(ng_parse_size("1025G", &s) == -2, "1025G accepted");
	{
		long long v = 0;
		CHECK(ng_parse_int("08", &v) == 0 && v == 8, "int 08");
		CHECK(ng_parse_int("0100", &v) == 0 && v == 100, "int 0100");
		CHECK(ng_parse_int("-1", &v) == 0 && v == -1, "int -1");
		CHECK(ng_parse_int("0x10", &v) == -1, "int 0x10 accepted");
		CHECK(ng_parse_int("", &v) == -1, "int empty accepted");
		CHECK(ng_parse_int("-", &v) == -1, "int - accepted");
		CHECK(ng_parse_int("+1", &v) == -1, "int +1 accepted");
		CHECK(ng_parse_int("8x", &v) == -1, "int 8x accepted");
		CHECK(ng_parse_int("9223372036854775807", &v) == 0 && v == 9223372036854775807LL,
		      "int 2^63-1");
		CHECK(ng_parse_int("-9223372036854775808", &v) == 0 && v == (-9223372036854775807LL - 1),
		      "int -2^63");
		CHECK(ng_parse_int("9223372036854775808", &v) == -2, "int 2^63 accepted");
		CHECK(ng_parse_int("18446744073709551615", &v) == -2, "int 2^64-1 accepted");
		CHECK(ng_parse_int("99999999999999999999999", &v) == -2, "int overflow accepted");
	}

	return check_exit();
}
