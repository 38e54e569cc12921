// lib/accept by simulation: synthetic matrices of up to 1024 nodes (523 776 pairs) with noise:
// all good, one bad link, one bad node, a flaky pair, a node next to a bad path, a link only the
// fleet rule sees. Each must give no false positive and the right culprit.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "accept_synth.hpp"
#include "fabench/accept/judge.hpp"

using namespace fabench::accept;
using accept_synth::Fabric;

namespace {

// Replaces pairs' attempts for one scenario and puts the healthy ones back afterwards, so that
// the 1024-node fabric is built once.
class Spoil {
 public:
  explicit Spoil(Fabric& f) : f_(f) {}
  ~Spoil() {
    for (auto& [i, attempts] : saved_) f_.results[i].attempts = std::move(attempts);
  }
  Spoil(const Spoil&) = delete;
  Spoil& operator=(const Spoil&) = delete;

  void set(std::uint32_t a, std::uint32_t b, std::vector<Attempt> attempts) {
    const std::size_t i = f_.index_of(a, b);
    saved_.emplace_back(i, std::move(f_.results[i].attempts));
    f_.results[i].attempts = std::move(attempts);
  }

 private:
  Fabric& f_;
  std::vector<std::pair<std::size_t, std::vector<Attempt>>> saved_;
};

Fabric& fabric_1024() {
  static Fabric f = accept_synth::healthy_fabric(1024);
  return f;
}

std::string culprit_of(const Judgement& j) {
  std::string out;
  for (const auto& c : j.culprits) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", culprit_kind_name(c.kind),
                       c.kind == Culprit::Kind::kNode ? std::to_string(c.a) : fmt::format("{}-{}", c.a, c.b));
  }
  return out;
}

// Node x bad in its pairs with every k-th partner (k = 1: all of them).
void spoil_node(Spoil& s, std::uint32_t n, std::uint32_t x, std::uint32_t every) {
  for (std::uint32_t y = 0, k = 0; y < n; ++y) {
    if (y != x && k++ % every == 0) s.set(x, y, {accept_synth::slow_attempt(y, 0.5)});
  }
}

}  // namespace

TEST_CASE("accept: 1024 nodes, all good: no failure, no culprit", "[accept][scale]") {
  Fabric& f = fabric_1024();
  REQUIRE(f.results.size() == 523776);
  const Judgement j = judge(Spec{}, f.nodes, f.results);
  CHECK(j.passed == 523776);
  CHECK(j.failed == 0);
  CHECK(j.culprits.empty());
}

TEST_CASE("accept: 1024 nodes, one bad link, then one bad node", "[accept][scale]") {
  Fabric& f = fabric_1024();
  Spec spec;
  spec.retests = 0;
  {
    Spoil s(f);
    s.set(100, 900, {accept_synth::slow_attempt(1, 0.6)});
    const Judgement j = judge(spec, f.nodes, f.results);
    CHECK(j.failed == 1);
    CHECK(culprit_of(j) == "link 100-900");
    CHECK(j.culprits[0].evidence.ends_with(
        "node 100 passes 1022 of its 1022 other pairs, node 900 passes 1022 of 1022: suspect the path, not a node"));
  }
  {
    Spoil s(f);
    spoil_node(s, 1024, 517, 1);
    const Judgement j = judge(spec, f.nodes, f.results);
    CHECK(j.failed == 1023);
    CHECK(culprit_of(j) == "node 517");
    CHECK(j.culprits[0].evidence.ends_with("pairs without a suspect node: 522753 of 522753 pass"));
  }
}

TEST_CASE("accept: 1024 nodes, a flaky pair, a node beside a bad path, a link only the fleet sees", "[accept][scale]") {
  Fabric& f = fabric_1024();
  {
    Spoil s(f);
    s.set(3, 4, {accept_synth::slow_attempt(7, 0.3), accept_synth::good_attempt(8)});
    const Judgement j = judge(Spec{}, f.nodes, f.results);
    CHECK(j.flaky == 1);
    CHECK(j.failed == 0);
    CHECK(j.culprits.empty());
  }
  {
    Spoil s(f);
    spoil_node(s, 1024, 10, 2);  // bad with every other partner: 512 of 1023
    s.set(20, 30, {accept_synth::slow_attempt(9, 0.7)});
    Spec spec;
    spec.retests = 0;
    const Judgement j = judge(spec, f.nodes, f.results);
    CHECK(j.failed == 513);
    CHECK(culprit_of(j) == "node 10, link 20-30");
  }
  {
    // 91 Gb/s each way: above the 0.9 x 100 Gb/s limit, far below the fleet (about 97).
    Spoil s(f);
    Attempt a = accept_synth::good_attempt(11);
    a.bw_a_to_b_gbps = a.bw_b_to_a_gbps = 91;
    s.set(600, 601, {a});
    const Judgement j = judge(Spec{}, f.nodes, f.results);
    CHECK(j.retest == std::vector<Pair>{{600, 601}});
    const auto& v = j.pairs[f.index_of(600, 601)].attempts[0];
    REQUIRE(v.size() == 2);
    CHECK(v[0].rule == Rule::kOutlier);
    CHECK(v[0].text.starts_with("bandwidth h600->h601 91 Gb/s below the fleet's "));
    CHECK(culprit_of(j) == "link 600-601");
  }
}

TEST_CASE("accept: bad links and bad nodes named right at sizes 2..255", "[accept][scale]") {
  for (const std::uint32_t n : {2u, 3u, 4u, 5u, 8u, 17u, 64u, 255u}) {
    INFO("n = " << n);
    Fabric f = accept_synth::healthy_fabric(n);
    Spec spec;
    spec.retests = 0;
    CHECK(judge(spec, f.nodes, f.results).failed == 0);
    {
      Spoil s(f);
      s.set(0, n - 1, {accept_synth::slow_attempt(5, 0.5)});
      CHECK(culprit_of(judge(spec, f.nodes, f.results)) == fmt::format("link 0-{}", n - 1));
    }
    if (n >= 3) {
      Spoil s(f);
      spoil_node(s, n, n / 2, 1);
      CHECK(culprit_of(judge(spec, f.nodes, f.results)) == fmt::format("node {}", n / 2));
    }
  }
}
