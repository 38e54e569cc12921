// What a driver hands to judge(): the nodes (name and port rate) and, per measured pair, every
// attempt with its measurements, counter deltas and status. Units are in the names: Gb/s with
// G = 1e9 bits of payload per second; latencies in microseconds (half the round trip for write and
// send ping-pong, as fabench-lat reports). A measurement that was not taken is NaN and is judged
// by no rule; a counter that was not read is absent from the map.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fabench/accept/schedule.hpp"

namespace fabench::accept {

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

struct Node {
  std::string name;      // host name, "" when unknown
  double port_gbps = 0;  // active rate of the port under test (speed x width); 0 when unknown
};

enum class Status : std::uint8_t { kOk, kFailed, kTimeout };
[[nodiscard]] std::string_view status_name(Status s);  // "ok", "failed", "timeout"

struct Attempt {
  Status status = Status::kOk;
  std::string reason;  // why it failed or timed out; "" when ok
  std::uint32_t qps = 1;
  double duration_s = 0;  // wall time of the attempt, setup included
  // Unidirectional bandwidth each way (one direction at a time) and the sum of both directions
  // measured at the same time.
  double bw_a_to_b_gbps = kNotMeasured;
  double bw_b_to_a_gbps = kNotMeasured;
  double bw_bidir_gbps = kNotMeasured;
  double lat_p50_us = kNotMeasured;
  double lat_p99_us = kNotMeasured;
  double lat_max_us = kNotMeasured;
  // The one-way bandwidth per QP (lane), when more than one carried it: a spread across lanes
  // points at a path that hashes some flows onto a bad link. Empty when not measured.
  std::vector<double> lanes_a_to_b_gbps;
  std::vector<double> lanes_b_to_a_gbps;
  // Port counter deltas over the attempt (after - before), at node a's and node b's port.
  std::map<std::string, std::int64_t> counters_a;
  std::map<std::string, std::int64_t> counters_b;
};

struct PairResult {
  Pair pair;
  std::uint32_t round = 0;        // of the schedule the first attempt ran in
  std::vector<Attempt> attempts;  // in order; the last one is the one that counts
};

}  // namespace fabench::accept
