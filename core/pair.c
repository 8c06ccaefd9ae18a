/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --server/--client: the server runs what the client asks for.
 *
 * The client sends its arguments, less those of the connection itself
 * (--client HOST, --port, --auth), in the handshake (core/boot_tcp.c); the
 * server's child parses them followed by the server's own, so that what the
 * server sets for itself (--tcp-bind, --ib-dev, --timeout, ...) wins.  Both
 * then run with the same plan.
 *
 * What the server decides alone (doc/security.md):
 * - --auth FILE: the key its clients must prove; --allow CIDR,...: the
 *   networks it admits clients from.  Listening beyond loopback with
 *   neither, it says so in one warning at start.
 * - Limits a client cannot raise: --server-max-size (largest message, 1 GiB),
 *   --server-max-count (-c and -w, 10^7), --server-max-time (a run's wall
 *   time, 1 hour; --time or --ci-target's --max-time over all sizes above it
 *   is refused at once, a run that outlives it is stopped), and the
 *   bootstrap's --timeout (the server's, 8 s by default, bounds the
 *   client's).  A run beyond them is refused with one line the client sees.
 * - A client may not send the server's own options (--server, --once,
 *   --bind, --allow, --server-max-*): refused likewise.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "auth.h"
#include "launch.h"
#include "pair.h"

/* Options of the connection: the client keeps them to itself. */
static const char *const client_own[] = {"client", "port", "auth", NULL};
/* Options only the server may set. */
static const char *const server_own[] = {
    "server", "once", "bind", "allow", "server-max-time", "server-max-size", "server-max-count",
    "client", "port", "auth", NULL};

/* The option @arg names when it is one of @names ("--port", "--port=5"); NULL otherwise.
 * *inline_p: its value is in @arg itself. */
static const char *named(const char *arg, const char *const *names, bool *inline_p)
{
	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	for (size_t i = 0; names[i]; i++) {
		size_t n = strlen(names[i]);

		if (strncmp(arg + 2, names[i], n) == 0 && (arg[2 + n] == '\0' || arg[2 + n] == '=')) {
			*inline_p = arg[2 + n] == '=';
			return names[i];
		}
	}
	return NULL;
}

/* The client: connect, prove the key, send the arguments, hear the verdict,
 * and come back through the driver with the connected bootstrap. */
static int client(const struct ng_args *a, int argc, char **argv, ng_pair_run_fn run)
{
	struct ng_auth auth = {0};
	struct ng_boot *boot;
	size_t len = 0;
	char *blob;
	ng_status st;
	int code;

	if (ng_args_str(a, "auth") && ng_auth_load(ng_args_str(a, "auth"), &auth))
		return NG_EXIT_USAGE;
	for (int i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	blob = malloc(len + 1);
	if (!blob) {
		ng_error("out of memory");
		return 1;
	}
	len = 0;
	for (int i = 1; i < argc; i++) {
		bool inl;

		if (named(argv[i], client_own, &inl)) {
			i += inl ? 0 : 1; /* and its value */
			continue;
		}
		memcpy(blob + len, argv[i], strlen(argv[i]) + 1);
		len += strlen(argv[i]) + 1;
	}
	st = ng_boot_tcp_client(ng_args_str(a, "client"), (int)ng_args_int(a, "port"),
	                        ng_args_given(a, "timeout") ? ng_args_double(a, "timeout") : 60, &auth, blob,
	                        len, &boot);
	free(blob);
	ng_auth_clear(&auth);
	if (st)
		return st == NG_ERR_USAGE ? NG_EXIT_USAGE : st == NG_ERR_CANCELLED ? 128 + SIGINT : 1;
	code = run(argc, argv, boot, NULL);
	return code;
}

/* The server's command line and limits, for each client it serves. */
struct serve_args {
	int argc;
	char **argv;
	struct ng_server_limits lim;
	ng_pair_run_fn run;
};

/* The server's child: the client's arguments, then the server's own. */
static int serve(struct ng_boot *boot, const char *args, size_t len, void *arg)
{
	const struct serve_args *sa = arg;
	char **nargv = calloc(len + (size_t)sa->argc + 2, sizeof(*nargv)), why[512];
	int nargc = 1, code;

	if (!nargv) {
		ng_error("out of memory");
		(void)ng_boot_tcp_verdict(boot, 1, "the server is out of memory");
		boot->ops->fini(boot);
		return 1;
	}
	nargv[0] = sa->argv[0];
	/* the handshake checked that the list ends in a NUL */
	for (size_t off = 0; off < len; off += strlen(args + off) + 1) {
		bool inl;
		const char *own = named(args + off, server_own, &inl);

		if (own) {
			snprintf(why, sizeof(why), "--%s is the server's own option; a client cannot send it",
			         own);
			ng_error("--server: refused the client at %s: %s", boot->peer_addr, why);
			(void)ng_boot_tcp_verdict(boot, NG_EXIT_USAGE, why);
			boot->ops->fini(boot);
			free(nargv);
			return NG_EXIT_USAGE;
		}
		nargv[nargc++] = (char *)(args + off);
	}
	for (int i = 1; i < sa->argc; i++)
		nargv[nargc++] = sa->argv[i];
	nargv[nargc] = NULL;
	code = sa->run(nargc, nargv, boot, &sa->lim);
	free(nargv);
	return code;
}

/* Whether --bind names a loopback address (127.0.0.0/8 or localhost). */
static bool loopback_only(const char *bind)
{
	return bind && (strncmp(bind, "127.", 4) == 0 || strcmp(bind, "localhost") == 0);
}

static int server(const struct ng_args *a, int argc, char **argv, ng_pair_run_fn run)
{
	struct serve_args sa = {.argc = argc, .argv = argv, .run = run};
	struct ng_auth auth = {0};
	struct ng_allow allow;
	char err[256];
	int code;

	if (ng_args_str(a, "auth") && ng_auth_load(ng_args_str(a, "auth"), &auth))
		return NG_EXIT_USAGE;
	if (ng_args_str(a, "allow") && ng_allow_parse(ng_args_str(a, "allow"), &allow, err, sizeof(err))) {
		ng_error("%s", err);
		return NG_EXIT_USAGE;
	}
	sa.lim.max_time_s = ng_args_double(a, "server-max-time");
	sa.lim.max_size = ng_args_size(a, "server-max-size");
	sa.lim.max_count = ng_args_int(a, "server-max-count");
	sa.lim.timeout_s = ng_args_double(a, "timeout");
	if (!(sa.lim.max_time_s > 0) || !(sa.lim.timeout_s > 0)) {
		ng_error("--server-max-time and --timeout must be positive");
		return NG_EXIT_USAGE;
	}
	if (!auth.on && !ng_args_str(a, "allow") && !loopback_only(ng_args_str(a, "bind")))
		ng_warn(
		    "--server listens on %s port %lld with neither --auth nor --allow: anyone who reaches it "
		    "can run benchmarks on this host (doc/security.md)",
		    ng_args_str(a, "bind") ? ng_args_str(a, "bind") : "every interface",
		    ng_args_int(a, "port"));
	struct ng_server_conf c = {
	    .bind = ng_args_str(a, "bind"),
	    .port = (int)ng_args_int(a, "port"),
	    .once = ng_args_flag(a, "once"),
	    .timeout_s = sa.lim.timeout_s,
	    .max_time_s = sa.lim.max_time_s,
	    .auth = auth.on ? &auth : NULL,
	    .allow = ng_args_str(a, "allow") ? &allow : NULL,
	    .serve = serve,
	    .arg = &sa,
	};
	code = ng_server_run(&c);
	ng_auth_clear(&auth);
	return code;
}

int ng_pair_up(const struct ng_args *a, int argc, char **argv, ng_pair_run_fn run)
{
	static const char *const only_server[] = {"allow", "server-max-time", "server-max-size",
	                                          "server-max-count", NULL};

	if (ng_args_flag(a, "server") && ng_args_given(a, "client")) {
		ng_error("--server and --client exclude each other");
		return NG_EXIT_USAGE;
	}
	if (ng_args_flag(a, "server"))
		return server(a, argc, argv, run);
	for (size_t i = 0; only_server[i]; i++)
		if (ng_args_given(a, only_server[i])) {
			ng_error("--%s applies to --server only", only_server[i]);
			return NG_EXIT_USAGE;
		}
	return client(a, argc, argv, run);
}

int ng_pair_check(const struct ng_server_limits *lim, size_t max_size, long long count, long long warmup,
                  double run_s, char *why, size_t len)
{
	if (max_size > lim->max_size) {
		snprintf(why, len,
		         "messages of %zu bytes are above this server's --server-max-size (%zu bytes)",
		         max_size, lim->max_size);
		return -1;
	}
	if (count > lim->max_count || warmup > lim->max_count) {
		snprintf(why, len, "%lld repetitions are above this server's --server-max-count (%lld)",
		         count > warmup ? count : warmup, lim->max_count);
		return -1;
	}
	if (run_s > lim->max_time_s) {
		snprintf(why, len,
		         "the run would take %.0f s, above this server's --server-max-time (%.0f s)", run_s,
		         lim->max_time_s);
		return -1;
	}
	return 0;
}
