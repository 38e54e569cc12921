// fabench-kv's command line: the flags, the benchmarks they ask for, and
// --plan's output. Separate from main() so that tests can drive it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fabench/harness/cli.hpp"
#include "fabench/kvbench/session.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::kvbench {

struct Cli {
  harness::DeviceFlags dev;
  world::RankFlags ranks;
  std::string models = "llama-3.1-8b";
  std::string model_config;  // a Hugging Face config.json instead of --model
  bool model_given = false;  // --model was on the command line (add_options sets it)
  std::string dtype;         // override the model's
  std::uint32_t page_tokens = 0;  // 0: 16 (64 for MLA models, FlashMLA's page)
  std::string isl = "4096";
  std::uint32_t batch = 1;
  std::uint32_t prefill_tp = 1;
  std::uint32_t decode_tp = 1;
  std::string layouts = "layer";
  std::string frags = "0";
  std::string merge = "on";
  std::uint32_t max_sge = 1;
  std::string max_wr_bytes = "1G";  // a merged WR stops growing here
  std::string directions = "push";
  std::uint32_t qps = 1;
  std::string signal = "16";
  std::string post_list = "1";
  std::uint64_t seed = 1;
  bool plan = false;
  std::optional<std::string> json;  // --json [FILE]: with --plan, JSON to FILE ("" or "-": stdout)
  std::string link;           // "": the port's rate (run), 400G (--plan)
  double wr_cost_ns = 50;
  double prefill_tps = 0;
  double ttft_ms = 0;
  bool wr_sweep = false;
  std::string min_bytes = "64";
  std::string max_bytes = "1M";
  std::uint32_t factor = 4;
  std::string sges = "1";
  std::uint64_t iters = 0;
  double duration_s = 0;
  std::set<std::string> given;  // the flags on the command line that one mode or another ignores
};

void add_options(CLI::App& app, Cli& c);
// The benchmarks, in run order: per model, ISL and direction, the contiguous
// ceiling first (added, marked implied, when --layout does not list it), then
// each layout x fragmentation x merge; or, with --wr-sweep, the sweep points.
// UsageError / kv::KvError (one line) for bad values.
[[nodiscard]] std::vector<KvBench> build_benches(const Cli& c);
// --plan: the table (or with --json the JSON) for each model, ISL, direction and
// fragmentation. Validates as build_benches does, and refuses the flags a plan
// ignores (--layout, --merge, --signal, ...): UsageError, one line.
[[nodiscard]] std::string render_plans(const Cli& c);
// Where --plan's output goes: "" for stdout, else --json's FILE.
[[nodiscard]] std::string plan_path(const Cli& c);
[[nodiscard]] std::string kv_preset_list();

}  // namespace fabench::kvbench
