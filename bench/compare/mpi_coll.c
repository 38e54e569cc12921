/* mpi_coll: the MPI library's own all-reduce and all-to-all, timed the way
 * nccl-tests does, as the yardstick for fabench-coll (bench/compare/coll.sh
 * builds it with mpicc; it is not part of the CMake build).
 *
 * For each size S (bytes, the full buffer of one rank) from -b to -e times -f:
 * warm up, agree on an iteration count (all ranks the same), MPI_Barrier,
 * time n calls, take the slowest rank's time (MPI_Reduce MAX) and print one
 * JSON line from rank 0:
 *   {"coll", "dtype", "requested_bytes", "bytes", "count", "iters", "time_us",
 *    "algbw_GBps", "busbw_GBps", "ranks", "transport", "wrong"}
 * where "bytes" is S rounded down to whole elements (for all-to-all to a
 * multiple of n, as nccl-tests does).
 * algbw = S / t, busbw = algbw * 2(n-1)/n (all-reduce) or (n-1)/n
 * (all-to-all), G = 1e9. The result of the last call is checked against the
 * known inputs; "wrong" counts the elements that differ on all ranks.
 * Only f32 (MPI_FLOAT): MPI has no standard bf16 type. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kAllReduce, kAllToAll };

struct Opts {
  uint64_t min_bytes, max_bytes;
  uint64_t factor;
  int colls[2], ncolls;
  int iters, warmup;
  double budget_s; /* per size: fewer iterations when n would take longer */
  const char *transport;
};

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpi_coll [-b MIN] [-e MAX] [-f FACTOR] [--coll allreduce,alltoall] [--dtype f32]\n"
          "                [-n ITERS] [-w WARMUP] [-T SECONDS] [--transport LABEL]\n"
          "  sizes in bytes with optional K/M/G (powers of 1024); defaults -b 4K -e 64M -f 4 -n 20 -w 5\n"
          "  -w: warm-up calls, at least 2 (a cold one, then one whose time sets the count)\n"
          "  -T: time budget per size (default 2 s): iterations are cut to fit it, at least 1\n"
          "  --transport: a label copied into every JSON line (default $MPI_COLL_TRANSPORT or \"unknown\")\n");
}

static int parse_bytes(const char *s, uint64_t *out) {
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return -1;
  switch (*end) {
    case 'k': case 'K': v <<= 10; ++end; break;
    case 'm': case 'M': v <<= 20; ++end; break;
    case 'g': case 'G': v <<= 30; ++end; break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return -1;
  *out = v;
  return 0;
}

/* Returns 0 to run, 1 to exit 0 (help), 2 for a usage error (message printed by rank 0). */
static int parse_args(int argc, char **argv, struct Opts *o, int rank) {
  o->min_bytes = 4096;
  o->max_bytes = 64u << 20;
  o->factor = 4;
  o->colls[0] = kAllReduce;
  o->ncolls = 1;
  o->iters = 20;
  o->warmup = 5;
  o->budget_s = 2.0;
  o->transport = getenv("MPI_COLL_TRANSPORT") ? getenv("MPI_COLL_TRANSPORT") : "unknown";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      if (rank == 0) usage(stdout);
      return 1;
    }
    if (!v) bad = 1;
    else if (!strcmp(a, "-b")) bad = parse_bytes(v, &o->min_bytes);
    else if (!strcmp(a, "-e")) bad = parse_bytes(v, &o->max_bytes);
    else if (!strcmp(a, "-f")) bad = parse_bytes(v, &o->factor) || o->factor < 2;
    else if (!strcmp(a, "-n")) bad = (o->iters = atoi(v)) < 1;
    else if (!strcmp(a, "-w")) bad = (o->warmup = atoi(v)) < 0;
    else if (!strcmp(a, "-T")) bad = (o->budget_s = atof(v)) <= 0;
    else if (!strcmp(a, "--transport")) o->transport = v;
    else if (!strcmp(a, "--dtype")) {
      if (strcmp(v, "f32") != 0) {
        if (rank == 0)
          fprintf(stderr, "mpi_coll: --dtype %s unsupported: only f32 (MPI has no standard bf16/fp16 type)\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--coll")) {
      char buf[256];
      snprintf(buf, sizeof buf, "%s", v);
      o->ncolls = 0;
      for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (o->ncolls == 2) { bad = 1; break; }
        if (!strcmp(t, "allreduce")) o->colls[o->ncolls++] = kAllReduce;
        else if (!strcmp(t, "alltoall")) o->colls[o->ncolls++] = kAllToAll;
        else bad = 1;
      }
      if (o->ncolls == 0) bad = 1;
    } else {
      if (rank == 0) { fprintf(stderr, "mpi_coll: unknown option '%s'\n", a); usage(stderr); }
      return 2;
    }
    if (bad) {
      if (rank == 0) { fprintf(stderr, "mpi_coll: bad value for %s: '%s'\n", a, v ? v : "(missing)"); usage(stderr); }
      return 2;
    }
    ++i;
  }
  if (o->min_bytes < 4 || o->max_bytes < o->min_bytes) {
    if (rank == 0) fprintf(stderr, "mpi_coll: need 4 <= -b <= -e\n");
    return 2;
  }
  return 0;
}

/* Inputs chosen so every sum is an exact small integer in float. */
static float ar_input(int rank, size_t i) { return (float)(rank + 1) + (float)(i % 7); }
static float ar_expect(int n, size_t i) { return (float)(n * (n + 1) / 2) + (float)(n * (int)(i % 7)); }
/* All-to-all: element j of the block rank `src` sends to rank `dst`. */
static float a2a_value(int src, int dst, size_t j) { return (float)(src * 256 + dst) + (float)(j % 13) * 65536.0f; }

static void fill(int coll, float *send, size_t count, int rank, int n) {
  if (coll == kAllReduce) {
    for (size_t i = 0; i < count; ++i) send[i] = ar_input(rank, i);
  } else {
    const size_t per = count / (size_t)n;
    for (int dst = 0; dst < n; ++dst)
      for (size_t j = 0; j < per; ++j) send[(size_t)dst * per + j] = a2a_value(rank, dst, j);
  }
}

static long long check(int coll, const float *recv, size_t count, int rank, int n) {
  long long wrong = 0;
  if (coll == kAllReduce) {
    for (size_t i = 0; i < count; ++i) wrong += recv[i] != ar_expect(n, i);
  } else {
    const size_t per = count / (size_t)n;
    for (int src = 0; src < n; ++src)
      for (size_t j = 0; j < per; ++j) wrong += recv[(size_t)src * per + j] != a2a_value(src, rank, j);
  }
  return wrong;
}

static void call(int coll, const float *send, float *recv, size_t count, int n) {
  if (coll == kAllReduce) MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  else MPI_Alltoall(send, (int)(count / (size_t)n), MPI_FLOAT, recv, (int)(count / (size_t)n), MPI_FLOAT, MPI_COMM_WORLD);
}

/* Seconds of one call, the slowest rank's, the same on every rank. */
static double timed_call(int coll, const float *send, float *recv, size_t count, int n) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  call(coll, send, recv, count, n);
  t = MPI_Wtime() - t;
  double tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

static long long run_size(int coll, uint64_t bytes, const struct Opts *o, int rank, int n, float *send, float *recv) {
  /* All-to-all needs the buffer split evenly: count a multiple of n. */
  size_t count = (size_t)(bytes / sizeof(float));
  if (coll == kAllToAll) count -= count % (size_t)n;
  if (count == 0) {
    if (rank == 0)
      printf("{\"coll\":\"%s\",\"bytes\":%llu,\"ranks\":%d,\"skipped\":\"buffer smaller than one float per rank\"}\n",
             coll == kAllReduce ? "allreduce" : "alltoall", (unsigned long long)bytes, n);
    return 0;
  }
  const uint64_t S = (uint64_t)count * sizeof(float);
  fill(coll, send, count, rank, n);
  memset(recv, 0, count * sizeof(float));

  /* Warm-up. The first call pays for lazy connection set-up (UCX wires up
   * on first use); the second estimates the cost, so a slow transport (an
   * emulated VM) is not asked for 20 x 64 MiB. */
  call(coll, send, recv, count, n);
  const double est = timed_call(coll, send, recv, count, n);
  int warm = o->warmup - 2;
  if (est > 0 && warm > 0 && (double)warm * est > o->budget_s / 4) warm = (int)(o->budget_s / 4 / est);
  for (int i = 0; i < warm; ++i) call(coll, send, recv, count, n);
  int iters = o->iters;
  if (est > 0 && (double)iters * est > o->budget_s) iters = (int)(o->budget_s / est);
  if (iters < 1) iters = 1;

  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; ++i) call(coll, send, recv, count, n);
  t = (MPI_Wtime() - t) / iters;
  double tmax = 0;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  long long wrong = check(coll, recv, count, rank, n), wrong_all = 0;
  MPI_Reduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

  if (rank == 0) {
    const double algbw = (double)S / tmax / 1e9;
    const double factor = coll == kAllReduce ? 2.0 * (n - 1) / n : (double)(n - 1) / n;
    printf("{\"coll\":\"%s\",\"dtype\":\"f32\",\"requested_bytes\":%llu,\"bytes\":%llu,\"count\":%zu,\"iters\":%d,\"time_us\":%.3f,"
           "\"algbw_GBps\":%.6f,\"busbw_GBps\":%.6f,\"ranks\":%d,\"transport\":\"%s\",\"wrong\":%lld}\n",
           coll == kAllReduce ? "allreduce" : "alltoall", (unsigned long long)bytes, (unsigned long long)S, count, iters, tmax * 1e6, algbw,
           algbw * factor, n, o->transport, wrong_all);
    fflush(stdout);
  }
  return wrong_all;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  struct Opts o;
  const int parsed = parse_args(argc, argv, &o, rank);
  if (parsed != 0) {
    MPI_Finalize();
    return parsed == 1 ? 0 : 2;
  }
  float *send = malloc(o.max_bytes + sizeof(float));
  float *recv = malloc(o.max_bytes + sizeof(float));
  if (!send || !recv) {
    fprintf(stderr, "mpi_coll: rank %d: cannot allocate 2 x %llu bytes\n", rank, (unsigned long long)o.max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long long any_wrong = 0;
  for (int c = 0; c < o.ncolls; ++c) {
    for (uint64_t s = o.min_bytes; s <= o.max_bytes; s *= o.factor) {
      any_wrong += run_size(o.colls[c], s, &o, rank, n, send, recv);
      if (s > o.max_bytes / o.factor) break; /* no overflow past max */
    }
  }
  free(send);
  free(recv);
  MPI_Finalize();
  if (any_wrong > 0) {  /* rank 0 knows the total */
    fprintf(stderr, "mpi_coll: %lld wrong elements\n", any_wrong);
    return 3;
  }
  return 0;
}
