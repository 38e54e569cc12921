// lib/ep: MoE shapes (presets, config.json), routing (exact top-k, group limit, skews, replay)
// and per-token bytes.
#include <algorithm>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>

#include "fabench/ep/model.hpp"
#include "fabench/ep/routing.hpp"
#include "fabench/kv/error.hpp"
#include "temp_dir.hpp"

using namespace fabench::ep;

namespace {

std::filesystem::path write(const fabench::test::TempDir& dir, const std::string& name, const std::string& text) {
  return dir.write(name, text);
}

// Every token's ids distinct and in range; returns the picks per expert.
std::vector<std::uint64_t> check_routing(const Routing& r, const MoeShape& m) {
  std::vector<std::uint64_t> picks(m.experts);
  for (std::uint32_t t = 0; t < r.tokens; ++t) {
    const auto ids = r.token(t);
    std::set<std::uint16_t> s(ids.begin(), ids.end());
    REQUIRE(s.size() == m.top_k);
    for (const auto e : ids) {
      REQUIRE(e < m.experts);
      ++picks[e];
    }
  }
  return picks;
}

}  // namespace

TEST_CASE("ep presets carry the published MoE shapes", "[ep]") {
  const MoeShape ds = preset("DeepSeek-V3");
  CHECK(ds.hidden == 7168);
  CHECK(ds.experts == 256);
  CHECK(ds.top_k == 8);
  CHECK(ds.n_group == 8);
  CHECK(ds.topk_group == 4);
  CHECK(preset("qwen3-235b-a22b").experts == 128);
  CHECK(preset("mixtral-8x7b").top_k == 2);
  CHECK(preset("gpt-oss-120b").hidden == 2880);
  CHECK(preset("llama-4-maverick").top_k == 1);
  CHECK(preset_names().size() == 6);
  CHECK_THROWS_WITH(preset("gpt-5"), Catch::Contains("unknown model \"gpt-5\"") && Catch::Contains("deepseek-v3"));
}

TEST_CASE("ep bytes per token copy: bf16 2 x hidden, fp8 hidden + 4 per 128", "[ep]") {
  CHECK(dispatch_token_bytes(7168, DispatchDtype::kBf16) == 14336);
  CHECK(dispatch_token_bytes(7168, DispatchDtype::kFp8) == 7168 + 56 * 4);  // 7392
  CHECK(dispatch_token_bytes(2880, DispatchDtype::kFp8) == 2880 + 23 * 4);  // 22.5 blocks -> 23 scales
  CHECK(combine_token_bytes(4096) == 8192);
  CHECK(parse_dispatch_dtype("FP8") == DispatchDtype::kFp8);
  CHECK_THROWS_WITH(parse_dispatch_dtype("fp4"), "unknown dispatch dtype \"fp4\" (bf16 or fp8)");
}

TEST_CASE("ep config.json: experts under three names, group limit, errors naming the field", "[ep]") {
  fabench::test::TempDir dir;
  const auto ds = write(dir, "ds.json",
                        R"({"hidden_size": 7168, "n_routed_experts": 256, "num_experts_per_tok": 8, "n_group": 8,
                            "topk_group": 4, "_name_or_path": "deepseek-ai/DeepSeek-V3"})");
  const MoeShape m = load_hf_config(ds);
  CHECK(m.name == "deepseek-ai/DeepSeek-V3");
  CHECK(m.experts == 256);
  CHECK(m.group_limited());
  const auto mx = write(dir, "mx.json", R"({"hidden_size": 4096, "num_local_experts": 8, "num_experts_per_tok": 2})");
  CHECK(load_hf_config(mx).experts == 8);
  CHECK_FALSE(load_hf_config(mx).group_limited());
  const auto nested = write(dir, "l4.json",
                            R"({"text_config": {"hidden_size": 5120, "num_local_experts": 128, "num_experts_per_tok": 1}})");
  CHECK(load_hf_config(nested).hidden == 5120);
  const auto dense = write(dir, "dense.json", R"({"hidden_size": 4096, "num_attention_heads": 32})");
  CHECK_THROWS_WITH(load_hf_config(dense), Catch::Contains("dense.json: n_routed_experts is missing") && Catch::Contains("not a MoE model"));
  const auto half = write(dir, "half.json", R"({"hidden_size": 4096, "num_experts": 64, "num_experts_per_tok": 2, "n_group": 4})");
  CHECK_THROWS_WITH(load_hf_config(half), Catch::Contains("half.json: topk_group is missing"));
  const auto bad = write(dir, "bad.json", R"({"hidden_size": "4096", "num_experts": 64, "num_experts_per_tok": 2})");
  CHECK_THROWS_WITH(load_hf_config(bad), Catch::Contains("bad.json: hidden_size must be a positive integer (got \"4096\")"));
  const auto wide = write(dir, "wide.json", R"({"hidden_size": 4096, "num_experts": 64, "num_experts_per_tok": 32})");
  CHECK_THROWS_WITH(load_hf_config(wide), Catch::Contains("num_experts_per_tok 32 is not in 1..16"));
  CHECK_THROWS_AS(load_hf_config(dir.write("x", "").parent_path() / "none.json"), fabench::kv::KvError);
}

TEST_CASE("ep placement: contiguous blocks, the first experts % ranks ranks one more", "[ep]") {
  const Placement p(256, 3);  // 86, 85, 85
  CHECK(p.count(0) == 86);
  CHECK(p.count(2) == 85);
  CHECK(p.first(1) == 86);
  CHECK(p.first(2) == 171);
  for (std::uint32_t e = 0; e < 256; ++e) {
    const auto r = p.owner(e);
    REQUIRE(e >= p.first(r));
    REQUIRE(e < p.first(r) + p.count(r));
  }
  CHECK_THROWS_WITH(Placement(8, 16), Catch::Contains("8 experts cannot be placed on 16 ranks"));
}

TEST_CASE("ep uniform routing: exact top-k, reproducible, every expert near k/E", "[ep]") {
  const MoeShape m = preset("qwen3-235b-a22b");
  const Router a(m, 8, {}, 7);
  const Routing r = a.route(3, 4096);
  CHECK(r.ids == Router(m, 8, {}, 7).route(3, 4096).ids);
  CHECK(r.ids != a.route(4, 4096).ids);
  const auto picks = check_routing(r, m);
  const double mean = 4096.0 * 8 / 128;  // 256
  for (const auto n : picks) CHECK(std::abs(static_cast<double>(n) - mean) < 6 * std::sqrt(mean));
}

TEST_CASE("ep group-limited routing: a token's experts lie in at most topk_group groups", "[ep]") {
  const MoeShape m = preset("deepseek-v3");
  const Routing r = Router(m, 16, {}, 1).route(0, 2000);
  check_routing(r, m);
  for (std::uint32_t t = 0; t < r.tokens; ++t) {
    std::set<std::uint32_t> groups;
    for (const auto e : r.token(t)) groups.insert(e / m.experts_per_group());
    REQUIRE(groups.size() <= 4);
  }
}

TEST_CASE("ep skews: hot expert, hot rank and zipf have their shape", "[ep]") {
  const MoeShape m = preset("qwen3-235b-a22b");
  const std::uint32_t tokens = 20000;
  SECTION("hot-expert:4 picks the last expert 4 x as often as the mean") {
    const Router router(m, 8, parse_skew("hot-expert:4"), 3);
    const auto picks = check_routing(router.route(0, tokens), m);
    const double mean = tokens * 8.0 / 128;
    CHECK(picks[127] / mean == Approx(4.0).epsilon(0.08));
  }
  SECTION("hot-rank:4 gives the last rank 4 x the mean rank's picks") {
    const Router router(m, 8, parse_skew("hot-rank:4"), 3);
    const auto picks = check_routing(router.route(0, tokens), m);
    std::uint64_t hot = 0;
    for (std::uint32_t e = router.placement().first(7); e < 128; ++e) hot += picks[e];
    CHECK(hot / (tokens * 8.0 / 8) == Approx(4.0).epsilon(0.02));
  }
  SECTION("zipf:1.2: the most popular expert far above the median") {
    const Router router(m, 8, parse_skew("zipf:1.2"), 3);
    auto picks = check_routing(router.route(0, tokens), m);
    std::sort(picks.begin(), picks.end());
    CHECK(picks.back() > 8 * picks[64]);
  }
  SECTION("hot-rank with the group limit keeps both") {
    const MoeShape ds = preset("deepseek-v3");
    const Router router(ds, 8, parse_skew("hot-rank:2"), 3);
    const Routing r = router.route(1, 4000);
    const auto picks = check_routing(r, ds);
    std::uint64_t hot = 0;
    for (std::uint32_t e = 224; e < 256; ++e) hot += picks[e];
    CHECK(hot / (4000 * 8.0 / 8) == Approx(2.0).epsilon(0.03));
    for (std::uint32_t t = 0; t < r.tokens; ++t) {
      std::set<std::uint32_t> groups;
      for (const auto e : r.token(t)) groups.insert(e / 32);
      REQUIRE(groups.size() <= 4);
    }
  }
  CHECK_THROWS_WITH(Router(m, 8, parse_skew("hot-rank:9"), 1), Catch::Contains("exceed what it can take"));
  CHECK_THROWS_WITH(Router(m, 8, parse_skew("hot-expert:20"), 1), Catch::Contains("more than every token"));
  CHECK_THROWS_WITH(parse_skew("hot-rank"), Catch::Contains("expected KIND:VALUE"));
  CHECK_THROWS_WITH(parse_skew("zipf:x"), Catch::Contains("\"x\" is not a number"));
  CHECK_THROWS_WITH(parse_skew("hot-node:2"), Catch::Contains("unknown kind \"hot-node\""));
  CHECK(skew_name(parse_skew("hot-rank:4")) == "hot-rank:4");
}

TEST_CASE("ep routing replay: lines cycle over ranks' tokens; bad lines name file and line", "[ep]") {
  fabench::test::TempDir dir;
  const MoeShape m = preset("mixtral-8x7b");
  const auto good = write(dir, "r.txt", "# recorded\n0 1\n2,3\n\n7 6\n");
  const Router router(m, 2, load_replay(good, m));
  const Routing r = router.route(1, 4);  // lines 4..7 mod 3: 1, 2, 0, 1
  CHECK(r.ids == std::vector<std::uint16_t>{2, 3, 7, 6, 0, 1, 2, 3});
  CHECK_THROWS_WITH(load_replay(write(dir, "a.txt", "0 1\n3\n"), m), Catch::Contains("a.txt:2: 1 experts, the model routes to 2"));
  CHECK_THROWS_WITH(load_replay(write(dir, "b.txt", "0 8\n"), m), Catch::Contains("b.txt:1: expert ids are integers in 0..7"));
  CHECK_THROWS_WITH(load_replay(write(dir, "c.txt", "5 5\n"), m), Catch::Contains("c.txt:1: an expert twice"));
  CHECK_THROWS_WITH(load_replay(write(dir, "d.txt", "# only\n"), m), Catch::Contains("no routing lines"));
}
