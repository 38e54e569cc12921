/* mpi_ep: the MPI library's MPI_Alltoallv moving the per-destination counts of one fabench-ep
 * benchmark, dispatch then combine, as the yardstick of bench/compare/ep.sh (built there with
 * mpicc; not part of the CMake build).
 *
 *   mpi_ep --counts FILE --dispatch-bytes D --combine-bytes C [-n ITERS] [-w WARMUP] [--label S]
 *
 * FILE: N lines of N integers, line s = the copies rank s sends rank d in one dispatch
 * (fabench-ep --plan --plan-copies prints them). One call: MPI_Barrier, then MPI_Alltoallv of
 * copies x D bytes per destination (dispatch), then MPI_Alltoallv of copies x C bytes back
 * (combine), each timed on every rank; a call's dispatch and combine times are the slowest
 * rank's, as fabench-ep's. Rank 0 prints one JSON line:
 *   {"label", "ranks", "iters", "dispatch_us" (p50), "combine_us" (p50), "dispatch_p99_us",
 *    "combine_p99_us", "mean_us" (mean of dispatch + combine), "fabric_bytes" (all ranks, both
 *    ways, a rank's own copies left out), "wrong"}
 * The last call's received bytes are checked against the pattern every sender wrote. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pat(int phase, int s, int d, size_t j) {
  return (unsigned char)(phase * 101 + s * 31 + d * 7 + (int)(j % 251));
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int i = (int)(p * (n - 1) + 0.5);
  return v[i];
}

static void die0(int rank, const char *msg) {
  if (rank == 0) fprintf(stderr, "mpi_ep: %s\n", msg);
  MPI_Finalize();
  exit(2);
}

/* Byte counts and displacements of one way: send[d] = copies[me][d] x B, recv[s] = copies[s][me] x B. */
static void counts_of(const long *copies, int n, int me, long per, int *sc, int *sd, int *rc, int *rd) {
  long so = 0, ro = 0;
  for (int q = 0; q < n; ++q) {
    const long s = copies[(size_t)me * n + q] * per, r = copies[(size_t)q * n + me] * per;
    if (s > 0x7fffffffL || r > 0x7fffffffL || so + s > 0x7fffffffL || ro + r > 0x7fffffffL) {
      fprintf(stderr, "mpi_ep: rank %d: over 2 GiB in one MPI_Alltoallv (int counts); fewer tokens\n", me);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    sc[q] = (int)s, sd[q] = (int)so, rc[q] = (int)r, rd[q] = (int)ro;
    so += s, ro += r;
  }
}

static void fill(unsigned char *buf, const int *cnt, const int *dsp, int n, int phase, int me) {
  for (int d = 0; d < n; ++d)
    for (int j = 0; j < cnt[d]; ++j) buf[dsp[d] + j] = pat(phase, me, d, (size_t)j);
}

static long long check(const unsigned char *buf, const int *cnt, const int *dsp, int n, int phase, int me) {
  long long wrong = 0;
  for (int s = 0; s < n; ++s)
    for (int j = 0; j < cnt[s]; ++j) wrong += buf[dsp[s] + j] != pat(phase, s, me, (size_t)j);
  return wrong;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const char *file = NULL, *label = "mpi";
  long D = 0, C = 0;
  int iters = 20, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--counts")) file = argv[i + 1];
    else if (!strcmp(argv[i], "--dispatch-bytes")) D = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--combine-bytes")) C = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--label")) label = argv[i + 1];
    else die0(rank, "usage: mpi_ep --counts FILE --dispatch-bytes D --combine-bytes C [-n ITERS] [-w WARMUP] [--label S]");
  }
  if (!file || D <= 0 || C <= 0 || iters < 1 || warmup < 0) die0(rank, "need --counts FILE, --dispatch-bytes > 0, --combine-bytes > 0, -n >= 1");
  long *copies = calloc((size_t)n * n, sizeof *copies);
  FILE *f = fopen(file, "r");
  if (!f || !copies) die0(rank, "cannot read --counts");
  for (size_t i = 0; i < (size_t)n * n; ++i)
    if (fscanf(f, "%ld", &copies[i]) != 1) die0(rank, "--counts: fewer than N x N integers (N = the ranks launched)");
  fclose(f);

  int *dsc = malloc(4 * n * sizeof(int)), *csc = malloc(4 * n * sizeof(int));
  int *dsd = dsc + n, *drc = dsc + 2 * n, *drd = dsc + 3 * n;
  int *csd = csc + n, *crc = csc + 2 * n, *crd = csc + 3 * n;
  counts_of(copies, n, rank, D, dsc, dsd, drc, drd);      /* dispatch: to the experts' ranks */
  counts_of(copies, n, rank, C, crc, crd, csc, csd);      /* combine: the same counts back */
  const size_t ds = (size_t)dsd[n - 1] + dsc[n - 1], dr = (size_t)drd[n - 1] + drc[n - 1];
  const size_t cs = (size_t)csd[n - 1] + csc[n - 1], cr = (size_t)crd[n - 1] + crc[n - 1];
  unsigned char *dsend = malloc(ds + 1), *drecv = malloc(dr + 1), *csend = malloc(cs + 1), *crecv = malloc(cr + 1);
  double *td = malloc(sizeof(double) * iters), *tc = malloc(sizeof(double) * iters);
  if (!dsend || !drecv || !csend || !crecv || !td || !tc) die0(rank, "out of memory");
  fill(dsend, dsc, dsd, n, 0, rank);
  fill(csend, csc, csd, n, 1, rank);

  for (int i = -warmup; i < iters; ++i) {
    if (i == iters - 1) {
      memset(drecv, 0, dr);
      memset(crecv, 0, cr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t[3];
    t[0] = MPI_Wtime();
    MPI_Alltoallv(dsend, dsc, dsd, MPI_BYTE, drecv, drc, drd, MPI_BYTE, MPI_COMM_WORLD);
    t[1] = MPI_Wtime();
    MPI_Alltoallv(csend, csc, csd, MPI_BYTE, crecv, crc, crd, MPI_BYTE, MPI_COMM_WORLD);
    t[2] = MPI_Wtime();
    double mine[2] = {t[1] - t[0], t[2] - t[1]}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (i >= 0) td[i] = most[0], tc[i] = most[1];
  }
  long long wrong = check(drecv, drc, drd, n, 0, rank) + check(crecv, crc, crd, n, 1, rank), wrong_all = 0;
  MPI_Reduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double mean = 0;
    for (int i = 0; i < iters; ++i) mean += td[i] + tc[i];
    mean /= iters;
    long long fabric = 0;
    for (int s = 0; s < n; ++s)
      for (int d = 0; d < n; ++d)
        if (s != d) fabric += copies[(size_t)s * n + d] * (D + C);
    const double d50 = pct(td, iters, 0.5), d99 = pct(td, iters, 0.99);
    const double c50 = pct(tc, iters, 0.5), c99 = pct(tc, iters, 0.99);
    printf("{\"label\":\"%s\",\"ranks\":%d,\"iters\":%d,\"dispatch_us\":%.3f,\"combine_us\":%.3f,\"dispatch_p99_us\":%.3f,"
           "\"combine_p99_us\":%.3f,\"mean_us\":%.3f,\"fabric_bytes\":%lld,\"wrong\":%lld}\n",
           label, n, iters, d50 * 1e6, c50 * 1e6, d99 * 1e6, c99 * 1e6, mean * 1e6, fabric, wrong_all);
    fflush(stdout);
  }
  MPI_Finalize();
  return wrong_all > 0 ? 3 : 0;
}
