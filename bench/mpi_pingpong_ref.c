/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_pingpong_ref: the smallest honest MPI ping-pong, the reference that
 * `ngauge -x mpi -p pingpong` is compared against.  It uses nothing of ngauge.
 *
 *   mpiexec -n 2 mpi_pingpong_ref SIZE COUNT [WARMUP]
 *
 * SIZE accepts K/M suffixes (binary).  Rank 0 sends SIZE bytes from its send
 * buffer with MPI_Send and receives the answer into a separate receive buffer;
 * rank 1 receives into its receive buffer and answers from its own send
 * buffer, or with REF_ECHO=same from the receive buffer (ngauge's
 * --pp-echo same).  The buffer use must be the pattern's, and it matters: on
 * this machine's shared-memory path, answering 64 KiB from the buffer just
 * received into costs 5-45% more than answering from another one.  WARMUP
 * untimed round trips (default COUNT/10, at least 10) are followed by a
 * barrier and COUNT timed ones.  Each round trip is timed on its own with
 * clock_gettime(CLOCK_MONOTONIC_RAW) (vDSO, the clock ngauge's "clock"
 * timer uses).  Rank 0 prints one line,
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
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref_common.h"

int main(int argc, char **argv)
{
	size_t size, count, warmup, i;
	double *samples = NULL;
	char *sbuf, *rbuf, *echo;
	int rank, nranks, peer, same = ref_echo_same();

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ref_pin(rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	if (argc < 3 || argc > 4 || ref_parse_size(argv[1], INT32_MAX, &size) ||
	    ref_parse_size(argv[2], INT32_MAX, &count) || count == 0 ||
	    (argc == 4 && ref_parse_size(argv[3], INT32_MAX, &warmup)) || nranks != 2 || same < 0) {
		if (rank == 0)
			fprintf(stderr,
			        "usage: [REF_ECHO=separate|same] mpiexec -n 2 %s SIZE COUNT [WARMUP]\n",
			        argv[0]);
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
	echo = same ? rbuf : sbuf;

	for (i = 0; i < warmup; i++) {
		if (rank == 0) {
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(echo, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
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
			MPI_Send(echo, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
	}

	if (rank == 0) {
		double median;

		median = ref_median(samples, count);
		printf("median_us %.4f\n", median);
	}
	free(samples);
	free(rbuf);
	free(sbuf);
	MPI_Finalize();
	return 0;
}
