// lib/kv memory model: heads per TP rank, page tables (fragmentation), page addresses per
// layout, pool sizes and the spec's validation errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabench/kv/error.hpp"
#include "fabench/kv/layout.hpp"
#include "fabench/kv/plan.hpp"

using namespace fabench::kv;

namespace {

KvSpec small_gqa() {
  KvSpec s;
  s.model = ModelShape{"small", 2, 8, 4, false, 0, 0, Dtype::kFp16};
  s.page_tokens = 4;
  s.isl = 13;  // 4 blocks, the last one partial
  s.batch = 2;
  return s;
}

}  // namespace

TEST_CASE("kv: heads per TP rank, split and replicated", "[kv]") {
  KvSpec s = small_gqa();
  s.prefill_tp = 2;
  s.decode_tp = 8;
  CHECK(rank_heads(s, Side::kPrefill, 1) == HeadRange{4, 4});
  CHECK(rank_heads(s, Side::kDecode, 5) == HeadRange{5, 1});
  s.model.kv_heads = 2;  // fewer heads than decode ranks: each holds floor(r * 2 / 8)
  CHECK(rank_heads(s, Side::kDecode, 3) == HeadRange{0, 1});
  CHECK(rank_heads(s, Side::kDecode, 4) == HeadRange{1, 1});
  CHECK(page_bytes(s, Side::kPrefill) == 4 * 4 * 2);  // one head of 4 tokens x 4 elems x 2 B
  CHECK_THROWS_WITH(rank_heads(s, Side::kDecode, 8), "decode rank 8 is outside TP 8");
  s.model.kv_heads = 8;
  s.prefill_tp = 3;
  CHECK_THROWS_WITH(validate(s),
                    "prefill TP 3 does not divide the model's 8 KV heads (use a divisor, or more ranks than heads)");
  // More ranks than heads: each head on TP / heads ranks, so a multiple (as vLLM requires).
  s.prefill_tp = 12;
  CHECK_THROWS_WITH(validate(s), "prefill TP 12 is not a multiple of the model's 8 KV heads (with more ranks than "
                                 "heads, each head is replicated on TP / heads ranks)");
  s.prefill_tp = 16;
  CHECK_NOTHROW(validate(s));
}

TEST_CASE("kv: routes: who sends which heads to whom", "[kv]") {
  KvSpec s = small_gqa();
  s.prefill_tp = 8;
  s.decode_tp = 2;
  std::vector<Route> r = routes(s);
  REQUIRE(r.size() == 8);
  CHECK((r[5].prefill_rank == 5 && r[5].decode_rank == 1 && r[5].heads == HeadRange{5, 1}));
  s.model.kv_heads = 2;  // head 0 on prefill ranks 0..3, head 1 on 4..7: decode j takes from the (j mod 4)-th
  r = routes(s);
  REQUIRE(r.size() == 2);
  CHECK((r[0].prefill_rank == 0 && r[0].decode_rank == 0 && r[0].heads == HeadRange{0, 1}));
  CHECK((r[1].prefill_rank == 5 && r[1].decode_rank == 1 && r[1].heads == HeadRange{1, 1}));
  s.model = ModelShape{"mla", 3, 1, 8, true, 6, 2, Dtype::kFp8};  // MLA: decode j from prefill j mod p
  s.prefill_tp = 2;
  s.decode_tp = 4;
  r = routes(s);
  REQUIRE(r.size() == 4);
  CHECK((r[0].prefill_rank == 0 && r[0].decode_rank == 0));
  CHECK((r[1].prefill_rank == 0 && r[1].decode_rank == 2));
  CHECK((r[2].prefill_rank == 1 && r[2].decode_rank == 1));
  CHECK((r[3].prefill_rank == 1 && r[3].decode_rank == 3));
}

TEST_CASE("kv: page tables: consecutive at fragmentation 0, permutations with exactly round(f N) moved", "[kv]") {
  KvSpec s = small_gqa();
  s.batch = 5;
  s.isl = 40;  // 10 blocks, N = 50
  for (Side side : {Side::kPrefill, Side::kDecode}) {
    const std::vector<std::uint32_t> t0 = page_table(s, side);
    for (std::uint32_t i = 0; i < t0.size(); ++i) CHECK(t0[i] == i);
  }
  for (double f : {0.5, 1.0}) {
    s.fragmentation = f;
    const std::vector<std::uint32_t> p = page_table(s, Side::kPrefill);
    const std::vector<std::uint32_t> d = page_table(s, Side::kDecode);
    for (const auto* t : {&p, &d}) {
      std::vector<std::uint32_t> sorted = *t;
      std::sort(sorted.begin(), sorted.end());
      for (std::uint32_t i = 0; i < sorted.size(); ++i) CHECK(sorted[i] == i);  // every id once
      std::size_t moved = 0;
      for (std::uint32_t i = 0; i < t->size(); ++i) moved += (*t)[i] != i;
      CHECK(moved == (f == 0.5 ? 25u : 50u));
    }
    CHECK(p != d);                              // independent sides
    CHECK(page_table(s, Side::kPrefill) == p);  // deterministic
    s.seed = 2;
    CHECK(page_table(s, Side::kPrefill) != p);
    s.seed = 1;
  }
  s.layout = Layout::kContiguous;  // no page table
  const std::vector<std::uint32_t> c = page_table(s, Side::kDecode);
  CHECK(std::is_sorted(c.begin(), c.end()));
}

TEST_CASE("kv: page addresses per layout", "[kv]") {
  KvSpec s = small_gqa();  // L = 2, S = 2, B = 4, N = 8, P = 8 heads x 32 B = 256
  s.fragmentation = 0.0;
  const std::uint64_t p = 256;
  s.layout = Layout::kLayerMajor;
  CHECK(PoolMap(s, Side::kPrefill, 0).page_offset(1, 1, 0, 2) == ((1 * 2 + 0) * 8 + (1 * 4 + 2)) * p);
  s.layout = Layout::kBlockMajor;
  CHECK(PoolMap(s, Side::kPrefill, 0).page_offset(1, 1, 0, 2) == ((1 * 4 + 2) * 4 + 1 * 2 + 0) * p);
  s.layout = Layout::kContiguous;
  CHECK(PoolMap(s, Side::kPrefill, 0).page_offset(1, 1, 0, 2) == ((1 * 4 + 1 * 2 + 0) * 4 + 2) * p);
  CHECK(pool_bytes(s, Side::kPrefill, 0) == 2 * 2 * 8 * p);
  s.decode_tp = 2;
  CHECK(pool_bytes(s, Side::kDecode, 1) == 2 * 2 * 8 * p / 2);
  s.layout = Layout::kLayerMajor;
  s.fragmentation = 1.0;
  const PoolMap m(s, Side::kDecode, 1);
  const std::vector<std::uint32_t> t = page_table(s, Side::kDecode);
  CHECK(m.page_offset(1, 1, 1, 3) == ((1 * 2 + 1) * 8 + t[1 * 4 + 3]) * (p / 2));
}

TEST_CASE("kv: sizes of Llama-3.1-70B at ISL 4096, TP 1 -> 2", "[kv]") {
  KvSpec s;
  s.model = preset("llama-3.1-70b");
  s.decode_tp = 2;
  const Sizes z = sizes(s);
  CHECK(z.bytes_per_token == 327680);
  CHECK(z.prefill_rank_bytes_per_token == 327680);
  CHECK(z.decode_rank_bytes_per_token == 163840);
  CHECK(z.prefill_page_bytes == 32768);  // 8 heads x 16 tokens x 128 x 2 B
  CHECK(z.decode_page_bytes == 16384);
  CHECK(z.pages_per_request == 256);
  CHECK(z.layer_bytes_per_request == 16777216);
  CHECK(z.request_bytes == 1342177280);
  CHECK(z.moved_bytes_per_request == 1342177280);
  CHECK(z.prefill_pool_bytes == 1342177280);
  CHECK(z.decode_pool_bytes == 671088640);
}

TEST_CASE("kv: spec validation errors", "[kv]") {
  KvSpec s = small_gqa();
  s.fragmentation = 1.5;
  CHECK_THROWS_WITH(validate(s), "fragmentation must be within 0..1 (got 1.5)");
  s = small_gqa();
  s.page_tokens = 0;
  CHECK_THROWS_WITH(validate(s), "page tokens must be at least 1");
  s = small_gqa();
  s.max_wr_bytes = 100;
  CHECK_THROWS_WITH(validate(s), "max WR bytes 100 is below one page (256 B)");
  s = small_gqa();
  s.model.layers = 0;
  CHECK_THROWS_AS(validate(s), KvError);
  CHECK(parse_layout("block") == Layout::kBlockMajor);
  CHECK_THROWS_WITH(parse_layout("paged"), "unknown layout \"paged\" (contiguous, layer, block)");
  CHECK(parse_direction("pull") == Direction::kPull);
}
