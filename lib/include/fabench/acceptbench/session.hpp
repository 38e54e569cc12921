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

#include <string>
#include <vector>

#include "fabench/accept/result.hpp"
#include "fabench/accept/schedule.hpp"
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

// Every rank at set-up, before its PairJob: the nodes by rank, named from every rank's host
// and device (one allgather).
[[nodiscard]] std::vector<accept::Node> gather_nodes(ctrl::Bootstrap& boot, const harness::Context& ctx);

// Rank 0: runs `schedule` over the driver of the session (the PairJob's), judges, writes the
// reports. Returns the exit status (0 accepted).
int lead(world::Leader& driver, ctrl::Bootstrap& boot, const harness::Context& ctx, const accept::Spec& spec,
         const RunSettings& settings, const LeadOutputs& outputs, const std::vector<accept::Node>& nodes,
         const accept::Schedule& schedule);

}  // namespace fabench::acceptbench
