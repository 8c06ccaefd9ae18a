/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The figure registry (plots/figures.c) keeps the contract of plots/figure.h:
 * every pattern of this build is drawn by exactly one family (its own or the
 * generic one, which is last), every pattern a family names exists, and each
 * family sets the writers its kind needs (one figure: .data; drawn in parts:
 * .parts' three; a report section with its block).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "plots/figure.h"
#include "registry.h"
#include "tests/check.h"

static bool names(const struct ng_figure *d, const char *pattern)
{
	for (const char *const *p = d->patterns; p && *p; p++)
		if (strcmp(*p, pattern) == 0)
			return true;
	return false;
}

static bool is_pattern(const char *name)
{
	for (size_t i = 0; ng_patterns[i]; i++)
		if (strcmp(ng_patterns[i]->name, name) == 0)
			return true;
	return false;
}

int main(void)
{
	const struct ng_figure *generic = NULL;
	size_t n = 0, i, j;

	while (ng_figures[n])
		n++;
	CHECK(n > 1, "the registry holds %zu families", n);
	if (n == 0)
		return check_exit();
	generic = ng_figures[n - 1];
	CHECK(!generic->patterns, "the last family is not the generic one");

	for (i = 0; i < n; i++) {
		const struct ng_figure *d = ng_figures[i];
		const char *first = d->patterns && d->patterns[0] ? d->patterns[0] : "(generic)";

		CHECK(d->patterns || i == n - 1, "family %zu draws every pattern but is not last", i);
		CHECK(!d->patterns || d->patterns[0], "family %zu names no pattern", i);
		CHECK(d->panels, "%s: no panel", first);
		CHECK(d->script, "%s: no script writer", first);
		if (d->parts.key)
			CHECK(d->parts.panels && d->parts.data && !d->data,
			      "%s: drawn in parts without .parts' "
			      "panels and data (or with .data too)",
			      first);
		else
			CHECK(d->data && !d->parts.panels && !d->parts.data, "%s: no data writer", first);
		CHECK(!d->report.block == !d->report.section, "%s: a report block without a section, or back",
		      first);
		for (const char *const *p = d->patterns; p && *p; p++) {
			/* "compare": the ratios of ngauge compare (plots/compare.c), made in memory;
			 * "distribution": --kind cdf and hist of any pattern (plots/fig_dist.c);
			 * "load": --kind load of open-loop runs (plots/fig_load.c) */
			CHECK(is_pattern(*p) || strcmp(*p, "compare") == 0 ||
			          strcmp(*p, "distribution") == 0 || strcmp(*p, "load") == 0,
			      "%s: names \"%s\", which is no pattern of this build", first, *p);
			CHECK(ng_figure_of(*p) == d, "%s: \"%s\" is drawn by another family", first, *p);
			for (j = 0; j < i; j++)
				CHECK(!names(ng_figures[j], *p), "\"%s\" is named by families %zu and %zu",
				      *p, j, i);
		}
		for (j = 0; j < i && d->report.block; j++)
			CHECK(!ng_figures[j]->report.block ||
			          strcmp(ng_figures[j]->report.block, d->report.block),
			      "report block \"%s\" has two sections", d->report.block);
	}

	/* every pattern of the build has its figure, the others the generic one */
	for (i = 0; ng_patterns[i]; i++) {
		const struct ng_figure *d = ng_figure_of(ng_patterns[i]->name);

		CHECK(d && (d == generic || names(d, ng_patterns[i]->name)), "pattern %s: wrong family",
		      ng_patterns[i]->name);
	}
	CHECK(ng_figure_of("no-such-pattern") == generic,
	      "an unknown pattern is not drawn by the generic one");

	if (!failures)
		printf("ok: %zu figure families, every pattern of the build drawn by one\n", n);
	return check_exit();
}
