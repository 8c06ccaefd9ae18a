/* SPDX-License-Identifier: BSD-3-Clause */
/* The "env" block of a result: where and with what it was measured. */
#include "config.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "env.h"
#include "peer.h"

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

/* What each rank contributes to ng_env_oversub. */
struct ng_env_rank {
	char host[64];
	int32_t spins;
	cpu_set_t cpus;
};

ng_status ng_env_oversub(struct ng_boot *boot, bool spins, struct ng_oversub *o_p)
{
	struct ng_env_rank mine = {.spins = spins}, *all;
	struct {
		size_t first; /* its first spinning rank */
		int ranks;
		cpu_set_t cpus;
	} *hosts = NULL;
	size_t n = (size_t)boot->size, nh = 0;
	ng_status st;

	memset(o_p, 0, sizeof(*o_p));
	snprintf(mine.host, sizeof(mine.host), "%.63s", boot->host);
	if (sched_getaffinity(0, sizeof(mine.cpus), &mine.cpus)) {
		CPU_ZERO(&mine.cpus);
		for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, &mine.cpus);
	}
	all = calloc(n, sizeof(*all));
	if (!all) {
		ng_error("out of memory");
		return NG_ERR_NOMEM;
	}
	st = ng_boot_allgather(boot, &mine, sizeof(mine), all);
	for (size_t i = 0; st == NG_OK && i < n; i++)
		if (!ng_peer_str(all[i].host, sizeof(all[i].host)))
			st = ng_peer_bad("host name", (int)i, "not terminated within 64 bytes");
	/* The spinning ranks of each host and the union of their CPUs, host by
	 * host in order of their first spinning rank: O(ranks x hosts), each
	 * rank's host compared with the last one first. */
	hosts = st == NG_OK ? calloc(n ? n : 1, sizeof(*hosts)) : NULL;
	if (st == NG_OK && !hosts) {
		ng_error("out of memory");
		st = NG_ERR_NOMEM;
	}
	for (size_t j = 0; st == NG_OK && j < n; j++) {
		size_t h = nh;

		if (!all[j].spins)
			continue;
		if (nh && strcmp(all[hosts[nh - 1].first].host, all[j].host) == 0)
			h = nh - 1;
		for (size_t k = 0; h == nh && k < nh; k++)
			if (strcmp(all[hosts[k].first].host, all[j].host) == 0)
				h = k;
		if (h == nh) {
			hosts[nh].first = j;
			CPU_ZERO(&hosts[nh].cpus);
			nh++;
		}
		hosts[h].ranks++;
		CPU_OR(&hosts[h].cpus, &hosts[h].cpus, &all[j].cpus);
	}
	for (size_t h = 0; st == NG_OK && h < nh; h++) {
		int ranks = hosts[h].ranks, cores = CPU_COUNT(&hosts[h].cpus);

		if (ranks > cores && (!o_p->over || ranks - cores > o_p->ranks - o_p->cores)) {
			o_p->over = true;
			o_p->ranks = ranks;
			o_p->cores = cores;
			snprintf(o_p->host, sizeof(o_p->host), "%s", all[hosts[h].first].host);
		}
	}
	free(hosts);
	free(all);
	return st;
}
