// fabench_accept_synth_report: the JSON report (lib/accept's report_json) of a synthetic
// fabench-accept run, for fabench-report's tests (test/report/): N nodes at 100 Gb/s, every pair
// of round_robin(N) measured once with the deterministic noise of test/unit/accept_synth.hpp, then
// spoiled: one bad node (every pair of it at half rate, one of them timing out), one bad link
// (slow in one direction), one pair that recovers on its retest (flaky). Retests run the way the
// driver runs them (judge, retest_schedule, append, judge again), so attempts keep their history.
// Not a measurement: the metadata says "synthetic": true and names the scenario.
//
//   fabench_accept_synth_report --nodes 1024 --bad-node 17 --bad-link 100-900 --seed 1 -o r.json
//
// Without --bad-node / --bad-link they are drawn from --seed (printed). N >= 4.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "../unit/accept_synth.hpp"
#include "fabench/accept/judge.hpp"
#include "fabench/accept/report.hpp"
#include "fabench/accept/schedule.hpp"
#include "fabench/accept/spec.hpp"

namespace {

using namespace fabench::accept;

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::optional<Pair> parse_pair(const std::string& s) {
  const auto dash = s.find('-');
  if (dash == std::string::npos) return std::nullopt;
  try {
    return Pair{static_cast<std::uint32_t>(std::stoul(s.substr(0, dash))),
                static_cast<std::uint32_t>(std::stoul(s.substr(dash + 1)))};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool same(Pair p, std::uint32_t a, std::uint32_t b) { return (p.a == a && p.b == b) || (p.a == b && p.b == a); }

struct Scenario {
  std::uint32_t node = 0;  // bad in all its pairs
  Pair link;               // slow from link.a to link.b
  Pair flaky;              // slow, then good on retest
  Pair timeout;            // a pair of the bad node whose peer never answers
  std::uint64_t seed = 1;

  // Attempt k (0: the first) of pair p, measured as p.a -> p.b (p.a < p.b as round_robin gives).
  [[nodiscard]] Attempt attempt(Pair p, std::size_t index, std::size_t k) const {
    const std::uint64_t s = (seed << 40) + (std::uint64_t{k} << 32) + index;
    if (same(p, timeout.a, timeout.b)) {
      Attempt t;
      t.status = Status::kTimeout;
      t.reason = "peer silent for 10 s";
      t.duration_s = 12;
      return t;
    }
    if (p.a == node || p.b == node) return accept_synth::slow_attempt(s, 0.5);
    if (same(p, link.a, link.b)) {
      Attempt a = accept_synth::good_attempt(s);
      (p.a == link.a ? a.bw_a_to_b_gbps : a.bw_b_to_a_gbps) *= 0.42;
      a.bw_bidir_gbps *= 0.7;
      return a;
    }
    if (same(p, flaky.a, flaky.b) && k == 0) return accept_synth::slow_attempt(s, 0.3);
    return accept_synth::good_attempt(s);
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The JSON report of a synthetic fabench-accept run (one bad node, one bad link, a flaky pair)"};
  std::uint32_t n = 0;
  std::string out, bad_link;
  std::optional<std::uint32_t> bad_node;
  std::uint64_t seed = 1;
  std::uint32_t retests = 1;
  bool pretty = false;
  app.add_option("--nodes", n, "node count (4..8192)")->required()->check(CLI::Range(4u, kMaxNodes));
  app.add_option("--bad-node", bad_node, "the node bad in all its pairs (default: drawn from --seed)");
  app.add_option("--bad-link", bad_link, "A-B: the link slow from A to B (default: drawn from --seed)");
  app.add_option("--seed", seed, "noise and default choices");
  app.add_option("--retests", retests, "spec.retests")->check(CLI::Range(0u, kMaxRetests));
  app.add_option("-o,--output", out, "the report JSON")->required();
  app.add_flag("--pretty", pretty, "indent the JSON (for committed fixtures)");
  CLI11_PARSE(app, argc, argv);

  Scenario sc;
  sc.seed = seed;
  sc.node = bad_node.value_or(static_cast<std::uint32_t>(mix(seed) % n));
  if (!bad_link.empty()) {
    const auto p = parse_pair(bad_link);
    if (!p) {
      std::fprintf(stderr, "--bad-link: expected A-B, got \"%s\"\n", bad_link.c_str());
      return 2;
    }
    sc.link = *p;
  } else {
    // Two distinct nodes other than the bad one.
    std::uint64_t h = mix(seed + 1);
    do sc.link.a = static_cast<std::uint32_t>((h = mix(h)) % n);
    while (sc.link.a == sc.node);
    do sc.link.b = static_cast<std::uint32_t>((h = mix(h)) % n);
    while (sc.link.b == sc.node || sc.link.b == sc.link.a);
  }
  if (sc.node >= n || sc.link.a >= n || sc.link.b >= n || sc.link.a == sc.link.b || sc.link.a == sc.node ||
      sc.link.b == sc.node) {
    std::fprintf(stderr, "bad node %u and link %u-%u: need three distinct nodes below %u\n", sc.node, sc.link.a,
                 sc.link.b, n);
    return 2;
  }
  // The flaky pair and the timed-out partner of the bad node: the lowest nodes that are neither
  // the bad node nor an end of the link (N >= 4 leaves one; a second, for the flaky pair, is an end
  // of the link when N == 4).
  std::vector<std::uint32_t> others;
  for (std::uint32_t i = 0; i < n && others.size() < 2; ++i) {
    if (i != sc.node && i != sc.link.a && i != sc.link.b) others.push_back(i);
  }
  sc.timeout = {std::min(sc.node, others[0]), std::max(sc.node, others[0])};
  const std::uint32_t f2 = others.size() > 1 ? others[1] : std::min(sc.link.a, sc.link.b);
  sc.flaky = {std::min(others[0], f2), std::max(others[0], f2)};

  accept_synth::Fabric f = accept_synth::healthy_fabric(n);
  for (std::size_t i = 0; i < f.results.size(); ++i) f.results[i].attempts = {sc.attempt(f.results[i].pair, i, 0)};

  Spec spec;
  spec.retests = retests;
  Judgement j = judge(spec, f.nodes, f.results);
  while (!j.retest.empty()) {
    const Schedule again = retest_schedule(f.schedule, j.retest);
    for (const auto& round : again.rounds) {
      for (const Pair p : round) {
        const std::size_t i = f.index_of(p.a, p.b);
        PairResult& r = f.results[i];
        r.attempts.push_back(sc.attempt(r.pair, i, r.attempts.size()));
      }
    }
    j = judge(spec, f.nodes, f.results);
  }

  const nlohmann::json metadata = {{"synthetic", true},
                                   {"generator", "fabench_accept_synth_report (test/helpers/accept_synth_report.cpp)"},
                                   {"note", "synthetic matrices of test/unit/accept_synth.hpp, not a measurement"},
                                   {"seed", seed},
                                   {"scenario",
                                    {{"bad_node", sc.node},
                                     {"bad_link", {sc.link.a, sc.link.b}},
                                     {"flaky_pair", {sc.flaky.a, sc.flaky.b}},
                                     {"timeout_pair", {sc.timeout.a, sc.timeout.b}}}}};
  const nlohmann::json report = report_json({spec, f.nodes, f.results, j}, metadata);
  {
    std::ofstream os(out);
    if (pretty) os << std::setw(1);
    os << report << '\n';
    if (!os) {
      std::fprintf(stderr, "%s: cannot write\n", out.c_str());
      return 1;
    }
  }
  std::string culprits;
  for (const auto& c : j.culprits) {
    culprits += fmt::format("{}{} {}", culprits.empty() ? "" : ", ", culprit_kind_name(c.kind),
                            c.kind == Culprit::Kind::kNode ? fmt::format("{}", c.a) : fmt::format("{}-{}", c.a, c.b));
  }
  fmt::print(
      "{}: {} nodes, {} pairs: {} pass, {} flaky, {} fail; bad node {}, bad link {}-{}, flaky {}-{}, "
      "timeout {}-{}; culprits: {}\n",
      out, n, f.results.size(), j.passed, j.flaky, j.failed, sc.node, sc.link.a, sc.link.b, sc.flaky.a, sc.flaky.b,
      sc.timeout.a, sc.timeout.b, culprits.empty() ? "none" : culprits);
  return 0;
}
