// lib/kv WR plans: for every layout x merge x direction x fragmentation x TP pair x max SGE,
// every byte each decode rank needs is written exactly once, WRs respect max_sge, the counts are
// the formulas of plan.hpp, and executing the plans in memory gives pools that check clean.
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "fabench/kv/layout.hpp"
#include "fabench/kv/pattern.hpp"
#include "fabench/kv/plan.hpp"

using namespace fabench::kv;

namespace {

using Pools = std::vector<std::vector<std::byte>>;

// L = 2, S = 2, H = 8, 4 tokens x 4 elems x 2 B = 32 B per head chunk; B = 4 (last partial).
KvSpec gqa_spec() {
  KvSpec s;
  s.model = ModelShape{"gqa", 2, 8, 4, false, 0, 0, Dtype::kFp16};
  s.page_tokens = 4;
  s.isl = 13;
  s.batch = 2;
  return s;
}

// H = 2 (replicated past TP 2); chunks of 3 x 3 x 1 = 9 B, so words have a 1-byte tail.
KvSpec small_odd() {
  KvSpec s = gqa_spec();
  s.model = ModelShape{"odd", 3, 2, 3, false, 0, 0, Dtype::kFp8};
  s.page_tokens = 3;
  s.isl = 7;
  return s;
}

KvSpec small_mla() {
  KvSpec s = gqa_spec();
  s.model = ModelShape{"mla", 3, 1, 8, true, 6, 2, Dtype::kFp8};
  return s;
}

Pools make_pools(const KvSpec& s, Side side) {
  Pools pools;
  for (std::uint32_t r = 0; r < tp_size(s, side); ++r) pools.emplace_back(pool_bytes(s, side, r), std::byte{0xa5});
  return pools;
}

// Every decode byte written exactly once; WR shape rules. Returns a description of the first
// violation, or "".
std::string check_coverage(const KvSpec& s, const std::vector<PairPlan>& plans) {
  std::vector<std::vector<std::uint8_t>> hits;
  for (std::uint32_t j = 0; j < s.decode_tp; ++j) hits.emplace_back(pool_bytes(s, Side::kDecode, j), 0);
  for (const PairPlan& p : plans) {
    const bool push = p.direction == Direction::kPush;
    const std::uint64_t prefill_bytes = pool_bytes(s, Side::kPrefill, p.prefill_rank);
    for (const Wr& wr : p.wrs) {
      if (wr.segment_count < 1 || wr.segment_count > s.max_sge) return fmt::format("WR with {} SGEs", wr.segment_count);
      std::uint64_t sum = 0;
      for (const Segment& seg : p.local(wr)) {
        if (seg.length == 0) return "empty segment";
        const std::uint64_t local_size = push ? prefill_bytes : hits[p.decode_rank].size();
        if (seg.offset + seg.length > local_size) return "segment outside the local pool";
        if (!push) {
          for (std::uint64_t b = seg.offset; b < seg.offset + seg.length; ++b) ++hits[p.decode_rank][b];
        }
        sum += seg.length;
      }
      if (sum != wr.length) return "segments do not sum to the WR";
      const std::uint64_t remote_size = push ? hits[p.decode_rank].size() : prefill_bytes;
      if (wr.remote_offset + wr.length > remote_size) return "remote range outside the remote pool";
      if (push) {
        for (std::uint64_t b = wr.remote_offset; b < wr.remote_offset + wr.length; ++b) ++hits[p.decode_rank][b];
      }
    }
  }
  for (std::uint32_t j = 0; j < s.decode_tp; ++j) {
    for (std::uint64_t b = 0; b < hits[j].size(); ++b) {
      if (hits[j][b] != 1) return fmt::format("decode rank {} byte {} written {} times", j, b, hits[j][b]);
    }
  }
  return "";
}

// Executes the plans; returns the wrong pages over all decode ranks.
std::uint64_t run_and_check(const KvSpec& s, const std::vector<PairPlan>& plans, Pools& decode) {
  Pools prefill = make_pools(s, Side::kPrefill);
  for (std::uint32_t i = 0; i < s.prefill_tp; ++i) fill_pool(s, Side::kPrefill, i, prefill[i]);
  std::vector<std::span<const std::byte>> src(prefill.begin(), prefill.end());
  std::vector<std::span<std::byte>> dst(decode.begin(), decode.end());
  execute_in_memory(plans, src, dst);
  std::uint64_t wrong = 0;
  for (std::uint32_t j = 0; j < s.decode_tp; ++j) wrong += count_wrong_pages(s, Side::kDecode, j, decode[j]);
  return wrong;
}

std::uint64_t total_wrs(const std::vector<PairPlan>& plans) {
  std::uint64_t n = 0;
  for (const PairPlan& p : plans) n += p.wrs.size();
  return n;
}

}  // namespace

TEST_CASE("kv: every plan covers each decode byte once and executes clean", "[kv]") {
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> tps{{1, 1}, {2, 1}, {1, 2}, {2, 4}, {8, 2}};
  for (const KvSpec& base : {gqa_spec(), small_odd(), small_mla()}) {
    for (Layout layout : {Layout::kContiguous, Layout::kLayerMajor, Layout::kBlockMajor}) {
      for (bool merge : {true, false}) {
        for (Direction dir : {Direction::kPush, Direction::kPull}) {
          for (double frag : {0.0, 0.5, 1.0}) {
            for (const auto& [p, d] : tps) {
              for (std::uint32_t sge : {1u, 4u}) {
                KvSpec s = base;
                s.layout = layout;
                s.merge = merge;
                s.direction = dir;
                s.fragmentation = frag;
                s.prefill_tp = p;
                s.decode_tp = d;
                s.max_sge = sge;
                INFO(fmt::format("{} {} merge {} {} frag {} TP {}->{} sge {}", s.model.name, layout_name(layout), merge,
                                 direction_name(dir), frag, p, d, sge));
                const std::vector<PairPlan> plans = make_plans(s);
                REQUIRE(check_coverage(s, plans).empty());
                const PlanStats st = plan_stats(s);
                CHECK(st.wrs == total_wrs(plans));
                CHECK(st.pairs == plans.size());
                // Unmerged: one WR per page piece: batch x L x S x B per pair.
                const std::uint64_t pieces = std::uint64_t{s.batch} * s.model.layers * s.model.kv_tensors() *
                                             blocks_per_request(s) * plans.size();
                if (!merge) CHECK(st.wrs == pieces);
                CHECK(st.wrs <= pieces);
                for (const PairPlan& pp : plans) {
                  CHECK(pp.request_first_wr.size() == s.batch + 1);
                  CHECK(pp.request_first_wr.back() == pp.wrs.size());
                }
                Pools decode = make_pools(s, Side::kDecode);
                REQUIRE(run_and_check(s, plans, decode) == 0);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("kv: merged WR counts at fragmentation 0, by hand", "[kv]") {
  // small_gqa: batch 2, L = 2, S = 2, B = 4. Counts are for the whole batch, all pairs.
  struct Case {
    Layout layout;
    std::uint32_t p, d;
    Direction dir;
    std::uint32_t sge;
    std::uint64_t wrs;
  };
  const std::vector<Case> cases{
      // Equal TP: whole pages both sides. Layer-major: L x S per request; block-major and
      // contiguous: one per request.
      {Layout::kLayerMajor, 1, 1, Direction::kPush, 1, 2 * 4},
      {Layout::kLayerMajor, 1, 1, Direction::kPull, 4, 2 * 4},
      {Layout::kBlockMajor, 1, 1, Direction::kPush, 1, 2},
      {Layout::kContiguous, 1, 1, Direction::kPull, 1, 2},
      // 1 -> 2: halves of prefill pages into whole decode pages. Push: remote (decode)
      // contiguous, local scattered: up to sge pieces per WR. Pull: remote scattered: one per piece.
      {Layout::kLayerMajor, 1, 2, Direction::kPush, 1, 2 * 2 * 4 * 4},
      {Layout::kLayerMajor, 1, 2, Direction::kPush, 4, 2 * 2 * 4 * 1},
      {Layout::kLayerMajor, 1, 2, Direction::kPull, 4, 2 * 2 * 4 * 4},
      {Layout::kBlockMajor, 1, 2, Direction::kPush, 4, 2 * 2 * 4},  // 16 pieces per request in runs of 4
      {Layout::kContiguous, 1, 2, Direction::kPush, 4, 2 * 2 * 4},
      // 2 -> 1: the mirror image: pull gathers, push cannot.
      {Layout::kLayerMajor, 2, 1, Direction::kPull, 4, 2 * 2 * 4 * 1},
      {Layout::kLayerMajor, 2, 1, Direction::kPush, 4, 2 * 2 * 4 * 4},
      // 2 -> 4: four pairs, each half a prefill page into a whole decode page.
      {Layout::kLayerMajor, 2, 4, Direction::kPush, 4, 4 * 2 * 4 * 1},
      // 8 -> 2: an eighth of a decode page per pair; whole prefill pages: pull with 4 SGEs.
      {Layout::kLayerMajor, 8, 2, Direction::kPull, 4, 8 * 2 * 4 * 1},
      {Layout::kLayerMajor, 8, 2, Direction::kPush, 4, 8 * 2 * 4 * 4},
  };
  for (const Case& c : cases) {
    KvSpec s = gqa_spec();
    s.layout = c.layout;
    s.prefill_tp = c.p;
    s.decode_tp = c.d;
    s.direction = c.dir;
    s.max_sge = c.sge;
    INFO(fmt::format("{} TP {}->{} {} sge {}", layout_name(c.layout), c.p, c.d, direction_name(c.dir), c.sge));
    CHECK(total_wrs(make_plans(s)) == c.wrs);
    CHECK(plan_stats(s).wrs == c.wrs);
  }
}

TEST_CASE("kv: fragmentation costs merged WRs; max_wr_bytes caps a run", "[kv]") {
  KvSpec s = gqa_spec();
  s.batch = 4;
  s.isl = 64;  // 16 blocks, N = 64
  const std::uint64_t frag0 = plan_stats(s).wrs;
  CHECK(frag0 == 4 * 2 * 2);
  s.fragmentation = 1.0;
  const std::uint64_t frag1 = plan_stats(s).wrs;
  CHECK(frag1 > frag0);
  CHECK(frag1 <= 4 * 2 * 2 * 16);
  s.fragmentation = 0.0;
  s.layout = Layout::kContiguous;
  s.max_wr_bytes = 3 * 256;  // three pages: 64 pages per request in runs of 3 -> 22 WRs
  CHECK(plan_stats(s).wrs == 4 * 22);
  for (const PairPlan& p : make_plans(s)) {
    for (const Wr& wr : p.wrs) CHECK(wr.length <= 3 * 256);
  }
}

TEST_CASE("kv: a corrupted byte is one wrong page; two in one page still one", "[kv]") {
  KvSpec s = small_odd();
  s.layout = Layout::kBlockMajor;
  s.fragmentation = 0.5;
  s.decode_tp = 2;
  const std::vector<PairPlan> plans = make_plans(s);
  Pools decode = make_pools(s, Side::kDecode);
  REQUIRE(run_and_check(s, plans, decode) == 0);
  const std::uint64_t page = page_bytes(s, Side::kDecode);
  decode[1][5 * page + 8] ^= std::byte{1};  // the 1-byte tail of a 9-byte chunk
  CHECK(count_wrong_pages(s, Side::kDecode, 1, decode[1]) == 1);
  decode[1][5 * page + 0] ^= std::byte{0x80};
  CHECK(count_wrong_pages(s, Side::kDecode, 1, decode[1]) == 1);
  decode[1][7 * page + 3] ^= std::byte{0x10};
  CHECK(count_wrong_pages(s, Side::kDecode, 1, decode[1]) == 2);
  CHECK(count_wrong_pages(s, Side::kDecode, 0, decode[0]) == 0);
  // A pool nothing was written to is wrong everywhere: L x S x batch x B pages.
  const Pools blank = make_pools(s, Side::kDecode);
  CHECK(count_wrong_pages(s, Side::kDecode, 0, blank[0]) == 3 * 2 * 2 * 3);
}
