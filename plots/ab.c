/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ngauge ab [--rounds N] [--keep DIR] [compare's options] -- ARGS_A -- ARGS_B
 * (doc/compare.md): the runs of two command lines, alternately in one
 * session (round r runs A then B when r is odd, B then A when it is even,
 * so that a drift of the host falls on both alike), each a new launch of
 * this program; then `compare` of A's runs with B's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cancel.h"
#include "compare.h"
#include "plot.h"

enum { AB_USAGE = 2 };

static void ab_usage(FILE *f)
{
	fputs("usage: ngauge ab [--rounds N] [--keep DIR] [compare's options] -- ARGS_A -- ARGS_B\n"
	      "  runs `ngauge ARGS_A` and `ngauge ARGS_B` alternately N times (default 5; round r: A then B\n"
	      "  when r is odd, B then A when even), each a new launch, then compares A's runs with B's\n"
	      "  (ngauge compare A1 ... -- B1 ...; its options: --threshold, -o, --plot, --label)\n"
	      "  --keep DIR   keep the runs' result files in DIR (a-R.json, b-R.json)\n"
	      "exit status: compare's; 1 when a run failed, 2 usage\n",
	      f);
}

/* Whether @args (a side's command line) sets what ab sets itself. */
static bool ab_owned(char **args, int n)
{
	for (int i = 0; i < n; i++) {
		const char *a = args[i];

		if (strcmp(a, "-o") == 0 || strncmp(a, "--output", 8) == 0 ||
		    strncmp(a, "--repeat", 8) == 0 || (a[0] == '-' && a[1] == 'o' && a[2])) {
			ng_error(
			    "ab: '%s' in a side's command line: ab names the result files and repeats the "
			    "runs itself",
			    a);
			return true;
		}
	}
	return false;
}

/* One run of @self @args -o @out, its table to /dev/null; its exit status. */
static int ab_run(char *self, char **args, int n, char *out)
{
	static char dash_o[] = "-o";
	char **v = ng_plot_xcalloc((size_t)n + 4, sizeof(*v));
	int k = 0;
	pid_t pid;

	v[k++] = self;
	for (int i = 0; i < n; i++)
		v[k++] = args[i];
	v[k++] = dash_o;
	v[k++] = out;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execv(self, v);
		ng_error("ab: cannot run %s: %s", self, strerror(errno));
		_exit(1);
	}
	free(v);
	if (pid < 0) {
		ng_error("ab: fork: %s", strerror(errno));
		return 1;
	}
	return ng_cancel_wait_child(pid, "ab");
}

static int ab_rounds(const char *v, long *n_p)
{
	char *end;

	errno = 0;
	*n_p = strtol(v, &end, 10);
	if (errno || end == v || *end || *n_p < 1 || *n_p > 1000) {
		ng_error("ab: --rounds takes a whole number from 1 to 1000, got '%s'", v);
		return -1;
	}
	return 0;
}

/* The runs, alternately; their files in @paths (A's first, then B's). */
static int ab_measure(char *self, char **sides[2], const int nside[2], long rounds, const char *dir,
                      char **paths, json_t *order)
{
	for (long r = 1; r <= rounds; r++) {
		int first = r % 2 ? 0 : 1;

		printf("# ab: round %ld:", r);
		for (int s = 0; s < 2; s++) {
			int side = s ? 1 - first : first;
			char *path = ng_plot_xasprintf("%s/%c-%ld.json", dir, side ? 'b' : 'a', r);
			int code;

			paths[side * rounds + r - 1] = path;
			json_array_append_new(order, json_string(side ? "B" : "A"));
			code = ab_run(self, sides[side], nside[side], path);
			printf(" %c exit %d%s", side ? 'B' : 'A', code, s ? "\n" : ",");
			fflush(stdout);
			if (code) {
				if (!s)
					printf("\n");
				ng_error("ab: round %ld, %c: ngauge %s exited %d", r, side ? 'B' : 'A',
				         sides[side][0], code);
				return code == AB_USAGE || code > 128 ? code : 1;
			}
		}
	}
	return 0;
}

int ng_ab_main(int argc, char **argv)
{
	struct ng_cmp_cli cli = {.cmd = "ab", .threshold = 5.0};
	char self[PATH_MAX], tmp[PATH_MAX], **sides[2] = {NULL, NULL}, **paths = NULL;
	const char *keep = NULL, *dir;
	int nside[2] = {0, 0}, i, code = AB_USAGE, t;
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	long rounds = 5;
	size_t *group = NULL;
	json_t *order = json_array();

	cli.labels = ng_plot_xcalloc((size_t)argc, sizeof(*cli.labels));
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			ab_usage(stdout);
			code = 0;
			goto out;
		}
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			if (ab_rounds(argv[++i], &rounds))
				goto out;
			continue;
		}
		if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
			keep = argv[++i];
			continue;
		}
		t = ng_compare_option(&cli, argc, argv, &i);
		if (t < 0)
			goto out;
		if (!t) {
			ng_error("ab: unknown option '%s' (or its value is missing); see ngauge ab --help",
			         argv[i]);
			goto out;
		}
	}
	if (i < argc) {
		sides[0] = argv + i + 1;
		while (i + 1 + nside[0] < argc && strcmp(argv[i + 1 + nside[0]], "--") != 0)
			nside[0]++;
		if (i + 1 + nside[0] < argc) {
			sides[1] = argv + i + 2 + nside[0];
			nside[1] = argc - (i + 2 + nside[0]);
		}
	}
	if (!nside[0] || !nside[1]) {
		ng_error(
		    "ab: needs two command lines: ngauge ab [options] -- ARGS_A -- ARGS_B (neither empty)");
		goto out;
	}
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < nside[s]; k++)
			if (strcmp(sides[s][k], "--") == 0) {
				ng_error("ab: more than two command lines ('--' three times)");
				goto out;
			}
	if (ab_owned(sides[0], nside[0]) || ab_owned(sides[1], nside[1]))
		goto out;
	if (sl <= 0) {
		ng_error("ab: cannot find this program's path");
		code = 1;
		goto out;
	}
	self[sl] = '\0';
	if (keep) {
		if (mkdir(keep, 0755) != 0 && errno != EEXIST) {
			ng_error("ab: --keep %s: %s", keep, strerror(errno));
			goto out;
		}
		dir = keep;
	} else {
		const char *td = getenv("TMPDIR");

		snprintf(tmp, sizeof(tmp), "%s/ngauge-ab.XXXXXX", td && td[0] ? td : "/tmp");
		if (!mkdtemp(tmp)) {
			ng_error("ab: cannot make a directory for the runs' files (%s): %s", tmp,
			         strerror(errno));
			code = 1;
			goto out;
		}
		dir = tmp;
	}
	paths = ng_plot_xcalloc(2 * (size_t)rounds, sizeof(*paths));
	group = ng_plot_xcalloc(2 * (size_t)rounds, sizeof(*group));
	for (long k = 0; k < 2 * rounds; k++)
		group[k] = k >= rounds;
	code = ab_measure(self, sides, nside, rounds, dir, paths, order);
	if (code == 0) {
		json_t *rec = json_pack("{s:I,s:O,s:s}", "rounds", (json_int_t)rounds, "order", order,
		                        "files", keep ? keep : "(removed)");

		cli.ab = rec;
		code = ng_compare_run(&cli, (const char *const *)paths, group, 2 * (size_t)rounds);
		json_decref(rec);
	}
	for (long k = 0; k < 2 * rounds && paths; k++) {
		if (paths[k] && !keep)
			(void)unlink(paths[k]);
		free(paths[k]);
	}
	if (!keep)
		(void)rmdir(tmp);
out:
	json_decref(order);
	free(paths);
	free(group);
	free(cli.labels);
	return code;
}
