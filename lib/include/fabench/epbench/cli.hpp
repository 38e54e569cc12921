// fabench-ep's command line: the flags, the benchmarks they ask for, and --plan's table.
// Separate from main() so that tests can drive it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabench/epbench/session.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/world/launch.hpp"

namespace fabench::epbench {

struct Cli {
  harness::DeviceFlags dev;
  world::RankFlags ranks;
  std::string models = "deepseek-v3";
  std::string model_config;
  bool model_given = false;
  std::string modes = "normal";
  std::string tokens;  // "": 4096 normal, 128 low-latency
  std::string dtypes = "bf16";
  std::string skew = "none";
  std::string routing;
  std::uint64_t seed = 1;
  std::uint32_t ranks_per_node = 1;
  bool plan = false;
  bool plan_copies = false;  // --plan-copies: --plan plus every rank's copies per destination
  bool reference = false;    // --reference: each benchmark followed by its write + notify floor
  std::string plan_ranks = "8,16,32,64";  // --ep: the EP sizes --plan shows
  bool plan_ranks_given = false;
  std::string link;                        // "": the port's rate (run), 400G (--plan)
  double wr_cost_ns = 50;
  double round_us = 3;
  std::uint64_t iters = 0;
  double duration_s = 0;
};

void add_options(CLI::App& app, Cli& c);
// The benchmarks in run order (model x mode x dtype x tokens), ranks 0 until the session knows
// them. UsageError (one line) for bad values.
[[nodiscard]] std::vector<EpBench> build_benches(const Cli& c);
// --plan's text: per benchmark and EP size, bytes and copies per rank, WRs and predicted times.
[[nodiscard]] std::string render_plan(const Cli& c);
[[nodiscard]] std::string ep_preset_list();

}  // namespace fabench::epbench
