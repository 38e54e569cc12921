// judge(): input checks, per-attempt and per-pair verdicts, the retest list and the counts; the
// names of statuses, rules, verdicts and labels.
#include "fabench/accept/judge.hpp"

#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "detail.hpp"
#include "fabench/accept/error.hpp"
#include "judge_parts.hpp"

namespace fabench::accept {

namespace {

void check_input(const Spec& spec, std::span<const Node> nodes, std::span<const PairResult> results) {
  validate(spec);
  const std::size_t n = nodes.size();
  if (n < 2 || n > kMaxNodes) throw AcceptError(fmt::format("results: node count {} is outside 2..{}", n, kMaxNodes));
  const bool needs_rate = spec.port_gbps == 0 && (spec.min_bw_fraction > 0 || spec.min_bidir_fraction > 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    const double r = nodes[i].port_gbps;
    if (!std::isfinite(r) || r < 0 || (needs_rate && r == 0)) {
      throw AcceptError(
          fmt::format("results: {} has no port rate (got {}); set port_gbps in the spec", node_label(nodes, i), r));
    }
  }
  std::unordered_set<std::uint64_t> seen;
  seen.reserve(results.size());
  for (const auto& r : results) {
    const Pair p = r.pair;
    if (p.a >= n || p.b >= n || p.a == p.b) {
      throw AcceptError(fmt::format("results: pair {} {} is not two distinct nodes of 0..{}", p.a, p.b, n - 1));
    }
    if (!seen.insert(detail::pair_key(p.a, p.b)).second) {
      throw AcceptError(fmt::format("results: pair {} {} appears twice", p.a, p.b));
    }
    if (r.attempts.empty()) throw AcceptError(fmt::format("results: pair {} {} has no attempt", p.a, p.b));
  }
}

Verdict verdict_of(const PairVerdict& v) {
  if (!v.attempts.back().empty()) return Verdict::kFail;
  return v.attempts.front().empty() ? Verdict::kPass : Verdict::kFlaky;
}

}  // namespace

Judgement judge(const Spec& spec, std::span<const Node> nodes, std::span<const PairResult> results) {
  check_input(spec, nodes, results);
  Judgement j;
  j.fleet = detail::fleet_stats(spec, results);
  j.pairs.resize(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const PairResult& r = results[i];
    PairVerdict& v = j.pairs[i];
    v.attempts.reserve(r.attempts.size());
    for (const Attempt& at : r.attempts) v.attempts.push_back(detail::check_attempt(spec, nodes, r.pair, at, j.fleet));
    v.verdict = verdict_of(v);
    switch (v.verdict) {
      case Verdict::kPass: ++j.passed; break;
      case Verdict::kFlaky: ++j.flaky; break;
      case Verdict::kFail: ++j.failed; break;
    }
    if (v.verdict == Verdict::kFail && r.attempts.size() < std::size_t{1} + spec.retests) j.retest.push_back(r.pair);
  }
  j.culprits = detail::attribute(spec, nodes, results, j.pairs);
  return j;
}

std::string_view status_name(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kFailed: return "failed";
    case Status::kTimeout: return "timeout";
  }
  return "?";
}

std::string_view rule_name(Rule r) {
  switch (r) {
    case Rule::kStatus: return "status";
    case Rule::kBandwidth: return "bandwidth";
    case Rule::kBidir: return "bidir";
    case Rule::kLatency: return "latency";
    case Rule::kCounter: return "counter";
    case Rule::kOutlier: return "outlier";
  }
  return "?";
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFlaky: return "flaky";
    case Verdict::kFail: return "fail";
  }
  return "?";
}

std::string_view metric_name(Metric m) {
  switch (m) {
    case Metric::kBwAToB: return "bw_a_to_b_gbps";
    case Metric::kBwBToA: return "bw_b_to_a_gbps";
    case Metric::kBwBidir: return "bw_bidir_gbps";
    case Metric::kLatP50: return "lat_p50_us";
  }
  return "?";
}

std::string_view culprit_kind_name(Culprit::Kind k) { return k == Culprit::Kind::kNode ? "node" : "link"; }

std::string node_label(std::span<const Node> nodes, std::uint32_t i) {
  if (i < nodes.size() && !nodes[i].name.empty()) return fmt::format("node {} ({})", i, nodes[i].name);
  return fmt::format("node {}", i);
}

std::string pair_label(std::span<const Node> nodes, Pair p) {
  const bool named = p.a < nodes.size() && p.b < nodes.size() && !nodes[p.a].name.empty() && !nodes[p.b].name.empty();
  if (named) return fmt::format("{}-{} ({}-{})", p.a, p.b, nodes[p.a].name, nodes[p.b].name);
  return fmt::format("{}-{}", p.a, p.b);
}

namespace detail {

std::string short_name(std::span<const Node> nodes, std::uint32_t i) {
  if (i < nodes.size() && !nodes[i].name.empty()) return nodes[i].name;
  return fmt::format("{}", i);
}

double pair_rate_gbps(const Spec& spec, std::span<const Node> nodes, Pair p) {
  if (spec.port_gbps > 0) return spec.port_gbps;
  return std::min(nodes[p.a].port_gbps, nodes[p.b].port_gbps);
}

std::string rule_label(const Spec& spec, std::span<const Node> nodes, Rule r) {
  bool uniform = true;
  for (const Node& x : nodes) uniform = uniform && x.port_gbps == nodes.front().port_gbps;
  const std::string rate = spec.port_gbps > 0 ? fmt::format("{} Gb/s", num(spec.port_gbps))
                           : uniform          ? fmt::format("{} Gb/s", num(nodes.front().port_gbps))
                                              : std::string("the port rate");
  switch (r) {
    case Rule::kStatus: return "failed or timed out";
    case Rule::kBandwidth: return fmt::format("bandwidth below {} x {}", num(spec.min_bw_fraction), rate);
    case Rule::kBidir:
      return fmt::format("bidirectional bandwidth below {} x 2 x {}", num(spec.min_bidir_fraction), rate);
    case Rule::kLatency: return fmt::format("latency p99 above {} us", num(spec.max_p99_us));
    case Rule::kCounter: return "error counters moved";
    case Rule::kOutlier: return "fleet outliers";
  }
  return "?";
}

}  // namespace detail

}  // namespace fabench::accept
