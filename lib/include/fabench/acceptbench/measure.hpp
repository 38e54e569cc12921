// One end of one pair's measurement in fabench-accept. Both ends run measure_pair() on a connected
// PairLink with the same PairPlan; they keep in step through in-band step messages (zero-length
// sends with immediate data on lane 0), so the pair needs no control connection of its own:
//
//   step 1  both ready
//   A -> B  writes of plan.bytes for plan.seconds over every lane, `depth` in flight per lane
//   step 2
//   B -> A  the same the other way
//   step 3
//   A <-> B both at once (bidirectional)
//   step 4
//   latency A pings B with 2-byte RDMA writes, B answers each: plan.lat_iters round trips
//   step 5  both done
//
// Each end reports only what it measured itself: the bandwidth it sent (one way and during the
// bidirectional phase), the latency (side A), the lane spread, and its own port counter deltas
// (read before step 1 and after step 5, outside every timed region). Every wait is bounded by
// plan.stall: a partner that dies, stops or loses its link leaves this end with status timeout
// (no completion or step message for that long) or failed (a work completion in error), and
// with every measurement taken before that kept.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fabench/accept/result.hpp"
#include "fabench/acceptbench/link.hpp"

namespace fabench::acceptbench {

struct PairPlan {
  double seconds = 1.0;            // per bandwidth phase
  std::uint32_t lat_iters = 1000;  // latency round trips (after 16 warm-up ones)
  std::chrono::milliseconds stall{30'000};
  double limit_s = 60;                    // the whole pair, from measure_pair's start: a slow but moving
                                          // partner (a link in a retry storm) cannot hold it longer
  std::uint32_t spin_before_yield = ~0U;  // empty polls before sched_yield() (0: ranks share cores)
  std::string partner;                    // "rank 3 (host-b)", for error lines
};

enum class Side : std::uint8_t { kA, kB };

// What one end measured, as an Attempt holding this end's fields only: side A fills
// bw_a_to_b_gbps, lanes_a_to_b_gbps, the latency and counters_a; side B bw_b_to_a_gbps,
// lanes_b_to_a_gbps and counters_b; each puts what it sent during the bidirectional phase in
// bw_bidir_gbps. It crosses to rank 0 as attempt_to_json (result_json.hpp). Never throws for what
// the partner or the fabric does; throws only for a local verbs error (a post this end's provider
// refuses).
[[nodiscard]] accept::Attempt measure_pair(PairLink& link, Side side, const PairPlan& plan, const std::string& device,
                                           std::uint8_t port);

// The two halves of one attempt, as judge() takes it: the status is the worse of the two (a
// timeout over a failure over ok; the reason names the side), measurements come from the side
// that took them, the bidirectional bandwidth is the sum of both sides' shares. `a` or `b` may be
// missing (its rank did not answer): the attempt is then a timeout giving `missing_reason`.
[[nodiscard]] accept::Attempt combine(const accept::Attempt* a, const accept::Attempt* b, std::uint32_t qps,
                                      double duration_s, const std::string& missing_reason);

}  // namespace fabench::acceptbench
