/* SPDX-License-Identifier: BSD-3-Clause */
/* The "env" block of a result: where and with what it was measured. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "env.h"

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) == 0) {
			char *c = strchr(line, ':');
			if (c) {
				c++;
				while (*c == ' ')
					c++;
				c[strcspn(c, "\n")] = '\0';
				snprintf(buf, len, "%s", c);
			}
			break;
		}
	}
	fclose(f);
}

json_t *ng_env_json(const char *device, const char *mpi)
{
	struct utsname u;
	char host[256] = "", cpu[256], kernel[512] = "";

	gethostname(host, sizeof(host) - 1);
	if (uname(&u) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	cpu_model(cpu, sizeof(cpu));
	return json_pack("{s:s,s:s,s:s,s:s?,s:s?,s:s,s:i}", "host", host, "kernel", kernel, "cpu", cpu, "mpi",
	                 mpi, "device", device, "ngauge", NG_VERSION, "cores",
	                 (int)sysconf(_SC_NPROCESSORS_ONLN));
}
