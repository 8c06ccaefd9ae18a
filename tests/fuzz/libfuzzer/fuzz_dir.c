/* SPDX-License-Identifier: BSD-3-Clause */
/* The harnesses' private directory and files (contract in fuzz.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

/* One directory per process; a harness runs in one thread, and the path is
 * what every input's files are written under. */
static char fuzz_dir[4096];

static void ng_fuzz_remove_dir(void)
{
	ng_fuzz_clear();
	if (fuzz_dir[0])
		(void)rmdir(fuzz_dir);
}

const char *ng_fuzz_dir(void)
{
	const char *root;

	if (fuzz_dir[0])
		return fuzz_dir;
	root = getenv("TMPDIR");
	if (!root || !*root)
		root = "/tmp";
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/ngauge-fuzz-XXXXXX", root);
	if (!mkdtemp(fuzz_dir)) {
		fprintf(stderr, "fuzz: cannot create %s: %s\n", fuzz_dir, strerror(errno));
		abort();
	}
	atexit(ng_fuzz_remove_dir);
	return fuzz_dir;
}

char *ng_fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	size_t len = strlen(ng_fuzz_dir()) + strlen(name) + 2;
	char *path = malloc(len);
	FILE *f;

	if (!path)
		abort();
	snprintf(path, len, "%s/%s", ng_fuzz_dir(), name);
	f = fopen(path, "w");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
		fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
	return path;
}

void ng_fuzz_clear(void)
{
	struct dirent *de;
	DIR *d;

	if (!fuzz_dir[0] || !(d = opendir(fuzz_dir)))
		return;
	while ((de = readdir(d)) != NULL) {
		char path[4096 + 256];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", fuzz_dir, de->d_name);
		(void)unlink(path);
	}
	closedir(d);
}

char *ng_fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
