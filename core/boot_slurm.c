/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the PMI bootstraps share: the Slurm job step this process is a task
 * of, and a rank's identity (host name, the address peers reach it at).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launch.h"

int ng_slurm_step_tasks(void)
{
	const char *n = getenv("SLURM_STEP_NUM_TASKS");

	if (!getenv("SLURM_STEP_ID") || !getenv("SLURM_PROCID"))
		return 0;
	if (!n || !*n)
		n = getenv("SLURM_NTASKS");
	return n && atoi(n) > 0 ? atoi(n) : 0;
}

bool ng_launched_by_mpiexec(void)
{
	/* Hydra (MPICH's mpiexec) and Open MPI's mpirun; inside an allocation
	 * they start their daemons with srun, whose step is not the ranks'. */
	return getenv("MPI_LOCALNRANKS") || getenv("OMPI_COMM_WORLD_SIZE");
}

static bool ipv4_is_loopback(const struct in_addr *a)
{
	return (ntohl(a->s_addr) >> 24) == 127;
}

/* First non-loopback IPv4 address the host name resolves to. */
static bool addr_from_name(const char *host, char *buf, size_t len)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res, *ai;
	bool found = false;

	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return false;
	for (ai = res; ai && !found; ai = ai->ai_next) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)ai->ai_addr;

		if (ai->ai_family != AF_INET || ipv4_is_loopback(&sin->sin_addr))
			continue;
		found = inet_ntop(AF_INET, &sin->sin_addr, buf, (socklen_t)len) != NULL;
	}
	freeaddrinfo(res);
	return found;
}

/* First IPv4 address of an interface that is up and not loopback. */
static bool addr_from_ifaces(char *buf, size_t len)
{
	struct ifaddrs *ifs, *i;
	bool found = false;

	if (getifaddrs(&ifs) != 0)
		return false;
	for (i = ifs; i && !found; i = i->ifa_next) {
		const struct sockaddr_in *sin;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		sin = (const struct sockaddr_in *)(const void *)i->ifa_addr;
		if (ipv4_is_loopback(&sin->sin_addr))
			continue;
		found = inet_ntop(AF_INET, &sin->sin_addr, buf, (socklen_t)len) != NULL;
	}
	freeifaddrs(ifs);
	return found;
}

void ng_boot_identity(struct ng_boot *b)
{
	if (gethostname(b->host, sizeof(b->host)) != 0)
		snprintf(b->host, sizeof(b->host), "localhost");
	b->host[sizeof(b->host) - 1] = '\0';

	if (addr_from_name(b->host, b->addr, sizeof(b->addr)))
		return;
	if (addr_from_ifaces(b->addr, sizeof(b->addr)))
		return;
	snprintf(b->addr, sizeof(b->addr), "127.0.0.1");
}
