// The two roles of a fabench-ep session (protocol in world/driver.hpp).
#pragma once

#include "fabench/epbench/session.hpp"
#include "fabench/harness/report.hpp"

namespace fabench::epbench {

struct LeaderOptions {
  harness::Registration registration;
  double link_bytes_per_s = 0;  // for predicted_us (the port's rate)
  double wr_cost_s = 0;         // per posted WR
  double round_s = 0;           // per protocol round
};

// Rank 0: one Google Benchmark per EpBench. Returns the exit status.
int lead(Session& session, const LeaderOptions& options);
// Ranks 1..N-1: run rank 0's commands until goodbye. Returns the exit status.
int follow(Session& session);

}  // namespace fabench::epbench
