// fabench-accept's control protocol over Bootstrap's channels (a star around rank 0), written so
// that a rank that dies or stops costs only its own pairs:
//
//   rank 0                                         rank k (in a pair of this round)
//   Command setup {partner, side, pair settings} -> builds a PairLink
//                                                <- Result {endpoints}
//   Command run {partner's endpoints}            -> connects, measure_pair()
//                                                <- Result {its half, attempt_to_json}
//   Command idle (ranks in no pair this round)   -> (no answer; keeps its wait bounded)
//   ... Goodbye                                  -> exit 0
//
// Rank 0 measures its own pairs itself. Every collection has a deadline; a rank that misses it or
// closes its connection is dead from then on: its pair reads "timeout" with the reason, and its
// later pairs are recorded as timeouts without running. Followers bound their wait for the next
// command by the longest a round can take.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fabench/accept/spec.hpp"
#include "fabench/acceptbench/link.hpp"
#include "fabench/acceptbench/measure.hpp"
#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/context.hpp"

namespace fabench::acceptbench {

struct RunSettings {
  LinkOptions link;
  PairPlan plan;
  double pair_s = 0;          // a pair's planned length (for the printed bound)
  double pair_timeout_s = 0;  // its hard limit, from the moment rank 0 says run
  double setup_s = 0;         // limit on a round's setup answers
};

struct LeadOutputs {
  std::string json_path;
  std::string junit_path;
  std::string pairs_file;  // --pairs, or empty
  std::string schedule;    // "round-robin" or "bisection"
};

// Rank 0: runs the schedule, judges, writes the reports. Returns the exit status (0 accepted).
// `make_schedule(names)` builds the schedule once the node names are known.
int lead(ctrl::Bootstrap& boot, const harness::Context& ctx, const accept::Spec& spec, const RunSettings& settings,
         const LeadOutputs& outputs,
         const std::function<accept::Schedule(const std::vector<std::string>&)>& make_schedule);

// Ranks 1..N-1: serve rank 0's commands until goodbye. Returns the exit status.
int follow(ctrl::Bootstrap& boot, const harness::Context& ctx, const RunSettings& settings);

}  // namespace fabench::acceptbench
