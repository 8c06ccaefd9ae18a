/* SPDX-License-Identifier: BSD-3-Clause */
#include "sizes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define NG_SIZES_MAX 100000
/* Multiplications of the :x ranges of one specification: a factor so close
 * to 1 that its products round to the same size again and again would
 * otherwise take years (1-1G:x1.0000000000000002) to give few sizes. */
#define NG_SIZES_STEPS_MAX 10000000

struct size_list {
	size_t *v;
	size_t n, cap;
	size_t steps; /* multiplications so far (NG_SIZES_STEPS_MAX) */
};

static int push(struct size_list *l, size_t s)
{
	if (l->n == NG_SIZES_MAX)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		size_t *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* Parses one item (a NUL-terminated copy) into @l. */
static int parse_item(char *tok, struct size_list *l, char *err, size_t errlen)
{
	char *step = strchr(tok, ':');
	char *dash = strchr(tok, '-');
	size_t lo, hi;

	if (step)
		*step++ = '\0';
	if (!dash) {
		if (!step && ng_parse_size(tok, &lo) == -2)
			goto too_large;
		if (step || ng_parse_size(tok, &lo))
			goto bad;
		return push(l, lo) ? -2 : 0;
	}
	*dash = '\0';
	if (ng_parse_size(tok, &lo) == -2 || ng_parse_size(dash + 1, &hi) == -2) {
		*dash = '-';
		goto too_large;
	}
	if (ng_parse_size(tok, &lo) || ng_parse_size(dash + 1, &hi) || lo > hi)
		goto bad_range;
	*dash = '-';

	if (!step || step[0] == 'x' || step[0] == '*') {
		double f = 2.0;
		if (step) {
			char *end;
			errno = 0;
			f = strtod(step + 1, &end);
			if (errno || end == step + 1 || *end || !(f > 1.0) || !isfinite(f))
				goto bad_step;
		}
		double x = (double)lo;
		if (lo == 0) {
			if (push(l, 0))
				return -2;
			x = 1.0;
		}
		size_t last = (size_t)-1;
		while (x <= (double)hi) {
			size_t s = (size_t)llround(x);
			if (++l->steps > NG_SIZES_STEPS_MAX)
				goto slow_step;
			if (s != last && s <= hi && push(l, s))
				return -2;
			last = s;
			x *= f;
		}
		if (last != hi && push(l, hi))
			return -2;
		return 0;
	}
	if (step[0] == '+') {
		size_t inc;
		if (ng_parse_size(step + 1, &inc) || inc == 0)
			goto bad_step;
		for (size_t s = lo; s <= hi; s += inc) {
			if (push(l, s))
				return -2;
			if (hi - s < inc)
				break;
		}
		if (l->v[l->n - 1] != hi && push(l, hi))
			return -2;
		return 0;
	}
slow_step:
	snprintf(err, errlen,
	         "factor ':%s' in size range '%s' is too close to 1: more than %d multiplications in the "
	         "specification (use :+STEP)",
	         step ? step : "x2", tok, NG_SIZES_STEPS_MAX);
	return -1;
bad_step:
	snprintf(err, errlen, "bad step ':%s' in size range '%s' (use :xFACTOR with FACTOR > 1 or :+STEP)",
	         step, tok);
	return -1;
bad_range:
	*dash = '-';
	snprintf(err, errlen, "bad size range '%s' (expected LOW-HIGH with LOW <= HIGH, e.g. 1-1M)", tok);
	return -1;
bad:
	snprintf(err, errlen, "bad size '%s' (expected e.g. 64, 4K, 1M)", tok);
	return -1;
too_large:
	snprintf(err, errlen, "size '%s' is above the largest message size, 1T (%llu bytes)", tok,
	         (unsigned long long)NG_OPT_SIZE_MAX);
	return -1;
}

int ng_sizes_parse(const char *spec, size_t **sizes_p, size_t *n_p, char *err, size_t errlen)
{
	struct size_list l = {0};
	char *copy, *save = NULL;
	int rc = 0;

	if (!spec || !*spec) {
		snprintf(err, errlen, "empty size specification");
		return -1;
	}
	copy = strdup(spec);
	if (!copy)
		goto err_nomem;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		rc = parse_item(tok, &l, err, errlen);
		if (rc == -2) {
			if (l.n == NG_SIZES_MAX) {
				snprintf(err, errlen, "size specification '%s' gives more than %d sizes",
				         spec, NG_SIZES_MAX);
				goto err_free;
			}
			goto err_nomem_free;
		}
		if (rc)
			goto err_free;
	}
	if (l.n == 0) {
		snprintf(err, errlen, "size specification '%s' has no sizes", spec);
		goto err_free;
	}
	free(copy);
	qsort(l.v, l.n, sizeof(*l.v), cmp_size);
	size_t k = 0;
	for (size_t i = 0; i < l.n; i++)
		if (k == 0 || l.v[i] != l.v[k - 1])
			l.v[k++] = l.v[i];
	*sizes_p = l.v;
	*n_p = k;
	return 0;

err_nomem_free:
	free(copy);
err_nomem:
	snprintf(err, errlen, "out of memory parsing sizes");
	free(l.v);
	return -1;
err_free:
	free(copy);
	free(l.v);
	return -1;
}

bool ng_sizes_cap(size_t *sizes, size_t *n_p, size_t max)
{
	size_t k = 0;

	if (max == 0 || *n_p == 0 || sizes[*n_p - 1] <= max)
		return false;
	while (k < *n_p && sizes[k] < max)
		k++;
	sizes[k++] = max;
	*n_p = k;
	return true;
}

char *ng_sizes_format(const size_t *sizes, size_t n)
{
	size_t len = 1 + 24 * n, used = 0;
	char *buf = malloc(len);

	if (!buf)
		return NULL;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t s = sizes[i];
		const char *sep = i ? "," : "";
		int w;

		if (s >= (1u << 20) && s % (1u << 20) == 0)
			w = snprintf(buf + used, len - used, "%s%zuM", sep, s >> 20);
		else if (s >= 1024 && s % 1024 == 0)
			w = snprintf(buf + used, len - used, "%s%zuK", sep, s >> 10);
		else
			w = snprintf(buf + used, len - used, "%s%zu", sep, s);
		used += (size_t)w;
	}
	return buf;
}
