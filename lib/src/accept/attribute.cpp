// Attribution: from the matrix of failed pairs, the nodes bad in most of their pairs, then the
// links (paths) that are bad only between two nodes that do well elsewhere.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "detail.hpp"
#include "judge_parts.hpp"

namespace fabench::accept::detail {

namespace {

// Per node: every pair it is in, and counts of its pairs that passed (pass or flaky).
struct Matrix {
  std::vector<std::vector<std::size_t>> pairs_of;
  std::vector<std::size_t> passed;
  std::vector<bool> bad;  // per result: its verdict is fail

  Matrix(std::size_t n, std::span<const PairResult> results, std::span<const PairVerdict> verdicts)
      : pairs_of(n), passed(n, 0), bad(results.size()) {
    for (std::size_t i = 0; i < results.size(); ++i) {
      bad[i] = verdicts[i].verdict == Verdict::kFail;
      for (const std::uint32_t x : {results[i].pair.a, results[i].pair.b}) {
        pairs_of[x].push_back(i);
        if (!bad[i]) ++passed[x];
      }
    }
  }
};

std::uint32_t other_end(Pair p, std::uint32_t x) { return p.a == x ? p.b : p.a; }

// "6 bandwidth below 0.9 x 100 Gb/s, 1 latency p99 above 10 us": per rule, how many of `pairs`
// broke it in their counting attempt.
std::string rule_counts(const Spec& spec, std::span<const Node> nodes, std::span<const PairVerdict> verdicts,
                        std::span<const std::size_t> pairs) {
  std::array<std::size_t, 6> counts{};
  for (const std::size_t i : pairs) {
    std::set<Rule> rules;
    for (const auto& v : verdicts[i].attempts.back()) rules.insert(v.rule);
    for (const Rule r : rules) ++counts[static_cast<std::size_t>(r)];
  }
  std::vector<std::string> parts;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > 0) parts.push_back(fmt::format("{} {}", counts[r], rule_label(spec, nodes, static_cast<Rule>(r))));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The node with the largest share of bad pairs among its unexplained ones (ties: more bad pairs,
// then the lower index); n when no node has an unexplained bad pair.
std::uint32_t worst_node(std::span<const std::size_t> live, std::span<const std::size_t> live_bad) {
  std::uint32_t best = static_cast<std::uint32_t>(live.size());
  for (std::uint32_t x = 0; x < live.size(); ++x) {
    if (live_bad[x] == 0) continue;
    if (best == live.size()) {
      best = x;
      continue;
    }
    // Compare live_bad[x] / live[x] with the best's share, in integers.
    const std::size_t lhs = live_bad[x] * live[best];
    const std::size_t rhs = live_bad[best] * live[x];
    if (lhs > rhs || (lhs == rhs && live_bad[x] > live_bad[best])) best = x;
  }
  return best;
}

std::vector<Culprit> name_nodes(const Spec& spec, std::span<const PairResult> results, const Matrix& mx,
                                std::vector<bool>& explained, std::vector<std::string>& shares) {
  const std::size_t n = mx.pairs_of.size();
  std::vector<std::size_t> live(n);
  std::vector<std::size_t> live_bad(n, 0);
  for (std::size_t x = 0; x < n; ++x) {
    live[x] = mx.pairs_of[x].size();
    for (const std::size_t i : mx.pairs_of[x]) live_bad[x] += mx.bad[i] ? 1 : 0;
  }
  std::vector<Culprit> out;
  for (;;) {
    const std::uint32_t x = worst_node(live, live_bad);
    if (x == n || live_bad[x] < 2 ||
        static_cast<double>(live_bad[x]) <= spec.node_bad_fraction * static_cast<double>(live[x]))
      break;
    Culprit c{Culprit::Kind::kNode, x, x, {}, {}};
    shares.push_back(fmt::format("bad in {} of its {} pairs", live_bad[x], live[x]));
    for (const std::size_t i : mx.pairs_of[x]) {
      if (explained[i]) continue;
      explained[i] = true;
      const std::uint32_t y = other_end(results[i].pair, x);
      --live[y];
      if (mx.bad[i]) {
        --live_bad[y];
        c.pairs.push_back(i);
      }
    }
    live[x] = live_bad[x] = 0;
    out.push_back(std::move(c));
  }
  return out;
}

std::string link_evidence(std::span<const Node> nodes, const Matrix& mx, Pair p, const PairVerdict& v) {
  const auto& reasons = v.attempts.back();
  std::string text = fmt::format("link {}: {}", pair_label(nodes, p), reasons.empty() ? "bad" : reasons.front().text);
  if (reasons.size() > 1) text += fmt::format(" (and {} more)", reasons.size() - 1);
  bool clean = true;
  std::vector<std::string> ends;
  for (const std::uint32_t x : {p.a, p.b}) {
    const std::size_t others = mx.pairs_of[x].size() - 1;
    if (others == 0) {
      return text + fmt::format("; cannot tell a node from the path: this is the only pair of node {}", x);
    }
    clean = clean && mx.passed[x] == others;
    ends.push_back(ends.empty() ? fmt::format("node {} passes {} of its {} other pairs", x, mx.passed[x], others)
                                : fmt::format("node {} passes {} of {}", x, mx.passed[x], others));
  }
  return text + fmt::format("; {}, {}: {}", ends[0], ends[1],
                            clean ? "suspect the path, not a node" : "suspect the path; see the other failed pairs");
}

}  // namespace

std::vector<Culprit> attribute(const Spec& spec, std::span<const Node> nodes, std::span<const PairResult> results,
                               std::span<const PairVerdict> verdicts) {
  const Matrix mx(nodes.size(), results, verdicts);
  std::vector<bool> explained(results.size(), false);
  std::vector<std::string> shares;
  std::vector<Culprit> out = name_nodes(spec, results, mx, explained, shares);

  std::size_t clean_pairs = 0;
  std::size_t clean_passed = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (explained[i]) continue;
    ++clean_pairs;
    if (!mx.bad[i]) ++clean_passed;
  }
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].evidence = fmt::format("{}: {} ({}); pairs without a suspect node: {} of {} pass",
                                  node_label(nodes, out[k].a), shares[k],
                                  rule_counts(spec, nodes, verdicts, out[k].pairs), clean_passed, clean_pairs);
  }
  std::vector<std::size_t> links;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!explained[i] && mx.bad[i]) links.push_back(i);
  }
  std::sort(links.begin(), links.end(), [&](std::size_t x, std::size_t y) {
    return pair_key(results[x].pair.a, results[x].pair.b) < pair_key(results[y].pair.a, results[y].pair.b);
  });
  for (const std::size_t i : links) {
    const Pair p = results[i].pair;
    out.push_back({Culprit::Kind::kLink, p.a, p.b, {i}, link_evidence(nodes, mx, p, verdicts[i])});
  }
  return out;
}

}  // namespace fabench::accept::detail
