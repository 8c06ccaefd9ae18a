/* SPDX-License-Identifier: BSD-3-Clause */
/* Plugins: where they are, loading them with the signals kept (plugin.h). */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cancel.h"
#include "plugin.h"

/* True when the running program lies in the build tree NG_BUILD_ROOT. */
static bool in_build_tree(void)
{
	char exe[PATH_MAX], root[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t len;

	if (n <= 0 || !realpath(NG_BUILD_ROOT, root))
		return false;
	exe[n] = '\0';
	len = strlen(root);
	return strncmp(exe, root, len) == 0 && exe[len] == '/';
}

const char *ng_plugin_dir(char *buf, size_t len)
{
	/* not in a set-user-ID or set-group-ID program (secure_getenv) */
	const char *env = secure_getenv("NGAUGE_PLUGIN_DIR");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (in_build_tree())
		snprintf(buf, len, "%s", NG_BUILD_ROOT);
	else
		snprintf(buf, len, "%s", NG_PLUGIN_DIR);
	return buf;
}

/* The signals whose dispositions a library's code must not change. */
static const int kept_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGPIPE};
enum { NKEPT = sizeof(kept_signals) / sizeof(kept_signals[0]) };

void ng_plugin_guard_enter(struct ng_plugin_guard *g)
{
	sigset_t stop;

	_Static_assert(sizeof(g->act) / sizeof(g->act[0]) == NKEPT, "a saved action per kept signal");
	ng_stop_signals(&stop);
	pthread_sigmask(SIG_BLOCK, &stop, &g->mask);
	for (size_t i = 0; i < NKEPT; i++)
		sigaction(kept_signals[i], NULL, &g->act[i]);
	ng_log_hold_when_stopping(true);
}

void ng_plugin_guard_leave(const struct ng_plugin_guard *g)
{
	ng_log_hold_when_stopping(false);
	for (size_t i = 0; i < NKEPT; i++)
		sigaction(kept_signals[i], &g->act[i], NULL);
	pthread_sigmask(SIG_SETMASK, &g->mask, NULL);
}

/* dlopen(@path) inside a guard: a library's constructor changes no
 * disposition of ngauge's. */
static void *load(const char *path)
{
	struct ng_plugin_guard g;
	void *h;

	ng_plugin_guard_enter(&g);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ng_plugin_guard_leave(&g);
	return h;
}

/*
 * Whether @path (@what: "plugin directory", "plugin") may be trusted as
 * OpenSSH's StrictModes trusts a file: owned by root or by the user running
 * ngauge, and writable by nobody else (no group or other write bit).  Says
 * why not in one line unless @quiet.
 */
static bool trusted(const char *path, const char *what, const char *who, bool quiet)
{
	struct stat st;
	const char *why = NULL;

	if (stat(path, &st) != 0) {
		if (!quiet)
			ng_error("%s: refusing %s %s: %s", who, what, path, strerror(errno));
		return false;
	}
	if (st.st_uid != 0 && st.st_uid != getuid() && st.st_uid != geteuid())
		why = "owned by another user than root or you";
	else if (st.st_mode & S_IWOTH)
		why = "writable by every user";
	else if (st.st_mode & S_IWGRP)
		why = "writable by its group";
	if (why && !quiet)
		ng_error("%s: refusing %s %s: %s (uid %u, mode %04o; it must belong to root or you and be "
		         "writable by its owner only)",
		         who, what, path, why, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	return !why;
}

/* The loaded plugin @name (its ng_plugin_NAME), or NULL (reported unless
 * @quiet). */
static const struct ng_plugin *plugin_get(const char *name, const char *who, bool quiet)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], sym[64], real[PATH_MAX], *slash;
	const struct ng_plugin *pl;
	void *h;

	ng_plugin_dir(dir, sizeof(dir));
	if (dir[0] != '/') {
		if (!quiet)
			ng_error("%s: refusing NGAUGE_PLUGIN_DIR '%s': not an absolute path", who, dir);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/ngauge-%s.so", dir, name);
	snprintf(sym, sizeof(sym), "ng_plugin_%s", name);
	if (access(path, F_OK) != 0) {
		if (!quiet)
			ng_error(
			    "%s needs ngauge-%s.so, not found in %s (set NGAUGE_PLUGIN_DIR to the directory "
			    "that holds it, or reinstall ngauge)",
			    who, name, dir);
		return NULL;
	}
	/* A library's constructors run in dlopen(), before any check of its
	 * ABI: the directory, and the file it resolves to and that file's
	 * directory, must be beyond the reach of other users first.  The file
	 * is then loaded by that resolved name, whose directory nobody else
	 * can change. */
	if (!trusted(dir, "plugin directory", who, quiet))
		return NULL;
	if (!realpath(path, real)) {
		if (!quiet)
			ng_error("%s: cannot load %s: %s", who, path, strerror(errno));
		return NULL;
	}
	slash = strrchr(real, '/');
	*slash = '\0';
	if (!trusted(real[0] ? real : "/", "plugin directory", who, quiet))
		return NULL;
	*slash = '/';
	if (!trusted(real, "plugin", who, quiet))
		return NULL;
	h = load(real);
	if (!h) {
		if (!quiet)
			ng_error("%s: cannot load %s: %s", who, path, dlerror());
		return NULL;
	}
	pl = dlsym(h, sym);
	if (!pl || pl->abi != NG_PLUGIN_ABI || pl->ops_size != sizeof(struct ng_module_ops) || !pl->name ||
	    strcmp(pl->name, name) != 0) {
		if (!quiet)
			ng_error("%s: %s is not a plugin of this ngauge (%s; rebuild or reinstall ngauge)",
			         who, path, !pl ? "no ng_plugin symbol" : "another plugin ABI");
		dlclose(h);
		return NULL;
	}
	/* The handle stays open for the life of the process: the plugin's code
	 * serves instances until exit. */
	return pl;
}

ng_status ng_plugin_entry(const char *plugin, const char *entry, const char *who, bool quiet,
                          const void **ptr_p)
{
	const struct ng_plugin *pl = plugin_get(plugin, who, quiet);

	*ptr_p = NULL;
	if (!pl)
		return NG_ERR_USAGE;
	for (const struct ng_plugin_entry *e = pl->entries; e && e->name; e++) {
		if (strcmp(e->name, entry) == 0) {
			*ptr_p = e->ptr;
			return NG_OK;
		}
	}
	if (!quiet)
		ng_error("%s: ngauge-%s.so has no '%s' (rebuild or reinstall ngauge)", who, plugin, entry);
	return NG_ERR_USAGE;
}

ng_status ng_module_impl(const struct ng_module *m, const struct ng_module_ops **ops_p)
{
	char who[64], entry[64];
	const struct ng_module_ops *ops;
	const void *p;
	ng_status st;

	*ops_p = NULL;
	if (!m->plugin) {
		*ops_p = m->ops;
		return NG_OK;
	}
	snprintf(who, sizeof(who), "module %s", m->name);
	snprintf(entry, sizeof(entry), "module:%s", m->name);
	st = ng_plugin_entry(m->plugin, entry, who, false, &p);
	if (st != NG_OK)
		return st;
	ops = p;
	if (!ops->open || !ops->close || !ops->alloc || !ops->free) {
		ng_error("%s: ngauge-%s.so lacks operations of it (rebuild or reinstall ngauge)", who,
		         m->plugin);
		return NG_ERR_USAGE;
	}
	*ops_p = ops;
	return NG_OK;
}
