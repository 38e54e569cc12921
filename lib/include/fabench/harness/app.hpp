// The common command line and main() of the point-to-point benchmarks
// (fabench-lat, fabench-bw): perftest's flags where the feature is the same,
// Google Benchmark's --benchmark_* flags passed through untouched, and the
// three modes: server (no host), client (host), loopback (both in-process).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabench/harness/spec.hpp"

namespace fabench::harness {

// "2,64,4K,1M" -> {2, 64, 4096, 1048576}. Throws std::invalid_argument.
[[nodiscard]] std::vector<std::uint64_t> parse_sizes(const std::string& text);
// "4G", "512M", "65536" -> bytes. Throws std::invalid_argument.
[[nodiscard]] std::uint64_t parse_bytes(const std::string& text);
// 2, 4, ..., 8 MiB: perftest's -a sweep.
[[nodiscard]] std::vector<std::uint64_t> all_sizes();

// main() of fabench-lat (Kind::kLatency) and fabench-bw (Kind::kBandwidth).
int bench_main(int argc, char** argv, Kind kind);

}  // namespace fabench::harness
