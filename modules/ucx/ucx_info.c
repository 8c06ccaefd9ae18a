/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What UCX chose (ucx_int.h): the lanes and protocol thresholds of an
 * endpoint, from the text ucp_ep_print_info writes (UCX 1.13 has no query
 * for them), and the UCX_* environment.  Cold code, for open() and the
 * report only.
 *
 * The lines parsed (UCX 1.13):
 *   #                 lane[0]:  1:posix/memory.0 md[1]  -> md[1]/posix/sysdev[255] rma_bw#0 am am_bw#0
 *   #                tag_send: 0..<egr/short>..227..<egr/bcopy>..263060..<rndv>..(inf)
 * A lane's transport is the word after "N:" without its ".N" suffix
 * ("posix/memory"); a protocol line is "NAME: RANGES" with NAME ending in
 * "_send", "_recv", "_put", "_get" or holding "_send_" (tag_send_nbr ...).
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "modules/ucx/ucx_int.h"

extern char **environ;

/* ucp_ep_print_info's text of @ep (malloc'ed), NULL on failure. */
static char *ng_ucx_ep_text(ucp_ep_h ep)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	ucp_ep_print_info(ep, f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The transport of a lane line into @out ("posix/memory"); false if @line is
 * none. */
static bool ng_ucx_lane_tl(const char *line, char *out, size_t len)
{
	const char *p = strstr(line, "lane[");
	size_t n;

	if (!p || !(p = strchr(p, ':')))
		return false;
	p += 1 + strspn(p + 1, " ");
	p += strspn(p, "0123456789");
	if (*p != ':')
		return false;
	p++;
	n = strcspn(p, " \t\n");
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	/* "posix/memory.0": the interface's index goes */
	char *dot = strrchr(out, '.');
	if (dot && strchr(out, '/') && dot > strchr(out, '/') && dot[1] >= '0' && dot[1] <= '9')
		*dot = '\0';
	return true;
}

/* A protocol line's name and ranges, NULL when @line is none. */
static bool ng_ucx_proto(char *line, const char **name_p, const char **ranges_p)
{
	char *p = line + strspn(line, "# \t"), *colon = strchr(p, ':');
	size_t n;

	if (!colon || colon == p || strchr(p, ' ') < colon || strncmp(p, "lane", 4) == 0)
		return false;
	if (!strstr(colon, ".."))
		return false;
	*colon = '\0';
	n = strlen(colon + 1);
	while (n && (colon[n] == '\n' || colon[n] == ' '))
		colon[n--] = '\0';
	*name_p = p;
	*ranges_p = colon + 1 + strspn(colon + 1, " ");
	return true;
}

/* Whether @arr holds the string @s already. */
static bool ng_ucx_has(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v) if (strcmp(json_string_value(v), s) == 0) return true;
	return false;
}

void ng_ucx_ep_info(ucp_ep_h ep, json_t *tls, json_t *protos)
{
	char *text = ng_ucx_ep_text(ep), *save = NULL;

	if (!text)
		return;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *name, *ranges;
		char tl[64];

		if (ng_ucx_lane_tl(line, tl, sizeof(tl))) {
			if (!ng_ucx_has(tls, tl))
				json_array_append_new(tls, json_string(tl));
		} else if (ng_ucx_proto(line, &name, &ranges)) {
			json_object_set_new(protos, name, json_string(ranges));
		}
	}
	free(text);
}

void ng_ucx_ep_tls_line(ucp_ep_h ep, char *buf, size_t len)
{
	json_t *tls = json_array(), *protos = json_object(), *v;
	size_t i, n = 0;

	buf[0] = '\0';
	ng_ucx_ep_info(ep, tls, protos);
	json_array_foreach(tls, i, v)
	{
		int k = snprintf(buf + n, len - n, "%s%s", n ? " " : "", json_string_value(v));

		if (k < 0 || (size_t)k >= len - n)
			break;
		n += (size_t)k;
	}
	json_decref(tls);
	json_decref(protos);
}

json_t *ng_ucx_env_json(void)
{
	json_t *o = json_object();

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[128];

		if (strncmp(*e, "UCX_", 4) != 0 || !eq || (size_t)(eq - *e) >= sizeof(name))
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		json_object_set_new(o, name, json_string(eq + 1));
	}
	return o;
}
