/* SPDX-License-Identifier: BSD-3-Clause */
/* The modules and the patterns: the lists modules/meson.build and
 * patterns/meson.build generate, one line each there; none is named here. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "modules/ng_modules.h"
#include "patterns/ng_patterns.h"
#include "registry.h"

/* The modules: the list modules/meson.build generates (NG_MODULES, and
 * NG_MODULES_MISSING for those the build left out). */
#define NG_MODULE(name) extern const struct ng_module ng_module_##name;
NG_MODULES
#undef NG_MODULE

/* The patterns: the list patterns/meson.build generates (NG_PATTERNS). */
#define NG_PATTERN(name) extern const struct ng_pattern ng_pattern_##name;
NG_PATTERNS
#undef NG_PATTERN

const char ng_pattern_default[] = NG_PATTERN_DEFAULT;
const char ng_module_default[] = NG_MODULE_DEFAULT;

const struct ng_module *const ng_modules[] = {
#define NG_MODULE(name) &ng_module_##name,
    NG_MODULES
#undef NG_MODULE
        NULL,
};

const struct ng_missing ng_missing_modules[] = {
#define NG_MODULE_MISSING(name, why) {#name, why},
    NG_MODULES_MISSING
#undef NG_MODULE_MISSING
    {NULL, NULL},
};

const struct ng_pattern *const ng_patterns[] = {
#define NG_PATTERN(name) &ng_pattern_##name,
    NG_PATTERNS
#undef NG_PATTERN
        NULL,
};

const struct ng_module *ng_module_find(const char *name)
{
	for (size_t i = 0; ng_modules[i]; i++)
		if (strcmp(ng_modules[i]->name, name) == 0)
			return ng_modules[i];
	return NULL;
}

const struct ng_pattern *ng_pattern_find(const char *name)
{
	for (size_t i = 0; ng_patterns[i]; i++)
		if (strcmp(ng_patterns[i]->name, name) == 0)
			return ng_patterns[i];
	return NULL;
}

void ng_modules_offering(unsigned caps, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; ng_modules[i] && used < len; i++) {
		if ((ng_modules[i]->caps & caps) != caps)
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", ng_modules[i]->name);
		used += n > 0 ? (size_t)n : 0;
	}
}
