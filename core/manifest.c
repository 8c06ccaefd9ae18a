/* SPDX-License-Identifier: BSD-3-Clause */
/* The run's manifest: hosts, ranks and versions from procfs and sysfs (manifest.h). */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <limits.h>
#include <link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "manifest.h"
#include "peer.h"

/* The longest host description (JSON text) a rank may send: a host with
 * many devices writes a few KiB. */
#define NG_MANIFEST_HOST_MAX (64 * 1024)

const char *ng_manifest_root(void)
{
	const char *r = getenv("NGAUGE_TEST_SYSROOT");

	return r ? r : "";
}

static FILE *open_under(const char *path)
{
	char full[PATH_MAX];

	if ((size_t)snprintf(full, sizeof(full), "%s%s", ng_manifest_root(), path) >= sizeof(full))
		return NULL;
	return fopen(full, "r");
}

bool ng_manifest_read(const char *path, char *buf, size_t len)
{
	FILE *f = open_under(path);
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] != '\0';
}

static long long read_ll(const char *path)
{
	char buf[64], *end;
	long long v;

	if (!ng_manifest_read(path, buf, sizeof(buf)))
		return -1;
	v = strtoll(buf, &end, 0);
	return end == buf ? -1 : v;
}

static json_t *str_or_null(const char *path)
{
	char buf[256];

	return ng_manifest_read(path, buf, sizeof(buf)) ? json_string(buf) : json_null();
}

static json_t *int_or_null(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* ---- one rank ---- */

/* The NUMA node of CPU @cpu: the node whose cpulist holds it, -1 unknown. */
static int cpu_node(int cpu)
{
	char path[96], list[1024];
	bool set[1024];

	if (cpu < 0 || cpu >= 1024)
		return -1;
	for (int node = 0; node < 1024; node++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
		if (!ng_manifest_read(path, list, sizeof(list))) {
			if (node > 64)
				break;
			continue;
		}
		if (ng_manifest_cpulist(list, set, 1024) > 0 && set[cpu])
			return node;
	}
	return -1;
}

static void rank_fill(struct ng_boot *boot, bool spins, struct ng_manifest_rank *r)
{
	static const char *const freq[3] = {"scaling_cur_freq", "scaling_min_freq", "scaling_max_freq"};
	char path[128];
	cpu_set_t cpus;

	memset(r, 0, sizeof(*r));
	snprintf(r->host, sizeof(r->host), "%.63s", boot->host);
	r->cpu = sched_getcpu();
	r->node = cpu_node(r->cpu);
	r->spins = spins;
	r->ncpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : -1;
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/%s", (int)r->cpu,
		         freq[i]);
		r->khz[i] = r->cpu < 0 ? -1 : read_ll(path);
	}
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", (int)r->cpu);
	if (r->cpu < 0 || !ng_manifest_read(path, r->governor, sizeof(r->governor)))
		r->governor[0] = '\0';
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
	         (int)r->cpu);
	if (r->cpu < 0 || !ng_manifest_read(path, r->siblings, sizeof(r->siblings)))
		r->siblings[0] = '\0';
}

static json_t *rank_json(int rank, const struct ng_manifest_rank *r)
{
	return json_pack("{s:i,s:s,s:o,s:o,s:b,s:o,s:{s:o,s:o,s:o}}", "rank", rank, "host", r->host, "cpu",
	                 int_or_null(r->cpu), "numa_node", int_or_null(r->node), "pinned", r->ncpus == 1,
	                 "governor", r->governor[0] ? json_string(r->governor) : json_null(), "freq_khz",
	                 "cur", int_or_null(r->khz[0]), "min", int_or_null(r->khz[1]), "max",
	                 int_or_null(r->khz[2]));
}

/* ---- one host ---- */

/* From /proc/cpuinfo: the model, sockets, cores, and whether the kernel
 * trusts the TSC (constant_tsc and nonstop_tsc). */
static void cpuinfo(json_t *h)
{
	FILE *f = open_under("/proc/cpuinfo");
	char line[4096], model[256] = "";
	bool seen_flags = false, constant = false, nonstop = false;
	long long phys[256], nphys = 0, cores = -1;

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *c = strchr(line, ':');

			if (!c)
				continue;
			c++;
			while (*c == ' ' || *c == '\t')
				c++;
			c[strcspn(c, "\n")] = '\0';
			if (!model[0] && strncmp(line, "model name", 10) == 0) {
				snprintf(model, sizeof(model), "%s", c);
			} else if (strncmp(line, "physical id", 11) == 0) {
				long long id = atoll(c);
				bool known = false;

				for (long long i = 0; i < nphys; i++)
					known |= phys[i] == id;
				if (!known && nphys < 256)
					phys[nphys++] = id;
			} else if (cores < 0 && strncmp(line, "cpu cores", 9) == 0) {
				cores = atoll(c);
			} else if (!seen_flags && strncmp(line, "flags", 5) == 0) {
				seen_flags = true;
				constant = strstr(c, "constant_tsc") != NULL;
				nonstop = strstr(c, "nonstop_tsc") != NULL;
			}
		}
		fclose(f);
	}
	json_object_set_new(h, "cpu_model", model[0] ? json_string(model) : json_null());
	json_object_set_new(h, "sockets", nphys ? json_integer(nphys) : json_null());
	json_object_set_new(h, "cores", cores > 0 && nphys ? json_integer(cores * nphys) : json_null());
	json_object_set_new(h, "invariant_tsc", seen_flags ? json_boolean(constant && nonstop) : json_null());
}

/* isolcpus= and nohz_full= of the kernel command line (null when absent
 * or unreadable). */
static void cmdline(json_t *h)
{
	char line[4096];
	bool ok = ng_manifest_read("/proc/cmdline", line, sizeof(line));
	static const char *const keys[] = {"isolcpus", "nohz_full"};

	for (size_t k = 0; k < 2; k++) {
		json_t *v = json_null();
		size_t kl = strlen(keys[k]);

		for (char *w = ok ? strtok(line, " ") : NULL; w; w = strtok(NULL, " ")) {
			if (strncmp(w, keys[k], kl) == 0 && w[kl] == '=') {
				json_decref(v);
				v = json_string(w + kl + 1);
			}
		}
		json_object_set_new(h, keys[k], v);
		if (ok)
			ok = ng_manifest_read("/proc/cmdline", line, sizeof(line));
	}
}

static void meminfo(json_t *h)
{
	FILE *f = open_under("/proc/meminfo");
	char line[256], thp[128], *open_b, *close_b;
	long long total = -1, freep = -1, size = -1, anon = -1;
	json_t *t = json_null();

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			long long v;

			if (sscanf(line, "HugePages_Total: %lld", &v) == 1)
				total = v;
			else if (sscanf(line, "HugePages_Free: %lld", &v) == 1)
				freep = v;
			else if (sscanf(line, "Hugepagesize: %lld", &v) == 1)
				size = v;
			else if (sscanf(line, "AnonHugePages: %lld", &v) == 1)
				anon = v;
		}
		fclose(f);
	}
	/* "always [madvise] never": the word in brackets. */
	if (ng_manifest_read("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp)) &&
	    (open_b = strchr(thp, '[')) && (close_b = strchr(open_b, ']'))) {
		*close_b = '\0';
		t = json_string(open_b + 1);
	}
	json_object_set_new(h, "hugepages",
	                    json_pack("{s:o,s:o,s:o,s:o,s:o}", "transparent", t, "transparent_in_use_kB",
	                              int_or_null(anon), "total", int_or_null(total), "free",
	                              int_or_null(freep), "size_kB", int_or_null(size)));
}

/* Boost: cpufreq's "boost" (acpi-cpufreq), else intel_pstate's no_turbo. */
static json_t *boost(void)
{
	long long b = read_ll("/sys/devices/system/cpu/cpufreq/boost");

	if (b >= 0)
		return json_boolean(b != 0);
	b = read_ll("/sys/devices/system/cpu/intel_pstate/no_turbo");
	return b >= 0 ? json_boolean(b == 0) : json_null();
}

static json_t *numa_nodes(void)
{
	char list[256];
	bool set[1024];
	int n;

	if (!ng_manifest_read("/sys/devices/system/node/online", list, sizeof(list)))
		return json_null();
	n = ng_manifest_cpulist(list, set, 1024);
	return n > 0 ? json_integer(n) : json_null();
}

/* The number after @word in the device string (module.h: "rxe0 port 1 gid
 * 1 mtu 1024"), -1 when it has none. */
static long long after_word(const char *device, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = device; p && (p = strstr(p, word)); p += wl) {
		if ((p == device || p[-1] == ' ' || p[-1] == '(') && p[wl] == ' ' && p[wl + 1] >= '0' &&
		    p[wl + 1] <= '9')
			return atoll(p + wl + 1);
	}
	return -1;
}

/* Whether @name is a word of the device string. */
static bool names(const char *device, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = device; p && (p = strstr(p, name)); p += nl) {
		bool start = p == device || strchr(" (,:", p[-1]);
		bool end = strchr(" ),:", p[nl]) != NULL;

		if (start && end)
			return true;
	}
	return false;
}

static json_t *rdma_port(const char *dev, const char *port, const char *device, bool used)
{
	char path[PATH_MAX], rate[128], *x;
	json_t *p = json_object(), *width = json_null(), *gid = json_null(), *mtu = json_null();
	long long pn = atoll(port), g = used ? after_word(device, "gid") : -1,
	          m = used ? after_word(device, "mtu") : -1;

	json_object_set_new(p, "port", json_integer(pn));
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%s/state", dev, port);
	json_object_set_new(p, "state", str_or_null(path));
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%s/link_layer", dev, port);
	json_object_set_new(p, "link_layer", str_or_null(path));
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%s/rate", dev, port);
	if (ng_manifest_read(path, rate, sizeof(rate))) {
		json_object_set_new(p, "rate", json_string(rate));
		/* "100 Gb/sec (4X EDR)": the width is the word before X. */
		if ((x = strchr(rate, '(')) && strchr(x, 'X')) {
			*strchr(x, 'X') = '\0';
			width = json_sprintf("%sX", x + 1);
		}
	} else {
		json_object_set_new(p, "rate", json_null());
	}
	json_object_set_new(p, "width", width ? width : json_null());
	if (m > 0)
		mtu = json_integer(m);
	json_object_set_new(p, "active_mtu", mtu);
	if (g >= 0) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%s/gid_attrs/types/%lld", dev,
		         port, g);
		json_decref(gid);
		gid = str_or_null(path);
	}
	json_object_set_new(p, "gid_index", g >= 0 ? json_integer(g) : json_null());
	json_object_set_new(p, "gid_type", gid);
	return p;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int visible(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* The entries of ROOT/@dir, sorted (*names_p malloc'ed); -1 when none. */
static int list_dir(const char *dir, struct dirent ***names_p)
{
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", ng_manifest_root(), dir);
	return scandir(full, names_p, visible, by_name);
}

static void free_list(struct dirent **l, int n)
{
	for (int i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

/* The RDMA devices of the host, and the one the device string names. */
static json_t *rdma_devices(const char *device, json_t **used_p)
{
	struct dirent **devs = NULL;
	int nd = list_dir("/sys/class/infiniband", &devs);
	json_t *all = json_array();

	*used_p = NULL;
	for (int i = 0; i < nd; i++) {
		const char *dev = devs[i]->d_name;
		char path[PATH_MAX];
		struct dirent **ports = NULL;
		int np;
		bool used = device && names(device, dev);
		long long port_used = used ? after_word(device, "port") : -1;
		json_t *d = json_object(), *pa = json_array();

		json_object_set_new(d, "name", json_string(dev));
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/vendor", dev);
		json_object_set_new(d, "vendor_id", str_or_null(path));
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/device", dev);
		json_object_set_new(d, "part_id", str_or_null(path));
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hca_type", dev);
		json_object_set_new(d, "hca_type", str_or_null(path));
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/fw_ver", dev);
		json_object_set_new(d, "fw_ver", str_or_null(path));
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node", dev);
		json_object_set_new(d, "numa_node", int_or_null(read_ll(path)));
		json_object_set_new(d, "used", json_boolean(used));
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports", dev);
		np = list_dir(path, &ports);
		for (int k = 0; k < np; k++)
			json_array_append_new(
			    pa, rdma_port(dev, ports[k]->d_name, device,
			                  used && (port_used < 0 || port_used == atoll(ports[k]->d_name))));
		if (np > 0)
			free_list(ports, np);
		json_object_set_new(d, "ports", pa);
		json_array_append_new(all, d);
		if (used && !*used_p)
			*used_p = d;
	}
	if (nd > 0)
		free_list(devs, nd);
	return all;
}

/* The network interface the device string names: a word of it that is an
 * interface's name or one of its addresses (getifaddrs), or NULL. */
static json_t *net_device(const char *device)
{
	struct ifaddrs *ifa = NULL;
	char name[IF_NAMESIZE + 1] = "", path[PATH_MAX];

	if (!device)
		return NULL;
	if (getifaddrs(&ifa) == 0) {
		for (struct ifaddrs *i = ifa; i && !name[0]; i = i->ifa_next) {
			char addr[INET6_ADDRSTRLEN] = "";
			const void *a = NULL;

			if (!i->ifa_addr)
				continue;
			if (i->ifa_addr->sa_family == AF_INET)
				a = &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
			else if (i->ifa_addr->sa_family == AF_INET6)
				a = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
			if (names(device, i->ifa_name) ||
			    (a && inet_ntop(i->ifa_addr->sa_family, a, addr, sizeof(addr)) &&
			     names(device, addr)))
				snprintf(name, sizeof(name), "%s", i->ifa_name);
		}
		freeifaddrs(ifa);
	}
	if (!name[0])
		return NULL;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", name);
	return json_pack("{s:s,s:o}", "name", name, "numa_node", int_or_null(read_ll(path)));
}

static json_t *host_json(const char *host, const char *device)
{
	json_t *h = json_object(), *used, *nic;
	struct rlimit rl;

	json_object_set_new(h, "host", json_string(host));
	cpuinfo(h);
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		long long smt = read_ll("/sys/devices/system/cpu/smt/active");
		char sib[64];
		bool set[1024];
		int per = ng_manifest_read("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", sib,
		                           sizeof(sib))
		              ? ng_manifest_cpulist(sib, set, 1024)
		              : -1;

		json_object_set_new(h, "cpus_online", cpus > 0 ? json_integer(cpus) : json_null());
		json_object_set_new(h, "threads_per_core", per > 0 ? json_integer(per) : json_null());
		json_object_set_new(h, "smt_active", smt >= 0 ? json_boolean(smt != 0) : json_null());
	}
	json_object_set_new(h, "boost", boost());
	cmdline(h);
	json_object_set_new(h, "numa_nodes", numa_nodes());
	meminfo(h);
	json_object_set_new(h, "memlock_bytes",
	                    getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
	                        ? json_integer((json_int_t)rl.rlim_cur)
	                        : json_null());
	json_object_set_new(h, "rdma", rdma_devices(device, &used));
	nic = used ? json_pack("{s:O,s:O}", "name", json_object_get(used, "name"), "numa_node",
	                       json_object_get(used, "numa_node"))
	           : net_device(device);
	json_object_set_new(h, "nic", nic ? nic : json_null());
	return h;
}

/* ---- versions ---- */

struct lib_find {
	const char *prefix;
	char path[PATH_MAX];
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lib_find *l = data;
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, l->prefix, strlen(l->prefix)) != 0)
		return 0;
	snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name);
	return 1;
}

/* The version in the file name of loaded library @prefix ("libibverbs.so."):
 * libibverbs.so.1 -> libibverbs.so.1.14.50.0 gives "1.14.50.0". */
static json_t *lib_version(const char *prefix)
{
	struct lib_find l = {.prefix = prefix};
	char real[PATH_MAX];
	const char *base;

	if (!dl_iterate_phdr(find_lib, &l) || !realpath(l.path, real))
		return json_null();
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	return strlen(base) > strlen(prefix) ? json_string(base + strlen(prefix)) : json_null();
}

static json_t *fabric_version(void)
{
	uint32_t (*v)(void);
	void *sym = dlsym(RTLD_DEFAULT, "fi_version");

	if (!sym)
		return json_null();
	memcpy(&v, &sym, sizeof(v));
	uint32_t x = v();
	return json_sprintf("%u.%u", x >> 16, x & 0xffff);
}

/* The word after "ofi " in the device string: the libfabric provider. */
static json_t *fabric_provider(const char *device)
{
	const char *p = device ? strstr(device, "ofi ") : NULL;
	char prov[64];

	if (!p || (p != device && !strchr(" (,", p[-1])))
		return json_null();
	snprintf(prov, sizeof(prov), "%.*s", (int)strcspn(p + 4, " ,)"), p + 4);
	return prov[0] ? json_string(prov) : json_null();
}

/* MPICH's version string names its device ("MPICH Device:	ch4:ofi"); the
 * driver keeps its first line only, so the whole string is asked for again,
 * from the MPI library when one is loaded (MPI_Get_library_version may be
 * called at any time). */
static json_t *mpi_device(const char *mpi)
{
	/* The MPI library came with the mpi plugin (core/plugin.h), loaded
	 * with local symbols: asked by name, only if it is loaded already. */
	static const char *const sonames[] = {"libmpich.so.12", "libmpi.so.40", "libmpi.so.12"};
	int (*get)(char *, int *);
	void *sym = mpi ? dlsym(RTLD_DEFAULT, "MPI_Get_library_version") : NULL;
	char v[8192], dev[64];
	int vlen = 0;
	const char *p;

	for (size_t i = 0; mpi && !sym && i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		void *h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);

		if (h) {
			sym = dlsym(h, "MPI_Get_library_version");
			dlclose(h); /* drops the reference NOLOAD took; the library stays */
		}
	}
	if (!sym)
		return json_null();
	memcpy(&get, &sym, sizeof(get));
	if (get(v, &vlen) != 0 || vlen <= 0 || vlen >= (int)sizeof(v))
		return json_null();
	v[vlen] = '\0';
	if (!(p = strstr(v, "Device:")))
		return json_null();
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	snprintf(dev, sizeof(dev), "%.*s", (int)strcspn(p, " \t\r\n"), p);
	return dev[0] ? json_string(dev) : json_null();
}

static json_t *versions(const struct ng_manifest_in *in)
{
	const char *plus = strchr(NG_VERSION, '+');
	char mpi[128] = "";

	if (in->mpi)
		snprintf(mpi, sizeof(mpi), "%.*s", (int)strcspn(in->mpi, "\n"), in->mpi);
	return json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:s}", "ngauge", NG_VERSION, "commit",
	                 plus ? json_string(plus + 1) : json_null(), "libibverbs",
	                 lib_version("libibverbs.so."), "libfabric", fabric_version(), "libfabric_provider",
	                 fabric_provider(in->device), "mpi", mpi[0] ? json_string(mpi) : json_null(),
	                 "mpi_device", mpi_device(in->mpi), "compiler",
#if defined(__clang__)
	                 "clang " __clang_version__
#elif defined(__GNUC__)
	                 "gcc " __VERSION__
#else
	                 "unknown"
#endif
	);
}

/* ---- the collective ---- */

void ng_manifest_free(struct ng_manifest *m)
{
	json_decref(m->hosts);
	ng_results_text_free(&m->ranks);
	json_decref(m->versions);
	json_decref(m->warnings);
	memset(m, 0, sizeof(*m));
}

/* Marks in @all[0..n) the first rank of each host. */
static ng_status first_of_hosts(struct ng_manifest_rank *all, size_t n)
{
	size_t *hosts = calloc(n ? n : 1, sizeof(*hosts)), nh = 0;

	if (!hosts) {
		ng_error("out of memory");
		return NG_ERR_NOMEM;
	}
	for (size_t j = 0; j < n; j++) {
		size_t h = nh;

		if (nh && !strcmp(all[hosts[nh - 1]].host, all[j].host))
			h = nh - 1;
		for (size_t k = 0; h == nh && k < nh; k++)
			if (!strcmp(all[hosts[k]].host, all[j].host))
				h = k;
		all[j].first = h == nh;
		if (h == nh)
			hosts[nh++] = j;
	}
	free(hosts);
	return NG_OK;
}

ng_status ng_manifest_gather(struct ng_boot *boot, const struct ng_manifest_in *in, struct ng_manifest *m_p)
{
	size_t n = (size_t)boot->size, maxlen = 0;
	struct ng_manifest_rank mine, *all = calloc(n, sizeof(*all));
	int64_t len, *lens = calloc(n, sizeof(*lens));
	char *text = NULL, *texts = NULL;
	ng_status st;

	memset(m_p, 0, sizeof(*m_p));
	if (!all || !lens) {
		ng_error("out of memory");
		st = NG_ERR_NOMEM;
		goto out;
	}
	rank_fill(boot, in->spins, &mine);
	st = ng_boot_allgather(boot, &mine, sizeof(mine), all);
	if (st)
		goto out;
	/* A peer's strings end inside their fields before they are compared
	 * or written (base/peer.h). */
	for (size_t j = 0; j < n; j++) {
		if (!ng_peer_str(all[j].host, sizeof(all[j].host))) {
			st = ng_peer_bad("host name", (int)j, "not terminated within 64 bytes");
			goto out;
		}
		(void)ng_peer_str(all[j].governor, sizeof(all[j].governor));
		(void)ng_peer_str(all[j].siblings, sizeof(all[j].siblings));
	}
	/* The first rank of each host: compared with the hosts seen so far
	 * (O(ranks x hosts), not O(ranks^2): a rank's host is most often its
	 * predecessor's, looked at first). */
	st = first_of_hosts(all, n);
	if (st)
		goto out;
	mine.first = all[boot->rank].first;
	/* The first rank of each host describes it, as JSON text. */
	if (mine.first) {
		json_t *h = host_json(mine.host, in->device);

		text = json_dumps(h, JSON_COMPACT);
		json_decref(h);
	}
	len = text ? (int64_t)strlen(text) + 1 : 0;
	st = ng_boot_allgather(boot, &len, sizeof(len), lens);
	if (st)
		goto out;
	/* Each host text's length bounded before it sizes the exchange: a
	 * peer's -1 or 2^63 would wrap maxlen + 1. */
	for (size_t j = 0; j < n; j++) {
		size_t l;

		st = ng_peer_slen("host text length", (int)j, lens[j], 0, NG_MANIFEST_HOST_MAX, &l);
		if (st)
			goto out;
		maxlen = l > maxlen ? l : maxlen;
	}
	{
		char *pad = calloc(1, maxlen + 1);

		texts = calloc(n, maxlen + 1);
		if (!pad || !texts) {
			free(pad);
			ng_error("out of memory");
			st = NG_ERR_NOMEM;
			goto out;
		}
		if (text)
			memcpy(pad, text, (size_t)len);
		st = ng_boot_allgather(boot, pad, maxlen + 1, texts);
		free(pad);
		if (st)
			goto out;
	}
	if (boot->rank != 0)
		goto out;
	m_p->hosts = json_array();
	m_p->warnings = json_array();
	m_p->versions = versions(in);
	for (size_t j = 0; j < n; j++) {
		/* a rank's placement as text (a tree per rank would hold about a
		 * kilobyte each on rank 0 until the run ends) */
		st = ng_results_text_add(&m_p->ranks, rank_json((int)j, &all[j]));
		if (st) {
			ng_manifest_free(m_p);
			goto out;
		}
		if (lens[j] > 0) {
			/* the text ends at its length (each padded block has a NUL after maxlen bytes) */
			json_t *h = json_loadb(texts + j * (maxlen + 1),
			                       strnlen(texts + j * (maxlen + 1), maxlen), 0, NULL);

			json_array_append_new(m_p->hosts, h ? h : json_pack("{s:s}", "host", all[j].host));
		}
	}
	ng_manifest_check(m_p, in, all, n);
out:
	free(text);
	free(texts);
	free(lens);
	free(all);
	return st;
}
