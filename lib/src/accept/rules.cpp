// The rules one attempt is judged by: status, bandwidth and latency limits, counters that must
// stay zero, and the fleet outlier rule (median and scaled MAD over all pairs).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "detail.hpp"
#include "judge_parts.hpp"

namespace fabench::accept::detail {

namespace {

// MAD x 1.4826 estimates the standard deviation of normal noise (1 / Phi^-1(3/4)).
constexpr double kMadToSigma = 1.4826;

double metric_value(const Attempt& at, Metric m) {
  switch (m) {
    case Metric::kBwAToB: return at.bw_a_to_b_gbps;
    case Metric::kBwBToA: return at.bw_b_to_a_gbps;
    case Metric::kBwBidir: return at.bw_bidir_gbps;
    case Metric::kLatP50: return at.lat_p50_us;
  }
  return kNotMeasured;
}

bool higher_is_worse(Metric m) { return m == Metric::kLatP50; }

// Median of `v` (reordered); the mean of the two middle values for an even count.
double median_of(std::vector<double>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double hi = *mid;
  if (v.size() % 2 == 1) return hi;
  return (*std::max_element(v.begin(), mid) + hi) / 2;
}

FleetStat fleet_stat(const Spec& spec, std::span<const PairResult> results, Metric m) {
  std::vector<double> values;
  values.reserve(results.size());
  for (const auto& r : results) {
    const Attempt& last = r.attempts.back();
    const double v = metric_value(last, m);
    if (last.status == Status::kOk && !std::isnan(v)) values.push_back(v);
  }
  FleetStat f;
  f.count = values.size();
  if (values.empty()) return f;
  f.median = median_of(values);
  for (double& v : values) v = std::abs(v - f.median);
  f.mad = kMadToSigma * median_of(values);
  if (spec.outlier_k > 0 && f.count >= kMinFleetPairs) {
    const double margin = std::max(spec.outlier_k * f.mad, spec.outlier_min_fraction * std::abs(f.median));
    f.threshold = higher_is_worse(m) ? f.median + margin : f.median - margin;
  }
  return f;
}

std::string direction(std::span<const Node> nodes, Pair p, Metric m) {
  const auto a = short_name(nodes, p.a);
  const auto b = short_name(nodes, p.b);
  switch (m) {
    case Metric::kBwAToB: return fmt::format("bandwidth {}->{}", a, b);
    case Metric::kBwBToA: return fmt::format("bandwidth {}->{}", b, a);
    case Metric::kBwBidir: return "bidirectional bandwidth";
    case Metric::kLatP50: return "latency p50";
  }
  return "";
}

using Flagged = std::array<bool, kMetrics>;  // measurements already below their absolute limit

Flagged check_limits(const Spec& spec, std::span<const Node> nodes, Pair p, const Attempt& at,
                     std::vector<Violation>& out) {
  Flagged flagged{};
  const double rate = pair_rate_gbps(spec, nodes, p);
  for (const Metric m : {Metric::kBwAToB, Metric::kBwBToA}) {
    const double v = metric_value(at, m);
    const double limit = spec.min_bw_fraction * rate;
    if (spec.min_bw_fraction > 0 && v < limit) {
      flagged[static_cast<std::size_t>(m)] = true;
      out.push_back({Rule::kBandwidth, fmt::format("{} {} Gb/s below {} Gb/s ({} x {} Gb/s)", direction(nodes, p, m),
                                                   num(v), num(limit), num(spec.min_bw_fraction), num(rate))});
    }
  }
  const double bidir_limit = spec.min_bidir_fraction * 2 * rate;
  if (spec.min_bidir_fraction > 0 && at.bw_bidir_gbps < bidir_limit) {
    flagged[static_cast<std::size_t>(Metric::kBwBidir)] = true;
    out.push_back(
        {Rule::kBidir, fmt::format("bidirectional bandwidth {} Gb/s below {} Gb/s ({} x 2 x {} Gb/s)",
                                   num(at.bw_bidir_gbps), num(bidir_limit), num(spec.min_bidir_fraction), num(rate))});
  }
  if (spec.max_p99_us > 0 && at.lat_p99_us > spec.max_p99_us) {
    out.push_back(
        {Rule::kLatency, fmt::format("latency p99 {} us above {} us", num(at.lat_p99_us), num(spec.max_p99_us))});
  }
  return flagged;
}

void check_counters(const Spec& spec, std::span<const Node> nodes, Pair p, const Attempt& at,
                    std::vector<Violation>& out) {
  for (const auto& name : spec.zero_counters) {
    for (const auto& [node, counters] : {std::pair{p.a, &at.counters_a}, std::pair{p.b, &at.counters_b}}) {
      const auto it = counters->find(name);
      if (it == counters->end() || it->second == 0) continue;
      out.push_back({Rule::kCounter, fmt::format("counter {} at {} moved by {:+} (must stay 0)", name,
                                                 short_name(nodes, node), it->second)});
    }
  }
}

void check_fleet(const Spec& spec, std::span<const Node> nodes, Pair p, const Attempt& at,
                 const std::array<FleetStat, kMetrics>& fleet, const Flagged& flagged, std::vector<Violation>& out) {
  for (std::size_t i = 0; i < kMetrics; ++i) {
    const auto m = static_cast<Metric>(i);
    const FleetStat& f = fleet[i];
    const double v = metric_value(at, m);
    // One line per measurement: one below its absolute limit is not reported again as an outlier.
    if (std::isnan(f.threshold) || std::isnan(v) || flagged[i]) continue;
    const bool worse = higher_is_worse(m) ? v > f.threshold : v < f.threshold;
    if (!worse) continue;
    const char* unit = m == Metric::kLatP50 ? "us" : "Gb/s";
    out.push_back(
        {Rule::kOutlier, fmt::format("{} {} {} {} the fleet's {} {} (median {} {} max({} x MAD {}, {} x median))",
                                     direction(nodes, p, m), num(v), unit, higher_is_worse(m) ? "above" : "below",
                                     num(f.threshold), unit, num(f.median), higher_is_worse(m) ? "+" : "-",
                                     num(spec.outlier_k), num(f.mad), num(spec.outlier_min_fraction))});
  }
}

}  // namespace

std::array<FleetStat, kMetrics> fleet_stats(const Spec& spec, std::span<const PairResult> results) {
  std::array<FleetStat, kMetrics> out;
  for (std::size_t i = 0; i < kMetrics; ++i) out[i] = fleet_stat(spec, results, static_cast<Metric>(i));
  return out;
}

std::vector<Violation> check_attempt(const Spec& spec, std::span<const Node> nodes, Pair p, const Attempt& at,
                                     const std::array<FleetStat, kMetrics>& fleet) {
  std::vector<Violation> out;
  if (at.status != Status::kOk) {
    out.push_back({Rule::kStatus,
                   fmt::format("{}: {}", status_name(at.status), at.reason.empty() ? "no reason given" : at.reason)});
  }
  const Flagged flagged = check_limits(spec, nodes, p, at, out);
  check_counters(spec, nodes, p, at, out);
  if (at.status == Status::kOk) check_fleet(spec, nodes, p, at, fleet, flagged, out);
  return out;
}

}  // namespace fabench::accept::detail
