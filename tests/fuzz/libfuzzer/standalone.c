/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The harnesses without libFuzzer (a compiler other than clang): every
 * file named on the command line, and every file of every directory named,
 * is given to LLVMFuzzerTestOneInput once, in name order.  The committed
 * corpus thus runs as a regression test in every build; a crash or a
 * sanitizer's report fails it.  Exit status 0, or 1 when an input cannot be
 * read or none was found.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fuzz.h"

static int run_file(const char *path, size_t *runs_p)
{
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (size == cap) {
			uint8_t *p = realloc(data, cap ? 2 * cap : 4096);

			if (!p)
				abort();
			data = p;
			cap = cap ? 2 * cap : 4096;
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	if (ferror(f)) {
		fprintf(stderr, "fuzz: %s: read error\n", path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "fuzz: running %s (%zu bytes)\n", path, size);
	/* a copy of exactly @size bytes, as libFuzzer gives: a read past the
	 * end is the sanitizer's to see */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	if (size)
		memcpy(copy, data, size);
	free(data);
	(void)LLVMFuzzerTestOneInput(copy, size);
	free(copy);
	(*runs_p)++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *runs_p)
{
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	int rc = 0;
	DIR *d = opendir(dir);

	if (!d) {
		fprintf(stderr, "fuzz: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap ? 2 * cap : 64) * sizeof(*p));

			if (!p)
				abort();
			names = p;
			cap = cap ? 2 * cap : 64;
		}
		len = strlen(dir) + strlen(de->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n])
			abort();
		snprintf(names[n++], len, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		if (run_file(names[i], runs_p))
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	size_t runs = 0;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc |= run_dir(argv[i], &runs);
		else
			rc |= run_file(argv[i], &runs);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("fuzz: %zu inputs run once each (regression, no libFuzzer) in %.2f s\n", runs,
	       (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
	if (runs == 0) {
		fprintf(stderr, "fuzz: no input found\n");
		return 1;
	}
	return rc ? 1 : 0;
}
