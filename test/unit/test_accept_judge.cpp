// lib/accept judge(): the rules with their exact texts, retests and flaky pairs, the fleet outlier
// rule, and attribution (node or link, with the evidence) on small hand-built matrices.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "accept_synth.hpp"
#include "fabench/accept/error.hpp"
#include "fabench/accept/judge.hpp"

using namespace fabench::accept;
using accept_synth::Fabric;

namespace {

// Exact values, so that texts can be checked: 97 Gb/s each way, 192 both, 2 / 3 / 9 us.
Attempt clean() {
  Attempt a;
  a.duration_s = 2;
  a.bw_a_to_b_gbps = 97;
  a.bw_b_to_a_gbps = 97;
  a.bw_bidir_gbps = 192;
  a.lat_p50_us = 2;
  a.lat_p99_us = 3;
  a.lat_max_us = 9;
  return a;
}

Attempt slow(double gbps) {
  Attempt a = clean();
  a.bw_a_to_b_gbps = a.bw_b_to_a_gbps = gbps;
  a.bw_bidir_gbps = 2 * gbps;
  return a;
}

Fabric clean_fabric(std::uint32_t n) {
  Fabric f = accept_synth::healthy_fabric(n);
  for (auto& r : f.results) r.attempts = {clean()};
  return f;
}

Spec spec_with(std::uint32_t retests) {
  Spec s;
  s.retests = retests;
  return s;
}

std::vector<std::string> texts(const std::vector<Violation>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.text);
  return out;
}

std::vector<std::string> evidence(const Judgement& j) {
  std::vector<std::string> out;
  for (const auto& c : j.culprits) out.push_back(c.evidence);
  return out;
}

}  // namespace

TEST_CASE("accept: a healthy matrix passes with no culprit", "[accept]") {
  Fabric f = accept_synth::healthy_fabric(16);
  const Judgement j = judge(Spec{}, f.nodes, f.results);
  CHECK(j.ok());
  CHECK(j.passed == 120);
  CHECK(j.flaky == 0);
  CHECK(j.failed == 0);
  CHECK(j.culprits.empty());
  CHECK(j.retest.empty());
  CHECK(j.fleet[0].count == 120);
  CHECK(j.fleet[0].median == Approx(97).margin(0.5));
  CHECK(j.fleet[3].median == Approx(2).margin(0.05));
}

TEST_CASE("accept: a bad link is retested, then fails and is named as the path", "[accept]") {
  Fabric f = clean_fabric(4);
  f.at(1, 2).attempts = {slow(40)};
  Judgement j = judge(spec_with(1), f.nodes, f.results);
  CHECK(j.retest == std::vector<Pair>{{1, 2}});  // one retest left: not final yet
  CHECK(j.failed == 1);

  f.at(1, 2).attempts.push_back(slow(41));
  j = judge(spec_with(1), f.nodes, f.results);
  CHECK(j.retest.empty());
  CHECK_FALSE(j.ok());
  const auto& v = j.pairs[f.index_of(1, 2)];
  CHECK(v.verdict == Verdict::kFail);
  CHECK(texts(v.attempts.back()) ==
        std::vector<std::string>{"bandwidth h1->h2 41 Gb/s below 90 Gb/s (0.9 x 100 Gb/s)",
                                 "bandwidth h2->h1 41 Gb/s below 90 Gb/s (0.9 x 100 Gb/s)",
                                 "bidirectional bandwidth 82 Gb/s below 180 Gb/s (0.9 x 2 x 100 Gb/s)"});
  REQUIRE(j.culprits.size() == 1);
  CHECK(j.culprits[0].kind == Culprit::Kind::kLink);
  CHECK(j.culprits[0].a == 1);
  CHECK(j.culprits[0].b == 2);
  CHECK(j.culprits[0].pairs == std::vector<std::size_t>{f.index_of(1, 2)});
  // 0-1, 1-3, 0-2 and 2-3 are good, 1-2 is bad: the path, not a node.
  CHECK(j.culprits[0].evidence ==
        "link 1-2 (h1-h2): bandwidth h1->h2 41 Gb/s below 90 Gb/s (0.9 x 100 Gb/s) (and 2 more); node 1 passes 2 of "
        "its 2 other pairs, node 2 passes 2 of 2: suspect the path, not a node");
}

TEST_CASE("accept: a pair that passes on retest is flaky, not bad", "[accept]") {
  Fabric f = clean_fabric(4);
  Attempt timeout = clean();
  timeout.status = Status::kTimeout;
  timeout.reason = "peer silent for 10 s";
  timeout.bw_a_to_b_gbps = timeout.bw_b_to_a_gbps = timeout.bw_bidir_gbps = kNotMeasured;
  f.at(0, 2).attempts = {timeout, clean()};
  const Judgement j = judge(spec_with(1), f.nodes, f.results);
  CHECK(j.ok());
  CHECK(j.flaky == 1);
  CHECK(j.passed == 5);
  CHECK(j.culprits.empty());
  const auto& v = j.pairs[f.index_of(0, 2)];
  CHECK(v.verdict == Verdict::kFlaky);
  CHECK(texts(v.attempts[0]) == std::vector<std::string>{"timeout: peer silent for 10 s"});
  CHECK(v.attempts[1].empty());

  // With no retest allowed the same first attempt is final: the pair fails.
  f.at(0, 2).attempts = {timeout};
  CHECK(judge(spec_with(0), f.nodes, f.results).failed == 1);
}

TEST_CASE("accept: a node bad in most of its pairs is the culprit, its partners are not", "[accept]") {
  Fabric f = clean_fabric(8);
  for (std::uint32_t x = 0; x < 8; ++x) {
    if (x != 3) f.at(3, x).attempts = {slow(45)};
  }
  const Judgement j = judge(spec_with(0), f.nodes, f.results);
  CHECK(j.failed == 7);
  CHECK(evidence(j) ==
        std::vector<std::string>{"node 3 (h3): bad in 7 of its 7 pairs (7 bandwidth below 0.9 x 100 Gb/s, 7 "
                                 "bidirectional bandwidth below 0.9 x 2 x 100 Gb/s); pairs without a suspect node: "
                                 "21 of 21 pass"});
  CHECK(j.culprits[0].kind == Culprit::Kind::kNode);
  CHECK(j.culprits[0].a == 3);
  CHECK(j.culprits[0].pairs.size() == 7);
}

TEST_CASE("accept: node or path: a majority names the node, a minority stays links", "[accept]") {
  Fabric f = clean_fabric(8);
  for (const std::uint32_t x : {0u, 1u, 2u, 4u, 6u}) f.at(3, x).attempts = {slow(45)};  // 5 of 7
  for (const std::uint32_t x : {1u, 2u}) f.at(5, x).attempts = {slow(45)};              // 2 of 7
  const Judgement j = judge(spec_with(0), f.nodes, f.results);
  REQUIRE(j.culprits.size() == 3);
  CHECK(j.culprits[0].kind == Culprit::Kind::kNode);
  CHECK(j.culprits[0].a == 3);
  CHECK(j.culprits[0].evidence.starts_with("node 3 (h3): bad in 5 of its 7 pairs (5 bandwidth"));
  CHECK(j.culprits[0].evidence.ends_with("pairs without a suspect node: 19 of 21 pass"));
  CHECK(j.culprits[1].kind == Culprit::Kind::kLink);
  CHECK(j.culprits[1].a == 1);
  CHECK(j.culprits[1].b == 5);
  CHECK(j.culprits[1].evidence.ends_with(
      "node 1 passes 5 of its 6 other pairs, node 5 passes 5 of 6: suspect the path; see the other failed pairs"));
  CHECK(j.culprits[2].a == 2);
  CHECK(j.culprits[2].b == 5);

  // Two bad nodes: every failed pair is explained by one of them, no link is blamed.
  Fabric g = clean_fabric(8);
  for (const auto& r : g.results) {
    if (r.pair.a == 2 || r.pair.b == 2 || r.pair.a == 5 || r.pair.b == 5)
      g.at(r.pair.a, r.pair.b).attempts = {slow(45)};
  }
  const Judgement k = judge(spec_with(0), g.nodes, g.results);
  CHECK(k.failed == 13);
  REQUIRE(k.culprits.size() == 2);
  CHECK(k.culprits[0].a == 2);
  CHECK(k.culprits[1].a == 5);
  CHECK(k.culprits[0].pairs.size() + k.culprits[1].pairs.size() == 13);
  CHECK(k.culprits[1].evidence.starts_with("node 5 (h5): bad in 6 of its 6 pairs"));
}

TEST_CASE("accept: two nodes alone cannot tell a node from the path", "[accept]") {
  Fabric f = clean_fabric(2);
  f.at(0, 1).attempts = {slow(45)};
  const Judgement j = judge(spec_with(0), f.nodes, f.results);
  REQUIRE(j.culprits.size() == 1);
  CHECK(j.culprits[0].evidence.ends_with("cannot tell a node from the path: this is the only pair of node 0"));
}

TEST_CASE("accept: every pair bad: every failure explained exactly once", "[accept]") {
  Fabric f = clean_fabric(6);
  for (auto& r : f.results) r.attempts = {slow(10)};
  const Judgement j = judge(spec_with(0), f.nodes, f.results);
  CHECK(j.failed == 15);
  std::multiset<std::size_t> explained;
  for (const auto& c : j.culprits) explained.insert(c.pairs.begin(), c.pairs.end());
  CHECK(explained.size() == 15);
  CHECK(std::set<std::size_t>(explained.begin(), explained.end()).size() == 15);
  CHECK(j.culprits.front().kind == Culprit::Kind::kNode);
}

TEST_CASE("accept: status, latency and counter rules; unmeasured values are not judged", "[accept]") {
  const std::vector<Node> nodes{{"a", 200}, {"b", 100}};
  Spec s = spec_with(0);
  s.max_p99_us = 5;
  s.zero_counters = {"symbol_error", "link_downed"};
  Attempt at = clean();  // 97 Gb/s is enough: the slower port (100) sets the limit
  at.status = Status::kFailed;
  at.lat_p99_us = 7.25;
  at.counters_a = {{"symbol_error", 12}, {"port_xmit_wait", 5000}};
  at.counters_b = {{"symbol_error", 0}, {"link_downed", -1}};
  const std::vector<PairResult> results{{{0, 1}, 0, {at}}};
  const Judgement j = judge(s, nodes, results);
  CHECK(texts(j.pairs[0].attempts[0]) ==
        std::vector<std::string>{"failed: no reason given", "latency p99 7.25 us above 5 us",
                                 "counter symbol_error at a moved by +12 (must stay 0)",
                                 "counter link_downed at b moved by -1 (must stay 0)"});
  CHECK(j.pairs[0].attempts[0][0].rule == Rule::kStatus);
  CHECK(j.pairs[0].attempts[0][1].rule == Rule::kLatency);
  CHECK(j.pairs[0].attempts[0][2].rule == Rule::kCounter);

  Attempt bare;  // nothing measured, status ok: nothing to hold against it
  const std::vector<PairResult> unmeasured{{{0, 1}, 0, {bare}}};
  CHECK(judge(s, nodes, unmeasured).ok());

  // A fraction of 0 turns its rule off; the spec's port rate overrides the nodes'.
  s.min_bw_fraction = 0;
  s.min_bidir_fraction = 0.5;
  s.port_gbps = 400;
  const std::vector<PairResult> slow_pair{{{0, 1}, 0, {slow(10)}}};
  CHECK(texts(judge(s, nodes, slow_pair).pairs[0].attempts[0]) ==
        std::vector<std::string>{"bidirectional bandwidth 20 Gb/s below 400 Gb/s (0.5 x 2 x 400 Gb/s)"});
}

TEST_CASE("accept: the fleet rule flags what is far below the fleet, and nothing within 5 %", "[accept]") {
  Fabric f = clean_fabric(8);  // 28 pairs
  Spec s = spec_with(0);
  s.min_bw_fraction = 0.8;  // limit 80: 85 passes the absolute rule
  f.at(0, 1).attempts[0].bw_a_to_b_gbps = 85;
  f.at(4, 5).attempts[0].bw_b_to_a_gbps = 93;  // within 5 % of the median
  f.at(2, 3).attempts[0].lat_p50_us = 2.5;
  f.at(6, 7).attempts[0].bw_a_to_b_gbps = 50;  // below the absolute limit: reported once
  Judgement j = judge(s, f.nodes, f.results);
  CHECK(j.fleet[0].count == 28);
  CHECK(j.fleet[0].median == 97);
  CHECK(j.fleet[0].mad == 0);
  CHECK(j.fleet[0].threshold == Approx(92.15));
  CHECK(j.fleet[3].threshold == Approx(2.1));
  CHECK(texts(j.pairs[f.index_of(0, 1)].attempts[0]) ==
        std::vector<std::string>{
            "bandwidth h0->h1 85 Gb/s below the fleet's 92.15 Gb/s (median 97 - max(5 x MAD 0, 0.05 x median))"});
  CHECK(j.pairs[f.index_of(0, 1)].attempts[0][0].rule == Rule::kOutlier);
  CHECK(texts(j.pairs[f.index_of(2, 3)].attempts[0]) ==
        std::vector<std::string>{
            "latency p50 2.5 us above the fleet's 2.1 us (median 2 + max(5 x MAD 0, 0.05 x median))"});
  CHECK(j.pairs[f.index_of(4, 5)].verdict == Verdict::kPass);
  CHECK(texts(j.pairs[f.index_of(6, 7)].attempts[0]) ==
        std::vector<std::string>{"bandwidth h6->h7 50 Gb/s below 80 Gb/s (0.8 x 100 Gb/s)"});
  CHECK(j.failed == 3);

  s.outlier_k = 0;  // off
  CHECK(judge(s, f.nodes, f.results).failed == 1);

  Fabric small = clean_fabric(4);  // 6 pairs: too few for a fleet
  small.at(0, 1).attempts[0].bw_a_to_b_gbps = 85;
  s.outlier_k = 5;
  j = judge(s, small.nodes, small.results);
  CHECK(j.ok());
  CHECK(std::isnan(j.fleet[0].threshold));
}

TEST_CASE("accept: results that do not fit the nodes are refused with one line", "[accept]") {
  const std::vector<Node> nodes{{"a", 100}, {"b", 100}, {"c", 0}};
  const Spec s;
  auto one = [](Pair p) { return std::vector<PairResult>{{p, 0, {clean()}}}; };
  const std::vector<Node> rated{{"a", 100}, {"b", 100}, {"c", 100}};
  CHECK_THROWS_WITH(judge(s, rated, one({0, 3})), "results: pair 0 3 is not two distinct nodes of 0..2");
  CHECK_THROWS_WITH(judge(s, rated, one({1, 1})), "results: pair 1 1 is not two distinct nodes of 0..2");
  const std::vector<PairResult> twice{{{0, 1}, 0, {clean()}}, {{1, 0}, 1, {clean()}}};
  CHECK_THROWS_WITH(judge(s, rated, twice), "results: pair 1 0 appears twice");
  CHECK_THROWS_WITH(judge(s, rated, std::vector<PairResult>{{{0, 1}, 0, {}}}), "results: pair 0 1 has no attempt");
  CHECK_THROWS_WITH(judge(s, nodes, one({0, 1})),
                    "results: node 2 (c) has no port rate (got 0); set port_gbps in the spec");
  Spec rated_spec;
  rated_spec.port_gbps = 100;
  CHECK(judge(rated_spec, nodes, one({0, 1})).ok());
  CHECK_THROWS_WITH(judge(s, std::vector<Node>{{"a", 100}}, one({0, 1})), "results: node count 1 is outside 2..8192");
}
