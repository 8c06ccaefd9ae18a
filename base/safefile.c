/* SPDX-License-Identifier: BSD-3-Clause */
/* Files written safely: a temporary beside the target, renamed (safefile.h). */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The bytes of the final name kept in the temporary's name: with ".",
 * ".XXXXXX" it stays below NAME_MAX (255). */
#define NG_SAFEFILE_BASE_MAX 200

/* The process' umask from /proc/self/status ("Umask:\t0022"), without
 * changing it (umask() would, for every thread); 077 when unreadable. */
static mode_t ng_safefile_umask(void)
{
	char line[128];
	mode_t mask = 077;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return mask;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Umask:", 6) == 0) {
			char *end;
			unsigned long v = strtoul(line + 6, &end, 8);

			if (end != line + 6 && v <= 0777)
				mask = (mode_t)v;
			break;
		}
	}
	fclose(f);
	return mask;
}

int ng_safefile_open(struct ng_safefile *sf, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dirlen = slash ? (int)(slash - path) + 1 : 0; /* with its '/' */
	size_t blen = strlen(base);
	size_t len;
	int err;

	memset(sf, 0, sizeof(*sf));
	sf->fd = -1;
	if (!*base) {
		errno = EISDIR;
		return -1;
	}
	if (blen > NG_SAFEFILE_BASE_MAX)
		blen = NG_SAFEFILE_BASE_MAX;
	len = (size_t)dirlen + blen + sizeof("..XXXXXX");
	sf->path = strdup(path);
	sf->tmp = malloc(len);
	if (!sf->path || !sf->tmp) {
		errno = ENOMEM;
		goto err_free;
	}
	snprintf(sf->tmp, len, "%.*s.%.*s.XXXXXX", dirlen, path, (int)blen, base);
	/* O_CREAT | O_EXCL (mkostemp's): never an existing name, never a link */
	sf->fd = mkostemp(sf->tmp, O_CLOEXEC);
	if (sf->fd < 0)
		goto err_free;
	if (fchmod(sf->fd, 0666 & ~ng_safefile_umask()) != 0)
		goto err_unlink;
	return 0;

err_unlink:
	err = errno;
	unlink(sf->tmp);
	close(sf->fd);
	errno = err;
err_free:
	err = errno;
	free(sf->tmp);
	free(sf->path);
	memset(sf, 0, sizeof(*sf));
	sf->fd = -1;
	errno = err;
	return -1;
}

FILE *ng_safefile_stream(struct ng_safefile *sf)
{
	if (!sf->f)
		sf->f = fdopen(sf->fd, "w+");
	return sf->f;
}

int ng_safefile_commit(struct ng_safefile *sf)
{
	int err;

	if (!sf->tmp) {
		errno = EINVAL;
		return -1;
	}
	if (sf->f) {
		errno = 0;
		if (fflush(sf->f) == EOF || ferror(sf->f)) {
			if (!errno)
				errno = EIO;
			goto err_unlink;
		}
	}
	if (rename(sf->tmp, sf->path) != 0)
		goto err_unlink;
	free(sf->tmp);
	sf->tmp = NULL;
	return 0;

err_unlink:
	err = errno;
	unlink(sf->tmp);
	free(sf->tmp);
	sf->tmp = NULL;
	errno = err;
	return -1;
}

void ng_safefile_close(struct ng_safefile *sf)
{
	int err = errno;

	if (!sf->path)
		return;
	if (sf->tmp)
		unlink(sf->tmp);
	if (sf->f)
		fclose(sf->f);
	else if (sf->fd >= 0)
		close(sf->fd);
	free(sf->tmp);
	free(sf->path);
	memset(sf, 0, sizeof(*sf));
	sf->fd = -1;
	errno = err;
}

int ng_safefile_write(const char *path, int (*write)(FILE *f, const void *ctx), const void *ctx)
{
	struct ng_safefile sf;
	int rc = -1;

	if (ng_safefile_open(&sf, path) == 0 && ng_safefile_stream(&sf)) {
		errno = 0;
		rc = write(sf.f, ctx);
		if (rc != 0 && !errno)
			errno = EIO;
		if (rc == 0)
			rc = ng_safefile_commit(&sf);
	}
	ng_safefile_close(&sf); /* removes the temporary unless committed; keeps errno */
	return rc != 0 ? -1 : 0;
}

bool ng_safefile_name_ok(const char *path, size_t *at_p)
{
	for (size_t i = 0; path[i]; i++) {
		unsigned char c = (unsigned char)path[i];

		if (c < 0x20 || c == 0x7f) {
			if (at_p)
				*at_p = i;
			return false;
		}
	}
	return true;
}
