/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The validity warnings (manifest_warn.h): what in the gathered manifest
 * makes the times of the run doubtful.  One warning per kind, naming every
 * rank, CPU or host concerned; the kinds are listed in
 * doc/result-format.md.  And the pieces manifest.c builds on (CPU lists,
 * adding a warning): this file calls nothing of manifest.c, and includes
 * nothing of it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_warn.h"

int ng_manifest_cpulist(const char *list, bool *set, int n)
{
	int count = 0;
	const char *p = list;

	for (int c = 0; c < n; c++)
		set[c] = false;
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			return -1;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (c < n && !set[c])
				set[c] = true;
			count++;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return count;
}

void ng_manifest_warn(struct ng_manifest *m, const char *kind, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(m->warnings, json_pack("{s:s,s:s}", "kind", kind, "message", msg));
}

/* Appends ", TEXT" (or TEXT first) to @buf of @len. */
static void add(char *buf, size_t len, const char *text)
{
	size_t l = strlen(buf);

	if (l + 1 < len)
		snprintf(buf + l, len - l, "%s%s", l ? ", " : "", text);
}

/* The host object of @host in m->hosts, or NULL. */
static const json_t *host_of(const struct ng_manifest *m, const char *host)
{
	size_t i;
	json_t *h;

	json_array_foreach(m->hosts, i, h)
	{
		if (json_is_string(json_object_get(h, "host")) &&
		    strcmp(json_string_value(json_object_get(h, "host")), host) == 0)
			return h;
	}
	return NULL;
}

static long long int_at(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static void freq_scaling(struct ng_manifest *m, const struct ng_manifest_rank *all, size_t n)
{
	char list[400] = "", one[128];

	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		/* a governor other than performance scales the clock, unless its
		 * limits pin it (min = max) */
		if (!all[i].governor[0] || strcmp(all[i].governor, "performance") == 0 ||
		    (all[i].khz[1] > 0 && all[i].khz[1] == all[i].khz[2]))
			continue;
		for (size_t j = 0; j < i; j++)
			dup |= all[j].cpu == all[i].cpu && strcmp(all[j].host, all[i].host) == 0;
		if (dup)
			continue;
		snprintf(one, sizeof(one), "CPU %d of %s (%s)", (int)all[i].cpu, all[i].host,
		         all[i].governor);
		add(list, sizeof(list), one);
	}
	if (list[0])
		ng_manifest_warn(m, "frequency-scaling",
		                 "frequency scaling on measured cores: %s; the clock changes under the "
		                 "measurement (set the governor to performance)",
		                 list);
}

static void numa_nic(struct ng_manifest *m, const struct ng_manifest_rank *all, size_t n)
{
	char list[400] = "", one[160];

	for (size_t i = 0; i < n; i++) {
		const json_t *h = host_of(m, all[i].host), *nic = h ? json_object_get(h, "nic") : NULL;
		long long node = json_is_object(nic) ? int_at(nic, "numa_node") : -1;

		if (node < 0 || all[i].node < 0 || node == all[i].node)
			continue;
		snprintf(one, sizeof(one), "rank %zu on node %d of %s (its NIC %s on node %lld)", i,
		         (int)all[i].node, all[i].host, json_string_value(json_object_get(nic, "name")),
		         node);
		add(list, sizeof(list), one);
	}
	if (list[0])
		ng_manifest_warn(m, "numa-nic",
		                 "ranks on another NUMA node than their NIC: %s; every transfer crosses the "
		                 "interconnect (pin them to the NIC's node)",
		                 list);
}

static void smt_siblings(struct ng_manifest *m, const struct ng_manifest_rank *all, size_t n)
{
	char list[400] = "", one[128];

	for (size_t i = 0; i < n; i++) {
		bool sib[1024];

		if (all[i].cpu < 0 || !all[i].siblings[0] ||
		    ng_manifest_cpulist(all[i].siblings, sib, 1024) < 2)
			continue;
		for (size_t j = i + 1; j < n; j++) {
			if (all[j].cpu < 0 || all[j].cpu >= 1024 || all[j].cpu == all[i].cpu ||
			    !sib[all[j].cpu] || strcmp(all[i].host, all[j].host) != 0 || all[i].ncpus != 1 ||
			    all[j].ncpus != 1)
				continue;
			snprintf(one, sizeof(one), "ranks %zu and %zu on CPUs %d and %d of %s", i, j,
			         (int)all[i].cpu, (int)all[j].cpu, all[i].host);
			add(list, sizeof(list), one);
		}
	}
	if (list[0])
		ng_manifest_warn(m, "smt-siblings",
		                 "ranks on SMT siblings: %s; they share one core's pipeline and caches (pin "
		                 "them to different cores)",
		                 list);
}

static void timer(struct ng_manifest *m, const struct ng_manifest_in *in)
{
	const json_t *h = json_array_get(m->hosts, 0);
	const json_t *inv = h ? json_object_get(h, "invariant_tsc") : NULL;

	if (!in->t || in->t->kind != NG_TIMER_TSC)
		return;
	if (!in->t->invariant_tsc || json_is_false(inv))
		ng_manifest_warn(m, "timer-not-invariant",
		                 "timer tsc, but the %s does not report an invariant TSC (constant_tsc and "
		                 "nonstop_tsc): its rate may change with the clock (use --timer clock)",
		                 in->t->invariant_tsc ? "kernel" : "CPU");
}

static void memlock(struct ng_manifest *m, const struct ng_manifest_in *in)
{
	/* The registrations a run asks for: the send and receive buffers of the
	 * largest size, each side, with the rings and staging of the RDMA layer
	 * (a few MiB). */
	long long need = (long long)in->max_bytes * 4 + (8ll << 20);
	size_t i;
	json_t *h;

	if (!in->regmem)
		return;
	json_array_foreach(m->hosts, i, h)
	{
		long long lim = int_at(h, "memlock_bytes");

		if (lim >= 0 && lim < need) {
			ng_manifest_warn(
			    m, "memlock",
			    "the memlock limit of %s is %lld KiB, below the about %lld KiB this run "
			    "registers: registrations may fail or fall back (raise ulimit -l)",
			    json_string_value(json_object_get(h, "host")), lim >> 10, need >> 10);
			return;
		}
	}
}

static void not_pinned(struct ng_manifest *m, const struct ng_manifest_in *in,
                       const struct ng_manifest_rank *all, size_t n)
{
	char list[400] = "", one[64];

	if (in->pin_given)
		return;
	for (size_t i = 0; i < n; i++) {
		const json_t *h = host_of(m, all[i].host);
		long long cpus = h ? int_at(h, "cpus_online") : -1;
		size_t on_host = 0;

		for (size_t j = 0; j < n; j++)
			on_host += strcmp(all[j].host, all[i].host) == 0;
		if (!all[i].spins || all[i].ncpus <= 1 || cpus < 0 || (long long)on_host > cpus)
			continue;
		snprintf(one, sizeof(one), "%zu", i);
		add(list, sizeof(list), one);
	}
	if (list[0])
		ng_manifest_warn(
		    m, "not-pinned",
		    "rank%s %s %s not pinned, and %s the CPU while waiting: the scheduler may move "
		    "%s during the run (use --pin; there is a CPU for every rank)",
		    strchr(list, ',') ? "s" : "", list, strchr(list, ',') ? "are" : "is",
		    strchr(list, ',') ? "poll" : "polls", strchr(list, ',') ? "them" : "it");
}

void ng_manifest_check(struct ng_manifest *m, const struct ng_manifest_in *in,
                       const struct ng_manifest_rank *all, size_t n)
{
	freq_scaling(m, all, n);
	numa_nic(m, all, n);
	smt_siblings(m, all, n);
	timer(m, in);
	memlock(m, in);
	not_pinned(m, in, all, n);
}
