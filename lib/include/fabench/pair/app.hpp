// main() of the point-to-point benchmarks (fabench-lat, fabench-bw): the
// command line (options.hpp; Google Benchmark's --benchmark_* flags pass
// through untouched) and the three modes: server (no host), client (host),
// loopback (both ends in this process).
#pragma once

#include "fabench/pair/spec.hpp"

namespace fabench::pair {

// main() of fabench-lat (Kind::kLatency) and fabench-bw (Kind::kBandwidth).
int pair_main(int argc, char** argv, Kind kind);

}  // namespace fabench::pair
