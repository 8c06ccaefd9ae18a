/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_pingpong_ref: the smallest honest MPI ping-pong, the reference that
 * `ngauge -x mpi -p pingpong` is compared against.  It uses nothing of ngauge.
 *
 *   mpiexec -n 2 mpi_pingpong_ref SIZE COUNT [WARMUP]
 *
 * SIZE accepts K/M suffixes (binary).  Rank 0 sends SIZE bytes from its send
 * buffer with MPI_Send and receives the answer into a separate receive buffer;
 * rank 1 receives into one buffer and echoes it from there.  That is exactly
 * the buffer use of ngauge's pingpong pattern, and it matters: on this
 * machine's shared-memory path, receiving 64 KiB into the buffer just sent
 * from costs about 25% more than using two.  WARMUP untimed round trips (default COUNT/10,
 * at least 10) are followed by a barrier and COUNT timed ones.  Each round trip
 * is timed on its own with clock_gettime(CLOCK_MONOTONIC_RAW) (vDSO, the clock
 * ngauge's "clock" timer uses).  Rank 0 prints one line,
 *
 *   median_us X
 *
 * the median half round-trip time in microseconds (mean of the two middle
 * values for an even COUNT, as GSL defines it).  Buffers are page aligned and
 * zeroed, like the ones the pattern gets from the mpi module's alloc().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CLOCK_MONOTONIC_RAW when built on its own with -std=c11 */
#endif
#include <mpi.h>
#include <stdint.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int ref_parse_size(const char *s, size_t *out_p)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end || v > 0x7fffffffull)
		return -1;
	*out_p = (size_t)v;
	return 0;
}

static int ref_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static inline uint64_t ref_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* REF_PIN="A,B": the process of role r (0: timing side, 1: echo side) runs
 * on CPU number r of the list only, as `ngauge --pin A,B` places rank r. */
static void ref_pin(int role)
{
	const char *s = getenv("REF_PIN");
	cpu_set_t set;
	int cpu = -1;

	for (int r = 0; s && *s; r++) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s)
			return;
		if (r == role)
			cpu = (int)v;
		s = *end == ',' ? end + 1 : end;
	}
	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("REF_PIN");
}

int main(int argc, char **argv)
{
	size_t size, count, warmup, i;
	double *samples = NULL;
	char *sbuf, *rbuf;
	int rank, nranks, peer;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ref_pin(rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	if (argc < 3 || argc > 4 || ref_parse_size(argv[1], &size) || ref_parse_size(argv[2], &count) ||
	    count == 0 || (argc == 4 && ref_parse_size(argv[3], &warmup)) || nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpiexec -n 2 %s SIZE COUNT [WARMUP]\n", argv[0]);
		MPI_Finalize();
		return 2;
	}
	if (argc < 4)
		warmup = count / 10 < 10 ? 10 : count / 10;

	sbuf = aligned_alloc(4096, (size + 4095) / 4096 * 4096 + 4096);
	rbuf = aligned_alloc(4096, (size + 4095) / 4096 * 4096 + 4096);
	if (rank == 0)
		samples = malloc(count * sizeof(*samples));
	if (!sbuf || !rbuf || (rank == 0 && !samples)) {
		fprintf(stderr, "mpi_pingpong_ref: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(sbuf, 0, size);
	memset(rbuf, 0, size);
	peer = 1 - rank;

	for (i = 0; i < warmup; i++) {
		if (rank == 0) {
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(rbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);

	if (rank == 0) {
		for (i = 0; i < count; i++) {
			uint64_t t0 = ref_now_ns();

			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			samples[i] = (double)(ref_now_ns() - t0) * 1e-3 / 2;
		}
	} else {
		for (i = 0; i < count; i++) {
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(rbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
	}

	if (rank == 0) {
		double median;

		qsort(samples, count, sizeof(*samples), ref_cmp);
		median = count % 2 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2;
		printf("median_us %.4f\n", median);
	}
	free(samples);
	free(rbuf);
	free(sbuf);
	MPI_Finalize();
	return 0;
}
