// The Congestion Impact Factor (GPCNeT): how much worse a victim test does beside a congestor
// than alone. For a latency test CIF = loaded / isolated, for a bandwidth test isolated / loaded,
// so that > 1 is worse in both; computed for the mean and for the 99th-percentile tail (the
// slowest 1 % of latency samples, the lowest 1 % of bandwidth samples).
//
// Attribution: a victim's samples depend on its path, from its port to its ring successor's
// (congestbench: each victim tests toward its successor), so each path of a victim (one per
// ring order) is grouped under both of its ports. The paths that touch the congestors'
// receiving port (the incast target's) are reported apart from the others, and a port is named
// hot when the median CIF of the paths through it exceeds `threshold` (2) and is at least
// `contrast` (2) x the median of the paths that avoid it, for the tail and for the mean alike
// (a congested queue slows every sample through it; one stray slow sample moves only a tail).
// Without such a contrast (or with no path that avoids it) no port is named.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace fabench::congest {

enum class Metric : std::uint8_t { kLatency, kBandwidth };

// A victim test's samples in one phase: the mean, the tails (the worse side for the metric).
struct Summary {
  std::uint64_t samples = 0;
  double mean = 0;
  double median = 0;
  double tail90 = 0;   // latency: p90; bandwidth: p10 (the worst 10 %)
  double tail99 = 0;   // latency: p99; bandwidth: p1 (the worst 1 %)
  double tail999 = 0;  // latency: p99.9; bandwidth: p0.1
};

struct Cif {
  double mean = 0;
  double tail99 = 0;
};

// UserError-free: empty samples give a Summary of zeros (samples = 0).
[[nodiscard]] Summary summarize(std::vector<double> samples, Metric metric);
// NaN where a phase has no samples or a zero figure (nothing to compare).
[[nodiscard]] Cif cif(Metric metric, const Summary& isolated, const Summary& loaded);

struct VictimCif {
  std::uint32_t rank = 0;
  std::string port;  // "rxe1/1": the device and port the victim's traffic uses
  Cif cif;
  std::string peer_port;  // the other end of its path ("": none, the path is its port alone)
  [[nodiscard]] bool touches(const std::string& p) const { return port == p || peer_port == p; }
};

struct Attribution {
  std::string hot_port;                // "" when no port stands out
  std::vector<std::uint32_t> behind;   // victims with a path through the congestors' receiving port(s)
  std::vector<std::uint32_t> elsewhere;  // victims with a path that avoids them (ascending, once each)
  double behind_tail99 = 0;            // median tail CIF of each group's paths (NaN when empty)
  double elsewhere_tail99 = 0;
};

[[nodiscard]] Attribution attribute(std::span<const VictimCif> victims, std::span<const std::string> receiving_ports,
                                    double threshold = 2.0, double contrast = 2.0);

// Counter deltas of one rank over a phase, by counter name.
using CounterDeltas = std::map<std::string, std::int64_t>;

// The ranks (index into `per_rank`) any of whose counters moved, ascending. The caller passes the
// counters that tell congestion and loss (harness::counter_kind: kError, kCongestion).
[[nodiscard]] std::vector<std::uint32_t> ranks_with_moved_counters(std::span<const CounterDeltas> per_rank);

}  // namespace fabench::congest
