/* SPDX-License-Identifier: BSD-3-Clause */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_MIN 16
#define KEY_MAX 4096

ng_status ng_auth_load(const char *path, struct ng_auth *a)
{
	unsigned char buf[KEY_MAX + 1];
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd;

	memset(a, 0, sizeof(*a));
	if (sodium_init() < 0) {
		ng_error("--auth: libsodium could not start");
		return NG_ERR_SYS;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ng_error("--auth: cannot open '%s': %s", path,
		         errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		return NG_ERR_USAGE;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ng_error("--auth: '%s' is not a regular file", path);
		goto err_close;
	}
	if (st.st_mode & 077) {
		ng_error("--auth: '%s' may be read or written by others (mode %04o): chmod 600 it", path,
		         (unsigned)(st.st_mode & 07777));
		goto err_close;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		ng_error("--auth: '%s' belongs to user %u, not to this user (%u) or root", path,
		         (unsigned)st.st_uid, (unsigned)geteuid());
		goto err_close;
	}
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (len < KEY_MIN || len > KEY_MAX) {
		ng_error("--auth: the key in '%s' has %zu%s bytes; it needs %d .. %d", path, len,
		         len > KEY_MAX ? " or more" : "", KEY_MIN, KEY_MAX);
		sodium_memzero(buf, sizeof(buf));
		return NG_ERR_USAGE;
	}
	/* HMAC's own treatment of a long key, once: its SHA-256. */
	crypto_hash_sha256(a->key, buf, len);
	sodium_memzero(buf, sizeof(buf));
	a->on = true;
	return NG_OK;
err_close:
	close(fd);
	return NG_ERR_USAGE;
}

void ng_auth_nonce(unsigned char *n)
{
	randombytes_buf(n, NG_AUTH_NONCE);
}

void ng_auth_mac(const struct ng_auth *a, const char *label, const unsigned char *n1, const unsigned char *n2,
                 uint64_t seq, const void *data, size_t len, unsigned char *mac)
{
	crypto_auth_hmacsha256_state s;
	unsigned char head[16];
	uint64_t l = len;

	for (int i = 0; i < 8; i++) {
		head[i] = (unsigned char)(seq >> (8 * i));
		head[8 + i] = (unsigned char)(l >> (8 * i));
	}
	crypto_auth_hmacsha256_init(&s, a->key, sizeof(a->key));
	/* the label with its NUL, so that no label is a prefix of another's input */
	crypto_auth_hmacsha256_update(&s, (const unsigned char *)label, strlen(label) + 1);
	crypto_auth_hmacsha256_update(&s, n1, NG_AUTH_NONCE);
	crypto_auth_hmacsha256_update(&s, n2, NG_AUTH_NONCE);
	crypto_auth_hmacsha256_update(&s, head, sizeof(head));
	if (len)
		crypto_auth_hmacsha256_update(&s, data, len);
	crypto_auth_hmacsha256_final(&s, mac);
	sodium_memzero(&s, sizeof(s));
}

bool ng_auth_check(const struct ng_auth *a, const char *label, const unsigned char *n1,
                   const unsigned char *n2, uint64_t seq, const void *data, size_t len,
                   const unsigned char *mac)
{
	unsigned char want[NG_AUTH_MAC];
	bool ok;

	ng_auth_mac(a, label, n1, n2, seq, data, len, want);
	ok = sodium_memcmp(want, mac, NG_AUTH_MAC) == 0;
	sodium_memzero(want, sizeof(want));
	return ok;
}

void ng_auth_clear(struct ng_auth *a)
{
	sodium_memzero(a, sizeof(*a));
}
