// fabench-coll's command line: the flags and the benchmarks they ask for.
// Separate from main() so that tests can drive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabench/collbench/session.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::collbench {

struct Cli {
  harness::DeviceFlags dev;
  std::string min_bytes = "1K";
  std::string max_bytes = "4M";
  std::uint32_t factor = 4;
  std::string sizes;
  std::string colls = "allreduce";
  std::string algos = "ring";
  std::string a2a_algos = "pairwise";
  std::string dtypes = "f32";
  std::string op = "sum";
  std::uint64_t iters = 0;
  double duration_s = 0;
  world::RankFlags ranks;
  std::uint32_t pipeline = 0;  // 0: chosen per size (auto_pipeline_chunks)
  double alpha_us = -1;           // < 0: the transport's default (10 us RDMA, 1 us shm)
  std::string transport = "rdma";  // rdma or shm
  std::string compute = "full";    // full or none
  std::uint32_t reduce_threads = 1;
  std::uint64_t warmup = 2;  // -w: untimed calls before each benchmark (one per call parity)
  bool range_given = false;  // -b or -e was on the command line (add_options sets it)
};

void add_options(CLI::App& app, Cli& c);
// -s's list, else -b..-e multiplied by -f. UsageError (one line) when -b/-e
// do not make a range; std::invalid_argument for a size that does not parse.
[[nodiscard]] std::vector<std::uint64_t> buffer_sizes(const Cli& c);
// The benchmarks, in run order: per collective, dtype and size, the measured
// algorithms, then auto. UsageError (one line) for bad values and
// contradictions (-n with -D, -s with -b/-e).
[[nodiscard]] std::vector<CollSpec> build_specs(const Cli& c);
// --transport: UsageError naming the choices for anything but rdma and shm.
[[nodiscard]] TransportKind transport_of(const Cli& c);

}  // namespace fabench::collbench
