// lib/accept schedules: the circle method and bisection checked as properties (every pair once,
// disjoint rounds, the round count) for every n in 2..512 and spot values up to 4096; first-fit
// packing and the retest schedule's bound on rounds.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fabench/accept/error.hpp"
#include "fabench/accept/schedule.hpp"

using namespace fabench::accept;

namespace {

using Rounds = std::vector<std::vector<Pair>>;

// Every round disjoint, every node in range, no pair twice (either order). Returns "" or the
// first problem; `seen` (n x n, symmetric) gets every pair.
std::string check_rounds(const Schedule& s, std::vector<std::uint8_t>& seen) {
  const std::uint32_t n = s.nodes;
  seen.assign(std::size_t{n} * n, 0);
  std::vector<std::size_t> last_round(n, SIZE_MAX);
  for (std::size_t r = 0; r < s.rounds.size(); ++r) {
    for (const Pair p : s.rounds[r]) {
      if (p.a >= n || p.b >= n || p.a == p.b) return "bad pair in round " + std::to_string(r);
      if (last_round[p.a] == r || last_round[p.b] == r) return "node twice in round " + std::to_string(r);
      last_round[p.a] = last_round[p.b] = r;
      auto& cell = seen[std::size_t{p.a} * n + p.b];
      if (cell != 0) return "pair twice: " + std::to_string(p.a) + " " + std::to_string(p.b);
      cell = seen[std::size_t{p.b} * n + p.a] = 1;
    }
  }
  return "";
}

// The round-robin properties for one n; "" when they hold.
std::string check_round_robin(std::uint32_t n) {
  const Schedule s = round_robin(n);
  std::vector<std::uint8_t> seen;
  if (auto e = check_rounds(s, seen); !e.empty()) return "n=" + std::to_string(n) + ": " + e;
  const std::size_t rounds = n % 2 == 0 ? n - 1 : n;
  if (s.rounds.size() != rounds) return "n=" + std::to_string(n) + ": round count";
  for (const auto& r : s.rounds) {
    if (r.size() != n / 2) return "n=" + std::to_string(n) + ": pairs per round";
  }
  if (s.pair_count() != std::size_t{n} * (n - 1) / 2) return "n=" + std::to_string(n) + ": pair count";
  // Distinct pairs, and exactly n(n-1)/2 of them: every pair is there once.
  return "";
}

std::string check_bisection(std::uint32_t n) {
  const Schedule s = bisection(n);
  std::vector<std::uint8_t> seen;
  if (auto e = check_rounds(s, seen); !e.empty()) return "n=" + std::to_string(n) + ": " + e;
  const std::uint32_t lower = n / 2;
  if (s.rounds.size() != n - lower) return "n=" + std::to_string(n) + ": round count";
  for (const auto& r : s.rounds) {
    if (r.size() != lower) return "n=" + std::to_string(n) + ": pairs per round";
  }
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = a + 1; b < n; ++b) {
      const bool cross = a < lower && b >= lower;
      if ((seen[std::size_t{a} * n + b] != 0) != cross) return "n=" + std::to_string(n) + ": pair coverage";
    }
  }
  return "";
}

}  // namespace

TEST_CASE("accept: round-robin by the circle method, n = 4 and 3 by hand", "[accept]") {
  CHECK(round_robin(4).rounds == Rounds{{{0, 3}, {1, 2}}, {{1, 3}, {0, 2}}, {{2, 3}, {0, 1}}});
  CHECK(round_robin(3).rounds == Rounds{{{1, 2}}, {{0, 2}}, {{0, 1}}});  // node r idles in round r
  CHECK(round_robin(2).rounds == Rounds{{{0, 1}}});
  CHECK_THROWS_WITH(round_robin(1), "node count 1 is outside 2..8192");
  CHECK_THROWS_AS(round_robin(kMaxNodes + 1), AcceptError);
}

TEST_CASE("accept: round-robin: every pair once in disjoint rounds, n = 2..512", "[accept]") {
  std::string problems;
  for (std::uint32_t n = 2; n <= 512; ++n) problems += check_round_robin(n);
  CHECK(problems == "");
}

TEST_CASE("accept: round-robin at spot sizes up to 4096", "[accept]") {
  for (const std::uint32_t n : {1000u, 1023u, 1024u, 2047u, 4096u}) CHECK(check_round_robin(n) == "");
}

TEST_CASE("accept: bisection: lower half against upper half, every cross pair once", "[accept]") {
  CHECK(bisection(4).rounds == Rounds{{{0, 2}, {1, 3}}, {{0, 3}, {1, 2}}});
  CHECK(bisection(3).rounds == Rounds{{{0, 1}}, {{0, 2}}});
  std::string problems;
  for (std::uint32_t n = 2; n <= 256; ++n) problems += check_bisection(n);
  CHECK(problems == "");
  CHECK(check_bisection(1024) == "");
  CHECK(check_bisection(4095) == "");
}

TEST_CASE("accept: pack_rounds: first fit into disjoint rounds, in order", "[accept]") {
  const std::vector<Pair> pairs{{0, 1}, {2, 3}, {1, 2}, {3, 0}, {0, 2}};
  const Schedule s = pack_rounds(4, pairs);
  CHECK(s.rounds == Rounds{{{0, 1}, {2, 3}}, {{1, 2}, {3, 0}}, {{0, 2}}});
  std::vector<std::uint8_t> seen;
  CHECK(check_rounds(pack_rounds(64, round_robin(64).rounds[5]), seen) == "");

  CHECK_THROWS_WITH(pack_rounds(4, std::vector<Pair>{{0, 4}}), "pair 0 4: node out of range 0..3");
  CHECK_THROWS_WITH(pack_rounds(4, std::vector<Pair>{{2, 2}}), "pair 2 2: a node paired with itself");
  CHECK_THROWS_WITH(pack_rounds(4, std::vector<Pair>{{1, 3}, {3, 1}}), "pair 3 1 is given twice");
}

TEST_CASE("accept: a retest never takes more rounds than the schedule", "[accept]") {
  // Path 0-1-2-3-4 scheduled in two rounds; first fit in this order needs three.
  const Schedule original = pack_rounds(5, std::vector<Pair>{{0, 1}, {2, 3}, {1, 2}, {3, 4}});
  REQUIRE(original.rounds.size() == 2);
  const std::vector<Pair> retest{{1, 0}, {3, 4}, {2, 3}, {1, 2}};
  REQUIRE(pack_rounds(5, retest).rounds.size() == 3);
  CHECK(retest_schedule(original, retest).rounds == Rounds{{{1, 0}, {2, 3}}, {{3, 4}, {1, 2}}});

  // Otherwise first fit, which merges pairs of different original rounds (0-5 ran in round 0,
  // 3-4 in round 1).
  const Schedule rr = round_robin(6);
  REQUIRE(rr.rounds[1] == std::vector<Pair>{{1, 5}, {0, 2}, {3, 4}});
  CHECK(retest_schedule(rr, std::vector<Pair>{{0, 5}, {3, 4}}).rounds == Rounds{{{0, 5}, {3, 4}}});
  CHECK(retest_schedule(rr, std::vector<Pair>{{0, 5}, {1, 5}}).rounds == Rounds{{{0, 5}}, {{1, 5}}});
  CHECK_THROWS_WITH(retest_schedule(bisection(4), std::vector<Pair>{{0, 1}}),
                    "retest of pair 0 1, which is not in the schedule");
}
