// The two roles of a fabench-coll session (protocol in session.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "fabench/collbench/session.hpp"
#include "fabench/harness/report.hpp"

namespace fabench::collbench {

struct LeaderOptions {
  harness::Registration registration;
  bool measured_auto = true;  // --algo auto picks the best measured algorithm when all were measured
  std::uint64_t warmup_calls = 2;  // untimed calls before a benchmark's first timed batch (-w)
};

// Rank 0: registers one Google Benchmark per spec, runs them, says goodbye.
// Returns the process exit status (non-zero when a benchmark failed or found wrong data).
int lead(Session& session, const LeaderOptions& options);

// Ranks 1..N-1: execute rank 0's commands until goodbye. Returns the exit status.
int follow(Session& session);

}  // namespace fabench::collbench
