/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Values a peer sent (base/peer.h), --allow's networks (core/allow.h)
 * and where a rank may connect (ng_boot_may_connect, core/bootstrap.h):
 *   ng_peer_len / ng_peer_slen  the value inside its bounds (both ends
 *       included) comes back; below, above, 2^64 - 1, a negative value
 *       (also where the minimum is negative) and INT64_MIN are refused with
 *       NG_ERR_PROTO and one line naming the peer, the value and the bounds
 *   ng_peer_str  a field with a NUL is left alone; one without is cut to
 *       its capacity - 1 bytes and said to be no string; capacity 0
 *   ng_peer_bad  NG_ERR_PROTO and its line
 *   ng_allow_parse  /0, /32, a bare address (/32), host bits cleared, lists;
 *       refused: prefixes 33, -1, empty, "8x", "a", IPv6, three-part
 *       addresses, an empty list or item, more than NG_ALLOW_MAX networks
 *   ng_allow_match  the edges of a /15, /0 admits all, /32 one address; no
 *       match for anything that is not a dotted quad, nor for no list
 *   ng_boot_may_connect  anything where there is no peer address; else the
 *       peer's own address, or one --allow admits; refused otherwise, in a
 *       line naming what and both addresses
 */
#include <stdint.h>
#include <string.h>

#include "allow.h"
#include "bootstrap.h"
#include "peer.h"
#include "status.h"
#include "tests/check.h"

/* The first error line said since the last call (without the prefix). */
static char said[512];

static void said_reset(void)
{
	said[0] = '\0';
	ng_log_keep_first(said, sizeof(said));
}

static void test_len(void)
{
	size_t v = 12345;

	CHECK(ng_peer_len("count", 1, 0, 0, 10, &v) == NG_OK && v == 0, "0 in 0 .. 10: %zu", v);
	CHECK(ng_peer_len("count", 1, 10, 0, 10, &v) == NG_OK && v == 10, "10 in 0 .. 10: %zu", v);
	CHECK(ng_peer_len("count", 1, 4, 4, 4, &v) == NG_OK && v == 4, "4 in 4 .. 4: %zu", v);
	v = 777;
	said_reset();
	CHECK(ng_peer_len("count", 1, 11, 0, 10, &v) == NG_ERR_PROTO, "11 in 0 .. 10 accepted");
	CHECK(v == 777, "a refused value was written: %zu", v);
	CHECK(strcmp(said, "rank 1 sent a count of 11 (0 .. 10): dropped") == 0, "said \"%s\"", said);
	said_reset();
	CHECK(ng_peer_len("host text length", 3, UINT64_MAX, 0, 65536, &v) == NG_ERR_PROTO,
	      "2^64 - 1 accepted");
	CHECK(strcmp(said, "rank 3 sent a host text length of 18446744073709551615 (0 .. 65536): dropped") ==
	          0,
	      "said \"%s\"", said);
	said_reset();
	CHECK(ng_peer_len("size", -1, 3, 4, 8, &v) == NG_ERR_PROTO, "3 in 4 .. 8 accepted");
	CHECK(strcmp(said, "a peer sent a size of 3 (4 .. 8): dropped") == 0, "said \"%s\"", said);
	ng_log_keep_first(NULL, 0);
}

static void test_slen(void)
{
	size_t v = 5;

	CHECK(ng_peer_slen("length", 0, 7, 0, 7, &v) == NG_OK && v == 7, "7 in 0 .. 7: %zu", v);
	CHECK(ng_peer_slen("length", 0, 0, -3, 7, &v) == NG_OK && v == 0, "0 in -3 .. 7: %zu", v);
	said_reset();
	CHECK(ng_peer_slen("length", 2, -1, 0, 100, &v) == NG_ERR_PROTO, "-1 accepted");
	CHECK(strcmp(said, "rank 2 sent a length of -1 (0 .. 100): dropped") == 0, "said \"%s\"", said);
	/* a negative value is never a length, whatever the bounds say */
	CHECK(ng_peer_slen("length", 2, -1, -5, 100, &v) == NG_ERR_PROTO, "-1 in -5 .. 100 accepted");
	CHECK(ng_peer_slen("length", 2, INT64_MIN, INT64_MIN, 100, &v) == NG_ERR_PROTO, "INT64_MIN accepted");
	CHECK(ng_peer_slen("length", 2, 101, 0, 100, &v) == NG_ERR_PROTO, "101 in 0 .. 100 accepted");
	CHECK(v == 0, "a refused value was written: %zu", v);
	ng_log_keep_first(NULL, 0);
}

static void test_str(void)
{
	char ok[8] = "abc", full[4] = {'w', 'x', 'y', 'z'}, one[1] = {'q'}, none[1] = {'n'};

	CHECK(ng_peer_str(ok, sizeof(ok)) && strcmp(ok, "abc") == 0, "\"%s\"", ok);
	CHECK(!ng_peer_str(full, sizeof(full)), "4 bytes without a NUL taken for a string");
	CHECK(strcmp(full, "wxy") == 0, "not cut to 3 bytes: \"%.4s\"", full);
	CHECK(!ng_peer_str(one, sizeof(one)) && one[0] == '\0', "one byte without a NUL");
	CHECK(!ng_peer_str(none, 0) && none[0] == 'n', "capacity 0 changed or passed");
	said_reset();
	CHECK(ng_peer_bad("host name", 4, "not terminated within 64 bytes") == NG_ERR_PROTO, "ng_peer_bad");
	CHECK(strcmp(said, "rank 4 sent a malformed host name (not terminated within 64 bytes): dropped") ==
	          0,
	      "said \"%s\"", said);
	ng_log_keep_first(NULL, 0);
}

static void test_allow_parse(void)
{
	static const char *const bad[] = {
	    "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/", "10.0.0.0/8x",        "10.0.0.0/a", "::1",
	    "fe80::/64",   "10.0.0",      "",          "10.0.0.1,,10.0.0.2", "1.2.3.4 ",   "/8",
	};
	struct ng_allow a;
	char err[128], many[64 * (NG_ALLOW_MAX + 1)];
	size_t n = 0;

	CHECK(ng_allow_parse("0.0.0.0/0", &a, err, sizeof(err)) == 0, "/0: %s", err);
	CHECK(a.n == 1 && a.e[0].net == 0 && a.e[0].mask == 0, "/0: %zu %#x/%#x", a.n, a.e[0].net,
	      a.e[0].mask);
	CHECK(ng_allow_parse("10.1.2.3", &a, err, sizeof(err)) == 0, "bare address: %s", err);
	CHECK(a.n == 1 && a.e[0].net == 0x0a010203u && a.e[0].mask == 0xffffffffu, "bare: %#x/%#x",
	      a.e[0].net, a.e[0].mask);
	CHECK(ng_allow_parse("10.1.2.3/32", &a, err, sizeof(err)) == 0, "/32: %s", err);
	CHECK(a.n == 1 && a.e[0].net == 0x0a010203u && a.e[0].mask == 0xffffffffu, "/32: %#x/%#x", a.e[0].net,
	      a.e[0].mask);
	CHECK(ng_allow_parse("10.1.2.3/24,198.18.0.0/15", &a, err, sizeof(err)) == 0, "list: %s", err);
	CHECK(a.n == 2 && a.e[0].net == 0x0a010200u && a.e[0].mask == 0xffffff00u &&
	          a.e[1].net == 0xc6120000u && a.e[1].mask == 0xfffe0000u,
	      "list: %zu, %#x/%#x, %#x/%#x", a.n, a.e[0].net, a.e[0].mask, a.e[1].net, a.e[1].mask);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(ng_allow_parse(bad[i], &a, err, sizeof(err)) == -1, "'%s' accepted", bad[i]);
		CHECK(strncmp(err, "--allow: ", 9) == 0, "'%s': reason \"%s\"", bad[i], err);
	}
	CHECK(ng_allow_parse("10.0.0.0/33", &a, err, sizeof(err)) == -1 && strstr(err, "'33'") &&
	          strstr(err, "0 .. 32"),
	      "/33: \"%s\"", err);
	CHECK(ng_allow_parse("::1", &a, err, sizeof(err)) == -1 &&
	          strstr(err, "'::1' is not an IPv4 address"),
	      "::1: \"%s\"", err);

	for (int i = 0; i <= NG_ALLOW_MAX; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "%s10.0.%d.0/24", i ? "," : "", i);
	CHECK(ng_allow_parse(many, &a, err, sizeof(err)) == -1 && strstr(err, "more than"),
	      "%d networks: \"%s\"", NG_ALLOW_MAX + 1, err);
	many[strlen(many) - strlen(",10.0.32.0/24")] = '\0';
	CHECK(ng_allow_parse(many, &a, err, sizeof(err)) == 0 && a.n == NG_ALLOW_MAX, "%d networks: %zu, %s",
	      NG_ALLOW_MAX, a.n, err);
}

static void test_allow_match(void)
{
	static const char *const not_quads[] = {"::1",   "::ffff:127.0.0.1", "localhost", "", "127.0.0.1 ",
	                                        "127.1", "256.0.0.1"};
	struct ng_allow all, one, net;
	char err[128];

	CHECK(ng_allow_parse("0.0.0.0/0", &all, err, sizeof(err)) == 0, "%s", err);
	CHECK(ng_allow_parse("10.1.2.3", &one, err, sizeof(err)) == 0, "%s", err);
	CHECK(ng_allow_parse("198.18.0.0/15", &net, err, sizeof(err)) == 0, "%s", err);

	CHECK(ng_allow_match(&all, "0.0.0.0") && ng_allow_match(&all, "255.255.255.255") &&
	          ng_allow_match(&all, "127.0.0.1"),
	      "/0 does not admit everyone");
	CHECK(ng_allow_match(&one, "10.1.2.3"), "/32 does not admit its address");
	CHECK(!ng_allow_match(&one, "10.1.2.2") && !ng_allow_match(&one, "10.1.2.4"),
	      "/32 admits a neighbour");
	CHECK(ng_allow_match(&net, "198.18.0.0") && ng_allow_match(&net, "198.19.255.255"),
	      "/15 does not admit its edges");
	CHECK(!ng_allow_match(&net, "198.17.255.255") && !ng_allow_match(&net, "198.20.0.0"),
	      "/15 admits past its edges");
	for (size_t i = 0; i < sizeof(not_quads) / sizeof(not_quads[0]); i++)
		CHECK(!ng_allow_match(&all, not_quads[i]), "'%s' matched /0", not_quads[i]);
	CHECK(!ng_allow_match(NULL, "10.1.2.3"), "no list admits");
}

static void test_may_connect(void)
{
	struct ng_boot b;
	struct ng_allow lo;
	char err[128];

	memset(&b, 0, sizeof(b));
	b.rank = 1;
	b.size = 2;
	said_reset();
	CHECK(ng_boot_may_connect(&b, "127.0.0.1", "the tcp listener of rank 0"), "no peer address: refused");
	CHECK(ng_boot_may_connect(&b, "203.0.113.9", "the tcp listener of rank 0"),
	      "no peer address: refused");
	CHECK(said[0] == '\0', "said \"%s\"", said);

	snprintf(b.peer_addr, sizeof(b.peer_addr), "192.0.2.7");
	CHECK(ng_boot_may_connect(&b, "192.0.2.7", "the tcp listener of rank 0"),
	      "the peer's own address refused");
	CHECK(said[0] == '\0', "said \"%s\"", said);
	CHECK(!ng_boot_may_connect(&b, "127.0.0.1", "the tcp listener of rank 0"), "loopback admitted");
	CHECK(strstr(said, "the tcp listener of rank 0 is at 127.0.0.1") && strstr(said, "(192.0.2.7)") &&
	          strstr(said, "refused"),
	      "said \"%s\"", said);
	CHECK(!ng_boot_may_connect(&b, "192.0.2.70", "x"),
	      "a longer address with the peer's as prefix admitted");

	CHECK(ng_allow_parse("127.0.0.0/8", &lo, err, sizeof(err)) == 0, "%s", err);
	b.allow = &lo;
	CHECK(ng_boot_may_connect(&b, "127.0.0.1", "x"), "--allow 127.0.0.0/8 does not admit 127.0.0.1");
	CHECK(ng_boot_may_connect(&b, "192.0.2.7", "x"), "the peer's own address refused with --allow");
	CHECK(!ng_boot_may_connect(&b, "10.0.0.1", "x"), "--allow 127.0.0.0/8 admits 10.0.0.1");
	ng_log_keep_first(NULL, 0);
}

int main(void)
{
	test_len();
	test_slen();
	test_str();
	test_allow_parse();
	test_allow_match();
	test_may_connect();
	return check_exit();
}
