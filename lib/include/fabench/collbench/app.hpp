// main() of fabench-coll: collectives across N ranks (all-reduce, all-gather,
// reduce-scatter, all-to-all) over RDMA writes with immediate, launched by
// mpirun, srun or fabench-launch (rank and size from their environment, no
// MPI library). Rank 0 drives Google Benchmark and prints; the others follow.
#pragma once

namespace fabench::collbench {

int coll_main(int argc, char** argv);

}  // namespace fabench::collbench
