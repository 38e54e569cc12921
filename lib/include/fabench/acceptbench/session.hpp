// fabench-accept's session: the schedule's rounds as runs of the session protocol every N-rank
// binary speaks (world/driver.hpp), one PairJob run per round (job.hpp):
//
//   rank 0                                         every rank k
//   Command run {round, pairs}                  -> PairJob::prepare: a PairLink if k is in a pair
//                                               <- EndpointExchange {its endpoints}, Result ready
//   EndpointExchange {its partner's endpoints}  -> connect
//                                               <- Result connected
//   Command go                                  -> measure_pair() (a rank in no pair idles)
//                                               <- Result {its half, attempt_to_json}
//   ... Command bye                             -> exit 0
//
// Rank 0 measures its own pairs itself. Every gather has a deadline (--timeout for the set-up
// answers, the pair's limit for the halves) and the keepalive rule of the protocol; a rank that
// misses one, closes its connection or falls silent is lost from then on (keep_going): its pair
// reads "timeout" with the reason, and its later pairs are recorded as timeouts without running.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "fabench/accept/spec.hpp"
#include "fabench/acceptbench/job.hpp"
#include "fabench/ctrl/bootstrap.hpp"
#include "fabench/harness/context.hpp"

namespace fabench::acceptbench {

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

// Ranks 1..N-1: serve rank 0's runs until goodbye. Returns the exit status.
int follow(ctrl::Bootstrap& boot, const harness::Context& ctx, const RunSettings& settings);

}  // namespace fabench::acceptbench
