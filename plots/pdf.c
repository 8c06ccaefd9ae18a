/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The report as a PDF (contract in pdf.h): finding Chromium and running it
 * headless on the page, with a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "load.h"
#include "pdf.h"
#include "render.h"

/* Chromium's messages kept for the line that says why it failed */
#define NG_PDF_LOG_MAX 65536

char *ng_pdf_find_chromium(void)
{
	static const char *const names[] = {"chromium", "chromium-browser", "google-chrome", NULL};
	const char *env = getenv("NGAUGE_CHROMIUM");
	char *path;

	if (env && *env)
		return ng_plot_which(env);
	for (size_t i = 0; names[i]; i++) {
		path = ng_plot_which(names[i]);
		if (path)
			return path;
	}
	return NULL;
}

/* "file://" and @path, absolute, with every byte but [A-Za-z0-9/._-]
 * percent-encoded. */
static char *ng_pdf_url(const char *path)
{
	char *abs = realpath(path, NULL), *url, *u;
	const char *p;

	if (!abs)
		return NULL;
	url = ng_plot_xcalloc(strlen(abs) * 3 + 8, 1);
	u = url + sprintf(url, "file://");
	for (p = abs; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("/._-", c))
			*u++ = (char)c;
		else
			u += sprintf(u, "%%%02X", c);
	}
	free(abs);
	return url;
}

/* The last line of @log that says something ("" when none), at most 200
 * characters, control characters as spaces; in @buf. */
static void ng_pdf_last_line(char *log, char *buf, size_t len)
{
	char *line, *save, *last = NULL;

	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strspn(line, " \t\r") < strlen(line))
			last = line;
	snprintf(buf, len, "%.200s", last ? last : "");
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
}

/* Whether @path is a PDF (its first bytes). */
static bool ng_pdf_is_pdf(const char *path)
{
	char head[5] = {0};
	FILE *f = fopen(path, "rb");
	bool ok;

	if (!f)
		return false;
	ok = fread(head, 1, sizeof(head), f) == sizeof(head) && memcmp(head, "%PDF-", 5) == 0;
	fclose(f);
	return ok;
}

ng_status ng_pdf_print(const char *chromium, const char *html, const char *pdf, const char *tmpdir)
{
	char *profile = ng_plot_xasprintf("%s/chromium-profile", tmpdir);
	char *url = ng_pdf_url(html), *print_to = ng_plot_xasprintf("--print-to-pdf=%s", pdf);
	char *user_dir = ng_plot_xasprintf("--user-data-dir=%s", profile);
	char *log = ng_plot_xcalloc(NG_PDF_LOG_MAX + 1, 1), last[256];
	const char *args[20];
	size_t used = 0, k = 0;
	int pipefd[2] = {-1, -1}, status = 0, devnull;
	bool exited = false, late = false;
	ng_status rc = NG_ERR_SYS;
	time_t deadline;
	pid_t pid;

	if (!url || mkdir(profile, 0700) != 0) {
		ng_error("report: cannot print %s: %s", html, strerror(errno));
		goto out_free;
	}
	args[k++] = chromium;
	args[k++] = "--headless";
	if (geteuid() == 0)
		args[k++] = "--no-sandbox"; /* Chromium refuses root with it */
	args[k++] = "--disable-gpu";
	args[k++] = "--disable-quic";
	args[k++] = "--no-first-run";
	args[k++] = "--disable-background-networking";
	args[k++] = "--disable-component-update";
	args[k++] = "--disable-sync";
	args[k++] = "--disable-extensions";
	args[k++] = "--no-pdf-header-footer";
	args[k++] = "--print-to-pdf-no-header"; /* the name of the last before Chromium 120 */
	args[k++] = user_dir;
	args[k++] = print_to;
	args[k++] = url;
	args[k] = NULL;
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		ng_error("report: cannot run Chromium: pipe: %s", strerror(errno));
		goto out_free;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ng_error("report: cannot run Chromium: fork: %s", strerror(errno));
		goto out_close;
	}
	if (pid == 0) {
		setsid(); /* a process group of its own: ended as one */
		devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		execv(chromium, (char *const *)args);
		dprintf(STDERR_FILENO, "cannot execute %s: %s\n", chromium, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	deadline = time(NULL) + NG_PDF_TIMEOUT;
	/* its messages until it exits (its helpers may hold the pipe longer) */
	while (!exited) {
		struct pollfd pfd = {.fd = pipefd[0], .events = POLLIN};
		char buf[4096];
		ssize_t got;

		if (poll(&pfd, 1, 100) > 0) {
			got = read(pipefd[0], buf, sizeof(buf));
			if (got > 0 && used < NG_PDF_LOG_MAX) {
				size_t take =
				    (size_t)got < NG_PDF_LOG_MAX - used ? (size_t)got : NG_PDF_LOG_MAX - used;

				memcpy(log + used, buf, take);
				used += take;
			}
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			exited = true;
		else if (time(NULL) > deadline)
			break;
	}
	kill(-pid, SIGKILL); /* what is left of it */
	if (!exited) {
		late = true;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	ng_pdf_last_line(log, last, sizeof(last));
	if (late) {
		ng_error("report: Chromium did not print %s within %d s", pdf, NG_PDF_TIMEOUT);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !ng_pdf_is_pdf(pdf)) {
		ng_error("report: Chromium did not print %s (%s %d)%s%s", pdf,
		         WIFEXITED(status) ? "exit status" : "signal",
		         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), last[0] ? ": " : "",
		         last);
	} else {
		rc = NG_OK;
	}
out_close:
	close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
out_free:
	free(log);
	free(user_dir);
	free(print_to);
	free(url);
	free(profile);
	return rc;
}
