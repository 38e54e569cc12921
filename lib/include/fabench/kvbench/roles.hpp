// The two roles of a fabench-kv session (protocol in world/driver.hpp).
#pragma once

#include <cstdint>
#include <optional>

#include "fabench/harness/report.hpp"
#include "fabench/kvbench/session.hpp"

namespace fabench::kvbench {

struct LeaderOptions {
  harness::Registration registration;
  double link_bytes_per_s = 0;  // for predicted_us (the port's rate)
  double wr_cost_s = 0;         // per posted WR, for predicted_us
  std::optional<double> prefill_tokens_per_s;  // --prefill-tps: a request prefills in isl / tps
  std::optional<double> ttft_s;                // --ttft-ms
};

// What every rank measured in one run, combined: per iteration and per
// request the slowest initiator (a request is whole when its last rank is).
struct Combined {
  std::vector<double> iteration_seconds;  // n
  std::vector<double> request_seconds;    // n x batch
  std::uint64_t wrs = 0;                  // per iteration, all ranks
  std::uint64_t bytes = 0;                // per iteration, all ranks
  std::uint64_t wrong_pages = 0;
};
[[nodiscard]] Combined combine(const std::vector<TransferResult>& ranks);

// Bytes per WR at which the sweep first reaches `fraction` of its best rate;
// 0 when it never does. `points` are (bytes per WR, GB/s), any order.
[[nodiscard]] std::uint64_t knee(std::vector<std::pair<std::uint64_t, double>> points, double fraction);

// Rank 0: one Google Benchmark per KvBench. Returns the exit status.
int lead(Session& session, const LeaderOptions& options);
// Ranks 1..N-1: execute rank 0's commands until goodbye. Returns the exit status.
int follow(Session& session);

}  // namespace fabench::kvbench
