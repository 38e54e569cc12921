// fabench-kv's command line, driven through CLI11 as the binary drives it: the benchmarks the
// flags ask for (names, order, kind, what each one's KvSpec holds), the one-line errors for bad
// values and contradictions, --model-config, page sizes and dtypes, and --plan's output.
#include <catch2/catch.hpp>

#include <stdlib.h>  // mkdtemp

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "fabench/harness/cli.hpp"
#include "fabench/kv/error.hpp"
#include "fabench/kvbench/cli.hpp"
#include "temp_dir.hpp"

using fabench::harness::UsageError;
using fabench::kv::KvError;
using namespace fabench::kvbench;
namespace kv = fabench::kv;
namespace fs = std::filesystem;
using fabench::test::TempDir;

namespace {

// The Cli after CLI11 parsed `args` with fabench-kv's options (a parse error fails the test).
Cli parse(const std::vector<std::string>& args) {
  CLI::App app;
  Cli c;
  add_options(app, c);
  std::vector<const char*> argv{"fabench-kv"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  return c;
}

std::vector<KvBench> benches(const std::vector<std::string>& args) { return build_benches(parse(args)); }

std::vector<std::string> names(const std::vector<KvBench>& bs) {
  std::vector<std::string> out;
  for (const auto& b : bs) out.push_back(b.name());
  return out;
}

// The UsageError's line, "(no error)" when build_benches accepted `args`; other exceptions
// propagate and fail the test.
std::string usage_error(const std::vector<std::string>& args) {
  try {
    (void)benches(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string kv_error(const std::vector<std::string>& args) {
  try {
    (void)benches(args);
  } catch (const KvError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("kvbench cli: defaults: the implied contiguous ceiling, then layer-major", "[kvbench]") {
  const auto bs = benches({});
  REQUIRE(bs.size() == 2);
  CHECK(names(bs) == std::vector<std::string>{"kv/llama-3.1-8b/contiguous/push/isl4096/tp1-1",
                                              "kv/llama-3.1-8b/layer/push/isl4096/tp1-1/frag0"});
  CHECK(bs[0].implied);
  CHECK_FALSE(bs[1].implied);
  for (const auto& b : bs) {
    CHECK(b.kind == BenchKind::kTransfer);
    CHECK(b.spec.model.name == "llama-3.1-8b");
    CHECK(b.spec.isl == 4096);
    CHECK(b.spec.page_tokens == 16);
    CHECK(b.spec.batch == 1);
    CHECK(b.spec.direction == kv::Direction::kPush);
    CHECK(b.spec.max_sge == 1);
    CHECK(b.spec.fragmentation == 0.0);
    CHECK(b.transfer.signal_every == 16);
    CHECK(b.transfer.post_list == 1);
  }
  CHECK(bs[0].spec.layout == kv::Layout::kContiguous);
  CHECK(bs[1].spec.layout == kv::Layout::kLayerMajor);
  CHECK(bs[1].spec.merge);
}

TEST_CASE("kvbench cli: layouts x fragmentations x merges, in order; contiguous listed is not implied", "[kvbench]") {
  const auto bs = benches({"--layout", "contiguous,layer,block", "--frag", "0,1", "--merge", "on,off"});
  const std::string p = "kv/llama-3.1-8b/";
  CHECK(names(bs) == std::vector<std::string>{
                         p + "contiguous/push/isl4096/tp1-1",
                         p + "layer/push/isl4096/tp1-1/frag0",
                         p + "layer/push/isl4096/tp1-1/frag0+unmerged",
                         p + "layer/push/isl4096/tp1-1/frag1",
                         p + "layer/push/isl4096/tp1-1/frag1+unmerged",
                         p + "block/push/isl4096/tp1-1/frag0",
                         p + "block/push/isl4096/tp1-1/frag0+unmerged",
                         p + "block/push/isl4096/tp1-1/frag1",
                         p + "block/push/isl4096/tp1-1/frag1+unmerged",
                     });
  REQUIRE(bs.size() == 9);
  for (const auto& b : bs) CHECK_FALSE(b.implied);
  CHECK(bs[4].spec.layout == kv::Layout::kLayerMajor);
  CHECK(bs[4].spec.fragmentation == 1.0);
  CHECK_FALSE(bs[4].spec.merge);
  CHECK(bs[5].spec.layout == kv::Layout::kBlockMajor);
  CHECK(bs[5].spec.merge);

  // Contiguous listed last: still measured first (it is the reference), once.
  const auto last = benches({"--layout", "block,contiguous", "--frag", "0.5"});
  CHECK(names(last) ==
        std::vector<std::string>{p + "contiguous/push/isl4096/tp1-1", p + "block/push/isl4096/tp1-1/frag0.5"});
  CHECK_FALSE(last[0].implied);
}

TEST_CASE("kvbench cli: each direction has its own ceiling; models and ISLs outermost", "[kvbench]") {
  CHECK(names(benches({"--direction", "push,pull", "--isl", "64"})) ==
        std::vector<std::string>{
            "kv/llama-3.1-8b/contiguous/push/isl64/tp1-1",
            "kv/llama-3.1-8b/layer/push/isl64/tp1-1/frag0",
            "kv/llama-3.1-8b/contiguous/pull/isl64/tp1-1",
            "kv/llama-3.1-8b/layer/pull/isl64/tp1-1/frag0",
        });
  const auto bs = benches({"--model", "llama-3.1-8b,qwen3-8b", "--isl", "64,128", "--direction", "pull"});
  CHECK(names(bs) == std::vector<std::string>{
                         "kv/llama-3.1-8b/contiguous/pull/isl64/tp1-1",
                         "kv/llama-3.1-8b/layer/pull/isl64/tp1-1/frag0",
                         "kv/llama-3.1-8b/contiguous/pull/isl128/tp1-1",
                         "kv/llama-3.1-8b/layer/pull/isl128/tp1-1/frag0",
                         "kv/qwen3-8b/contiguous/pull/isl64/tp1-1",
                         "kv/qwen3-8b/layer/pull/isl64/tp1-1/frag0",
                         "kv/qwen3-8b/contiguous/pull/isl128/tp1-1",
                         "kv/qwen3-8b/layer/pull/isl128/tp1-1/frag0",
                     });
  for (const auto& b : bs) CHECK(b.spec.direction == kv::Direction::kPull);
}

TEST_CASE("kvbench cli: SGEs, batch and TP reach every spec; the ceiling keeps one SGE", "[kvbench]") {
  const auto bs = benches({"--isl", "64", "--max-sge", "4", "--batch", "2", "--prefill-tp", "2", "--decode-tp", "4",
                           "--seed", "7", "--signal", "8", "--post-list", "4"});
  CHECK(names(bs) == std::vector<std::string>{"kv/llama-3.1-8b/contiguous/push/isl64/tp2-4+b2",
                                              "kv/llama-3.1-8b/layer/push/isl64/tp2-4/frag0+sge4+b2"});
  REQUIRE(bs.size() == 2);
  CHECK(bs[0].spec.max_sge == 1);
  CHECK(bs[1].spec.max_sge == 4);
  for (const auto& b : bs) {
    CHECK(b.spec.batch == 2);
    CHECK(b.spec.prefill_tp == 2);
    CHECK(b.spec.decode_tp == 4);
    CHECK(b.spec.seed == 7);
    CHECK(b.transfer.signal_every == 8);
    CHECK(b.transfer.post_list == 4);
  }
}

TEST_CASE("kvbench cli: --wr-sweep: SGEs x sizes, contiguous, no ceiling", "[kvbench]") {
  const auto bs = benches({"--wr-sweep", "-b", "256", "-e", "64K", "-f", "4", "--sge", "1,2", "--isl", "64"});
  REQUIRE(bs.size() == 10);
  const std::vector<std::uint64_t> sizes{256, 1024, 4096, 16384, 65536};
  for (std::size_t i = 0; i < bs.size(); ++i) {
    INFO(i);
    CHECK(bs[i].kind == BenchKind::kSweep);
    CHECK_FALSE(bs[i].implied);
    CHECK(bs[i].spec.layout == kv::Layout::kContiguous);
    CHECK(bs[i].spec.max_sge == 1);
    CHECK(bs[i].wr_bytes == sizes[i % 5]);
    CHECK(bs[i].sges == (i < 5 ? 1U : 2U));
  }
  CHECK(bs[0].name() == "wr/push/256B/sge1/list1/sig16");
  CHECK(bs[4].name() == "wr/push/65536B/sge1/list1/sig16");
  CHECK(bs[9].name() == "wr/push/65536B/sge2/list1/sig16");

  // Lists of post-list and signal are sweep axes: SGEs, post list, signal, then bytes.
  const auto axes = benches({"--wr-sweep", "-b", "1K", "-e", "4K", "--post-list", "1,8", "--signal", "4,64",
                             "--direction", "push,pull", "--isl", "64"});
  REQUIRE(axes.size() == 16);  // 2 directions x 2 lists x 2 signals x {1K, 4K}
  CHECK(axes[0].name() == "wr/push/1024B/sge1/list1/sig4");
  CHECK(axes[1].name() == "wr/push/4096B/sge1/list1/sig4");
  CHECK(axes[2].name() == "wr/push/1024B/sge1/list1/sig64");
  CHECK(axes[4].name() == "wr/push/1024B/sge1/list8/sig4");
  CHECK(axes[8].name() == "wr/pull/1024B/sge1/list1/sig4");
  CHECK(axes[15].name() == "wr/pull/4096B/sge1/list8/sig64");
  CHECK(axes[15].transfer.post_list == 8);
  CHECK(axes[15].transfer.signal_every == 64);

  // One curve per run: its names and knee lines carry neither the model nor the ISL.
  CHECK(usage_error({"--wr-sweep", "--isl", "64,128"}) ==
        "--wr-sweep takes one model and one ISL: its benchmark names and knee lines name neither");
  CHECK(usage_error({"--wr-sweep", "--model", "llama-3.1-8b,qwen3-8b", "--isl", "64"}) ==
        "--wr-sweep takes one model and one ISL: its benchmark names and knee lines name neither");

  // -e between two steps: the last size below it.
  CHECK(benches({"--wr-sweep", "-b", "64", "-e", "1000", "--isl", "64"}).back().wr_bytes == 256);
}

TEST_CASE("kvbench cli: bad values: one UsageError line each", "[kvbench]") {
  CHECK(usage_error({"--frag", "2"}) == "--frag must be from 0 to 1 (got 2)");
  CHECK(usage_error({"--frag", "abc"}) == "--frag must be from 0 to 1 (got abc)");
  CHECK(usage_error({"--frag", "0,0.5x"}) == "--frag must be from 0 to 1 (got 0.5x)");
  CHECK(usage_error({"--frag", "-0.1"}) == "--frag must be from 0 to 1 (got -0.1)");
  CHECK(usage_error({"--frag", "nan"}) == "--frag must be from 0 to 1 (got nan)");
  CHECK(usage_error({"--frag", ""}) == "--frag must be from 0 to 1 (got )");
  CHECK(usage_error({"--merge", "maybe"}) == "--merge takes on or off (got maybe)");
  CHECK(usage_error({"--isl", "0"}) == "--isl must be from 1 to 16777216 (got 0)");
  CHECK(usage_error({"--isl", "64,x"}) == "--isl must be from 1 to 16777216 (got x)");
  CHECK(usage_error({"--isl", "16777217"}) == "--isl must be from 1 to 16777216 (got 16777217)");
  CHECK(usage_error({"--layout", "diagonal"}) ==
        "--layout diagonal: unknown layout \"diagonal\" (contiguous, layer, block)");
  CHECK(usage_error({"--layout", "layer,diagonal"}) ==
        "--layout layer,diagonal: unknown layout \"diagonal\" (contiguous, layer, block)");
  CHECK(usage_error({"--direction", "sideways"}) ==
        "--direction sideways: unknown direction \"sideways\" (push, pull)");
  CHECK(usage_error({"--model", "nope"}) == "--model nope: unknown model \"nope\" (presets: " + kv_preset_list() + ")");
  CHECK(kv_preset_list().rfind("llama-3.1-8b, llama-3.1-70b, ", 0) == 0);
  CHECK(usage_error({"--signal", "0"}) == "--signal must be from 1 to 4096 (got 0)");
  CHECK(usage_error({"--post-list", "2000"}) == "--post-list must be from 1 to 1024 (got 2000)");
  CHECK(usage_error({"--wr-sweep", "--sge", "0"}) == "--sge must be from 1 to 1024 (got 0)");
  CHECK(usage_error({"--wr-sweep", "-b", "4K", "-e", "1K"}) == "-b 4K -e 1K: need 0 < -b <= -e");
  CHECK(usage_error({"--wr-sweep", "-b", "0"}) == "-b 0 -e 1M: need 0 < -b <= -e");
  CHECK(usage_error({"--prefill-tp", "3"}) ==
        "prefill TP 3 does not divide the model's 8 KV heads (use a divisor, or more ranks than heads)");

  CHECK(usage_error({"-n", "5", "-D", "1"}) == "-n and -D contradict each other: fixed count or duration");
  CHECK(usage_error({"--prefill-tps", "1000", "--ttft-ms", "100"}) ==
        "--prefill-tps and --ttft-ms contradict each other: one prefill time");
  CHECK(usage_error({"--model", "llama-3.1-70b", "--model-config", "/nonexistent/config.json"}) ==
        "--model and --model-config contradict each other: a preset or a file");

  // Each alone is fine.
  CHECK(usage_error({"-n", "5"}) == "(no error)");
  CHECK(usage_error({"-D", "1"}) == "(no error)");
  CHECK(usage_error({"--prefill-tps", "1000"}) == "(no error)");
  CHECK(usage_error({"--ttft-ms", "100"}) == "(no error)");
  CHECK(usage_error({"--merge", "yes,no,1,0"}) == "(no error)");
}

TEST_CASE("kvbench cli: --model-config picks the file's shape; a broken file is the kv error line", "[kvbench]") {
  const TempDir dir;
  // GQA: 16 query heads, 4 KV heads, head_dim = 1024 / 16 = 64; fp16.
  const fs::path good = dir.write("config.json", R"({
    "model_type": "tiny", "num_hidden_layers": 4, "num_attention_heads": 16,
    "num_key_value_heads": 4, "hidden_size": 1024, "torch_dtype": "float16"})");
  const auto bs = benches({"--model-config", good.string(), "--isl", "64"});
  CHECK(names(bs) ==
        std::vector<std::string>{"kv/tiny/contiguous/push/isl64/tp1-1", "kv/tiny/layer/push/isl64/tp1-1/frag0"});
  REQUIRE(bs.size() == 2);
  const kv::ModelShape& m = bs[1].spec.model;
  CHECK(m.layers == 4);
  CHECK(m.kv_heads == 4);
  CHECK(m.head_dim == 64);
  CHECK_FALSE(m.mla);
  CHECK(m.dtype == kv::Dtype::kFp16);
  CHECK(m.bytes_per_token() == 2 * 4 * 4 * 64 * 2);
  CHECK(bs[1].spec.page_tokens == 16);
  // --dtype overrides the file's; TP 4 divides 4 heads, TP 3 does not.
  CHECK(benches({"--model-config", good.string(), "--dtype", "fp8"})[0].spec.model.bytes_per_token() == 2 * 4 * 4 * 64);
  CHECK(usage_error({"--model-config", good.string(), "--decode-tp", "4"}) == "(no error)");
  CHECK(usage_error({"--model-config", good.string(), "--decode-tp", "3"}) ==
        "decode TP 3 does not divide the model's 4 KV heads (use a divisor, or more ranks than heads)");

  const fs::path broken = dir.write("broken.json", R"({"num_hidden_layers": 4,)");
  const std::string err = kv_error({"--model-config", broken.string()});
  CHECK(err.rfind(broken.string() + ": not JSON (parse error at byte ", 0) == 0);
  CHECK(err.find('\n') == std::string::npos);
  const fs::path no_layers = dir.write("nolayers.json", R"({"num_attention_heads": 16, "hidden_size": 1024})");
  CHECK(kv_error({"--model-config", no_layers.string()}) == no_layers.string() + ": num_hidden_layers is missing");
}

TEST_CASE("kvbench cli: page size 16, 64 for MLA; --page-tokens and --dtype change the bytes", "[kvbench]") {
  const auto llama = benches({"--isl", "64"});
  CHECK(llama[1].spec.page_tokens == 16);
  CHECK(llama[1].spec.model.bytes_per_token() == 131072);  // 2 x 32 layers x 8 heads x 128 x 2 B
  CHECK(kv::sizes(llama[1].spec).prefill_page_bytes == 16 * 8 * 128 * 2);

  const auto r1 = benches({"--model", "deepseek-r1", "--isl", "128"});
  REQUIRE(r1.size() == 2);
  for (const auto& b : r1) {
    CHECK(b.spec.page_tokens == 64);
    CHECK(b.spec.model.mla);
    CHECK(b.spec.model.bytes_per_token() == 70272);
  }
  CHECK(benches({"--model", "deepseek-r1", "--page-tokens", "32"})[1].spec.page_tokens == 32);
  CHECK(benches({"--page-tokens", "1"})[1].spec.page_tokens == 1);

  const auto fp8 = benches({"--dtype", "fp8"});
  CHECK(fp8[1].spec.model.dtype == kv::Dtype::kFp8);
  CHECK(fp8[1].spec.model.bytes_per_token() == 65536);
  CHECK(benches({"--dtype", "fp32", "--model", "deepseek-r1"})[0].spec.model.bytes_per_token() == 2 * 70272);
  CHECK(usage_error({"--dtype", "int4"}).rfind("--dtype int4: unknown dtype \"int4\" (bf16, fp16 or f16, fp8, fp32 or f32", 0) == 0);
}

TEST_CASE("kvbench cli: --plan text: the model line and a row per layout x merge", "[kvbench]") {
  const std::string text = render_plans(parse({"--plan", "--model", "llama-3.1-70b", "--isl", "4096"}));
  CHECK(text.rfind("model                     llama-3.1-70b (bf16, 80 layers, 8 KV heads x head_dim 128)\n", 0) == 0);
  CHECK(text.find("link                      50 GB/s per rank, 0.05 us per WR (G = 1e9)\n") != std::string::npos);
  std::vector<std::string> rows;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    for (const char* layout : {"contiguous  ", "layer       ", "block       "}) {
      if (line.rfind(layout, 0) == 0) rows.push_back(line.substr(0, 19));
    }
    at = end + 1;
  }
  CHECK(rows == std::vector<std::string>{"contiguous  yes    ", "layer       yes    ", "layer       no     ",
                                         "block       yes    ", "block       no     "});
  CHECK(text.find("layer       no              40960              40960         32768") != std::string::npos);

  // One table per model x ISL x direction.
  const std::string two = render_plans(parse({"--plan", "--isl", "64,128"}));
  std::size_t tables = 0;
  for (auto p = two.find("\nmodel "); p != std::string::npos; p = two.find("\nmodel ", p + 1)) ++tables;
  CHECK(two.rfind("model ", 0) == 0);
  CHECK(tables + 1 == 2);
  CHECK(two.find("batch 1 x ISL 64 tokens") != std::string::npos);
  CHECK(two.find("batch 1 x ISL 128 tokens") != std::string::npos);
}

TEST_CASE("kvbench cli: --plan --json: Llama-3.1-70B at ISL 4096", "[kvbench]") {
  const std::string out = render_plans(parse(
      {"--plan", "--json", "--model", "llama-3.1-70b", "--isl", "4096", "--link", "400G", "--wr-cost-ns", "1000"}));
  const auto all = nlohmann::json::parse(out);
  REQUIRE(all.is_array());
  REQUIRE(all.size() == 1);
  const auto& j = all[0];
  CHECK(j["model"]["name"] == "llama-3.1-70b");
  CHECK(j["model"]["layers"] == 80);
  CHECK(j["spec"]["isl_tokens"] == 4096);
  CHECK(j["spec"]["page_tokens"] == 16);
  CHECK(j["spec"]["direction"] == "push");
  CHECK(j["sizes"]["bytes_per_token"] == 327680);
  CHECK(j["sizes"]["request_bytes"] == 1342177280);
  CHECK(j["sizes"]["moved_bytes_per_request"] == 1342177280);
  CHECK(j["sizes"]["pages_per_request"] == 256);
  CHECK(j["link_bytes_per_s"].get<double>() == Approx(50e9));
  CHECK(j["per_wr_seconds"].get<double>() == Approx(1e-6));
  REQUIRE(j["plans"].size() == 5);
  CHECK(j["plans"][0]["layout"] == "contiguous");
  CHECK(j["plans"][0]["bytes"] == 1342177280);
  CHECK(j["plans"][1]["layout"] == "layer");
  CHECK(j["plans"][1]["wrs"] == 160);
  CHECK(j["plans"][2]["merge"] == false);
  CHECK(j["plans"][2]["wrs"] == 40960);
  CHECK(j["plans"][2]["predicted_seconds"].get<double>() == Approx(0.04096));

  // Two directions: two objects, in order; the default link is 400G.
  const auto both = nlohmann::json::parse(render_plans(parse({"--plan", "--json", "--direction", "push,pull"})));
  REQUIRE(both.size() == 2);
  CHECK(both[0]["spec"]["direction"] == "push");
  CHECK(both[1]["spec"]["direction"] == "pull");
  CHECK(both[0]["link_bytes_per_s"].get<double>() == Approx(50e9));
  CHECK(both[0]["per_wr_seconds"].get<double>() == Approx(50e-9));
}

TEST_CASE("kvbench cli: --plan checks what a run checks and refuses what it ignores", "[kvbench]") {
  const auto plan_error = [](const std::vector<std::string>& args) -> std::string {
    try {
      (void)render_plans(parse(args));
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no error)";
  };
  // A value a run refuses is refused by --plan too.
  CHECK(plan_error({"--plan", "--isl", "0"}) == "--isl must be from 1 to 16777216 (got 0)");
  CHECK(plan_error({"--plan", "--max-wr-bytes", "4G"}) == "--max-wr-bytes must be from 1 to 2G (got 4G)");
  // The table shows every layout, merged and not: --layout and --merge would be ignored.
  CHECK(plan_error({"--plan", "--merge", "maybe"}) ==
        "--merge does not apply to --plan: its table shows every layout, merged and not");
  CHECK(plan_error({"--plan", "--layout", "block"}) ==
        "--layout does not apply to --plan: its table shows every layout, merged and not");
  CHECK(plan_error({"--plan", "--signal", "0"}) == "--signal does not apply to --plan: it predicts from the WRs, not a run");
  CHECK(plan_error({"--plan", "-q", "2"}) == "--qps does not apply to --plan: it predicts from the WRs, not a run");
  CHECK(plan_error({"--plan", "--wr-sweep"}) == "--wr-sweep is a run: --plan does not predict it; drop one of them");
  // A run refuses the flags of other modes.
  CHECK(usage_error({"--json", "out.json"}) ==
        "--json goes with --plan (a run's JSON: --benchmark_out=FILE --benchmark_out_format=json)");
  CHECK(usage_error({"-b", "1K"}) == "-b goes with --wr-sweep");
  CHECK(usage_error({"--wr-sweep", "--layout", "block"}) ==
        "--layout does not apply to --wr-sweep: the sweep moves the request contiguous, in WRs of -b..-e bytes");
  CHECK(usage_error({"--merge", "maybe"}) == "--merge takes on or off (got maybe)");
  // --frag lists: one plan per fraction.
  CHECK(nlohmann::json::parse(render_plans(parse({"--plan", "--json", "--frag", "0,0.5"}))).size() == 2);
}

TEST_CASE("kvbench cli: --json FILE, -q/--qps, and fabench-coll's dtype spellings", "[kvbench]") {
  CHECK(plan_path(parse({"--plan", "--json"})).empty());
  CHECK(plan_path(parse({"--plan", "--json", "-"})).empty());
  CHECK(plan_path(parse({"--plan", "--json", "plan.json"})) == "plan.json");
  CHECK(plan_path(parse({"--plan"})).empty());
  CHECK(parse({"-q", "4"}).qps == 4);
  CHECK(parse({"--qps", "2"}).qps == 2);
  // f32/f16 (fabench-coll's names) are fp32/fp16; names and JSON keep the canonical spelling.
  CHECK(benches({"--dtype", "f32"})[0].spec.model.dtype == kv::Dtype::kFp32);
  CHECK(benches({"--dtype", "f16"})[0].spec.model.dtype == kv::Dtype::kFp16);
  CHECK(kv::dtype_name(kv::parse_dtype("f32")) == "fp32");
}
