// lib/ep: the per-rank plan's arithmetic (hand-computed bytes for two presets and a config),
// and the simulation of dispatch + combine with every byte checked, up to 1024 ranks, whose
// bytes and WRs must equal the plan's.
#include <catch2/catch.hpp>

#include "fabench/ep/plan.hpp"
#include "fabench/ep/exchange.hpp"
#include "fabench/ep/simulate.hpp"

#include <numeric>

using namespace fabench::ep;

namespace {

EpConfig config(MoeShape m, std::uint32_t ranks, std::uint32_t tokens, Mode mode, DispatchDtype dt) {
  return EpConfig{std::move(m), ranks, 1, tokens, mode, dt};
}

std::uint64_t sum_fabric_sent(const EpPlan& p, bool dispatch) {
  std::uint64_t s = 0;
  for (const auto& r : p.ranks) s += dispatch ? r.dispatch_sent.fabric + r.header_bytes : r.combine_sent.fabric;
  return s;
}

std::uint64_t sum_wrs(const EpPlan& p, bool dispatch) {
  std::uint64_t s = 0;
  for (const auto& r : p.ranks) s += dispatch ? r.dispatch_wrs : r.combine_wrs;
  return s;
}

void plan_equals_simulation(const EpConfig& c, const Router& router) {
  const EpPlan p = make_plan(c, router);
  const SimResult sim = simulate(c, router);
  CHECK(sim.bad_copies == 0);
  CHECK(sim.bad_tokens == 0);
  CHECK(sim.tokens == std::uint64_t{c.tokens} * c.ranks);
  CHECK(sim.dispatch_sent == sum_fabric_sent(p, true));
  CHECK(sim.combine_sent == sum_fabric_sent(p, false));
  CHECK(sim.dispatch_wrs == sum_wrs(p, true));
  CHECK(sim.combine_wrs == sum_wrs(p, false));
  std::uint64_t recv = 0;
  for (const auto& r : p.ranks) recv += r.recv_copies;
  CHECK(sim.copies == recv);
}

}  // namespace

TEST_CASE("ep plan: Mixtral, 2 ranks, every copy counted by hand", "[ep]") {
  // Mixtral-8x7b: top-2 of 8 experts, rank 0 holds 0-3, rank 1 holds 4-7. Rank 0's tokens:
  // tokens with both experts on rank 1 go there once (normal) or twice (low-latency).
  const MoeShape m = preset("mixtral-8x7b");
  const Router router(m, 2, {}, 11);
  const Routing r0 = router.route(0, 64);
  std::uint64_t to1_tokens = 0, to1_pairs = 0;
  for (std::uint32_t t = 0; t < 64; ++t) {
    const auto ids = r0.token(t);
    const int on1 = (ids[0] >= 4) + (ids[1] >= 4);
    to1_tokens += on1 > 0;
    to1_pairs += on1;
  }
  const EpPlan normal = make_plan(config(m, 2, 64, Mode::kNormal, DispatchDtype::kBf16), router);
  CHECK(normal.ranks[0].copies_to[1] == to1_tokens);
  CHECK(normal.ranks[0].dispatch_sent.fabric == to1_tokens * 8192);
  CHECK(normal.ranks[0].combine_recv.fabric == to1_tokens * 8192);
  CHECK(normal.ranks[0].dispatch_wrs == 1 + (to1_tokens > 0));  // the count, then the payload
  const EpPlan ll = make_plan(config(m, 2, 64, Mode::kLowLatency, DispatchDtype::kFp8), router);
  CHECK(ll.ranks[0].copies_to[1] == to1_pairs);
  CHECK(ll.ranks[0].dispatch_sent.fabric == to1_pairs * (4096 + 32 * 4));
  CHECK(ll.ranks[0].header_bytes == 4 * 4);  // rank 1's four local experts' counts
  CHECK(ll.ranks[0].dispatch_wrs == 1);
}

TEST_CASE("ep plan: DeepSeek-V3, 4096 tokens, 8 ranks: bytes per token copy and totals", "[ep]") {
  const MoeShape m = preset("deepseek-v3");
  const Router router(m, 8, {}, 5);
  const EpPlan p = make_plan(config(m, 8, 4096, Mode::kNormal, DispatchDtype::kFp8), router);
  std::uint64_t copies = 0;
  for (const auto& r : p.ranks) {
    for (std::uint32_t d = 0; d < 8; ++d) copies += r.copies_to[d];
    CHECK(r.dispatch_sent.fabric + r.dispatch_sent.local == std::uint64_t{7392} * std::accumulate(r.copies_to.begin(), r.copies_to.end(), 0ull));
  }
  CHECK(copies == std::accumulate(p.ranks.begin(), p.ranks.end(), 0ull, [](auto a, const auto& r) { return a + r.recv_copies; }));
  // With 4 of 8 groups and one group per rank, a token reaches at most 4 ranks.
  CHECK(copies <= 8ull * 4096 * 4);
  CHECK(p.recv_copies_max() >= p.recv_copies_mean());
}

TEST_CASE("ep plan: a hot rank receives R x the mean, and the prediction grows with it", "[ep]") {
  // Low-latency mode: a copy per (token, expert), so the copies follow the picks exactly.
  const MoeShape m = preset("qwen3-235b-a22b");
  const EpConfig c = config(m, 8, 512, Mode::kLowLatency, DispatchDtype::kBf16);
  const EpPlan even = make_plan(c, Router(m, 8, {}, 2));
  const EpPlan hot = make_plan(c, Router(m, 8, parse_skew("hot-rank:4"), 2));
  CHECK(hot.ranks[7].recv_copies / hot.recv_copies_mean() == Approx(4.0).epsilon(0.01));
  CHECK(even.recv_copies_max() / even.recv_copies_mean() < 1.1);
  const double link = 50e9;
  CHECK(predict(hot, link, 0, 0).combine_s > 3 * predict(even, link, 0, 0).combine_s);
  // Normal mode sends a token once per rank: the hot rank's copies saturate at every token.
  const EpConfig n = config(m, 8, 512, Mode::kNormal, DispatchDtype::kBf16);
  CHECK(make_plan(n, Router(m, 8, parse_skew("hot-rank:4"), 2)).ranks[7].recv_copies == 8 * 512);
}

TEST_CASE("ep plan: ranks per node forward inside the node, one fabric copy per node", "[ep]") {
  const MoeShape m = preset("deepseek-v3");
  const Router router(m, 16, {}, 9);
  EpConfig c = config(m, 16, 256, Mode::kNormal, DispatchDtype::kBf16);
  const EpPlan flat = make_plan(c, router);
  c.ranks_per_node = 8;
  const EpPlan nodes = make_plan(c, router);
  std::uint64_t flat_fabric = 0, node_fabric = 0, node_intra = 0;
  for (std::uint32_t r = 0; r < 16; ++r) {
    flat_fabric += flat.ranks[r].dispatch_sent.fabric;
    node_fabric += nodes.ranks[r].dispatch_sent.fabric;
    node_intra += nodes.ranks[r].dispatch_sent.intra;
    CHECK(nodes.ranks[r].recv_copies == flat.ranks[r].recv_copies);  // the same tokens reach each rank
  }
  CHECK(node_fabric < flat_fabric);
  CHECK(node_intra > 0);
  c.ranks_per_node = 5;
  CHECK_THROWS_WITH(make_plan(c, router), Catch::Contains("--ranks-per-node 5 does not divide the 16 ranks"));
}

TEST_CASE("ep simulation: every copy and every combined token bit for bit, and the plan's counts", "[ep]") {
  SECTION("mixtral 2 and 3 ranks, both modes") {
    const MoeShape m = preset("mixtral-8x7b");
    for (const std::uint32_t n : {2u, 3u}) {
      const Router router(m, n, {}, n);
      for (const Mode mode : {Mode::kNormal, Mode::kLowLatency}) {
        plan_equals_simulation(config(m, n, 40, mode, DispatchDtype::kBf16), router);
      }
    }
  }
  SECTION("deepseek-v3 shape at hidden 128, 8 ranks, fp8, hot-rank skew") {
    MoeShape m = preset("deepseek-v3");
    m.hidden = 128;
    const Router router(m, 8, parse_skew("hot-rank:3"), 4);
    plan_equals_simulation(config(m, 8, 64, Mode::kNormal, DispatchDtype::kFp8), router);
    plan_equals_simulation(config(m, 8, 64, Mode::kLowLatency, DispatchDtype::kFp8), router);
  }
  SECTION("1024 ranks, 1024 experts, top-8, 4 tokens each") {
    const MoeShape m{"wide", 64, 1024, 8, 1, 1};
    const Router router(m, 1024, parse_skew("zipf:1"), 8);
    plan_equals_simulation(config(m, 1024, 4, Mode::kLowLatency, DispatchDtype::kBf16), router);
    plan_equals_simulation(config(m, 1024, 4, Mode::kNormal, DispatchDtype::kBf16), router);
  }
}

TEST_CASE("ep simulation notices a corrupted copy", "[ep]") {
  const MoeShape m = preset("mixtral-8x7b");
  const Router router(m, 2, {}, 1);
  const EpConfig c = config(m, 2, 16, Mode::kNormal, DispatchDtype::kBf16);
  Exchange a(c, router.placement(), 0, router.route(0, 16));
  Exchange b(c, router.placement(), 1, router.route(1, 16));
  std::vector<std::byte> region(a.dispatch_bytes_to(1));
  a.pack_dispatch(1, region);
  REQUIRE(a.copies_to(1) > 0);
  region[region.size() - 1] ^= std::byte{1};
  std::vector<std::byte> reply(b.combine_region_bytes());
  std::uint64_t replied = 0;
  CHECK(b.receive_dispatch(0, region, a.copies_to(1), reply, &replied) == 1);
  region[region.size() - 1] ^= std::byte{1};
  CHECK(b.receive_dispatch(1, region, a.copies_to(1), reply, &replied) == a.copies_to(1));  // wrong source
}
