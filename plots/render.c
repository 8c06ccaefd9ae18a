/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * From checked result files to figures (contract in render.h): --kind,
 * finding and running gnuplot, splitting a pattern drawn in parts, and
 * ng_plot_render() (groups, names, data and scripts, figures).
 */
#include <dirent.h>
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
#include "legend.h"
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
    [NG_PLOT_KIND_CDF] = "cdf",
    [NG_PLOT_KIND_HIST] = "hist",
    [NG_PLOT_KIND_LOAD] = "load",
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
	case NG_PLOT_KIND_CDF:
		return NG_PANEL_CDF;
	case NG_PLOT_KIND_HIST:
		return NG_PANEL_HIST;
	case NG_PLOT_KIND_LOAD:
		return NG_PANEL_LOAD;
	case NG_PLOT_KIND_AUTO:
		break;
	}
	return ~(NG_PANEL_CDF | NG_PANEL_HIST | NG_PANEL_LOAD);
}

/* The family drawing @pattern's files for @kind: the distribution figure
 * for cdf and hist, the load curve for load, else the pattern's own. */
static const struct ng_figure *ng_kind_figure(enum ng_plot_kind kind, const char *pattern)
{
	if (kind == NG_PLOT_KIND_CDF || kind == NG_PLOT_KIND_HIST)
		return ng_figure_of("distribution");
	if (kind == NG_PLOT_KIND_LOAD)
		return ng_figure_of("load");
	return ng_figure_of(pattern);
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

char *ng_plot_which(const char *name)
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
		return ng_plot_which(env);
	path = ng_plot_which(NG_GNUPLOT);
	return path ? path : ng_plot_which("gnuplot");
}

/* The descriptor the script has in gnuplot: it reads /proc/self/fd/3. */
#define NG_GNUPLOT_SCRIPT_FD 3

/*
 * Runs gnuplot on the script open as @script_fd (named @script in messages)
 * in the private directory @work, beside the figure's directory: gnuplot
 * reads the very file ngauge wrote (/proc/self/fd/N, never its name), finds
 * the data files by their names in the parent directory (its loadpath) and
 * writes its output (the script's "set output", a bare name) into @work,
 * where no one else can have planted anything.  Shows gnuplot's messages
 * only when it fails.
 */
static ng_status ng_gnuplot_run(const char *cmd, const char *gnuplot, const char *work, int script_fd,
                                const char *script)
{
	char *log = ng_plot_xcalloc(NG_GNUPLOT_LOG_MAX + 1, 1);
	char arg0[] = "gnuplot", arg1[] = "-e", arg2[] = "set loadpath '..'";
	char arg3[32];
	char *args[] = {arg0, arg1, arg2, arg3, NULL};
	size_t used = 0;
	ng_status rc = NG_ERR_SYS;
	int pipefd[2], status, devnull;
	ssize_t got;
	pid_t pid;

	snprintf(arg3, sizeof(arg3), "/proc/self/fd/%d", NG_GNUPLOT_SCRIPT_FD);
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		ng_error("%s: cannot run gnuplot: pipe: %s", cmd, strerror(errno));
		goto out_free_log;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ng_error("%s: cannot run gnuplot: fork: %s", cmd, strerror(errno));
		goto out_close_pipe;
	}
	if (pid == 0) {
		/* above the standard descriptors first: none of the dup2()s below
		 * may close it */
		int sfd = fcntl(script_fd, F_DUPFD_CLOEXEC, 10);

		devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		/* the script at a known number, inherited (dup2 clears FD_CLOEXEC) */
		if (sfd < 0 || dup2(sfd, NG_GNUPLOT_SCRIPT_FD) < 0) {
			dprintf(STDERR_FILENO, "cannot pass the script: %s\n", strerror(errno));
			_exit(126);
		}
		if (chdir(work) != 0) {
			dprintf(STDERR_FILENO, "cannot enter %s: %s\n", work, strerror(errno));
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
			ng_error("%s: cannot run gnuplot: waitpid: %s", cmd, strerror(errno));
			goto out_close_pipe;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rc = NG_OK;
		goto out_close_pipe;
	}
	/* one line: gnuplot's first complaint ("/proc/self/fd/3" line N: WHAT),
	 * from "line N" on (the script is named before it) */
	{
		char *line = strstr(log, "\" line ");
		char *end;

		if (line)
			line += 2;
		if (!line)
			for (line = log; *line == '\n' || *line == ' '; line++)
				;
		end = line + strcspn(line, "\n");
		*end = '\0';
		if (WIFEXITED(status))
			ng_error("%s: gnuplot failed on %s (exit status %d)%s%.300s", cmd, script,
			         WEXITSTATUS(status), *line ? ": " : "", line);
		else
			ng_error("%s: gnuplot failed on %s (signal %d)%s%.300s", cmd, script,
			         WTERMSIG(status), *line ? ": " : "", line);
	}
out_close_pipe:
	close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
out_free_log:
	free(log);
	return rc;
}

/* Moves what gnuplot wrote for figure @g in @work into place: the figure
 * (the stem's name with the terminal's extension) and, for cairolatex
 * (.tex), its graphics (.pdf).  rename() replaces whatever is at the final
 * name (a link is replaced, not followed).  Reported. */
static ng_status ng_gnuplot_move(const char *cmd, const struct ng_fig *g, const char *work)
{
	const char *exts[2] = {g->term->ext, g->term->tex ? ".pdf" : NULL};
	ng_status rc = NG_OK;

	for (size_t k = 0; k < 2 && exts[k] && rc == NG_OK; k++) {
		char *from = ng_plot_xasprintf("%s/%s%s", work, ng_plot_basename(g->stem), exts[k]);
		char *to = ng_plot_xasprintf("%s%s", g->stem, exts[k]);

		if (rename(from, to) != 0) {
			ng_error("%s: cannot put gnuplot's %s in place: %s", cmd, to, strerror(errno));
			rc = NG_ERR_IO;
		}
		free(from);
		free(to);
	}
	return rc;
}

/* Removes gnuplot's private directory @work and what is left in it. */
static void ng_gnuplot_work_remove(const char *work)
{
	DIR *d = opendir(work);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(work);
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
 * pattern with parts of which --kind keeps none is a usage error (reported);
 * a file with no row naming a part is in none of the figures (the caller
 * says why).
 */
static ng_status ng_figs_split(struct ng_fig **figs_p, size_t *n_p, enum ng_plot_kind kind, const char *cmd)
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
		if (k == before && nsubs && !rc) {
			ng_error("%s: --kind %s has no panel for any %s of pattern \"%s\" (%s)", cmd,
			         ng_kind_names[kind], key, g->files[0]->pattern, g->files[0]->path);
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

/* Where a figure's message points: its file (or files) and its part. */
static char *ng_fig_where(const struct ng_fig *g)
{
	if (g->n == 1)
		return ng_plot_xasprintf("%s%s%s", g->files[0]->path, g->sub ? ", test " : "",
		                         g->sub ? g->sub : "");
	return ng_plot_xasprintf("%s and %zu more file%s%s%s", g->files[0]->path, g->n - 1,
	                         g->n > 2 ? "s" : "", g->sub ? ", test " : "", g->sub ? g->sub : "");
}

/* Says @text: to req->note, else as a line on stderr ("CMD: TEXT", an error
 * for a file left out, else a warning). */
static void ng_render_say(const struct ng_plot_req *req, bool file, const char *text)
{
	if (req->note)
		req->note(req->note_data, text, file);
	else if (file)
		ng_error("%s: %s", req->cmd, text);
	else
		ng_warn("%s: %s", req->cmd, text);
}

/* One rendering: the figures and what became of the files. */
struct ng_render {
	struct ng_fig *figs;
	size_t nfigs;
	char **notes; /* per figure: what it left out (NULL: nothing) */
	char **why;   /* per file: why its figure cannot draw it (NULL: it can) */
	bool *drawn;  /* per file: in a figure drawn */
};

/* Says what was left out once everything is drawn; NG_ERR_PROTO when a file
 * was left out entirely. */
static ng_status ng_render_tell(const struct ng_render *rd, const struct ng_plot_file *files, size_t n,
                                const struct ng_plot_req *req)
{
	ng_status rc = NG_OK;
	size_t i, j;
	char *text;

	for (i = 0; i < rd->nfigs; i++) {
		const struct ng_fig *g = &rd->figs[i];
		bool some = false;

		for (j = 0; j < g->n; j++)
			some = some || rd->drawn[g->files[j] - files];
		if (!rd->notes[i] || !some)
			continue; /* nothing left out, or said by the files' errors */
		text = ng_fig_where(g);
		if (g->drawn) {
			char *line = ng_plot_xasprintf("%s: left out: %s", text, rd->notes[i]);

			ng_render_say(req, false, line);
			free(line);
		} else {
			char *line = ng_plot_xasprintf("%s: not drawn: %s", text, rd->notes[i]);

			ng_render_say(req, false, line);
			free(line);
		}
		free(text);
	}
	for (j = 0; j < n; j++) {
		const char *why = rd->why[j];

		if (rd->drawn[j])
			continue;
		for (i = 0; !why && i < rd->nfigs; i++) {
			const struct ng_fig *g = &rd->figs[i];

			for (size_t k = 0; k < g->n; k++)
				if (g->files[k] == &files[j] && rd->notes[i])
					why = rd->notes[i];
		}
		text = ng_plot_xasprintf("%s: not drawn: %s", files[j].path,
		                         why ? why : "nothing to draw: no value of its rows can be drawn");
		ng_render_say(req, true, text);
		free(text);
		rc = NG_ERR_PROTO;
	}
	return rc;
}

ng_status ng_plot_render(const struct ng_plot_file *files, size_t n, const struct ng_plot_req *req)
{
	const struct ng_term *term = ng_term_of(req->out);
	size_t *group = ng_plot_xcalloc(n, sizeof(*group)); /* figure of each file */
	struct ng_render rd = {0};
	size_t ngroups = 0, i, j;
	char *stem, *dir, *slash, *work = NULL;
	ng_status rc = NG_OK, told;

	if (!term) {
		ng_error("%s: %s: unknown figure type (the name must end in .pdf, .svg, .png or .tex)",
		         req->cmd, req->out);
		free(group);
		return NG_ERR_USAGE;
	}
	rd.figs = ng_plot_xcalloc(n, sizeof(*rd.figs));
	rd.why = ng_plot_xcalloc(n, sizeof(*rd.why));
	rd.drawn = ng_plot_xcalloc(n, sizeof(*rd.drawn));
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
		group[i] = ngroups;
		rd.figs[ngroups].term = term;
		rd.figs[ngroups].desc = ng_kind_figure(req->kind, files[i].pattern);
		rd.figs[ngroups].panels = rd.figs[ngroups].desc->panels & ng_kind_panels(req->kind);
		rd.figs[ngroups].files = ng_plot_xcalloc(n, sizeof(*rd.figs[ngroups].files));
		if (!rd.figs[ngroups++].panels) {
			ng_error("%s: --kind %s has no panel for pattern \"%s\" (%s)", req->cmd,
			         ng_kind_names[req->kind], files[i].pattern, files[i].path);
			rc = NG_ERR_USAGE;
		}
	}
	rd.nfigs = ngroups;
	if (rc)
		goto out_free_figs;
	/* the files their figures can draw */
	for (i = 0; i < n; i++) {
		struct ng_fig *g = &rd.figs[group[i]];

		rd.why[i] = ng_figure_check(g->desc, &files[i]);
		if (!rd.why[i])
			g->files[g->n++] = &files[i];
	}
	for (i = j = 0; i < rd.nfigs; i++) {
		if (rd.figs[i].n)
			rd.figs[j++] = rd.figs[i];
		else
			free(rd.figs[i].files);
	}
	rd.nfigs = j;
	rc = ng_figs_split(&rd.figs, &rd.nfigs, req->kind, req->cmd);
	if (rc)
		goto out_free_figs;
	for (i = 0; i < n; i++) {
		bool in = false;

		for (j = 0; j < rd.nfigs && !in; j++)
			for (size_t k = 0; k < rd.figs[j].n; k++)
				in = in || rd.figs[j].files[k] == &files[i];
		if (!in && !rd.why[i])
			rd.why[i] = ng_plot_xasprintf("no row names its %s",
			                              ng_figure_of(files[i].pattern)->parts.key
			                                  ? ng_figure_of(files[i].pattern)->parts.key
			                                  : "figure");
	}
	for (i = 0; i < n && !req->keep_going; i++) {
		if (rd.why[i]) {
			char *text = ng_plot_xasprintf("%s: not drawn: %s", files[i].path, rd.why[i]);

			ng_render_say(req, true, text);
			free(text);
			rc = NG_ERR_PROTO;
			goto out_free_figs;
		}
	}
	rd.notes = ng_plot_xcalloc(rd.nfigs, sizeof(*rd.notes));

	/* names, legends, data and scripts */
	for (i = 0; i < rd.nfigs; i++) {
		struct ng_fig *g = &rd.figs[i];

		if (rd.nfigs == 1) {
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
		ng_legend_make(g->files, g->n, g->sub, &g->legend, &g->caption);
		rc = ng_fig_write(g, &rd.notes[i]);
		if (rc)
			goto out_free_figs;
		if (!g->drawn && !rd.notes[i])
			rd.notes[i] = ng_plot_xasprintf("nothing to draw");
	}

	/* the files with a point in a figure; without keep_going, a file with
	 * none stops everything (its line says why), the scripts and data
	 * written so far removed */
	for (i = 0; i < rd.nfigs; i++)
		for (j = 0; rd.figs[i].drawn && j < rd.figs[i].n; j++)
			if (rd.figs[i].fdraw[j])
				rd.drawn[rd.figs[i].files[j] - files] = true;
	for (i = 0; i < n && rd.drawn[i]; i++)
		;
	if (i < n && !req->keep_going) {
		rc = ng_render_tell(&rd, files, n, req);
		goto out_free_figs; /* the temporaries removed, nothing put in place */
	}

	/* the scripts and data in place, then the figures: gnuplot writes into
	 * a directory of ours beside them, from which they are moved */
	for (i = 0; i < rd.nfigs; i++) {
		rc = rd.figs[i].drawn ? ng_fig_commit(&rd.figs[i]) : NG_OK;
		if (rc)
			goto out_free_figs;
	}
	if (req->gnuplot) {
		work = ng_plot_xasprintf("%s/.ngauge-gnuplot-XXXXXX", dir);
		if (!mkdtemp(work)) {
			ng_error("%s: cannot create a directory for gnuplot %s: %s", req->cmd, work,
			         strerror(errno));
			free(work);
			work = NULL;
			rc = NG_ERR_IO;
			goto out_free_figs;
		}
	}
	for (i = 0; i < rd.nfigs; i++) {
		if (!rd.figs[i].drawn || !req->gnuplot)
			continue;
		rc = ng_gnuplot_run(req->cmd, req->gnuplot, work, rd.figs[i].script.fd,
		                    rd.figs[i].script.path);
		if (rc == NG_OK)
			rc = ng_gnuplot_move(req->cmd, &rd.figs[i], work);
		if (rc)
			goto out_free_figs;
		if (!req->quiet)
			printf("%s%s\n", rd.figs[i].stem, term->ext);
		if (req->made) {
			char *fig = ng_plot_xasprintf("%s%s", rd.figs[i].stem, term->ext);

			req->made(req->made_data, fig);
			free(fig);
		}
	}
	told = ng_render_tell(&rd, files, n, req);
	rc = rc ? rc : told;

out_free_figs:
	if (work)
		ng_gnuplot_work_remove(work);
	free(work);
	for (i = 0; i < rd.nfigs; i++) {
		ng_fig_close(&rd.figs[i]);
		for (j = 0; rd.figs[i].dat && j < rd.figs[i].n; j++)
			free(rd.figs[i].dat[j]);
		free(rd.figs[i].dat);
		ng_legend_free(rd.figs[i].legend, rd.figs[i].n, rd.figs[i].caption);
		free(rd.figs[i].fdraw);
		free(rd.figs[i].files);
		free(rd.figs[i].stem);
		if (rd.notes)
			free(rd.notes[i]);
	}
	for (i = 0; i < n; i++)
		free(rd.why[i]);
	free(rd.why);
	free(rd.drawn);
	free(rd.notes);
	free(rd.figs);
	free(group);
	free(dir);
	free(stem);
	return rc;
}
