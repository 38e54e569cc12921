// The parts judge() is made of, private to lib/accept: the rules one attempt is checked against
// (rules.cpp) and the attribution of failed pairs to nodes and links (attribute.cpp).
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "fabench/accept/judge.hpp"

namespace fabench::accept::detail {

// A node's name, or its index when it has none: "h3", "3".
[[nodiscard]] std::string short_name(std::span<const Node> nodes, std::uint32_t i);
// The rate a pair is held to: the spec's, else the slower end's port.
[[nodiscard]] double pair_rate_gbps(const Spec& spec, std::span<const Node> nodes, Pair p);
// What a rule means under this spec, for evidence: "bandwidth below 0.9 x 100 Gb/s".
[[nodiscard]] std::string rule_label(const Spec& spec, std::span<const Node> nodes, Rule r);

[[nodiscard]] std::array<FleetStat, kMetrics> fleet_stats(const Spec& spec, std::span<const PairResult> results);
[[nodiscard]] std::vector<Violation> check_attempt(const Spec& spec, std::span<const Node> nodes, Pair p,
                                                   const Attempt& at, const std::array<FleetStat, kMetrics>& fleet);

[[nodiscard]] std::vector<Culprit> attribute(const Spec& spec, std::span<const Node> nodes,
                                             std::span<const PairResult> results,
                                             std::span<const PairVerdict> verdicts);

}  // namespace fabench::accept::detail
