// Google Benchmark glue shared by every binary: one registration helper that
// always sets manual time (Google Benchmark's default, CPU time, misses the
// time spent waiting on the fabric and inside the kernel), the latency
// counters, and the device facts put in the report context. What a mode adds
// of its own (a pair's bandwidth counters and peer facts) lives with the mode.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <benchmark/benchmark.h>

#include "fabench/harness/context.hpp"
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

// This host's device, port, GID, kernel and rdma-core as Google Benchmark
// context (printed in the console header and stored under "context" in
// JSON), plus the fabench version and `mode` ("client", "loopback", ...).
void add_fabric_context(const Context& ctx, const std::string& mode);
// What a run on no device records of its host (version, mode, host, kernel).
void add_host_context(const std::string& mode);

// "6.1.0-57-amd64", from uname(2).
[[nodiscard]] std::string kernel_release();

}  // namespace fabench::harness
