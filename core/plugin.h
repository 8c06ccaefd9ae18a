/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Plugins: the code that needs MPI, libibverbs or libfabric, loaded on first
 * use (doc/install.md, "Plugins").
 *
 * The ngauge executable links none of those libraries: a library's
 * constructor then never runs in a command that does not use it (libfabric's
 * PSM provider installs SIGINT/SIGTERM handlers and sleeps in its own).
 * Their code is in shared modules, one per library family, named
 * ngauge-NAME.so: ngauge-mpi.so (the mpi and mpirma modules, the MPI
 * bootstrap and timer), ngauge-verbs.so (the verbs core, the ib modules, the
 * RDMA layer's verbs backend), ngauge-ofi.so (the RDMA layer's ofi backend),
 * ngauge-ucx.so (the ucx module).
 * A module's descriptor (name, options, capabilities, limits: struct
 * ng_module, core/module.h) is data of the executable, once, so that
 * --help, --list, --version and usage errors need no plugin; a descriptor
 * whose operations are in a plugin names it (.plugin = "mpi"), and the
 * plugin exports only those operations (a struct ng_module_ops), which
 * ng_module_impl() finds here by the module's name.
 *
 * A plugin exports one symbol, ng_plugin_NAME, a struct ng_plugin: the ABI
 * number it was built for and its entries by name ("module:mpi",
 * "rdma:verbs", "launch:mpi").  Its "module:NAME" entries are generated
 * from modules/meson.build's list (NG_PLUGIN_MODULES_NAME of
 * modules/ng_modules.h), so that a module's registration line is all that
 * names it.  It uses the executable's symbols (core/, the
 * RDMA layer, ...): the executable exports them.
 *
 * The directory: $NGAUGE_PLUGIN_DIR when set (read with secure_getenv(): not
 * in a set-user-ID program; an absolute path, else refused); else the build
 * directory when the running program is one of the build tree (ngauge or a
 * test program there); else the installed <libdir>/ngauge.
 *
 * Before a library is loaded (its constructors run in dlopen(), before any
 * check of its ABI), the directory, the library and the directory of the
 * file it resolves to must be owned by root or by the user running ngauge
 * and writable by their owner only (as OpenSSH's StrictModes): anything
 * else is refused in one line naming the file and the reason, as a missing
 * plugin is.  The library is loaded by its resolved name.
 *
 * Loading blocks SIGINT, SIGTERM and SIGHUP, and puts back the dispositions
 * of those, SIGALRM and SIGPIPE that a library's constructor changed, before
 * it unblocks them: a stop signal that arrived meanwhile is then handled as
 * any other (cancel.h).  Loading a plugin that is loaded already only finds
 * it again (dlopen counts references; nothing runs twice).
 */
#ifndef NG_PLUGIN_H
#define NG_PLUGIN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "module.h"
#include "status.h"

/* Raised whenever struct ng_plugin, an entry's type, struct ng_module_ops
 * or struct ng_module change incompatibly: a plugin of another number is
 * refused.  3: a module's entry is its operations, no longer a whole
 * descriptor. */
#define NG_PLUGIN_ABI 3

/* An exported operations table, by name: "module:NAME" (a struct
 * ng_module_ops, the operations of the executable's descriptor NAME),
 * "rdma:NAME" (a struct ng_rdma_backend), "launch:mpi" (struct
 * ng_mpi_launch, core/launch.h). */
struct ng_plugin_entry {
	const char *name;
	const void *ptr;
};

/* What a plugin exports as ng_plugin_NAME. */
struct ng_plugin {
	unsigned abi;                          /* NG_PLUGIN_ABI when it was built */
	const char *name;                      /* "mpi" */
	size_t ops_size;                       /* sizeof(struct ng_module_ops) when it was built */
	const struct ng_plugin_entry *entries; /* NULL-name terminated */
};

/* The one symbol a plugin exports: NG_PLUGIN_EXPORT const struct ng_plugin
 * ng_plugin_NAME = {...}; (plugins are built with hidden symbols otherwise). */
#define NG_PLUGIN_EXPORT __attribute__((visibility("default")))

/*
 * The signal state around a plugin's code that may initialise its library
 * (libfabric's providers install SIGINT/SIGTERM handlers in fi_getinfo, an
 * MPI library may in MPI_Init): enter blocks SIGINT, SIGTERM and SIGHUP and
 * saves the dispositions of those, SIGALRM and SIGPIPE; leave puts the
 * dispositions back, then the mask, so that a stop signal that arrived in
 * between is handled by ngauge's handler (cancel.h).  The code in between
 * cannot be interrupted by a stop signal: it must be bounded (it is: an
 * open's exchanges time out).  Guards nest.
 */
struct ng_plugin_guard {
	sigset_t mask;
	struct sigaction act[5];
};
void ng_plugin_guard_enter(struct ng_plugin_guard *g);
void ng_plugin_guard_leave(const struct ng_plugin_guard *g);

/* The directory plugins are loaded from (see above), into @buf (@len bytes);
 * returns @buf. */
const char *ng_plugin_dir(char *buf, size_t len);

/*
 * The entry @entry of plugin @plugin ("mpi"), loading the plugin when it is
 * not loaded yet.  @who names what needs it in messages ("module mpi").  On
 * failure reports one line unless @quiet and returns NG_ERR_USAGE: the file is
 * missing ("module mpi needs ngauge-mpi.so, not found in DIR ..."), is refused
 * (a relative NGAUGE_PLUGIN_DIR; a directory or file that another user owns
 * or may write: "module mpi: refusing plugin directory DIR: writable by its
 * group ..."), cannot be loaded (the loader's reason), or is not a plugin of
 * this ngauge (ABI).
 * *@ptr_p is NULL then.
 */
ng_status ng_plugin_entry(const char *plugin, const char *entry, const char *who, bool quiet,
                          const void **ptr_p);

/*
 * The operations of module @m into *@ops_p: @m->ops when it names no plugin;
 * else its plugin's entry "module:NAME", loading the plugin (as
 * ng_plugin_entry), checked to have the required operations (open, close,
 * alloc, free).  Reports once and returns NG_ERR_USAGE when it cannot
 * (*@ops_p NULL then).
 */
ng_status ng_module_impl(const struct ng_module *m, const struct ng_module_ops **ops_p);

#endif
