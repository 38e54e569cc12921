// Peer sets of lib/world: symmetric, and exactly the ranks each algorithm's
// schedule talks to (so a World built from them has a QP wherever a
// schedule writes and nowhere else).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "fabench/coll/schedule.hpp"
#include "fabench/collbench/executor.hpp"
#include "fabench/world/world.hpp"

using namespace fabench;

namespace {

// Ranks `rank`'s schedule writes to or expects from.
std::set<std::uint32_t> partners(coll::Algorithm a, std::uint32_t n, std::uint32_t rank) {
  // Enough elements that no chunk is empty (empty transfers are dropped).
  const auto s = coll::build_schedule(coll::Collective::kAllReduce, a, n, rank, 4ULL * n, 4);
  std::set<std::uint32_t> out(s.expect_from.begin(), s.expect_from.end());
  for (const auto& t : s.writes) out.insert(t.dst_rank);
  return out;
}

std::set<std::uint32_t> as_set(const std::vector<std::uint32_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("world peer sets are symmetric and match the schedules", "[world]") {
  std::vector<std::uint32_t> sizes;
  for (std::uint32_t n = 2; n <= 40; ++n) sizes.push_back(n);
  for (std::uint32_t n : {63U, 64U, 65U, 100U, 127U, 128U, 255U, 256U, 1000U, 1024U}) sizes.push_back(n);
  for (const auto n : sizes) {
    INFO("n = " << n);
    for (std::uint32_t r = 0; r < n; ++r) {
      const auto ring = world::ring_peers(r, n);
      const auto hd = world::halving_doubling_peers(r, n);
      REQUIRE(std::is_sorted(hd.begin(), hd.end()));
      CHECK(std::find(hd.begin(), hd.end(), r) == hd.end());
      for (const auto p : hd) {
        const auto back = world::halving_doubling_peers(p, n);
        CHECK(std::find(back.begin(), back.end(), r) != back.end());
      }
      if (n <= 64 || r % 97 == 0) {
        CHECK(as_set(ring) == partners(coll::Algorithm::kRing, n, r));
        CHECK(as_set(hd) == partners(coll::Algorithm::kRecursiveHalvingDoubling, n, r));
      }
      CHECK(world::all_peers(r, n).size() == n - 1);
    }
  }
  CHECK(world::ring_peers(0, 2) == std::vector<std::uint32_t>{1});
  CHECK(world::halving_doubling_peers(5, 8) == std::vector<std::uint32_t>{1, 4, 7});
  // n = 6: ranks 0-3 fold in pairs (rem 2); survivors 0, 2, 4, 5 (core 0..3).
  CHECK(world::halving_doubling_peers(1, 6) == std::vector<std::uint32_t>{0});
  CHECK(world::halving_doubling_peers(0, 6) == std::vector<std::uint32_t>{1, 2, 4});
}

TEST_CASE("the executor's arena keeps two copies of output and scratch, 64-byte aligned", "[world]") {
  const auto s = coll::build_schedule(coll::Collective::kAllReduce, coll::Algorithm::kRing, 4, 1, 1000, 4);
  const auto l = collbench::ArenaLayout::of(s);
  CHECK(l.input == 0);
  CHECK(l.output[0] == 4000 + 32);  // 4000 rounded up to 64
  CHECK(l.output[1] == l.output[0] + 4032);
  CHECK(l.scratch[0] == l.output[1] + 4032);
  CHECK(l.scratch[1] - l.scratch[0] == (s.scratch_bytes + 63) / 64 * 64);
  CHECK(l.total == l.scratch[1] + (s.scratch_bytes + 63) / 64 * 64);
  CHECK(l.offset(coll::Buf::kOutput, 3) == l.output[1]);
  CHECK(l.offset(coll::Buf::kInput, 1) == 0);
}
