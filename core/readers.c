/* SPDX-License-Identifier: BSD-3-Clause */
/* Who reads which option (readers.h). */
#include <stdio.h>
#include <string.h>

#include "readers.h"
#include "registry.h"

/* Whether @name is in @table. */
static bool in_table(const struct ng_option *table, const char *name)
{
	for (const struct ng_option *o = table; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return true;
	return false;
}

/* The entry of @name in the NULL-terminated @tables, or NULL. */
static const struct ng_option *in_tables(const struct ng_option *const *tables, const char *name)
{
	for (; tables && *tables; tables++)
		for (const struct ng_option *o = *tables; o->name; o++)
			if (strcmp(o->name, name) == 0)
				return o;
	return NULL;
}

static bool module_reads(const struct ng_module *m, const char *name)
{
	return m && (in_tables(m->options, name) || in_tables(m->reads, name));
}

static bool pattern_reads(const struct ng_pattern *p, const char *name)
{
	if (!p)
		return false;
	return in_table(p->options, name) || in_table(p->reads, name);
}

const struct ng_option *ng_option_find(const char *name)
{
	const struct ng_option *o;

	for (size_t i = 0; ng_modules[i]; i++) {
		o = in_tables(ng_modules[i]->options, name);
		if (!o)
			o = in_tables(ng_modules[i]->reads, name);
		if (o)
			return o;
	}
	for (size_t i = 0; ng_patterns[i]; i++)
		for (o = ng_patterns[i]->options; o && o->name; o++)
			if (strcmp(o->name, name) == 0)
				return o;
	return NULL;
}

bool ng_option_read_by(const struct ng_module *m, const struct ng_module *wrapped, const struct ng_pattern *p,
                       const char *name)
{
	return module_reads(m, name) || module_reads(wrapped, name) || pattern_reads(p, name);
}

/* Appends @s to @buf (of @len bytes, NUL-terminated). */
static void append(char *buf, size_t len, const char *s)
{
	size_t used = strlen(buf);

	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s", s);
}

void ng_option_readers(const char *name, char *buf, size_t len)
{
	size_t nm = 0, np = 0, k = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; ng_modules[i]; i++)
		nm += module_reads(ng_modules[i], name);
	for (size_t i = 0; ng_patterns[i]; i++)
		np += pattern_reads(ng_patterns[i], name);
	if (nm)
		append(buf, len, nm > 1 ? "modules " : "module ");
	for (size_t i = 0; ng_modules[i]; i++) {
		if (!module_reads(ng_modules[i], name))
			continue;
		append(buf, len, k == 0 ? "" : k + 1 == nm ? " and " : ", ");
		append(buf, len, ng_modules[i]->name);
		k++;
	}
	if (np)
		append(buf, len,
		       nm ? (np > 1 ? " and patterns " : " and pattern ")
		          : (np > 1 ? "patterns " : "pattern "));
	k = 0;
	for (size_t i = 0; ng_patterns[i]; i++) {
		if (!pattern_reads(ng_patterns[i], name))
			continue;
		append(buf, len, k == 0 ? "" : k + 1 == np ? " and " : ", ");
		append(buf, len, ng_patterns[i]->name);
		k++;
	}
}

/* Whether @word is one of the '|'-separated @list (of @n bytes). */
static bool one_of(const char *word, const char *list, size_t n)
{
	size_t w = strlen(word);

	for (const char *p = list, *end = list + n; p < end;) {
		size_t len = strcspn(p, "|");

		if (len > (size_t)(end - p))
			len = (size_t)(end - p);
		if (len == w && strncmp(p, word, w) == 0)
			return true;
		p += len + 1;
	}
	return false;
}

int ng_option_applies(const struct ng_option *o, ng_opt_value_fn value, void *ctx,
                      const struct ng_option *(*find)(const char *name), const char **on_p,
                      const char **val_p)
{
	for (int depth = 0; o && o->applies && depth < 8; depth++) {
		const char *eq = strchr(o->applies, '=');
		char on[64];
		const char *v;
		size_t n;

		if (!eq || (size_t)(eq - o->applies) >= sizeof(on))
			return 1;
		n = (size_t)(eq - o->applies);
		memcpy(on, o->applies, n);
		on[n] = '\0';
		v = value(ctx, on);
		if (!v)
			return -1;
		if (!one_of(v, eq + 1, strlen(eq + 1))) {
			/* The name of the dependency as the table spells it (static). */
			const struct ng_option *dep = strcmp(on, "launch") ? find(on) : NULL;
			*on_p = dep ? dep->name : "launch";
			*val_p = v;
			return 0;
		}
		o = strcmp(on, "launch") ? find(on) : NULL;
	}
	return 1;
}

/* The '|'-separated @list as "a, b or c" into @buf; returns @buf. */
static const char *or_words(const char *list, char *buf, size_t len)
{
	size_t n = 0, k = 0;

	for (const char *p = list; *p; p++)
		n += *p == '|';
	buf[0] = '\0';
	for (const char *p = list; *p; k++) {
		size_t w = strcspn(p, "|");
		char word[64];

		snprintf(word, sizeof(word), "%.*s", (int)w, p);
		append(buf, len, k == 0 ? "" : k == n ? " or " : ", ");
		append(buf, len, word);
		p += w + (p[w] == '|');
	}
	return buf;
}

/* The launches of '|'-separated @list as words for messages. */
static const char *launch_words(const char *list, char *buf, size_t len)
{
	char tmp[128] = "";

	for (const char *p = list; *p;) {
		size_t w = strcspn(p, "|");

		append(tmp, sizeof(tmp), tmp[0] ? "|" : "");
		append(tmp, sizeof(tmp),
		       w == 3 && strncmp(p, "tcp", 3) == 0     ? "--server/--client"
		       : w == 3 && strncmp(p, "mpi", 3) == 0   ? "an MPI launch"
		       : w == 5 && strncmp(p, "local", 5) == 0 ? "a local launch"
		                                               : "another launch");
		p += w + (p[w] == '|');
	}
	return or_words(tmp, buf, len);
}

/* The driver's values: given or default; "launch" as given. */
struct drv_ctx {
	const struct ng_args *a;
	const char *launch;
};

static const char *drv_value(void *ctx, const char *name)
{
	const struct drv_ctx *c = ctx;
	const struct ng_arg_ent *e;

	if (strcmp(name, "launch") == 0)
		return c->launch;
	e = ng_args_find(c->a, name);
	if (!e)
		return NULL;
	return e->given ? e->value : e->opt->def;
}

int ng_args_check_read(const struct ng_args *a, const struct ng_module *m, const struct ng_pattern *p,
                       const char *launch, const struct ng_option *(*find)(const char *name), char *err,
                       size_t len)
{
	const struct ng_module *wrapped = NULL;
	struct drv_ctx ctx = {a, launch};
	char who[256], run[128], need[128];

	if (m->wraps && ng_args_str(a, m->wraps))
		wrapped = ng_module_find(ng_args_str(a, m->wraps));
	for (size_t i = 0; i < a->n; i++) {
		const struct ng_arg_ent *e = &a->ents[i];

		if (!e->given || !e->owner[0] || ng_option_read_by(m, wrapped, p, e->opt->name))
			continue;
		ng_option_readers(e->opt->name, who, sizeof(who));
		if (wrapped)
			snprintf(err, len, "--%s is an option of %s, not of %s (wrapping %s) or %s",
			         e->opt->name, who, m->name, wrapped->name, p->name);
		else
			snprintf(err, len, "--%s is an option of %s, not of %s or %s", e->opt->name, who,
			         m->name, p->name);
		return -1;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct ng_arg_ent *e = &a->ents[i];
		const char *on = NULL, *val = NULL;

		if (!e->given || ng_option_applies(e->opt, drv_value, &ctx, find, &on, &val) != 0)
			continue;
		if (strcmp(on, "launch") == 0)
			snprintf(err, len, "--%s is not used by %s (only by %s)", e->opt->name,
			         launch_words(val, run, sizeof(run)),
			         launch_words(strchr(e->opt->applies, '=') + 1, need, sizeof(need)));
		else
			snprintf(err, len, "--%s is not used with --%s %s%s (only with %s)", e->opt->name, on,
			         val, ng_args_given(a, on) ? "" : ", the default",
			         or_words(strchr(e->opt->applies, '=') + 1, need, sizeof(need)));
		return -1;
	}
	return 0;
}
