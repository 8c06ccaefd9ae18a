/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * From checked result files to figures (contract in render.h): --kind,
 * finding and running gnuplot, splitting a pattern drawn in parts, and
 * ng_plot_render() (groups, names, data and scripts, figures).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "figure.h"
#include "gnuplot.h"
#include "render.h"

/* gnuplot's messages kept for showing when it fails */
#define NG_GNUPLOT_LOG_MAX 16384

/* ------------------------------------------------------------------------
 * --kind
 */

static const char *const ng_kind_names[] = {
    [NG_PLOT_KIND_AUTO] = "auto",
    [NG_PLOT_KIND_LATENCY] = "latency",
    [NG_PLOT_KIND_BANDWIDTH] = "bandwidth",
    [NG_PLOT_KIND_OVERHEAD] = "overhead",
};

static unsigned ng_kind_panels(enum ng_plot_kind kind)
{
	switch (kind) {
	case NG_PLOT_KIND_LATENCY:
		return NG_PANEL_LAT;
	case NG_PLOT_KIND_BANDWIDTH:
		return NG_PANEL_BW | NG_PANEL_MSG;
	case NG_PLOT_KIND_OVERHEAD:
		return NG_PANEL_OVH;
	case NG_PLOT_KIND_AUTO:
		break;
	}
	return ~0u;
}

bool ng_plot_kind_of(const char *word, enum ng_plot_kind *kind_p)
{
	size_t k;

	for (k = 0; k < sizeof(ng_kind_names) / sizeof(ng_kind_names[0]); k++) {
		if (strcmp(word, ng_kind_names[k]) == 0) {
			*kind_p = (enum ng_plot_kind)k;
			return true;
		}
	}
	return false;
}

/* ------------------------------------------------------------------------
 * gnuplot
 */

static bool ng_is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* @name itself when it holds a '/', else the first match in $PATH. */
static char *ng_which(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char *cand;

	if (strchr(name, '/'))
		return ng_is_executable(name) ? ng_plot_xasprintf("%s", name) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			cand = ng_plot_xasprintf("./%s", name);
		else
			cand = ng_plot_xasprintf("%.*s/%s", (int)(end - p), p, name);
		if (ng_is_executable(cand))
			return cand;
		free(cand);
		if (!*end)
			return NULL;
	}
}

char *ng_plot_find_gnuplot(void)
{
	const char *env = getenv("NGAUGE_GNUPLOT");
	char *path;

	if (env && *env)
		return ng_which(env);
	path = ng_which(NG_GNUPLOT);
	return path ? path : ng_which("gnuplot");
}

/* Runs "gnuplot SCRIPT" in directory @dir; shows gnuplot's messages only
 * when it fails. */
static ng_status ng_gnuplot_run(const char *gnuplot, const char *dir, const char *script)
{
	char *log = ng_plot_xcalloc(NG_GNUPLOT_LOG_MAX + 1, 1);
	char arg0[] = "gnuplot";
	char *args[] = {arg0, (char *)ng_plot_basename(script), NULL};
	size_t used = 0;
	ng_status rc = NG_ERR_SYS;
	int pipefd[2], status, devnull;
	ssize_t got;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		ng_error("cannot run gnuplot: pipe: %s", strerror(errno));
		goto out_free_log;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ng_error("cannot run gnuplot: fork: %s", strerror(errno));
		goto out_close_pipe;
	}
	if (pid == 0) {
		devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		if (chdir(dir) != 0) {
			dprintf(STDERR_FILENO, "cannot enter %s: %s\n", dir, strerror(errno));
			_exit(126);
		}
		execv(gnuplot, args);
		dprintf(STDERR_FILENO, "cannot execute %s: %s\n", gnuplot, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	for (;;) {
		char buf[4096];

		got = read(pipefd[0], buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (used < NG_GNUPLOT_LOG_MAX) {
			size_t room = NG_GNUPLOT_LOG_MAX - used;
			size_t take = (size_t)got < room ? (size_t)got : room;

			memcpy(log + used, buf, take);
			used += take;
		}
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ng_error("cannot run gnuplot: waitpid: %s", strerror(errno));
			goto out_close_pipe;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rc = NG_OK;
		goto out_close_pipe;
	}
	fputs(log, stderr);
	if (used && log[used - 1] != '\n')
		fputc('\n', stderr);
	if (WIFEXITED(status))
		ng_error("gnuplot failed on %s (exit status %d)", script, WEXITSTATUS(status));
	else
		ng_error("gnuplot failed on %s (signal %d)", script, WTERMSIG(status));
out_close_pipe:
	close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
out_free_log:
	free(log);
	return rc;
}

/* ------------------------------------------------------------------------
 * Rendering groups
 */

/* A pattern name made safe for a file name. */
static char *ng_file_word(const char *s)
{
	char *w = ng_plot_xasprintf("%s", s), *p;

	for (p = w; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			*p = '_';
	}
	return w;
}

/*
 * Replaces each figure of a pattern drawn in parts (its family's .parts) by
 * one figure per part with a panel that --kind keeps; the others stay.  A
 * pattern left with no figure is a usage error (reported).
 */
static ng_status ng_figs_split(struct ng_fig **figs_p, size_t *n_p, enum ng_plot_kind kind)
{
	struct ng_fig *in = *figs_p, *out;
	size_t n = *n_p, cap = n, k = 0, i, j, r, s, nsubs;
	const char **subs;
	ng_status rc = NG_OK;
	const json_t *row;

	for (i = 0; i < n; i++)
		for (j = 0; in[i].desc->parts.key && j < in[i].n; j++)
			cap += json_array_size(in[i].files[j]->rows);
	out = ng_plot_xcalloc(cap, sizeof(*out));
	subs = ng_plot_xcalloc(cap, sizeof(*subs));
	for (i = 0; i < n; i++) {
		struct ng_fig *g = &in[i];
		const char *key = g->desc->parts.key;
		size_t before = k;

		if (!key) {
			out[k++] = *g;
			continue;
		}
		/* the parts, each once, in the order of their first rows */
		for (j = nsubs = 0; j < g->n; j++) {
			json_array_foreach(g->files[j]->rows, r, row)
			{
				const char *v = json_string_value(json_object_get(row, key));

				for (s = 0; v && s < nsubs && strcmp(subs[s], v) != 0; s++)
					;
				if (v && s == nsubs)
					subs[nsubs++] = v;
			}
		}
		for (s = 0; s < nsubs; s++) {
			unsigned panels = g->desc->parts.panels(subs[s]) & ng_kind_panels(kind);

			if (!panels)
				continue;
			out[k] = *g;
			out[k].sub = subs[s];
			out[k].panels = panels;
			out[k].files = ng_plot_xcalloc(g->n, sizeof(*g->files));
			out[k].n = 0;
			/* the files with rows of this part */
			for (j = 0; j < g->n; j++) {
				json_array_foreach(g->files[j]->rows, r, row)
				{
					if (ng_plot_row_is(row, key, subs[s]))
						break;
				}
				if (r < json_array_size(g->files[j]->rows))
					out[k].files[out[k].n++] = g->files[j];
			}
			k++;
		}
		if (k == before && !rc) {
			if (nsubs)
				ng_error("plot: --kind %s has no panel for any %s of pattern \"%s\" (%s)",
				         ng_kind_names[kind], key, g->files[0]->pattern, g->files[0]->path);
			else
				ng_error("plot: no row of pattern \"%s\" names its %s (%s)",
				         g->files[0]->pattern, key, g->files[0]->path);
			rc = NG_ERR_USAGE;
		}
		free(g->files);
	}
	free(subs);
	free(in);
	*figs_p = out;
	*n_p = k;
	return rc;
}

ng_status ng_plot_render(const struct ng_plot_file *files, size_t n, const struct ng_plot_req *req)
{
	const struct ng_term *term = ng_term_of(req->out);
	size_t *group = ng_plot_xcalloc(n, sizeof(*group)); /* figure of each file */
	struct ng_fig *figs = ng_plot_xcalloc(n, sizeof(*figs));
	size_t nfigs = 0, i, j;
	char *stem, *dir, *slash;
	ng_status rc = NG_OK;

	if (!term) {
		ng_error("%s: unknown figure type (the name must end in .pdf, .svg, .png or .tex)", req->out);
		free(group);
		free(figs);
		return NG_ERR_USAGE;
	}
	stem = ng_plot_xasprintf("%.*s", (int)(strrchr(req->out, '.') - req->out), req->out);
	slash = strrchr(stem, '/');
	dir = slash ? ng_plot_xasprintf("%.*s", slash == stem ? 1 : (int)(slash - stem), stem)
	            : ng_plot_xasprintf(".");

	/* group by pattern, in the order of each group's first file */
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(files[j].pattern, files[i].pattern) != 0; j++)
			;
		if (j < i) {
			group[i] = group[j];
			continue;
		}
		group[i] = nfigs;
		figs[nfigs].term = term;
		figs[nfigs].desc = ng_figure_of(files[i].pattern);
		figs[nfigs].panels = figs[nfigs].desc->panels & ng_kind_panels(req->kind);
		figs[nfigs].files = ng_plot_xcalloc(n, sizeof(*figs[nfigs].files));
		if (!figs[nfigs++].panels) {
			ng_error("plot: --kind %s has no panel for pattern \"%s\" (%s)",
			         ng_kind_names[req->kind], files[i].pattern, files[i].path);
			rc = NG_ERR_USAGE;
		}
	}
	if (rc)
		goto out_free_figs;
	for (i = 0; i < n; i++) {
		struct ng_fig *g = &figs[group[i]];

		g->files[g->n++] = &files[i];
		rc = ng_figure_check(g->desc, &files[i]);
		if (rc)
			goto out_free_figs;
	}
	rc = ng_figs_split(&figs, &nfigs, req->kind);
	if (rc)
		goto out_free_figs;

	/* names, data and scripts */
	for (i = 0; i < nfigs; i++) {
		struct ng_fig *g = &figs[i];

		if (nfigs == 1) {
			g->stem = ng_plot_xasprintf("%s", stem);
		} else {
			char *word = ng_file_word(g->files[0]->pattern);
			char *part = g->sub ? ng_file_word(g->sub) : NULL;

			g->stem = part ? ng_plot_xasprintf("%s-%s-%s", stem, word, part)
			               : ng_plot_xasprintf("%s-%s", stem, word);
			free(word);
			free(part);
		}
		g->dat = ng_plot_xcalloc(g->n, sizeof(*g->dat));
		for (j = 0; j < g->n; j++)
			g->dat[j] = g->n == 1 ? ng_plot_xasprintf("%s.dat", g->stem)
			                      : ng_plot_xasprintf("%s-%zu.dat", g->stem, j + 1);
		rc = ng_fig_write(g);
		if (rc)
			goto out_free_figs;
	}

	/* figures */
	for (i = 0; i < nfigs && req->gnuplot; i++) {
		char *script = ng_plot_xasprintf("%s.gp", figs[i].stem);

		rc = ng_gnuplot_run(req->gnuplot, dir, script);
		free(script);
		if (rc)
			goto out_free_figs;
		if (!req->quiet)
			printf("%s%s\n", figs[i].stem, term->ext);
		if (req->made) {
			char *fig = ng_plot_xasprintf("%s%s", figs[i].stem, term->ext);

			req->made(req->made_data, fig);
			free(fig);
		}
	}

out_free_figs:
	for (i = 0; i < nfigs; i++) {
		for (j = 0; figs[i].dat && j < figs[i].n; j++)
			free(figs[i].dat[j]);
		free(figs[i].dat);
		free(figs[i].files);
		free(figs[i].stem);
	}
	free(figs);
	free(group);
	free(dir);
	free(stem);
	return rc;
}
