// judge(): verdicts per attempt, per pair and overall, the fleet statistics, the pairs still to
// measure again, and the attribution of bad pairs to culprits.
//
// An attempt is bad when it breaks a rule (Rule below, thresholds from the Spec). A pair's verdict
// comes from its attempts: pass (the first attempt is good), flaky (a later attempt is good after
// a bad one: reported, never blamed), fail (the last attempt is bad and no retest is left).
//
// The driver's loop:
//   Schedule s = round_robin(n);  ... run every round, one PairResult per pair ...
//   Judgement j = judge(spec, nodes, results);
//   while (!j.retest.empty()) {       // bad pairs with retests left, spec.retests deep at most
//     run retest_schedule(s, j.retest), append each Attempt to its PairResult;
//     j = judge(spec, nodes, results);
//   }
//   write report_json / report_junit / report_text (report.hpp).
// While `retest` is not empty those pairs read fail; the final judgement has it empty.
//
// Attribution, from the matrix of failed pairs (flaky ones do not count). Repeatedly take the
// node with the largest share of bad pairs among its pairs not yet explained; it is a NODE culprit
// when that share is above spec.node_bad_fraction and at least 2 pairs are bad; its pairs are then
// explained (so a good node paired with a bad one is not blamed). Every bad pair left is a LINK
// culprit: bad only between these two nodes, which do well elsewhere, so suspect the path (cable,
// switch port, route), not a node. Evidence is one line each, e.g.
//   "node 3 (h3): bad in 6 of its 7 pairs (6 bandwidth below 0.9 x 100 Gb/s); pairs without a
//    suspect node: 21 of 21 pass"
//   "link 1-2 (h1-h2): bandwidth h1->h2 41 Gb/s below 90 Gb/s (0.9 x 100 Gb/s) (and 2 more); node 1
//    passes 2 of its 2 other pairs, node 2 passes 2 of 2: suspect the path, not a node"
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabench/accept/result.hpp"
#include "fabench/accept/schedule.hpp"
#include "fabench/accept/spec.hpp"

namespace fabench::accept {

enum class Rule : std::uint8_t { kStatus, kBandwidth, kBidir, kLatency, kCounter, kOutlier };
// "status", "bandwidth", "bidir", "latency", "counter", "outlier"
[[nodiscard]] std::string_view rule_name(Rule r);

struct Violation {
  Rule rule = Rule::kStatus;
  std::string text;  // one line: the value, the limit and where it came from
};

enum class Verdict : std::uint8_t { kPass, kFlaky, kFail };
[[nodiscard]] std::string_view verdict_name(Verdict v);  // "pass", "flaky", "fail"

struct PairVerdict {
  Verdict verdict = Verdict::kPass;
  std::vector<std::vector<Violation>> attempts;  // per attempt; empty = a good attempt
};

// The fleet measurements of the outlier rule, in this order.
enum class Metric : std::uint8_t { kBwAToB, kBwBToA, kBwBidir, kLatP50 };
inline constexpr std::size_t kMetrics = 4;
[[nodiscard]] std::string_view metric_name(Metric m);  // "bw_a_to_b_gbps", ..., "lat_p50_us"

struct FleetStat {
  std::size_t count = 0;  // pairs with this measurement (ok status, counting attempt)
  double median = kNotMeasured;
  double mad = kNotMeasured;        // scaled by 1.4826
  double threshold = kNotMeasured;  // the outlier limit; NaN when the rule is off or count is too small
};

struct Culprit {
  enum class Kind : std::uint8_t { kNode, kLink };
  Kind kind = Kind::kNode;
  std::uint32_t a = 0;             // the node, or the link's ends
  std::uint32_t b = 0;             // == a for a node
  std::vector<std::size_t> pairs;  // indexes into the results: the bad pairs it explains
  std::string evidence;            // one line
};
[[nodiscard]] std::string_view culprit_kind_name(Culprit::Kind k);  // "node", "link"

struct Judgement {
  std::vector<PairVerdict> pairs;  // parallel to the results
  std::array<FleetStat, kMetrics> fleet;
  std::vector<Culprit> culprits;  // nodes first (in the order named), then links by node indexes
  std::vector<Pair> retest;       // bad pairs with a retest left: measure them again
  std::size_t passed = 0;
  std::size_t flaky = 0;
  std::size_t failed = 0;
  [[nodiscard]] bool ok() const { return failed == 0; }
};

// Throws AcceptError when the results do not fit the nodes: a node index out of range, a pair
// given twice, a pair with no attempt, a bandwidth rule with no port rate for a node.
[[nodiscard]] Judgement judge(const Spec& spec, std::span<const Node> nodes, std::span<const PairResult> results);

// "node 3 (h3)" or "node 3" when it has no name; "h1-h2" style names for a pair.
[[nodiscard]] std::string node_label(std::span<const Node> nodes, std::uint32_t i);
[[nodiscard]] std::string pair_label(std::span<const Node> nodes, Pair p);  // "1-2 (h1-h2)"

}  // namespace fabench::accept
