/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who reads which option: the option tables of this build's modules and
 * patterns asked by name, for the driver's check of a command line (an
 * option no chosen module or pattern reads, or one the chosen configuration
 * leaves unused, is a usage error) and for the report's choice of the
 * parameters that apply to a run.  Pure lookups over constant tables.
 */
#ifndef NG_READERS_H
#define NG_READERS_H

#include <stdbool.h>
#include <stddef.h>

#include "args.h"
#include "module.h"
#include "pattern.h"

/* The declaration of option @name in some module's (.options, .reads) or
 * pattern's table of this build, or NULL. */
const struct ng_option *ng_option_find(const char *name);

/* Whether a run of module @m, the module @wrapped it wraps (or NULL) and
 * pattern @p reads option @name (their tables and .reads). */
bool ng_option_read_by(const struct ng_module *m, const struct ng_module *wrapped, const struct ng_pattern *p,
                       const char *name);

/* Who reads option @name, for messages: "module spipe", "modules chan, rma
 * and pattern bw", ... into @buf ("" when nothing does). */
void ng_option_readers(const char *name, char *buf, size_t len);

/* The effective value of option @name as text, or NULL when not said
 * (@name "launch": the run's launch, "local", "mpi" or "tcp"). */
typedef const char *(*ng_opt_value_fn)(void *ctx, const char *name);

/*
 * Whether option @o applies under the values @value gives (its .applies,
 * followed through the option it names, at most a few levels deep; the
 * dependencies are looked up with @find).  Returns 1 when it applies or
 * has no condition, 0 when not (*on_p: the option it depends on that has
 * another value, *val_p that value), -1 when a value it depends on is not
 * said.
 */
int ng_option_applies(const struct ng_option *o, ng_opt_value_fn value, void *ctx,
                      const struct ng_option *(*find)(const char *name), const char **on_p,
                      const char **val_p);

/*
 * The driver's check before anything runs: every module or pattern option
 * given in @a is read by module @m (and, when @m wraps another, by the
 * wrapped one) or pattern @p, and every given option applies under the
 * given and default values (@launch: "local", "mpi" or "tcp").  On the
 * first that is not, writes one line naming it and who reads it to @err and
 * returns -1; else 0.  @find looks options up (the driver's own included).
 */
int ng_args_check_read(const struct ng_args *a, const struct ng_module *m, const struct ng_pattern *p,
                       const char *launch, const struct ng_option *(*find)(const char *name), char *err,
                       size_t len);

#endif
