// Google Benchmark glue: one registration helper that always sets manual
// time (Google Benchmark's default, CPU time, misses the time spent waiting
// on the fabric and inside the kernel), the counters every fabench
// benchmark reports, and the fabric metadata put in the report context.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <benchmark/benchmark.h>

#include "fabench/harness/engines.hpp"
#include "fabench/harness/peer.hpp"
#include "fabench/harness/side.hpp"
#include "fabench/harness/stats.hpp"

namespace fabench::harness {

struct Registration {
  std::uint64_t iterations = 0;  // 0: Google Benchmark's adaptive count
  double min_time_s = 0;         // > 0: run for at least this long (duration mode)
};

// Registers `fn` under `name` with UseManualTime(), microsecond units and
// the iteration policy; every fabric benchmark goes through here.
benchmark::internal::Benchmark* register_fabric_benchmark(const std::string& name,
                                                          std::function<void(benchmark::State&)> fn,
                                                          const Registration& reg);

// Latency counters in microseconds from every sample (ns round trips);
// `half` divides by two (write/send ping-pong report one-way latency).
void set_latency_counters(benchmark::State& state, const Stats& rtt_ns, bool half);

// Bandwidth and message-rate counters from both ends' results. `bidir`:
// the follower's direction counts too.
void set_bandwidth_counters(benchmark::State& state, const RunResult& mine, const RunResult& theirs, bool bidir);

// Device, port, GID, host and peer facts as Google Benchmark context
// (printed in the console header and stored under "context" in JSON).
void add_fabric_context(const Context& ctx, const PeerInfo* peer, const std::string& mode);

// "6.1.0-57-amd64", from uname(2).
[[nodiscard]] std::string kernel_release();

}  // namespace fabench::harness
