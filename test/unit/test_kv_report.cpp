// lib/kv --plan: Llama-3.1-70B at ISL 4096, TP 1, 16-token pages, against hand-computed counts
// and times; the time model and link rates.
#include <catch2/catch.hpp>

#include <string>

#include "fabench/kv/error.hpp"
#include "fabench/kv/plan.hpp"
#include "fabench/kv/plan_report.hpp"

using namespace fabench::kv;

namespace {

KvSpec llama70b() {
  KvSpec s;
  s.model = preset("llama-3.1-70b");
  s.isl = 4096;
  s.page_tokens = 16;
  return s;
}

}  // namespace

TEST_CASE("kv: link rates are bits per second, G = 1e9", "[kv]") {
  CHECK(parse_link_rate("400G") == 50e9);
  CHECK(parse_link_rate("200Gb") == 25e9);
  CHECK(parse_link_rate("100g") == 12.5e9);
  CHECK(parse_link_rate("25G") == 3.125e9);
  CHECK(parse_link_rate("50Gbps") == 6.25e9);
  CHECK(parse_link_rate("1.6Tbit/s") == 200e9);
  CHECK_THROWS_WITH(parse_link_rate("400GB"),
                    "link rate \"400GB\" is not a rate in bits per second (e.g. 400G, 200Gb, 50Gbps; G = 1e9)");
  CHECK_THROWS_AS(parse_link_rate("400"), KvError);
  CHECK_THROWS_AS(parse_link_rate("fast"), KvError);
  CHECK_THROWS_AS(parse_link_rate("-1G"), KvError);
}

TEST_CASE("kv: the time model: the wire or the posting, whichever is slower", "[kv]") {
  CHECK(predict_seconds(1000000000, 10, 50e9, 1e-6) == Approx(0.02));
  CHECK(predict_seconds(1000, 10000, 50e9, 1e-6) == Approx(0.01));
}

TEST_CASE("kv: Llama-3.1-70B plan counts: 40 960 WRs unmerged, 160 merged", "[kv]") {
  KvSpec s = llama70b();
  s.layout = Layout::kLayerMajor;
  s.merge = false;
  PlanStats st = plan_stats(s);
  CHECK(st.wrs == 40960);  // 80 layers x K,V x 256 pages
  CHECK(st.bytes == 1342177280);
  s.merge = true;
  CHECK(plan_stats(s).wrs == 160);
  s.layout = Layout::kBlockMajor;
  CHECK(plan_stats(s).wrs == 2);  // 1.25 GiB in runs of at most 1 GiB
  s.max_wr_bytes = std::uint64_t{1} << 31;
  CHECK(plan_stats(s).wrs == 1);
}

TEST_CASE("kv: Llama-3.1-70B --plan table and JSON, 400G and 1 us per WR", "[kv]") {
  const KvSpec s = llama70b();
  const std::string table = plan_table(s, 50e9, 1e-6);
  const std::string expected =
      "model                     llama-3.1-70b (bf16, 80 layers, 8 KV heads x head_dim 128)\n"
      "requests                  batch 1 x ISL 4096 tokens, 256 pages of 16 tokens each\n"
      "transfer                  prefill TP 1 -> decode TP 1, push, fragmentation 0, max SGE 1\n"
      "bytes/token               327680 model, 327680 per prefill rank, 327680 per decode rank\n"
      "bytes/page                32768 prefill, 32768 decode\n"
      "bytes/layer/request       16777216\n"
      "bytes/request             1342177280 model, 1342177280 moved to decode ranks\n"
      "pool bytes/rank           1342177280 prefill, 1342177280 decode\n"
      "link                      50 GB/s per rank, 1 us per WR (G = 1e9)\n"
      "\n"
      "layout      merge     WRs/request   WRs/request/pair      bytes/WR  batch time(us)       GB/s\n"
      "contiguous  yes                 2                  2     671088640         26843.5      50.00\n"
      "layer       yes               160                160       8388608         26843.5      50.00\n"
      "layer       no              40960              40960         32768         40960.0      32.77\n"
      "block       yes                 2                  2     671088640         26843.5      50.00\n"
      "block       no              40960              40960         32768         40960.0      32.77\n"
      "WRs/request/pair: the busiest pair. time: max over ranks of (bytes / link, WRs posted x per-WR cost).\n"
      "GB/s: the batch's bytes, all ranks together, over that time.\n";
  CHECK(table == expected);

  const nlohmann::json j = plan_json(s, 50e9, 1e-6);
  CHECK(j["sizes"]["bytes_per_token"] == 327680);
  CHECK(j["sizes"]["request_bytes"] == 1342177280);
  CHECK(j["sizes"]["pages_per_request"] == 256);
  CHECK(j["model"]["layers"] == 80);
  REQUIRE(j["plans"].size() == 5);
  CHECK(j["plans"][1]["layout"] == "layer");
  CHECK(j["plans"][1]["merge"] == true);
  CHECK(j["plans"][1]["wrs"] == 160);
  CHECK(j["plans"][2]["wrs"] == 40960);
  CHECK(j["plans"][2]["bytes_per_wr_mean"] == 32768.0);
  CHECK(j["plans"][2]["predicted_seconds"].get<double>() == Approx(0.04096));
  CHECK(j["plans"][2]["predicted_gbytes_per_s"].get<double>() == Approx(32.768));
  CHECK(j["plans"][0]["predicted_seconds"].get<double>() == Approx(0.0268435456));
}

TEST_CASE("kv: DeepSeek-R1 TP 2 -> 4: the latent is replicated, each decode rank pulls it whole", "[kv]") {
  KvSpec s;
  s.model = preset("deepseek-r1");
  s.page_tokens = 64;
  s.prefill_tp = 2;
  s.decode_tp = 4;
  s.direction = Direction::kPull;
  const PlanStats st = plan_stats(s);
  CHECK(st.pairs == 4);
  CHECK(st.bytes == 4ull * 70272 * 4096);
  CHECK(st.wrs == 4 * 61);                          // one WR per layer per pair (one latent pool per layer)
  CHECK(st.max_rank_bytes == 2ull * 70272 * 4096);  // each prefill rank serves two decode ranks
  CHECK(st.max_poster_wrs == 61);
}
